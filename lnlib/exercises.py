"""Feedback for the exercises at the end of each chapter.

A chapter's exercise cell leaves ``answer = None`` for the reader to fill in;
the check cell below it calls :func:`check`, which says whether the answer is
missing, of the wrong shape, or wrong (and by how much), or right.
"""

from __future__ import annotations

import numpy as np

__all__ = ["check", "feedback"]


def check(answer, expected, *, rtol: float = 1e-6, atol: float = 1e-9, hint: str = "") -> None:
    """Print :func:`feedback` on an exercise answer (it returns nothing, so the cell shows one line)."""
    print(feedback(answer, expected, rtol=rtol, atol=atol, hint=hint))


def feedback(answer, expected, *, rtol: float = 1e-6, atol: float = 1e-9, hint: str = "") -> str:
    """The feedback line on an exercise answer: not answered, wrong kind or shape, off by how much, or correct.

    Parameters
    ----------
    answer : array_like, number, bool or None
        The reader's answer; None means "not answered yet".
    expected : array_like, number or bool
        The right answer, computed by lnlib.
    rtol, atol : float
        Tolerances for numeric answers.
    hint : str
        Added when the answer is wrong.

    Returns
    -------
    str
        Starts with "Correct!" exactly when the answer is right.
    """
    if answer is None:
        return "Not answered yet: replace None with your answer and run this cell again."
    if isinstance(expected, (bool, np.bool_)):
        if not isinstance(answer, (bool, np.bool_)):
            return f"Not quite: answer with True or False; got {answer!r}."
        return "Correct!" if bool(answer) == bool(expected) else f"Not quite. {hint}".rstrip()
    try:
        got = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        return f"Not quite: expected a number or an array of numbers, got {type(answer).__name__}."
    want = np.asarray(expected, dtype=np.float64)
    if got.shape != want.shape:
        return f"Not quite: expected shape {want.shape}, got shape {got.shape}. {hint}".rstrip()
    if np.allclose(got, want, rtol=rtol, atol=atol):
        return "Correct!"
    worst = float(np.max(np.abs(got - want)))
    return f"Not quite: the largest difference from the expected answer is {worst:.3g}. {hint}".rstrip()
