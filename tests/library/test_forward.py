"""lnlib.forward: the forward pass, its documented behaviour and every documented error."""

import numpy as np
import pytest

from lnlib import layer_norm, layer_norm_steps


def reference_layer_norm(x, gamma, beta, eps):
    """LayerNorm over the last axis written out with Python floats, one row at a time."""
    out = []
    for row in np.asarray(x, dtype=float).reshape(-1, np.shape(x)[-1]):
        values = [float(v) for v in row]
        h = len(values)
        mean = sum(values) / h
        var = sum((v - mean) ** 2 for v in values) / h
        std = (var + eps) ** 0.5
        out.append([g * (v - mean) / std + b for v, g, b in zip(values, gamma, beta)])
    return np.array(out).reshape(np.shape(x))


# --- the source documents' worked examples, at the documents' rounding -------------------


def test_documents_batch_example():
    steps = layer_norm_steps([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    assert steps.mean.ravel().tolist() == [2.5, 6.5]
    assert steps.var.ravel().tolist() == [1.25, 1.25]
    assert np.round(steps.sqrt_var_eps.ravel(), 3).tolist() == [1.118, 1.118]
    expected_xhat = [-1.3416, -0.4472, 0.4472, 1.3416]
    assert np.round(steps.xhat, 4).tolist() == [expected_xhat, expected_xhat]
    assert np.round(steps.xhat, 2).tolist()[0] == [-1.34, -0.45, 0.45, 1.34]


def test_documents_token_example():
    steps = layer_norm_steps([2.0, 4.0, 6.0, 8.0], np.ones(4), np.zeros(4), eps=1e-5)
    assert steps.mean.item() == 5.0
    assert steps.var.item() == 5.0
    assert round(steps.sqrt_var_eps.item(), 5) == 2.23607
    assert np.round(steps.y, 4).tolist() == [-1.3416, -0.4472, 0.4472, 1.3416]


def test_documents_constant_example_gives_zeros():
    y = layer_norm([3.0, 3.0, 3.0, 3.0], eps=1e-5)
    assert y.tolist() == [0.0, 0.0, 0.0, 0.0]


# --- documented behaviour ----------------------------------------------------------------


def test_matches_scalar_reference_with_nontrivial_gamma_beta():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, size=(3, 5, 6))
    gamma = rng.uniform(0.5, 2.0, size=6)
    beta = rng.normal(size=6)
    expected = reference_layer_norm(x, gamma, beta, 1e-3)
    np.testing.assert_allclose(
        layer_norm(x, gamma, beta, eps=1e-3), expected, rtol=1e-12, atol=1e-12
    )


def test_tuple_axis_equals_flattened_trailing_axes():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 4, 5))
    gamma = rng.uniform(0.5, 2.0, size=(4, 5))
    beta = rng.normal(size=(4, 5))
    flat = layer_norm(x.reshape(2, 3, 20), gamma.ravel(), beta.ravel())
    np.testing.assert_allclose(
        layer_norm(x, gamma, beta, axis=(-2, -1)), flat.reshape(x.shape), rtol=1e-12
    )
    np.testing.assert_allclose(
        layer_norm(x, gamma, beta, axis=(2, 3)), flat.reshape(x.shape), rtol=1e-12
    )


def test_non_trailing_axis_puts_gamma_on_that_axis():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 3))
    gamma = np.array([1.0, 2.0, 3.0, 4.0])
    y = layer_norm(x, gamma, axis=0)
    np.testing.assert_allclose(y, layer_norm(x.T, gamma).T, rtol=1e-12)


def test_steps_shapes_keep_normalized_axes():
    steps = layer_norm_steps(np.ones((2, 3, 4)) * np.arange(4), axis=-1)
    assert steps.mean.shape == (2, 3, 1)
    assert steps.sqrt_var_eps.shape == (2, 3, 1)
    assert steps.size == 4
    assert steps.axes == (2,)


def test_std_is_sqrt_of_var_plus_eps():
    steps = layer_norm_steps([0.0, 1.0, 5.0], eps=0.25)
    assert steps.sqrt_var_eps.item() == pytest.approx(np.sqrt(steps.var.item() + 0.25), rel=1e-15)


@pytest.mark.parametrize(
    "x", [[1, 2, 3, 4], np.array([1, 2, 3, 4], dtype=np.int32), [True, False, True, True]]
)
def test_integers_and_lists_promote_to_float64(x):
    y = layer_norm(x)
    assert y.dtype == np.float64


def test_float32_stays_float32():
    x = np.array([[1, 2, 3, 4]], dtype=np.float32)
    assert layer_norm(x, np.ones(4), np.zeros(4)).dtype == np.float32
    assert layer_norm_steps(x).sqrt_var_eps.dtype == np.float32


def test_eps_zero_allowed_when_spread_is_nonzero():
    y = layer_norm([1.0, 3.0], eps=0)
    assert y.tolist() == [-1.0, 1.0]


def test_default_gamma_beta_are_one_and_zero():
    x = np.random.default_rng(3).normal(size=(3, 7))
    np.testing.assert_array_equal(layer_norm(x), layer_norm(x, np.ones(7), np.zeros(7)))


# --- every documented error --------------------------------------------------------------


@pytest.mark.parametrize(
    "x, error, words",
    [
        ([1.0, np.nan, 3.0], ValueError, r"NaN at index 1"),
        ([[1.0, 2.0], [np.inf, 3.0]], ValueError, r"infinity at index \(1, 0\)"),
        (np.array([1 + 2j, 3]), TypeError, "complex"),
        (["a", "b"], TypeError, "real numbers"),
        (np.array([object(), object()]), TypeError, "real numbers"),
        (3.0, ValueError, "at least one axis"),
        (np.zeros((2, 0)), ValueError, "empty"),
        ([[1.0, 2.0], [3.0]], ValueError, "ragged"),
    ],
)
def test_bad_inputs(x, error, words):
    with pytest.raises(error, match=words):
        layer_norm(x)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (
            {"gamma": np.ones(3)},
            ValueError,
            r"gamma must have the shape of the normalized axes, \(4,\)",
        ),
        (
            {"beta": np.ones((2, 4))},
            ValueError,
            r"beta must have the shape of the normalized axes, \(4,\).*got shape \(2, 4\)",
        ),
        ({"gamma": [1.0, np.nan, 1.0, 1.0]}, ValueError, "gamma contains NaN"),
        ({"eps": -1e-5}, ValueError, "eps must be >= 0"),
        ({"eps": float("nan")}, ValueError, "eps must be finite"),
        ({"eps": float("inf")}, ValueError, "eps must be finite"),
        ({"eps": "1e-5"}, TypeError, "eps must be a real number"),
        ({"axis": 2}, ValueError, r"axis 2 is out of range .* expected an axis in \[-2, 1\]"),
        ({"axis": (0, -2)}, ValueError, "same axis twice"),
        ({"axis": 1.0}, TypeError, "axis must be an int or a tuple of ints"),
        ({"axis": ()}, ValueError, "at least one axis"),
    ],
)
def test_bad_arguments(kwargs, error, words):
    x = np.arange(8.0).reshape(2, 4)
    with pytest.raises(error, match=words):
        layer_norm(x, **kwargs)


def test_zero_variance_with_eps_zero_is_refused():
    with pytest.raises(ValueError, match=r"variance is zero .* eps=0.*undefined"):
        layer_norm([[1.0, 2.0], [3.0, 3.0]], eps=0)
