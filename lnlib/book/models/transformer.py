r"""A tiny transformer in numpy, post-norm or pre-norm, with a hand-written backward pass.

One layer is two residual sub-layers, single-head self-attention and a
two-layer ReLU feed-forward network (FFN), arranged in one of two ways
(Xiong et al., 2020):

.. math::

    \text{post-norm:}\quad x' = \mathrm{LN}(x + \mathrm{Attn}(x)),
    \qquad x_{l+1} = \mathrm{LN}(x' + \mathrm{FFN}(x'))

    \text{pre-norm:}\quad x' = x + \mathrm{Attn}(\mathrm{LN}(x)),
    \qquad x_{l+1} = x' + \mathrm{FFN}(\mathrm{LN}(x'))

and a pre-norm stack ends with one more LayerNorm. Weights are Xavier-normal,
with no biases, and every LayerNorm has gamma = 1, beta = 0, as at
initialization. Every piece has a forward function that returns its output and
a cache, and a backward function that takes the upstream gradient and the
cache; LayerNorm is :func:`model_norm`, the textbook formula, held to
:func:`lnlib.layer_norm` and :func:`lnlib.backward.layer_norm_backward` by the tests.
The chapter "Pre-norm vs post-norm" explains the model and uses
:func:`lnlib.book.experiments.pre_post_norm.init_profile` to measure the residual stream and the
weight gradients at initialization.

A residual sub-layer is wired by a :class:`SublayerRule`, the placement as data: post and pre
here, and the rules :mod:`lnlib.book.models.placements` builds for Peri-LN, OLMo 2, Mix-LN,
DeepNorm and LN scaling run through the same :func:`sublayer_forward` and :func:`sublayer_backward`.

Shapes: activations are ``(batch, tokens, width)``; a layer's weights are a
dict with ``Wq, Wk, Wv, Wo`` (width x width) and ``W1`` (width x ffn_width),
``W2`` (ffn_width x width).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...backward import layer_norm_backward
from ...forward import layer_norm
from ...validation import as_float_array, check_count
from .dyt import dyt, dyt_backward

__all__ = [
    "PLACEMENTS",
    "SUBLAYER_KINDS",
    "SublayerRule",
    "attention_backward",
    "attention_forward",
    "block_backward",
    "block_forward",
    "check_activations",
    "check_placement",
    "ffn_backward",
    "ffn_forward",
    "init_layer",
    "init_stack",
    "loss_gradient_norm",
    "MODEL_EPS",
    "NORMS",
    "check_norm",
    "model_norm",
    "model_norm_backward",
    "model_rms_norm",
    "model_rms_norm_backward",
    "norm_backward",
    "norm_forward",
    "mse_loss",
    "softmax",
    "softmax_backward",
    "stack_backward",
    "stack_forward",
    "sublayer_backward",
    "sublayer_forward",
    "weight_gradient",
    "xavier_normal",
]

#: The two places a LayerNorm can sit in a residual sub-layer, in the order training's sweeps store
#: them.
PLACEMENTS = ("post", "pre")

ATTENTION_WEIGHTS = ("Wq", "Wk", "Wv", "Wo")
FFN_WEIGHTS = ("W1", "W2")


# --- checks -----------------------------------------------------------------------------------


def check_placement(value) -> str:
    """Return `value` after checking it is 'post' or 'pre' (the placements of chapter "Pre-norm vs
    post-norm")."""
    if value not in PLACEMENTS:
        raise ValueError(f"placement must be 'post' or 'pre'; got {value!r}.")
    return value


def check_activations(x, width: int | None = None) -> np.ndarray:
    """Check a (batch, tokens, width) activation array, as a float array (chapter "Pre-norm vs
    post-norm")."""
    x = as_float_array(x, "x")
    if x.ndim != 3:
        raise ValueError(f"x must have shape (batch, tokens, width); got shape {x.shape}.")
    if width is not None and x.shape[-1] != width:
        raise ValueError(f"x has width {x.shape[-1]}, but the weights expect width {width}.")
    return x


# --- initialization ---------------------------------------------------------------------------


def xavier_normal(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    """A fan_in x fan_out matrix with N(0, 2 / (fan_in + fan_out)) entries, Glorot & Bengio's
    Xavier-normal (chapter "Pre-norm vs post-norm")."""
    return rng.normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), size=(fan_in, fan_out))


def init_layer(
    rng: np.random.Generator, width: int, ffn_width: int | None = None
) -> dict[str, np.ndarray]:
    """Xavier-normal weights of one layer (chapter "Pre-norm vs post-norm").

    Parameters
    ----------
    rng : numpy.random.Generator
    width : int
        d, the width of the residual stream.
    ffn_width : int, optional
        The FFN's hidden width. Default: `width`, the setting of Xiong et al.'s analysis.

    Returns
    -------
    dict of str to ndarray
        ``Wq, Wk, Wv, Wo, W1, W2``.
    """
    width = check_count(width, "width")
    ffn_width = width if ffn_width is None else check_count(ffn_width, "ffn_width")
    weights = {name: xavier_normal(rng, width, width) for name in ATTENTION_WEIGHTS}
    weights["W1"] = xavier_normal(rng, width, ffn_width)
    weights["W2"] = xavier_normal(rng, ffn_width, width)
    return weights


def init_stack(
    depth: int, width: int, *, ffn_width: int | None = None, seed: int = 0
) -> list[dict[str, np.ndarray]]:
    """The weights of `depth` layers, drawn from ``np.random.default_rng(seed)`` (chapter "Pre-norm
    vs post-norm")."""
    depth = check_count(depth, "depth")
    rng = np.random.default_rng(seed)
    return [init_layer(rng, width, ffn_width) for _ in range(depth)]


# --- softmax and attention --------------------------------------------------------------------


def softmax(s: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along `axis`, shifted by the maximum so that exp never overflows (chapter "Pre-norm
    vs post-norm")."""
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_backward(da: np.ndarray, a: np.ndarray, axis: int = -1) -> np.ndarray:
    r"""Gradient through softmax: :math:`ds = a \odot (da - \sum_j da_j a_j)`, given the output `a`
    (chapter "Pre-norm vs post-norm")."""
    return a * (da - (da * a).sum(axis=axis, keepdims=True))


def attention_forward(
    x, w: dict, *, qk_norm: bool = False, causal: bool = False
) -> tuple[np.ndarray, tuple]:
    r"""Single-head scaled dot-product self-attention, :math:`\mathrm{softmax}(QK^\top/\sqrt
    d)\,V\,W_o` (chapter "Pre-norm vs post-norm").

    Parameters
    ----------
    x : array_like, shape (batch, tokens, width)
    w : dict
        Holds ``Wq, Wk, Wv, Wo``, each width x width.
    qk_norm : bool, default False
        Normalize each query and key over its width (γ = 1, β = 0) before the dot product: QK-norm
        (chapter "LayerNorm after 2020", :mod:`lnlib.book.models.placements`).
    causal : bool, default False
        Let each token attend only to itself and the tokens before it, as a language model
        must (:mod:`lnlib.book.models.language`): the later tokens' weights are exactly 0, so
        :func:`attention_backward` needs nothing more.

    Returns
    -------
    out : ndarray, the shape of `x`
    cache : tuple
        ``(x, q_raw, k_raw, q, k, v, a, context, qk_norm)``: what :func:`attention_backward` needs.
    """
    x = check_activations(x, w["Wq"].shape[0])
    q_raw, k_raw, v = x @ w["Wq"], x @ w["Wk"], x @ w["Wv"]
    q, k = (layer_norm(q_raw), layer_norm(k_raw)) if qk_norm else (q_raw, k_raw)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(x.shape[-1])
    if causal:
        scores = np.where(np.tri(x.shape[1], dtype=bool), scores, -np.inf)
    a = softmax(scores)
    context = a @ v
    return context @ w["Wo"], (x, q_raw, k_raw, q, k, v, a, context, qk_norm)


def attention_backward(dout: np.ndarray, cache: tuple, w: dict) -> tuple[np.ndarray, dict]:
    """Gradients of :func:`attention_forward` with respect to its input and its four weights
    (chapter "Pre-norm vs post-norm").

    Returns
    -------
    dx : ndarray
    grads : dict
        ``Wq, Wk, Wv, Wo``, summed over the batch and the tokens.
    """
    x, q_raw, k_raw, q, k, v, a, context, qk_norm = cache
    grads = {"Wo": weight_gradient(context, dout)}
    dcontext = dout @ w["Wo"].T
    dv = a.transpose(0, 2, 1) @ dcontext
    ds = softmax_backward(dcontext @ v.transpose(0, 2, 1), a) * (1.0 / np.sqrt(x.shape[-1]))
    dq, dk = ds @ k, ds.transpose(0, 2, 1) @ q
    if qk_norm:  # back through the LayerNorms on q and k (chapter "Gradients through LayerNorm")
        dq, dk = layer_norm_backward(dq, q_raw)[0], layer_norm_backward(dk, k_raw)[0]
    grads.update(Wq=weight_gradient(x, dq), Wk=weight_gradient(x, dk), Wv=weight_gradient(x, dv))
    return dq @ w["Wq"].T + dk @ w["Wk"].T + dv @ w["Wv"].T, grads


def weight_gradient(inputs: np.ndarray, doutputs: np.ndarray) -> np.ndarray:
    """dL/dW for ``outputs = inputs @ W``: the sum over batch and tokens of inputs^T doutputs
    (chapter "Pre-norm vs post-norm")."""
    return inputs.reshape(-1, inputs.shape[-1]).T @ doutputs.reshape(-1, doutputs.shape[-1])


# --- feed-forward -----------------------------------------------------------------------------


def ffn_forward(x, w: dict) -> tuple[np.ndarray, tuple]:
    r"""The two-layer ReLU feed-forward network, :math:`\max(0, x W_1)\, W_2` (chapter "Pre-norm vs
    post-norm")."""
    x = check_activations(x, w["W1"].shape[0])
    h = x @ w["W1"]
    r = np.maximum(h, 0.0)
    return r @ w["W2"], (x, h, r)


def ffn_backward(dout: np.ndarray, cache: tuple, w: dict) -> tuple[np.ndarray, dict]:
    """Gradients of :func:`ffn_forward` with respect to its input and ``W1, W2`` (chapter "Pre-norm
    vs post-norm")."""
    x, h, r = cache
    dr = dout @ w["W2"].T
    dh = dr * (h > 0)
    return dh @ w["W1"].T, {"W1": weight_gradient(x, dh), "W2": weight_gradient(r, dout)}


# --- residual sub-layers, blocks, stacks ------------------------------------------------------


#: The models' LayerNorm ε, lnlib.forward.layer_norm's default.
MODEL_EPS = 1e-5


def model_norm(x: np.ndarray) -> tuple[np.ndarray, tuple]:
    """The models' LayerNorm over the last axis (γ = 1, β = 0, ε = :data:`MODEL_EPS`), and what its
    backward needs (chapter "Pre-norm vs post-norm").

    The textbook formula in float64, without :func:`lnlib.forward.layer_norm`'s
    input checks and scaling: a model calls it hundreds of times per run on
    small, finite float64 activations, where those checks cost two thirds of
    the time. ``tests/book/test_transformer.py`` holds it to :func:`lnlib.forward.layer_norm`
    and :func:`lnlib.backward.layer_norm_backward`.

    Returns
    -------
    y : ndarray
        The normalized `x`.
    saved : tuple
        ``(y, rstd)`` for :func:`model_norm_backward`.
    """
    centred = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + MODEL_EPS)
    y = centred * rstd
    return y, (y, rstd)


def model_norm_backward(dy: np.ndarray, saved: tuple) -> np.ndarray:
    """dL/dx of :func:`model_norm` from the upstream gradient and its saved ``(y, rstd)`` (chapter
    "Gradients through LayerNorm")."""
    xhat, rstd = saved
    return (
        dy - dy.mean(axis=-1, keepdims=True) - xhat * np.mean(dy * xhat, axis=-1, keepdims=True)
    ) * rstd


def model_rms_norm(x: np.ndarray) -> tuple[np.ndarray, tuple]:
    r"""The models' RMSNorm over the last axis, :math:`x/\sqrt{\mathrm{mean}(x^2) + \varepsilon}`
    (γ = 1, ε = :data:`MODEL_EPS`), and what its backward needs (chapter "LayerNorm after 2020").

    :func:`model_norm` without the centring: the textbook formula in float64, held by
    ``tests/book/test_transformer.py`` to :func:`lnlib.norms.rms_norm` and
    :func:`lnlib.rms.rms_norm_backward` at the same ε.

    Returns
    -------
    y : ndarray
    saved : tuple
        ``(y, rstd)`` for :func:`model_rms_norm_backward`.
    """
    rstd = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + MODEL_EPS)
    y = x * rstd
    return y, (y, rstd)


def model_rms_norm_backward(dy: np.ndarray, saved: tuple) -> np.ndarray:
    """dL/dx of :func:`model_rms_norm` from the upstream gradient and its saved ``(y, rstd)``
    (chapter "Gradients through LayerNorm", section "RMSNorm's backward pass")."""
    y, rstd = saved
    return (dy - y * np.mean(dy * y, axis=-1, keepdims=True)) * rstd


#: The norms a model can use at every place (:func:`norm_forward`): LayerNorm and RMSNorm.
NORMS = ("layer", "rms")

_NORM_PAIRS = {
    "layer": (model_norm, model_norm_backward),
    "rms": (model_rms_norm, model_rms_norm_backward),
}


def check_norm(value) -> str:
    """Return `value` after checking it is one of :data:`NORMS` (chapter "LayerNorm after
    2020")."""
    if value not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}; got {value!r}.")
    return value


def norm_forward(
    x: np.ndarray, params: dict | None = None, key: str = "", norm: str = "layer"
) -> tuple[np.ndarray, tuple]:
    r"""The norm at one place of a model, and what :func:`norm_backward` needs (chapters "Scale γ
    and shift β", "LayerNorm after 2020").

    Without learned parameters (`params` holds no ``key + "_gamma"``) it is :func:`model_norm`,
    γ = 1 and β = 0 as at initialization (:func:`model_rms_norm` with ``norm="rms"``). With
    ``key + "_gamma"`` and ``key + "_beta"`` (arrays of the width) it is
    :math:`\gamma \odot \mathrm{LN}(x) + \beta`; an RMSNorm's params hold no ``key + "_beta"``
    (:math:`\gamma \odot \mathrm{RMSNorm}(x)`, as today's models have it); with ``key + "_alpha"``
    as well (a 0-d array) it is DyT, :math:`\gamma \odot \tanh(\alpha x) + \beta`
    (:func:`lnlib.book.models.dyt.dyt`), which computes no statistic.
    """
    forward = _NORM_PAIRS[norm][0]
    if params is None or f"{key}_gamma" not in params:
        return forward(x)
    gamma, beta = params[f"{key}_gamma"], params.get(f"{key}_beta", 0.0)
    if f"{key}_alpha" in params:
        return dyt(x, float(params[f"{key}_alpha"]), gamma, beta), (x,)
    y, saved = forward(x)
    return gamma * y + beta, saved


def norm_backward(
    dy: np.ndarray, saved: tuple, params: dict | None = None, key: str = "", norm: str = "layer"
):
    """Gradient of :func:`norm_forward` (with the same `norm`) with respect to its input, and its
    parameters' gradients by name.

    Returns
    -------
    dx : ndarray
    grads : dict
        Empty without learned parameters; else ``key + "_gamma"``, ``key + "_beta"`` where the
        params hold one (and ``key + "_alpha"`` for DyT), summed over the batch and the tokens.
    """
    backward = _NORM_PAIRS[norm][1]
    if params is None or f"{key}_gamma" not in params:
        return backward(dy, saved), {}
    gamma, lead = params[f"{key}_gamma"], tuple(range(dy.ndim - 1))
    grads = {f"{key}_beta": dy.sum(axis=lead)} if f"{key}_beta" in params else {}
    if f"{key}_alpha" in params:
        dx, dalpha, grads[f"{key}_gamma"], _ = dyt_backward(
            dy, saved[0], float(params[f"{key}_alpha"]), gamma
        )
        grads[f"{key}_alpha"] = np.array(dalpha)
        return dx, grads
    grads[f"{key}_gamma"] = np.sum(dy * saved[0], axis=lead)
    return backward(dy * gamma, saved), grads


#: The four ways a residual sub-layer can wire its norm (:class:`SublayerRule`): :data:`PLACEMENTS`
#: here, and Peri-LN's and OLMo 2's, which :mod:`lnlib.book.models.placements` adds.
SUBLAYER_KINDS = (*PLACEMENTS, "peri", "olmo2")


@dataclass(frozen=True)
class SublayerRule:
    r"""How one residual sub-layer is wired: a placement as data (chapters "Pre-norm vs post-norm",
    "LayerNorm after 2020").

    Attributes
    ----------
    kind : str
        One of :data:`SUBLAYER_KINDS`: post :math:`\mathrm{LN}(a x + F(x))`, pre
        :math:`x + F(s\,\mathrm{LN}(x))`, peri :math:`x + \mathrm{LN}(F(\mathrm{LN}(x)))`,
        olmo2 :math:`x + \mathrm{LN}(F(x))`.
    residual : float, default 1
        The residual gain :math:`a` of a post sub-layer (DeepNorm's α).
    norm_scale : float, default 1
        The scale :math:`s` of a pre sub-layer's norm output (LN scaling's :math:`1/\sqrt{\ell}`).
    norm : str, default "layer"
        Which norm each LN of the sub-layer is, one of :data:`NORMS`: LayerNorm or RMSNorm.
    """

    kind: str
    residual: float = 1.0
    norm_scale: float = 1.0
    norm: str = "layer"


def sublayer_forward(x, branch, rule: SublayerRule, params: dict | None = None, name: str = ""):
    """One residual sub-layer wired by `rule`: its output and what :func:`sublayer_backward` needs.

    `branch` maps an input to ``(output, cache)`` (attention or the FFN with one layer's weights).
    Each norm is :func:`norm_forward` with the key ``name + "_in"`` (before the branch) or
    ``name + "_out"`` (after it, or after the residual sum for post): learned γ and β when
    `params` (the layer's weights) hold them, else γ = 1 and β = 0.
    """

    def norm(h, where):
        return norm_forward(h, params, f"{name}_{where}", rule.norm)

    if rule.kind == "post":
        f, f_cache = branch(x)
        y, saved = norm(rule.residual * x + f, "out")
        return y, (saved, f_cache)
    if rule.kind == "pre":
        n, saved = norm(x, "in")
        f, f_cache = branch(rule.norm_scale * n)
        return x + f, (saved, f_cache)
    if rule.kind == "peri":
        n, saved_in = norm(x, "in")
        f, f_cache = branch(n)
        y, saved_out = norm(f, "out")
        return x + y, (saved_in, saved_out, f_cache)
    f, f_cache = branch(x)  # olmo2
    y, saved = norm(f, "out")
    return x + y, (saved, f_cache)


def sublayer_backward(
    dy, cache, branch_backward, rule: SublayerRule, params: dict | None = None, name: str = ""
):
    """Gradient of :func:`sublayer_forward` with respect to its input, and the branch's weight
    gradients.

    The residual adds the identity path's gradient to the branch's; `branch_backward` maps
    ``(upstream gradient, cache)`` to ``(input gradient, weight gradients)``. The gradients
    of the norms' learned parameters, if any, join the branch's (:func:`norm_backward`).
    """
    norm_grads = {}

    def norm(d, saved, where):
        dx, grads = norm_backward(d, saved, params, f"{name}_{where}", rule.norm)
        norm_grads.update(grads)
        return dx

    if rule.kind == "post":
        saved, f_cache = cache
        dz = norm(dy, saved, "out")
        df, grads = branch_backward(dz, f_cache)
        return rule.residual * dz + df, {**grads, **norm_grads}
    if rule.kind == "pre":
        saved, f_cache = cache
        dn, grads = branch_backward(dy, f_cache)
        return dy + rule.norm_scale * norm(dn, saved, "in"), {**grads, **norm_grads}
    if rule.kind == "peri":
        saved_in, saved_out, f_cache = cache
        dn, grads = branch_backward(norm(dy, saved_out, "out"), f_cache)
        return dy + norm(dn, saved_in, "in"), {**grads, **norm_grads}
    saved, f_cache = cache
    dx, grads = branch_backward(norm(dy, saved, "out"), f_cache)
    return dy + dx, {**grads, **norm_grads}


def block_forward(x, w: dict, placement: str) -> tuple[np.ndarray, tuple]:
    """One transformer layer: an attention sub-layer, then an FFN sub-layer (chapter "Pre-norm vs
    post-norm").

    Parameters
    ----------
    x : array_like, shape (batch, tokens, width)
    w : dict
        One layer's weights, as from :func:`init_layer`.
    placement : {"post", "pre"}

    Returns
    -------
    out : ndarray, the shape of `x`
    cache : tuple
        What :func:`block_backward` needs.
    """
    placement = check_placement(placement)
    x = check_activations(x, w["Wq"].shape[0])
    rule = SublayerRule(placement)
    middle, attn_cache = sublayer_forward(x, lambda h: attention_forward(h, w), rule)
    out, ffn_cache = sublayer_forward(middle, lambda h: ffn_forward(h, w), rule)
    return out, (attn_cache, ffn_cache)


def block_backward(
    dout: np.ndarray, cache: tuple, w: dict, placement: str
) -> tuple[np.ndarray, dict]:
    """Gradients of :func:`block_forward` with respect to its input and the layer's six weights
    (chapter "Pre-norm vs post-norm")."""
    attn_cache, ffn_cache = cache
    rule = SublayerRule(check_placement(placement))
    dmiddle, grads = sublayer_backward(dout, ffn_cache, lambda d, c: ffn_backward(d, c, w), rule)
    dx, attn_grads = sublayer_backward(
        dmiddle, attn_cache, lambda d, c: attention_backward(d, c, w), rule
    )
    return dx, {**attn_grads, **grads}


def stack_forward(
    x, weights: list[dict], placement: str
) -> tuple[np.ndarray, list[np.ndarray], list[tuple]]:
    """A stack of layers; a pre-norm stack ends with a final LayerNorm (chapter "Pre-norm vs
    post-norm").

    Returns
    -------
    out : ndarray
        The stack's output (after the final LayerNorm for pre-norm).
    states : list of ndarray
        The residual stream x_0 (the input), x_1, ..., x_L after each layer,
        before any final LayerNorm.
    caches : list of tuple
        One per layer, for :func:`stack_backward`.
    """
    placement = check_placement(placement)
    states, caches = [check_activations(x, weights[0]["Wq"].shape[0])], []
    for w in weights:
        out, cache = block_forward(states[-1], w, placement)
        states.append(out)
        caches.append(cache)
    out = model_norm(states[-1])[0] if placement == "pre" else states[-1]
    return out, states, caches


def stack_backward(
    dout: np.ndarray, states: list, caches: list, weights: list[dict], placement: str
) -> tuple[list[np.ndarray], list[dict]]:
    """Gradients of :func:`stack_forward` (chapter "Pre-norm vs post-norm").

    Returns
    -------
    stream_grads : list of ndarray
        dL/dx_l for every state of the residual stream, x_0 (the input) to x_L.
    grads : list of dict
        Every layer's weight gradients, bottom layer first.
    """
    stream_grads = [
        model_norm_backward(dout, model_norm(states[-1])[1]) if placement == "pre" else dout
    ]
    grads = []
    for w, cache in zip(reversed(weights), reversed(caches)):
        grad, layer_grads = block_backward(stream_grads[-1], cache, w, placement)
        stream_grads.append(grad)
        grads.append(layer_grads)
    return stream_grads[::-1], grads[::-1]


def mse_loss(y: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray]:
    r"""Half the squared error per token, :math:`\frac{1}{2BT}\sum \|y - t\|^2`, and its gradient
    with respect to y (chapter "Pre-norm vs post-norm")."""
    target = as_float_array(target, "target")
    if target.shape != y.shape:
        raise ValueError(
            f"target must have the shape of the output, {y.shape}; got shape {target.shape}."
        )
    count = y.shape[0] * y.shape[1]
    diff = y - target
    return 0.5 * float(np.sum(diff * diff)) / count, diff / count


def loss_gradient_norm(x, target, weights: list[dict], placement: str) -> float:
    """The Frobenius norm of all weight gradients of :func:`mse_loss` for one batch (chapter
    "Pre-norm vs post-norm").

    Parameters
    ----------
    x : array_like, shape (batch, tokens, width)
        The stack's input.
    target : array_like, shape (batch, tokens, width)
        What the stack's output is compared with.
    weights : list of dict
        One dict per layer, as from :func:`init_stack`.
    placement : {"post", "pre"}

    Returns
    -------
    float
        The square root of the sum of squares of every entry of every layer's six weight gradients.
    """
    out, states, caches = stack_forward(x, weights, placement)
    _, grads = stack_backward(mse_loss(out, target)[1], states, caches, weights, placement)
    return float(np.sqrt(sum(np.sum(g * g) for layer in grads for g in layer.values())))
