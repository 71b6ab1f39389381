"""The bugs an expert audit found in lnlib as a reference, one test each, plus the saved statistics.

Each test failed before the fix: the comment above it names the behaviour it replaced.
"""

import sys

import numpy as np
import pytest

import lnlib
from lnlib.backward import layer_norm_backward
from lnlib.book.experiments.gamma_beta import best_shared_scale_shift
from lnlib.forward import layer_norm, layer_norm_steps
from lnlib.norms import RunningStats, batch_norm, instance_norm, normalize, rms_norm
from lnlib.validation import BFLOAT16
from lnlib.variance_algorithms import variance_relative_error

U16 = 2.0**-11  # float16's unit roundoff
RNG = np.random.default_rng(13)


def wide_float16(rows=4, size=64, spread=300.0):
    """float16 rows spread far more than 256 around their mean: their squares overflow float16."""
    return (RNG.normal(size=(rows, size)) * spread).astype(np.float16)


# Was: statistics accumulated in float16, the squares overflowed, and layer_norm returned all zeros.
def test_float16_input_with_a_wide_spread_is_normalized_correctly():
    x = wide_float16()
    truth = layer_norm(x.astype(np.float64))
    y = layer_norm(x)
    assert y.dtype == np.float16
    np.testing.assert_allclose(
        y.astype(np.float64), truth, rtol=0, atol=2 * U16 * np.abs(truth).max()
    )


# Was: rms_norm and the backward pass inherited the float16 accumulation.
def test_rms_norm_and_backward_of_float16_use_float32_statistics():
    x = wide_float16()
    truth = rms_norm(x.astype(np.float64))
    np.testing.assert_allclose(
        rms_norm(x).astype(np.float64), truth, rtol=0, atol=2 * U16 * np.abs(truth).max()
    )
    dy = RNG.normal(size=x.shape).astype(np.float16)
    dx, dgamma, dbeta = layer_norm_backward(dy, x)
    dx64, dgamma64, dbeta64 = layer_norm_backward(dy.astype(np.float64), x.astype(np.float64))
    assert dx.dtype == dgamma.dtype == np.float16
    assert lnlib.backward.relative_error(dx, dx64) < 4 * U16
    assert lnlib.backward.relative_error(dgamma, dgamma64) < 4 * U16


# Was: a TypeError for bfloat16.
def test_bfloat16_is_accepted_and_normalized_in_float32():
    x = (RNG.normal(size=(3, 32)) + 5).astype(BFLOAT16)
    truth = layer_norm(x.astype(np.float64))
    y = layer_norm(x)
    assert y.dtype == BFLOAT16
    np.testing.assert_allclose(
        y.astype(np.float64), truth, rtol=0, atol=2 * 2.0**-8 * np.abs(truth).max()
    )


def test_the_storage_dtype_mode_computes_everything_in_float16_and_is_less_accurate():
    x = (RNG.normal(size=(8, 256)) + 20).astype(np.float16)
    truth = layer_norm(x.astype(np.float64))
    framework = np.abs(layer_norm(x).astype(np.float64) - truth).max()
    storage = np.abs(layer_norm(x, compute_dtype="float16").astype(np.float64) - truth).max()
    assert storage > 2 * framework


# Was: huge finite inputs gave zeros (the squares overflowed), with eps = 0 and eps > 0, in float32
# and float64.
@pytest.mark.parametrize(
    "dtype, magnitude", [(np.float32, 1e30), (np.float64, 1e200), (np.float64, 1e307)]
)
@pytest.mark.parametrize("eps", [0.0, 1e-5])
def test_huge_finite_inputs_are_normalized_by_scale_invariance(dtype, magnitude, eps):
    base = RNG.normal(size=(3, 16))
    x = (base * magnitude).astype(dtype)
    # LayerNorm with eps = 0 is scale-invariant, and at these magnitudes eps is negligible:
    # the answer is that of the same data divided by the power of two 2**k (an exact operation).
    k = int(np.log2(magnitude))
    expected = layer_norm((x.astype(np.float64) / 2.0**k), eps=0.0)
    y = layer_norm(x, eps=eps)
    assert np.isfinite(y).all() and np.abs(y).max() > 0.5
    np.testing.assert_allclose(y, expected, rtol=0, atol=64 * np.finfo(dtype).eps)


def test_tiny_inputs_keep_eps_in_the_same_units():
    x = RNG.normal(size=(2, 8)) * 1e-200
    # var is about 1e-400, which float64 cannot hold; next to eps it is nothing: y = (x - mean) /
    # sqrt(eps)
    expected = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(1e-5)
    np.testing.assert_allclose(layer_norm(x, eps=1e-5), expected, rtol=1e-12)
    np.testing.assert_allclose(layer_norm(x, eps=0.0), layer_norm(x * 1e200, eps=0.0), rtol=1e-12)


# Was: the zero-variance guard tested eps as a Python float, so eps = 1e-8 with float16 gave NaN
# silently.
@pytest.mark.parametrize("normalize_fn", [layer_norm, rms_norm, instance_norm])
def test_an_eps_that_rounds_to_zero_in_the_working_dtype_is_refused(normalize_fn):
    x = np.zeros((1, 2, 4), np.float16) + (0 if normalize_fn is rms_norm else 3)
    with pytest.raises(ValueError, match="eps=1e-08 rounds to 0 in float16"):
        normalize_fn(x, eps=1e-8, compute_dtype="float16")
    y = normalize_fn(
        x, eps=1e-8
    )  # float32 statistics hold 1e-8: the constant slices give 0, as in PyTorch
    assert np.isfinite(y).all() and not y.any()


# Was: gamma was checked finite before the cast, so a gamma that overflows float16 gave +-inf
# outputs.
def test_gamma_is_checked_after_the_cast_and_the_output_after_rounding():
    x = RNG.normal(size=(2, 4)).astype(np.float16)
    with pytest.raises(ValueError, match="gamma contains infinity .* after rounding it to float16"):
        layer_norm(x, gamma=np.full(4, 1e5), compute_dtype="float16")
    with pytest.raises(
        ValueError, match="the output contains infinity .* after rounding it to float16"
    ):
        layer_norm(x, gamma=np.full(4, 1e5))


# Was: running statistics were never validated, and a negative or NaN variance gave NaN columns at
# inference.
@pytest.mark.parametrize(
    "var, match", [([1.0, -0.5], "negative at index"), ([1.0, np.nan], "contains NaN")]
)
def test_running_statistics_are_validated_on_creation(var, match):
    with pytest.raises(ValueError, match=match):
        RunningStats(mean=np.zeros(2), var=np.array(var))


def test_running_statistics_are_validated_on_use():
    running = RunningStats.start(2)
    running.var[1] = -1.0  # changed in place after creation
    with pytest.raises(ValueError, match="running variance is negative"):
        batch_norm(np.ones((3, 2)), running=running, training=False)


# Was: a variance that underflowed was reported as "use an input that is not constant".
def test_an_underflowed_variance_is_named_as_such():
    x = np.ones(64, np.float16)
    x[0] = (
        1 - 2.0**-11
    )  # one value one float16 step away: the mean square of the deviations is 2**-28
    with pytest.raises(
        ValueError, match="underflowed to 0 in float16 .* although their values differ"
    ):
        layer_norm(x, eps=0.0, compute_dtype="float16")
    truth = layer_norm(x.astype(np.float64), eps=0.0)
    np.testing.assert_allclose(
        layer_norm(x, eps=0.0).astype(np.float64), truth, rtol=0, atol=2 * U16 * np.abs(truth).max()
    )


# Was: LayerNormSteps.std and BackwardParts.std held sqrt(var + eps), not the standard deviation.
def test_the_divisor_is_named_for_what_it_is():
    steps = layer_norm_steps([[1.0, 2.0, 4.0, 8.0]], eps=0.5)
    np.testing.assert_allclose(steps.sqrt_var_eps, np.sqrt(steps.var + 0.5), rtol=1e-15)
    np.testing.assert_allclose(steps.rstd, 1 / np.sqrt(steps.var + 0.5), rtol=1e-15)
    parts = lnlib.backward.backward_parts(np.ones((1, 4)), [[1.0, 2.0, 4.0, 8.0]], eps=0.5)
    np.testing.assert_allclose(parts.rstd, steps.rstd, rtol=1e-15)
    assert not hasattr(steps, "std") and not hasattr(parts, "std"), (
        "the misleading name is gone, not aliased"
    )


# Was: two functions named relative_error with different meanings.
def test_one_name_one_meaning_for_relative_error():
    assert not hasattr(sys.modules["lnlib.variance_algorithms"], "relative_error")
    assert variance_relative_error([1.5], [1.0]) == pytest.approx(0.5)


# Was: normalize(x, "rms") used eps 1e-5 while rms_norm uses 1e-6.
def test_normalize_uses_each_members_own_default_eps():
    x = RNG.normal(size=(2, 3, 4)) * 1e-3
    np.testing.assert_array_equal(normalize(x, "rms"), rms_norm(x, axis=(1, 2)))


# Was: masked arrays silently lost their mask.
def test_masked_arrays_are_refused_with_a_way_out():
    with pytest.raises(TypeError, match=r"masked array.*filled"):
        layer_norm(np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]))


# Was: best_shared_scale_shift returned NaN for a constant xhat.
def test_a_constant_xhat_has_no_best_scale():
    with pytest.raises(ValueError, match="no unique scale"):
        best_shared_scale_shift(np.zeros(4), np.arange(4.0))


def test_saved_statistics_give_the_same_backward_as_recomputing():
    x = RNG.normal(size=(2, 3, 8)) + 4
    gamma, dy = RNG.normal(size=8), RNG.normal(size=x.shape)
    y, mean, rstd = layer_norm(x, gamma, return_stats=True)
    np.testing.assert_allclose(mean, x.mean(axis=-1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5), rtol=1e-14)
    for saved in ((mean, rstd), (mean[..., 0], rstd[..., 0])):
        from_saved = layer_norm_backward(dy, x, gamma, mean=saved[0], rstd=saved[1])
        for got, want in zip(from_saved, layer_norm_backward(dy, x, gamma)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"mean": np.zeros((2, 1))}, "both saved statistics"),
        ({"mean": np.zeros((3, 1)), "rstd": np.ones((3, 1))}, "shape of the statistics"),
        ({"mean": np.zeros((2, 1)), "rstd": -np.ones((2, 1))}, "rstd must be positive"),
    ],
)
def test_bad_saved_statistics_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layer_norm_backward(np.ones((2, 4)), np.arange(8.0).reshape(2, 4), **kwargs)
