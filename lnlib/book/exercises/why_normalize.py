"""Chapter 01's exercises (chapters/01_why_normalize.ipynb): the drift of a deep stack, and what
LayerNorm does to it."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import Exercises, domain, forbidding
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.models.deep_stack import random_stack, run_stack


def _stack(rng: np.random.Generator) -> dict:
    """The exercises' domain: a seeded 50-layer stack of any width and batch (chapter 01's is 64 and
    32)."""
    x, weights, upstream = random_stack(
        depth=50,
        width=int(rng.integers(8, 65)),
        batch=int(rng.integers(4, 33)),
        seed=int(rng.integers(99)),
    )
    return {"x": x, "weights": weights, "upstream": upstream}


TANH_DEFAULT = "run_stack's default activation is tanh; the chapter's stack needs activation='relu'"


@domain(_stack)
def growth_per_layer(x, weights, upstream) -> Exercise:
    """Exercise 1: the per-layer growth factor of the plain ReLU stack at weight scale 1.5."""

    def scales(a, **options):
        return run_stack(x, a * weights, upstream, **options).activation_rms

    def per_layer(rms, layers=49):
        return (rms[50] / rms[1]) ** (1 / layers)

    relu = scales(1.5, activation="relu")
    return Exercise(
        per_layer(relu),
        rtol=1e-9,
        digits=5,  # the 49th and the 50th root differ in the fourth digit
        hint="run_stack(x, 1.5 * weights, upstream, activation='relu').activation_rms "
        "gives RMS(h_0), ..., RMS(h_50).",
        mistakes={
            "that is the prediction a / sqrt(2); the question asks for the factor the stack "
            "measures": 1.5 / np.sqrt(2),
            "that is the growth over all 49 layers; take its 49th root for the factor per "
            "layer": relu[50] / relu[1],
            "49 layers separate h_1 from h_50, so the root is the 49th, not the 50th": per_layer(
                relu, layers=50
            ),
            "that is the stack at a = 2 (the chapter's plain run); scale the weights "
            "by 1.5": per_layer(scales(2.0, activation="relu")),
            TANH_DEFAULT: per_layer(scales(1.5)),
        },
    )


@domain(_stack)
def weight_gradient_ratio(x, weights, upstream) -> Exercise:
    """Exercise 2: how dL/dW_1 of the ReLU stack with LayerNorm changes when the weight scale
    doubles."""

    def ratio(index=0, gradients="weight_gradient_rms", **options):
        first, second = (
            getattr(run_stack(x, a * weights, upstream, **options), gradients)[index]
            for a in (2.0, 1.0)
        )
        return first / second

    with_ln = {"layer_norm_on": True, "activation": "relu"}
    return Exercise(
        ratio(**with_ln),
        rtol=1e-9,
        hint="Run the stack with layer_norm_on=True at a = 2 and at a = 1; divide the first "
        "entries of weight_gradient_rms.",
        # the chain rule's answer, reasoned as the hint asks: exact with ε = 0, a hair off with the
        # stack's ε, and as near the layer-2 and tanh mistakes (also 1/2 up to ε): accepted on its
        # own
        also_right={
            "1/2 is the chain rule's answer with ε = 0; with the stack's ε the measured ratio "
            "differs from it by about 1e-5": 0.5
        },
        mistakes={
            "that is the ratio the other way round, a = 1 over a = 2": 1 / ratio(**with_ln),
            "layer_norm_on=True is missing: that is the plain stack, whose gradients explode "
            "with a": ratio(activation="relu"),
            TANH_DEFAULT: ratio(layer_norm_on=True),
            "that is layer 2's weights: weight_gradient_rms[l - 1] holds layer l, so layer 1 "
            "is index 0": ratio(1, **with_ln),
            "that compares d𝓛/dh (gradient_rms), which LayerNorm makes independent of a; the "
            "question is about d𝓛/dW, weight_gradient_rms": ratio(
                gradients="gradient_rms", **with_ln
            ),
        },
    )


@forbidding("lnlib", "torch")
@domain(lambda rng: {k: v for k, v in _stack(rng).items() if k != "upstream"})
def first_layer_with_layer_norm(x, weights) -> Exercise:
    """Exercise 3: ``ReLU(LN(x W_1))`` for the inputs `x` and the first matrix
    ``2.0 * weights[0]``."""
    x = np.asarray(x, dtype=np.float64)
    z = x @ (2.0 * weights[0])

    def relu(u):
        return np.maximum(u, 0.0)

    centred = z - z.mean(axis=-1, keepdims=True)
    return Exercise(
        relu(lnlib.layer_norm(z, eps=1e-5)),
        rtol=1e-9,
        hint="z = x @ W; subtract z.mean(axis=-1, keepdims=True); divide by "
        "np.sqrt(z.var(axis=-1, keepdims=True) + 1e-5); then np.maximum(., 0).",
        mistakes={
            "the ReLU is missing: that is LN(x W_1), negative entries included": lnlib.layer_norm(
                z, eps=1e-5
            ),
            "you divided by H - 1 (ddof=1); LayerNorm's variance divides by H": relu(
                centred / np.sqrt(z.var(axis=-1, ddof=1, keepdims=True) + 1e-5)
            ),
            "ε is missing: add 1e-5 to the variance inside the square root": relu(
                lnlib.layer_norm(z, eps=0.0)
            ),
            "that normalizes each feature over the 32 samples (axis=0, BatchNorm's axis); "
            "LayerNorm takes each sample's statistics over its features, axis=-1": relu(
                lnlib.layer_norm(z, axis=0, eps=1e-5)
            ),
            "that multiplies by the transposed matrix; the layer is x @ W_1": relu(
                lnlib.layer_norm(x @ (2.0 * weights[0]).T, eps=1e-5)
            ),
            "the weight scale is missing: the layer's matrix is 2.0 * weights[0] (LayerNorm "
            "removes the scale only up to ε)": relu(lnlib.layer_norm(x @ weights[0], eps=1e-5)),
        },
    )


exercises = Exercises(
    "01_why_normalize", growth_per_layer, weight_gradient_ratio, first_layer_with_layer_norm
)
