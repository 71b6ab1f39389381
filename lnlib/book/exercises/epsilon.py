"""Chapter 05's exercises (chapters/05_epsilon.ipynb): what ε does to the variance of LayerNorm's
output."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import Exercises, domain, forbidding, redrawn, rests_on, variant
from lnlib.book.exercises.feedback import Exercise
from lnlib.variants import FRAMEWORK_EPS, layer_norm_eps_outside_sqrt, sample_variance

EPS = 1e-5


def _near_constant(rng: np.random.Generator) -> dict:
    """Exercise 1's data as a student gets them: five numbers to three decimals within 0.009 of
    0.5 (σ² a few times 1e-6, so ε matters), not all equal."""
    while True:
        v = np.round(0.5 + rng.integers(-9, 10, size=5) / 1000, 3)
        if v.std() > 0:
            return {"v": v}


#: Exercise 1's other ε a reader may reach for, by value: another framework's default (named), or
#: a guess a decade away.
OTHER_EPS = {eps: f" ({name}'s default)" for name, eps in FRAMEWORK_EPS.items() if eps != EPS} | {
    1e-4: "",
    1e-8: "",
}


@rests_on("The idea")
@forbidding("lnlib", "torch")
@variant(lambda rng: redrawn(rng, _near_constant, output_variance_with_eps))
@domain(
    lambda rng: {"v": rng.normal(0.5, 10.0 ** rng.uniform(-3.5, -1.5), size=rng.integers(3, 9))}
)
def output_variance_with_eps(v) -> Exercise:
    """Exercise 1: the variance of LayerNorm's output for `v` with ε = 1e-5, σ²/(σ² + ε)."""
    v = np.asarray(v, dtype=np.float64)
    variance = float(sample_variance(v))
    expected = float(sample_variance(lnlib.layer_norm(v, eps=EPS)))
    unbiased = float(sample_variance(v, unbiased=True))
    return Exercise(
        expected,
        rtol=1e-9,
        hint="σ² is the biased variance v.var(); then divide it by σ² + 1e-5.",
        mistakes={
            "that is σ / (σ + ε), a standard deviation with ε added to σ; the question asks for "
            "the variance, σ² / (σ² + ε)": np.sqrt(variance) / (np.sqrt(variance) + EPS),
            "1 is the answer without ε; here σ² is small enough that ε matters": 1.0,
            "you used the unbiased variance (ddof=1); LayerNorm's σ² divides by H": (
                unbiased / (unbiased + EPS)
            ),
            "that adds ε to σ, (σ / (σ + ε))²; the frameworks add it to σ², inside the root": float(
                sample_variance(layer_norm_eps_outside_sqrt(v, eps=EPS))
            ),
            "that is the output's standard deviation; the variance is its square": np.sqrt(
                expected
            ),
            "that is (σ² + ε) / σ², upside down: the output variance is σ² / (σ² + ε)": (
                1 / expected
            ),
            "that is ε / (σ² + ε), the share ε takes; the output variance is σ² / (σ² + ε)": (
                EPS / (variance + EPS)
            ),
            "that is the variance of v itself; the question asks for the variance of "
            "LayerNorm's output": variance,
        }
        | {
            f"that uses ε = 1e{round(np.log10(other))}{whose}; this question's ε is 1e-5": variance
            / (variance + other)
            for other, whose in OTHER_EPS.items()
        },
    )


def eps_for_half_variance() -> Exercise:
    """Exercise 2: the ε that makes the variance of LayerNorm's output for [2, 4, 6, 8] one half."""
    token = np.array([2.0, 4.0, 6.0, 8.0])
    variance = float(sample_variance(token))
    return Exercise(
        variance,
        hint="σ²/(σ² + ε) = 1/2 when ε equals ...",
        mistakes={
            "that is σ; ε is compared with the variance σ², not with the standard deviation": (
                np.sqrt(variance)
            ),
            "that uses the unbiased variance (H - 1); LayerNorm's σ² divides by H": float(
                sample_variance(token, unbiased=True)
            ),
            "that ε makes the output's standard deviation one half; its variance is then one "
            "quarter": variance * (1 / 0.5**2 - 1),  # σ²/(σ² + ε) = 1/4
            "that is half the variance: the output's variance is σ²/(σ² + ε), one half when ε "
            "is the whole of σ²": variance / 2,
            "that is PyTorch's default ε; the exercise asks for the ε that halves the output's "
            "variance": 1e-5,
        },
    )


def keras_eps_on_small_std() -> Exercise:
    """Exercise 3: whether an input of standard deviation 0.01 keeps an output std within 1 % of 1
    under Keras's ε."""
    small = 0.01 * np.array([1.0, -1.0, 1.0, -1.0])  # standard deviation exactly 0.01
    output = lnlib.layer_norm(small, eps=FRAMEWORK_EPS["Keras"])
    return Exercise(
        bool(abs(np.sqrt(sample_variance(output)) - 1) < 0.01),
        hint="Compare σ² = 1e-4 with Keras's ε = 1e-3: which is larger?",
        mistakes={
            "before you answer, compare the input's variance, σ² = 1e-4, with Keras's ε, and "
            "see which of the two makes up most of σ² + ε": True,
        },
    )


#: Exercise 4's setting of the explorer: its input [1, 1 + δ, 1 - δ, 1] at this δ, and this ε.
PREDICT_SPREAD, PREDICT_EPS = 1e-2, 1e-4


def explorer_output_variance() -> Exercise:
    """Exercise 4 (predict, then check): the output variance σ²/(σ² + ε) the explorer shows at
    δ = :data:`PREDICT_SPREAD` and ε = :data:`PREDICT_EPS`."""
    x = 1.0 + PREDICT_SPREAD * np.array([0.0, 1.0, -1.0, 0.0])  # the explorer's input
    expected = float(sample_variance(lnlib.layer_norm(x, eps=PREDICT_EPS)))
    unbiased = float(sample_variance(x, unbiased=True))
    return Exercise(
        expected,
        hint="Work out σ² of [1, 1 + δ, 1 - δ, 1] first (two of its four squared deviations are "
        "δ², two are 0), then compare it with ε in σ²/(σ² + ε).",
        mistakes={
            "that is the output's standard deviation; the readout's bold number is the variance": (
                np.sqrt(expected)
            ),
            "that adds ε to σ, (σ / (σ + ε))²; the explorer's bold number puts ε inside the "
            "root": float(sample_variance(layer_norm_eps_outside_sqrt(x, eps=PREDICT_EPS))),
            "that takes σ² to be δ², which it is not for this input": PREDICT_SPREAD**2
            / (PREDICT_SPREAD**2 + PREDICT_EPS),
            "that uses the unbiased variance (H - 1); LayerNorm's σ² divides by H": unbiased
            / (unbiased + PREDICT_EPS),
            # learner A (2026-11-29) typed the readout before moving ε: "no targeted hint"
            "that is the readout at the explorer's starting ε = 1e-5; the exercise sets ε = 1e-4": (
                float(sample_variance(lnlib.layer_norm(x, eps=1e-5)))
            ),
        },
    )


exercises = Exercises(
    "05_epsilon",
    output_variance_with_eps,
    eps_for_half_variance,
    keras_eps_on_small_std,
    explorer_output_variance,
)
