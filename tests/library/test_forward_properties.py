"""Property tests of lnlib.forward with hypothesis: what must hold for every input."""

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lnlib import layer_norm, layer_norm_steps

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=6)
arrays = shapes.flatmap(lambda shape: hnp.arrays(np.float64, shape, elements=finite))
eps_values = st.sampled_from([0.0, 1e-8, 1e-5, 1e-2, 1.0])


def with_spread(x, axis=-1, minimum=1e-3):
    """Only inputs whose every normalized slice has a clear spread (no 0/0, no rounding noise)."""
    return bool(np.all(x.std(axis=axis) > minimum))


@settings(max_examples=200, deadline=None)
@given(arrays, eps_values)
def test_mean_zero_and_variance_var_over_var_plus_eps(x, eps):
    assume(with_spread(x))
    steps = layer_norm_steps(x, eps=eps)
    scale = 1 + np.abs(x).max() / x.std(axis=-1).min()
    np.testing.assert_allclose(steps.xhat.mean(axis=-1), 0.0, atol=1e-12 * scale)
    expected_var = (steps.var / (steps.var + eps))[..., 0]
    np.testing.assert_allclose(
        steps.xhat.var(axis=-1), expected_var, rtol=1e-9, atol=1e-12 * scale**2
    )


@settings(max_examples=200, deadline=None)
@given(arrays, finite, st.floats(1e-2, 1e2))
def test_invariant_to_shift_and_positive_scale_when_eps_is_zero(x, shift, scale):
    assume(with_spread(x, minimum=1e-2))
    base = layer_norm(x, eps=0)
    np.testing.assert_allclose(layer_norm(x + shift, eps=0), base, atol=1e-6)
    np.testing.assert_allclose(layer_norm(x * scale, eps=0), base, atol=1e-6)


@settings(max_examples=100, deadline=None)
@given(arrays, st.data())
def test_gamma_beta_act_per_feature(x, data):
    assume(with_spread(x))
    h = x.shape[-1]
    gamma = data.draw(hnp.arrays(np.float64, h, elements=st.floats(-3, 3)))
    beta = data.draw(hnp.arrays(np.float64, h, elements=st.floats(-3, 3)))
    xhat = layer_norm(x)
    np.testing.assert_allclose(
        layer_norm(x, gamma, beta), gamma * xhat + beta, rtol=1e-12, atol=1e-12
    )


@settings(max_examples=100, deadline=None)
@given(arrays, eps_values, st.data())
def test_layer_norm_equals_steps_y_for_any_axis(x, eps, data):
    axis = data.draw(st.sampled_from([-1, 0, tuple(range(x.ndim))]))
    assume(with_spread(x, axis=axis))
    np.testing.assert_array_equal(
        layer_norm(x, eps=eps, axis=axis), layer_norm_steps(x, eps=eps, axis=axis).y
    )
