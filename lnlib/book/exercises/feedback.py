"""What an exercise's check says: right, a named mistake, what is off, or not answered yet.

An :class:`Exercise` holds one expected answer, computed by lnlib, and the answers known mistakes give;
:func:`feedback` compares a reader's answer with them and names what is wrong in words (not answered,
wrong kind or shape, a wrong choice, a known mistake such as a missing ε or H - 1 for H, a transpose, a
sign, how far off). :class:`Feedback` shows that line as a styled box in JupyterLab and on the website.
Each chapter's exercises are built in their own module of this package (``lnlib.book.exercises.mean``
for chapter 03, and so on), so no cell of a chapter holds an expected answer.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np

__all__ = ["Exercise", "Feedback", "feedback"]

NOT_ANSWERED = "Not answered yet: replace None with your answer and run this cell again."
CORRECT = "Correct!"
#: The relative tolerance at which an answer typed with three or four digits still matches a known mistake.
ROUNDED = 2e-3
#: A typed answer within ROUNDED of the answer is right when every known mistake is this many times farther
#: from it than the answer is: numpy's printout (8 digits) or four digits pass, unless a mistake is that near.
NEARER = 4
WRONG = "Not quite: "
#: The plain-text stand-in of the website's answer box (lnlib.book.exercises.web), where HTML is not shown.
ON_THE_WEBSITE = "Answer in the box on the book's website, or run this cell in JupyterLab."


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
    also_right : dict of str to array_like, default empty
        Other answers that are right, each with the sentence said after "Correct!" (chapter 01's
        exercise 2: the chain rule's 1/2, which the stack's ε moves by a hair).
    epsilon : bool, optional
        Whether an ε is part of the exercise, so that "a small term missing or extra (an ε?)" is worth
        suggesting; None (the default): when a named mistake's sentence mentions ε.
    """

    expected: object
    hint: str = ""
    rtol: float = 1e-6
    atol: float = 1e-9
    mistakes: dict = field(default_factory=dict)
    choices: tuple | None = None
    also_right: dict = field(default_factory=dict)
    epsilon: bool | None = None

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
            also_right=self.also_right,
            epsilon=self.epsilon,
        )

    def check(self, answer) -> "Feedback":
        """:meth:`feedback` as a :class:`Feedback` box."""
        return Feedback(self.feedback(answer))

    def __repr__(self) -> str:  # never show the expected answer by accident
        return "Exercise(expected=<hidden>)"


# Okabe-Ito colours (colour-blind safe) for the box's left edge: right, wrong, not answered.
EDGE = {"correct": "#009E73", "wrong": "#D55E00", "unanswered": "#999999"}


@dataclass(frozen=True)
class Feedback:
    """One check's verdict: plain text in a terminal, a box that wraps at words in JupyterLab and on the website.

    Parameters
    ----------
    text : str
        What the box says: the line :func:`feedback` wrote, which starts with "Correct!" exactly when the
        answer is right, or that line after notes the reader must see first (`verdict` then holds the line).
    verdict : str, optional
        The line :func:`feedback` wrote, when `text` opens with notes (chapter.py: "`batch` was changed in
        place ..."); the box's kind is read from it.
    """

    text: str
    verdict: str | None = None

    @property
    def kind(self) -> str:
        """``"correct"``, ``"wrong"`` or ``"unanswered"``."""
        line = self.text if self.verdict is None else self.verdict
        if line.startswith(CORRECT):
            return "correct"
        return "wrong" if line.startswith(WRONG) else "unanswered"

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return (
            f'<div class="lnlib-feedback lnlib-feedback-{self.kind}" role="status" '
            f'style="border-left: 4px solid {EDGE[self.kind]}; padding: 0.3em 0.8em; '
            "margin: 0.2em 0; max-width: 44em; overflow-wrap: break-word; "
            'font-family: var(--jp-content-font-family, system-ui, sans-serif); line-height: 1.45; white-space: pre-line;">'
            f"{html.escape(self.text)}</div>"
        )


def _close(got, want, rtol, atol) -> bool:
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))


def _as_numbers(value):
    """`value` as float64 numbers, or None (text is never a number, even "100352")."""
    if (
        isinstance(value, (str, bytes))
        or np.asarray(value, dtype=object).dtype.kind in "USO"
        and any(isinstance(v, (str, bytes)) for v in np.ravel(np.asarray(value, dtype=object)))
    ):
        return None
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _named_mistake(got, mistakes: dict, rtol, atol) -> str | None:
    """The sentence of the first known mistake whose answer `got` equals (any shape), or None."""
    if got is None:
        return None
    named = [
        sentence
        for sentence, value in mistakes.items()
        if (mistaken := _as_numbers(value)) is not None and _close(got, mistaken, rtol, atol)
    ]
    return "; or ".join(named) or None  # two mistakes can give one number: name both


def _typed_answer(got, want, expected, mistakes: dict, atol) -> bool:
    """Whether `got` is the answer typed with fewer digits: within ROUNDED of it, and every known mistake at
    least NEARER times farther away (a count or True/False must be exact)."""
    kind = np.asarray(expected).dtype
    if kind.kind in "biu" or not _close(got, want, ROUNDED, atol):  # True/False, a count: exact
        return False
    gap = float(np.max(np.abs(got - want)))
    for value in mistakes.values():
        mistaken = _as_numbers(value)
        if mistaken is not None and mistaken.shape == got.shape:
            if float(np.max(np.abs(got - mistaken))) <= NEARER * gap:
                return False
    return True


def _half_digit(x: float) -> float:
    """Half a unit in the last digit of `x` as typed, its shortest form (5.4: 0.05, 0.00123: 5e-06); 0 for 0.

    lnlib-exercises.js finds the same digit from JavaScript's shortest form of the number, which has the
    same digits as Python's ``repr``; a computed answer has 16 or 17 digits, so this is about 1e-16 of it.
    """
    if x == 0 or not np.isfinite(x):
        return 0.0
    last = Decimal(repr(abs(x))).normalize().as_tuple().exponent
    return float(f"5e{last - 1}")


def _rounding_fits(got, target) -> bool:
    """Whether `target` rounds to `got` at the digits `got` was typed with, entry by entry (same shape)."""
    if target is None or target.shape != got.shape:
        return False
    half = np.array([_half_digit(x) for x in got.ravel().tolist()]).reshape(got.shape)
    return bool(np.all(np.abs(got - target) <= half * (1 + 1e-9)))


def _too_coarse(got, want, mistakes: dict) -> str | None:
    """ "Give more digits", naming the known mistakes the digits typed fit as well as the answer; or None."""
    if not _rounding_fits(got, want):
        return None
    fitting = [s for s, value in mistakes.items() if _rounding_fits(got, _as_numbers(value))]
    if not fitting:
        return None
    return (
        "close, but give more digits or the exact expression: at the digits you typed, your answer "
        f"also fits a known mistake, “{'; or '.join(fitting)}”"
    )


def _nearer_mistake(got, want, mistakes: dict, atol) -> str | None:
    """The known mistakes an answer typed with a few digits stands for: within ROUNDED of it, and NEARER
    times nearer to it than to the answer."""
    gap = float(np.max(np.abs(got - want)))
    named = [
        sentence
        for sentence, value in mistakes.items()
        if (mistaken := _as_numbers(value)) is not None
        and _close(got, mistaken, ROUNDED, atol)
        and NEARER * float(np.max(np.abs(got - mistaken))) <= gap
    ]
    return "; or ".join(named) or None


def involves_epsilon(mistakes: dict, epsilon: bool | None = None) -> bool:
    """Whether to suggest a missing or extra ε: `epsilon` when given, else when a mistake's sentence names ε."""
    return any("ε" in sentence for sentence in mistakes) if epsilon is None else bool(epsilon)


def _how_far(got, want, epsilon: bool) -> str:
    worst = float(np.max(np.abs(got - want)))
    scale = float(np.max(np.abs(want)))
    if scale > 0 and worst / scale < 1e-2:
        more = (
            "Give more digits or the exact expression (e.g. sqrt(5 + 1e-5)), or look for a small "
            "term missing or extra (an ε?)"
            if epsilon
            else "Give more digits or the exact expression (e.g. sqrt(2)/4)"
        )
        return f"close, but not within the tolerance: off by {worst / scale:.1e} of the answer's size. {more}"
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
    also_right: dict | None = None,
    epsilon: bool | None = None,
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
    also_right : dict of str to array_like, optional
        Other right answers, each with the sentence said after "Correct!".
    epsilon : bool, optional
        Whether to suggest a small term missing or extra (an ε); None: when a mistake's sentence names ε.

    Returns
    -------
    str
        Starts with "Correct!" exactly when the answer is right.
    """

    def wrong(reason: str) -> str:
        return f"{WRONG}{reason}. {hint}".rstrip()

    if answer is None:
        return NOT_ANSWERED
    if isinstance(expected, (bool, np.bool_)):
        if not isinstance(answer, (bool, np.bool_)):
            return f"Not quite: answer with True or False; got {answer!r}."
        return CORRECT if bool(answer) == bool(expected) else wrong(f"{bool(answer)} is not right")
    if choices is not None:
        given = _as_numbers(answer)  # None for text or a ragged list: never one of the choices
        if given is None or not any(np.array_equal(given, np.asarray(c)) for c in choices):
            return f"Not quite: answer with one of {', '.join(map(str, choices))}; got {answer!r}."
        if not np.array_equal(given, np.asarray(expected)):
            named = _named_mistake(given, mistakes or {}, rtol, atol)
            return wrong(named or f"{answer!r} is one of the choices, but not the right one")
        return CORRECT
    got = _as_numbers(answer)
    if got is None:
        return f"Not quite: expected a number or an array of numbers, got {type(answer).__name__}."
    want = np.asarray(expected, dtype=np.float64)
    mistakes = mistakes or {}
    for sentence, value in (also_right or {}).items():
        if _close(got, np.asarray(value, dtype=np.float64), rtol, atol):
            return f"{CORRECT} {sentence}."
    named = _named_mistake(got, mistakes, rtol, atol)
    if named is not None and not _close(got, want, rtol, atol):
        return wrong(named)
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
        return CORRECT
    if np.any(want != 0) and _close(-got, want, rtol, atol):
        return wrong("the sign is flipped")
    if _typed_answer(got, want, expected, mistakes, atol):
        return CORRECT
    # typed with a few digits: "give more digits" when they fit the answer and a known mistake alike; a
    # mistake is named only when the answer is NEARER times nearer to it than to the expected value
    unsure = None if np.asarray(expected).dtype.kind in "biu" else _too_coarse(got, want, mistakes)
    if unsure is not None:
        return wrong(unsure)
    rounded = _nearer_mistake(got, want, mistakes, atol)
    if rounded is not None:
        return wrong(rounded)
    if np.asarray(expected).dtype == bool:  # True/False answers: how many, not how far
        return wrong(f"{int(np.sum(got != want))} of {want.size} answers are not right")
    epsilon = involves_epsilon(mistakes, epsilon)
    if np.issubdtype(np.asarray(expected).dtype, np.integer):  # a count: no "small term missing"
        return wrong(
            f"{got.item():.6g} is not the expected count"
            if got.size == 1
            else _how_far(got, want, epsilon)
        )
    return wrong(_how_far(got, want, epsilon))
