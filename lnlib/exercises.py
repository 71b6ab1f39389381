"""Feedback for the exercises at the end of each chapter.

A chapter's exercise cell leaves ``answer = None`` for the reader to fill in;
the check cell below it calls :func:`check`, which says whether the answer is
missing, of the wrong shape, or wrong (and by how much), or right.
"""

from __future__ import annotations

import numpy as np

__all__ = ["check"]


def check(answer, expected, *, rtol: float = 1e-6, atol: float = 1e-9, hint: str = "") -> bool:
    """Print feedback on an exercise answer and return whether it is right.

    Parameters
    ----------
    answer : array_like, number, bool or None
        The reader's answer; None means "not answered yet".
    expected : array_like, number or bool
        The right answer, computed by lnlib.
    rtol, atol : float
        Tolerances for numeric answers.
    hint : str
        Shown when the answer is wrong.
    """
    if answer is None:
        print("Not answered yet: replace None with your answer and run this cell again.")
        return False
    if isinstance(expected, (bool, np.bool_)):
        if not isinstance(answer, (bool, np.bool_)):
            print(f"Not quite: answer with True or False; got {answer!r}.")
            return False
        right = bool(answer) == bool(expected)
        print("Correct!" if right else f"Not quite. {hint}".rstrip())
        return right
    try:
        got = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        print(f"Not quite: expected a number or an array of numbers, got {type(answer).__name__}.")
        return False
    want = np.asarray(expected, dtype=np.float64)
    if got.shape != want.shape:
        print(f"Not quite: expected shape {want.shape}, got shape {got.shape}. {hint}".rstrip())
        return False
    if np.allclose(got, want, rtol=rtol, atol=atol):
        print("Correct!")
        return True
    worst = float(np.max(np.abs(got - want)))
    print(f"Not quite: the largest difference from the expected answer is {worst:.3g}. {hint}".rstrip())
    return False
