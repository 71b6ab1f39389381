r"""The depth scalings of the chapter "LayerNorm after 2020": how large the residual stream grows with depth when the branch is scaled.

Each layer of :mod:`lnlib.book.models.transformer` (attention, then the ReLU FFN), each sub-layer
:math:`F` in a residual connection, at initialization; ℓ = 1, ..., L is the layer:

==============  ==================================================  ========================================
scaling         one residual sub-layer                              source
==============  ==================================================  ========================================
``pre``         :math:`x + F(\mathrm{LN}(x))`                       Pre-LN (Xiong et al., 2020)
``lns``         :math:`x + F(\mathrm{LN}(x)/\sqrt{\ell})`           LayerNorm scaling (Sun et al., 2025)
``depth_mup``   :math:`x + F(\mathrm{LN}(x))/\sqrt{L}`              depth-μP's branch multiplier (Yang et al.,
                                                                    2023; Bordelon et al., 2023)
``rezero``      :math:`x + \alpha F(x)`, :math:`\alpha = 0`, no LN  ReZero at initialization (Bachlechner et
                                                                    al., 2020)
==============  ==================================================  ========================================

Only the forward pass is needed: the chapter measures the hidden-state variance
:math:`\lVert x_\ell \rVert^2 / H` after each layer (:func:`scaled_stream`) and how alike the tokens
of a sequence have become, the mean cosine between their normalized states (:func:`token_similarity`,
the toy's view of rank collapse, Dong et al., 2021; Noci et al., 2022). Seeds and weights are drawn
as :func:`lnlib.book.models.placements.placement_profile` draws them, so the
``pre`` and ``lns`` rows equal that function's ``stream_sq`` seed by seed.
"""

from __future__ import annotations

import numpy as np

from ...validation import check_count
from ..models.placements import init_weights
from ..models.transformer import attention_forward, ffn_forward, model_norm

__all__ = ["DEPTH_SCALINGS", "branch_scale", "scaled_stream", "token_similarity"]

#: The scalings :func:`scaled_stream` knows, in the order the chapter's table lists them.
DEPTH_SCALINGS = ("pre", "lns", "depth_mup", "rezero")


def branch_scale(scaling: str, ell: int, depth: int) -> tuple[float, float, bool]:
    r"""How layer `ell` of `depth` scales its sub-layers: ``(input scale, output scale, normalize input)`` (chapter "LayerNorm after 2020").

    The sub-layer is :math:`x + b\,F(a\,N(x))` with :math:`N` the LayerNorm when the
    third entry is true and the identity otherwise; :math:`a` and :math:`b` are the first two entries.
    """
    if scaling not in DEPTH_SCALINGS:
        raise ValueError(f"scaling must be one of {DEPTH_SCALINGS}; got {scaling!r}.")
    if scaling == "lns":
        return 1.0 / np.sqrt(ell), 1.0, True
    if scaling == "depth_mup":
        return 1.0, 1.0 / np.sqrt(depth), True
    if scaling == "rezero":
        return 1.0, 0.0, False  # ReZero's alpha starts at 0
    return 1.0, 1.0, True


def _states(scaling, depth, width, seeds, tokens, batch, first_seed):
    """Seed by seed, the stream entering the stack and after each layer: ``(seed, states)`` with
    ``states[ell]`` of shape (batch, tokens, width), ell = 0 (the input) to L."""
    depth, width, seeds = (
        check_count(depth, "depth"),
        check_count(width, "width"),
        check_count(seeds, "seeds"),
    )
    tokens, batch = check_count(tokens, "tokens"), check_count(batch, "batch")
    branch_scale(scaling, 1, depth)  # checks the name
    for s in range(seeds):
        rng = np.random.default_rng(first_seed + s)
        weights = init_weights("pre", depth, width, rng=rng)
        x = rng.normal(size=(batch, tokens, width))
        states = [x]
        for ell, w in enumerate(weights, start=1):
            a, b, normalize = branch_scale(scaling, ell, depth)
            for sub in (attention_forward, ffn_forward):
                read = model_norm(x)[0] if normalize else x
                x = x + b * sub(a * read, w)[0]
            states.append(x)
        yield s, states


def scaled_stream(
    scaling: str,
    depth: int,
    width: int = 32,
    *,
    seeds: int = 3,
    tokens: int = 8,
    batch: int = 2,
    first_seed: int = 0,
) -> np.ndarray:
    r"""The hidden-state variance after each layer of a stack scaled by `scaling`, at initialization (chapter "LayerNorm after 2020").

    Parameters
    ----------
    scaling : str
        One of :data:`DEPTH_SCALINGS`.
    depth : int
        L, the number of layers.
    width : int, default 32
        H, the width of the residual stream.
    seeds : int, default 3
        Independent repetitions: seed s draws Xavier weights and then a batch of
        N(0, 1) inputs from ``np.random.default_rng(first_seed + s)``.
    tokens, batch : int
        Sequence length and number of sequences.
    first_seed : int
        The first seed.

    Returns
    -------
    ndarray, shape (seeds, depth + 1)
        Mean over tokens of :math:`\lVert x_\ell \rVert^2 / H`, for ℓ = 0 (the input) to L.
    """
    depth, seeds = check_count(depth, "depth"), check_count(seeds, "seeds")
    out = np.empty((seeds, depth + 1))
    for s, states in _states(scaling, depth, width, seeds, tokens, batch, first_seed):
        out[s] = [np.mean(np.sum(x * x, axis=-1)) / width for x in states]
    return out


def token_similarity(
    scaling: str,
    depth: int,
    width: int = 32,
    *,
    seeds: int = 3,
    tokens: int = 8,
    batch: int = 2,
    first_seed: int = 0,
) -> np.ndarray:
    r"""How alike the tokens of a sequence are after each layer of a stack scaled by `scaling`, at initialization (chapter "LayerNorm after 2020").

    The mean, over the sequences and over every pair of distinct tokens :math:`i \ne j`, of the cosine
    between their normalized states :math:`\mathrm{LN}(x_\ell)`: 0 for independent random tokens, 1 when
    every token points the same way (rank collapse). The arguments, seeds and weights are those of
    :func:`scaled_stream`, so the two describe the same stacks.

    Returns
    -------
    ndarray, shape (seeds, depth + 1)
        The mean cosine for ℓ = 0 (the input) to L.
    """
    depth, seeds = check_count(depth, "depth"), check_count(seeds, "seeds")
    out = np.empty((seeds, depth + 1))
    for s, states in _states(scaling, depth, width, seeds, tokens, batch, first_seed):
        out[s] = [_mean_cosine(model_norm(x)[0]) for x in states]
    return out


def _mean_cosine(x: np.ndarray) -> float:
    """The mean cosine between distinct tokens of each sequence of `x`, shape (batch, tokens, width)."""
    unit = x / np.linalg.norm(x, axis=-1, keepdims=True)
    gram = unit @ np.swapaxes(unit, -1, -2)
    n = x.shape[-2]
    return float(
        np.mean((gram.sum(axis=(-1, -2)) - np.trace(gram, axis1=-2, axis2=-1)) / (n * (n - 1)))
    )
