"""Chapter 11's exercises (chapters/11_pre_post_norm.ipynb): the pre-norm attention sub-layer by hand,
how LayerNorm's gradient shrinks with its input's scale, and post-norm's last-layer gradient against
depth."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.backward import layer_norm_backward
from lnlib.book.exercises.chapter import Exercises
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.models.transformer import attention_forward, block_forward

#: Exercise 2's factor on LayerNorm's input.
SCALE = 25


def pre_norm_attention_sublayer(xe, we) -> Exercise:
    """Exercise 1: x + Attn(LN(x)) for the input `xe` and one layer's weights `we`."""
    ln = lnlib.layer_norm

    def attention(v):
        return attention_forward(v, we)[0]

    # lnlib's full pre-norm layer with its FFN switched off (W2 = 0 adds nothing)
    attention_only = block_forward(xe, {**we, "W2": np.zeros_like(we["W2"])}, "pre")[0]
    return Exercise(
        attention_only,
        hint="Normalize first, attend, then add the input back: the residual path skips the "
        "LayerNorm.",
        mistakes={
            "that is the post-norm sub-layer, LN(x + Attn(x)): pre-norm normalizes what the "
            "attention reads": ln(xe + attention(xe)),
            "the residual is missing: add x to Attn(LN(x))": attention(ln(xe)),
            "the residual adds LN(x); it adds x itself": ln(xe) + attention(ln(xe)),
            "that is the whole pre-norm layer, FFN included; the exercise asks for the attention "
            "sub-layer alone": block_forward(xe, we, "pre")[0],
        },
    )


def gradient_shrink_factor(xv, gv) -> Exercise:
    """Exercise 2: ||dx(25 x)|| / ||dx(x)|| through LayerNorm (ε = 0), for `xv` and the upstream `gv`."""

    def ratio(*, eps=0.0, output=0):
        scaled = layer_norm_backward(gv, SCALE * xv, eps=eps)[output]
        return np.linalg.norm(scaled) / np.linalg.norm(layer_norm_backward(gv, xv, eps=eps)[output])

    expected = ratio()
    return Exercise(
        expected,
        hint="Call layer_norm_backward(gv, 25 * xv, eps=0) and layer_norm_backward(gv, xv, eps=0); "
        "take the norms of their dx.",
        mistakes={
            "that is the inverse ratio: the gradient at 25 x goes on top, so it shrinks": (
                1 / expected
            ),
            "that compares dγ, which does not change with the input's scale: take dx, the first "
            "of layer_norm_backward's outputs": ratio(output=1),
            "that is 1/25², the factor of the variance: LayerNorm divides by the standard "
            "deviation, which grows by 25": 1 / SCALE**2,
            "ε is left at its default, 1e-5: the question asks for eps=0": ratio(eps=1e-5),
        },
    )


def post_norm_gradient_keeps_with_depth(mean_last) -> Exercise:
    """Exercise 3: True or False, post-norm's last-layer W2 gradient at 32 layers is within a factor
    of 2 of the one at 2 layers (`mean_last`, the chapter's mean over seeds per depth)."""
    post = np.asarray(mean_last["post"], dtype=np.float64)
    return Exercise(
        bool(0.5 < post[-1] / post[0] < 2),
        hint="Look at the post-norm curve in the left panel of finding 2, or at the first line of "
        "the Check-the-claim cell.",
    )


exercises = Exercises(
    "11_pre_post_norm",
    pre_norm_attention_sublayer,
    gradient_shrink_factor,
    post_norm_gradient_keeps_with_depth,
)
