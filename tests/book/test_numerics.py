"""lnlib.book.experiments.numerics: the mixed-precision backward of chapter 13 (its variance experiments are
tested in tests/library/test_variance_algorithms.py)."""

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
