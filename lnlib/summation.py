"""Sums that stay accurate in every dtype lnlib computes in (chapter "Computing it right:
numerics").

numpy adds its own float types pairwise, so a sum of n terms carries about log2(n) roundings. It
adds ml_dtypes' bfloat16 in one running sum instead, which stops growing once the total is 256
times a term (the chapter's "stall"): 4096 ones sum to 256. :func:`tree_sum` adds such dtypes by
halving, as a GPU's tree reduction does, every partial sum rounded to the dtype.
"""

from __future__ import annotations

import numpy as np

_NUMPY_PAIRWISE = {np.dtype(t) for t in (np.float16, np.float32, np.float64, np.longdouble)}


def _axes(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in np.atleast_1d(axis)))


def tree_sum(values: np.ndarray, axis=None, *, keepdims: bool = False, dtype=None) -> np.ndarray:
    """Sum of `values` over `axis`, pairwise, each partial sum rounded to `dtype`.

    Parameters
    ----------
    values : ndarray
    axis : int or tuple of int, optional
        The axes summed over; all of them by default.
    keepdims : bool
        Keep the summed axes with length 1, as numpy does.
    dtype : dtype, optional
        The dtype every partial sum is rounded to; `values`' own by default.
    """
    dtype = np.dtype(dtype or values.dtype)
    if dtype in _NUMPY_PAIRWISE:
        return np.sum(values, axis=axis, keepdims=keepdims, dtype=dtype)
    axes = _axes(axis, values.ndim)
    moved = np.moveaxis(values.astype(dtype), axes, range(values.ndim - len(axes), values.ndim))
    parts = moved.reshape(*moved.shape[: values.ndim - len(axes)], -1)
    if parts.shape[-1] == 0:
        parts = np.zeros((*parts.shape[:-1], 1), dtype)
    while parts.shape[-1] > 1:
        if parts.shape[-1] % 2:
            parts = np.concatenate([parts, np.zeros_like(parts[..., :1])], axis=-1)
        parts = parts[..., 0::2] + parts[..., 1::2]
    total = parts[..., 0]
    if keepdims:
        total = total.reshape([1 if a in axes else n for a, n in enumerate(values.shape)])
    return total


def tree_mean(values: np.ndarray, axis=None, *, keepdims: bool = False, dtype=None) -> np.ndarray:
    """Mean of `values` over `axis`: numpy's own for its float types (float16 summed in float32),
    :func:`tree_sum` divided by the count for the others."""
    if np.dtype(dtype or values.dtype) in _NUMPY_PAIRWISE:
        return np.mean(values, axis=axis, keepdims=keepdims, dtype=dtype)
    count = int(np.prod([values.shape[a] for a in _axes(axis, values.ndim)]))
    total = tree_sum(values, axis, keepdims=keepdims, dtype=dtype)
    return total / total.dtype.type(count)
