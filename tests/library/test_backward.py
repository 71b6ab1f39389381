"""lnlib.backward: the closed-form backward pass against finite differences, its identities, and its
errors.

The closed form is checked against an independent computation each time: central
finite differences of the forward pass, the explicit Jacobian, or (in
test_backward_torch.py) PyTorch autograd. The sympy derivation is tested in
test_symbolic.py.
"""

import numpy as np
import pytest

from lnlib import layer_norm, layer_norm_steps
from lnlib.backward import (
    backward_parts,
    layer_norm_backward,
    layer_norm_jacobian,
    numerical_gradient,
    relative_error,
)

# (shape, axis): leading batch axes, a tuple of trailing axes, a non-trailing axis, a middle axis
CASES = [
    ((6,), -1),
    ((3, 5), -1),
    ((2, 3, 4), (-2, -1)),
    ((4, 3), 0),
    ((2, 4, 3), 1),
    ((3, 2, 4), (0, 2)),
]


def random_problem(shape, axis, seed):
    """Non-trivial inputs: x off-centre and off-scale, gamma away from 1, beta away from 0, dy
    random."""
    rng = np.random.default_rng(seed)
    x = rng.normal(rng.normal(), rng.uniform(0.5, 3.0), size=shape)
    axes = tuple(a % len(shape) for a in np.atleast_1d(axis))
    pshape = tuple(shape[a] for a in sorted(axes))
    gamma = rng.uniform(0.5, 2.0, size=pshape) * rng.choice([-1, 1], size=pshape)
    beta = rng.normal(size=pshape)
    dy = rng.normal(size=shape)
    return x, gamma, beta, dy


def broadcast(param, ndim, axes):
    """A parameter of the normalized shape, reshaped to broadcast against x (size 1 on the other
    axes)."""
    shape = [1] * ndim
    for a, size in zip(axes, param.shape):
        shape[a] = size
    return param.reshape(shape)


@pytest.mark.parametrize("shape, axis", CASES)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.1])
def test_dx_matches_finite_differences(shape, axis, eps):
    x, gamma, beta, dy = random_problem(shape, axis, seed=len(shape) + int(eps * 100))
    dx, _, _ = layer_norm_backward(dy, x, gamma, eps=eps, axis=axis)
    numeric = numerical_gradient(lambda v: layer_norm(v, gamma, beta, eps=eps, axis=axis), x, dy)
    assert relative_error(dx, numeric) < 1e-6


@pytest.mark.parametrize("shape, axis", CASES)
def test_dgamma_dbeta_match_finite_differences(shape, axis):
    x, gamma, beta, dy = random_problem(shape, axis, seed=11)
    _, dgamma, dbeta = layer_norm_backward(dy, x, gamma, eps=1e-3, axis=axis)
    numeric_gamma = numerical_gradient(
        lambda g: layer_norm(x, g, beta, eps=1e-3, axis=axis), gamma, dy
    )
    numeric_beta = numerical_gradient(
        lambda b: layer_norm(x, gamma, b, eps=1e-3, axis=axis), beta, dy
    )
    assert dgamma.shape == gamma.shape and dbeta.shape == beta.shape
    assert relative_error(dgamma, numeric_gamma) < 1e-6
    assert relative_error(dbeta, numeric_beta) < 1e-6


def test_default_gamma_is_one():
    x, _, _, dy = random_problem((3, 5), -1, seed=3)
    for ours, ones in zip(layer_norm_backward(dy, x), layer_norm_backward(dy, x, np.ones(5))):
        np.testing.assert_array_equal(ours, ones)


def test_hand_computed_example():
    # x = [2, 4, 6, 8]: mean 5, var 5, s = sqrt(5), xhat = [-3, -1, 1, 3] / sqrt(5); eps = 0, gamma
    # = 1. dy = e_1: mean(dxhat) = 1/4, mean(dxhat * xhat) = -3 / (4 sqrt 5), so dx = (e_1 - 1/4 +
    # xhat * 3 / (4 sqrt 5)) / sqrt 5 = (e_1 - 1/4 + [-9, -3, 3, 9] / 20) / sqrt 5    = [0.3, -0.4,
    # -0.1, 0.2] / sqrt 5.
    dx, dgamma, dbeta = layer_norm_backward([1.0, 0.0, 0.0, 0.0], [2.0, 4.0, 6.0, 8.0], eps=0)
    np.testing.assert_allclose(
        dx, np.array([0.3, -0.4, -0.1, 0.2]) / np.sqrt(5), rtol=1e-14, atol=1e-15
    )
    np.testing.assert_allclose(dgamma, [-3 / np.sqrt(5), 0, 0, 0], rtol=1e-14)
    np.testing.assert_array_equal(dbeta, [1.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("eps", [0.0, 1e-2])
def test_jacobian_matches_finite_differences_and_backward(eps):
    x, gamma, beta, dy = random_problem((5,), -1, seed=21)
    jac = layer_norm_jacobian(x, gamma, eps=eps)
    # column j of J is dy/dx_j; numerically, the gradient of sum(e_i * y) is row i
    rows = [
        numerical_gradient(lambda v: layer_norm(v, gamma, beta, eps=eps), x, np.eye(5)[i])
        for i in range(5)
    ]
    assert relative_error(jac, np.array(rows)) < 1e-6
    np.testing.assert_allclose(
        dy @ jac, layer_norm_backward(dy, x, gamma, eps=eps)[0], rtol=1e-12, atol=1e-14
    )


def test_jacobian_of_two_axes_flattens_in_c_order():
    x, gamma, _, dy = random_problem((2, 3), (0, 1), seed=5)
    jac = layer_norm_jacobian(x, gamma, axis=(0, 1))
    dx, _, _ = layer_norm_backward(dy, x, gamma, axis=(0, 1))
    assert jac.shape == (6, 6)
    np.testing.assert_allclose(dy.ravel() @ jac, dx.ravel(), rtol=1e-12, atol=1e-14)


# --- identities, per normalized slice ------------------------------------------------------


@pytest.mark.parametrize("shape, axis", CASES)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.5])
def test_dx_sums_to_zero_over_every_slice(shape, axis, eps):
    x, gamma, _, dy = random_problem(shape, axis, seed=7)
    dx, _, _ = layer_norm_backward(dy, x, gamma, eps=eps, axis=axis)
    axes = layer_norm_steps(x, axis=axis).axes
    scale = np.abs(dx).max()
    np.testing.assert_allclose(dx.sum(axis=axes), 0.0, atol=1e-13 * scale)


@pytest.mark.parametrize("shape, axis", CASES)
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.5])
def test_dx_dot_xhat_is_what_eps_leaves_over(shape, axis, eps):
    # sum_i dx_i xhat_i = (1/s) [sum dxhat xhat - mean(dxhat) sum xhat - mean(dxhat xhat) sum
    # xhat^2] with sum xhat = 0 and sum xhat^2 = H var / (var + eps):                   = (H m / s)
    # (1 - var / (var + eps)) = H m eps / ((var + eps) s),  m = mean(dxhat xhat). So it is exactly 0
    # when eps = 0.
    x, gamma, _, dy = random_problem(shape, axis, seed=8)
    steps = layer_norm_steps(x, eps=eps, axis=axis)
    dx, _, _ = layer_norm_backward(dy, x, gamma, eps=eps, axis=axis)
    dxhat = dy * broadcast(gamma, x.ndim, steps.axes)
    m = (dxhat * steps.xhat).mean(axis=steps.axes)
    expected = steps.size * m * eps / ((steps.var + eps) * steps.sqrt_var_eps).squeeze(steps.axes)
    got = (dx * steps.xhat).sum(axis=steps.axes)
    np.testing.assert_allclose(got, expected, atol=1e-13 * np.abs(dx).max())
    if eps == 0.5:
        assert np.all(np.abs(got) > 1e-6), "with a large eps the leftover is visible"


# --- scale behaviour: the source's "scale-invariant gradients" -----------------------------


@pytest.mark.parametrize("alpha", [0.01, 0.5, 3.0, 250.0])
def test_gradient_at_alpha_x_is_gradient_at_x_over_alpha_for_positive_alpha_and_eps_zero(alpha):
    # LN(alpha z) = LN(z) for alpha > 0, eps = 0, so alpha * J(alpha x) = J(x): J(alpha x) = J(x) /
    # alpha.
    x, gamma, _, dy = random_problem((3, 6), -1, seed=9)
    at_x, _, _ = layer_norm_backward(dy, x, gamma, eps=0)
    at_scaled, _, _ = layer_norm_backward(dy, alpha * x, gamma, eps=0)
    np.testing.assert_allclose(at_scaled, at_x / alpha, rtol=1e-10, atol=1e-13 / alpha)


@pytest.mark.parametrize("alpha", [-0.5, -2.0])
def test_negative_alpha_flips_the_output_so_the_gradient_scales_by_minus_one_over_alpha(alpha):
    # LN(alpha z) = -LN(z) for alpha < 0, so alpha * J(alpha x) = -J(x): J(alpha x) = J(x) /
    # |alpha|, not J(x) / alpha.
    x, gamma, _, dy = random_problem((3, 6), -1, seed=10)
    at_x, _, _ = layer_norm_backward(dy, x, gamma, eps=0)
    at_scaled, _, _ = layer_norm_backward(dy, alpha * x, gamma, eps=0)
    np.testing.assert_allclose(at_scaled, at_x / abs(alpha), rtol=1e-10, atol=1e-13)
    assert not np.allclose(at_scaled, at_x / alpha)


def test_eps_breaks_the_one_over_alpha_scaling_for_small_inputs():
    # With eps > 0 and var(alpha x) comparable to eps, sqrt(alpha^2 var + eps) != alpha sqrt(var +
    # eps).
    x, gamma, _, dy = random_problem((3, 6), -1, seed=12)
    x = x / x.std(axis=-1, keepdims=True)  # unit variance per row
    alpha = 1e-3  # var(alpha x) = 1e-6, below eps = 1e-5
    at_x, _, _ = layer_norm_backward(dy, x, gamma, eps=1e-5)
    at_scaled, _, _ = layer_norm_backward(dy, alpha * x, gamma, eps=1e-5)
    assert relative_error(at_scaled, at_x / alpha) > 0.5


# --- dtypes ----------------------------------------------------------------------------


def test_float32_stays_float32_and_agrees_with_float64():
    x, gamma, _, dy = random_problem((4, 8), -1, seed=13)
    low = layer_norm_backward(dy.astype(np.float32), x.astype(np.float32), gamma.astype(np.float32))
    high = layer_norm_backward(dy, x, gamma)
    for ours, reference in zip(low, high):
        assert ours.dtype == np.float32
        assert relative_error(ours, reference) < 1e-5


def test_float32_dx_still_sums_to_zero_at_float32_precision():
    x, gamma, _, dy = random_problem((4, 64), -1, seed=14)
    dx, _, _ = layer_norm_backward(
        dy.astype(np.float32), x.astype(np.float32), gamma.astype(np.float32)
    )
    assert np.all(np.abs(dx.sum(axis=-1)) < 64 * np.finfo(np.float32).eps * np.abs(dx).max())


@pytest.mark.parametrize("shape", [(0, 8), (2, 0, 8)])
@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_an_empty_batch_has_an_empty_dx_and_zero_parameter_gradients(shape, dtype):
    # as PyTorch: no rows, so nothing flows back to x and the sums over rows are 0
    x = np.zeros(shape, dtype)
    _, mean, rstd = layer_norm(x, return_stats=True)
    for saved in ({}, {"mean": mean, "rstd": rstd}):
        dx, dgamma, dbeta = layer_norm_backward(x, x, **saved)
        assert dx.shape == shape and dx.dtype == dtype
        for grad in (dgamma, dbeta):
            assert grad.dtype == dtype
            np.testing.assert_array_equal(grad, np.zeros(8))


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dy, error, words",
    [
        (
            np.ones((2, 3)),
            ValueError,
            r"dy must have the shape of the forward output, \(2, 4\); got shape \(2, 3\)",
        ),
        ([[1.0, np.nan, 0, 0], [0, 0, 0, 0]], ValueError, "dy contains NaN"),
        (np.ones((2, 4), dtype=complex), TypeError, "dy must hold real numbers"),
    ],
)
def test_bad_upstream_gradient(dy, error, words):
    with pytest.raises(error, match=words):
        layer_norm_backward(dy, np.arange(8.0).reshape(2, 4))


def test_a_dy_that_does_not_fit_x_dtype_is_named_as_such_not_blamed_on_eps():
    # dy is the gradient of the output, which has x's dtype: 1e6 cannot be held in float16
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float16)
    dy = np.array([[1e6, 0.0, 0.0, 0.0]], np.float32)
    with pytest.raises(
        ValueError, match=r"^dy is float32 and does not fit x's float16: 1e\+06 > 65504"
    ):
        layer_norm_backward(dy, x)
    with pytest.raises(ValueError, match="pass dy in float16") as caught:
        backward_parts(dy, x, mean=np.zeros(1), rstd=np.ones(1))
    assert "eps" not in str(caught.value)


def test_a_dy_of_another_dtype_that_fits_is_rounded_to_x_dtype_as_a_kernel_receives_it():
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float16)
    dy = np.array([[0.1, -3.3, 2.0, 1e4]], np.float32)
    for ours, rounded in zip(
        layer_norm_backward(dy, x), layer_norm_backward(dy.astype(np.float16), x)
    ):
        np.testing.assert_array_equal(ours, rounded)


def test_backward_refuses_what_the_forward_refuses():
    with pytest.raises(ValueError, match="gamma must have the shape"):
        layer_norm_backward(np.ones((2, 4)), np.arange(8.0).reshape(2, 4), np.ones(3))
    with pytest.raises(ValueError, match="variance is zero"):
        layer_norm_backward(np.ones(4), np.ones(4), eps=0)


def test_jacobian_refuses_a_batch():
    with pytest.raises(ValueError, match=r"one normalized slice.*x\[i\]"):
        layer_norm_jacobian(np.arange(8.0).reshape(2, 4))


@pytest.mark.parametrize("step", [0.0, -1e-6, float("nan")])
def test_numerical_gradient_refuses_bad_steps(step):
    with pytest.raises(ValueError, match="step must be a positive finite number"):
        numerical_gradient(np.sin, [1.0, 2.0], [1.0, 1.0], step=step)


def test_numerical_gradient_of_a_known_function():
    # d/dx sum(dy * sin x) = dy * cos x
    x = np.array([0.3, -1.2, 2.0])
    dy = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(numerical_gradient(np.sin, x, dy), dy * np.cos(x), rtol=1e-8)


def test_relative_error_is_measured_against_the_reference_scale():
    assert relative_error([1.0, 4.0], [1.0, 2.0]) == 1.0  # |4 - 2| / max(|1|, |2|)
    assert relative_error([0.0], [0.0]) == 0.0
    assert relative_error([1.0], [0.0]) == float("inf")
    with pytest.raises(ValueError, match="shapes differ"):
        relative_error([1.0, 2.0], [1.0])


@pytest.mark.parametrize("shape, axis", CASES)
def test_the_three_path_terms_add_up_to_dx_and_match_the_chain_rule(shape, axis):
    # The three paths from x to xhat, each term written from its own local derivatives:
    #   direct:  dxhat_j * d(xhat_j)/d(x_j) at fixed mu, var              = dxhat_j / s
    #   via mu:  (sum_i dxhat_i * (-1/s)) * d(mu)/d(x_j) = ... * (1/H)    = -mean(dxhat) / s
    #   via var: (sum_i dxhat_i * (x_i - mu) * (-1/2) s^-3) * 2 (x_j - mu) / H
    x, gamma, _, dy = random_problem(shape, axis, seed=15)
    parts = backward_parts(dy, x, gamma, eps=1e-2, axis=axis)
    steps = layer_norm_steps(x, eps=1e-2, axis=axis)
    axes, size = steps.axes, steps.size
    centred = x - steps.mean
    dxhat = dy * broadcast(gamma, x.ndim, axes)
    dvar = (dxhat * centred).sum(axis=axes, keepdims=True) * -0.5 * steps.sqrt_var_eps**-3
    np.testing.assert_allclose(parts.direct, dxhat / steps.sqrt_var_eps, rtol=1e-12)
    np.testing.assert_allclose(
        parts.through_mean,
        np.broadcast_to(-dxhat.sum(axis=axes, keepdims=True) / steps.sqrt_var_eps / size, x.shape),
        rtol=1e-12,
    )
    np.testing.assert_allclose(parts.through_var, dvar * 2 * centred / size, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(
        parts.direct + parts.through_mean + parts.through_var, parts.dx, rtol=1e-10, atol=1e-13
    )


# --- random shapes, axes and eps ------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def problems(draw):
    """A random shape (1 to 3 axes of 2 to 5), a random non-empty set of normalized axes, a random
    eps."""
    shape = tuple(draw(st.lists(st.integers(2, 5), min_size=1, max_size=3)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    eps = draw(st.sampled_from([0.0, 1e-8, 1e-5, 1e-2, 1.0]))
    return shape, axes, eps, draw(st.integers(0, 2**16))


@settings(max_examples=40, deadline=None)
@given(problems())
def test_random_shapes_axes_and_eps_match_finite_differences_to_1e_6(problem):
    shape, axes, eps, seed = problem
    x, gamma, beta, dy = random_problem(shape, axes, seed)
    dx, dgamma, _ = layer_norm_backward(dy, x, gamma, eps=eps, axis=axes)
    numeric = numerical_gradient(lambda v: layer_norm(v, gamma, beta, eps=eps, axis=axes), x, dy)
    numeric_gamma = numerical_gradient(
        lambda g: layer_norm(x, g, beta, eps=eps, axis=axes), gamma, dy
    )
    # Relative to the gradient's size, or to its natural scale max|gamma dy| / s when it is (nearly)
    # zero: with H = 2 and eps = 0 the output is always (-1, 1) and the true dx is exactly 0.
    natural = (
        np.abs(gamma).max()
        * np.abs(dy).max()
        / layer_norm_steps(x, eps=eps, axis=axes).sqrt_var_eps.min()
    )
    assert np.abs(dx - numeric).max() < 1e-6 * max(np.abs(numeric).max(), natural)
    assert relative_error(dgamma, numeric_gamma) < 1e-6
