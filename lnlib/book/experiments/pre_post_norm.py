"""The experiment of the chapter "Pre-norm vs post-norm": the residual stream and the weight
gradients of the tiny transformer (:mod:`lnlib.book.models.transformer`) at initialization, over
seeds, depths and widths.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...validation import check_count
from ..models.transformer import (
    ATTENTION_WEIGHTS,
    FFN_WEIGHTS,
    PLACEMENTS,
    check_placement,
    init_layer,
    mse_loss,
    stack_backward,
    stack_forward,
)
from ..tools import prose
from ..tools.progress import progress

__all__ = [
    "InitProfile",
    "depth_findings",
    "depth_sweep",
    "init_profile",
    "layer_findings",
    "profile_grid",
    "stream_findings",
]


@dataclass(frozen=True)
class InitProfile:
    r"""Residual-stream norms and weight-gradient norms at initialization, one row per seed (chapter
    "Pre-norm vs post-norm").

    Attributes
    ----------
    placement : str
        ``"post"`` or ``"pre"``: where each layer's LayerNorm sits.
    depth, width, tokens, batch : int
        As passed to :func:`init_profile`.
    stream_sq : ndarray, shape (seeds, depth + 1)
        Mean over tokens of :math:`\lVert x_l \rVert^2 / d` (d the width), for l = 0 (the input) to
        the depth.
    grad_norm : dict of str to ndarray, each (seeds, depth)
        The Frobenius norm of each weight's loss gradient, per layer (bottom first).
    stream_grad : ndarray, shape (seeds, depth + 1)
        The Frobenius norm of dL/dx_l over the batch, for l = 0 .. depth.
    """

    placement: str
    depth: int
    width: int
    tokens: int
    batch: int
    stream_sq: np.ndarray
    grad_norm: dict
    stream_grad: np.ndarray

    def mean(self, weight: str = "W2") -> np.ndarray:
        """Per-layer gradient norm of `weight`, averaged over the seeds."""
        return self.grad_norm[weight].mean(axis=0)

    def spread(self, weight: str = "W2") -> np.ndarray:
        """Per-layer standard deviation of `weight`'s gradient norm across the seeds."""
        return self.grad_norm[weight].std(axis=0)


def init_profile(
    depth: int,
    width: int,
    placement: str,
    *,
    seeds: int = 8,
    tokens: int = 8,
    batch: int = 4,
    batches: int = 1,
    ffn_width: int | None = None,
    first_seed: int = 0,
) -> InitProfile:
    """Measure one stack at initialization over several seeds (chapter "Pre-norm vs post-norm").

    For each seed: fresh Xavier weights, then a fresh batch of inputs and
    targets with N(0, 1) entries, one forward pass and one backward pass of
    :func:`mse_loss`. With ``batches=1`` the gradient norms are those of this
    one batch's gradient (the norm is taken per seed, then the seeds are
    summarized), the quantity Xiong et al.'s Theorem 1 bounds. With
    ``batches > 1`` the gradient is averaged over that many batches (same
    weights) before its norm is taken, and the stream statistics are averaged
    over the batches.

    Parameters
    ----------
    depth : int
        L, the number of layers.
    width : int
        d, the width of the residual stream.
    placement : {"post", "pre"}
    seeds : int, default 8
        Independent repetitions (weights and data).
    tokens : int, default 8
        Sequence length.
    batch : int, default 4
        Number of sequences per batch.
    batches : int, default 1
        Batches whose gradients are averaged before the norm is taken.
    ffn_width : int, optional
        Default: `width`.
    first_seed : int, default 0
        Seed s uses ``np.random.default_rng(first_seed + s)``.

    Returns
    -------
    InitProfile
    """
    placement = check_placement(placement)
    depth, width = check_count(depth, "depth"), check_count(width, "width")
    seeds, tokens, batch = (
        check_count(seeds, "seeds"),
        check_count(tokens, "tokens"),
        check_count(batch, "batch"),
    )
    batches = check_count(batches, "batches")
    names = ATTENTION_WEIGHTS + FFN_WEIGHTS
    stream_sq, stream_grad = np.zeros((seeds, depth + 1)), np.zeros((seeds, depth + 1))
    grad_norm = {name: np.empty((seeds, depth)) for name in names}
    for s in range(seeds):
        rng = np.random.default_rng(first_seed + s)
        weights = [init_layer(rng, width, ffn_width) for _ in range(depth)]
        total = [{name: np.zeros_like(w[name]) for name in names} for w in weights]
        for _ in range(batches):
            states, stream_grads, grads = _one_batch(rng, weights, placement, batch, tokens)
            stream_sq[s] += [np.mean(np.sum(h * h, axis=-1)) / width / batches for h in states]
            stream_grad[s] += [np.linalg.norm(g) / batches for g in stream_grads]
            for layer_total, layer_grads in zip(total, grads):
                for name in names:
                    layer_total[name] += layer_grads[name] / batches
        for name in names:
            grad_norm[name][s] = [np.linalg.norm(g[name]) for g in total]
    return InitProfile(placement, depth, width, tokens, batch, stream_sq, grad_norm, stream_grad)


def _one_batch(
    rng: np.random.Generator, weights: list[dict], placement: str, batch: int, tokens: int
):
    """Draw inputs and targets with N(0, 1) entries; return the stream states, their gradients and
    the weight gradients."""
    width = weights[0]["Wq"].shape[0]
    x = rng.normal(size=(batch, tokens, width))
    target = rng.normal(size=(batch, tokens, width))
    out, states, caches = stack_forward(x, weights, placement)
    _, dout = mse_loss(out, target)
    stream_grads, grads = stack_backward(dout, states, caches, weights, placement)
    return states, stream_grads, grads


def depth_sweep(
    depths, width: int, placement: str, *, seeds: int = 8, weight: str = "W2", **kwargs
) -> np.ndarray:
    """One batch's gradient norm of the last layer's `weight`, per seed and depth (chapter "Pre-norm
    vs post-norm").

    Returns
    -------
    ndarray of shape (seeds, len(depths))
        Column j is the top layer of a ``depths[j]``-layer stack; other
        keyword arguments go to :func:`init_profile`.
    """
    return np.column_stack(
        [
            init_profile(depth, width, placement, seeds=seeds, **kwargs).grad_norm[weight][:, -1]
            for depth in depths
        ]
    )


def profile_grid(
    depths, widths, *, seeds: int = 4, description: str | None = None, **kwargs
) -> dict:
    """:func:`init_profile` for every placement, depth and width: what the explorer of chapter
    "Pre-norm vs post-norm" shows.

    Parameters
    ----------
    depths, widths : sequence of int
    seeds : int, default 4
    description : str, optional
        When given, a live notebook shows a progress bar with this text while the settings are
        measured (:func:`lnlib.book.tools.progress.progress`; none in the website build).

    Returns
    -------
    dict
        ``(placement, depth, width) -> InitProfile``.
    """
    settings = [
        (placement, depth, width)
        for placement in PLACEMENTS
        for depth in depths
        for width in widths
    ]
    if description is not None:
        settings = progress(settings, description, unit="setting")
    return {
        (placement, depth, width): init_profile(depth, width, placement, seeds=seeds, **kwargs)
        for placement, depth, width in settings
    }


def _number(value, spec: str) -> prose.ProseNumber:
    """A glued number of this chapter: 4 significant digits first, so no platform's last bits
    show."""
    return prose.number(prose.significant(float(value)), spec)


def stream_findings(deep: dict) -> dict:
    """What chapter "Pre-norm vs post-norm" says about the residual stream of a deep stack, by glue
    key.

    Parameters
    ----------
    deep : dict
        ``{"post": InitProfile, "pre": InitProfile}`` of the same depth L (:func:`init_profile`).

    Returns
    -------
    dict of str to ProseNumber
        ``f1_post_dev``: the largest distance of post-norm's ||x_l||²/d from 1 after any layer, any
        seed (a LayerNorm ends every layer); ``f1_pre_slope``: the least-squares slope of pre-norm's
        mean ||x_l||²/d against l; ``f1_pre_top``: its mean after layer L; ``f1_band_low``,
        ``f1_band_high``: Xiong et al.'s Lemma 2 band for pre-norm after layer L, 1 + L/2 to 1 +
        3L/2.
    """
    depth = deep["pre"].depth
    pre_mean = deep["pre"].stream_sq.mean(axis=0)
    slope = np.polyfit(np.arange(depth + 1), pre_mean, 1)[0]
    return {
        "f1_post_dev": _number(np.abs(deep["post"].stream_sq[:, 1:] - 1).max(), ".1e"),
        "f1_pre_slope": _number(slope, ".2f"),
        "f1_pre_top": _number(pre_mean[-1], ".1f"),
        "f1_band_low": _number(1 + depth / 2, ".0f"),
        "f1_band_high": _number(1 + 1.5 * depth, ".0f"),
    }


def depth_findings(depths, last: dict) -> dict:
    """What chapter "Pre-norm vs post-norm" says about the last layer's gradient against depth, by
    glue key.

    Parameters
    ----------
    depths : sequence of int
        The depths of :func:`depth_sweep`, shallowest first.
    last : dict
        ``{"post": ndarray, "pre": ndarray}``, each :func:`depth_sweep`'s (seeds, len(depths))
        result.

    Returns
    -------
    dict of str to ProseNumber
        ``f2_post_slope``, ``f2_pre_slope``: the slope of log(mean gradient) against log(depth);
        ``f2_post_ratio``, ``f2_pre_ratio``: mean gradient at the deepest over the shallowest stack;
        ``f2_theory_ratio``: √(shallowest / deepest), the ratio an O(1/√L) gradient would give.
    """
    mean_last = {p: g.mean(axis=0) for p, g in last.items()}
    findings = {}
    for p in ("post", "pre"):
        slope = np.polyfit(np.log(depths), np.log(mean_last[p]), 1)[0]
        findings[f"f2_{p}_slope"] = _number(slope, ".2f")
    for p in ("post", "pre"):
        findings[f"f2_{p}_ratio"] = _number(mean_last[p][-1] / mean_last[p][0], ".2f")
    findings["f2_theory_ratio"] = _number(np.sqrt(depths[0] / depths[-1]), ".2f")
    return findings


def layer_findings(per_layer: dict, averaged: dict) -> dict:
    """What chapter "Pre-norm vs post-norm" says about the weight gradients layer by layer, by glue
    key.

    Parameters
    ----------
    per_layer, averaged : dict
        ``{"post": InitProfile, "pre": InitProfile}`` of one depth: one batch's gradients, and
        gradients averaged over several batches (:func:`init_profile` with ``batches > 1``).

    Returns
    -------
    dict of str to ProseNumber
        ``f3_{post,pre}_{W1,W2}``: the top layer's mean gradient norm over the bottom layer's;
        ``f3_avg_{post,pre}_W2``: the same for W2 with averaged gradients; ``f3_post_peak``:
        post-norm's largest per-layer W2 gradient over its bottom layer's; ``f3_pre_stream_grad``:
        pre-norm's ||dL/dx_0|| over ||dL/dx_L||; ``f3_avg_shrink``: how many times smaller the
        averaged W2 gradients are than one batch's, on average over layers and both placements;
        ``f3_depth``: L.
    """
    findings = {}
    for p in ("post", "pre"):
        for weight in ("W1", "W2"):
            findings[f"f3_{p}_{weight}"] = _number(_top_over_bottom(per_layer[p], weight), ".2f")
    for p in ("post", "pre"):
        findings[f"f3_avg_{p}_W2"] = _number(_top_over_bottom(averaged[p], "W2"), ".2f")
    post_w2 = per_layer["post"].mean("W2")
    findings["f3_post_peak"] = _number(post_w2.max() / post_w2[0], ".2f")
    stream = per_layer["pre"].stream_grad.mean(axis=0)
    findings["f3_pre_stream_grad"] = _number(stream[0] / stream[-1], ".1f")
    shrink = np.mean(
        [per_layer[p].mean("W2").mean() / averaged[p].mean("W2").mean() for p in ("post", "pre")]
    )
    findings["f3_avg_shrink"] = _number(shrink, ".1f")
    findings["f3_depth"] = prose.number(per_layer["pre"].depth)
    return findings


def _top_over_bottom(profile: InitProfile, weight: str) -> float:
    """The top layer's mean gradient norm of `weight` over the bottom layer's."""
    grads = profile.mean(weight)
    return float(grads[-1] / grads[0])
