"""Chapter 03's exercises (chapters/03_mean.ipynb): the per-sample mean and what centring
removes."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import (
    Exercises,
    asks_for,
    domain,
    forbidding,
    integer_rows,
    rests_on,
    variant,
)
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.explorers.mean import OUTLIER_TOKEN

AXIS_HINT = "Average along the feature axis, axis=-1."


@asks_for("line")
@forbidding("lnlib", "torch")
@variant(lambda rng: {"batch": integer_rows(rng, 3, 4)})
@domain(
    lambda rng: {
        "batch": rng.integers(-9, 10, size=(rng.integers(2, 6), rng.integers(2, 7))).astype(float)
    }
)
@rests_on("The idea")
def per_sample_means(batch) -> Exercise:
    """Exercise 1: the mean of each row of `batch`, shape ``(rows,)``."""
    rows = np.asarray(batch, dtype=np.float64)
    return Exercise(
        lnlib.layer_norm_steps(rows).mean[:, 0],
        hint=AXIS_HINT,
        mistakes={
            "that averages down the columns (axis=0), one mean per feature; "
            "LayerNorm takes one mean per sample, along axis=-1": rows.mean(axis=0),
            "that is each row's sum: divide by H, the number of features": rows.sum(axis=-1),
            "that divides each row's sum by H - 1; the mean divides by H": rows.sum(axis=-1)
            / (rows.shape[-1] - 1),
        },
    )


@asks_for("line")
@forbidding("lnlib.layer_norm_steps")
@variant(lambda rng: {"acts": rng.normal(size=(2, 3, 5))})
@domain(lambda rng: {"acts": rng.normal(size=tuple(rng.integers(2, 6, size=3)))})
@rests_on("The idea")
def per_token_means(acts) -> Exercise:
    """Exercise 2: one mean per token of `acts`, shape ``(batch, sequence, 1)``."""
    acts = np.asarray(acts, dtype=np.float64)
    return Exercise(
        lnlib.layer_norm_steps(acts).mean,
        hint="One mean per token: average the hidden axis and keep it with keepdims=True.",
        mistakes={
            "the means are right, but keepdims=True is missing: acts - answer_2 would not "
            "broadcast token by token": acts.mean(axis=-1),
            "that averages over the sequence (axis=1), not over each token's hidden features": (
                acts.mean(axis=1, keepdims=True)
            ),
        },
    )


def same_centred_vector() -> Exercise:
    """Exercise 3: which of x + 5, 3x and x + v centre to the same vector as x = [1, 2, 3, 4]."""
    x, v = np.array([1.0, 2, 3, 4]), np.array([1.0, -1, 1, -1])

    def same_centred(w):
        centred = w - lnlib.layer_norm_steps(w).mean
        return bool(np.allclose(centred, x - lnlib.layer_norm_steps(x).mean))

    expected = [same_centred(x + 5.0), same_centred(3 * x), same_centred(x + v)]
    return Exercise(
        expected,
        hint="Centring removes only the component along the all-ones direction. "
        "Which of the three changes lie along it?",
        mistakes={
            (
                "3x: the mean removes the location, not the scale; the deviations are three times "
                "larger"
            ): [
                expected[0],
                not expected[1],
                expected[2],
            ],
            "x + v: v sums to zero, so it has no component along the all-ones direction "
            "and centring keeps it": [expected[0], expected[1], not expected[2]],
        },
    )


#: Exercise 4's setting: the chapter's outlier token (the explorer opens on it), with x4 moved
#: from 14 to this value.
MOVED_X4 = 3.0


def mean_after_moving_x4() -> Exercise:
    """Exercise 4 (predict, then check): the mean the explorer shows for the outlier token with x4
    moved to :data:`MOVED_X4`."""
    outlier = np.array(OUTLIER_TOKEN)  # the chapter's tokens[1], where its explorer opens
    moved = outlier.copy()
    moved[3] = MOVED_X4
    mean = float(lnlib.layer_norm_steps(moved).mean[0])
    others = np.delete(moved, 3)
    return Exercise(
        mean,
        hint="Each entry pulls the mean by 1/H of its value: start from the outlier token's mean "
        "and move it by an eighth of the change in x4.",
        mistakes={
            "that is the mean with x4 still at 14; the prompt moves it": float(
                lnlib.layer_norm_steps(outlier).mean[0]
            ),
            "that divides the sum by H - 1 = 7, one fewer than the entries it averages": float(
                moved.sum() / (moved.size - 1)
            ),
            "that leaves x4 out: it is still one of the entries the mean averages": float(
                others.mean()
            ),
            "that moves the mean by the whole change in x4, as if x4 were the only entry": float(
                outlier.mean() + (MOVED_X4 - outlier[3])
            ),
        },
    )


exercises = Exercises(
    "03_mean", per_sample_means, per_token_means, same_centred_vector, mean_after_moving_x4
)
