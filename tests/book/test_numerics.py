"""lnlib.book.experiments.numerics: the mixed-precision backward of chapter 13 (its variance experiments are
tested in tests/library/test_variance.py)."""

import numpy as np

from lnlib import layer_norm_backward
from lnlib.book.experiments.numerics import (
    MIXED_PRECISION_ROWS,
    gradient_sums,
    mixed_precision_inputs,
    running_sum_stall,
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
