r"""The backward pass of RMS normalization, in closed form (chapter "Gradients through LayerNorm",
section "RMSNorm's backward pass").

With :math:`r = 1/\sqrt{\operatorname{mean}(x^2) + \varepsilon}` (``rstd``), :math:`\hat x = x\,r`,
:math:`y = \gamma \hat x` and an upstream gradient :math:`dy = \partial L / \partial y`,

.. math::

    d\hat x = \gamma\, dy, \qquad
    dx = r\Big(d\hat x - \hat x\,\operatorname{mean}(d\hat x\,\hat x)\Big), \qquad
    d\gamma = \sum_{\text{other axes}} dy\,\hat x,

where the mean runs over the normalized axes. It is LayerNorm's closed form
(:mod:`~lnlib.backward`) without the term of the mean, which RMS norm never subtracts.
:mod:`~lnlib.symbolic` derives it with sympy (:func:`~lnlib.symbolic.rms_closed_form_gradient`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backward import _as_upstream, _saved_statistic
from .forward import standardize, to_storage
from .summation import tree_mean, tree_sum
from .validation import (
    HALF_DTYPES,
    as_float_array,
    as_parameter,
    check_eps,
    normalized_axes,
    normalized_shape,
)
from .validation import compute_dtype as resolve_compute_dtype

__all__ = ["RMSBackwardParts", "rms_backward_parts", "rms_norm_backward"]


@dataclass(frozen=True)
class RMSBackwardParts:
    r"""The pieces of RMS norm's closed-form backward pass (chapter "Gradients through LayerNorm",
    section "RMSNorm's backward pass").

    x reaches :math:`\hat x` along two paths, directly and through the mean square, and dx
    is the sum of one term per path: ``dx = direct + through_ms``, with
    ``direct = dxhat * rstd`` and ``through_ms = -xhat * mean(dxhat * xhat) * rstd``.
    Statistics keep the normalized axes with size 1; everything is in the compute dtype
    (float32 for 16-bit inputs).

    Attributes
    ----------
    xhat : ndarray
        ``x * rstd``, recomputed or rebuilt from the saved rstd.
    rstd : ndarray
        ``1 / sqrt(mean(x**2) + eps)``.
    dxhat : ndarray
        ``gamma * dy``, the gradient with respect to xhat.
    mean_dxhat_xhat : ndarray
        The mean the closed form subtracts (times xhat).
    direct, through_ms : ndarray
        The two terms of dx, each of the shape of x.
    dx, dgamma : ndarray
        As returned by :func:`rms_norm_backward`, before rounding.
    """

    xhat: np.ndarray
    rstd: np.ndarray
    dxhat: np.ndarray
    mean_dxhat_xhat: np.ndarray
    direct: np.ndarray
    through_ms: np.ndarray
    dx: np.ndarray
    dgamma: np.ndarray


def rms_backward_parts(
    dy, x, gamma=None, *, eps: float = 1e-6, axis=-1, rstd=None, compute_dtype=None
) -> RMSBackwardParts:
    """RMS norm's closed-form backward pass with every intermediate kept (chapter "Gradients through
    LayerNorm", section "RMSNorm's backward pass").

    Parameters, errors and the meaning of the results as in :func:`rms_norm_backward`.

    Returns
    -------
    RMSBackwardParts
    """
    x = as_float_array(x, "x")
    eps = check_eps(eps)
    axes = normalized_axes(axis, x.ndim)
    shape = normalized_shape(x, axes)
    work = resolve_compute_dtype(x.dtype, compute_dtype)
    if rstd is None:
        stats = standardize(x, axes, eps, centre=False, compute_dtype=work)
        xhat, rstd = stats.xhat, stats.rstd
    else:
        rstd = _saved_statistic(rstd, "rstd", x, axes, work)
        if np.any(rstd <= 0):
            raise ValueError(
                "rstd must be positive everywhere: it is 1 / sqrt(mean(x**2) + eps) from the "
                "forward pass "
                "(a kernel that saves sqrt(mean(x**2) + eps) itself must pass its reciprocal)."
            )
        xhat = x.astype(work) * rstd
    dy = _as_upstream(dy, x).astype(work)
    scale = as_parameter(gamma, "gamma", shape, axes, x.ndim, work)
    dxhat = dy if scale is None else dy * scale
    mean_dxhat_xhat = tree_mean(dxhat * xhat, axes, keepdims=True)
    direct, through_ms = dxhat * rstd, -xhat * mean_dxhat_xhat * rstd
    return RMSBackwardParts(
        xhat=xhat,
        rstd=rstd,
        dxhat=dxhat,
        mean_dxhat_xhat=mean_dxhat_xhat,
        direct=direct,
        through_ms=through_ms,
        dx=direct + through_ms,
        dgamma=tree_sum(dy * xhat, tuple(a for a in range(x.ndim) if a not in axes)),
    )


def rms_norm_backward(
    dy, x, gamma=None, *, eps: float = 1e-6, axis=-1, rstd=None, compute_dtype=None
):
    """Gradients of :func:`~lnlib.norms.rms_norm` with respect to x and gamma (chapter "Gradients
    through LayerNorm", section "RMSNorm's backward pass").

    Parameters
    ----------
    dy : array_like
        Upstream gradient dL/dy, of the shape of `x`.
    x : array_like
        The forward pass's input, any shape with at least one axis (a batch of 0 rows too).
    gamma : array_like, optional
        Per-feature scale, of the shape of the normalized axes. Default: 1.
    eps : float, default 1e-6
        As in the forward pass, inside the square root.
    axis : int or tuple of int, default -1
        The normalized axes, as in :func:`~lnlib.norms.rms_norm`.
    rstd : array_like, optional
        The ``1 / sqrt(mean(x**2) + eps)`` the forward pass saved
        (``rms_norm(..., return_stats=True)``), of the shape of the statistics
        (normalized axes kept as size 1, or dropped). Given, the backward pass uses
        ``xhat = x * rstd`` instead of recomputing it, as kernels do; `eps` is then not used.
    compute_dtype : dtype or str, optional
        As in :func:`~lnlib.layer_norm`: float32 for 16-bit inputs by default.

    Returns
    -------
    dx : ndarray
        dL/dx, the shape and dtype of `x`.
    dgamma : ndarray
        dL/dgamma, the sum of ``dy * xhat`` over every other axis (zeros for a batch
        of 0 rows), in the compute dtype, returned in `gamma`'s dtype when `gamma` is
        a float ndarray (mixed precision: float32 parameters of 16-bit activations keep
        float32 gradients) and in the dtype of `x` otherwise. Returned even when
        `gamma` is None (the gradient at gamma = 1).

    Raises
    ------
    ValueError, TypeError
        As :func:`~lnlib.norms.rms_norm` for `x`, `gamma`, `eps` and `axis`; when `dy`
        is not a finite real array of the shape of `x`; when `rstd` has the wrong
        shape, is not finite or is not positive; when a gradient overflows its dtype.

    Examples
    --------
    >>> dy, x = [1.0, 0.0, 0.0, 0.0], [1.0, -1.0, 1.0, -1.0]
    >>> dx, dgamma = rms_norm_backward(dy, x, eps=0)
    >>> dx
    array([ 0.75,  0.25, -0.25,  0.25])
    >>> dgamma
    array([1., 0., 0., 0.])
    """
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        parts = rms_backward_parts(
            dy, x, gamma, eps=eps, axis=axis, rstd=rstd, compute_dtype=compute_dtype
        )
    storage = as_float_array(x, "x").dtype
    dx = to_storage(parts.dx, storage, "dx", _DX_OVERFLOW)
    dgamma = to_storage(parts.dgamma, _parameter_dtype(gamma, storage), "dgamma", _DGAMMA_OVERFLOW)
    return dx, dgamma


_DX_OVERFLOW = (
    "dx is (dxhat - xhat * mean(dxhat * xhat)) * rstd, and rstd = 1 / sqrt(mean(x**2) + eps) is "
    "large "
    "where a row is tiny next to eps; use a larger eps, or compute_dtype='float64'"
)
_DGAMMA_OVERFLOW = (
    "dgamma is the sum of dy * xhat over every other axis, and dy is too large for that sum"
)


def _parameter_dtype(gamma, storage: np.dtype) -> np.dtype:
    """dgamma's dtype: gamma's own when it is a float ndarray, else x's `storage`."""
    if isinstance(gamma, np.ndarray) and (gamma.dtype.kind == "f" or gamma.dtype in HALF_DTYPES):
        return gamma.dtype
    return storage
