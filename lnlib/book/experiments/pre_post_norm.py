"""The experiment of the chapter "Pre-norm vs post-norm": the residual stream and the weight gradients of
the tiny transformer (:mod:`lnlib.book.models.transformer`) at initialization, over seeds, depths and widths.
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
from ..tools.progress import progress

__all__ = ["InitProfile", "depth_sweep", "init_profile", "profile_grid"]


@dataclass(frozen=True)
class InitProfile:
    r"""Residual-stream norms and weight-gradient norms at initialization, one row per seed (chapter "Pre-norm vs post-norm").

    Attributes
    ----------
    placement : str
        ``"post"`` or ``"pre"``: where each layer's LayerNorm sits.
    depth, width, tokens, batch : int
        As passed to :func:`init_profile`.
    stream_sq : ndarray, shape (seeds, depth + 1)
        Mean over tokens of :math:`\lVert x_l \rVert^2 / d` (d the width), for l = 0 (the input) to the depth.
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
    """Draw inputs and targets with N(0, 1) entries; return the stream states, their gradients and the weight gradients."""
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
    """One batch's gradient norm of the last layer's `weight`, per seed and depth (chapter "Pre-norm vs post-norm").

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
    """:func:`init_profile` for every placement, depth and width: what the explorer of chapter "Pre-norm vs post-norm" shows.

    Parameters
    ----------
    depths, widths : sequence of int
    seeds : int, default 4
    description : str, optional
        When given, a live notebook shows a progress bar with this text while the settings are measured
        (:func:`lnlib.book.tools.progress.progress`; none in the website build).

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
