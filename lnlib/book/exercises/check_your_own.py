"""Chapter 16's exercises (chapters/16_check_your_own.ipynb): what the harness says of a bug and of
its fix."""

from __future__ import annotations

import numpy as np

from lnlib.book.exercises.chapter import Exercises, asks_for
from lnlib.book.exercises.feedback import Exercise
from lnlib.harness import CASES, check_layer_norm
from lnlib.textbook import numpy_layer_norm
from lnlib.variants import buggy_eps_outside_root, buggy_half_statistics, buggy_unbiased_variance


def _failures(forward) -> int:
    """How many checks of the harness's forward pass, in its four dtypes, `forward` fails."""
    with np.errstate(all="ignore"):  # the bugs overflow or divide by zero
        return len(check_layer_norm(forward).failures)


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


@asks_for("code")
def failures_of_the_fix() -> Exercise:
    """Exercise 2: how many checks ``buggy_unbiased_variance`` fails once fixed.

    Every planted bug is ``numpy_layer_norm`` with one mistake, so the fix is ``numpy_layer_norm``,
    checked as the question checks ``fixed``: its forward pass alone.
    """
    with np.errstate(all="ignore"):
        checks = len(check_layer_norm(numpy_layer_norm).results)
    return Exercise(
        _failures(numpy_layer_norm),
        hint="Divide the sum of squared deviations by H, not H - 1 (x.var() does).",
        mistakes={
            "that is how many checks the buggy version fails: run the harness on your fix": (
                _failures(buggy_unbiased_variance)
            ),
            "that is how many checks ran: the question asks how many fail": checks,
            "that is how many checks fail with the statistics in the 16-bit input dtype "
            "(x.var() on float16 data): keep float32 statistics for 16-bit data, "
            "as the buggy version does": _failures(buggy_half_statistics),
            "that is how many checks fail with ε added to the standard deviation, "
            "(x - mean) / (std + eps): ε goes under the root": _failures(buggy_eps_outside_root),
        },
    )


exercises = Exercises("16_check_your_own", eps_outside_root_in_float16, failures_of_the_fix)
