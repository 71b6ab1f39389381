r"""Where the norm sits after 2020: seven placements of LayerNorm, forward and backward.

Each layer of :mod:`lnlib.book.models.transformer` (attention, then a ReLU FFN, each in a
residual sub-layer :math:`F`) with the norm placed one of these ways; ℓ is
the layer's index, 1 to L:

=========  ===========================================================================
placement     one residual sub-layer, and its source
=========  ===========================================================================
post       :math:`y = \mathrm{LN}(x + F(x))`; Vaswani et al. (2017)
pre        :math:`y = x + F(\mathrm{LN}(x))`; Xiong et al. (2020)
peri       :math:`y = x + \mathrm{LN}(F(\mathrm{LN}(x)))`; CogView's Sandwich-LN (Ding et
           al., 2021), named Peri-LN by Kim et al. (2025)
olmo2      :math:`y = x + \mathrm{LN}(F(x))`; Swin Transformer V2's res-post-norm (Liu et
           al., 2022), OLMo 2 (2025)
mixln      post in layers ℓ ≤ ⌊L/4⌋, pre above; Li et al. (2025)
deepnorm   :math:`y = \mathrm{LN}(\alpha x + F(x))`, β-scaled init; Wang et al. (2022)
lns        :math:`y = x + F(\mathrm{LN}(x)/\sqrt{\ell})`; Sun et al. (2025)
=========  ===========================================================================

Every placement whose residual stream is not normalized at its top (all but
post and deepnorm) ends with one more LayerNorm. DeepNorm uses Wang et al.'s
decoder-only constants :math:`\alpha = (2L)^{1/4}` and
:math:`\beta = (8L)^{-1/4}` (their Table 1 writes M for the decoder's
layers, N for the encoder's); β multiplies the Xavier initialization of
``Wv, Wo, W1, W2``. Optionally every attention normalizes its queries and
keys (:mod:`lnlib.book.models.placements`), and ``qk_scale`` multiplies ``Wq`` and ``Wk``
(the growth QK-norm guards against). Norms have scale γ = 1 and shift 0, as
at initialization. ``norm="rms"`` makes every norm of the stack (each
sub-layer's and the final one) an RMSNorm, as RMSNorm models do; QK-norm,
where asked, stays a LayerNorm. The chapter "LayerNorm after 2020" measures
these stacks at initialization with :func:`placement_profile`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...backward import layer_norm_backward
from ...forward import layer_norm
from ...validation import check_count
from ..tools import prose
from .transformer import (
    ATTENTION_WEIGHTS,
    FFN_WEIGHTS,
    SublayerRule,
    attention_backward,
    attention_forward,
    check_activations,
    check_norm,
    ffn_backward,
    ffn_forward,
    init_layer,
    model_rms_norm,
    model_rms_norm_backward,
    mse_loss,
    sublayer_backward,
    sublayer_forward,
)

__all__ = [
    "MIXLN_RATIO",
    "PLACEMENTS",
    "PLACEMENT_LABELS",
    "PlacementProfile",
    "check_placement",
    "deepnorm_constants",
    "init_weights",
    "mixln_post_layers",
    "placement_backward",
    "placement_forward",
    "placement_profile",
    "profile_table",
    "SUMMARY_MEASURES",
    "placement_summary",
    "typical",
    "sublayer_gradient_gains",
    "sublayer_rules",
    "attention_entropy",
    "logit_statistics",
]

#: The placements, in the order the chapter introduces them.
PLACEMENTS = ("post", "pre", "peri", "olmo2", "mixln", "deepnorm", "lns")

#: How the chapter and its figures name each placement.
PLACEMENT_LABELS = {
    "post": "Post-LN",
    "pre": "Pre-LN",
    "peri": "Peri-LN",
    "olmo2": "OLMo 2 reordered",
    "mixln": "Mix-LN",
    "deepnorm": "DeepNorm",
    "lns": "LN scaling",
}

#: The fraction of layers (from the bottom) that Mix-LN makes post-norm, Li et al.'s default α =
#: 0.25.
MIXLN_RATIO = 0.25

_NO_FINAL_NORM = ("post", "deepnorm")


def check_placement(value) -> str:
    """Return `value` after checking it is one of :data:`PLACEMENTS` (chapter "LayerNorm after
    2020")."""
    if value not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}; got {value!r}.")
    return value


def deepnorm_constants(depth: int) -> tuple[float, float]:
    r"""Wang et al.'s DeepNorm constants for a decoder-only stack of `depth` layers: :math:`\alpha =
    (2M)^{1/4}`, :math:`\beta = (8M)^{-1/4}` with M = `depth` (chapter "LayerNorm after 2020").

    The paper's Table 1 counts decoder layers M and encoder layers N; the decoder-only row uses M
    only.
    """
    depth = check_count(depth, "depth")
    return (2.0 * depth) ** 0.25, (8.0 * depth) ** -0.25


def mixln_post_layers(depth: int, ratio: float = MIXLN_RATIO) -> int:
    """How many of the bottom layers Mix-LN makes post-norm: ⌊ratio · L⌋ (chapter "LayerNorm after
    2020")."""
    return int(np.floor(ratio * check_count(depth, "depth")))


def sublayer_rules(placement: str, depth: int, norm: str = "layer") -> list[SublayerRule]:
    """One rule per layer, bottom first (both sub-layers of a layer share it), every norm a
    LayerNorm or, with ``norm="rms"``, an RMSNorm (chapter "LayerNorm after 2020")."""
    placement, depth, norm = (
        check_placement(placement),
        check_count(depth, "depth"),
        check_norm(norm),
    )
    return [replace(rule, norm=norm) for rule in _layer_rules(placement, depth)]


def _layer_rules(placement: str, depth: int) -> list[SublayerRule]:
    if placement == "deepnorm":
        return [SublayerRule("post", residual=deepnorm_constants(depth)[0])] * depth
    if placement == "mixln":
        n_post = mixln_post_layers(depth)
        return [SublayerRule("post" if ell <= n_post else "pre") for ell in range(1, depth + 1)]
    if placement == "lns":
        return [SublayerRule("pre", norm_scale=1.0 / np.sqrt(ell)) for ell in range(1, depth + 1)]
    return [SublayerRule(placement)] * depth


def _check_scale(value, name: str) -> float:
    if not np.isscalar(value) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number; got {value!r}.")
    return float(value)


def init_weights(
    placement: str,
    depth: int,
    width: int,
    *,
    seed: int = 0,
    qk_scale: float = 1.0,
    out_scale: float = 1.0,
    rng: np.random.Generator | None = None,
) -> list[dict[str, np.ndarray]]:
    """Xavier-normal weights for `depth` layers, with DeepNorm's β where the placement asks for it
    (chapter "LayerNorm after 2020").

    ``Wq`` and ``Wk`` are multiplied by `qk_scale`; ``Wo`` and ``W2``, the
    last matrix of each branch, by `out_scale` (a stand-in for branch
    outputs that grow in training). `rng` overrides `seed`.
    """
    placement, depth = check_placement(placement), check_count(depth, "depth")
    qk_scale, out_scale = _check_scale(qk_scale, "qk_scale"), _check_scale(out_scale, "out_scale")
    rng = np.random.default_rng(seed) if rng is None else rng
    beta = deepnorm_constants(depth)[1] if placement == "deepnorm" else 1.0
    weights = [init_layer(rng, width) for _ in range(depth)]
    for w in weights:
        for name in ("Wv", "Wo", "W1", "W2"):
            w[name] = w[name] * beta
        for name in ("Wq", "Wk"):
            w[name] = w[name] * qk_scale
        for name in ("Wo", "W2"):
            w[name] = w[name] * out_scale
    return weights


# --- the stack ------------------------------------------------------------------------------------


def placement_forward(
    x,
    weights: list[dict],
    placement: str,
    *,
    qk_norm: bool = False,
    causal: bool = False,
    final_norm: bool = True,
    norm: str = "layer",
):
    """A stack of layers with the norm placed by `placement` (chapter "LayerNorm after 2020").

    Each layer's norms are :func:`lnlib.book.models.transformer.norm_forward`, named
    ``attn_in``, ``attn_out``, ``ffn_in``, ``ffn_out``: learned γ and β (or DyT's α) when a
    layer's weights hold them (:mod:`lnlib.book.models.language` trains them), else γ = 1, β = 0.
    `causal` makes every attention causal; ``final_norm=False`` leaves the final LayerNorm to
    the caller (a language model's, with its own γ and β). ``norm="rms"`` makes every norm of the
    stack, the final one included, an RMSNorm (γ = 1).

    Returns
    -------
    out : ndarray
        The stack's output (after the final LayerNorm where the placement has one and `final_norm`).
    states : list of ndarray
        The residual stream x_0 (the input), x_1, ..., x_L after each layer, before any final
        LayerNorm.
    caches : list
        What :func:`placement_backward` needs.
    """
    placement = check_placement(placement)
    states, caches = [check_activations(x, weights[0]["Wq"].shape[0])], []
    for w, rule in zip(weights, sublayer_rules(placement, len(weights), norm)):
        middle, attn_cache = sublayer_forward(
            states[-1],
            lambda h: attention_forward(h, w, qk_norm=qk_norm, causal=causal),
            rule,
            w,
            "attn",
        )
        out, ffn_cache = sublayer_forward(middle, lambda h: ffn_forward(h, w), rule, w, "ffn")
        states.append(out)
        caches.append((attn_cache, ffn_cache))
    if placement in _NO_FINAL_NORM or not final_norm:
        return states[-1], states, caches
    return _final_norm(states[-1], norm), states, caches


def _final_norm(x, norm):
    return layer_norm(x) if norm == "layer" else model_rms_norm(x)[0]


def _final_norm_backward(dout, x, norm):
    if norm == "layer":
        return layer_norm_backward(dout, x)[0]
    return model_rms_norm_backward(dout, model_rms_norm(x)[1])


def placement_backward(
    dout,
    states: list,
    caches: list,
    weights: list[dict],
    placement: str,
    *,
    final_norm: bool = True,
    norm: str = "layer",
):
    """Gradients of :func:`placement_forward` (chapter "LayerNorm after 2020").

    `final_norm` and `norm` as in the forward pass: with ``final_norm=False``, `dout` is the
    gradient with respect to x_L.

    Returns
    -------
    stream_grads : list of ndarray
        dL/dx_l for l = 0 (the input) .. L.
    grads : list of dict
        Every layer's six weight gradients, bottom layer first.
    """
    placement = check_placement(placement)
    top = placement in _NO_FINAL_NORM or not final_norm
    stream_grads = [dout if top else _final_norm_backward(dout, states[-1], norm)]
    grads = []
    rules = sublayer_rules(placement, len(weights), norm)
    for w, cache, rule in zip(reversed(weights), reversed(caches), reversed(rules)):
        attn_cache, ffn_cache = cache
        dmiddle, ffn_grads = sublayer_backward(
            stream_grads[-1], ffn_cache, lambda d, c: ffn_backward(d, c, w), rule, w, "ffn"
        )
        dx, attn_grads = sublayer_backward(
            dmiddle, attn_cache, lambda d, c: attention_backward(d, c, w), rule, w, "attn"
        )
        stream_grads.append(dx)
        grads.append({**attn_grads, **ffn_grads})
    return stream_grads[::-1], grads[::-1]


# --- the measurements of the chapter --------------------------------------------------------------


@dataclass(frozen=True)
class PlacementProfile:
    r"""One placement's stack at initialization, one row per seed (chapter "LayerNorm after 2020").

    Attributes
    ----------
    placement : str
        One of :data:`PLACEMENTS`.
    depth, width : int
        As passed to :func:`placement_profile`.
    stream_sq : ndarray, shape (seeds, depth + 1)
        Mean over tokens of :math:`\lVert x_l \rVert^2 / d` (d the width), for l = 0 (the input) to
        the depth: the hidden-state variance.
    grad_norm : ndarray, shape (seeds, depth)
        Frobenius norm of all six weight gradients of each layer.
    angle : ndarray, shape (seeds, depth)
        Mean over tokens of the angular distance
        :math:`\arccos(\cos(x_{l-1}, x_l)) / \pi` between a layer's
        input and output: 0 when the layer leaves its input's direction unchanged.
    entropy : ndarray, shape (seeds, depth)
        Mean attention entropy of each layer, in nats.
    norm : str
        ``"layer"`` or ``"rms"``: the norm at every place of the stack.
    """

    placement: str
    depth: int
    width: int
    stream_sq: np.ndarray
    grad_norm: np.ndarray
    angle: np.ndarray
    entropy: np.ndarray
    norm: str = "layer"


def _angular_distance(a: np.ndarray, b: np.ndarray) -> float:
    cos = np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return float(np.mean(np.arccos(np.clip(cos, -1.0, 1.0))) / np.pi)


def placement_profile(
    placement: str,
    depth: int,
    width: int = 32,
    *,
    seeds: int = 3,
    tokens: int = 8,
    batch: int = 2,
    qk_norm: bool = False,
    qk_scale: float = 1.0,
    out_scale: float = 1.0,
    first_seed: int = 0,
    norm: str = "layer",
) -> PlacementProfile:
    """Measure one placement's stack at initialization over several seeds (chapter "LayerNorm after
    2020").

    For each seed: fresh weights (:func:`init_weights`), a batch of inputs and
    targets with N(0, 1) entries, one forward and one backward pass of
    :func:`lnlib.book.models.transformer.mse_loss`.

    Parameters
    ----------
    placement : str
        One of :data:`PLACEMENTS`.
    depth : int
        L, the number of layers.
    width : int, default 32
        d, the width of the residual stream.
    seeds : int, default 3
        Independent repetitions (weights and data).
    tokens : int, default 8
        Sequence length.
    batch : int, default 2
        Number of sequences per batch.
    qk_norm : bool
        Normalize queries and keys in every attention.
    qk_scale : float, default 1
        Multiplies ``Wq`` and ``Wk`` (:func:`init_weights`).
    out_scale : float, default 1
        Multiplies ``Wo`` and ``W2``, the last matrix of each branch.
    first_seed : int
        Seed s uses ``np.random.default_rng(first_seed + s)``.
    norm : {"layer", "rms"}
        Every norm of the stack a LayerNorm or an RMSNorm; the weights and inputs of a seed are the
        same either way.
    """
    placement, norm = check_placement(placement), check_norm(norm)
    depth, width, seeds = (
        check_count(depth, "depth"),
        check_count(width, "width"),
        check_count(seeds, "seeds"),
    )
    tokens, batch = check_count(tokens, "tokens"), check_count(batch, "batch")
    stream_sq, grad_norm = np.empty((seeds, depth + 1)), np.empty((seeds, depth))
    angle, entropy = np.empty((seeds, depth)), np.empty((seeds, depth))
    for s in range(seeds):
        rng = np.random.default_rng(first_seed + s)
        weights = init_weights(
            placement, depth, width, qk_scale=qk_scale, out_scale=out_scale, rng=rng
        )
        x, target = rng.normal(size=(batch, tokens, width)), rng.normal(size=(batch, tokens, width))
        out, states, caches = placement_forward(x, weights, placement, qk_norm=qk_norm, norm=norm)
        _, grads = placement_backward(
            mse_loss(out, target)[1], states, caches, weights, placement, norm=norm
        )
        stream_sq[s] = [np.mean(np.sum(h * h, axis=-1)) / width for h in states]
        grad_norm[s] = [
            np.sqrt(sum(np.sum(g[n] ** 2) for n in ATTENTION_WEIGHTS + FFN_WEIGHTS)) for g in grads
        ]
        angle[s] = [_angular_distance(a, b) for a, b in zip(states[:-1], states[1:])]
        entropy[s] = [attention_entropy(cache[0][-1][6]).mean() for cache in caches]
    return PlacementProfile(placement, depth, width, stream_sq, grad_norm, angle, entropy, norm)


def profile_table(
    depth: int, width: int = 32, *, progress: bool = False, **kwargs
) -> dict[str, PlacementProfile]:
    """:func:`placement_profile` of every placement at one depth: the data of the chapter's
    comparison figure.

    ``progress=True`` shows a bar in a reader's notebook
    (:func:`lnlib.book.tools.progress.progress`); the other keywords go to
    :func:`placement_profile`.
    """
    placements = PLACEMENTS
    if progress:
        from lnlib.book.tools.progress import progress as bar

        label = " with RMSNorm" if kwargs.get("norm") == "rms" else ""
        placements = bar(
            PLACEMENTS,
            f"measuring {len(PLACEMENTS)} placements at depth {depth}{label}",
            unit="placement",
        )
    return {
        placement: placement_profile(placement, depth, width, **kwargs) for placement in placements
    }


#: The per-seed summaries of :func:`placement_summary`: key, axis label, whether a log scale reads
#: it better.
SUMMARY_MEASURES = {
    "top": ("variance after L layers\n$\\|x_L\\|^2/H$", True),
    "slope": ("growth per layer\n(slope of $\\|x_\\ell\\|^2/H$)", False),
    "angle_top": ("top layer's turn\nangle$(x_{L-1}, x_L)/\\pi$", True),
    "entropy": ("attention entropy\n(nats)", False),
    "grad_ratio": ("gradient, top layer\nover bottom layer", True),
    "grad_spread": ("gradient spread\n(sd/mean of layers)", False),
}


def placement_summary(profile: PlacementProfile) -> dict[str, np.ndarray]:
    r"""One number per seed for each of :data:`SUMMARY_MEASURES` (chapter "LayerNorm after 2020").

    ``top`` is :math:`\lVert x_L \rVert^2/d`; ``slope`` the least-squares slope of
    :math:`\lVert x_\ell \rVert^2/d` against ℓ = 0..L; ``angle_top`` the top layer's angle
    (over π); ``entropy`` the attention entropy averaged over the layers; ``grad_ratio`` the top
    layer's weight-gradient norm over the bottom layer's; ``grad_spread`` the standard deviation
    over the mean of the per-layer gradient norms.

    Returns
    -------
    dict of str to ndarray, each of shape (seeds,)
    """
    layers = np.arange(profile.depth + 1)
    grads = profile.grad_norm
    return {
        "top": profile.stream_sq[:, -1],
        "slope": np.polyfit(layers, profile.stream_sq.T, 1)[0],
        "angle_top": profile.angle[:, -1],
        "entropy": profile.entropy.mean(axis=1),
        "grad_ratio": grads[:, -1] / grads[:, 0],
        "grad_spread": grads.std(axis=1) / grads.mean(axis=1),
    }


def _at_place(value: float, place: int) -> str:
    return f"{round(value, place):.{max(place, 0)}f}"


def typical(values) -> dict[str, prose.ProseNumber]:
    """The median and range of a skewed positive quantity over seeds, at the digits the seeds
    support.

    Chapter "LayerNorm after 2020" summarizes gradient norms and ratios that spread over an order
    of magnitude between seeds, where a mean ± sd would mislead. The median is rounded at the
    decimal place of its standard error, estimated on the log scale (1.25 sd(ln v)/√n, times the
    median), keeping at least one significant digit; the smallest and largest value keep two
    significant digits.

    Returns
    -------
    dict with ``"median"``, ``"min"`` and ``"max"`` (:class:`lnlib.book.tools.prose.ProseNumber`)
    """
    values = np.asarray(values, dtype=float).ravel()
    if values.size < 2 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(
            f"typical needs at least two positive finite values; got {values.tolist()!r}"
        )
    median = float(np.median(values))
    error = median * 1.2533 * float(np.log(values).std(ddof=1)) / np.sqrt(values.size)
    place = -int(np.floor(np.log10(median)))  # one significant digit at least
    if error > 0:
        place = max(place, -int(np.ceil(np.log10(error))))

    def two_digits(v: float) -> prose.ProseNumber:
        return prose.ProseNumber(_at_place(v, 1 - int(np.floor(np.log10(v)))), v)

    return {
        "median": prose.ProseNumber(_at_place(median, place), median),
        "min": two_digits(float(values.min())),
        "max": two_digits(float(values.max())),
    }


def sublayer_gradient_gains(
    placement: str,
    depth: int,
    width: int = 32,
    *,
    seeds: int = 3,
    tokens: int = 8,
    batch: int = 2,
    qk_norm: bool = False,
    first_seed: int = 0,
) -> np.ndarray:
    r"""How much each sub-layer multiplies the gradient flowing down the stream (chapter "LayerNorm
    after 2020").

    The same stacks, inputs and loss as :func:`placement_profile` (same seeds, so the same runs);
    for each sub-layer, :math:`\lVert \partial L/\partial x_{\text{in}} \rVert /
    \lVert \partial L/\partial x_{\text{out}} \rVert`. The product over a column is how much
    that kind of sub-layer grows the stream's gradient from the top of the stack to its bottom:
    in OLMo 2's order the attention reads the unnormalized stream, so its logits, and the
    gradient through them, grow with the stream while the norm after it divides only by the
    branch output's scale.

    Returns
    -------
    ndarray, shape (seeds, depth, 2)
        Per seed and layer (bottom first), the gain of the attention sub-layer ``[..., 0]`` and of
        the FFN sub-layer ``[..., 1]``.
    """
    placement = check_placement(placement)
    depth, width, seeds = (
        check_count(depth, "depth"),
        check_count(width, "width"),
        check_count(seeds, "seeds"),
    )
    tokens, batch = check_count(tokens, "tokens"), check_count(batch, "batch")
    gains = np.empty((seeds, depth, 2))
    for s in range(seeds):
        rng = np.random.default_rng(first_seed + s)
        weights = init_weights(placement, depth, width, rng=rng)
        x, target = rng.normal(size=(batch, tokens, width)), rng.normal(size=(batch, tokens, width))
        out, states, caches = placement_forward(x, weights, placement, qk_norm=qk_norm)
        dout = mse_loss(out, target)[1]
        dy = dout if placement in _NO_FINAL_NORM else layer_norm_backward(dout, states[-1])[0]
        rules = sublayer_rules(placement, depth)
        for ell in reversed(range(depth)):
            w, (attn_cache, ffn_cache), rule = weights[ell], caches[ell], rules[ell]
            dmiddle, _ = sublayer_backward(dy, ffn_cache, lambda d, c: ffn_backward(d, c, w), rule)
            dx, _ = sublayer_backward(
                dmiddle, attn_cache, lambda d, c: attention_backward(d, c, w), rule
            )
            gains[s, ell] = (
                np.linalg.norm(dx) / np.linalg.norm(dmiddle),
                np.linalg.norm(dmiddle) / np.linalg.norm(dy),
            )
            dy = dx
    return gains


# --- QK-norm's measurements (was qk_norm.py) ------------------------------------------------------
# QK-norm: attention with LayerNorm on the queries and the keys, forward and backward.
#
# Dehghani et al. (2023) saw the attention logits
# :math:`s_{ij} = q_i \cdot k_j / \sqrt d` grow during training until the
# softmax put all its weight on one key (zero entropy) and training diverged;
# they normalize each query and key with a LayerNorm before the dot product,
# crediting Gilmer et al. (Wortsman et al., 2023, reproduce the effect in small
# models). The idea is Henry et al.'s QKNorm (2020): queries and keys divided by
# their lengths, with a learned scale in place of 1/√d. With
# :math:`\gamma = 1` a normalized vector has squared length
# :math:`d\,\sigma^2/(\sigma^2+\varepsilon) < d`, so by Cauchy-Schwarz every
# logit satisfies :math:`\lvert s_{ij}\rvert < \sqrt d` however large the
# projections grow. The chapter "LayerNorm after 2020" shows both numbers.
#
# The attention itself, with and without QK-norm, is
# :func:`lnlib.book.models.transformer.attention_forward` (``qk_norm=True``) and its
# backward; this module measures what the norm does to the logits.


def attention_entropy(a: np.ndarray) -> np.ndarray:
    r"""The entropy :math:`-\sum_j a_{ij}\ln a_{ij}` of each row of attention weights, in nats
    (chapter "LayerNorm after 2020").

    Uniform attention over T tokens has entropy ln T; attention on one token has 0.
    """
    return -np.sum(np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0), axis=-1)


def logit_statistics(x, w: dict, *, qk_norm: bool = False) -> dict:
    """The largest absolute attention logit and the mean attention entropy of one attention layer
    (chapter "LayerNorm after 2020").

    Returns
    -------
    dict
        ``max_logit`` (the largest :math:`\\lvert q\\cdot k\\rvert/\\sqrt d`),
        ``entropy`` (mean over queries, nats) and ``bound`` (√d, the
        ceiling QK-norm puts on every logit).
    """
    _, cache = attention_forward(x, w, qk_norm=qk_norm)
    q, k, a = cache[3], cache[4], cache[6]
    width = q.shape[-1]
    logits = q @ k.transpose(0, 2, 1) / np.sqrt(width)
    return {
        "max_logit": float(np.abs(logits).max()),
        "entropy": float(attention_entropy(a).mean()),
        "bound": float(np.sqrt(width)),
    }
