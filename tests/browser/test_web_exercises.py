"""Every exercise answered on the website, offline, with the notebook's feedback (issue 25, item 3).

For every exercise of every chapter page (an answer of more than eight numbers is not typed into a page:
the page says to answer it in the notebook, lnlib.book.exercises.web.TYPEABLE): the page carries the exercise as lnlib computed it at build
time (lnlib/book/exercises/web.py). A reader types the right answer, each named mistake's answer, and an
answer the page cannot read, and presses Check; the box must say what
``lnlib.book.exercises.feedback.feedback`` says on the same answer, word for word ("Correct!", the named
mistake, what is off), and for the unreadable answer that it could not read it. More answers that are off
in telling ways (a transpose, a sign, a near miss, a wrong shape) go through the page's feedback function
directly, and must also agree with Python's.
"""

from __future__ import annotations

import ast
import json

import numpy as np
import pytest

from lnlib.book.exercises.feedback import Exercise

from .test_web_explorers import EXPLORERS  # noqa: F401 (the browser fixtures' module loads first)
from .test_website import PAGES

CHAPTER_PAGES = [page for page in PAGES if page.startswith("chapters/") and page[9:11].isdigit()]
MALFORMED = "[1, 2"


def as_literal(value) -> str:
    """`value` typed as a reader would type it, exactly (Python's repr keeps every digit of a float)."""
    if isinstance(value, bool):
        return repr(value)
    return repr(np.asarray(value, dtype=np.float64).tolist())


def python_exercise(data: dict) -> Exercise:
    """The exercise the page holds, as a Python Exercise (choices as the page labels them)."""
    if data["kind"] == "choice":
        choices = tuple(ast.literal_eval(label) for label in data["choiceLabels"])
        expected = next(c for c in choices if float(c) == np.asarray(data["expected"]).item())
        return Exercise(
            expected, hint=data["hint"], choices=choices, mistakes=dict(data["mistakes"])
        )
    dtype = bool if data["bools"] else (int if data["integer"] else float)
    expected = data["expected"] if data["kind"] == "bool" else np.asarray(data["expected"], dtype)
    return Exercise(
        expected,
        hint=data["hint"],
        rtol=data["rtol"],
        atol=data["atol"],
        mistakes={sentence: np.asarray(value) for sentence, value in data["mistakes"]},
    )


def agree(page_says: str, notebook_says: str) -> bool:
    """The same feedback; where it quotes the answer ("...; got 1e-07."), the page quotes it as typed."""
    if "; got " in notebook_says:
        return page_says.split("; got ")[0] == notebook_says.split("; got ")[0]
    return page_says == notebook_says


def telling_answers(data: dict) -> list[str]:
    """Answers off in ways the feedback names: typed into the page's feedback function."""
    if data["kind"] == "bool":
        return [repr(not data["expected"]), "0"]
    if data["kind"] == "choice":
        return [label for label in data["choiceLabels"]] + ["7"]
    want = np.asarray(data["expected"], dtype=np.float64)
    answers = [want * (1 + 1e-4), -want, want + 1.0, np.zeros(want.shape + (2,))]
    if want.ndim == 2:
        answers.append(want.T)
    if want.ndim >= 1 and want.size > 1:
        answers.append(want.ravel()[:-1])
    return [as_literal(a) for a in answers] + ["sqrt(2)/4", "[1, 2], [3]"]


@pytest.mark.parametrize("page_name", CHAPTER_PAGES)
def test_every_exercise_takes_an_answer_and_gives_the_notebooks_feedback(
    page_name, offline, site_url
):
    page = offline.context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{site_url}/{page_name}.html", wait_until="load")
    forms = page.locator("form.lnlib-exercise")
    # notebook-only: answers too long to type, or computed from random numbers the page does not print
    notes = page.locator(".lnlib-exercise-elsewhere")
    elsewhere = notes.count()
    assert 2 <= forms.count() + elsewhere <= 4, (
        f"{page_name}: {forms.count()} answer boxes and {elsewhere} notebook-only exercises"
    )
    for k in range(elsewhere):
        assert "answer it in the notebook" in notes.nth(k).inner_text(), notes.nth(k).inner_text()
    page.wait_for_function(
        "() => [...document.querySelectorAll('form.lnlib-exercise')].every(f => f.dataset.ready === '1')"
    )
    for k in range(forms.count()):
        form = forms.nth(k)
        number = form.get_attribute("data-exercise")  # a notebook-only exercise has no box
        where = f"{page_name}, exercise {number}"
        data = json.loads(form.locator("script.lnlib-exercise-data").text_content())
        exercise = python_exercise(data)
        assert form.locator(".lnlib-feedback").inner_text() == data["notAnswered"]
        label = form.locator(f"label[for='{form.locator('input').get_attribute('id')}']")
        assert label.inner_text().strip() == f"Your answer to exercise {number}", where
        typed = [as_literal(exercise.expected)] + [
            as_literal(v) for v in exercise.mistakes.values()
        ]
        for text in typed + [MALFORMED]:
            form.locator("input").fill(text)
            form.locator("button").click()
            shown = form.locator(".lnlib-feedback").inner_text()
            if text == MALFORMED:
                assert shown.startswith("Not quite: could not read your answer"), (
                    f"{where}: {shown!r}"
                )
                continue
            expected = exercise.feedback(ast.literal_eval(text))
            assert shown == expected, (
                f"{where}, typed {text[:60]!r}: page {shown!r}, notebook {expected!r}"
            )
        assert exercise.feedback(ast.literal_eval(typed[0])) == "Correct!", where
        for text in telling_answers(data):
            shown = page.evaluate("([t, d]) => window.lnlibExerciseFeedback(t, d)", [text, data])
            try:
                answer = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                assert shown.startswith(("Not quite", "Correct!")), f"{where}, {text!r}: {shown!r}"
                continue
            if isinstance(answer, tuple):  # "[1, 2], [3]": a ragged pair, as Python reads it
                answer = list(answer)
            expected = exercise.feedback(answer)
            assert agree(shown, expected), (
                f"{where}, {text[:60]!r}: page {shown!r}, notebook {expected!r}"
            )
    assert errors == [], f"{page_name}: page errors {errors}"
