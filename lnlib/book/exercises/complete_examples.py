"""Chapter 08's exercises (chapters/08_complete_examples.ipynb): the four steps by hand, the
documents' divisor, γ and β."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import (
    Exercises,
    domain,
    forbidding,
    integer_rows,
    redrawn,
    rests_on,
    variant,
)
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.experiments.complete_examples import documents_batch, documents_embedding
from lnlib.variants import layer_norm_eps_outside_sqrt

#: The scale and shift of exercise 3, as its question gives them.
GAMMA, BETA = 2.0, 0.5


EPS_ADDED_TO_SIGMA = "ε is added to σ; it belongs under the square root, with σ²"
MISSING_EPS = "ε is missing: the divisor is sqrt(σ² + ε), with ε = 1e-5"


def _token_of_integers(rng: np.random.Generator) -> dict:
    """Exercise 1's data as a student gets them: a token of four small integers, not all equal
    (H = 4, as its mistakes say)."""
    while True:
        token_b = rng.integers(-4, 10, size=4).astype(float)
        if token_b.std() > 0:
            return {"token_b": token_b}


@forbidding("lnlib", "torch")
@variant(
    lambda rng: redrawn(
        rng, _token_of_integers, four_steps_by_hand, EPS_ADDED_TO_SIGMA, MISSING_EPS
    )
)
@domain(lambda rng: {"token_b": rng.integers(-4, 8, size=4).astype(float) + rng.normal(size=4) / 8})
@rests_on("The idea")
def four_steps_by_hand(token_b) -> Exercise:
    """Exercise 1: LayerNorm of `token_b` with γ = 1, β = 0 and ε = 1e-5, shape ``(H,)``."""
    token_b = np.asarray(token_b, dtype=np.float64)
    steps = lnlib.layer_norm_steps(token_b)
    centred, var, eps = token_b - token_b.mean(), token_b.var(), steps.eps
    eps_outside = layer_norm_eps_outside_sqrt(token_b)
    h_minus_1 = centred / np.sqrt(token_b.var(ddof=1) + eps)
    return Exercise(
        lnlib.layer_norm(token_b),
        rtol=1e-9,
        hint=(
            "Four steps: the mean, the (biased) variance, divide by the square root of variance "
            "plus ε."
        ),
        mistakes={
            EPS_ADDED_TO_SIGMA: eps_outside,
            "the variance divides by H - 1 = 3; LayerNorm's divides by H = 4": h_minus_1,
            MISSING_EPS: centred / np.sqrt(var),
            "that divides by σ² + ε; LayerNorm divides by its square root": centred / (var + eps),
            "that is x - μ, centred but not yet divided by sqrt(σ² + ε)": centred,
        },
    )


def divisor_ratio() -> Exercise:
    """Exercise 2: the correct divisor sqrt(σ² + ε) over the document's σ + ε, for the embedding's σ
    = 0.048."""
    steps = lnlib.layer_norm_steps(documents_embedding())
    right, sigma, eps = steps.sqrt_var_eps.item(), np.sqrt(steps.var.item()), steps.eps
    documents = sigma + eps
    return Exercise(
        right / documents,
        digits=4,  # the ratio and its inverse, 1.002 and 0.998, meet at three
        hint=(
            "Compute both divisors with σ = 0.048 and ε = 1e-5, then divide the correct one by the "
            "document's."
        ),
        mistakes={
            (
                "that is the inverse ratio: the correct divisor goes on top, so the answer is a "
                "bit above 1"
            ): (documents / right),
            "the document's divisor is σ + ε, not σ alone: its ε is missing": right / sigma,
            "that is the difference of the two divisors; the question asks for their ratio": (
                right - documents
            ),
            # learner A, 2026-11-30: 1 was told "close", in a question about a 0.2 % effect
            (
                "a ratio of 1.000 would say the two divisors are equal; at σ = 0.048 they "
                "differ in the third decimal, which four significant digits show"
            ): 1.0,
        },
    )


@variant(
    lambda rng: redrawn(
        rng, lambda r: {"batch": integer_rows(r, 2, 4)}, scaled_and_shifted_batch, MISSING_EPS
    )
)
@domain(lambda rng: {"batch": rng.normal(size=(rng.integers(2, 5), rng.integers(3, 9))) * 3})
@rests_on("All of it in one function")
def scaled_and_shifted_batch(batch) -> Exercise:
    """Exercise 3: LayerNorm of `batch` (the cell's: the documents' 2×4 batch) with γ = 2 and β =
    0.5 for every feature."""
    batch = np.asarray(batch, dtype=np.float64)
    gamma, beta = np.full(batch.shape[-1], GAMMA), np.full(batch.shape[-1], BETA)
    steps = lnlib.layer_norm_steps(batch)
    xhat, eps = steps.xhat, steps.eps
    by_column = (batch - batch.mean(axis=0)) / np.sqrt(batch.var(axis=0) + eps)
    whole_batch = (batch - batch.mean()) / np.sqrt(batch.var() + eps)
    without_eps = lnlib.layer_norm(batch, eps=0)
    return Exercise(
        lnlib.layer_norm(batch, gamma, beta),
        rtol=1e-9,
        hint="Normalize each sample (row) first, then multiply by γ and add β.",
        mistakes={
            "that normalizes each feature down the batch (axis=0); LayerNorm normalizes each "
            "sample (row) across its features, axis=-1": GAMMA * by_column + BETA,
            "that normalizes the whole batch at once; LayerNorm takes one mean and one variance "
            "per sample (row), axis=-1": GAMMA * whole_batch + BETA,
            "γ and β are swapped: γ = 2 multiplies, β = 0.5 is added": BETA * xhat + GAMMA,
            "β is added before the scaling: y = γ x̂ + β, so γ multiplies x̂ alone": (
                GAMMA * (xhat + BETA)
            ),
            MISSING_EPS: GAMMA * without_eps + BETA,
            "that is x̂ itself: γ = 2 and β = 0.5 are not applied yet, y = γ x̂ + β": xhat,
            # learner A12: forgetting one of the two
            "β = 0.5 is missing: that is γ x̂ alone, y = γ x̂ + β": GAMMA * xhat,
            "γ = 2 is missing: that is x̂ + β, y = γ x̂ + β": xhat + BETA,
        },
    )


def explorer_xhat_of_second_sample() -> Exercise:
    """Exercise 4 (predict, then check): x̂ of the first feature of sample 2 of the 2×4 batch, which
    the explorer shows at step 3 (ε = 1e-5)."""
    batch = documents_batch()
    first, eps = batch[1, 0], lnlib.layer_norm_steps(batch).eps
    return Exercise(
        float(lnlib.layer_norm(batch)[1, 0]),
        hint="Sample 2 takes its own μ and σ², over its own four features, as sample 1 does.",
        mistakes={
            "that normalizes the whole batch at once; each sample has its own mean and "
            "variance": float((first - batch.mean()) / np.sqrt(batch.var() + eps)),
            "that normalizes the feature down the batch, over the two samples; LayerNorm works "
            "across each sample's features": float(
                (first - batch[:, 0].mean()) / np.sqrt(batch[:, 0].var() + eps)
            ),
            "that uses the variance with H - 1; LayerNorm's σ² divides by H": float(
                (first - batch[1].mean()) / np.sqrt(batch[1].var(ddof=1) + eps)
            ),
            "that divides by σ², not by its square root": float(
                (first - batch[1].mean()) / (batch[1].var() + eps)
            ),
            "that is x − μ, not yet divided by √(σ² + ε)": float(first - batch[1].mean()),
        },
    )


exercises = Exercises(
    "08_complete_examples",
    four_steps_by_hand,
    divisor_ratio,
    scaled_and_shifted_batch,
    explorer_xhat_of_second_sample,
)
