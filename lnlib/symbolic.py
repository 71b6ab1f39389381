r"""LayerNorm's forward and backward pass derived with sympy, for a vector of H symbols.

The chapter "Gradients through LayerNorm" uses this module to derive the
gradient three ways and prove they agree symbolically:

1. **directly**: build :math:`L = \sum_i dy_i\, y_i` as one expression in
   :math:`x_1, \dots, x_H` and let sympy differentiate it;
2. **by the chain rule, node by node** (:func:`chain_rule`): backpropagate
   through :math:`y \to \hat x \to (\sigma^2, \mu) \to x`, each local
   derivative taken by sympy on the node's own definition;
3. **the closed form** :math:`dx = (d\hat x - \operatorname{mean}(d\hat x) - \hat
   x\,\operatorname{mean}(d\hat x\,\hat x))/s`.

The same three routes give RMS norm's gradient (:func:`rms_forward`, :func:`rms_direct_gradient`,
:func:`rms_chain_rule`, :func:`rms_closed_form_gradient`; chapter "Gradients through LayerNorm",
section "RMSNorm's backward pass"), whose closed form is LayerNorm's without the mean's term, and
batch norm's for one feature over a batch of H samples (:func:`batch_forward`,
:func:`batch_direct_gradient`, :func:`batch_chain_rule`, :func:`batch_closed_form_gradient`; chapter
"LayerNorm and its family"), whose closed form is LayerNorm's with one gain shared by the batch.

:func:`equal` simplifies a difference to zero, which is a proof, not a sampled
check; :func:`numeric_backward` turns the derived gradient into a numpy
function to compare with :func:`~lnlib.backward.layer_norm_backward`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy as sp

from .validation import as_float_array, check_eps

__all__ = [
    "Symbols",
    "Forward",
    "make_symbols",
    "forward",
    "direct_gradient",
    "chain_rule",
    "in_normalized_variables",
    "to_latex",
    "to_latex_lines",
    "substitute_statistics",
    "closed_form_gradient",
    "jacobian",
    "closed_form_jacobian",
    "source_jacobian_diagonal",
    "equal",
    "numeric_backward",
    "RMSForward",
    "rms_forward",
    "rms_direct_gradient",
    "rms_chain_rule",
    "rms_closed_form_gradient",
    "batch_forward",
    "batch_direct_gradient",
    "batch_chain_rule",
    "batch_closed_form_gradient",
]


@dataclass(frozen=True)
class Symbols:
    """The symbols of one LayerNorm of width H (chapter "Gradients through LayerNorm").

    ``x``, ``gamma``, ``beta``, ``dy`` are tuples of H real symbols (dy is the
    upstream gradient dL/dy); ``eps`` is a positive symbol; ``mean`` and
    ``var`` stand for the statistics as nodes of the computation graph.
    """

    H: int
    x: tuple
    gamma: tuple
    beta: tuple
    dy: tuple
    eps: sp.Symbol
    mean: sp.Symbol
    var: sp.Symbol


@dataclass(frozen=True)
class Forward:
    """The forward pass as sympy expressions in the inputs x (chapter "Gradients through
    LayerNorm")."""

    mean: sp.Expr
    var: sp.Expr
    sqrt_var_eps: sp.Expr
    xhat: tuple
    y: tuple
    loss: sp.Expr


def make_symbols(H: int = 3) -> Symbols:
    """Symbols x_1..x_H, gamma_i, beta_i, dy_i, eps, mu, sigma^2 for a LayerNorm of width `H`
    (chapter "Gradients through LayerNorm").

    Raises
    ------
    ValueError
        If `H` is not an integer from 2 to 6 (one value has no spread; beyond 6
        the simplification gets slow).
    """
    if isinstance(H, bool) or not isinstance(H, (int, np.integer)) or not 2 <= H <= 6:
        raise ValueError(
            "H must be an integer from 2 to 6 (the symbolic derivation is for a short vector); "
            f"got {H!r}."
        )
    H = int(H)

    def vector(name):
        return tuple(sp.symbols(f"{name}_1:{H + 1}", real=True))

    return Symbols(
        H=H,
        x=vector("x"),
        gamma=vector("gamma"),
        beta=vector("beta"),
        dy=vector("dy"),
        eps=sp.Symbol("epsilon", positive=True),
        mean=sp.Symbol("mu", real=True),
        var=sp.Symbol("sigma^2", nonnegative=True),
    )


def forward(sym: Symbols) -> Forward:
    r"""LayerNorm from its definition, and the loss :math:`L = \sum_i dy_i y_i` whose gradient is
    the backward pass (chapter "Gradients through LayerNorm")."""
    mean = sum(sym.x) / sym.H
    var = sum((xi - mean) ** 2 for xi in sym.x) / sym.H
    sqrt_var_eps = sp.sqrt(var + sym.eps)
    xhat = tuple((xi - mean) / sqrt_var_eps for xi in sym.x)
    y = tuple(g * xh + b for g, xh, b in zip(sym.gamma, xhat, sym.beta))
    loss = sum(d * yi for d, yi in zip(sym.dy, y))
    return Forward(mean=mean, var=var, sqrt_var_eps=sqrt_var_eps, xhat=xhat, y=y, loss=loss)


def direct_gradient(sym: Symbols) -> tuple:
    """dL/dx_j for every j, by differentiating the whole forward expression (sympy applies the chain
    rule) (chapter "Gradients through LayerNorm")."""
    loss = forward(sym).loss
    return tuple(sp.diff(loss, xj) for xj in sym.x)


def chain_rule(sym: Symbols) -> dict:
    r"""Backpropagate node by node through :math:`x \to (\mu, \sigma^2) \to \hat x \to y \to L`
    (chapter "Gradients through LayerNorm").

    Every local derivative is taken by sympy on the node's own definition, with
    the statistics kept as the symbols ``sym.mean`` and ``sym.var``:
    :math:`\hat x_i = (x_i - \mu)/\sqrt{\sigma^2 + \varepsilon}`,
    :math:`\sigma^2 = \frac1H\sum_i (x_i - \mu)^2`, :math:`\mu = \frac1H\sum_i x_i`.
    Each step is first written with the upstream gradients as symbols
    (``local``: what one node of an autograd engine computes), then the
    upstream values are substituted in, from the loss back to x.

    Returns
    -------
    dict
        ``local``: the steps ``dvar``, ``dmean`` and ``dx`` (a tuple over j) in terms of the
        gradient symbols ``upstream`` (``dxhat`` tuple, ``dvar``, ``dmean``); render them with
        :func:`to_latex`. And, with the upstream values substituted: ``dbeta``, ``dgamma``,
        ``dxhat`` (tuples over i), ``dvar``, ``dmean`` and ``dx`` (tuple over j), in terms of x, mu,
        sigma^2 and the parameters; :func:`substitute_statistics` replaces :math:`\mu` and
        :math:`\sigma^2` by their definitions.
    """
    mu, var = sym.mean, sym.var
    xhat = [(xi - mu) / sp.sqrt(var + sym.eps) for xi in sym.x]
    var_node = sum((xi - mu) ** 2 for xi in sym.x) / sym.H
    mean_node = sum(sym.x) / sym.H
    up = _gradient_symbols(sym.H)
    xhat_s = sp.symbols(f"xhat_1:{sym.H + 1}", real=True)
    loss = sum(d * (g * xh + b) for d, g, xh, b in zip(sym.dy, sym.gamma, xhat_s, sym.beta))

    local = {
        "dvar": sum(g * sp.diff(xh, var) for g, xh in zip(up["dxhat"], xhat)),
        "dmean": sum(g * sp.diff(xh, mu) for g, xh in zip(up["dxhat"], xhat))
        + up["dvar"] * sp.diff(var_node, mu),
        "dx": tuple(
            sum(g * sp.diff(xh, xj) for g, xh in zip(up["dxhat"], xhat))
            + up["dvar"] * sp.diff(var_node, xj)
            + up["dmean"] * sp.diff(mean_node, xj)
            for xj in sym.x
        ),
    }
    return {
        "local": local,
        "upstream": up,
        "dbeta": tuple(sp.diff(loss, b) for b in sym.beta),
        "dgamma": tuple(sp.diff(loss, g).subs(dict(zip(xhat_s, xhat))) for g in sym.gamma),
        **_backpropagate(local, up, tuple(sp.diff(loss, xh) for xh in xhat_s)),
    }


def _backpropagate(local: dict, up: dict, dxhat: tuple) -> dict:
    """Substitute the upstream gradients dL/dxhat_i into the local steps, from the loss back to x:
    dxhat, dvar, dmean, dx."""
    values = dict(zip(up["dxhat"], dxhat))
    values[up["dvar"]] = local["dvar"].subs(values)
    values[up["dmean"]] = local["dmean"].subs(values)
    return {
        "dxhat": dxhat,
        "dvar": values[up["dvar"]],
        "dmean": values[up["dmean"]],
        "dx": tuple(e.subs(values) for e in local["dx"]),
    }


def in_normalized_variables(sym: Symbols) -> dict:
    r"""The chain rule's local steps rewritten in :math:`\hat x` and :math:`s`, where the closed
    form appears (chapter "Gradients through LayerNorm").

    Substitutes :math:`x_i = \mu + s\,\hat x_i` and :math:`\sigma^2 = s^2 - \varepsilon`
    (with :math:`s > 0`) into the steps of :func:`chain_rule`, and uses
    :math:`\sum_i \hat x_i = 0`, which is what makes the path from :math:`\mu`
    through :math:`\sigma^2` vanish. Each gradient is then expressed in the
    upstream gradient symbols :math:`d\hat x_i` (render with :func:`to_latex`).

    Returns
    -------
    dict
        ``s`` and ``xhat`` (the new symbols), ``dvar``, ``dmean`` and ``dx``
        (a tuple over j), each expanded.
    """
    steps = chain_rule(sym)
    local, up = steps["local"], steps["upstream"]
    s = sp.Symbol("s", positive=True)
    xhat = tuple(sp.symbols(f"xhat_1:{sym.H + 1}", real=True))
    normalize = {**{xi: sym.mean + s * h for xi, h in zip(sym.x, xhat)}, sym.var: s**2 - sym.eps}

    def rewrite(expr):
        return sp.expand(sp.factor_terms(expr.subs(normalize)).subs(sum(xhat), 0))

    dvar, dmean = rewrite(local["dvar"]), rewrite(local["dmean"])
    dx = tuple(rewrite(e.subs({up["dmean"]: dmean, up["dvar"]: dvar})) for e in local["dx"])
    return {"s": s, "xhat": xhat, "dvar": dvar, "dmean": dmean, "dx": dx}


def _gradient_symbols(H: int) -> dict:
    """Symbols for the upstream gradients dL/dxhat_i, dL/dsigma^2 and dL/dmu."""
    return {
        "dxhat": tuple(sp.symbols(f"g_xhat_1:{H + 1}", real=True)),
        "dvar": sp.Symbol("g_var", real=True),
        "dmean": sp.Symbol("g_mean", real=True),
    }


def to_latex(expr) -> str:
    r"""LaTeX of an expression from :func:`chain_rule`, writing the gradient symbols as :math:`d\hat
    x_i`, :math:`d\sigma^2`, :math:`d\mu`, and epsilon as :math:`\varepsilon`, the glyph of the
    book's prose (chapter "Gradients through LayerNorm")."""
    names = {}
    for symbol in expr.free_symbols:
        if symbol.name == "epsilon":
            names[symbol] = r"\varepsilon"
        elif symbol.name.startswith("g_xhat_"):
            names[symbol] = rf"d\hat x_{{{symbol.name.removeprefix('g_xhat_')}}}"
        elif symbol.name == "g_var":
            names[symbol] = r"d\sigma^2"
        elif symbol.name == "g_mean":
            names[symbol] = r"d\mu"
    return sp.latex(expr, symbol_names=names)


def to_latex_lines(lhs: str, expr, *, per_line: int = 2) -> str:
    r"""The equation ``lhs = expr`` in LaTeX, a sum broken after every `per_line` terms (chapter
    "Gradients through LayerNorm").

    sympy prints a long sum on one line, wider than a phone's column; this writes it as an
    ``aligned`` block with the terms in sympy's own order, each line starting with its sign.
    Symbols are named as by :func:`to_latex`.

    Parameters
    ----------
    lhs : str
        LaTeX of the left-hand side.
    expr : sympy expression
    per_line : int, default 2
        Terms of the sum on each line (at least 1).

    Returns
    -------
    str
        ``lhs = ...`` on one line when the sum has at most `per_line` terms, else an ``aligned``
        block.
    """
    if int(per_line) != per_line or per_line < 1:
        raise ValueError(f"per_line must be a whole number of terms, at least 1; got {per_line!r}.")
    terms = expr.as_ordered_terms() if isinstance(expr, sp.Add) else [expr]
    if len(terms) <= per_line:
        return f"{lhs} = {to_latex(expr)}"
    pieces = []
    for k, term in enumerate(terms):
        negative = term.could_extract_minus_sign()
        sign = "- " if negative else ("+ " if k else "")
        pieces.append(sign + to_latex(-term if negative else term))
    lines = [" ".join(pieces[k : k + per_line]) for k in range(0, len(pieces), per_line)]
    body = " \\\\\n&\\quad ".join(lines)
    return f"\\begin{{aligned}}\n{lhs} &= {body}\n\\end{{aligned}}"


def substitute_statistics(sym: Symbols, expr):
    r"""Replace the graph nodes :math:`\mu` and :math:`\sigma^2` by their definitions in x, in one
    expression or a tuple (chapter "Gradients through LayerNorm")."""
    fwd = forward(sym)
    values = {sym.mean: fwd.mean, sym.var: fwd.var}
    if isinstance(expr, tuple):
        return tuple(e.subs(values) for e in expr)
    return expr.subs(values)


def closed_form_gradient(sym: Symbols) -> tuple:
    r"""The closed form :math:`(d\hat x_j - \operatorname{mean}(d\hat x) - \hat x_j
    \operatorname{mean}(d\hat x\,\hat x))/s` in x (chapter "Gradients through LayerNorm")."""
    fwd = forward(sym)
    dxhat = [d * g for d, g in zip(sym.dy, sym.gamma)]
    mean_dxhat = sum(dxhat) / sym.H
    mean_dxhat_xhat = sum(d * xh for d, xh in zip(dxhat, fwd.xhat)) / sym.H
    return tuple(
        (d - mean_dxhat - xh * mean_dxhat_xhat) / fwd.sqrt_var_eps for d, xh in zip(dxhat, fwd.xhat)
    )


def jacobian(sym: Symbols) -> sp.Matrix:
    """The H x H matrix dy_i/dx_j, differentiated from the forward expressions (chapter "Gradients
    through LayerNorm")."""
    y = forward(sym).y
    return sp.Matrix(sym.H, sym.H, lambda i, j: sp.diff(y[i], sym.x[j]))


def closed_form_jacobian(sym: Symbols) -> sp.Matrix:
    r"""The closed form :math:`(\gamma_i/s)(\delta_{ij} - 1/H - \hat x_i \hat x_j / H)` (chapter
    "Gradients through LayerNorm")."""
    fwd = forward(sym)
    H = sym.H
    return sp.Matrix(
        H,
        H,
        lambda i, j: (
            sym.gamma[i]
            / fwd.sqrt_var_eps
            * (sp.KroneckerDelta(i, j) - sp.Rational(1, H) - fwd.xhat[i] * fwd.xhat[j] / H)
        ),
    )


def source_jacobian_diagonal(sym: Symbols, i: int) -> sp.Expr:
    r"""The formula of source document 003, "Gradient Flow Analysis", for feature `i` (0-based), as
    written there (chapter "Gradients through LayerNorm").

    .. math::

        \frac{\partial \mathrm{LN}(x)}{\partial x_i}
            = \frac{\gamma}{\sigma}\Big(1 - \frac1H - T_i\Big)

        T_i = \frac{x_i - \mu}{\sigma^2}\cdot\frac1H \sum_j (x_j - \mu)

    (one formula, split in two here only to fit a narrow page) with :math:`\gamma = \gamma_i`;
    the document's σ stands for :math:`\sqrt{\operatorname{Var}(x) + \varepsilon}`
    (so its :math:`\sigma^2` is :math:`\operatorname{Var}(x) + \varepsilon`), with
    :math:`\operatorname{Var}(x)` the biased variance. The chapter
    shows it is wrong: :math:`\sum_j (x_j - \mu) = 0`, so its last term vanishes identically.
    """
    fwd = forward(sym)
    centred_sum = sum(xj - fwd.mean for xj in sym.x)
    return (
        sym.gamma[i]
        / fwd.sqrt_var_eps
        * (
            1
            - sp.Rational(1, sym.H)
            - (sym.x[i] - fwd.mean) / fwd.sqrt_var_eps**2 * centred_sum / sym.H
        )
    )


def equal(a, b) -> bool:
    """True when every ``a_k - b_k`` simplifies to exactly 0: a symbolic proof that the expressions
    agree (chapter "Gradients through LayerNorm").

    `a` and `b` are sympy expressions, or equal-length tuples or matrices of them.
    Each difference is first put over one denominator with its numerator
    expanded (an exact rewriting, and several times faster than
    :func:`sympy.simplify`); only a difference that does not vanish there gets
    the full ``simplify``. False means sympy found no proof.

    Raises
    ------
    ValueError
        If `a` and `b` hold different numbers of expressions.
    """
    left, right = _flat(a), _flat(b)
    if len(left) != len(right):
        raise ValueError(
            f"equal compares expressions one to one; got {len(left)} against {len(right)}."
        )
    return all(_is_zero(p - q) for p, q in zip(left, right))


def _is_zero(difference) -> bool:
    """Exactly zero: a common denominator with an expanded numerator, then sympy's full simplify."""
    return sp.expand(sp.together(difference)) == 0 or sp.simplify(difference) == 0


def numeric_backward(sym: Symbols, gradient: tuple) -> Callable:
    """Turn a symbolic gradient (e.g. :func:`direct_gradient`) into ``f(dy, x, gamma, eps) -> dx``
    for numpy vectors of length H (chapter "Gradients through LayerNorm").

    The returned function raises ValueError when a vector is not of shape (H,)
    or eps is negative, through :mod:`~lnlib.validation`.
    """
    args = [*sym.dy, *sym.x, *sym.gamma, sym.eps]
    compiled = sp.lambdify(args, list(gradient), modules="numpy")

    def backward(dy, x, gamma, eps):
        vectors = [
            as_float_array(value, name) for value, name in ((dy, "dy"), (x, "x"), (gamma, "gamma"))
        ]
        for value, name in zip(vectors, ("dy", "x", "gamma")):
            if value.shape != (sym.H,):
                raise ValueError(
                    f"{name} must be a vector of shape ({sym.H},), the width this gradient was "
                    f"derived for; got shape {value.shape}."
                )
        return np.array(compiled(*vectors[0], *vectors[1], *vectors[2], check_eps(eps)))

    return backward


@dataclass(frozen=True)
class RMSForward:
    r"""RMS norm's forward pass as sympy expressions in the inputs x (chapter "Gradients through
    LayerNorm", section "RMSNorm's backward pass").

    ``mean_square`` is :math:`\frac1H\sum_i x_i^2`, ``rms`` its divisor
    :math:`\sqrt{\mathrm{mean\_square} + \varepsilon}`; ``loss`` is :math:`\sum_i dy_i y_i`.
    """

    mean_square: sp.Expr
    rms: sp.Expr
    xhat: tuple
    y: tuple
    loss: sp.Expr


def rms_forward(sym: Symbols) -> RMSForward:
    r"""RMS norm from its definition, :math:`y_i = \gamma_i x_i / \sqrt{\operatorname{mean}(x^2) +
    \varepsilon}`, and its loss (chapter "Gradients through LayerNorm", section "RMSNorm's backward
    pass").

    Uses the symbols of :func:`make_symbols` (beta, mean and var are not used).
    """
    mean_square = sum(xi**2 for xi in sym.x) / sym.H
    rms = sp.sqrt(mean_square + sym.eps)
    xhat = tuple(xi / rms for xi in sym.x)
    y = tuple(g * xh for g, xh in zip(sym.gamma, xhat))
    loss = sum(d * yi for d, yi in zip(sym.dy, y))
    return RMSForward(mean_square=mean_square, rms=rms, xhat=xhat, y=y, loss=loss)


def rms_direct_gradient(sym: Symbols) -> tuple:
    """dL/dx_j of RMS norm, by differentiating the whole forward expression (chapter "Gradients
    through LayerNorm", section "RMSNorm's backward pass")."""
    loss = rms_forward(sym).loss
    return tuple(sp.diff(loss, xj) for xj in sym.x)


def rms_chain_rule(sym: Symbols) -> dict:
    r"""Backpropagate RMS norm node by node through :math:`x \to m \to \hat x \to y \to L` (chapter
    "Gradients through LayerNorm", section "RMSNorm's backward pass").

    The mean square :math:`m = \frac1H\sum_i x_i^2` is a node of its own (the symbol ``m``),
    :math:`\hat x_i = x_i / \sqrt{m + \varepsilon}`; every local derivative is taken by
    sympy on the node's definition, then m is replaced by its definition.

    Returns
    -------
    dict
        ``dxhat`` (tuple over i), ``dms`` (dL/dm) and ``dx`` (tuple over j), in x and the
        parameters.
    """
    ms = sp.Symbol("m", nonnegative=True)
    xhat = [xi / sp.sqrt(ms + sym.eps) for xi in sym.x]
    ms_node = sum(xi**2 for xi in sym.x) / sym.H
    xhat_s = sp.symbols(f"xhat_1:{sym.H + 1}", real=True)
    loss = sum(d * g * xh for d, g, xh in zip(sym.dy, sym.gamma, xhat_s))
    dxhat = tuple(sp.diff(loss, xh) for xh in xhat_s)
    dms = sum(g * sp.diff(xh, ms) for g, xh in zip(dxhat, xhat))
    dx = (
        sum(g * sp.diff(xh, xj) for g, xh in zip(dxhat, xhat)) + dms * sp.diff(ms_node, xj)
        for xj in sym.x
    )
    definition = {ms: ms_node}
    return {
        "dxhat": dxhat,
        "dms": dms.subs(definition),
        "dx": tuple(e.subs(definition) for e in dx),
    }


def rms_closed_form_gradient(sym: Symbols) -> tuple:
    r"""The closed form :math:`(d\hat x_j - \hat x_j \operatorname{mean}(d\hat x\,\hat x)) /
    \sqrt{\operatorname{mean}(x^2) + \varepsilon}` in x (chapter "LayerNorm and its family")."""
    fwd = rms_forward(sym)
    dxhat = [d * g for d, g in zip(sym.dy, sym.gamma)]
    mean_dxhat_xhat = sum(d * xh for d, xh in zip(dxhat, fwd.xhat)) / sym.H
    return tuple((d - xh * mean_dxhat_xhat) / fwd.rms for d, xh in zip(dxhat, fwd.xhat))


def batch_forward(sym: Symbols) -> Forward:
    r"""Batch norm of one feature over a batch of H samples :math:`x_1, \dots, x_H`, and its loss
    (chapter "LayerNorm and its family").

    LayerNorm's statistics, taken over the batch, with one gain :math:`\gamma_1` and bias
    :math:`\beta_1` that every sample shares: :math:`y_n = \gamma_1 \hat x_n + \beta_1`.
    """
    fwd = forward(sym)
    y = tuple(sym.gamma[0] * xh + sym.beta[0] for xh in fwd.xhat)
    loss = sum(d * yi for d, yi in zip(sym.dy, y))
    return Forward(
        mean=fwd.mean, var=fwd.var, sqrt_var_eps=fwd.sqrt_var_eps, xhat=fwd.xhat, y=y, loss=loss
    )


def batch_direct_gradient(sym: Symbols) -> dict:
    """dL/dx_n, dL/dgamma and dL/dbeta of :func:`batch_forward`, by differentiating the whole loss
    (chapter "LayerNorm and its family").

    Returns
    -------
    dict
        ``dx`` (tuple over n), ``dgamma`` and ``dbeta`` (expressions).
    """
    loss = batch_forward(sym).loss
    return {
        "dx": tuple(sp.diff(loss, xn) for xn in sym.x),
        "dgamma": sp.diff(loss, sym.gamma[0]),
        "dbeta": sp.diff(loss, sym.beta[0]),
    }


def batch_chain_rule(sym: Symbols) -> dict:
    r"""Backpropagate batch norm node by node, :math:`x \to (\mu, \sigma^2) \to \hat x \to y \to L`
    (chapter "LayerNorm and its family").

    The steps from x to :math:`\hat x` are :func:`chain_rule`'s local steps (the same graph,
    its statistics over the batch); the loss :math:`\sum_n dy_n (\gamma_1 \hat x_n + \beta_1)`
    gives :math:`d\hat x_n = \gamma_1 dy_n`, and the shared gain and bias collect one term
    per sample that uses them.

    Returns
    -------
    dict
        ``dxhat`` (tuple over n), ``dvar``, ``dmean``, ``dx`` (tuple over n), ``dgamma``, ``dbeta``,
        in x, mu, sigma^2 and the parameters (:func:`substitute_statistics` replaces mu and
        sigma^2).
    """
    steps = chain_rule(sym)
    xhat_s = sp.symbols(f"xhat_1:{sym.H + 1}", real=True)
    loss = sum(d * (sym.gamma[0] * xh + sym.beta[0]) for d, xh in zip(sym.dy, xhat_s))
    xhat = {xh: (xn - sym.mean) / sp.sqrt(sym.var + sym.eps) for xh, xn in zip(xhat_s, sym.x)}
    return {
        **_backpropagate(
            steps["local"], steps["upstream"], tuple(sp.diff(loss, xh) for xh in xhat_s)
        ),
        "dgamma": sp.diff(loss, sym.gamma[0]).subs(xhat),
        "dbeta": sp.diff(loss, sym.beta[0]),
    }


def batch_closed_form_gradient(sym: Symbols) -> dict:
    r"""Batch norm's closed form in x (chapter "LayerNorm and its family").

    :math:`dx_n = \frac{r}{N}\big(N d\hat x_n - \sum_m d\hat x_m - \hat x_n \sum_m d\hat x_m \hat
    x_m\big)` with :math:`d\hat x = \gamma_1 dy`, :math:`r = 1/\sqrt{\sigma^2 + \varepsilon}` and N
    = H, :math:`d\gamma = \sum_n dy_n \hat x_n`, :math:`d\beta = \sum_n dy_n`.

    Returns
    -------
    dict
        ``dx`` (tuple over n), ``dgamma`` and ``dbeta``.
    """
    fwd, N = batch_forward(sym), sym.H
    dxhat = [sym.gamma[0] * d for d in sym.dy]
    sum_dxhat = sum(dxhat)
    sum_dxhat_xhat = sum(d * xh for d, xh in zip(dxhat, fwd.xhat))
    return {
        "dx": tuple(
            (N * d - sum_dxhat - xh * sum_dxhat_xhat) / (N * fwd.sqrt_var_eps)
            for d, xh in zip(dxhat, fwd.xhat)
        ),
        "dgamma": sum(d * xh for d, xh in zip(sym.dy, fwd.xhat)),
        "dbeta": sum(sym.dy),
    }


def _flat(value) -> list:
    """The expressions of a matrix, tuple or list, or a one-element list for a single expression."""
    if isinstance(value, sp.MatrixBase):
        return list(value)
    if isinstance(value, (tuple, list)):
        return list(value)
    return [value]
