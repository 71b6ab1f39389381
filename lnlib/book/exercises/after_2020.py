"""Chapter 12's exercises (chapters/12_after_2020.ipynb): a Peri-LN sub-layer by hand and the
largest attention logit QK-norm allows."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import Exercises, domain, rests_on, variant
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.exercises.pre_post_norm import layer_data, website_layer
from lnlib.book.models.placements import placement_forward
from lnlib.book.models.transformer import ffn_forward

#: Exercise 2's head width d of the queries and keys.
WIDTH = 64


@rests_on("Seven placements")
@variant(website_layer)
@domain(layer_data)
def peri_ln_ffn_sublayer(xe, we) -> Exercise:
    """Exercise 1: x + LN(FFN(LN(x))) for the input `xe` and one layer's weights `we`."""
    ln = lnlib.layer_norm  # gamma = 1, beta = 0, as the chapter's LN

    def ffn(v):
        return ffn_forward(v, we)[0]

    # lnlib's Peri-LN layer with the attention switched off (Wo = 0 adds LN(0) = 0)
    layer = [{**we, "Wo": np.zeros_like(we["Wo"])}]
    return Exercise(
        placement_forward(xe, layer, "peri")[1][1],
        hint="Two norms: one on what the FFN reads, one on what it returns; the residual adds x "
        "itself.",
        mistakes={
            "that is Pre-LN, x + FFN(LN(x)): the FFN's output is not normalized": (
                xe + ffn(ln(xe))
            ),
            "that is OLMo 2's order, x + LN(FFN(x)): the FFN's input is not normalized": (
                xe + ln(ffn(xe))
            ),
            "the residual is missing: add x to LN(FFN(LN(x)))": ln(ffn(ln(xe))),
            "the residual adds LN(x); it adds x itself, which skips both norms": (
                ln(xe) + ln(ffn(ln(xe)))
            ),
            "that is Post-LN, LN(x + FFN(x)): Peri-LN leaves the residual stream unnormalized": (
                ln(xe + ffn(xe))
            ),
        },
    )


def largest_qk_norm_logit() -> Exercise:
    """Exercise 2: the largest logit q̂·k̂/√d with QK-norm (γ = 1, ε → 0) on heads of width d = 64."""
    v = np.random.default_rng(0).normal(size=WIDTH)
    # Cauchy-Schwarz: the largest dot product of two normalized vectors is reached at k̂ = q̂
    q = lnlib.layer_norm(v, eps=0.0)
    unit = q / np.linalg.norm(q)
    unbiased = (v - v.mean()) / v.std(ddof=1)
    return Exercise(
        q @ q / np.sqrt(WIDTH),
        hint="A normalized vector of width d has squared length d, not 1; then Cauchy-Schwarz.",
        mistakes={
            "that is the dot product itself, d: divide by the square root of d": q @ q,
            "a LayerNorm output has length sqrt(d), not 1": unit @ unit / np.sqrt(WIDTH),
            "that is the largest cosine, for vectors of length 1; a LayerNorm output has squared "
            "length d, so q̂·k̂ reaches d before the division by the square root of d": 1.0,
            "that takes q̂'s squared length as d - 1 (the unbiased variance); LayerNorm divides "
            "by the biased standard deviation, so it is d": unbiased @ unbiased / np.sqrt(WIDTH),
        },
    )


exercises = Exercises("12_after_2020", peri_ln_ffn_sublayer, largest_qk_norm_logit)
