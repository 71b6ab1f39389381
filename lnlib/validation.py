"""Input checks shared by every normalization in lnlib.

Each check raises ``TypeError`` (wrong kind of value) or ``ValueError`` (right
kind, impossible value) with a message that names the problem and the form
that was expected. The chapter "The mean" shows these errors in action.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "as_float_array",
    "normalized_axes",
    "normalized_shape",
    "check_eps",
    "as_parameter",
    "check_nonzero_spread",
    "check_count",
]


def as_float_array(x, name: str = "x") -> np.ndarray:
    """Return `x` as a finite floating-point array.

    Lists, integers and booleans are promoted to float64; float16, float32 and
    float64 arrays keep their dtype.

    Raises
    ------
    TypeError
        If `x` holds complex numbers, strings, objects or other non-real data.
    ValueError
        If `x` is a scalar (0-d) or contains NaN or infinity (the message
        gives the index of the first such entry).
    """
    try:
        array = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of real numbers; got a ragged sequence ({exc})") from None
    if array.dtype.kind == "c":
        raise TypeError(f"{name} must hold real numbers; got complex dtype {array.dtype}. Pass x.real or abs(x) explicitly.")
    if array.dtype.kind in "biu":
        array = array.astype(np.float64)
    elif array.dtype.kind != "f":
        raise TypeError(f"{name} must hold real numbers (int or float); got dtype {array.dtype!r} ({type(x).__name__}).")
    if array.ndim == 0:
        raise ValueError(f"{name} must be an array with at least one axis, e.g. a vector of shape (H,); got the scalar {array.item()!r}.")
    finite = np.isfinite(array)
    if not finite.all():
        where = tuple(int(i) for i in np.argwhere(~finite)[0])
        bad = array[where]
        kind = "NaN" if np.isnan(bad) else "infinity"
        raise ValueError(
            f"{name} contains {kind} at index {where if len(where) > 1 else where[0]} "
            f"({int((~finite).sum())} non-finite value(s) in all); LayerNorm needs finite inputs."
        )
    return array


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
            raise ValueError(f"axis {item} is out of range for an input with {ndim} dimension(s); expected an axis in [{-ndim}, {ndim - 1}].")
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
        raise ValueError(f"the normalized axes {axes} of an input of shape {x.shape} are empty; the mean and variance of zero numbers are undefined.")
    return shape


def check_eps(eps) -> float:
    """Return `eps` as a float after checking it is a finite number >= 0."""
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a real number >= 0, such as 1e-5; got {eps!r} of type {type(eps).__name__}.")
    eps = float(eps)
    if not math.isfinite(eps):
        raise ValueError(f"eps must be finite; got {eps}.")
    if eps < 0:
        raise ValueError(f"eps must be >= 0 (it is added to a variance before the square root); got {eps}.")
    return eps


def as_parameter(value, name: str, shape: tuple[int, ...], axes: tuple[int, ...], ndim: int, dtype) -> np.ndarray | None:
    """Check a per-feature parameter (gamma or beta) and shape it to broadcast against the input.

    Parameters
    ----------
    value : array_like or None
        The parameter; None means "not used".
    name : str
        "gamma" or "beta", used in messages.
    shape : tuple of int
        The shape of the normalized axes, which the parameter must have.
    axes, ndim :
        The normalized axes and the input's number of dimensions.
    dtype :
        The input's dtype, which the parameter is cast to.
    """
    if value is None:
        return None
    param = as_float_array(value if np.ndim(value) else [value], name)
    if param.shape != shape:
        raise ValueError(
            f"{name} must have the shape of the normalized axes, {shape} (one value per feature, shared by every sample); got shape {param.shape}."
        )
    broadcast_shape = [1] * ndim
    for axis, size in zip(axes, shape):
        broadcast_shape[axis] = size
    return param.astype(dtype, copy=False).reshape(broadcast_shape)


def check_nonzero_spread(var: np.ndarray, eps: float, what: str = "variance") -> None:
    """Refuse ``var + eps == 0``: with eps = 0 a constant slice makes 0/0.

    Raises
    ------
    ValueError
        Naming the first slice whose `what` is zero.
    """
    if eps > 0:
        return
    zero = var == 0
    if zero.any():
        where = tuple(int(i) for i in np.argwhere(zero)[0])
        raise ValueError(
            f"the {what} is zero in {int(zero.sum())} normalized slice(s) (first at index {where} of the statistics) and eps=0, "
            "so the normalization is 0/0 and undefined; use eps > 0 (e.g. 1e-5) or an input that is not constant."
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
