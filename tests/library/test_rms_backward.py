"""lnlib.rms: RMS norm's backward pass equals sympy's derivation, finite differences and PyTorch
autograd.

Chapter "LayerNorm and its family". Every expected value is computed here by an independent route:
sympy's gradient of the forward expression, central differences of lnlib's forward in float64,
PyTorch's autograd.
"""

import numpy as np
import pytest

from lnlib import harness, rms_norm_backward, symbolic
from lnlib.backward import numerical_gradient, relative_error
from lnlib.norms import rms_norm
from lnlib.rms import rms_backward_parts
from lnlib.validation import BFLOAT16


@pytest.fixture(scope="module", params=[3, 4], ids=lambda h: f"H={h}")
def sym(request):
    return symbolic.make_symbols(request.param)


def test_sympy_direct_and_chain_rule_gradients_equal_the_closed_form(sym):
    closed = symbolic.rms_closed_form_gradient(sym)
    assert symbolic.equal(symbolic.rms_direct_gradient(sym), closed)
    assert symbolic.equal(symbolic.rms_chain_rule(sym)["dx"], closed)


def test_sympy_dgamma_is_dy_times_xhat(sym):
    fwd = symbolic.rms_forward(sym)
    dgamma = tuple(d * xh for d, xh in zip(sym.dy, fwd.xhat))
    assert symbolic.equal(tuple(symbolic.sp.diff(fwd.loss, g) for g in sym.gamma), dgamma)


def test_sympy_rms_is_layer_norm_on_a_mean_zero_vector(sym):
    # a second check of the symbolic forward: with x_H = -(x_1 + ... + x_{H-1}) the two coincide
    zero_mean = {sym.x[-1]: -sum(sym.x[:-1])}
    rms, ln = symbolic.rms_forward(sym), symbolic.forward(sym)
    assert symbolic.equal(
        tuple(y.subs(zero_mean) for y in rms.y),
        tuple((y - b).subs(zero_mean) for y, b in zip(ln.y, sym.beta)),
    )


def tiny_inputs(seed, shape=(2, 4)):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape), rng.normal(1, 0.5, size=shape[-1:]), rng.normal(size=shape)


def finite_differences(dy, x, gamma, eps):
    """dx and dgamma by central differences of lnlib's forward, in float64."""
    dx = numerical_gradient(lambda v: rms_norm(v, gamma, eps=eps), x, dy)
    dgamma = numerical_gradient(lambda g: rms_norm(x, g, eps=eps), gamma, dy)
    return dx, dgamma


@pytest.mark.parametrize("eps", [0.0, 1e-6, 0.5])
def test_numpy_equals_sympy_and_finite_differences(sym, eps):
    x, gamma, dy = tiny_inputs(sym.H, (3, sym.H))
    dx, dgamma = rms_norm_backward(dy, x, gamma, eps=eps)
    derived = symbolic.numeric_backward(sym, symbolic.rms_direct_gradient(sym))
    sympy_dx = np.stack([derived(d, row, gamma, eps or 1e-300) for d, row in zip(dy, x)])
    assert relative_error(dx, sympy_dx) < 1e-13
    fd_dx, fd_dgamma = finite_differences(dy, x, gamma, eps)
    assert relative_error(dx, fd_dx) < 1e-8
    assert relative_error(dgamma, fd_dgamma) < 1e-8


def test_parts_add_up_and_name_each_term():
    x, gamma, dy = tiny_inputs(1)
    parts = rms_backward_parts(dy, x, gamma, eps=1e-6)
    np.testing.assert_allclose(parts.dx, parts.direct + parts.through_ms)
    np.testing.assert_allclose(parts.xhat, x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6))
    np.testing.assert_allclose(parts.direct, dy * gamma * parts.rstd)


@pytest.mark.parametrize("axis", [-1, (-2, -1), (0, 2)])
def test_any_axes_match_finite_differences(axis):
    rng = np.random.default_rng(3)
    x, dy = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    gamma = rng.normal(1, 0.5, size=tuple(x.shape[a] for a in np.atleast_1d(axis)))
    dx, dgamma = rms_norm_backward(dy, x, gamma, eps=1e-3, axis=axis)
    f_dx = numerical_gradient(lambda v: rms_norm(v, gamma, eps=1e-3, axis=axis), x, dy)
    f_dg = numerical_gradient(lambda g: rms_norm(x, g, eps=1e-3, axis=axis), gamma, dy)
    assert relative_error(dx, f_dx) < 1e-8 and relative_error(dgamma, f_dg) < 1e-8


def test_the_saved_rstd_gives_the_same_gradients():
    x, gamma, dy = tiny_inputs(2, (5, 8))
    _, rstd = rms_norm(x, gamma, eps=1e-6, return_stats=True)
    for saved in (rstd, rstd.ravel()):
        for ours, recomputed in zip(
            rms_norm_backward(dy, x, gamma, rstd=saved), rms_norm_backward(dy, x, gamma, eps=1e-6)
        ):
            np.testing.assert_allclose(ours, recomputed, rtol=1e-14)


def test_a_wrong_saved_rstd_changes_the_result():
    # eps is not used with a saved rstd: the saved value is what the gradient is taken at
    x, gamma, dy = tiny_inputs(2, (5, 8))
    _, rstd = rms_norm(x, gamma, eps=1e-6, return_stats=True)
    dx, _ = rms_norm_backward(dy, x, gamma, rstd=2 * rstd)
    assert relative_error(dx, rms_norm_backward(dy, x, gamma)[0]) > 0.5


@pytest.mark.parametrize("dtype", ["float16", BFLOAT16])
def test_16_bit_x_with_float32_gamma_keeps_a_float32_dgamma(dtype):
    x, gamma, dy = tiny_inputs(4, (64, 16))
    x16, dy16, g32 = x.astype(dtype), dy.astype(dtype), gamma.astype(np.float32)
    dx, dgamma = rms_norm_backward(dy16, x16, g32)
    assert dx.dtype == np.dtype(dtype) and dgamma.dtype == np.float32
    wide = rms_norm_backward(*(a.astype(np.float64) for a in (dy16, x16, g32)))
    assert relative_error(dgamma, wide[1]) < 1e-6  # summed in float32, not in 16 bits
    assert rms_norm_backward(dy16, x16, list(g32))[1].dtype == np.dtype(dtype)


def test_an_empty_batch_gives_empty_dx_and_zero_dgamma():
    dx, dgamma = rms_norm_backward(np.zeros((0, 4)), np.zeros((0, 4)), np.ones(4))
    assert dx.shape == (0, 4) and np.array_equal(dgamma, np.zeros(4))
    dx, _ = rms_norm_backward(np.zeros((0, 4)), np.zeros((0, 4)), rstd=np.zeros((0, 1)))
    assert dx.shape == (0, 4)


@pytest.mark.parametrize(
    "kwargs, error, pattern",
    [
        ({"dy": np.ones((2, 3))}, ValueError, r"dy must have the shape"),
        ({"dy": np.array([[1.0, np.nan, 0, 0]] * 2)}, ValueError, r"dy contains NaN"),
        ({"x": np.array([[1.0, np.inf, 0, 0]] * 2)}, ValueError, r"x contains infinity"),
        ({"rstd": np.array([[1.0], [0.0]])}, ValueError, r"rstd must be positive"),
        ({"rstd": np.ones(3)}, ValueError, r"rstd must have the shape"),
        ({"gamma": np.ones(3)}, ValueError, r"gamma must have the shape"),
        ({"gamma": np.ones(4) * 1j}, TypeError, r"complex"),
        ({"eps": -1.0}, ValueError, r"eps must be >= 0"),
        ({"x": np.zeros((2, 4)), "eps": 0.0}, ValueError, r"mean square is zero"),
    ],
)
def test_bad_input_is_refused_with_its_cause(kwargs, error, pattern):
    args = {"dy": np.ones((2, 4)), "x": np.arange(8.0).reshape(2, 4), "gamma": None, **kwargs}
    with pytest.raises(error, match=pattern):
        rms_norm_backward(args.pop("dy"), args.pop("x"), args.pop("gamma"), **args)


def torch_gradients(torch, dy, x, gamma, eps):
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(gamma, requires_grad=True)
    torch.nn.functional.rms_norm(tx, gamma.shape, tg, eps).backward(torch.from_numpy(dy))
    return tx.grad.numpy(), tg.grad.numpy()


@pytest.mark.parametrize("eps", [0.0, 1e-6, 0.5])
def test_tiny_tensors_match_torch_autograd(torch, eps):
    x, gamma, dy = tiny_inputs(9, (3, 5))
    for ours, theirs in zip(
        rms_norm_backward(dy, x, gamma, eps=eps), torch_gradients(torch, dy, x, gamma, eps)
    ):
        assert relative_error(ours, theirs) < 1e-12


def test_the_harness_shapes_and_dtypes_match_torch_autograd(torch):
    forward, backward = harness.torch_rms_norm()
    worst = {}
    # H = 1 is left to the harness's budget: there dx = rstd * gamma * dy * (1 - xhat**2) cancels
    # (xhat**2 = x**2 / (x**2 + eps)), so both sides carry float32's error relative to dx's small
    # size
    cases = [case for case in harness.RMS_CASES if case.shape[-1] > 1]
    for (case, dtype), inputs in harness.harness_inputs(cases=cases).items():
        eps = 1e-6 if case.eps is None else case.eps
        dy, x, gamma = inputs["dy"], inputs["x"], inputs["gamma"]
        params = gamma.astype(np.float32) if x.dtype.itemsize == 2 else gamma
        ours = rms_norm_backward(dy, x, params, eps=eps)
        theirs = backward(dy, x, gamma, eps)
        error = max(relative_error(a, b) for a, b in zip(ours, theirs))
        worst[dtype] = max(worst.get(dtype, 0.0), error)
    assert worst["float64"] < 1e-12 and worst["float32"] < 1e-5
    assert worst["float16"] < 2e-3 and worst["bfloat16"] < 2e-2
