"""lnlib.compare and lnlib.book.tools.exercises: the helpers that tell a reader whether two results agree."""

import re

import numpy as np
import pytest

from lnlib import compare
from lnlib.book.tools.exercises import NOT_ANSWERED, ON_THE_WEBSITE, Exercise, check


def test_compare_reports_exact_close_and_difference(capsys):
    result = compare("dx", np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    assert (result.exact, result.close) == (False, True)
    assert result.max_abs_diff == pytest.approx(1e-9, rel=1e-6)
    line = capsys.readouterr().out
    assert (
        line.startswith("dx")
        and "exact: False" in line
        and "allclose: True" in line
        and "1.00e-09" in line
    )


def test_compare_exact_and_not_close(capsys):
    assert compare("same", [1, 2], [1, 2], show=False).exact
    far = compare("far", [0.0, 1.0], [0.0, 1.1], show=False)
    assert not far.close and far.max_abs_diff == pytest.approx(0.1)
    assert capsys.readouterr().out == ""


def test_compare_refuses_shapes_that_would_broadcast():
    with pytest.raises(ValueError, match=r"shapes differ, \(2, 1\) \(ours\) against \(2,\)"):
        compare("mu", np.zeros((2, 1)), np.zeros(2))


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
        (1.0 + 1e-4, 1.0, "close, but not within the tolerance"),
        (7.0, 5.0, "7 is not the expected value"),
        (np.array([np.nan, 1.0]), np.array([1.0, 1.0]), "contains nan"),
        ("two", 2.0, "expected a number"),
        (False, False, "Correct!"),
        (0, False, "answer with True or False; got 0"),
        (True, False, "Not quite."),
        (np.array([1.0, 2.0 + 1e-12]), np.array([1.0, 2.0]), "Correct!"),
    ],
)
def test_check_gives_the_right_feedback(answer, expected, words, capsys):
    check(answer, expected)
    printed = capsys.readouterr().out
    assert re.search(words, printed), printed


def test_exercise_names_a_known_mistake_and_hides_its_answer():
    from lnlib.book.tools.exercises import Exercise

    exercise = Exercise(2.0, hint="Look at ε.", mistakes={"ε is missing from the divisor": 1.5})
    assert exercise.feedback(1.5) == "Not quite: ε is missing from the divisor. Look at ε."
    assert exercise.feedback(2.0) == "Correct!"
    assert "2.0" not in repr(exercise)


def test_multiple_choice_says_which_kind_of_wrong():
    from lnlib.book.tools.exercises import Exercise

    exercise = Exercise(1000, choices=(10, 100, 1000, 10000))
    assert exercise.feedback(100).startswith(
        "Not quite: 100 is one of the choices, but not the right one"
    )
    assert exercise.feedback(5).startswith("Not quite: answer with one of 10, 100, 1000, 10000")
    assert exercise.feedback(1000) == "Correct!"


def test_compare_lines_fit_the_books_80_columns(capsys):
    for name in ("dx", "n" * 24, "a name longer than the name column holds"):
        compare(name, np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and max(len(line) for line in lines) <= 80
    assert lines[2] == "a name longer than the name column holds" and lines[3].lstrip().startswith(
        "| allclose: True"
    )


def test_an_unanswered_check_on_the_website_says_how_to_try_it(monkeypatch, capsys):
    exercise = Exercise(2.0, hint="Think of the mean.")
    monkeypatch.setenv("LNBOOK_WEBSITE", "1")
    exercise.check(None)
    assert capsys.readouterr().out.strip() == ON_THE_WEBSITE
    exercise.check(3.0)  # an answer is still judged, even in the website build
    assert capsys.readouterr().out.startswith("Not quite")
    monkeypatch.delenv("LNBOOK_WEBSITE")
    exercise.check(None)
    assert capsys.readouterr().out.strip() == NOT_ANSWERED
