"""`tree_sum` keeps sums accurate in bfloat16, where numpy's own sum is one running sum that stalls
(chapter "Computing it right: numerics"), and lnlib's norms computed in bfloat16 stay right."""

import numpy as np
import pytest

import lnlib
from lnlib.summation import tree_mean, tree_sum

ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 comes from ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)


def test_numpys_bfloat16_sum_stalls_and_tree_sum_does_not():
    ones = np.ones(4096, BF16)
    assert float(ones.sum()) == 256.0  # the stall this module exists for
    assert float(tree_sum(ones)) == 4096.0
    assert float(tree_mean(ones)) == 1.0


@pytest.mark.parametrize("axis", [0, 1, 2, (0, 2), (1, 2), None])
def test_tree_sum_matches_float64_within_its_roundings_and_keeps_numpys_shapes(axis):
    x = np.random.default_rng(1).normal(size=(5, 7, 9)).astype(BF16)
    exact = np.sum(x.astype(np.float64), axis=axis, keepdims=True)
    summed = tree_sum(x, axis, keepdims=True)
    assert summed.shape == exact.shape and summed.dtype == BF16
    terms = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=True)
    levels = np.ceil(np.log2(x.size / exact.size)) + 1
    assert np.all(np.abs(summed.astype(np.float64) - exact) <= levels * 2.0**-8 * terms)
    assert tree_sum(x, axis).shape == np.sum(x, axis=axis).shape


def test_native_dtypes_are_numpys_own_sum():
    x = np.random.default_rng(2).normal(size=(3, 1000)).astype(np.float32)
    assert np.array_equal(tree_sum(x, -1, keepdims=True), np.sum(x, axis=-1, keepdims=True))


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_a_norm_computed_in_bfloat16_at_llm_width_is_right_to_bfloat16s_precision(norm):
    rng = np.random.default_rng(3)
    x, dy = rng.normal(size=(2, 2, 4096)).astype(np.float32)
    forward, backward = getattr(lnlib, norm), getattr(lnlib, norm + "_backward")
    exact = forward(x.astype(np.float64))
    # a few roundings of 2**-8 relative on outputs of size up to about 4
    assert np.abs(forward(x, compute_dtype="bfloat16") - exact).max() < 0.1
    dx = backward(dy, x, compute_dtype="bfloat16")[0]
    dx_exact = backward(dy.astype(np.float64), x.astype(np.float64))[0]
    assert np.abs(dx - dx_exact).max() < 0.1 * np.abs(dx_exact).max()


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_a_sum_that_overflows_a_float16_compute_dtype_is_refused_not_returned_as_zeros(norm):
    """20,000 values of 3.9 scale to 1.95 each; their squares sum past float16's largest value.
    Before this check lnlib.rms_norm returned zeros (the chapter 13 truth audit)."""
    x = np.full((2, 20000), 3.9, dtype=np.float16)
    x[:, ::2] *= -1  # a spread for layer_norm too
    with pytest.raises(ValueError, match="overflows the compute dtype float16"):
        getattr(lnlib, norm)(x, compute_dtype="float16")
    assert np.isfinite(getattr(lnlib, norm)(x)).all()  # float32 statistics, the default
