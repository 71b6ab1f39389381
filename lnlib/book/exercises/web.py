"""An exercise answered on the website, with no kernel (issue 25, item 3).

In the website build (``LNBOOK_WEBSITE=1``) an unanswered exercise's check shows an answer box and a
Check button instead of "Not answered yet". The expected answer, the tolerances, the hint and the answers
of the named mistakes are computed here, by lnlib, when the book is built, and stored in the page as
JSON; ``_ext/web_explorers_static/lnlib-exercises.js`` reads a typed answer (numbers, lists, True/False,
or arithmetic such as ``sqrt(2)/4``) and gives the feedback of :func:`lnlib.book.exercises.feedback.feedback`,
word for word (``tests/browser/test_web_exercises.py`` compares the two on every exercise).
"""

from __future__ import annotations

import html
import json

import numpy as np

from lnlib.book.exercises.feedback import (
    EDGE,
    NEARER,
    ON_THE_WEBSITE,
    ROUNDED,
    Exercise,
    Feedback,
)

__all__ = ["WebExercise", "answer_form"]

#: An answer of more numbers than this is not typed into a page: such an exercise is answered in the notebook.
TYPEABLE = 8
#: What the box says before the reader has checked anything.
WEB_NOT_ANSWERED = "Not answered yet: type your answer in the box and press Check."


def _plain(value):
    """`value` as JSON numbers: nested lists of floats (a bool is 1.0 or 0.0, as numpy reads it)."""
    return np.asarray(value, dtype=np.float64).tolist()


def _describe(exercise: Exercise) -> str:
    """The answer box's placeholder: the form the answer takes."""
    if isinstance(exercise.expected, (bool, np.bool_)):
        return "True or False"
    if exercise.choices is not None:
        return "one of " + ", ".join(map(str, exercise.choices))
    shape = np.shape(exercise.expected)
    flags = np.asarray(exercise.expected)
    kind = "True/False values" if flags.dtype == bool else "numbers"
    example = "True, False" if flags.dtype == bool else "1, 2"
    if shape == ():
        return "a number, e.g. 0.25 or sqrt(2)/4"
    if len(shape) == 1:
        return f"a list of {shape[0]} {kind}, e.g. [{example}{', ...' if shape[0] > 2 else ''}]"
    inner = " x ".join(map(str, shape))
    return f"nested lists of {inner} {kind}, e.g. [[1, 2], [3, 4]]"


def exercise_data(exercise: Exercise) -> dict:
    """Everything the page needs to judge an answer to `exercise` as the notebook does."""
    boolean = isinstance(exercise.expected, (bool, np.bool_))
    mistakes = [
        [sentence, _plain(value)]
        for sentence, value in exercise.mistakes.items()
        if np.all(np.isfinite(np.asarray(value, dtype=np.float64)))
    ]
    return {
        "kind": "bool" if boolean else ("choice" if exercise.choices is not None else "number"),
        "expected": bool(exercise.expected) if boolean else _plain(exercise.expected),
        "choices": None if exercise.choices is None else [_plain(c) for c in exercise.choices],
        "choiceLabels": None if exercise.choices is None else [str(c) for c in exercise.choices],
        "rtol": exercise.rtol,
        "atol": exercise.atol,
        "hint": exercise.hint,
        "mistakes": mistakes,
        "placeholder": _describe(exercise),
        "bools": bool(np.asarray(exercise.expected).dtype == bool),  # counted, not measured
        "integer": bool(np.issubdtype(np.asarray(exercise.expected).dtype, np.integer)),
        "rounded": ROUNDED,
        "nearer": NEARER,
        "edges": EDGE,
        "notAnswered": WEB_NOT_ANSWERED,
    }


class WebExercise:
    """The answer box of exercise `number` on the website; plain text elsewhere."""

    def __init__(self, exercise: Exercise, number: int, chapter: str, *, unseen: bool = False):
        self.exercise, self.number, self.chapter = exercise, number, chapter
        self.unseen = unseen  # its data are random numbers the page does not print

    def __repr__(self) -> str:
        return ON_THE_WEBSITE

    def _repr_html_(self) -> str:
        if self.unseen:
            return (
                f'<p class="lnlib-exercise-elsewhere">Exercise {self.number} is computed from random numbers '
                "the page does not print: answer it in the notebook (JupyterLab), where its check runs.</p>"
            )
        if np.size(self.exercise.expected) > TYPEABLE:
            return (
                f'<p class="lnlib-exercise-elsewhere">Exercise {self.number} asks for '
                f"{np.size(self.exercise.expected)} numbers computed from the data above: answer it in "
                "the notebook (JupyterLab), where its check runs.</p>"
            )
        data = json.dumps(exercise_data(self.exercise), ensure_ascii=False).replace("</", "<\\/")
        name = f"lnlib-answer-{self.chapter}-{self.number}"
        box = (
            Feedback(WEB_NOT_ANSWERED)
            ._repr_html_()
            .replace('role="status"', 'role="status" aria-live="polite"')
        )
        placeholder = html.escape(exercise_data(self.exercise)["placeholder"])
        return (
            f'<form class="lnlib-exercise" data-exercise="{self.number}" autocomplete="off">'
            f'<label for="{name}">Your answer to exercise {self.number}</label> '
            f'<input id="{name}" type="text" spellcheck="false" placeholder="{placeholder}"> '
            f'<button type="submit">Check</button>{box}'
            f'<script type="application/json" class="lnlib-exercise-data">{data}</script></form>'
        )


def answer_form(
    exercise: Exercise, number: int, chapter: str, *, unseen: bool = False
) -> WebExercise:
    """The website's answer box for `exercise` (see the module's docstring); for an exercise whose data the
    page does not print (`unseen`), a line that sends the reader to the notebook."""
    return WebExercise(exercise, number, chapter, unseen=unseen)
