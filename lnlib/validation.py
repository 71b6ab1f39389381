"""Input checks shared by every normalization in lnlib.

Each check raises ``TypeError`` (wrong kind of value) or ``ValueError`` (right
kind, impossible value) with a message that names the problem and the form
that was expected. The chapter "The mean" shows these errors in action.
"""

from __future__ import annotations

import math
import numbers

import ml_dtypes
import numpy as np

__all__ = [
    "BFLOAT16",
    "HALF_DTYPES",
    "as_float_array",
    "float_info",
    "compute_dtype",
    "gradient_dtype",
    "check_finite",
    "normalized_axes",
    "normalized_shape",
    "check_eps",
    "as_parameter",
    "check_nonzero_spread",
    "check_count",
]

#: bfloat16, the 16-bit format with float32's exponent range, as provided by ``ml_dtypes`` (the
#: library JAX uses).
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
#: The 16-bit storage types whose statistics lnlib computes in float32, as PyTorch's kernels do.
HALF_DTYPES = (np.dtype(np.float16), BFLOAT16)
_FLOAT_DTYPES = (*HALF_DTYPES, np.dtype(np.float32), np.dtype(np.float64))


def float_info(dtype):
    """``finfo`` of a float dtype, bfloat16 included: ``.eps``, ``.max``, ``.tiny`` (chapter
    "Computing it right: numerics")."""
    return ml_dtypes.finfo(np.dtype(dtype))


def compute_dtype(
    storage, requested=None, *, choices=_FLOAT_DTYPES, name="compute_dtype"
) -> np.dtype:
    """The dtype lnlib computes statistics in for an input stored as `storage` (chapter "Computing
    it right: numerics").

    The one compute-dtype rule of the library: the forward and backward passes, the norms, the
    variants, the variance algorithms and the harness's example kernels all ask it (only
    :mod:`lnlib.textbook` spells it out inline, to stay readable on its own).

    Parameters
    ----------
    storage : dtype
        The input's dtype.
    requested : dtype or str, optional
        None (default): float32 for float16 and bfloat16 inputs, as PyTorch's CPU
        and CUDA kernels accumulate half-precision statistics
        in float32; the input's own dtype for float32 and float64. Give the
        storage dtype itself (e.g. ``"float16"``) to run every operation in it,
        or ``"float64"`` for a reference.
    choices : iterable of dtype, default float16, bfloat16, float32, float64
        The dtypes `requested` may name (:mod:`lnlib.variance_algorithms` allows float16, float32
        and float64).
    name : str, default "compute_dtype"
        The argument's name in the error messages.

    Raises
    ------
    TypeError
        If `requested` is not a dtype or dtype name.
    ValueError
        If it is not one of `choices`.

    Examples
    --------
    >>> compute_dtype("float16"), compute_dtype("float64")
    (dtype('float32'), dtype('float64'))
    >>> compute_dtype("float16", "float16")
    dtype('float16')
    """
    storage = np.dtype(storage)
    if requested is None:
        return np.dtype(np.float32) if storage in HALF_DTYPES else storage
    choices = tuple(np.dtype(d) for d in choices)
    names = ", ".join(d.name for d in choices)
    try:
        resolved = np.dtype(ml_dtypes.bfloat16) if requested == "bfloat16" else np.dtype(requested)
    except TypeError:
        raise TypeError(
            f"{name} must be None or a float dtype ({names}); got {requested!r}."
        ) from None
    if resolved not in choices:
        raise ValueError(f"{name} must be one of {names}; got {resolved.name}.")
    return resolved


def gradient_dtype(gamma, storage) -> np.dtype:
    """The dtype of dgamma and dbeta for an input stored as `storage` (chapter "Gradients through
    LayerNorm").

    gamma's dtype when gamma is a numpy array of a float dtype: mixed-precision training keeps
    float32 parameters beside 16-bit activations, and their gradients in float32, since a sum over
    many rows (70 000 rows of dy = 1 sum to 70 000) does not fit float16 (65504). Otherwise (no
    gamma, or a list) the input's dtype. dx always has the input's dtype.

    Examples
    --------
    >>> gradient_dtype(np.ones(4, np.float32), "float16")
    dtype('float32')
    >>> gradient_dtype(None, "float16")
    dtype('float16')
    """
    if isinstance(gamma, np.ndarray) and gamma.dtype in _FLOAT_DTYPES:
        return gamma.dtype
    return np.dtype(storage)


def check_finite(array: np.ndarray, name: str, what: str = "") -> np.ndarray:
    """Refuse NaN or infinity in `array`, naming the first index; `what` says where it came from."""
    finite = np.isfinite(array)
    if not finite.all():
        where = tuple(int(i) for i in np.argwhere(~finite)[0]) if array.ndim else ()
        bad = array[where] if array.ndim else array
        kind = "NaN" if np.isnan(bad) else "infinity"
        index = f" at index {where if len(where) > 1 else where[0]}" if where else ""
        raise ValueError(
            f"{name} contains {kind}{index} ({int((~finite).sum())} non-finite value(s) in "
            f"all){what}; LayerNorm needs finite values."
        )
    return array


def as_float_array(x, name: str = "x") -> np.ndarray:
    """Return `x` as a finite floating-point array.

    Lists, integers and booleans are promoted to float64; float16, bfloat16
    (``ml_dtypes.bfloat16``), float32 and float64 arrays keep their dtype.

    Raises
    ------
    TypeError
        If `x` holds complex numbers, strings, objects or other non-real data,
        or is a masked array (lnlib would silently ignore its mask).
    ValueError
        If `x` is a scalar (0-d) or contains NaN or infinity (the message
        gives the index of the first such entry).
    """
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            f"{name} is a masked array; lnlib ignores masks, so the masked entries would silently "
            "enter the statistics. "
            f"Pass {name}.filled(value) to choose what they count as, or normalize only the "
            "unmasked part."
        )
    try:
        array = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(
            f"{name} must be a rectangular array of real numbers; got a ragged sequence ({exc})"
        ) from None
    if array.dtype.kind == "c":
        raise TypeError(
            f"{name} must hold real numbers; got complex dtype {array.dtype}. Pass x.real or "
            "abs(x) explicitly."
        )
    if array.dtype.kind in "biu":
        array = array.astype(np.float64)
    elif array.dtype not in _FLOAT_DTYPES:
        raise TypeError(
            f"{name} must hold real numbers (int, float16, bfloat16, float32 or float64); got "
            f"dtype {array.dtype!r} ({type(x).__name__})."
        )
    if array.ndim == 0:
        raise ValueError(
            f"{name} must be an array with at least one axis, e.g. a vector of shape (H,); got "
            f"the scalar {array.item()!r}."
        )
    return check_finite(array, name)


def normalized_axes(axis, ndim: int) -> tuple[int, ...]:
    """Return `axis` (an int or a tuple of ints) as a sorted tuple of non-negative axes.

    Raises
    ------
    TypeError
        If `axis` is not an int or a tuple/list of ints.
    ValueError
        If an axis is out of range for an array of `ndim` dimensions, or repeated.
    """
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if not items:
        raise ValueError("axis must name at least one axis; got an empty tuple.")
    for item in items:
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise TypeError(f"axis must be an int or a tuple of ints; got {axis!r}.")
    resolved = []
    for item in items:
        if not -ndim <= item < ndim:
            raise ValueError(
                f"axis {item} is out of range for an input with {ndim} dimension(s); expected an "
                f"axis in [{-ndim}, {ndim - 1}]."
            )
        resolved.append(int(item) % ndim)
    if len(set(resolved)) != len(resolved):
        raise ValueError(f"axis {axis!r} names the same axis twice.")
    return tuple(sorted(resolved))


def normalized_shape(x: np.ndarray, axes: tuple[int, ...]) -> tuple[int, ...]:
    """Shape of the normalized axes of `x`, the shape gamma and beta must have.

    Raises
    ------
    ValueError
        If a normalized axis is empty: a mean over no numbers is undefined.
    """
    shape = tuple(x.shape[a] for a in axes)
    if 0 in shape:
        raise ValueError(
            f"the normalized axes {axes} of an input of shape {x.shape} are empty; the mean and "
            "variance of zero numbers are undefined."
        )
    return shape


def check_eps(eps) -> float:
    """Return `eps` as a float after checking it is a finite number >= 0."""
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(
            f"eps must be a real number >= 0, such as 1e-5; got {eps!r} of type "
            f"{type(eps).__name__}."
        )
    eps = float(eps)
    if not math.isfinite(eps):
        raise ValueError(f"eps must be finite; got {eps}.")
    if eps < 0:
        raise ValueError(
            f"eps must be >= 0 (it is added to a variance before the square root); got {eps}."
        )
    return eps


def as_parameter(
    value, name: str, shape: tuple[int, ...], axes: tuple[int, ...], ndim: int, dtype
) -> np.ndarray | None:
    """Check a per-feature parameter (gamma or beta) and shape it to broadcast against the input.

    Parameters
    ----------
    value : array_like or None
        The parameter; None means "not used".
    name : str
        "gamma" or "beta", used in messages.
    shape : tuple of int
        The shape of the normalized axes, which the parameter must have.
    axes : tuple of int
        The normalized axes of the input.
    ndim : int
        The input's number of dimensions.
    dtype :
        The dtype the parameter is used in; it is checked finite *after* the
        cast, so a gamma of 1e5 is refused for float16 instead of becoming inf.
    """
    if value is None:
        return None
    param = as_float_array(value if np.ndim(value) else [value], name)
    if param.shape != shape:
        raise ValueError(
            f"{name} must have the shape of the normalized axes, {shape} (one value per feature, "
            f"shared by every sample); got shape {param.shape}."
        )
    broadcast_shape = [1] * ndim
    for axis, size in zip(axes, shape):
        broadcast_shape[axis] = size
    with np.errstate(over="ignore"):
        cast = param.astype(dtype, copy=False)
    check_finite(
        cast,
        name,
        f" after rounding it to {np.dtype(dtype).name}, whose largest value is "
        f"{float(float_info(dtype).max):.6g}",
    )
    return cast.reshape(broadcast_shape)


def check_nonzero_spread(
    spread: np.ndarray,
    eps: float,
    *,
    varies: np.ndarray | None = None,
    dtype=None,
    what: str = "variance",
) -> None:
    """Refuse a slice whose divisor ``spread + eps`` is zero *in the working dtype*.

    Parameters
    ----------
    spread : ndarray
        The variance (or mean square, or running variance) of each slice, as computed.
    eps : float
        The epsilon, as given; it is rounded to `dtype` before it is judged, so
        an eps of 1e-8 counts as 0 in float16.
    varies : ndarray of bool, optional
        Which slices hold values that differ. A zero spread in such a slice
        underflowed, and the message says so.
    dtype : dtype, optional
        The working dtype; default: that of `spread`.
    what : str
        Names the spread in messages.

    Raises
    ------
    ValueError
        Naming the first offending slice: a spread that underflowed to zero,
        or a zero spread with an eps that is zero (or rounds to zero).
    """
    dtype = np.dtype(dtype or spread.dtype)
    zero = spread == 0
    if not zero.any():
        return
    varies = (
        np.zeros(spread.shape, bool) if varies is None else np.broadcast_to(varies, spread.shape)
    )
    underflow = zero & varies
    if underflow.any():
        where = tuple(int(i) for i in np.argwhere(underflow)[0])
        raise ValueError(
            f"the {what} underflowed to 0 in {dtype.name} in {int(underflow.sum())} normalized "
            f"slice(s) (first at index {where} of the "
            f"statistics) although their values differ: it is smaller than {dtype.name} can hold. "
            "Compute in a wider dtype "
            "(compute_dtype=None keeps float32 statistics for 16-bit inputs)."
        )
    eps_w = np.asarray(eps).astype(dtype)
    if eps_w == 0:
        where = tuple(int(i) for i in np.argwhere(zero)[0])
        count = (
            f"the {what} is zero in {int(zero.sum())} normalized slice(s) "
            f"(first at index {where} of the statistics)"
        )
        if eps == 0:
            raise ValueError(
                f"{count} and eps=0, so the normalization is 0/0 and undefined; use eps > 0 (e.g. "
                "1e-5) or an input that is not constant."
            )
        raise ValueError(
            f"{count}, and eps={eps:g} rounds to 0 in {dtype.name}, so the normalization is 0/0 "
            "and undefined; "
            f"use an eps that {dtype.name} can hold (e.g. 1e-5), a wider compute dtype, or an "
            "input that is not constant."
        )


def check_count(value, name: str, minimum: int = 1) -> int:
    """Return a count (a size, a depth, a number of steps or seeds) as an int after checking it.

    Raises
    ------
    TypeError
        If `value` is not an integer (a bool or a float such as 2.5 is refused).
    ValueError
        If `value` is below `minimum`.
    """
    wanted = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {wanted}; got {value!r} of type {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"{name} must be {wanted}; got {value!r}.")
    return int(value)
