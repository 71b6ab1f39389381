"""Chapter 16's exercises (chapters/16_check_your_own.ipynb): what the harness says of a bug, and
the output of its fix."""

from __future__ import annotations

import numpy as np

from lnlib.book.exercises.chapter import Exercises, asks_for, domain, forbidding, rests_on, variant
from lnlib.book.exercises.feedback import Exercise
from lnlib.harness import CASES, check_layer_norm
from lnlib.textbook import numpy_layer_norm
from lnlib.variants import (
    buggy_eps_outside_root,
    buggy_half_statistics,
    buggy_unbiased_variance,
    buggy_wrong_axis,
)


def eps_outside_root_in_float16() -> Exercise:
    """Exercise 1: whether ``buggy_eps_outside_root`` passes the float16 check on the random (4, 3,
    64) inputs."""
    random = CASES[0].name
    with np.errstate(all="ignore"):
        report = check_layer_norm(buggy_eps_outside_root, dtypes=("float16",))
    (passed,) = [r.passed for r in report.results if r.part == "forward" and r.case == random]
    return Exercise(
        passed,
        choices=(True, False),
        mistakes={
            "compare the size of the bug's error, relative to the output, with how finely float16 "
            "stores the output": not passed,
        },
        hint=(
            "The error is about eps/sigma - eps/(2 sigma^2) = 5e-6 relative at"
            " sigma = 1; float16 rounds the output to about 5e-4 relative."
        ),
    )


EPS = 1e-5

#: What the answer to exercise 2 must not call: every LayerNorm lnlib computes (the library's, the
#: textbook's, the fused and GPU kernels, the harness's Welford and PyTorch wrappers), the planted
#: bugs and variants (a fix that calls ``buggy_unbiased_variance`` and rescales its output is not
#: the fix), and the frameworks. ``check_layer_norm`` stays free: the exercise asks for it.
FIX_FORBIDS = (
    "lnlib.layer_norm",
    "lnlib.layer_norm_steps",
    "lnlib.forward",
    "lnlib.norms",
    "lnlib.textbook",
    "lnlib.variants",
    "lnlib.fused",
    "lnlib.gpu",
    "lnlib.harness.welford_layer_norm",
    "lnlib.harness.torch_layer_norm",
    "torch",
    "jax",
)


def _fix_mistakes(x2, gamma2, beta2) -> dict:
    """Exercise 2's named mistakes, each with the output it gives on `x2`, `gamma2`, `beta2`."""
    ones, zeros = np.ones_like(gamma2), np.zeros_like(beta2)
    return {
        "that is the buggy version's output, the unbiased variance (the sum of squares over "
        "H - 1): divide by H, and run the harness on your fix": buggy_unbiased_variance(
            x2, gamma2, beta2, EPS
        ),
        "that is the output with the statistics in the 16-bit input dtype (x.mean() and x.var() "
        "on float16 data): keep float32 statistics for 16-bit data, as the buggy version does": (
            buggy_half_statistics(x2, gamma2, beta2, EPS)
        ),
        "that is the output with ε added to the standard deviation, (x - mean) / (std + eps): "
        "ε goes under the root, added to the variance": buggy_eps_outside_root(
            x2, gamma2, beta2, EPS
        ),
        "that is the output without ε: add ε = 1e-5 to the variance under the root": (
            numpy_layer_norm(x2, gamma2, beta2, 0.0)
        ),
        "that takes the statistics down the columns (axis=0), one per feature; LayerNorm takes "
        "them along each row, axis=-1": buggy_wrong_axis(x2, gamma2, beta2, EPS),
        "that is x̂, before γ and β: multiply by gamma2, then add beta2": numpy_layer_norm(
            x2, ones, zeros, EPS
        ),
    }


def _showing(expected, mistakes: dict) -> dict:
    """The `mistakes` whose outputs differ from `expected` at the digits asked: one that rounds to
    the answer is no mistake on these data (ε outside the root, on rows whose σ² dwarfs ε)."""
    bare = Exercise(expected)
    return {said: value for said, value in mistakes.items() if bare.check(value).kind != "correct"}


def _float16(*arrays) -> tuple:
    return tuple(np.asarray(a, dtype=np.float16) for a in arrays)


def _fix_data(rng: np.random.Generator) -> dict:
    """Exercise 2's data as a student gets them, drawn again until every named mistake shows at
    the digits asked: two tokens of H = 8 in float16 as the website's (an ordinary one, and one
    with an offset of 2 to 7 and a spread of a few hundredths, where ε and float16 statistics
    matter), γ of nonzero halves and β of quarters."""
    while True:
        ordinary = rng.integers(-250, 251, size=8) / 100
        offset = rng.integers(2, 8) + rng.integers(-3, 4, size=8) / 100
        gamma2 = rng.choice([-2.0, -1.5, -1.0, -0.5, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5], size=8)
        beta2 = rng.integers(-4, 5, size=8) / 4
        if np.ptp(offset) == 0:
            continue
        x2, gamma2, beta2 = _float16(np.stack([ordinary, offset]), gamma2, beta2)
        with np.errstate(all="ignore"):
            mistakes = _fix_mistakes(x2, gamma2, beta2)
            expected = numpy_layer_norm(x2, gamma2, beta2, EPS)
        if len(_showing(expected, mistakes)) == len(mistakes):
            return {"x2": x2, "gamma2": gamma2, "beta2": beta2}


def _any_float16_batch(rng: np.random.Generator) -> dict:
    """Exercise 2's domain: a float16 batch of 1 to 4 tokens of H = 2 to 16, offset and spread
    anywhere from a hundredth to a few units, with float16 γ and β."""
    rows, size = int(rng.integers(1, 5)), int(rng.integers(2, 17))
    x2 = rng.normal(rng.uniform(-8, 8), 10 ** rng.uniform(-2, 0.5), size=(rows, size))
    x2, gamma2, beta2 = _float16(x2, rng.normal(size=size), rng.normal(size=size))
    return {"x2": x2, "gamma2": gamma2, "beta2": beta2}


@rests_on("Six planted bugs")
@asks_for("code")
@forbidding(*FIX_FORBIDS)
@variant(_fix_data)
@domain(_any_float16_batch)
def output_of_the_fix(x2, gamma2, beta2) -> Exercise:
    """Exercise 2: ``fixed(x2, gamma2, beta2, 1e-5)``, the fixed ``buggy_unbiased_variance`` on a
    float16 batch, as it returns it (float16, the shape of `x2`).

    Every planted bug is ``numpy_layer_norm`` with one mistake, so the fix is ``numpy_layer_norm``:
    float32 statistics for 16-bit data, the output rounded to float16. An answer computed in
    float64 and rounded to float16 at the end differs from it by an ulp at most, well inside the
    three digits asked.
    """
    x2, gamma2, beta2 = _float16(x2, gamma2, beta2)
    with np.errstate(all="ignore"):  # the bugs divide by zero on a constant row
        expected = numpy_layer_norm(x2, gamma2, beta2, EPS)
        mistakes = _showing(expected, _fix_mistakes(x2, gamma2, beta2))
    return Exercise(
        expected,
        hint="Copy buggy_unbiased_variance and divide the sum of squared deviations by H, not "
        "H - 1 (x.var() does), keeping its float32 statistics for 16-bit data; "
        "check_layer_norm(fixed) should pass everywhere. Then call fixed(x2, gamma2, beta2, 1e-5).",
        mistakes=mistakes,
    )


exercises = Exercises("16_check_your_own", eps_outside_root_in_float16, output_of_the_fix)
