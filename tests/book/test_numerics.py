"""lnlib.book.experiments.numerics: the mixed-precision backward of chapter 13 (its variance
experiments are tested in tests/library/test_variance_algorithms.py)."""

import numpy as np

from lnlib import layer_norm_backward
from lnlib.book.experiments.numerics import (
    MIXED_PRECISION_ROWS,
    gradient_sums,
    mixed_precision_inputs,
    pairwise_sum,
    running_sum_stall,
    small_gradient_sums,
    small_gradients,
    threaded_running_sum,
)
from lnlib.validation import BFLOAT16


def _sequential_sum(count, dtype):
    total = dtype(0)
    for _ in range(count):
        total = dtype(total + dtype(1))
    return float(total)


def test_running_sums_stall_where_adding_one_rounds_back():
    # the stall is where the spacing of consecutive numbers reaches 2: 2**(mantissa bits + 1)
    assert running_sum_stall(np.float16) == 2.0 ** (np.finfo(np.float16).nmant + 1) == 2048
    assert running_sum_stall(BFLOAT16) == 2.0**8
    assert running_sum_stall(np.float32) == MIXED_PRECISION_ROWS
    assert running_sum_stall(np.float16, 5000) == _sequential_sum(5000, np.float16)
    assert running_sum_stall(np.float16, 1000) == 1000  # below the stall, exact


def test_mixed_precision_inputs_are_float16_x_ones_and_float32_gamma():
    x, dy, gamma = mixed_precision_inputs(rows=5, size=3, seed=1)
    assert (x.dtype, dy.dtype, gamma.dtype) == (np.float16, np.float16, np.float32)
    assert x.shape == dy.shape == (5, 3) and (dy == 1).all() and (gamma == 1).all()
    np.testing.assert_array_equal(x, mixed_precision_inputs(rows=5, size=3, seed=1)[0])


def test_gradient_sums_lnlib_dbeta_is_every_row_in_float32():
    found = gradient_sums()
    assert found.rows == MIXED_PRECISION_ROWS
    assert found.stall == {"float16": 2048.0, "bfloat16": 256.0}
    assert found.float32_running_sum == MIXED_PRECISION_ROWS
    assert (found.dbeta_dtype, found.dx_dtype) == ("float32", "float16")
    np.testing.assert_array_equal(found.dbeta, np.full(8, MIXED_PRECISION_ROWS, np.float32))
    # the same sum in float64, independently
    x, dy, _ = mixed_precision_inputs()
    exact = layer_norm_backward(dy.astype(np.float64), x.astype(np.float64))[2]
    np.testing.assert_array_equal(found.dbeta, exact)


def test_gradient_sums_of_few_rows_are_exact_in_every_dtype():
    found = gradient_sums(rows=100, size=4, seed=0)
    assert found.stall == {"float16": 100.0, "bfloat16": 100.0}
    np.testing.assert_array_equal(found.dbeta, np.full(4, 100.0))


def test_pytorch_cpu_dbeta_is_the_float16_stall_times_its_threads():
    # chapter 13's reading of the stored PyTorch run: each thread's share stalls at 2048
    from lnlib.book.tools.pytorch_reference import MIXED_PRECISION_THREADS, pytorch_reference

    x, dy, gamma = mixed_precision_inputs()
    stored = pytorch_reference("mixed_precision", x=x, dy=dy, gamma=gamma)
    stall = running_sum_stall(np.float16)
    for threads in MIXED_PRECISION_THREADS:
        dbeta = stored[f"F.layer_norm backward, {threads} CPU thread(s): dbeta"]
        assert dbeta.dtype == np.float32
        np.testing.assert_array_equal(dbeta, np.full(8, threads * stall))
    assert stored["autocast(float16): LayerNorm input"].dtype == np.float16
    for name in ("weight", "bias.grad"):
        assert stored[f"autocast(float16): LayerNorm {name}"].dtype == np.float32


def test_threaded_running_sum_is_exact_once_every_share_fits_under_the_stall():
    found = gradient_sums()
    assert found.exact_threads == 35  # 70 000 / 35 = 2000 <= 2048 < 70 000 / 34
    assert threaded_running_sum(MIXED_PRECISION_ROWS, found.exact_threads) == MIXED_PRECISION_ROWS
    assert (
        threaded_running_sum(MIXED_PRECISION_ROWS, found.exact_threads - 1) < MIXED_PRECISION_ROWS
    )
    for threads in (1, 2, 4):
        assert threaded_running_sum(MIXED_PRECISION_ROWS, threads) == threads * 2048
    # shares of 3 and 2 ones, each summed one by one
    assert threaded_running_sum(5, 2) == _sequential_sum(3, np.float16) + _sequential_sum(
        2, np.float16
    )
    np.testing.assert_array_equal(found.count_trace[[0, 2047, -1]], [1, 2048, 2048])


def test_pairwise_sum_adds_neighbours_level_by_level():
    assert pairwise_sum(np.arange(7, dtype=np.float16)) == 21
    assert (
        pairwise_sum(np.ones(60_000, np.float16)) == 60_000
    )  # every partial a power of 2 or exact
    values = np.array([1.0, 2.0**-11, 2.0**-11, 0.0], np.float16)
    # pairs: 1 + 2**-11 rounds to 1, 2**-11 + 0 = 2**-11; then 1 + 2**-11 rounds to 1
    assert pairwise_sum(values) == 1.0


def test_small_gradients_running_sum_stalls_where_pairwise_does_not():
    g = small_gradients(rows=3000, seed=1)
    assert g.dtype == np.float16 and g.shape == (3000,)
    found = small_gradient_sums(rows=3000, seeds=[1])
    total = np.float16(0)
    for value in g:  # the running sum, one rounding per row
        total = np.float16(total + value)
    assert found.running[0] == float(total) == found.trace_running[-1]
    assert found.exact[0] == np.sum(g.astype(np.float64)) == found.trace_exact[-1]


def test_small_gradient_sums_over_70000_rows():
    found = small_gradient_sums(seeds=range(3))
    np.testing.assert_allclose(found.exact, 1.0, atol=0.02)
    assert np.all(
        found.running < 0.2
    )  # stalled: from 0.125 on, half the spacing (2**-14) is over 4 / 70 000
    np.testing.assert_allclose(found.pairwise, found.exact, rtol=2e-3)
    np.testing.assert_allclose(found.numpy_sum, found.exact, rtol=2e-3)


# --- the chapter's prose numbers (experiments.numerics.*_findings) ------------------------------

from types import SimpleNamespace  # noqa: E402


def _texts(found: dict) -> dict:
    return {key: str(value) for key, value in found.items()}


def test_row_findings_at_a_row_whose_statistics_are_known():
    from lnlib.book.experiments.numerics import row_findings

    # mean 100, variance 1, κ = 100; 99², 101² and their mean 10001 are exact in float32
    assert _texts(row_findings([99.0, 101.0, 99.0, 101.0])) == {
        "row_var": "1.0000",
        "row_one_pass": "1.00",
        "row_kappa": "100",
        "row_u_kappa2": "0.0",  # 2⁻²⁴ · 10⁴ = 6 × 10⁻⁴
        "u32": "5.96 × 10⁻⁸",  # 2⁻²⁴
        "u16": "4.88 × 10⁻⁴",  # 2⁻¹¹
        "f32_spacing_1e8": "8",  # 2²⁶ ≤ 10⁸ < 2²⁷: spacing 2³
        "kappa_two_pass_f32": "4096",  # 1/√(2⁻²⁴)
        "f16_unit_spacing": "1024",
    }


def test_shift_findings_read_the_errors_and_float16s_range():
    from lnlib.book.experiments.numerics import shift_findings

    at = SimpleNamespace(variance_error={"one_pass": 21.68, "two_pass": 7.2e-7, "welford": 2.5e-4})
    assert _texts(shift_findings(at)) == {
        "one_pass_err_1e4": "21.7",
        "one_pass_err_1e4_0dp": "22",
        "two_pass_err_1e4": "7.2 × 10⁻⁷",
        "welford_err_1e4": "2.5 × 10⁻⁴",
        "f16_max": "65504",
        "f16_sum_limit": "256",  # 65504 / 256 = 255.9
        "f16_square_limit": "16",  # √255.9 = 16.0
    }


def test_negative_findings_count_rows_by_sign():
    from lnlib.book.experiments.numerics import negative_findings

    data = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0]])  # variances 1.25 and 0
    assert _texts(negative_findings(data)) == {
        "n_negative": "0",
        "n_zero": "1",
        "most_negative": "0",
        "eps_used": "10⁻⁵",
        "sqrt_eps_used": "0.0032",
    }


def test_output_findings_compare_each_output_with_the_exact_one():
    from lnlib.book.experiments.numerics import output_findings

    exact = np.array([[1.0, -1.5], [0.5, 0.25]])
    outputs = {
        "one_pass": np.array([[np.nan, 300.0], [-700.4, 0.25]]),
        "two_pass": exact + 1e-6,
        "welford": exact - 3e-7,
    }
    clamped = np.array([[1.0, 900.0], [0.5, 0.0]])
    assert _texts(output_findings(outputs, exact, clamped)) == {
        "n_nan_outputs": "1",
        "max_one_pass_output": "700",
        "max_exact_output": "1.50",
        "max_clamped_output": "900",
        "welford_output_error": "3.0 × 10⁻⁷",
        "two_pass_output_error": "1.0 × 10⁻⁶",
    }


def test_half_findings_pick_the_three_quoted_cells():
    from lnlib.book.experiments.numerics import half_findings

    errors = {
        ("lnlib, float32 statistics (as PyTorch)", "shift 20"): 2.04,
        ("lnlib, everything in float16", "shift 20"): 16.7,
        ("unguarded float16 two-pass kernel", "spread 300"): 7831.2,
        ("unguarded float16 two-pass kernel", "shift 20"): 99.0,
    }
    assert _texts(half_findings(errors)) == {
        "half_default_err": "2.0",
        "half_storage_err": "17",
        "half_naive_wide_err": "7831",
    }


def test_gradient_sum_findings_and_the_spacing_where_float16_stalls():
    from lnlib.book.experiments.numerics import gradient_sum_findings

    sums = SimpleNamespace(
        rows=70_000,
        stall={"float16": 2048.0, "bfloat16": 256.0},
        dbeta=np.full(8, 70_000.0),
        exact_threads=35,
    )
    assert _texts(gradient_sum_findings(sums)) == {
        "mp_rows": "70,000",
        "f16_stall": "2048",
        "f16_spacing_stall": "2",  # float16 keeps 11 bits: at 2¹¹ the spacing is 2¹
        "bf16_stall": "256",
        "lnlib_dbeta": "70,000",
        "exact_threads": "35",
    }


def test_small_sum_findings_give_mean_and_sd_over_the_seeds():
    from lnlib.book.experiments.numerics import small_sum_findings

    small = SimpleNamespace(
        exact=np.array([1.0, 1.002, 0.998]),
        running=np.array([0.129, 0.1291, 0.1289]),
        pairwise=np.array([1.0, 1.002, 0.998]),
        numpy_sum=np.array([1.0, 1.0, 1.0]),
    )
    found = _texts(small_sum_findings(small))
    assert found["small_seeds"] == "3"
    # sd 0.002, standard error 0.0012: the mean keeps 2 decimals, the sd its one significant digit
    assert found["small_exact"] == "1.00\xa0±\xa00.002"
    assert found["small_numpy_sum"] == "1\xa0±\xa00"
    assert found["small_running"].startswith("0.129")


def test_thread_findings_and_traffic_findings():
    from lnlib.book.experiments.numerics import thread_findings, traffic_findings

    key = "F.layer_norm backward, {}{} CPU thread(s): dbeta"
    stored = {key.format("", n): np.full(8, 2048.0 * n) for n in (1, 2, 4)}
    stored |= {key.format("bfloat16 x, ", n): np.full(8, 256.0 * n) for n in (1, 2, 4)}
    stored["autocast(), 1 CPU thread: LayerNorm bias.grad"] = np.full(8, 256.0)
    assert _texts(thread_findings(stored, (1, 2, 4))) == {
        "torch_dbeta_1": "2048",
        "torch_dbeta_2": "4096",
        "torch_dbeta_4": "8192",
        "torch_dbeta_bf16_1": "256",
        "torch_dbeta_bf16_2": "512",
        "torch_dbeta_bf16_4": "1024",
        "torch_autocast_dbeta": "256",
    }
    found = traffic_findings(SimpleNamespace(total=12), SimpleNamespace(total=3))
    assert _texts(found) == {"naive_total": "12", "fused_total": "3", "traffic_ratio": "4"}


# --- RMSNorm in half precision ------------------------------------------------------------------


def test_a_float16_sum_of_squares_overflows_to_zeros_and_float32_does_not():
    """Chapter 13, "RMSNorm in half precision": past sqrt(65504 / H) a float16 sum of squares is
    inf, so rstd = 0 and y = 0 with no NaN; a float32 accumulator stays at float16's rounding of
    y."""
    import lnlib
    from lnlib.book.experiments.numerics import rms_norm_kernel

    x = (np.random.default_rng(0).normal(size=(4, 4096)) * 8).astype(np.float16)
    for order in ("running", "pairwise"):
        assert np.all(rms_norm_kernel(x, accumulate="float16", order=order) == 0)
    y = rms_norm_kernel(x, accumulate="float32").astype(float)
    exact = lnlib.rms_norm(x.astype(float))
    assert np.max(np.abs(y - exact)) <= 2 * 2.0**-11 * np.max(np.abs(exact))
    assert np.isfinite(rms_norm_kernel(x, accumulate="bfloat16")).all()


def test_lnlib_rms_norm_stays_right_on_float16_input_whose_squares_overflow():
    """Chapter 13: lnlib scales each row first and sums in float32, so float16 inputs of any
    representable size give the right answer (a few float16 u), never zeros."""
    from lnlib.book.experiments.numerics import lnlib_half_rms_errors

    errors = lnlib_half_rms_errors([8, 3000], seeds=(0, 1))
    assert errors["float32 statistics"] < 1.5 and errors["compute_dtype='float16'"] < 3


def test_rms_half_findings_read_the_sweep():
    from lnlib.book.experiments.numerics import (
        lnlib_half_rms_errors,
        mean_square_errors,
        rms_half_findings,
        rms_half_sweep,
    )

    seeds = (0, 1)
    found = rms_half_findings(
        mean_square_errors(seeds=seeds),
        rms_half_sweep([1, 2, 4, 5, 8], seeds=seeds),
        lnlib_half_rms_errors([1, 8], seeds=seeds),
    )
    assert str(found["rms_overflow_rms"]) == "4.00"
    assert str(found["rms_pairwise_all_zero"]) == "5"
    assert float(str(found["rms_ms_err_max"])) < 64  # no cancellation: a few u at most


def test_the_running_sums_error_is_each_rows_and_rounding_the_squares_does_not_set_it():
    """Chapter 13, "RMSNorm in half precision": at RMS 1 the 16-bit running sums' error of y is
    given as a range over the rows; keeping each square in float32 (only the running sum rounded
    after each add) moves no row's error by more than a point (learner B's n3)."""
    import pytest

    from lnlib.book.experiments.numerics import (
        lnlib_half_rms_errors,
        mean_square_errors,
        rms_half_findings,
        rms_half_sweep,
        rms_norm_kernel,
        square_rounding_errors,
    )

    seeds = (0, 1)
    rounding = square_rounding_errors(1.0, seeds=seeds)
    for accumulate in ("float16", "bfloat16"):
        rounded, kept = rounding[accumulate, None], rounding[accumulate, "float32"]
        assert rounded.shape == kept.shape == (8 * len(seeds),)
        assert np.max(np.abs(kept - rounded)) < 0.01
    assert 0.02 < rounding["float16", None].min() and rounding["float16", None].max() < 0.08
    assert 0.3 < rounding["bfloat16", None].min() and rounding["bfloat16", None].max() < 0.6
    found = rms_half_findings(
        mean_square_errors(seeds=seeds),
        rms_half_sweep([1, 4, 5], seeds=seeds),
        lnlib_half_rms_errors([1], seeds=seeds),
        rounding,
    )
    assert str(found["rms_rows_at_one"]) == str(8 * len(seeds))
    for key in ("rms_running_err", "rms_bf16_err", "rms_running_f32sq", "rms_bf16_f32sq"):
        assert float(str(found[f"{key}_lo"])) <= float(str(found[f"{key}_hi"]))
    # the sweep's rows are square_rounding_errors' rows: the same range
    assert str(found["rms_bf16_err_hi"]) == f"{100 * rounding['bfloat16', None].max():.0f}"
    with pytest.raises(ValueError, match="square"):
        rms_norm_kernel(np.ones((1, 4), np.float16), order="pairwise", square="float32")
