"""lnlib.symbolic: the sympy derivation proves the closed form (differences simplify to 0), and its
numbers match lnlib."""

import numpy as np
import pytest
import sympy as sp

from lnlib import symbolic
from lnlib.backward import layer_norm_backward, layer_norm_jacobian


@pytest.fixture(scope="module", params=[3, 4], ids=lambda h: f"H={h}")
def derivation(request):
    """The symbols of width H and the three derivations of dx, computed once per H for the whole
    module."""
    sym = symbolic.make_symbols(request.param)
    return {
        "sym": sym,
        "direct": symbolic.direct_gradient(sym),
        "steps": symbolic.chain_rule(sym),
        "closed": symbolic.closed_form_gradient(sym),
    }


@pytest.fixture(scope="module")
def sym(derivation):
    return derivation["sym"]


def test_direct_gradient_equals_closed_form_symbolically(derivation):
    assert symbolic.equal(derivation["direct"], derivation["closed"])


def test_chain_rule_node_by_node_equals_closed_form_symbolically(sym, derivation):
    dx = symbolic.substitute_statistics(sym, derivation["steps"]["dx"])
    assert symbolic.equal(dx, derivation["closed"])


def test_chain_rule_parameter_gradients(sym, derivation):
    steps = derivation["steps"]
    fwd = symbolic.forward(sym)
    # dL/dbeta_i = dy_i and dL/dgamma_i = dy_i xhat_i, differentiated from the full loss as a second
    # route
    assert steps["dbeta"] == tuple(sp.diff(fwd.loss, b) for b in sym.beta) == sym.dy
    assert symbolic.equal(
        symbolic.substitute_statistics(sym, steps["dgamma"]),
        tuple(sp.diff(fwd.loss, g) for g in sym.gamma),
    )


def test_the_mean_path_through_the_variance_vanishes(sym, derivation):
    # d(sigma^2)/d(mu) = -(2/H) sum_i (x_i - mu), which is 0 once mu is the mean.
    steps = derivation["steps"]
    dmean_without_var_path = -sum(d for d in steps["dxhat"]) / sp.sqrt(sym.var + sym.eps)
    assert symbolic.equal(
        symbolic.substitute_statistics(sym, steps["dmean"]),
        symbolic.substitute_statistics(sym, dmean_without_var_path),
    )


def test_in_normalized_variables_the_chain_rule_reads_as_the_closed_form(sym):
    # Written by hand in xhat and s: dvar = -sum(dxhat xhat) / (2 s^2), dmu = -sum(dxhat) / s,
    # dx_j = (dxhat_j - mean(dxhat) - xhat_j mean(dxhat xhat)) / s.
    normal = symbolic.in_normalized_variables(sym)
    s, xhat, g = normal["s"], normal["xhat"], symbolic.chain_rule(sym)["upstream"]["dxhat"]
    H = sym.H
    assert symbolic.equal(normal["dvar"], -sum(gi * h for gi, h in zip(g, xhat)) / (2 * s**2))
    assert symbolic.equal(normal["dmean"], -sum(g) / s)
    closed = tuple(
        (gj - sum(g) / H - hj * sum(gi * h for gi, h in zip(g, xhat)) / H) / s
        for gj, hj in zip(g, xhat)
    )
    assert symbolic.equal(normal["dx"], closed)


def test_jacobian_equals_its_closed_form_symbolically(sym):
    assert symbolic.equal(symbolic.jacobian(sym), symbolic.closed_form_jacobian(sym))


def wrong_closed_forms(sym):
    """Near misses of the closed form: each drops or bends one piece of it."""
    fwd = symbolic.forward(sym)
    dxhat = [d * g for d, g in zip(sym.dy, sym.gamma)]
    mean_dxhat = sum(dxhat) / sym.H
    mean_dxhat_xhat = sum(d * xh for d, xh in zip(dxhat, fwd.xhat)) / sym.H
    return {
        "no mean terms": tuple(d / fwd.sqrt_var_eps for d in dxhat),
        "no variance term": tuple((d - mean_dxhat) / fwd.sqrt_var_eps for d in dxhat),
        "variance term over H - 1": tuple(
            (d - mean_dxhat - xh * mean_dxhat_xhat * sym.H / (sym.H - 1)) / fwd.sqrt_var_eps
            for d, xh in zip(dxhat, fwd.xhat)
        ),
    }


@pytest.mark.parametrize("name", ["no mean terms", "no variance term", "variance term over H - 1"])
def test_a_wrong_closed_form_is_not_proved_equal(name):
    sym = symbolic.make_symbols(
        2
    )  # the smallest width keeps sympy's fruitless search for a proof short
    assert not symbolic.equal(symbolic.direct_gradient(sym), wrong_closed_forms(sym)[name])


def test_equal_refuses_lists_of_different_lengths():
    sym = symbolic.make_symbols(3)
    with pytest.raises(ValueError, match="one to one; got 3 against 2"):
        symbolic.equal(sym.x, sym.x[:2])


def test_source_formula_collapses_to_gamma_over_sigma_times_one_minus_one_over_h(sym):
    fwd = symbolic.forward(sym)
    collapsed = sym.gamma[0] / fwd.sqrt_var_eps * (1 - sp.Rational(1, sym.H))
    assert symbolic.equal(symbolic.source_jacobian_diagonal(sym, 0), collapsed)


def test_source_formula_disagrees_with_the_true_diagonal_at_a_point(sym):
    # x = (1, 2, ..., H), gamma = 1, eps = 0: the true J_11 = (1/s)(1 - 1/H - xhat_1^2 / H) <
    # (1/s)(1 - 1/H).
    point = {
        **{xi: i + 1 for i, xi in enumerate(sym.x)},
        **{g: 1 for g in sym.gamma},
        sym.eps: sp.Rational(1, 10**9),
    }
    source = float(symbolic.source_jacobian_diagonal(sym, 0).subs(point))
    true = float(symbolic.jacobian(sym)[0, 0].subs(point))
    numeric = layer_norm_jacobian(np.arange(1.0, sym.H + 1), eps=1e-9)[0, 0]
    assert true == pytest.approx(numeric, rel=1e-9)
    assert source > true * 1.3


def test_lambdified_gradient_matches_numpy_backward(sym, derivation):
    rng = np.random.default_rng(sym.H)
    backward = symbolic.numeric_backward(sym, derivation["direct"])
    for eps in (0.0, 1e-5, 0.3):
        x, dy = rng.normal(2.0, 3.0, size=sym.H), rng.normal(size=sym.H)
        gamma = rng.uniform(0.5, 2.0, size=sym.H)
        np.testing.assert_allclose(
            backward(dy, x, gamma, eps),
            layer_norm_backward(dy, x, gamma, eps=eps)[0],
            rtol=1e-10,
            atol=1e-12,
        )


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


def test_to_latex_lines_breaks_a_sum_without_changing_it():
    sym = symbolic.make_symbols(3)
    expr = sp.expand(
        symbolic.in_normalized_variables(sym)["dx"][0] * symbolic.in_normalized_variables(sym)["s"]
    )
    one_line = symbolic.to_latex(expr)
    broken = symbolic.to_latex_lines(r"s\,dx_1", expr, per_line=2)
    terms = len(expr.as_ordered_terms())
    assert broken.count(r"\\") == -(-terms // 2) - 1  # a line break after every two terms
    flat = broken.removeprefix("\\begin{aligned}").removesuffix("\\end{aligned}")
    for mark in ("&", r"\quad", r"\\", " ", "\n"):
        flat = flat.replace(mark, "")
    assert flat == r"s\,dx_1=" + one_line.replace(
        " ", ""
    )  # the same terms, signs and order as sympy's one line
    assert (
        symbolic.to_latex_lines("y", sym.x[0], per_line=2) == f"y = {symbolic.to_latex(sym.x[0])}"
    )
    with pytest.raises(ValueError, match="per_line"):
        symbolic.to_latex_lines("y", expr, per_line=0)
