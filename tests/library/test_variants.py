"""lnlib.variants: the biased and unbiased variance, eps outside the square root, the Annotated
Transformer's LayerNorm.

Expected values are derived by hand in the comments, or by a different formula,
or by PyTorch (skipped with a reason where it is absent).
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lnlib import layer_norm, variants
from lnlib.variants import (
    FRAMEWORK_EPS,
    annotated_transformer_layer_norm,
    layer_norm_eps_outside_sqrt,
    sample_variance,
)

ONE_HOT = [1.0, 0.0, 0.0, 0.0]


# --- hand arithmetic ---------------------------------------------------------------------


def test_variance_of_one_hot_by_hand():
    # mean 1/4; deviations 3/4, -1/4, -1/4, -1/4; squares 9/16 + 3 * 1/16 = 12/16 = 3/4.
    assert sample_variance(ONE_HOT) == pytest.approx(0.75 / 4)  # biased: 3/16
    assert sample_variance(ONE_HOT, unbiased=True) == pytest.approx(
        0.75 / 3
    )  # unbiased: 1/4, so s = 1/2


def test_documents_batch_variance_by_hand():
    # each row: deviations ±1.5, ±0.5; squares 2.25 + 0.25 + 0.25 + 2.25 = 5; 5 / 4 = 1.25
    np.testing.assert_allclose(sample_variance([[1.0, 2, 3, 4], [5, 6, 7, 8]]), [1.25, 1.25])


def test_annotated_transformer_on_one_hot_by_hand():
    # unbiased std s = 1/2 (above): (x - 1/4) / s = [3/4, -1/4, -1/4, -1/4] * 2 = [1.5, -0.5, -0.5,
    # -0.5]
    np.testing.assert_allclose(
        annotated_transformer_layer_norm(ONE_HOT, eps=0.0), [1.5, -0.5, -0.5, -0.5], rtol=1e-12
    )
    # with its default eps = 1e-6 added to s: divide by 0.500001 instead
    np.testing.assert_allclose(
        annotated_transformer_layer_norm(ONE_HOT),
        np.array([0.75, -0.25, -0.25, -0.25]) / 0.500001,
        rtol=1e-12,
    )


def test_standard_layer_norm_on_one_hot_by_hand():
    # biased sigma = sqrt(3/16) = sqrt(3)/4: (3/4) / (sqrt(3)/4) = sqrt(3) = 1.732..., (-1/4) /
    # (sqrt(3)/4) = -1/sqrt(3)
    expected = [math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3)]
    np.testing.assert_allclose(layer_norm(ONE_HOT, eps=0.0), expected, rtol=1e-12)


def test_eps_outside_on_near_constant_input_by_hand():
    # x = [1, 1.001, 0.999, 1]: mean 1, deviations 0, 1e-3, -1e-3, 0, variance 2e-6 / 4 = 5e-7
    x = [1.0, 1.001, 0.999, 1.0]
    deviation = 0.999 - 1.0  # the float deviation, as the code sees it
    sigma = math.sqrt(5e-7)
    outside = layer_norm_eps_outside_sqrt(x, eps=1e-5)
    inside = layer_norm(x, eps=1e-5)
    assert outside[2] == pytest.approx(deviation / (sigma + 1e-5), rel=1e-9)
    assert inside[2] == pytest.approx(deviation / math.sqrt(5e-7 + 1e-5), rel=1e-9)
    assert abs(outside[2]) > 4 * abs(inside[2])  # 1.39 against 0.31: far apart


# --- relations between the variants (a second formula) -------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_annotated_is_layer_norm_times_bessel_factor_without_eps(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 40))
    x = rng.normal(2.0, 3.0, size=(3, size))
    ratio = annotated_transformer_layer_norm(x, eps=0.0) / layer_norm(x, eps=0.0)
    np.testing.assert_allclose(ratio, math.sqrt((size - 1) / size), rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_sample_variance_matches_numpy_ddof(seed):
    x = np.random.default_rng(seed).normal(size=(4, 7))
    np.testing.assert_allclose(sample_variance(x), x.var(axis=-1, ddof=0), rtol=1e-12)
    np.testing.assert_allclose(
        sample_variance(x, unbiased=True), x.var(axis=-1, ddof=1), rtol=1e-12
    )
    np.testing.assert_allclose(
        sample_variance(x, axis=0, keepdims=True), x.var(axis=0, keepdims=True), rtol=1e-12
    )


def test_eps_outside_equals_layer_norm_when_eps_is_zero():
    x = np.random.default_rng(3).normal(size=(5, 6))
    np.testing.assert_allclose(
        layer_norm_eps_outside_sqrt(x, eps=0.0), layer_norm(x, eps=0.0), rtol=1e-12
    )


def test_gamma_beta_and_axes_are_applied_like_layer_norm():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 4))
    gamma, beta = rng.uniform(0.5, 2, size=(3, 4)), rng.normal(size=(3, 4))
    flat = x.reshape(2, 12)
    centred = flat - flat.mean(axis=1, keepdims=True)
    xhat = (centred / (centred.std(axis=1, keepdims=True) + 1e-3)).reshape(2, 3, 4)
    np.testing.assert_allclose(
        layer_norm_eps_outside_sqrt(x, gamma, beta, eps=1e-3, axis=(1, 2)),
        gamma * xhat + beta,
        rtol=1e-12,
    )
    s = centred.std(axis=1, ddof=1, keepdims=True)
    np.testing.assert_allclose(
        annotated_transformer_layer_norm(x, gamma, beta, eps=1e-3, axis=(-2, -1)),
        gamma * (centred / (s + 1e-3)).reshape(2, 3, 4) + beta,
        rtol=1e-12,
    )


def test_float32_stays_float32():
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    assert sample_variance(x).dtype == np.float32
    assert layer_norm_eps_outside_sqrt(x).dtype == np.float32
    assert annotated_transformer_layer_norm(x).dtype == np.float32


def test_constant_input_with_eps_gives_zeros():
    np.testing.assert_array_equal(layer_norm_eps_outside_sqrt([3.0, 3, 3, 3]), 0.0)
    np.testing.assert_array_equal(annotated_transformer_layer_norm([3.0, 3, 3, 3]), 0.0)


# --- validation ----------------------------------------------------------------------------

VARIANTS = [layer_norm_eps_outside_sqrt, annotated_transformer_layer_norm]


@pytest.mark.parametrize("function", VARIANTS)
@pytest.mark.parametrize(
    ("x", "kwargs", "error", "message"),
    [
        ([1.0, float("nan")], {}, ValueError, "NaN"),
        ([1 + 1j, 2], {}, TypeError, "complex"),
        (["a", "b"], {}, TypeError, "real numbers"),
        ([3.0, 3.0, 3.0], {"eps": 0.0}, ValueError, "eps=0"),
        ([1.0, 2.0], {"eps": -1.0}, ValueError, ">= 0"),
        ([1.0, 2.0], {"eps": "small"}, TypeError, "eps"),
        (np.zeros((2, 0)), {}, ValueError, "empty"),
        ([1.0, 2.0], {"axis": 1}, ValueError, "out of range"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(function, x, kwargs, error, message):
    with pytest.raises(error, match=message):
        function(x, **kwargs)


def test_wrong_parameter_shapes_are_named():
    with pytest.raises(ValueError, match="gamma must have the shape"):
        layer_norm_eps_outside_sqrt([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="b_2 must have the shape"):
        annotated_transformer_layer_norm([1.0, 2.0, 3.0], None, [0.0])


def test_unbiased_needs_two_values():
    with pytest.raises(ValueError, match="H - 1"):
        sample_variance([[1.0], [2.0]], unbiased=True)
    with pytest.raises(ValueError, match="H - 1"):
        annotated_transformer_layer_norm([5.0])


def test_framework_eps_is_read_only_and_positive():
    assert set(FRAMEWORK_EPS) == {"PyTorch", "Flax", "Keras"}
    assert all(0 < eps < 1 for eps in FRAMEWORK_EPS.values())
    with pytest.raises(TypeError):
        FRAMEWORK_EPS["PyTorch"] = 1e-8


# --- PyTorch as an independent reference ---------------------------------------------------


def torch_annotated_layer_norm(torch, x, a_2, b_2, eps=1e-6):
    """The Annotated Transformer's forward, written in torch as in the blog post."""
    mean = x.mean(-1, keepdim=True)
    std = x.std(-1, keepdim=True)
    return a_2 * (x - mean) / (std + eps) + b_2


@pytest.mark.parametrize("seed", range(4))
def test_annotated_matches_torch(torch, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 6))
    a_2, b_2 = rng.uniform(0.5, 2, size=6), rng.normal(size=6)
    theirs = torch_annotated_layer_norm(
        torch, *(torch.from_numpy(v) for v in (x, a_2, b_2))
    ).numpy()
    np.testing.assert_allclose(
        annotated_transformer_layer_norm(x, a_2, b_2), theirs, rtol=1e-12, atol=1e-12
    )


def test_one_hot_against_torch_layer_norm_and_annotated(torch):
    x = torch.tensor([ONE_HOT], dtype=torch.float64)
    standard = torch.nn.LayerNorm(4, dtype=torch.float64)(x).detach().numpy()[0]
    annotated = torch_annotated_layer_norm(
        torch, x, torch.ones(4, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)
    ).numpy()[0]
    np.testing.assert_allclose(layer_norm(ONE_HOT), standard, rtol=1e-12)
    np.testing.assert_allclose(annotated_transformer_layer_norm(ONE_HOT), annotated, rtol=1e-12)
    assert not np.allclose(standard, annotated, atol=0.1)


def test_torch_var_is_unbiased_by_default_and_layer_norm_is_not(torch):
    x = np.random.default_rng(9).normal(size=(2, 5))
    np.testing.assert_allclose(
        sample_variance(x, unbiased=True), torch.from_numpy(x).var(-1).numpy(), rtol=1e-12
    )
    np.testing.assert_allclose(
        sample_variance(x), torch.from_numpy(x).var(-1, correction=0).numpy(), rtol=1e-12
    )


def test_eps_outside_matches_torch_formula(torch):
    x = np.random.default_rng(5).normal(size=(3, 8))
    t = torch.from_numpy(x)
    theirs = (
        (t - t.mean(-1, keepdim=True)) / (t.var(-1, correction=0, keepdim=True).sqrt() + 1e-2)
    ).numpy()
    np.testing.assert_allclose(layer_norm_eps_outside_sqrt(x, eps=1e-2), theirs, rtol=1e-12)


def test_pytorch_default_eps(torch):
    assert torch.nn.LayerNorm(4).eps == FRAMEWORK_EPS["PyTorch"]


# --- properties for every input (hypothesis) -----------------------------------------------

vectors = hnp.arrays(
    np.float64,
    st.integers(2, 12),
    elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=150, deadline=None)
@given(vectors, st.floats(-1e2, 1e2), st.floats(-1e3, 1e3))
def test_variance_scales_with_the_square_and_ignores_shifts(x, scale, shift):
    # a spread under about 1e-154 has a variance that underflows float64, which sample_variance
    # refuses
    assume(
        np.ptp(x) == 0 or (np.ptp(x) > 1e-150 and (scale == 0 or np.ptp(x) * abs(scale) > 1e-150))
    )
    base = float(sample_variance(x))
    for unbiased in (False, True):
        expected = (scale**2) * float(sample_variance(x, unbiased=unbiased))
        got = float(sample_variance(scale * x + shift, unbiased=unbiased))
        np.testing.assert_allclose(
            got,
            expected,
            rtol=1e-6,
            atol=1e-9 * (1 + scale**2) * (1 + np.abs(x).max() + abs(shift)) ** 2,
        )
    assert base >= 0.0


@settings(max_examples=150, deadline=None)
@given(vectors, st.sampled_from([1e-8, 1e-5, 1e-2]))
def test_output_std_with_eps_added_to_sigma_is_sigma_over_sigma_plus_eps(x, eps):
    assume(x.std() > 1e-3)
    sigma = x.std()
    np.testing.assert_allclose(
        layer_norm_eps_outside_sqrt(x, eps=eps).std(), sigma / (sigma + eps), rtol=1e-9
    )


def test_the_planted_bugs_that_are_variants_compute_them():
    # one home: the chapter's planted ε-outside-the-root bug is the variant, the unbiased one uses
    # sample_variance(unbiased=True)
    x = np.random.default_rng(1).normal(3.0, 2.0, size=(5, 6))
    gamma, beta = np.full(6, 1.5), np.full(6, -0.25)
    expected = layer_norm_eps_outside_sqrt(x, gamma, beta, eps=0.1)
    assert np.array_equal(variants.buggy_eps_outside_root(x, gamma, beta, 0.1), expected)
    centred = x - x.mean(axis=-1, keepdims=True)
    unbiased = centred / np.sqrt(sample_variance(x, unbiased=True, keepdims=True) + 0.1)
    np.testing.assert_allclose(
        variants.buggy_unbiased_variance(x, gamma, beta, 0.1), unbiased * gamma + beta, rtol=1e-14
    )
