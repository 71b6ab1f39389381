"""Feedback for the exercises at the end of each chapter.

Each exercise in a chapter is four cells (CONTRIBUTING.md): the reader's answer cell
(``answer_1 = None``); a cell hidden in JupyterLab and removed on the website that builds an
:class:`Exercise` (the expected answer, the hint, the mistakes to recognise); a check cell that only
says ``exercise_1.check(answer_1)``; and a collapsed solution in a markdown dropdown, which Run All
does not execute. The feedback names what is wrong in words: not answered, wrong kind or shape, a
wrong choice, a known mistake (a missing ε, a sign, H - 1 for H), how far off, or right.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lnlib.book.tools.notebooks import website_build

__all__ = ["Exercise", "check", "feedback"]

NOT_ANSWERED = "Not answered yet: replace None with your answer and run this cell again."
#: In lines of at most 41 characters, so a phone shows them whole.
ON_THE_WEBSITE = (
    "This check runs in the notebook only.\n"
    "Open the chapter in JupyterLab (make lab;\n"
    "see How to start on the first page),\n"
    "write your answer above, run this cell."
)


@dataclass
class Exercise:
    """One exercise's expected answer and how to tell the reader what is wrong.

    Parameters
    ----------
    expected : array_like, number or bool
        The right answer, computed by lnlib out of the reader's sight.
    hint : str
        A nudge shown with a wrong answer (never the answer itself).
    rtol : float, default 1e-6
        Relative tolerance for numeric answers; tight enough to reject the
        mistakes the hint warns about.
    atol : float, default 1e-9
        Absolute tolerance for numeric answers.
    mistakes : dict of str to array_like, default empty
        Answers a known mistake gives, each with the sentence that names the
        mistake (the signature's ``<factory>``: a new empty dict per exercise).
    choices : sequence, optional
        For a multiple-choice question, the allowed answers.
    """

    expected: object
    hint: str = ""
    rtol: float = 1e-6
    atol: float = 1e-9
    mistakes: dict = field(default_factory=dict)
    choices: tuple | None = None

    def feedback(self, answer) -> str:
        """The feedback line on ``answer``: starts with "Correct!" exactly when it is right."""
        return feedback(
            answer,
            self.expected,
            rtol=self.rtol,
            atol=self.atol,
            hint=self.hint,
            mistakes=self.mistakes,
            choices=self.choices,
        )

    def check(self, answer) -> None:
        """Print :meth:`feedback` (returns nothing, so the check cell shows one line).

        In the website build an unanswered exercise says how to try it instead (nothing runs there).
        """
        print(ON_THE_WEBSITE if answer is None and website_build() else self.feedback(answer))

    def __repr__(self) -> str:  # never show the expected answer by accident
        return "Exercise(expected=<hidden>)"


def check(
    answer, expected, *, rtol: float = 1e-6, atol: float = 1e-9, hint: str = "", **kwargs
) -> None:
    """Print :func:`feedback` on an exercise answer (it returns nothing, so the cell shows one line)."""
    print(feedback(answer, expected, rtol=rtol, atol=atol, hint=hint, **kwargs))


def _close(got, want, rtol, atol) -> bool:
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))


def _as_numbers(value):
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _how_far(got, want) -> str:
    worst = float(np.max(np.abs(got - want)))
    scale = float(np.max(np.abs(want)))
    if scale > 0 and worst / scale < 1e-2:
        return (
            f"close, but not within the tolerance: off by {worst / scale:.1e} of the answer's size. "
            "A small term is missing or extra (an ε?), or a rounded number was typed in"
        )
    if want.size == 1:
        return f"{got.item():.6g} is not the expected value"
    wrong = int(np.sum(~np.isclose(got, want)))
    return f"{wrong} of {want.size} entries differ from the expected answer (the largest by {worst:.3g})"


def feedback(
    answer,
    expected,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    hint: str = "",
    mistakes: dict | None = None,
    choices=None,
) -> str:
    """The feedback line on an exercise answer: not answered, wrong kind or shape, which mistake, how far off, or correct.

    Parameters
    ----------
    answer : array_like, number, bool or None
        The reader's answer; None means "not answered yet".
    expected : array_like, number or bool
        The right answer, computed by lnlib.
    rtol : float, default 1e-6
        Relative tolerance for numeric answers.
    atol : float, default 1e-9
        Absolute tolerance for numeric answers.
    hint : str
        Added when the answer is wrong.
    mistakes : dict of str to array_like, optional
        Answers that known mistakes give, each with the sentence naming the mistake.
    choices : sequence, optional
        The allowed answers of a multiple-choice question.

    Returns
    -------
    str
        Starts with "Correct!" exactly when the answer is right.
    """

    def wrong(reason: str) -> str:
        return f"Not quite: {reason}. {hint}".rstrip()

    if answer is None:
        return NOT_ANSWERED
    if isinstance(expected, (bool, np.bool_)):
        if not isinstance(answer, (bool, np.bool_)):
            return f"Not quite: answer with True or False; got {answer!r}."
        return (
            "Correct!" if bool(answer) == bool(expected) else wrong(f"{bool(answer)} is not right")
        )
    if choices is not None:
        if not any(np.array_equal(np.asarray(answer), np.asarray(c)) for c in choices):
            return f"Not quite: answer with one of {', '.join(map(str, choices))}; got {answer!r}."
        if not np.array_equal(np.asarray(answer), np.asarray(expected)):
            return wrong(f"{answer!r} is one of the choices, but not the right one")
        return "Correct!"
    got = _as_numbers(answer)
    if got is None:
        return f"Not quite: expected a number or an array of numbers, got {type(answer).__name__}."
    want = np.asarray(expected, dtype=np.float64)
    if got.shape != want.shape:
        if got.size == want.size and got.T.shape == want.shape and _close(got.T, want, rtol, atol):
            return wrong(
                f"the values are right but transposed: expected shape {want.shape}, got {got.shape}"
            )
        return wrong(f"expected shape {want.shape}, got shape {got.shape}")
    if not np.all(np.isfinite(got)):
        return wrong(
            "your answer contains nan or inf: a division by zero, or a square root of a negative number?"
        )
    if _close(got, want, rtol, atol):
        return "Correct!"
    for sentence, value in (mistakes or {}).items():
        mistaken = _as_numbers(value)
        if mistaken is not None and _close(got, mistaken, rtol, atol):
            return wrong(sentence)
    if np.any(want != 0) and _close(-got, want, rtol, atol):
        return wrong("the sign is flipped")
    return wrong(_how_far(got, want))
