"""Chapter 13's exercises (chapters/13_numerics.ipynb): Chan's merge, where the one-pass variance
fails in float32, the memory traffic of a two-pass kernel, and Welford's running M₂ by hand."""

from __future__ import annotations

import numpy as np

from lnlib.book.exercises.chapter import (
    Exercises,
    asks_for,
    domain,
    forbidding,
    redrawn,
    rests_on,
    variant,
)
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.experiments.memory_speed import PARAMETERS, KernelStep, memory_traffic
from lnlib.book.experiments.numerics import shift_errors
from lnlib.variance_algorithms import WelfordState, chan_merge, welford

#: Exercise 1's least relative distance between two named mistakes (three digits are asked).
APART = 0.01
#: Exercise 2's shifts, the answers it allows, and its threshold on the relative error.
SHIFTS, THRESHOLD = (10, 100, 1000, 10000), 0.01
#: Exercise 3's streaming kernel with the two-pass formula: three sweeps over the row.
STREAMING_TWO_PASS = (
    KernelStep("mean = sum(x) / H", reads=("x",), writes=("mean",)),
    KernelStep("var = sum((x - mean)**2) / H", reads=("x", "mean"), writes=("var",)),
    KernelStep(
        "y = (x - mean) / sqrt(var + eps) * gamma + beta",
        reads=("x", "mean", "var", "gamma", "beta"),
        writes=("y",),
    ),
)


def _chunk(rng: np.random.Generator) -> list[float]:
    """One chunk's Welford statistics, ``[count, mean, M₂]``: a count of 2 to 8, an integer mean
    and a positive integer M₂ (any M₂ > 0 is some chunk's)."""
    return [float(rng.integers(2, 9)), float(rng.integers(-9, 10)), float(rng.integers(1, 31))]


def _two_chunks(rng: np.random.Generator) -> dict:
    """Exercise 1's data: two chunks, one a row, with different means (Chan's distance term then
    counts); six numbers, so a graded answer must compute from them (chapter.BY_HAND)."""
    while True:
        a, b = _chunk(rng), _chunk(rng)
        if a[1] != b[1]:
            return {"chunks": np.array([a, b])}


def _told_apart(rng: np.random.Generator) -> dict:
    """Exercise 1's data as a student gets them: two chunks whose named mistakes lie at least
    :data:`APART` apart, relatively, so that each, rounded to the digits asked, is named as itself
    (the truth audit, 2026-11-30: in about 1 % of the draws one rounded mistake was named as
    another)."""
    while True:
        data = _two_chunks(rng)
        values = sorted(float(v) for v in chan_merged_variance(**data).mistakes.values())
        if all(b - a > APART * abs(b) for a, b in zip(values, values[1:])):
            return data


def _state(chunk) -> WelfordState:
    """A chunk's ``[count, mean, M₂]`` as lnlib's Welford statistics."""
    count, mean, m2 = (np.float64(v) for v in chunk)
    return WelfordState(count=count, mean=mean, m2=m2)


@rests_on("Three ways to compute one number")
@forbidding("lnlib", ".var")
@variant(lambda rng: redrawn(rng, _told_apart, chan_merged_variance))
@domain(_two_chunks)
def chan_merged_variance(chunks) -> Exercise:
    """Exercise 1: the variance M₂ / n of a row from its two chunks' Welford statistics, one row
    of `chunks` each, ``[count, mean, M₂]``."""
    a, b = _state(chunks[0]), _state(chunks[1])
    n, delta = a.count + b.count, b.mean - a.mean
    merged = chan_merge(a, b)
    return Exercise(
        merged.variance,
        hint="Chan's formula adds the two chunks' M₂ and one more term for how far apart their "
        "means are, weighted by n_a n_b / n; the variance is M₂ / n.",
        mistakes={
            "that is (M₂,a + M₂,b) / n: the term for the distance between the two means is "
            "missing": (a.m2 + b.m2) / n,
            "that adds δ² unweighted: the distance term is δ² n_a n_b / n": (
                (a.m2 + b.m2 + delta**2) / n
            ),
            "that divides M₂ by n - 1: the biased variance LayerNorm uses divides by n": (
                merged.m2 / (n - 1)
            ),
            "that is M₂ itself, the sum of squared deviations: the variance is M₂ / n": merged.m2,
            "that is M₂,a + M₂,b: the term for the distance between the two means is missing, "
            "and the variance is M₂ / n": a.m2 + b.m2,
            "that divides by n twice: M₂ / n is the variance already": merged.m2 / n**2,
            "that weights δ² by n_a n_b; the weight is n_a n_b / n": (
                (a.m2 + b.m2 + delta**2 * a.count * b.count) / n
            ),
            "that averages the two chunks' variances: the row's variance also counts how far "
            "apart their means are, and weights each chunk by its size": (
                (a.variance + b.variance) / 2
            ),
            "that reads each chunk's M₂ as its variance and multiplies it by the count; the "
            "chunks send M₂, the sum of squared deviations, already": (
                a.count * a.m2 + b.count * b.m2 + delta**2 * a.count * b.count / n
            )
            / n,
            "that uses δ, not δ²: the distance term is δ² n_a n_b / n": (
                (a.m2 + b.m2 + delta * a.count * b.count / n) / n
            ),
        },
    )


def first_shift_one_pass_fails() -> Exercise:
    """Exercise 2: the smallest shift at which float32's one-pass variance is off by more than 1
    %."""
    worst = {s: shift_errors(s, "float32").variance_error["one_pass"] for s in SHIFTS}
    return Exercise(
        min(s for s, error in worst.items() if error > THRESHOLD),
        choices=SHIFTS,
        hint="The data have a spread near 1, so the condition number κ is about the shift: for "
        "which κ does u·κ² (u is float32's unit roundoff) first pass 0.01? Then run "
        "shift_errors to see.",
        mistakes={
            "that is where the error first passes 1, that is 100 %: 1 % is a relative error "
            "of 0.01": min(s for s, error in worst.items() if error > 1),
            "at that shift the error is still below 1 %: the question asks for the smallest "
            "shift above it": max(s for s, error in worst.items() if error <= THRESHOLD),
        },
    )


def two_pass_kernel_transfers() -> Exercise:
    """Exercise 3: the H-vector transfers of a streaming kernel with the two-pass formula."""
    traffic = memory_traffic(STREAMING_TWO_PASS)
    with_parameters = memory_traffic(STREAMING_TWO_PASS, count_parameters=True)
    every_array = sum(
        name not in PARAMETERS for step in STREAMING_TWO_PASS for name in step.reads + step.writes
    )
    return Exercise(
        traffic.total,
        hint="Each sweep reads x once; only the last one writes y. Compare with the fused Welford "
        "kernel's count.",
        mistakes={
            "that counts the three reads of x but not the write of y: the last sweep also "
            "writes y": traffic.reads,
            "that counts γ and β; in a batch they stay in cache after the first row, and the "
            "question leaves them out": with_parameters.total,
            "that counts the mean and the variance as H-vectors; they are one number per row": (
                every_array
            ),
        },
    )


def _shifted_row(rng: np.random.Generator) -> dict:
    """Exercise 4's data: eight float32 values a quarter apart around an offset of 2,000 to 20,000,
    as the shifted rows of the chapter (every value exact in float32)."""
    while True:
        offset = float(rng.integers(2_000, 20_001))
        row = (offset + rng.integers(-12, 13, size=8) / 4).astype(np.float32)
        if row.std() > 0:
            return {"stream": row}


@rests_on("Three ways to compute one number")
@asks_for("code")
@forbidding(
    "lnlib",
    ".var",
    ".nanvar",
    ".std",
    ".nanstd",
    ".mean",
    ".nanmean",
    ".average",
    ".cov",
    "statistics",
)
@variant(lambda rng: redrawn(rng, _shifted_row, welford_by_hand))
@domain(lambda rng: {"stream": rng.normal(5.0, 2.0, size=rng.integers(2, 17)).astype(np.float32)})
def welford_by_hand(stream) -> Exercise:
    """Exercise 4: Welford's running M₂ after each value of `stream`, in float32, one value at a
    time (what its loop keeps, which no formula over the whole row gives)."""
    row = np.asarray(stream, dtype=np.float32)
    states = [welford(row[: k + 1], lanes=1) for k in range(row.size)]
    m2 = np.array([s.m2 for s in states], dtype=np.float64)
    count = np.arange(1, row.size + 1, dtype=np.float32)
    sums = np.cumsum(row, dtype=np.float32)
    one_pass = np.cumsum(row * row, dtype=np.float32) - sums * sums / count
    return Exercise(
        m2,
        hint="Start from n = 0, mean = 0 and M2 = 0 in float32; for each value x: n += 1, "
        "delta = x - mean, mean += delta / n, M2 += delta * (x - mean), and keep M2. The last "
        "M2 divided by n is the variance.",
        mistakes={
            "that is the one-pass formula's M₂, sum(x²) - (sum x)²/n, in float32: its two terms "
            "cancel (Why the one-pass form fails)": one_pass.astype(np.float64),
            "that is the running variance M₂ / n; the question asks for M₂ itself": m2 / count,
            "that is the running mean, not M₂": np.array([s.mean for s in states], np.float64),
        },
    )


exercises = Exercises(
    "13_numerics",
    chan_merged_variance,
    first_shift_one_pass_fails,
    two_pass_kernel_transfers,
    welford_by_hand,
)
