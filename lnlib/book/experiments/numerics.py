r"""The experiment of the chapter "Computing it right: numerics": each variance algorithm's error as
the data's mean moves away from zero.

The algorithms themselves, and the exact reference, are the library's
(:mod:`lnlib.variance_algorithms`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...backward import layer_norm_backward
from ...validation import BFLOAT16, check_eps, compute_dtype
from ...variance_algorithms import (
    DTYPES,
    METHODS,
    _moments,
    _rows,
    check_method,
    exact_variance,
    unit_roundoff,
    variance,
    variance_relative_error,
)
from ..tools import prose

__all__ = [
    "layer_norm_with",
    "ShiftErrors",
    "shifted_data",
    "shift_errors",
    "ErrorSweep",
    "error_sweep",
    "MIXED_PRECISION_ROWS",
    "mixed_precision_inputs",
    "running_sum_stall",
    "GradientSums",
    "gradient_sums",
    "threaded_running_sum",
    "pairwise_sum",
    "small_gradients",
    "SmallGradientSums",
    "small_gradient_sums",
    "row_findings",
    "shift_findings",
    "negative_findings",
    "output_findings",
    "half_findings",
    "gradient_sum_findings",
    "small_sum_findings",
    "thread_findings",
    "traffic_findings",
    "RMS_SIZE",
    "RMS_SEEDS",
    "RMS_KERNELS",
    "rms_norm_kernel",
    "MeanSquareErrors",
    "mean_square_errors",
    "RMSHalfSweep",
    "rms_half_sweep",
    "square_rounding_errors",
    "lnlib_half_rms_errors",
    "rms_half_findings",
]


def layer_norm_with(x, *, method: str, dtype, eps: float = 1e-5, clamp: bool = False) -> np.ndarray:
    """LayerNorm over the last axis with a chosen variance algorithm, all in `dtype` (chapter
    "Computing it right: numerics").

    ``y = (x - mean) / sqrt(var + eps)`` with the mean and variance of `method`.
    Nothing guards the square root unless ``clamp=True``, which replaces a
    negative variance by 0 first, as Flax does: so a negative one-pass variance
    larger than eps shows up as NaN, exactly as it would in an unguarded kernel.
    """
    method = check_method(method)
    eps = check_eps(eps)
    rows, _ = _rows(x, -1, dtype)
    mean, var = _moments(rows, method)
    if clamp:
        var = np.maximum(var, rows.dtype.type(0))
    with np.errstate(over="ignore", invalid="ignore"):
        return (rows - mean[..., None]) / np.sqrt(var[..., None] + rows.dtype.type(eps))


@dataclass(frozen=True)
class ShiftErrors:
    """How wrong each algorithm is on unit-variance data shifted by `shift` (chapter "Computing it
    right: numerics").

    Attributes
    ----------
    shift, dtype :
        The experiment: N(0, 1) rows plus `shift`, rounded to `dtype`.
    variance_error : dict of str to float
        Per method, the worst relative error of the variance over the rows;
        ``inf`` where the computed variance overflowed or is NaN.
    output_error : dict of str to float
        Per method, the worst ``|y - y_exact|`` of the LayerNorm output (unguarded
        square root); ``inf`` where an output is NaN or infinite.
    negative : dict of str to int
        Per method, the number of rows whose computed variance is negative.
    rows : int
        The number of rows.
    """

    shift: float
    dtype: str
    variance_error: dict
    output_error: dict
    negative: dict
    rows: int


def shifted_data(
    shift: float, dtype, *, rows: int = 8, size: int = 256, seed: int = 0
) -> np.ndarray:
    """Seeded N(0, 1) rows of length `size`, plus `shift`, rounded to `dtype` (chapter "Computing it
    right: numerics").

    The same seed gives the same noise at every shift, so a sweep over shifts
    changes one thing only.

    Raises
    ------
    ValueError
        If the shifted values do not fit in `dtype`, or if consecutive numbers
        of `dtype` near `shift` are 1 or more apart (the noise's standard
        deviation), so that rounding the input destroys what is measured.
    """
    dtype = compute_dtype(np.float64, dtype, choices=DTYPES.values(), name="dtype")
    noise = np.random.default_rng(seed).normal(size=(rows, size))
    data, _ = _rows(noise + float(shift), -1, dtype)
    spacing = float(np.spacing(np.abs(dtype.type(shift))))
    if spacing >= 1.0:
        raise ValueError(
            f"near {shift:g}, consecutive {dtype.name} numbers are {spacing:g} apart, as far as "
            "the data's spread (1): rounding the input has already destroyed what the variance "
            "measures."
        )
    return data


def _worst(errors: np.ndarray) -> float:
    errors = np.asarray(errors, dtype=np.float64)
    return float(np.inf) if not np.all(np.isfinite(errors)) else float(errors.max())


def shift_errors(
    shift: float, dtype, *, rows: int = 8, size: int = 256, seed: int = 0, eps: float = 1e-5
) -> ShiftErrors:
    """Run every method on :func:`shifted_data` and measure its errors (chapter "Computing it right:
    numerics").

    The references are exact for the rounded data: :func:`exact_variance` for
    the variance, and float64 two-pass LayerNorm for the output.
    """
    data = shifted_data(shift, dtype, rows=rows, size=size, seed=seed)
    exact = exact_variance(data)
    centred = data.astype(np.float64) - np.mean(data.astype(np.float64), axis=-1, keepdims=True)
    y_exact = centred / np.sqrt(exact[:, None] + eps)
    variance_error, output_error, negative = {}, {}, {}
    for method in METHODS:
        var = variance(data, method=method)
        variance_error[method] = _worst(variance_relative_error(var, exact))
        output_error[method] = _worst(
            np.abs(layer_norm_with(data, method=method, dtype=data.dtype, eps=eps) - y_exact)
        )
        negative[method] = int(np.sum(var < 0))
    return ShiftErrors(float(shift), data.dtype.name, variance_error, output_error, negative, rows)


@dataclass(frozen=True)
class ErrorSweep:
    """:func:`shift_errors` over many shifts, as arrays (chapter "Computing it right: numerics").

    Entries are NaN at shifts the dtype cannot represent (see :func:`shifted_data`).
    """

    shifts: np.ndarray
    dtype: str
    variance_error: dict
    output_error: dict
    negative: dict


def error_sweep(shifts, dtype, **options) -> ErrorSweep:
    """Measure every method's errors at each shift (chapter "Computing it right: numerics").

    Parameters
    ----------
    shifts : array_like of float
    dtype : dtype or str
        float16, float32 or float64.
    **options
        Passed to :func:`shift_errors` (rows, size, seed, eps).
    """
    shifts = np.asarray(shifts, dtype=np.float64)
    name = compute_dtype(np.float64, dtype, choices=DTYPES.values(), name="dtype").name
    fields = {
        key: {m: np.full(shifts.shape, np.nan) for m in METHODS}
        for key in ("variance_error", "output_error", "negative")
    }
    for i, shift in enumerate(shifts):
        try:
            result = shift_errors(shift, name, **options)
        except ValueError:
            continue
        for key, per_method in fields.items():
            for method in METHODS:
                per_method[method][i] = getattr(result, key)[method]
    return ErrorSweep(shifts, name, **fields)


#: Rows of the mixed-precision backward: more than float16 holds (65504), far past where its running
#: sum stalls
MIXED_PRECISION_ROWS = 70_000


def mixed_precision_inputs(rows: int = MIXED_PRECISION_ROWS, size: int = 8, seed: int = 3):
    """(x, dy, gamma) of the chapter's mixed-precision backward (chapter "Computing it right:
    numerics").

    x: seeded N(0, 1) rows in float16; dy = 1 in float16, so that dbeta, the sum of dy over the
    rows, is exactly `rows`; gamma = 1 in float32, the parameters autocast training keeps beside
    16-bit activations.
    """
    x = np.random.default_rng(seed).normal(size=(rows, size)).astype(np.float16)
    return x, np.ones_like(x), np.ones(size, np.float32)


def running_sum_stall(dtype, count: int = MIXED_PRECISION_ROWS) -> float:
    """Where a running sum of `count` ones, each partial sum rounded to `dtype`, ends (chapter
    "Computing it right: numerics").

    In float16, 2048 + 1 rounds back to 2048 (consecutive float16 numbers there are 2 apart), so
    the sum stops growing at 2048; in bfloat16 at 256; in float32 it is exact up to 2**24.
    """
    dtype = np.dtype(dtype)
    return float(np.cumsum(np.ones(count, dtype), dtype=dtype)[-1])


@dataclass(frozen=True)
class GradientSums:
    """dbeta over many rows of dy = 1 with 16-bit x (chapter "Computing it right: numerics").

    Attributes
    ----------
    rows : int
        The rows summed over; the exact dbeta is `rows` in every entry.
    stall : dict of str to float
        Per 16-bit dtype ("float16", "bfloat16"), where a running sum of `rows` ones in it ends.
    float32_running_sum : float
        The same running sum in float32: `rows`, exactly.
    dbeta : ndarray
        ``lnlib.layer_norm_backward(dy, x, gamma)[2]`` with float16 x and float32 gamma.
    dbeta_dtype, dx_dtype : str
        The dtypes it returns dbeta (gamma's) and dx (x's) in.
    count_trace : ndarray
        The float16 running sum of the ones after each row (the figure's stalled curve).
    exact_threads : int
        The fewest threads for which :func:`threaded_running_sum` in float16 is exact: every
        share at most the float16 stall.
    """

    rows: int
    stall: dict
    float32_running_sum: float
    dbeta: np.ndarray
    dbeta_dtype: str
    dx_dtype: str
    count_trace: np.ndarray
    exact_threads: int


def gradient_sums(rows: int = MIXED_PRECISION_ROWS, **inputs) -> GradientSums:
    """Sum dy = 1 over `rows` rows: running sums in 16 bits and in float32, and lnlib's dbeta
    (chapter "Computing it right: numerics").

    `inputs` (size, seed) are passed to :func:`mixed_precision_inputs`.
    """
    x, dy, gamma = mixed_precision_inputs(rows, **inputs)
    dx, _, dbeta = layer_norm_backward(dy, x, gamma)
    halves = {"float16": np.float16, "bfloat16": BFLOAT16}
    return GradientSums(
        rows=rows,
        stall={name: running_sum_stall(dtype, rows) for name, dtype in halves.items()},
        float32_running_sum=running_sum_stall(np.float32, rows),
        dbeta=dbeta,
        dbeta_dtype=dbeta.dtype.name,
        dx_dtype=dx.dtype.name,
        count_trace=np.cumsum(np.ones(rows, np.float16), dtype=np.float16),
        exact_threads=-(-rows // int(running_sum_stall(np.float16, rows))),
    )


def threaded_running_sum(count: int, threads: int, dtype=np.float16) -> float:
    """A model of a threaded sum of `count` ones: equal shares, each a running sum in `dtype`, added
    in float32 (chapter "Computing it right: numerics").

    Each of the `threads` contiguous shares (sizes differing by at most one) stalls where
    :func:`running_sum_stall` says, so the result is exact once every share holds at most the stall
    (2048 rows in float16).
    """
    shares = np.array_split(np.ones(count, dtype), threads)
    return float(
        sum(np.float32(np.cumsum(share, dtype=dtype)[-1]) for share in shares if share.size)
    )


def pairwise_sum(values) -> float:
    """Sum `values` pairwise, every partial sum rounded to their dtype (chapter "Computing it right:
    numerics").

    Neighbours are added level by level (a tree of depth log2 n), so each value passes through
    about log2 n roundings instead of up to n, and partial sums of small values stay small.
    """
    level = np.asarray(values)
    while level.size > 1:
        if level.size % 2:
            level = np.append(level, level.dtype.type(0))
        level = level[0::2] + level[1::2]
    return float(level[0])


def small_gradients(rows: int = MIXED_PRECISION_ROWS, seed: int = 0) -> np.ndarray:
    """`rows` seeded float16 gradient contributions of about 1/rows each, N(1, 1) / rows, summing to
    about 1 (chapter "Computing it right: numerics")."""
    return (np.random.default_rng(seed).normal(1.0, 1.0, rows) / rows).astype(np.float16)


@dataclass(frozen=True)
class SmallGradientSums:
    """Sums of :func:`small_gradients` over several seeds (chapter "Computing it right: numerics").

    Attributes
    ----------
    rows : int
        The values summed per seed.
    exact : ndarray
        Per seed, the exact sum of the float16 values (in float64): about 1.
    running : ndarray
        Per seed, a running sum with every partial sum rounded to float16.
    pairwise : ndarray
        Per seed, :func:`pairwise_sum` in float16.
    numpy_sum : ndarray
        Per seed, ``np.sum`` of the float16 array (numpy adds partial sums pairwise).
    trace_exact, trace_running : ndarray
        For the first seed, the exact and the float16 running sum after each row (the figure's
        curves).
    """

    rows: int
    exact: np.ndarray
    running: np.ndarray
    pairwise: np.ndarray
    numpy_sum: np.ndarray
    trace_exact: np.ndarray
    trace_running: np.ndarray


def small_gradient_sums(rows: int = MIXED_PRECISION_ROWS, seeds=range(5)) -> SmallGradientSums:
    """Sum :func:`small_gradients` exactly, as a float16 running sum, pairwise and with ``np.sum``
    (chapter "Computing it right: numerics")."""
    draws = [small_gradients(rows, seed) for seed in seeds]
    traces = [np.cumsum(g, dtype=np.float16) for g in draws]
    return SmallGradientSums(
        rows=rows,
        exact=np.array([np.sum(g, dtype=np.float64) for g in draws]),
        running=np.array([float(t[-1]) for t in traces]),
        pairwise=np.array([pairwise_sum(g) for g in draws]),
        numpy_sum=np.array([float(np.sum(g)) for g in draws]),
        trace_exact=np.cumsum(draws[0], dtype=np.float64),
        trace_running=traces[0].astype(np.float64),
    )


# --- the numbers the chapter's prose quotes, by glue key ------------------------------------------


def row_findings(row) -> dict:
    """What "The idea" of chapter "Computing it right: numerics" says of its running row, by glue
    key.

    Returns
    -------
    dict of str to ProseNumber
        ``row_var``: the row's exact variance; ``row_one_pass``: the one-pass variance in float32;
        ``row_kappa``: κ = |mean| / σ; ``row_u_kappa2``: u·κ² in float32 (the one-pass error law);
        ``u32``, ``u16``: float32's and float16's unit roundoff; ``f32_spacing_1e8``: the gap
        between float32 numbers at 10⁸; ``kappa_two_pass_f32``: 1/√u in float32, the κ where
        two-pass's error (uκ)² reaches u; ``f16_unit_spacing``: 2¹⁰, where consecutive float16
        numbers are 1 apart.
    """
    row = np.asarray(row, dtype=np.float64)
    exact = float(exact_variance(row))
    kappa = abs(row.mean()) / np.sqrt(exact)
    u32 = unit_roundoff("float32")
    return {
        "row_var": prose.number(exact, ".4f"),
        "row_one_pass": prose.number(
            float(variance(row, method="one_pass", dtype="float32")), ".2f"
        ),
        "row_kappa": prose.number(float(kappa), ".0f"),
        "row_u_kappa2": prose.number(float(u32 * kappa**2), ".1f"),
        "u32": prose.number(u32, ".2e"),
        "u16": prose.number(unit_roundoff("float16"), ".2e"),
        "f32_spacing_1e8": prose.number(float(np.spacing(np.float32(1e8))), ".0f"),
        "kappa_two_pass_f32": prose.number(float(1 / np.sqrt(u32)), ".0f"),
        "f16_unit_spacing": prose.number(float(2 ** np.finfo(np.float16).nmant), ".0f"),
    }


def shift_findings(at_1e4: ShiftErrors) -> dict:
    """What the chapter says of the float32 errors at a shift of 10⁴ and of float16's range, by glue
    key.

    Parameters
    ----------
    at_1e4 : ShiftErrors
        :func:`shift_errors` at a shift of 10⁴ in float32.

    Returns
    -------
    dict of str to ProseNumber
        ``one_pass_err_1e4`` (1 decimal), ``one_pass_err_1e4_0dp`` (whole), ``two_pass_err_1e4``,
        ``welford_err_1e4``: each method's worst relative variance error; ``f16_max``: float16's
        largest finite number; ``f16_sum_limit``: f16_max / 256, the values past which a sum of 256
        overflows; ``f16_square_limit``: its square root, the same for a sum of 256 squares.
    """
    errors = at_1e4.variance_error
    f16_max = float(np.finfo(np.float16).max)
    return {
        "one_pass_err_1e4": prose.number(errors["one_pass"], ".1f"),
        "one_pass_err_1e4_0dp": prose.number(errors["one_pass"], ".0f"),
        "two_pass_err_1e4": prose.number(errors["two_pass"], ".1e"),
        "welford_err_1e4": prose.number(errors["welford"], ".1e"),
        "f16_max": prose.number(f16_max, ".0f"),
        "f16_sum_limit": prose.number(f16_max / 256, ".0f"),
        "f16_square_limit": prose.number(float(np.sqrt(f16_max / 256)), ".0f"),
    }


def negative_findings(data, eps: float = 1e-5) -> dict:
    """What the section "A negative variance, seeded" says of the one-pass variances of `data`, by
    glue key.

    Returns
    -------
    dict of str to ProseNumber
        ``n_negative``, ``n_zero``: how many rows' one-pass variance is below zero or exactly zero;
        ``most_negative``: the lowest of them; ``eps_used``: the ε of the outputs that follow
        (:func:`layer_norm_with`'s default); ``sqrt_eps_used``: √ε.
    """
    rows = variance(data, method="one_pass")
    return {
        "n_negative": prose.number(int(np.sum(rows < 0))),
        "n_zero": prose.number(int(np.sum(rows == 0))),
        "most_negative": prose.number(float(rows.min()), ".0f"),
        "eps_used": prose.number(eps),
        "sqrt_eps_used": prose.number(float(np.sqrt(eps)), ".4f"),
    }


def output_findings(outputs: dict, exact, clamped) -> dict:
    """What the chapter says of LayerNorm's float32 outputs built on each variance method, by glue
    key.

    Parameters
    ----------
    outputs : dict
        ``{method: output}`` for "one_pass", "two_pass" and "welford" (:func:`layer_norm_with`).
    exact : ndarray
        The float64 output.
    clamped : ndarray
        The one-pass output with negative variances clamped to 0.

    Returns
    -------
    dict of str to ProseNumber
        ``n_nan_outputs``: NaN entries of the one-pass output; ``max_one_pass_output``,
        ``max_exact_output``, ``max_clamped_output``: the largest |entry| of each (NaN ignored);
        ``welford_output_error``, ``two_pass_output_error``: the largest |difference| from `exact`.
    """
    one_pass = outputs["one_pass"]
    return {
        "n_nan_outputs": prose.number(int(np.sum(np.isnan(one_pass)))),
        "max_one_pass_output": prose.number(float(np.nanmax(np.abs(one_pass))), ".0f"),
        "max_exact_output": prose.number(float(np.max(np.abs(exact))), ".2f"),
        "max_clamped_output": prose.number(float(np.max(np.abs(clamped))), ".0f"),
        "welford_output_error": prose.number(
            float(np.max(np.abs(outputs["welford"] - exact))), ".1e"
        ),
        "two_pass_output_error": prose.number(
            float(np.max(np.abs(outputs["two_pass"] - exact))), ".1e"
        ),
    }


def half_findings(errors: dict) -> dict:
    """What the section "Half precision, as the frameworks do it" says, by glue key.

    Parameters
    ----------
    errors : dict
        ``{(mode, data set): error in units of float16's u}`` as the chapter's table prints it.

    Returns
    -------
    dict of str to ProseNumber
        ``half_default_err``: float32 statistics, shift 20; ``half_storage_err``: everything in
        float16, shift 20; ``half_naive_wide_err``: the unguarded float16 kernel, spread 300.
    """
    return {
        "half_default_err": prose.number(
            errors["lnlib, float32 statistics (as PyTorch)", "shift 20"], ".1f"
        ),
        "half_storage_err": prose.number(errors["lnlib, everything in float16", "shift 20"], ".0f"),
        "half_naive_wide_err": prose.number(
            errors["unguarded float16 two-pass kernel", "spread 300"], ".0f"
        ),
    }


def gradient_sum_findings(sums: GradientSums) -> dict:
    """What the section "Gradients in mixed precision" says of :func:`gradient_sums`, by glue key.

    Returns
    -------
    dict of str to ProseNumber
        ``mp_rows``: the rows summed; ``f16_stall``, ``bf16_stall``: where a running sum of ones
        stops in float16 and bfloat16; ``f16_spacing_stall``: the gap between float16 numbers
        there; ``lnlib_dbeta``: lnlib's smallest dβ entry; ``exact_threads``: from how many
        threads :func:`threaded_running_sum` counts every row.
    """
    stall = sums.stall["float16"]
    return {
        "mp_rows": prose.number(sums.rows, ","),
        "f16_stall": prose.number(stall, ".0f"),
        "f16_spacing_stall": prose.number(float(np.spacing(np.float16(stall))), ".0f"),
        "bf16_stall": prose.number(sums.stall["bfloat16"], ".0f"),
        "lnlib_dbeta": prose.number(float(sums.dbeta.min()), ",.0f"),
        "exact_threads": prose.number(sums.exact_threads),
    }


def small_sum_findings(small: SmallGradientSums) -> dict:
    """:func:`small_gradient_sums` for the prose: each way of summing as mean ± sd over the seeds.

    Returns
    -------
    dict of str to ProseNumber
        ``small_exact``, ``small_running``, ``small_pairwise``, ``small_numpy_sum``
        (:func:`lnlib.book.tools.prose.mean_sd`); ``small_seeds``: how many seeds.
    """
    findings = {
        f"small_{key}": prose.mean_sd(getattr(small, key))
        for key in ("exact", "running", "pairwise", "numpy_sum")
    }
    findings["small_seeds"] = prose.number(len(small.exact))
    return findings


def thread_findings(stored: dict, threads) -> dict:
    """PyTorch's stored float16 and bfloat16 dβ per thread count, and under CPU autocast's default
    dtype (chapter "Computing it right: numerics"), by glue key.

    Parameters
    ----------
    stored : mapping
        The stored reference case "mixed_precision"
        (:func:`lnlib.book.tools.pytorch_reference.pytorch_reference`).
    threads : sequence of int
        The thread counts it was run with.

    Returns
    -------
    dict of str to ProseNumber
        ``torch_dbeta_<n>`` (float16 x) and ``torch_dbeta_bf16_<n>`` (bfloat16 x): the largest dβ
        entry with n threads; ``torch_autocast_dbeta``: LayerNorm's bias.grad under
        ``torch.autocast("cpu")``, one thread.
    """
    key = "F.layer_norm backward, {}{} CPU thread(s): dbeta"
    largest = lambda label: prose.number(float(np.max(stored[label])), ".0f")  # noqa: E731
    found = {f"torch_dbeta_{n}": largest(key.format("", n)) for n in threads}
    found |= {f"torch_dbeta_bf16_{n}": largest(key.format("bfloat16 x, ", n)) for n in threads}
    found["torch_autocast_dbeta"] = largest("autocast(), 1 CPU thread: LayerNorm bias.grad")
    return found


def traffic_findings(naive, fused) -> dict:
    """The H-vector transfers of a textbook and a fused LayerNorm, for the prose, by glue key.

    Parameters
    ----------
    naive, fused : object
        Memory-traffic counts with a ``total`` (H-vectors moved), as the memory-traffic model of
        chapter "LayerNorm at the speed of memory" returns them.

    Returns
    -------
    dict of str to ProseNumber
        ``naive_total``, ``fused_total``, and ``traffic_ratio`` (naive over fused, whole).
    """
    return {
        "naive_total": prose.number(naive.total),
        "fused_total": prose.number(fused.total),
        "traffic_ratio": prose.number(naive.total / fused.total, ".0f"),
    }


# --- RMSNorm in half precision ------------------------------------------------------------------

#: The row width of the section "RMSNorm in half precision": a hidden size of today's models.
RMS_SIZE = 4096
#: The seeds each RMSNorm measurement is repeated over.
RMS_SEEDS = tuple(range(5))
#: How each half-precision RMSNorm kernel sums a row's squares (:func:`rms_norm_kernel`).
RMS_KERNELS = (
    ("float16", "running"),
    ("float16", "pairwise"),
    ("bfloat16", "running"),
    ("float32", "running"),
)


def _row_sum(values: np.ndarray, order: str, dtype=None) -> np.ndarray:
    """Each row's sum, every partial sum rounded to `dtype` (default: the values' own): a running
    sum (one value after the other) or pairwise (a tree, as a GPU block reduces). A `dtype` other
    than the values' adds each value, unrounded, to the rounded running sum (running order only)."""
    dtype = values.dtype if dtype is None else np.dtype(dtype)
    if order == "running" and dtype != values.dtype:
        total = np.zeros(values.shape[:-1], dtype)
        for column in np.moveaxis(values, -1, 0):
            total = (total.astype(values.dtype) + column).astype(dtype)
        return total
    if order == "running":
        return np.cumsum(values, axis=-1, dtype=values.dtype)[..., -1]
    level = values
    while level.shape[-1] > 1:
        if level.shape[-1] % 2:
            level = np.concatenate([level, np.zeros_like(level[..., :1])], axis=-1)
        level = level[..., 0::2] + level[..., 1::2]
    return level[..., 0]


def rms_norm_kernel(
    x, *, accumulate="float16", order: str = "running", eps: float = 1e-6, square=None
) -> np.ndarray:
    """RMSNorm as a kernel that squares and sums each row in `accumulate` (chapter "Computing it
    right: numerics", section "RMSNorm in half precision").

    ``rstd = 1 / sqrt(sum(x * x) / H + eps)`` with every operation in `accumulate` (the sum a
    running sum or pairwise, :func:`pairwise_sum`'s tree row by row),
    ``y = x * rstd`` rounded once to the input's dtype. So x is converted to `accumulate`, each
    square is rounded to it, and so is each partial sum after every add; then the division by H,
    the sum with eps, the square root, the reciprocal and the product with x. No guard: a sum of
    squares that overflows gives ``rstd = 0`` and ``y = 0``, as such a kernel would.

    Parameters
    ----------
    x : ndarray
        Rows of H features, float16 or bfloat16.
    accumulate : {"float16", "bfloat16", "float32"}, default "float16"
    order : {"running", "pairwise"}, default "running"
    eps : float, default 1e-6
    square : {None, "float32"}, default None
        None: each square is rounded to `accumulate` before it is added. ``"float32"``: the square
        of the float16 input is kept in float32 (exact) and added to the running sum, which is
        rounded to `accumulate` after each add (running order only).

    Returns
    -------
    ndarray
        y, in `x`'s dtype.
    """
    if order not in ("running", "pairwise"):
        raise ValueError(f"order must be 'running' or 'pairwise'; got {order!r}.")
    if square not in (None, "float32") or (square and order != "running"):
        raise ValueError(f"square must be None, or 'float32' with a running sum; got {square!r}.")
    work = compute_dtype(np.float16, accumulate)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        xw = np.asarray(x).astype(work)
        if square:
            x32 = np.asarray(x).astype(np.float32)
            total = _row_sum(x32 * x32, order, dtype=work)[..., None]
        else:
            total = _row_sum(xw * xw, order)[..., None]
        mean_square = total / work.type(xw.shape[-1])
        rstd = work.type(1) / np.sqrt(mean_square + work.type(eps))
        return (xw * rstd).astype(np.asarray(x).dtype)


@dataclass(frozen=True)
class MeanSquareErrors:
    """The float32 one-pass mean square against the one-pass variance on the same rows (chapter
    "Computing it right: numerics", section "RMSNorm in half precision").

    Attributes
    ----------
    mean_square, variance : ndarray
        Per seed, the worst relative error over the rows in units of float32's u: the running sum of
        x² over H (what RMSNorm needs), and E[x²] - E[x]² (what LayerNorm's one-pass formula needs).
    shift : float
    """

    mean_square: np.ndarray
    variance: np.ndarray
    shift: float


def mean_square_errors(shift: float = 1e4, seeds=RMS_SEEDS) -> MeanSquareErrors:
    """Worst relative errors of the float32 one-pass mean square and variance over the rows of
    :func:`shifted_data`, per seed (chapter "Computing it right: numerics")."""
    u = unit_roundoff("float32")
    square, spread = [], []
    for seed in seeds:
        data = shifted_data(shift, "float32", seed=seed)
        exact = np.mean(data.astype(np.float64) ** 2, axis=-1)
        ms = _row_sum(data * data, "running") / np.float32(data.shape[-1])
        square.append(np.max(np.abs(ms / exact - 1)) / u)
        errors = variance_relative_error(variance(data, method="one_pass"), exact_variance(data))
        spread.append(np.max(errors) / u)
    return MeanSquareErrors(np.array(square), np.array(spread), float(shift))


@dataclass(frozen=True)
class RMSHalfSweep:
    """Each RMSNorm kernel of :data:`RMS_KERNELS` on float16 rows of growing RMS (chapter
    "Computing it right: numerics", section "RMSNorm in half precision").

    Attributes
    ----------
    scales : ndarray
        The rows' RMS.
    zeroed : dict
        ``{(accumulate, order): array (seeds, scales)}``, the share of rows returned as all zeros.
    error : dict
        Same keys: the worst relative error of y over the rows not zeroed (nan when none is left).
    row_error : dict
        Same keys: ``array (seeds, scales, rows)``, each row's relative error of y (nan where it
        was zeroed).
    overflow_rms : float
        ``sqrt(max(float16) / H)``, the RMS above which a row's exact sum of squares overflows.
    size : int
    """

    scales: np.ndarray
    zeroed: dict
    error: dict
    row_error: dict
    overflow_rms: float
    size: int

    def zeroed_share(self, kernel) -> np.ndarray:
        """Per RMS, the share of rows the kernel returned as all zeros, over every seed."""
        return self.zeroed[kernel].mean(axis=0)

    def worst_error(self, kernel) -> np.ndarray:
        """Per RMS, the worst relative error of y over the rows not zeroed (nan where none is
        left)."""
        values = self.error[kernel]
        kept = np.where(np.isnan(values), -np.inf, values).max(axis=0)
        return np.where(np.isfinite(kept), kept, np.nan)


def rms_half_sweep(scales, *, size: int = RMS_SIZE, rows: int = 8, seeds=RMS_SEEDS) -> RMSHalfSweep:
    """Run every kernel of :data:`RMS_KERNELS` on seeded float16 rows ``N(0, 1) * scale``."""
    scales = np.asarray(scales, dtype=float)
    zeroed = {kernel: np.zeros((len(seeds), scales.size)) for kernel in RMS_KERNELS}
    error = {kernel: np.zeros((len(seeds), scales.size)) for kernel in RMS_KERNELS}
    row_error = {kernel: np.zeros((len(seeds), scales.size, rows)) for kernel in RMS_KERNELS}
    for i, seed in enumerate(seeds):
        noise = np.random.default_rng(seed).normal(size=(rows, size))
        for j, scale in enumerate(scales):
            x = (noise * scale).astype(np.float16)
            x64 = x.astype(np.float64)
            exact = x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-6)
            for kernel in RMS_KERNELS:
                y = rms_norm_kernel(x, accumulate=kernel[0], order=kernel[1]).astype(np.float64)
                zero = np.all(y == 0, axis=-1)
                zeroed[kernel][i, j] = zero.mean()
                relative = np.max(np.abs(y - exact), axis=-1) / np.max(np.abs(exact), axis=-1)
                error[kernel][i, j] = relative[~zero].max() if (~zero).any() else np.nan
                row_error[kernel][i, j] = np.where(zero, np.nan, relative)
    overflow = float(np.sqrt(float(np.finfo(np.float16).max) / size))
    return RMSHalfSweep(scales, zeroed, error, row_error, overflow, size)


def square_rounding_errors(
    scale: float = 1.0, *, size: int = RMS_SIZE, rows: int = 8, seeds=RMS_SEEDS
) -> dict:
    """Each row's relative error of y from a 16-bit running sum of squares, with each square
    rounded to the 16-bit type before it is added (:func:`rms_norm_kernel`'s default) or kept in
    float32 (``square="float32"``), on the rows of :func:`rms_half_sweep` at one RMS (chapter
    "Computing it right: numerics", section "RMSNorm in half precision").

    Returns
    -------
    dict
        ``{(accumulate, square): array (seeds * rows,)}`` for accumulate float16 and bfloat16 and
        square None (rounded) and "float32".
    """
    errors = {}
    for accumulate in ("float16", "bfloat16"):
        for square in (None, "float32"):
            found = []
            for seed in seeds:
                noise = np.random.default_rng(seed).normal(size=(rows, size))
                x = (noise * scale).astype(np.float16)
                x64 = x.astype(np.float64)
                exact = x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-6)
                y = rms_norm_kernel(x, accumulate=accumulate, square=square).astype(np.float64)
                found.append(np.max(np.abs(y - exact), axis=-1) / np.max(np.abs(exact), axis=-1))
            errors[accumulate, square] = np.concatenate(found)
    return errors


def lnlib_half_rms_errors(scales, *, size: int = RMS_SIZE, rows: int = 8, seeds=RMS_SEEDS) -> dict:
    """``lnlib.rms_norm`` on seeded float16 rows ``N(0, 1) * scale``: the worst error of y against
    float64 on the same input, relative to the row's largest entry as :func:`rms_half_sweep`
    measures the kernels', in units of float16's u, per compute dtype (the default, float32
    statistics, and ``"float16"``), over every scale and seed (chapter "Computing it right:
    numerics", section "RMSNorm in half precision")."""
    from ...norms import rms_norm

    u = unit_roundoff("float16")
    worst = {"float32 statistics": 0.0, "compute_dtype='float16'": 0.0}
    for seed in seeds:
        noise = np.random.default_rng(seed).normal(size=(rows, size))
        for scale in scales:
            x = (noise * scale).astype(np.float16)
            exact = rms_norm(x.astype(np.float64))
            for name, dtype in zip(worst, (None, "float16")):
                y = rms_norm(x, compute_dtype=dtype).astype(np.float64)
                relative = np.max(np.abs(y - exact), axis=-1) / np.max(np.abs(exact), axis=-1)
                worst[name] = max(worst[name], float(relative.max()) / u)
    return worst


def _first_all_zero(sweep: RMSHalfSweep, kernel) -> float:
    """The smallest RMS of the sweep at which the kernel zeroed every row of every seed."""
    full = np.all(sweep.zeroed[kernel] == 1, axis=0)
    return float(sweep.scales[np.argmax(full)]) if full.any() else float("nan")


def rms_half_findings(
    squares: MeanSquareErrors, sweep: RMSHalfSweep, lnlib_errors: dict, rounding=None
) -> dict:
    """What the section "RMSNorm in half precision" says, by glue key.

    Parameters
    ----------
    squares : MeanSquareErrors
        From :func:`mean_square_errors`.
    sweep : RMSHalfSweep
        From :func:`rms_half_sweep`, with 1 and the overflow's neighbourhood among its scales.
    lnlib_errors : dict
        From :func:`lnlib_half_rms_errors`.
    rounding : dict, optional
        From :func:`square_rounding_errors`: adds the range of each row's error with the squares
        kept in float32 (``rms_*_f32sq_lo`` and ``_hi``).

    Returns
    -------
    dict of str to ProseNumber
    """
    scales = list(sweep.scales)
    below = max(s for s in scales if s < sweep.overflow_rms)
    at_one = scales.index(1.0)
    f16_running, f16_pairwise = ("float16", "running"), ("float16", "pairwise")
    bf16, f32 = ("bfloat16", "running"), ("float32", "running")
    straddle = min(s for s in scales if s >= sweep.overflow_rms)
    u16 = unit_roundoff("float16")
    return {
        "rms_seeds": prose.number(len(squares.mean_square)),
        "rms_shift": prose.number(squares.shift, ".0f"),
        "rms_ms_err": prose.mean_sd(squares.mean_square),
        "rms_ms_err_max": prose.number(float(np.max(squares.mean_square)), ".0f"),
        "rms_var_err_min": prose.number(float(np.min(squares.variance)), ".1e"),
        "rms_var_err_max": prose.number(float(np.max(squares.variance)), ".1e"),
        "rms_size": prose.number(sweep.size),
        "rms_f16_max": prose.number(float(np.finfo(np.float16).max), ".0f"),
        "rms_overflow_rms": prose.number(sweep.overflow_rms, ".2f"),
        "rms_square_overflow": prose.number(float(np.sqrt(float(np.finfo(np.float16).max))), ".0f"),
        "rms_below": prose.number(below, "g"),
        "rms_straddle": prose.number(straddle, "g"),
        "rms_pairwise_share": prose.mean_sd(
            100 * sweep.zeroed[f16_pairwise][:, scales.index(straddle)]
        ),
        "rms_pairwise_all_zero": prose.number(_first_all_zero(sweep, f16_pairwise), "g"),
        "rms_running_all_zero": prose.number(_first_all_zero(sweep, f16_running), "g"),
        "rms_rows_at_one": prose.number(int(np.isfinite(sweep.row_error[bf16][:, at_one]).sum())),
        **_percent_range("rms_running_err", sweep.row_error[f16_running][:, at_one], ".1f"),
        "rms_pairwise_err_u": prose.number(
            float(np.nanmax(sweep.error[f16_pairwise][:, : scales.index(below) + 1])) / u16, ".1f"
        ),
        **_percent_range("rms_bf16_err", sweep.row_error[bf16][:, at_one], ".0f"),
        "rms_f32_err_u": prose.number(float(np.nanmax(sweep.error[f32])) / u16, ".1f"),
        "rms_largest": prose.number(float(max(scales)), "g"),
        "rms_lnlib_err_u": prose.number(lnlib_errors["float32 statistics"], ".1f"),
        "rms_lnlib_f16_err_u": prose.number(lnlib_errors["compute_dtype='float16'"], ".1f"),
        **(
            {}
            if rounding is None
            else {
                **_percent_range("rms_running_f32sq", rounding["float16", "float32"], ".1f"),
                **_percent_range("rms_bf16_f32sq", rounding["bfloat16", "float32"], ".0f"),
            }
        ),
    }


def _percent_range(key: str, relative, spec: str) -> dict:
    """``key_lo`` and ``key_hi``: the smallest and largest of the rows' relative errors, in %."""
    values = 100 * np.asarray(relative, dtype=float).ravel()
    values = values[np.isfinite(values)]
    return {
        f"{key}_lo": prose.number(float(values.min()), spec),
        f"{key}_hi": prose.number(float(values.max()), spec),
    }
