"""Every exercise answered on the website, offline, with the notebook's feedback (CONTRIBUTING.md,
"A chapter", step 5).

Every exercise of every chapter page has an answer box (none sends the reader to the notebook): the
page carries the exercise as lnlib computed it at build time (lnlib/book/exercises/web.py). A reader
types the right answer, each named mistake's answer, and an answer the page cannot read, and presses
Check; the box must say what ``lnlib.book.exercises.judge.judge`` says on the same answer and plan,
word for word ("Correct!", the named mistake, what is off), and for the unreadable answer that it
could not read it. An answer of more than eight numbers (lnlib.book.exercises.web.TYPEABLE) is a
multi-line box: numpy's printout of the right answer and its numbers row by row, pasted, are right
too. The data printed above a box, run as Python and given to the exercise's builder, give an answer
the page judges right. More answers that are off in telling ways (a transpose, a sign, a near miss,
a rounding to a few decimals, a wrong shape) go through the page's feedback function directly, and
must also agree with Python's. At a phone's width (390 px) every form fits the page; its data block
scrolls inside itself.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re

import numpy as np
import pytest

import lnlib.book.exercises
from lnlib.book.exercises.judge import judge
from lnlib.book.exercises.web import SHOWN, TYPEABLE, read_printout

from .test_web_explorers import EXPLORERS  # noqa: F401 (the browser fixtures' module loads first)
from .test_website import PAGES

CHAPTER_PAGES = [page for page in PAGES if page.startswith("chapters/") and page[9:11].isdigit()]
MALFORMED = "[1, 2"
PHONE = {"width": 390, "height": 844}


def chapter_exercises(page_name: str):
    """The Exercises of a chapter page, from its module in lnlib.book.exercises (None if it has
    none)."""
    stem = page_name.split("/")[-1]
    for module in pkgutil.iter_modules(lnlib.book.exercises.__path__):
        exercises = getattr(
            importlib.import_module(f"lnlib.book.exercises.{module.name}"), "exercises", None
        )
        if getattr(exercises, "chapter", None) == stem:
            return exercises
    return None


def printout(value) -> str:
    """numpy's printout of `value` (``print(answer)``), every number shown."""
    with np.printoptions(threshold=np.inf):
        return str(np.asarray(value))


def row_by_row(value) -> str:
    """The numbers of `value`, one row a line, separated by spaces (no brackets)."""
    rows = np.asarray(value, dtype=np.float64).reshape(-1, np.shape(value)[-1])
    return "\n".join(" ".join(repr(float(v)) for v in row) for row in rows)


def run_data_block(text: str) -> dict:
    """The data block of a form, run as Python, as a reader pastes it into their own session."""
    namespace = {"np": np}
    exec(text, namespace)  # noqa: S102 (the page this build made)
    return {name: value for name, value in namespace.items() if name not in ("np", "__builtins__")}


def as_literal(value) -> str:
    """`value` typed as a reader would type it, exactly (Python's repr keeps every digit of a
    float)."""
    if isinstance(value, bool):
        return repr(value)
    return repr(np.asarray(value, dtype=np.float64).tolist())


class PageExercise:
    """The exercise a page holds, read from its plan: the right answer, the named mistakes' answers,
    and the notebook's verdict on an answer (lnlib.book.exercises.judge on the same plan)."""

    def __init__(self, data: dict):
        self.data = data
        rules = data["rules"]
        if data["kind"] == "bool":
            self.expected = next(r["value"] for r in rules if r["test"] == "equal")
            self.mistakes, self.also_right = {}, []
            return
        right = next(k for k, r in enumerate(rules) if r["say"] == "Correct!")
        self.expected = rules[right]["value"]
        self.also_right = [r["value"] for r in rules[:right] if r["say"].startswith("Correct! ")]
        self.mistakes = {}
        for rule in rules[right + 1 :]:
            if rule["test"] != "within" or not rule["say"].startswith("Not quite: "):
                break  # the exact mistakes end where the rounded answer's rule begins
            self.mistakes[rule["say"]] = rule["value"]

    def feedback(self, answer) -> str:
        return judge(self.data, answer)


#: The title of exercise k's solution fold (CONTRIBUTING.md, "A chapter").
SOLUTION = r"Solution to exercise {}\b"


def agree(page_says: str, notebook_says: str) -> bool:
    """The same feedback; where it quotes the answer ("...; got 1e-07."), the page quotes it as
    typed."""
    if "; got " in notebook_says:
        return page_says.split("; got ")[0] == notebook_says.split("; got ")[0]
    return page_says == notebook_says


def telling_answers(exercise: PageExercise) -> list[str]:
    """Answers off in ways the feedback names: typed into the page's feedback function."""
    if exercise.data["kind"] == "bool":
        return [repr(not exercise.expected), "0"]
    if exercise.data["kind"] == "choice":
        return [repr(v) for v in exercise.data["rules"][0]["values"]] + ["7"]
    want = np.asarray(exercise.expected, dtype=np.float64)
    answers = [want * (1 + 1e-4), -want, want + 1.0, np.zeros(want.shape + (2,))]
    # typed with a few decimals: right, "give more digits" naming a mistake as near, or a mistake
    # named
    answers += [np.round(want, decimals) for decimals in (1, 2, 4, 5)]
    answers += [np.asarray(value) for value in exercise.also_right]
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
    exercises = chapter_exercises(page_name)
    numbers = [forms.nth(k).get_attribute("data-exercise") for k in range(forms.count())]
    assert numbers == [str(k) for k in range(1, len(exercises) + 1)], f"{page_name}: {numbers}"
    assert "answer it in the notebook" not in page.locator("body").inner_text(), page_name
    page.wait_for_function(
        "() => [...document.querySelectorAll('form.lnlib-exercise')].every(f => f.dataset.ready "
        "=== '1')"
    )
    for k in range(forms.count()):
        form = forms.nth(k)
        number = form.get_attribute("data-exercise")
        where = f"{page_name}, exercise {number}"
        data = json.loads(form.locator("script.lnlib-exercise-data").text_content())
        exercise = PageExercise(data)
        assert form.locator(".lnlib-feedback").inner_text() == data["notAnswered"]
        box = form.locator("input, textarea")
        many = np.size(exercise.expected) > TYPEABLE
        assert box.evaluate("b => b.tagName") == ("TEXTAREA" if many else "INPUT"), where
        label = form.locator(f"label[for='{box.get_attribute('id')}']")
        assert label.inner_text().strip() == f"Your answer to exercise {number}", where

        said: list[str] = []

        def check(text: str) -> str:
            box.fill(text)
            form.locator("button[type=submit]").click()
            said.append(form.locator(".lnlib-feedback").inner_text())
            return said[-1]

        typed = [as_literal(exercise.expected)] + [
            as_literal(v) for v in exercise.mistakes.values()
        ]
        for text in typed + [MALFORMED]:
            shown = check(text)
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
        # the verdicts never hold the hint (the recipe); the Hint button shows it, and so do 3 wrong
        # tries
        assert data["hint"] and all(data["hint"] not in check(t) for t in typed[1:]), where
        hint = form.locator(".lnlib-exercise-hint")
        wrong = sum(line.startswith("Not quite") for line in said)
        assert hint.is_visible() == (wrong >= data["hintAfter"]), f"{where}: {wrong} wrong tries"
        form.locator(".lnlib-exercise-hint-button").click()
        assert hint.inner_text() == f"Hint: {data['hint']}", where
        # the solution fold shows the answer (learner A11), and the answer it shows is right
        title = page.locator("summary", has_text=re.compile(SOLUTION.format(number)))
        fold = page.locator("details", has=title)
        fold.locator("summary").click()
        shown = fold.locator(".lnlib-solution-answer").inner_text()
        assert shown == f"The answer, as the check takes it: {data['answer']}.", where
        if np.size(exercise.expected) <= SHOWN:
            # "Correct!", or "Correct! <why this other form is right too>" (chapter 01's 1/2)
            said_right = check(data["answer"])
            assert said_right.startswith("Correct!"), f"{where}: {data['answer']!r}: {said_right}"
        if many:  # pasted: numpy's printout of the answer, and its numbers row by row
            for text, answer in [
                (printout(exercise.expected), read_printout(printout(exercise.expected))),
                (row_by_row(exercise.expected), np.asarray(exercise.expected, dtype=float)),
            ]:
                expected = exercise.feedback(answer)
                assert expected == "Correct!" and check(text) == expected, (
                    f"{where}, pasted {text[:60]!r}: page {check(text)!r}, notebook {expected!r}"
                )
        given = form.locator(".lnlib-exercise-given pre")
        if given.count():  # the data printed: the answer computed from them is right
            # textContent: a folded block has no rendered text
            built = exercises.exercise(int(number), **run_data_block(given.text_content()))
            shown = page.evaluate(
                "([t, d]) => window.lnlibExerciseFeedback(t, d)",
                [as_literal(built.expected), data],
            )
            assert shown == "Correct!", f"{where}: from the printed data, {shown!r}"
        for text in telling_answers(exercise):
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
    page.set_viewport_size(PHONE)
    for k in range(forms.count()):
        fits = forms.nth(k).evaluate(
            """f => [f, ...f.querySelectorAll('pre, textarea, .lnlib-feedback')].every(
                   e => e.getBoundingClientRect().right <= window.innerWidth + 0.5)"""
        )
        assert fits, f"{page_name}, exercise {k + 1}: the form is wider than a phone's page"
    assert errors == [], f"{page_name}: page errors {errors}"
