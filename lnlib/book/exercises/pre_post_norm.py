"""Chapter 11's exercises (chapters/11_pre_post_norm.ipynb): the pre-norm attention sub-layer by
hand, how LayerNorm's gradient shrinks with its input's scale, and pre-norm's last-layer gradient
against depth."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.backward import layer_norm_backward
from lnlib.book.exercises.chapter import Exercises, domain, rests_on, variant
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.models.transformer import attention_forward, block_forward, init_layer

#: Exercise 2's factor on LayerNorm's input.
SCALE = 25


def layer_data(rng: np.random.Generator) -> dict:
    """Exercise 1's domain: an input (batch, sequence, width) and one layer's weights of that
    width."""
    width = int(rng.choice([4, 8, 16]))
    return {
        "xe": rng.normal(size=(*rng.integers(1, 4, size=2), width)),
        "we": init_layer(rng, width),
    }


def website_layer(rng: np.random.Generator) -> dict:
    """Exercise 1's data as a student gets them: the website's shapes, an input (2, 4, 8) and one
    layer's weights of width 8, drawn from the student's generator."""
    return {"xe": rng.normal(size=(2, 4, 8)), "we": init_layer(rng, 8)}


@rests_on("The idea")
@variant(website_layer)
@domain(layer_data)
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
            "the LayerNorm is missing: pre-norm's attention reads LN(x), not x": xe + attention(xe),
            "the residual adds LN(x); it adds x itself": ln(xe) + attention(ln(xe)),
            "that is the whole pre-norm layer, FFN included; the exercise asks for the attention "
            "sub-layer alone": block_forward(xe, we, "pre")[0],
        },
    )


@domain(lambda rng: dict(zip(("xv", "gv"), rng.normal(size=(2, rng.integers(2, 65))))))
def gradient_shrink_factor(xv, gv) -> Exercise:
    """Exercise 2: ||dx(25 x)|| / ||dx(x)|| through LayerNorm (ε = 0), for `xv` and the upstream
    `gv`."""

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
            # learner B (2026-11-30) typed 1/5 and got no reason
            "that is 1/√25: multiplying x by 25 multiplies its standard deviation by 25, not by "
            "√25": 1 / np.sqrt(SCALE),
        },
    )


@domain(
    lambda rng: dict(
        zip(
            ("n_shallow", "n_deep"), sorted(rng.choice(np.arange(1, 97), 2, replace=False).tolist())
        )
    )
)
def pre_norm_gradient_depth_factor(n_shallow, n_deep) -> Exercise:
    """Exercise 3: by Theorem 1's 1/sqrt(L), how many times larger pre-norm's last-layer W2 gradient
    is at `n_shallow` layers than at `n_deep` layers."""
    return Exercise(
        float(np.sqrt(n_deep / n_shallow)),
        hint=(
            "If the gradient is proportional to 1/sqrt(L), the ratio of its values at two depths "
            "is a ratio of square roots; the shallower stack has the larger gradient."
        ),
        mistakes={
            "that is the ratio of the depths: the gradient goes as one over the square root of the "
            "depth": n_deep / n_shallow,
            "that is the inverse: the gradient of the shallower stack is the larger one": float(
                np.sqrt(n_shallow / n_deep)
            ),
            "that is the inverse ratio of the depths, without the square root": n_shallow / n_deep,
        },
    )


exercises = Exercises(
    "11_pre_post_norm",
    pre_norm_attention_sublayer,
    gradient_shrink_factor,
    pre_norm_gradient_depth_factor,
)
