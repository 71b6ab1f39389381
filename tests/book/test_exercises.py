"""lnlib.book.exercises: what a check says about a reader's answer, and how a chapter's exercises are built."""

import json
import re

import numpy as np
import pytest

from lnlib.book.exercises.chapter import Exercises
from lnlib.book.exercises.feedback import NOT_ANSWERED, ON_THE_WEBSITE, Exercise, Feedback, feedback


@pytest.mark.parametrize(
    "answer, expected, words",
    [
        (None, 1.0, "Not answered yet"),
        (np.array([1.0, 2.0]), np.array([1.0, 2.0]), "Correct!"),
        (
            np.array([1.0, 2.0]),
            np.array([[1.0, 2.0]]),
            r"expected shape \(1, 2\), got shape \(2,\)",
        ),
        (
            np.array([1.0, 2.5]),
            np.array([1.0, 2.0]),
            r"1 of 2 entries differ from the expected answer \(the largest by 0.5\)",
        ),
        (np.array([-1.0, 2.0]), np.array([1.0, -2.0]), "the sign is flipped"),
        (np.array([[1.0, 2.0]]), np.array([[1.0], [2.0]]), "right but transposed"),
        (1.0 + 5e-3, 1.0, "close, but not within the tolerance"),
        (7.0, 5.0, "7 is not the expected value"),
        (np.array([np.nan, 1.0]), np.array([1.0, 1.0]), "contains nan"),
        ("two", 2.0, "expected a number"),
        (False, False, "Correct!"),
        (0, False, "answer with True or False; got 0"),
        (True, False, "Not quite."),
        (np.array([1.0, 2.0 + 1e-12]), np.array([1.0, 2.0]), "Correct!"),
    ],
)
def test_feedback_names_what_is_wrong(answer, expected, words):
    line = feedback(answer, expected)
    assert re.search(words, line), line


def test_an_answer_typed_with_fewer_digits_is_right_unless_a_mistake_is_as_near():
    """A reader types numpy's printout or four digits: right when every known mistake is far, "give
    more digits" when one is about as near (an ε mistake), and a count must be exact."""
    third = Exercise(1 / 3, rtol=1e-9, mistakes={"that divides by H - 1": 1 / 2})
    assert third.feedback(0.33333333) == "Correct!"  # numpy's printout
    assert third.feedback(0.3333) == "Correct!"
    assert third.feedback(0.335).startswith("Not quite: close")  # beyond rounding to four digits
    root = np.sqrt(5 + 1e-5)
    with_eps = Exercise(root, rtol=1e-9, mistakes={"ε is missing": np.sqrt(5.0)})
    assert with_eps.feedback(2.236).startswith(
        "Not quite: close"
    )  # as near the mistake as the answer
    assert with_eps.feedback(2.2360702) == "Correct!"  # enough digits to tell them apart
    count = Exercise(np.int64(100352))
    assert count.feedback(100300).startswith("Not quite: 100300 is not the expected count")


def test_exercise_names_a_known_mistake_and_hides_its_answer():
    exercise = Exercise(2.0, hint="Look at ε.", mistakes={"ε is missing from the divisor": 1.5})
    assert exercise.feedback(1.5) == "Not quite: ε is missing from the divisor. Look at ε."
    assert exercise.feedback(2.0) == "Correct!"
    assert "2.0" not in repr(exercise)


def test_multiple_choice_says_which_kind_of_wrong():
    exercise = Exercise(1000, choices=(10, 100, 1000, 10000))
    assert exercise.feedback(100).startswith(
        "Not quite: 100 is one of the choices, but not the right one"
    )
    assert exercise.feedback(5).startswith("Not quite: answer with one of 10, 100, 1000, 10000")
    assert exercise.feedback(1000) == "Correct!"


def test_an_unanswered_check_on_the_website_is_an_answer_box(monkeypatch):
    """On the website an unanswered check is a form carrying the exercise, computed at build time (issue 25)."""
    exercises = Exercises(
        "00_demo", lambda: Exercise(2.0, hint="Think of the mean.", mistakes={"the sum": 4.0})
    )
    monkeypatch.setenv("LNBOOK_WEBSITE", "1")
    form = exercises.check(1, None)
    assert repr(form) == ON_THE_WEBSITE
    page = form._repr_html_()
    data = json.loads(re.search(r'"lnlib-exercise-data">(.*?)</script>', page).group(1))
    assert data["expected"] == 2.0 and data["mistakes"] == [["the sum", 4.0]]
    assert data["hint"] == "Think of the mean." and data["kind"] == "number"
    assert '<label for="lnlib-answer-00_demo-1">' in page and 'aria-live="polite"' in page
    assert exercises.check(1, 3.0).text.startswith("Not quite")  # an answer is judged, even there
    monkeypatch.delenv("LNBOOK_WEBSITE")
    assert exercises.check(1, None).text == NOT_ANSWERED


def test_a_known_mistake_of_another_shape_is_named_not_measured():
    """The wrong axis gives another shape: its sentence, not a bare shape message (issue 30)."""
    batch = np.arange(12.0).reshape(3, 4)
    exercise = Exercise(
        batch.mean(axis=-1), mistakes={"that averages down the columns": batch.mean(axis=0)}
    )
    assert exercise.feedback(batch.mean(axis=0)) == "Not quite: that averages down the columns."
    assert exercise.feedback(batch.mean(axis=-1)) == "Correct!"


def test_feedback_box_says_which_kind_and_wraps_at_words():
    boxes = {
        kind: Feedback(text)._repr_html_()
        for kind, text in [
            ("correct", "Correct!"),
            ("wrong", "Not quite: a <b> & c."),
            ("unanswered", NOT_ANSWERED),
        ]
    }
    for kind, box in boxes.items():
        assert f"lnlib-feedback-{kind}" in box and 'role="status"' in box
        assert "word-break: break-all" not in box and "overflow-wrap: break-word" in box
    assert "a &lt;b&gt; &amp; c." in boxes["wrong"]  # the reader's repr is text, never markup
    assert repr(Feedback("Correct!")) == "Correct!"


def test_chapter_exercises_are_built_from_the_cells_data_and_numbered_from_one():
    exercises = Exercises("00_demo", lambda x: Exercise(x.sum()))
    x = np.array([1.0, 2.0])
    assert exercises.check(1, 3.0, x=x).kind == "correct"
    assert exercises.check(1, 4.0, x=x).kind == "wrong"
    with pytest.raises(ValueError, match="chapter 00_demo has exercises 1 to 1, not 2"):
        exercises.check(2, 3.0, x=x)
    assert "3.0" not in repr(exercises.exercise(1, x=x))


CHEAT = """
batch = np.array([[2.0, 4.0, 6.0, 8.0],
                  [1.0, 1.0, 1.0, 5.0]])
{work}
answer_1 = {answer}
feedback = exercises.check(1, answer_1, batch=batch)
"""


@pytest.fixture
def shell():
    """An IPython shell, as the kernel runs a cell: the cell's source is in ``_ih`` while it runs."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.user_ns.update(
        np=np, exercises=Exercises("00_demo", lambda batch: Exercise(batch.mean(axis=-1)))
    )
    yield shell
    InteractiveShell.clear_instance()


def run(shell, cell: str):
    result = shell.run_cell(cell, store_history=True)
    result.raise_error()
    return shell.user_ns["feedback"]


@pytest.mark.parametrize(
    "work",
    [
        "batch -= batch.mean(axis=-1, keepdims=True)",
        "batch[:] = 0.0",
        "view = batch\nview *= 0",
        "np.subtract(batch, batch.mean(axis=-1, keepdims=True), out=batch)",
    ],
)
def test_a_check_judges_the_data_as_handed_out_not_as_changed_in_place(shell, work):
    """Centering the batch in place makes every mean 0: that answer must not pass (issue 30)."""
    feedback = run(shell, CHEAT.format(work=work, answer="batch.mean(axis=-1)"))
    assert feedback.kind == "wrong", feedback.text
    assert "`batch` was changed in place by your code" in feedback.text
    assert "judged on the batch as given" in feedback.text


def test_an_honest_answer_passes_with_or_without_a_change_in_place(shell):
    honest = run(shell, CHEAT.format(work="", answer="batch.mean(axis=-1)"))
    assert honest.text == "Correct!"
    late = "answer_1 = batch.mean(axis=-1)\nbatch -= 1"  # answered, then changed: still right
    changed = run(shell, CHEAT.format(work=late, answer="answer_1"))
    assert changed.kind == "correct" and "changed in place" in changed.text
    rebound = run(shell, CHEAT.format(work="batch = batch - 1", answer="batch.mean(axis=-1) + 1"))
    assert rebound.kind == "correct", rebound.text  # re-binding the name is no data line


def test_a_check_without_a_cell_judges_the_data_passed(shell):
    """Plain Python, or the check run by other code after the cell (tests/nbval_exercises.py)."""
    exercises = shell.user_ns["exercises"]
    batch = np.array([[1.0, 3.0]])
    assert exercises.check(1, np.array([2.0]), batch=batch).text == "Correct!"
    # nbval's plugin: the solution, then the check inside a print, in one execution of its own
    shell.run_cell(CHEAT.format(work="", answer="batch.mean(axis=-1)"), store_history=True)
    plugin = (
        "batch -= 1\nanswer_1 = batch.mean(axis=-1)\n"
        "print('report ' + exercises.check(1, answer_1, batch=batch).text)\nanswer_1 = None"
    )
    result = shell.run_cell(plugin, store_history=True)
    result.raise_error()
    assert shell.user_ns["answer_1"] is None


def test_the_data_lines_draw_from_copies_of_the_readers_generator(shell):
    """Re-building data drawn from an earlier cell's generator neither advances it nor calls it changed."""
    shell.run_cell("rng = np.random.default_rng(0)", store_history=True)
    cell = "batch = rng.normal(size=(2, 3))\nanswer_1 = batch.mean(axis=-1)\n"
    cell += "feedback = exercises.check(1, answer_1, batch=batch)"
    assert run(shell, cell).text == "Correct!"
    assert np.random.default_rng(0).normal(size=7)[-1] == shell.user_ns["rng"].normal(size=1)[0]
