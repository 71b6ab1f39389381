"""Chapter 14's exercises (chapters/14_memory_speed.ipynb): the memory floor of a pass, and a dγ
bug."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import (
    BACKWARD_PASSES,
    Exercises,
    domain,
    forbidding,
    redrawn,
    rests_on,
    variant,
)
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.experiments.memory_speed import (
    FLOOR_STORE,
    KernelResults,
    bytes_moved,
    floor_seconds,
)

ROWS, SIZE = 8192, 4096
#: Exercise 1's unit slip: the floor in seconds, the answer times 10⁻³.
SECONDS = "that looks like seconds; the answer is in milliseconds"


def _bandwidth(rng: np.random.Generator) -> dict:
    """Exercise 1's data: a one-thread copy bandwidth in bytes per second, whole MB/s, from a slow
    core's to a fast one's."""
    return {"bandwidth": float(round(rng.uniform(10e9, 60e9), -6))}


@rests_on("The floor: bytes that must move")
@variant(lambda rng: redrawn(rng, _bandwidth, bfloat16_forward_floor))
@domain(lambda rng: {"bandwidth": float(rng.uniform(1e9, 1e12))})
def bfloat16_forward_floor(bandwidth) -> Exercise:
    """Exercise 1: the floor, in ms, of a bfloat16 forward pass over 8192 rows of H = 4096 at the
    copy bandwidth `bandwidth` (bytes per second; on the page, the committed one-thread
    ordinary-store copy's, the chapter's floor).

    The bandwidth is handed to the check, so the website's form prints it with the digits the
    answer needs (the chapter's own printout rounds it to 0.1 GB/s).
    """
    results = KernelResults.load()
    bandwidth = float(bandwidth)

    def floor_ms(moved, bandwidth=bandwidth):
        return floor_seconds(moved, bandwidth) * 1e3

    moved = bytes_moved(ROWS, SIZE, "bfloat16", "forward")
    x_only = moved.activations // 2 + moved.per_row + moved.per_feature
    return Exercise(
        floor_ms(moved),
        # Tight enough to tell the per-row and per-feature bytes, 7e-4 of the total, the question
        # asks for.
        rtol=1e-4,
        digits=4,  # the per-row and per-feature bytes are 7e-4 of the total
        hint="Two arrays of 8192 x 4096 values move (x read, y written), each value "
        "2 bytes in bfloat16; add the saved statistics and γ, β (float32), "
        "then divide by the bandwidth in bytes per second.",
        mistakes={
            "that is with 4-byte values: bfloat16 stores 2 bytes a value": floor_ms(
                bytes_moved(ROWS, SIZE, "float32")
            ),
            "that counts x only: the forward pass also writes y": floor_ms(x_only),
            "that is half the floor: x is read and y is written, two arrays of 2 bytes a "
            "value": floor_ms(moved) / 2,
            "that is the backward pass's three arrays (x, dy, dx)": floor_ms(
                bytes_moved(ROWS, SIZE, "bfloat16", "backward")
            ),
            "that counts x and y only: add the per-row bytes (the saved mean and rstd) "
            "and the per-feature bytes (γ and β), float32 each": floor_ms(moved.activations),
            SECONDS: floor_ms(moved) / 1e3,
            "that uses the all-core copy bandwidth: the question asks for the one-thread "
            "bandwidth given, bandwidth": floor_ms(
                moved, results.memory_bandwidth(max(results.thread_counts), FLOOR_STORE)
            ),
        },
        loose=(SECONDS,),  # named at any digits: 7.14e-3 as well as 7.139e-3
    )


def _rows(rng: np.random.Generator) -> dict:
    """Exercise 2's domain: rows of features, their upstream gradient, and a γ."""
    rows, size = int(rng.integers(2, 6)), int(rng.integers(2, 7))
    shape = (rows, size)
    return {
        "x2": rng.normal(size=shape),
        "dy2": rng.normal(size=shape),
        "gamma2": rng.normal(size=size),
    }


def _website_rows(rng: np.random.Generator) -> dict:
    """Exercise 2's data as a student gets them: 3 rows of 4 features and their upstream gradient,
    normal as the website's, and a γ of nonzero halves from -2 to 2."""
    return {
        "x2": rng.normal(size=(3, 4)),
        "dy2": rng.normal(size=(3, 4)),
        "gamma2": rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0], size=4),
    }


@rests_on("A fused kernel")
@forbidding(*BACKWARD_PASSES)
@variant(lambda rng: redrawn(rng, _website_rows, fixed_dgamma))
@domain(_rows)
def fixed_dgamma(x2, dy2, gamma2) -> Exercise:
    """Exercise 2: dγ of the fixed row-by-row backward pass on `x2`, `dy2` and `gamma2`, shape
    ``(H,)``."""
    x2, dy2, gamma2 = (np.asarray(a, dtype=np.float64) for a in (x2, dy2, gamma2))
    xhat = lnlib.layer_norm(x2)
    return Exercise(
        lnlib.layer_norm_backward(dy2, x2, gamma2)[1],
        hint="dγ sums dy · x̂ over every row; look at how each row's share "
        "reaches dgamma, and compare with dbeta's line.",
        mistakes={
            "that is only the last row's dy · x̂: dgamma = ... replaces the sum "
            "at every row, where dgamma += ... adds to it": dy2[-1] * xhat[-1],
            "that sums dy · x, the raw input: dγ needs the normalized x̂": (dy2 * x2).sum(axis=0),
            "that is dβ, the sum of dy alone": dy2.sum(axis=0),
            "that sums dy · x̂ along each row (axis=1), one number per row; dγ sums "
            "over the rows (axis=0), one number per feature": (dy2 * xhat).sum(axis=1),
            "that averages dy · x̂ over the rows: dγ is their sum": (dy2 * xhat).mean(axis=0),
            (
                "that multiplies by γ too: γ · dy is the gradient that reaches x̂, but dγ sums dy "
                "· x̂"
            ): (gamma2 * dy2 * xhat).sum(axis=0),
            "that is dx, the first array the function returns: dγ is the second": (
                lnlib.layer_norm_backward(dy2, x2, gamma2)[0]
            ),
        },
    )


exercises = Exercises("14_memory_speed", bfloat16_forward_floor, fixed_dgamma)
