"""lnlib.norms.batch_norm_backward: sympy's derivation = numpy = finite differences = PyTorch
autograd.

Training mode (batch statistics). The sympy tests prove the closed form for one feature over a batch
of N symbols; the numeric tests check every axis layout batch_norm takes, the saved statistics, the
dtype rules of layer_norm_backward, and the refusals (an empty batch, one value per feature).
"""

import numpy as np
import pytest

from lnlib import batch_norm, batch_norm_backward, layer_norm_backward, symbolic
from lnlib.backward import numerical_gradient, relative_error
from lnlib.validation import BFLOAT16

# (shape, batch axes): a dense layer, an image batch, statistics over two axes of a 3-D tensor, one
# feature
LAYOUTS = [((5, 3), 0), ((2, 3, 2, 2), (0, 2, 3)), ((3, 2, 4), (0, 2)), ((6, 1), 0)]


@pytest.fixture(scope="module", params=[3, 4], ids=lambda n: f"N={n}")
def derivation(request):
    """The three sympy routes to batch norm's gradient of one feature over a batch of N."""
    sym = symbolic.make_symbols(request.param)
    return {
        "sym": sym,
        "direct": symbolic.batch_direct_gradient(sym),
        "chain": symbolic.batch_chain_rule(sym),
        "closed": symbolic.batch_closed_form_gradient(sym),
    }


def problem(shape, axis, seed=0, dtype=np.float64):
    """A non-trivial x (offset, uneven spread per feature), dy, gamma and beta."""
    rng = np.random.default_rng(seed)
    axes = (axis,) if isinstance(axis, int) else axis
    kept = tuple(n for a, n in enumerate(shape) if a not in axes)
    x = rng.normal(rng.normal(), rng.uniform(0.5, 3), size=shape)
    return (
        rng.normal(size=shape).astype(dtype),
        x.astype(dtype),
        rng.uniform(0.5, 2.0, size=kept),
        rng.normal(size=kept),
    )


@pytest.mark.parametrize("name", ["dx", "dgamma", "dbeta"])
def test_sympy_closed_form_equals_direct_gradient_and_chain_rule(derivation, name):
    sym = derivation["sym"]
    chain = derivation["chain"][name]
    chain = symbolic.substitute_statistics(sym, chain)
    assert symbolic.equal(derivation["direct"][name], derivation["closed"][name])
    assert symbolic.equal(chain, derivation["closed"][name])


def test_sympy_batch_gradient_is_layer_norm_gradient_with_one_shared_gain(derivation):
    # Tie LayerNorm's per-element gains to gamma_1: its dx becomes batch norm's, and the shared
    # gain's gradient is the sum of LayerNorm's per-element ones.
    sym = derivation["sym"]
    tied = {g: sym.gamma[0] for g in sym.gamma}
    layer = symbolic.closed_form_gradient(sym)
    assert symbolic.equal(tuple(e.subs(tied) for e in layer), derivation["closed"]["dx"])
    ln_dgamma = symbolic.chain_rule(sym)["dgamma"]
    assert symbolic.equal(
        symbolic.substitute_statistics(sym, sum(ln_dgamma)), derivation["closed"]["dgamma"]
    )


def test_sympy_gradient_evaluated_equals_numpy(derivation):
    sym = derivation["sym"]
    n = sym.H
    rng = np.random.default_rng(3)
    dy, x, gamma, eps = rng.normal(size=n), rng.normal(2.0, 1.5, size=n), 1.7, 1e-3
    sympy_dx = symbolic.numeric_backward(sym, derivation["closed"]["dx"])(
        dy, x, np.full(n, gamma), eps
    )
    dx, _, _ = batch_norm_backward(dy[:, None], x[:, None], [gamma], eps=eps)
    assert relative_error(dx[:, 0], sympy_dx) < 1e-13


@pytest.mark.parametrize("shape, axis", LAYOUTS)
def test_dx_dgamma_dbeta_equal_finite_differences(shape, axis):
    dy, x, gamma, beta = problem(shape, axis)
    dx, dgamma, dbeta = batch_norm_backward(dy, x, gamma, axis=axis)
    assert dx.shape == x.shape and dgamma.shape == dbeta.shape == gamma.shape
    numeric = {
        "dx": numerical_gradient(lambda v: batch_norm(v, gamma, beta, axis=axis), x, dy),
        "dgamma": numerical_gradient(lambda g: batch_norm(x, g, beta, axis=axis), gamma, dy),
        "dbeta": numerical_gradient(lambda b: batch_norm(x, gamma, b, axis=axis), beta, dy),
    }
    for name, ours in zip(("dx", "dgamma", "dbeta"), (dx, dgamma, dbeta)):
        assert relative_error(ours, numeric[name]) < 1e-7, name


def test_dx_is_layer_norm_backward_over_the_batch_axis_and_not_over_the_features():
    dy, x, gamma, _ = problem((5, 3), 0)
    dx, _, _ = batch_norm_backward(dy, x, gamma)
    over_batch, _, _ = layer_norm_backward(dy * gamma, x, axis=0)
    over_features, _, _ = layer_norm_backward(dy, x, gamma, axis=-1)
    assert relative_error(dx, over_batch) < 1e-14
    assert relative_error(over_features, dx) > 0.1


def test_saved_statistics_give_the_recomputed_gradients():
    dy, x, gamma, _ = problem((2, 3, 2, 2), (0, 2, 3))
    axes = (0, 2, 3)
    mean = x.mean(axis=axes)
    rstd = 1 / np.sqrt(x.var(axis=axes) + 1e-5)
    saved = batch_norm_backward(dy, x, gamma, axis=axes, mean=mean, rstd=rstd)
    for ours, recomputed in zip(saved, batch_norm_backward(dy, x, gamma, axis=axes)):
        assert relative_error(ours, recomputed) < 1e-13
    with pytest.raises(ValueError, match="mean and rstd"):
        batch_norm_backward(dy, x, gamma, axis=axes, mean=mean)


@pytest.mark.parametrize("shape, axis", LAYOUTS[:3])
def test_equals_torch_autograd_in_float64(torch, shape, axis):
    dy, x, gamma, beta = problem(shape, axis, seed=11)
    # every layout here has its features at axis 1, where torch's batch_norm takes its channels
    tx, tgamma, tbeta = (torch.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    torch.nn.functional.batch_norm(tx, None, None, tgamma, tbeta, training=True, eps=1e-5).backward(
        torch.from_numpy(dy)
    )
    dx, dgamma, dbeta = batch_norm_backward(dy, x, gamma, axis=axis)
    torch_dx = tx.grad.numpy()
    assert relative_error(dx, torch_dx) < 1e-12
    assert relative_error(dgamma, tgamma.grad.numpy()) < 1e-12
    assert relative_error(dbeta, tbeta.grad.numpy()) < 1e-12


def test_float32_equals_torch_autograd(torch):
    dy, x, gamma, beta = problem((8, 4), 0, seed=5, dtype=np.float32)
    gamma = gamma.astype(np.float32)
    tx, tgamma = torch.tensor(x, requires_grad=True), torch.tensor(gamma, requires_grad=True)
    torch.nn.functional.batch_norm(tx, None, None, tgamma, None, training=True).backward(
        torch.from_numpy(dy)
    )
    dx, dgamma, dbeta = batch_norm_backward(dy, x, gamma)
    assert dx.dtype == dgamma.dtype == np.float32
    assert relative_error(dx, tx.grad.numpy()) < 1e-5
    assert relative_error(dgamma, tgamma.grad.numpy()) < 1e-5


@pytest.mark.parametrize("storage", [np.float16, BFLOAT16], ids=["float16", "bfloat16"])
def test_16_bit_input_computes_in_float32_and_keeps_gamma_dtype(storage):
    dy, x, gamma, _ = problem((16, 3), 0, seed=2)
    dy16, x16 = dy.astype(storage), x.astype(storage)
    reference = batch_norm_backward(dy16.astype(np.float64), x16.astype(np.float64), gamma)
    dx, dgamma, dbeta = batch_norm_backward(dy16, x16, gamma.astype(np.float32))
    assert dx.dtype == storage and dgamma.dtype == dbeta.dtype == np.float32
    # float32 compute: dx within its own rounding to 16 bits, dgamma and dbeta within float32's
    assert relative_error(dx.astype(np.float64), reference[0]) < 2 * float(
        np.finfo(np.float16).eps if storage == np.float16 else 2.0**-7
    )
    assert relative_error(dgamma, reference[1]) < 1e-6
    assert relative_error(dbeta, reference[2]) < 1e-6
    _, dgamma_none, _ = batch_norm_backward(dy16, x16)
    assert dgamma_none.dtype == storage


def test_float32_gamma_holds_a_dbeta_that_float16_cannot():
    rows = 70_000  # dbeta = 70 000 > 65 504, float16's largest
    x = np.tile(np.array([[-1.0], [1.0]], dtype=np.float16), (rows // 2, 1))
    dy = np.ones_like(x)
    _, _, dbeta = batch_norm_backward(dy, x, np.ones(1, np.float32))
    assert dbeta.dtype == np.float32 and dbeta[0] == rows
    with pytest.raises(ValueError, match="dbeta is the sum of dy over every other axis"):
        batch_norm_backward(dy, x)


def test_an_empty_batch_is_refused_as_the_forward_pass_refuses_it():
    x = np.zeros((0, 3))
    for call in (lambda: batch_norm(x), lambda: batch_norm_backward(x, x)):
        with pytest.raises(ValueError, match="empty"):
            call()


def test_one_value_per_feature_is_refused():
    x = np.ones((1, 3))
    with pytest.raises(ValueError, match="more than one value per feature"):
        batch_norm_backward(x, x)


def test_dy_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match="dy must have the shape"):
        batch_norm_backward(np.ones((2, 3)), np.ones((3, 3)))
