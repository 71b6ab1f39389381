r"""Variance algorithms and their rounding errors (chapter "Computing it right: numerics").

Three ways to compute the biased variance :math:`\sigma^2 = \frac{1}{H}\sum_i (x_i - \mu)^2`:

``"one_pass"``
    :math:`E[x^2] - E[x]^2`, both sums in one sweep. Fast, and catastrophically
    wrong when the mean is large compared with the spread: two nearly equal
    numbers are subtracted, and the result can even be negative.
``"two_pass"``
    First the mean, then the mean of the squared deviations. Accurate, but it
    reads the data twice.
``"welford"``
    Welford's streaming update (Welford, 1962), one value at a time, run in
    several lanes whose partial results are combined with the merge of Chan,
    Golub & LeVeque (1983), the way a GPU kernel's threads combine theirs.

Every operation on the data runs in the dtype asked for (float16, float32 or
float64): sums are accumulated in that dtype by a pairwise tree, so the
rounding errors are those of that precision. This models a kernel that keeps
its statistics in the storage dtype; production kernels do not for 16-bit data
(PyTorch's CPU and CUDA kernels accumulate in float32, as :func:`~lnlib.layer_norm`
does by default), which the chapter shows next to it. Only
Welford's counters are kept as exact integers, as a kernel's counters are. The exact
reference :func:`exact_variance` uses :func:`math.fsum`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .validation import as_float_array, compute_dtype, float_info, normalized_axes, normalized_shape

__all__ = [
    "METHODS",
    "DTYPES",
    "WelfordState",
    "variance",
    "welford",
    "chan_merge",
    "exact_variance",
    "variance_relative_error",
    "unit_roundoff",
]

#: The variance algorithms :func:`variance` knows.
METHODS = ("one_pass", "two_pass", "welford")
#: The floating-point types the algorithms can run in, by name.
DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
#: Lanes of the Welford kernel: a GPU warp has 32 threads.
WELFORD_LANES = 32


@dataclass(frozen=True)
class WelfordState:
    """Running statistics of a stream of numbers (chapter "Computing it right: numerics").

    Attributes
    ----------
    count : ndarray
        How many values were seen, kept exactly (float64 integers), as a kernel
        keeps an integer counter; the factors derived from it are rounded to
        the working dtype where they meet the data.
    mean : ndarray
        Their mean.
    m2 : ndarray
        The sum of squared deviations from that mean; the biased variance is ``m2 / count``.
    """

    count: np.ndarray
    mean: np.ndarray
    m2: np.ndarray

    @property
    def variance(self) -> np.ndarray:
        """The biased variance ``m2 / count``, in the dtype of ``m2``."""
        return self.m2 / np.asarray(self.count).astype(np.result_type(self.m2))


def check_method(method) -> str:
    """Return `method` if it is one of :data:`METHODS`, else raise a ValueError naming them (chapter
    "Computing it right: numerics")."""
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(
            f"method must be one of {', '.join(repr(m) for m in METHODS)}; got {method!r}."
        )
    return method


def _rows(x, axis, dtype) -> tuple[np.ndarray, tuple[int, ...]]:
    """Validate `x`, cast it to the working dtype and move the reduced axes to one trailing axis.

    Returns the array of shape ``(..., H)`` and the shape of the result (the
    input shape without the reduced axes).
    """
    x = as_float_array(x, "x")
    axes = normalized_axes(axis, x.ndim)
    normalized_shape(x, axes)
    dtype = compute_dtype(
        x.dtype, x.dtype if dtype is None else dtype, choices=DTYPES.values(), name="dtype"
    )
    too_big = np.abs(x) > np.finfo(dtype).max
    if too_big.any():
        raise ValueError(
            f"x does not fit in {dtype.name}: it holds {np.abs(x).max():.4g}, above "
            f"{dtype.name}'s largest finite value "
            f"{float(np.finfo(dtype).max):.6g}; use a wider dtype or smaller values."
        )
    kept = [a for a in range(x.ndim) if a not in axes]
    out_shape = tuple(x.shape[a] for a in kept)
    rows = np.transpose(x, kept + list(axes)).reshape(*out_shape, -1)
    return rows.astype(dtype), out_shape


def _tree_sum(values: np.ndarray) -> np.ndarray:
    """Sum over the last axis by pairwise halving, every addition rounded in the array's dtype."""
    while values.shape[-1] > 1:
        if values.shape[-1] % 2:
            values = np.concatenate([values, np.zeros_like(values[..., :1])], axis=-1)
        values = values[..., 0::2] + values[..., 1::2]
    return values[..., 0]


def _mean(rows: np.ndarray) -> np.ndarray:
    return _tree_sum(rows) / rows.dtype.type(rows.shape[-1])


def _moments(rows: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean and biased variance over the last axis by `method`, every operation in the rows'
    dtype."""
    with np.errstate(
        over="ignore", invalid="ignore"
    ):  # float16 overflow is shown as inf, not warned about
        if method == "welford":
            state = _merge_lanes(_welford_lanes(rows, min(WELFORD_LANES, rows.shape[-1])))
            return state.mean, state.variance
        mean = _mean(rows)
        if method == "one_pass":
            return mean, _mean(rows * rows) - mean * mean
        centred = rows - mean[..., None]
        return mean, _mean(centred * centred)


def chan_merge(a: WelfordState, b: WelfordState) -> WelfordState:
    r"""Combine the statistics of two chunks (Chan, Golub & LeVeque, 1983; chapter "Computing it
    right: numerics").

    With :math:`\delta = \bar x_b - \bar x_a` and :math:`n = n_a + n_b`:
    :math:`\bar x = \bar x_a + \delta\, n_b / n` and
    :math:`M_2 = M_{2,a} + M_{2,b} + \delta^2 n_a n_b / n`.
    The counts are exact integers; the factors :math:`n_b / n` and
    :math:`n_a n_b / n` are rounded to the dtype of the means, and every
    operation on means and :math:`M_2` runs in that dtype.
    """
    dtype = np.result_type(a.mean, b.mean)
    count = a.count + b.count
    delta = b.mean - a.mean
    mean = a.mean + delta * np.asarray(b.count / count).astype(dtype)
    m2 = a.m2 + b.m2 + delta * delta * np.asarray(a.count * b.count / count).astype(dtype)
    return WelfordState(count, mean, m2)


def _welford_lanes(rows: np.ndarray, lanes: int) -> WelfordState:
    """Welford's update in `lanes` interleaved lanes: value k goes to lane k % lanes."""
    size = rows.shape[-1]
    steps = -(-size // lanes)
    padded = np.concatenate(
        [rows, np.zeros((*rows.shape[:-1], steps * lanes - size), rows.dtype)], axis=-1
    )
    padded = padded.reshape(*rows.shape[:-1], steps, lanes)
    active = (np.arange(steps * lanes) < size).reshape(steps, lanes)
    count = np.zeros((*rows.shape[:-1], lanes))
    mean = np.zeros(count.shape, rows.dtype)
    m2 = np.zeros_like(mean)
    for step in range(steps):
        value, on = padded[..., step, :], active[step]
        count = np.where(on, count + 1, count)
        delta = value - mean
        mean = np.where(on, mean + delta / count.astype(rows.dtype), mean)
        m2 = np.where(on, m2 + delta * (value - mean), m2)
    return WelfordState(count, mean, m2)


def _merge_lanes(state: WelfordState) -> WelfordState:
    """Combine the lanes (last axis) pairwise with :func:`chan_merge`, as a warp reduction does."""
    while state.count.shape[-1] > 1:
        half = state.count.shape[-1] // 2
        left = WelfordState(*(s[..., :half] for s in (state.count, state.mean, state.m2)))
        right = WelfordState(
            *(s[..., half : 2 * half] for s in (state.count, state.mean, state.m2))
        )
        merged = chan_merge(left, right)
        if state.count.shape[-1] % 2:
            merged = WelfordState(
                *(
                    np.concatenate([m, s[..., -1:]], axis=-1)
                    for m, s in zip(
                        (merged.count, merged.mean, merged.m2), (state.count, state.mean, state.m2)
                    )
                )
            )
        state = merged
    return WelfordState(state.count[..., 0], state.mean[..., 0], state.m2[..., 0])


def welford(x, *, axis=-1, dtype=None, lanes: int = WELFORD_LANES) -> WelfordState:
    r"""Welford's streaming mean and variance, in lanes merged by Chan's rule (chapter "Computing it
    right: numerics").

    Each lane reads its values one at a time and updates
    :math:`n \leftarrow n + 1`, :math:`\delta = x - \bar x`,
    :math:`\bar x \leftarrow \bar x + \delta / n`,
    :math:`M_2 \leftarrow M_2 + \delta\,(x - \bar x)` (Welford, 1962); the lanes
    are then combined pairwise with :func:`chan_merge`. ``lanes=1`` is the
    plain sequential algorithm.

    Parameters
    ----------
    x : array_like
        Finite real input with at least one axis.
    axis : int or tuple of int, default -1
        The axes reduced over.
    dtype : dtype or str, optional
        float16, float32 or float64; every operation runs in it. Default: the dtype of `x`.
    lanes : int, default 32
        Number of interleaved lanes (threads); capped at H.

    Returns
    -------
    WelfordState
        Arrays of the input's shape without the reduced axes.

    Raises
    ------
    TypeError
        If `lanes` is not an integer (or for the input errors of :func:`variance`).
    ValueError
        If `lanes` is below 1 (or for the input errors of :func:`variance`).

    Examples
    --------
    >>> welford([1.0, 2.0, 3.0, 4.0]).variance
    np.float64(1.25)
    """
    if isinstance(lanes, bool) or not isinstance(lanes, (int, np.integer)):
        raise TypeError(f"lanes must be a positive integer, such as 32 (a warp); got {lanes!r}.")
    if lanes < 1:
        raise ValueError(f"lanes must be a positive integer, such as 32 (a warp); got {lanes!r}.")
    rows, _ = _rows(x, axis, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return _merge_lanes(_welford_lanes(rows, min(int(lanes), rows.shape[-1])))


def variance(x, *, method: str = "two_pass", axis=-1, dtype=None) -> np.ndarray:
    """The biased variance by one of three algorithms, computed in a given precision (chapter
    "Computing it right: numerics").

    Parameters
    ----------
    x : array_like
        Finite real input with at least one axis; integers and lists become float64.
    method : {"two_pass", "one_pass", "welford"}, default "two_pass"
        ``"one_pass"``: E[x²] − E[x]²; ``"two_pass"``: mean, then mean of squared
        deviations; ``"welford"``: :func:`welford` with Chan's merge.
    axis : int or tuple of int, default -1
        The axes reduced over (LayerNorm's normalized axes).
    dtype : dtype or str, optional
        float16, float32 or float64. The input is rounded to it and every sum,
        product and division runs in it. Default: the dtype of `x`.

    Returns
    -------
    ndarray
        The variances, of the input's shape without the reduced axes, in `dtype`.
        A one-pass result can be negative or infinite (overflow in float16):
        that is the point of the chapter, so it is returned, not hidden.

    Raises
    ------
    ValueError
        For an unknown method, an unsupported dtype, NaN or infinite input, an
        empty reduced axis or an axis out of range.
    TypeError
        For complex or non-numeric input, or a `dtype` that is not a dtype.

    Examples
    --------
    >>> variance([1.0, 2.0, 3.0, 4.0], method="one_pass")
    array(1.25)
    >>> shifted = [1e4 + 1, 1e4 + 2, 1e4 + 3, 1e4 + 4]
    >>> float(variance(shifted, method="one_pass", dtype="float32"))
    0.0
    """
    method = check_method(method)
    rows, out_shape = _rows(x, axis, dtype)
    _, var = _moments(rows, method)
    return np.asarray(var, dtype=rows.dtype).reshape(out_shape)


def exact_variance(x, *, axis=-1) -> np.ndarray:
    """The variance of the values of `x` to float64 accuracy, with :func:`math.fsum` (chapter
    "Computing it right: numerics").

    The reference the algorithms are judged against: the mean and then the sum
    of squared deviations are summed exactly (``math.fsum``), so only a few
    float64 roundings remain, far below float32's or float16's. Each row is
    divided by a power of two first, so no square overflows or underflows.

    Returns
    -------
    ndarray of float64
        Of the input's shape without the reduced axes.

    Raises
    ------
    ValueError
        As :func:`variance`, and for a variance beyond float64's range (one that
        overflows, or underflows to 0 although the values differ).
    """
    rows, out_shape = _rows(x, axis, np.float64)
    flat = rows.reshape(-1, rows.shape[-1])
    size = flat.shape[-1]
    result = []
    for row in flat:
        k = int(
            np.frexp(np.max(np.abs(row)))[1]
        )  # sum x / 2**k (exact), so no square overflows or underflows
        u = np.ldexp(row, -k)
        mean = math.fsum(u) / size
        spread = math.fsum((u - mean) ** 2) / size
        with np.errstate(over="ignore", under="ignore"):
            var = float(np.ldexp(spread, 2 * k))
        if (var == 0 and row.max() != row.min()) or math.isinf(var):
            raise ValueError(
                f"the variance of a row, {spread:.6g} * 2**{2 * k}, is beyond float64's range; "
                "scale x by a power of two first."
            )
        result.append(var)
    return np.array(result, dtype=np.float64).reshape(out_shape)


def variance_relative_error(estimate, exact) -> np.ndarray:
    """``|estimate - exact| / exact`` per variance, in float64; infinite where the estimate is inf
    or NaN (chapter "Computing it right: numerics").

    Elementwise, for variances (which are positive). Gradients and outputs, whose
    entries can be near zero, are compared by :func:`~lnlib.backward.relative_error`
    instead, against the largest entry of the reference.

    Raises
    ------
    ValueError
        If an exact value is not positive (a relative error needs a nonzero reference).
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    exact = np.asarray(exact, dtype=np.float64)
    if np.any(exact <= 0):
        raise ValueError(
            "the exact variance must be positive for a relative error; got a zero (all values "
            "equal in the working dtype?)."
        )
    error = np.abs(estimate - exact) / exact
    return np.where(np.isfinite(error), error, np.inf)


def unit_roundoff(dtype) -> float:
    """Half the distance from 1 to the next number of `dtype`: the relative error of one rounding
    (chapter "Computing it right: numerics").

    Any float dtype, bfloat16 and ``ml_dtypes``' other formats included; None means float64.
    :mod:`lnlib.harness` budgets its checks with it.

    Raises
    ------
    TypeError
        If `dtype` is not a dtype (or dtype name) at all.
    ValueError
        If it is a dtype, but not a floating-point one.

    Examples
    --------
    >>> unit_roundoff("float32") == 2.0**-24, unit_roundoff("bfloat16") == 2.0**-8
    (True, True)
    """
    try:
        info = float_info(np.float64 if dtype is None else dtype)
    except TypeError:
        raise TypeError(f"dtype must be a float dtype or its name; got {dtype!r}.") from None
    except ValueError:
        raise ValueError(
            f"dtype must be a floating-point dtype; got {np.dtype(dtype).name}."
        ) from None
    return float(info.eps) / 2
