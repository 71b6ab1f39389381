"""Chapter 17's exercises (chapters/17_fact_check.ipynb): x̂'s covariance and fourth moment, and a
negative scale."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import Exercises, asks_for
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.factcheck.measurements import exchangeable_second_moments, normal_fourth_moment


@asks_for("derivation")
def covariance_of_two_features() -> Exercise:
    """Exercise 1: Cov(x̂_1, x̂_2) for H = 5 i.i.d. features and ε = 0, by the chapter's
    derivation."""
    size = 5
    moments = exchangeable_second_moments()
    at_eps_0 = {moments["r"]: 1, moments["H"]: size}
    a, b = float(moments["a"].subs(at_eps_0)), float(moments["b"].subs(at_eps_0))
    return Exercise(
        b,
        hint="Exchangeable features: a + (H - 1) b = 0 with a = 1.",
        mistakes={
            "that divides by H: x̂_1's partners are the H - 1 other features, "
            "so a + (H - 1) b = 0": -a / size,
            "the sign is flipped: the x̂_i sum to 0, so one feature above its "
            "mean pulls the others below theirs": -b,
            "that is a = E[x̂_i²], the variance of one feature; the covariance "
            "of two different features is b": a,
        },
    )


@asks_for("derivation")
def fourth_moment_of_three_normal_features() -> Exercise:
    """Exercise 2: E[x̂⁴] for H = 3 i.i.d. normal features and ε = 0."""
    size = 3
    return Exercise(
        normal_fourth_moment(size),
        hint="The verdict on the moments above gives E[x̂⁴] for normal inputs as a function of H.",
        mistakes={
            "3 is the fourth moment of a standard normal variable; x̂ is not normal, "
            "and its entries sum to 0": 3.0,
            "that is 3(H + 1)/(H - 1), the fraction upside down: E[x̂⁴] = 3(H - 1)/(H + 1), "
            "below 3": 3.0 * (size + 1) / (size - 1),
        },
    )


def negative_scale_claim() -> Exercise:
    """Exercise 3: whether LN(-3x + 2) = LN(x) with ε = 0 for x = [1, 2, 4, 8]."""
    x = np.array([1.0, 2.0, 4.0, 8.0])
    holds = np.allclose(lnlib.layer_norm(-3 * x + 2, eps=0.0), lnlib.layer_norm(x, eps=0.0))
    return Exercise(
        bool(holds),
        hint="What does a negative scale do to x - μ, and does σ notice?",
        mistakes={
            "a shift cancels and a positive scale cancels; look at what the sign of -3 does to "
            "x - μ, and whether σ, a square root, can undo it": not holds,
        },
    )


exercises = Exercises(
    "17_fact_check",
    covariance_of_two_features,
    fourth_moment_of_three_normal_features,
    negative_scale_claim,
)
