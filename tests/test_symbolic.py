"""lnlib.symbolic: the sympy derivation proves the closed form (differences simplify to 0), and its numbers match lnlib."""

import numpy as np
import pytest
import sympy as sp

from lnlib import symbolic
from lnlib.backward import layer_norm_backward, layer_norm_jacobian


@pytest.fixture(scope="module", params=[3, 4], ids=lambda h: f"H={h}")
def sym(request):
    return symbolic.make_symbols(request.param)


def test_direct_gradient_equals_closed_form_symbolically(sym):
    assert symbolic.equal(symbolic.direct_gradient(sym), symbolic.closed_form_gradient(sym))


def test_chain_rule_node_by_node_equals_closed_form_symbolically(sym):
    steps = symbolic.chain_rule(sym)
    dx = symbolic.substitute_statistics(sym, steps["dx"])
    assert symbolic.equal(dx, symbolic.closed_form_gradient(sym))


def test_chain_rule_parameter_gradients(sym):
    steps = symbolic.chain_rule(sym)
    fwd = symbolic.forward(sym)
    # dL/dbeta_i = dy_i and dL/dgamma_i = dy_i xhat_i, differentiated from the full loss as a second route
    assert steps["dbeta"] == tuple(sp.diff(fwd.loss, b) for b in sym.beta) == sym.dy
    assert symbolic.equal(symbolic.substitute_statistics(sym, steps["dgamma"]), tuple(sp.diff(fwd.loss, g) for g in sym.gamma))


def test_the_mean_path_through_the_variance_vanishes(sym):
    # d(sigma^2)/d(mu) = -(2/H) sum_i (x_i - mu), which is 0 once mu is the mean: the term the source keeps.
    steps = symbolic.chain_rule(sym)
    dmean_without_var_path = -sum(d for d in steps["dxhat"]) / sp.sqrt(sym.var + sym.eps)
    assert symbolic.equal(symbolic.substitute_statistics(sym, steps["dmean"]), symbolic.substitute_statistics(sym, dmean_without_var_path))


def test_jacobian_equals_its_closed_form_symbolically(sym):
    assert symbolic.equal(symbolic.jacobian(sym), symbolic.closed_form_jacobian(sym))


def test_a_wrong_closed_form_is_not_proved_equal():
    sym = symbolic.make_symbols(3)
    fwd = symbolic.forward(sym)
    wrong = tuple(g * d / fwd.std for g, d in zip(sym.gamma, sym.dy))  # forgets both mean terms
    assert not symbolic.equal(symbolic.direct_gradient(sym), wrong)


def test_source_formula_collapses_to_gamma_over_sigma_times_one_minus_one_over_h(sym):
    fwd = symbolic.forward(sym)
    collapsed = sym.gamma[0] / fwd.std * (1 - sp.Rational(1, sym.H))
    assert symbolic.equal(symbolic.source_jacobian_diagonal(sym, 0), collapsed)


def test_source_formula_disagrees_with_the_true_diagonal_at_a_point(sym):
    # x = (1, 2, ..., H), gamma = 1, eps = 0: the true J_11 = (1/s)(1 - 1/H - xhat_1^2 / H) < (1/s)(1 - 1/H).
    point = {**{xi: i + 1 for i, xi in enumerate(sym.x)}, **{g: 1 for g in sym.gamma}, sym.eps: sp.Rational(1, 10**9)}
    source = float(symbolic.source_jacobian_diagonal(sym, 0).subs(point))
    true = float(symbolic.jacobian(sym)[0, 0].subs(point))
    numeric = layer_norm_jacobian(np.arange(1.0, sym.H + 1), eps=1e-9)[0, 0]
    assert true == pytest.approx(numeric, rel=1e-9)
    assert source > true * 1.3


def test_lambdified_gradient_matches_numpy_backward(sym):
    rng = np.random.default_rng(sym.H)
    backward = symbolic.numeric_backward(sym, symbolic.direct_gradient(sym))
    for eps in (0.0, 1e-5, 0.3):
        x, dy = rng.normal(2.0, 3.0, size=sym.H), rng.normal(size=sym.H)
        gamma = rng.uniform(0.5, 2.0, size=sym.H)
        np.testing.assert_allclose(backward(dy, x, gamma, eps), layer_norm_backward(dy, x, gamma, eps=eps)[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("H", [1, 7, 2.5, True, "3"])
def test_make_symbols_refuses_bad_widths(H):
    with pytest.raises(ValueError, match="H must be an integer from 2 to 6"):
        symbolic.make_symbols(H)


def test_lambdified_gradient_refuses_the_wrong_width():
    sym = symbolic.make_symbols(3)
    backward = symbolic.numeric_backward(sym, symbolic.direct_gradient(sym))
    with pytest.raises(ValueError, match=r"x must be a vector of shape \(3,\)"):
        backward(np.ones(3), np.arange(4.0), np.ones(3), 1e-5)
    with pytest.raises(ValueError, match="eps must be >= 0"):
        backward(np.ones(3), np.arange(3.0), np.ones(3), -1.0)
