"""The checker against a student's kernel (reviews of 2026-12: a student's, an instructor's): numpy
rebound in an answer cell, the checker replaced, an answer cell set aside by ``course sanitize``,
data changed from those handed out; one prefix in graded mode; sanitize's unknown chapter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy
import numpy as np
import pytest

from lnlib.book.exercises.chapter import SET_ASIDE, Exercises, NotPassed, rebinds, variant
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.exercises.students import NoStudent
from lnlib.book.tools.course import _graded_test, _tampering

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "cell, named",
    [
        ("np.all = lambda *a, **k: True", "np.all = ..."),
        ("np.abs = lambda x: 0 * x", "np.abs = ..."),
        ("del np.isfinite", "del np.isfinite"),
        ("np.pi += 1", "np.pi += ..."),
        ("type(exercises).check = lambda *a, **k: None", "type(exercises).check = ..."),
        ("import numpy\nnumpy.linalg.norm = len", "numpy.linalg.norm = ..."),
        ("class E:\n    pass\nexercises = E()", "exercises = ..."),
        ("for np.sum in [len]:\n    pass", "np.sum = ..."),
    ],
)
def test_sanitize_sets_aside_an_answer_cell_that_rebinds_what_it_did_not_create(cell, named):
    """The student review's minor 1: `np.all = ...` in an answer cell was not flagged."""
    assert named in rebinds(cell), rebinds(cell)
    uses = _tampering(f"{cell}\nanswer_1 = 0.5")  # a use the forbidden names name already, once
    assert named in uses or named.removesuffix(" = ...") in uses, uses


def test_an_answer_cell_may_set_attributes_of_its_own_objects():
    own = "class Box:\n    pass\nbox = Box()\nbox.value = np.ones(3)\nanswer_1 = box.value.sum()"
    assert _tampering(own) == [] and rebinds(own) == []


def test_a_numpy_function_rebound_after_import_cannot_reach_the_comparisons(monkeypatch):
    """judge.py and feedback.py call numpy as it was first imported (shipped.py)."""
    monkeypatch.setattr(numpy, "all", lambda *a, **k: True)
    monkeypatch.setattr(numpy, "abs", lambda x: 0 * x)
    monkeypatch.setattr(numpy, "allclose", lambda *a, **k: True)
    exercise = Exercise(np.array([1.0, 2.0, 3.0]), mistakes={"that is the sum": 6.0})
    assert exercise.feedback([5.0, 5.0, 5.0]).startswith("Not quite: "), exercise.feedback([5.0])
    assert exercise.feedback([1.0, 2.0, 3.0]) == "Correct!"


def demo(student="s1") -> Exercises:
    graded = Exercises(
        "00_demo",
        variant(lambda rng: {"batch": rng.integers(-9, 10, size=(2, 3)).astype(float)})(
            lambda batch: Exercise(batch.mean(axis=-1), hint="average each row")
        ),
    )
    graded.graded, graded.student = True, student
    return graded


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.user_ns.update(np=np, exercises=demo())
    shell.run_cell('batch = exercises.data(1, "batch")', store_history=True).raise_error()
    yield shell
    InteractiveShell.clear_instance()


def graded_test(shell) -> str:
    """What the course's graded test cell says: its NotPassed message, or "" when it passes."""
    result = shell.run_cell("exercises.test(1, answer_1, batch=batch)", store_history=True)
    if result.error_in_exec is None:
        return ""
    assert isinstance(result.error_in_exec, NotPassed), result.error_in_exec
    return str(result.error_in_exec)


@pytest.mark.parametrize(
    "patch",
    [
        'exercises.check = lambda *a, **k: type("F", (), {"kind": "correct", "text": "ok"})()',
        "import lnlib.book.exercises.chapter as c\nc.answer_code = lambda *a: None",
        "import lnlib.book.exercises.feedback as f\nf.Feedback.kind = 'correct'",
        "type(exercises).check = lambda *a, **k: None",
        "np.all = lambda *a, **k: True",
    ],
)
def test_the_graded_test_cell_says_when_the_checker_was_replaced(shell, patch):
    """The student review's minor 2: a replaced exercises.check showed a pass in the notebook."""
    import lnlib.book.exercises.chapter as chapter
    import lnlib.book.exercises.feedback as feedback

    kept = (chapter.answer_code, feedback.Feedback.kind, chapter.Exercises.check, numpy.all)
    try:
        shell.run_cell(f"{patch}\nanswer_1 = 0.5", store_history=True).raise_error()
        said = graded_test(shell)
    finally:
        chapter.answer_code, feedback.Feedback.kind, chapter.Exercises.check, numpy.all = kept
    assert said.startswith("Not correct: your code replaced the checker ("), said
    assert "Grading sets aside an answer cell that replaces the checker" in said


def test_the_graded_test_cell_passes_a_right_answer_and_shows_a_wrong_ones_message_alone(shell):
    shell.run_cell("answer_1 = batch.mean(axis=-1)", store_history=True).raise_error()
    assert graded_test(shell) == ""
    shell.run_cell("answer_1 = batch.mean(axis=0)", store_history=True).raise_error()
    said = graded_test(shell)
    assert said.startswith("Not correct: ") and NotPassed(said)._render_traceback_() == [said]


def test_an_answer_cell_set_aside_says_so_not_unanswered(shell):
    """The instructor review's m4: a set-aside answer cell's feedback said "Not answered yet"."""
    cell = f"{SET_ASIDE} (exercises.check).\nanswer_1 = None\n"
    cell += "exercises.check(1, answer_1, batch=batch)"
    said = str(shell.run_cell(cell, store_history=True).result)
    expected = (
        "Not correct: this answer cell was set aside before grading: it touches the checker "
        "(exercises.check)."
    )
    assert said == expected
    assert graded_test(shell) == expected


def test_an_answer_right_for_other_data_than_those_handed_out_says_so(shell):
    """The instructor review's m4: gina changed her data, her notebook said Correct!, her grade "3
    of 3 entries differ"."""
    shell.run_cell("batch = np.zeros((2, 3))\nanswer_1 = batch.mean(axis=-1)", store_history=True)
    said = graded_test(shell)
    assert said.startswith("Not correct: your answer is right for data other than those handed out")
    handed = shell.user_ns["exercises"].data(1, "batch").mean(axis=-1)
    assert all(f"{value:.3}" not in said for value in handed)  # never the expected value


def test_graded_mode_has_one_prefix_for_wrong_answers_and_refusals(shell):
    """The student review's nit 5: a refusal said "Not quite:", a wrong answer "Not correct:"."""
    cell = "answer_1 = exercises.builders[0](batch=batch).expected"
    shell.run_cell(cell, store_history=True).raise_error()
    said = graded_test(shell)
    assert said.startswith("Not correct: your answer uses exercises.builders"), said
    shell.run_cell("answer_1 = 'a'", store_history=True).raise_error()
    assert graded_test(shell).startswith("Not correct: ")


def test_graded_mode_refuses_to_show_a_graded_exercises_answer(shell):
    """The student review (2026-11-29): exercises.exercise(1, ...).expected in a scratch cell
    printed the checker's answer and hint. In graded mode the call is refused, with what to do."""
    result = shell.run_cell("exercises.exercise(1, batch=batch).expected", store_history=True)
    assert isinstance(result.error_in_exec, PermissionError), result.error_in_exec
    assert "exercises.check(1" in str(result.error_in_exec)


def test_a_typo_in_the_answer_cell_is_named_not_called_tampering(shell):
    """The student review (2026-11-29, third): an unclosed bracket in the answer cell made the test
    cell say "your answer uses exercises.answer_defined ... not counted", as if the student had
    tampered with the checker. It says the cell did not run, and why; fixed and run, it counts."""
    right = "answer_1 = batch.mean(axis=-1)\nexercises.check(1, answer_1, batch=batch)"
    shell.run_cell(right, store_history=True).raise_error()
    broken = shell.run_cell("answer_1 = batch.mean(axis=-1", store_history=True)
    assert isinstance(broken.error_before_exec, SyntaxError)
    said = graded_test(shell)
    assert "did not run" in said and "SyntaxError" in said, said
    assert "answer_defined" not in said and "uses" not in said, said
    shell.run_cell(right, store_history=True).raise_error()
    assert graded_test(shell) == ""


def test_an_answer_cell_that_raises_is_told_so_not_that_it_ignored_the_data(shell):
    """The student review (2026-11-29, third): after a right run, a typo raising AttributeError
    left the earlier answer_1 in place, and the test cell said "right for your data, but ... a
    second draw", which points the wrong way. It names the error."""
    shell.run_cell("answer_1 = batch.mean(axis=-1)", store_history=True).raise_error()
    assert graded_test(shell) == ""
    raised = shell.run_cell("answer_1 = np.mena(batch, axis=-1)", store_history=True)
    assert isinstance(raised.error_in_exec, AttributeError)
    said = graded_test(shell)
    assert "raises AttributeError" in said and "earlier run" in said, said


def test_an_answer_cell_whose_latest_run_raised_does_not_pass(shell):
    """The student review (2026-11-29, fourth): after a right run, a typo raising before the
    cell's check left the earlier answer in place and the test cell said "correct here"; grading's
    fresh run then scores 0. The test cell judges the latest run only, even where the data are
    few enough to type the answer (no second draw)."""
    right = "answer_1 = batch.mean(axis=-1)\nexercises.check(1, answer_1, batch=batch)"
    shell.run_cell(right, store_history=True).raise_error()
    assert graded_test(shell) == ""
    typo = right.replace("batch.mean", "batch.mena")
    assert isinstance(shell.run_cell(typo, store_history=True).error_in_exec, AttributeError)
    said = graded_test(shell)
    assert "latest run stopped with an error" in said, said
    shell.run_cell(right, store_history=True).raise_error()
    assert graded_test(shell) == ""


def test_sanitize_names_the_chapters_when_given_one_the_course_lacks(tmp_path):
    """The instructor review's n1: a typo gave a traceback."""
    release = tmp_path / "release" / "03_mean"
    release.mkdir(parents=True)
    (release / "03_mean.ipynb").write_text(json.dumps({"cells": []}))
    done = subprocess.run(
        [sys.executable, "-m", "lnlib.book.tools.course", "sanitize", str(tmp_path), "09_mean"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2, done
    assert done.stderr.strip() == "no chapter 09_mean; chapters are: 03_mean"
    assert "Traceback" not in done.stderr


def test_a_graded_answer_typed_in_is_not_counted_and_one_computed_from_the_data_is(shell):
    """The instructor review's M3: numbers computed elsewhere (with a forbidden function) and pasted
    as literals passed. An answer cell must now use the data handed out."""
    right = shell.user_ns["exercises"].data(1, "batch").mean(axis=-1)
    shell.run_cell(f"answer_1 = np.array({right.tolist()})", store_history=True).raise_error()
    said = graded_test(shell)
    assert said.startswith("Not correct: your answer cell does not use the data handed out (batch)")
    shell.run_cell("answer_1 = batch.mean(axis=-1)", store_history=True).raise_error()
    assert graded_test(shell) == ""


def test_a_few_numbers_may_be_worked_out_by_hand_and_typed_in():
    from IPython.core.interactiveshell import InteractiveShell

    few = Exercises(
        "00_demo",
        variant(lambda rng: {"v": np.array([1.0, 2.0, 4.0])})(lambda v: Exercise(v.mean())),
    )
    few.graded, few.student = True, "s1"
    shell = InteractiveShell.instance()
    try:
        shell.user_ns.update(np=np, exercises=few)
        shell.run_cell('v = exercises.data(1, "v")\nanswer_1 = 7 / 3', store_history=True)
        result = shell.run_cell("exercises.test(1, answer_1, v=v)", store_history=True)
        assert result.error_in_exec is None, result.error_in_exec
    finally:
        InteractiveShell.clear_instance()


def test_the_data_lines_of_the_answer_cell_do_not_count_as_using_the_data(shell):
    """The student review (2026-11-29): the course edition's answer cell hands out and prints the
    data above the answer, so a literal typed under them named the data and passed."""
    right = shell.user_ns["exercises"].data(1, "batch").mean(axis=-1)
    cell = 'batch = exercises.data(1, "batch")\nprint("batch =", repr(batch))\n'
    shell.run_cell(cell + f"answer_1 = np.array({right.tolist()})", store_history=True)
    said = graded_test(shell)
    assert said.startswith("Not correct: your answer cell does not use the data handed out"), said
    shell.run_cell(cell + "answer_1 = batch.mean(axis=-1)", store_history=True).raise_error()
    assert graded_test(shell) == ""


def test_graded_mode_stays_on_once_on():
    """The student review (2026-11-29): `exercises.graded = False` in a scratch cell brought the
    graded exercises' hints back."""
    graded = demo()
    with pytest.raises(ValueError, match="graded mode stays on"):
        graded.graded = False
    assert graded.graded and "No hints" in str(graded.hint(1))


def test_a_passing_graded_test_cell_says_so(shell, capsys):
    """The student review: a right answer's test cell printed nothing, which looked like nothing
    had happened."""
    shell.run_cell("answer_1 = batch.mean(axis=-1)", store_history=True).raise_error()
    assert graded_test(shell) == ""
    assert "Exercise 1: correct here" in capsys.readouterr().out


def test_numbers_pasted_in_and_dressed_up_as_using_the_data_fail_on_a_second_draw(shell):
    """The student review (2026-11-29, second): numbers computed elsewhere and pasted in with
    `+ 0 * data` passed. The answer cell's code is run again on a second draw of the data."""
    right = shell.user_ns["exercises"].data(1, "batch").mean(axis=-1)
    dressed = f"answer_1 = np.array({right.tolist()}) + 0 * batch.sum()"
    shell.run_cell(dressed, store_history=True).raise_error()
    said = graded_test(shell)
    assert said.startswith("Not correct: your answer is right for your data, but"), said
    shell.run_cell("answer_1 = batch.mean(axis=-1)", store_history=True).raise_error()
    assert graded_test(shell) == ""
    assert shell.user_ns["answer_1"].tolist() == right.tolist()  # the second run left no trace


def test_the_checker_passed_to_a_function_is_refused_and_set_aside(shell):
    """The student review (2026-11-29, third): `operator.attrgetter("build" + "ers")(exercises)`
    read the expected answer with no forbidden name written."""
    cell = (
        "import operator\n"
        "b = operator.attrgetter('build' + 'ers')(exercises)[0](batch)\n"
        "answer_1 = operator.attrgetter('expec' + 'ted')(b)"
    )
    shell.run_cell(cell, store_history=True).raise_error()
    said = graded_test(shell)
    assert said.startswith("Not correct: your answer uses"), said
    assert "attrgetter" in " ".join(_tampering(cell))
    assert _tampering("x = exercises.data(1, 'x')\nanswer_1 = x.mean()") == []


def test_a_function_from_an_added_cell_is_named_where_grading_would_not_have_it(shell):
    """The student review's major: a helper defined in a cell the student added passed here, and
    grading (which removes added cells) would have scored it 0. The chapter's own functions and
    a function defined in an answer cell stay usable."""
    shell.run_cell("def row_means(b):\n    return b.mean(axis=-1)", store_history=True)
    shell.run_cell("answer_1 = row_means(batch)", store_history=True).raise_error()
    said = graded_test(shell)
    assert "`row_means`, defined in a cell that is not this answer cell" in said, said
    shell.user_ns["exercises"].chapters_own = ("row_means",)  # as the chapter's own: usable
    assert graded_test(shell) == ""
    shell.user_ns["exercises"].chapters_own = ()
    answer = "def row_means(b):\n    return b.mean(axis=-1)\nanswer_1 = row_means(batch)"
    shell.run_cell(answer, store_history=True).raise_error()  # defined in the answer cell
    assert graded_test(shell) == ""


@pytest.mark.parametrize(
    "cell, earlier",
    [
        # the fourth student review: the checker's own helper, imported in the answer cell
        (
            "from lnlib.book.exercises.chapter import round_to_digits as r\n"
            "answer_1 = r(batch.mean(axis=-1), 3)",
            "",
        ),
        # ... or taken in an earlier cell and called from the answer cell
        (
            "answer_1 = r(batch.mean(axis=-1), 3)",
            "from lnlib.book.exercises.chapter import round_to_digits as r",
        ),
        ("m = __import__('lnlib.book.exercises.chapter')\nanswer_1 = batch.mean(axis=-1)", ""),
    ],
)
def test_an_answer_that_reaches_into_the_checkers_package_is_not_counted(shell, cell, earlier):
    if earlier:
        shell.run_cell(earlier, store_history=True).raise_error()
    shell.run_cell(cell, store_history=True).raise_error()
    said = graded_test(shell)
    assert said.startswith("Not correct: your answer uses"), said
    assert "lnlib.book.exercises computes the expected answers" in said, said
    if not earlier:
        assert _tampering(cell), cell  # and course sanitize sets the cell aside


def test_the_test_cell_under_an_answer_cell_that_stopped_says_why_in_one_message(monkeypatch):
    """The student review (2026-11-29, third): with no student id the answer cell stops at its data,
    and the graded test cell under it showed a raw "NameError: name 'answer_1' is not defined"."""
    from IPython.core.interactiveshell import InteractiveShell

    for name in ("LNBOOK_STUDENT", "JUPYTERHUB_USER"):
        monkeypatch.delenv(name, raising=False)
    test_cell = _graded_test("1", "batch=batch", "00_demo", ("batch",)).split("### BEGIN")[0]
    answer_cell = 'batch = exercises.data(1, "batch")\nanswer_1 = batch.mean(axis=-1)'
    nobody = demo(student=None)
    shell = InteractiveShell.instance()
    try:
        shell.user_ns.update(np=np, exercises=nobody)
        assert isinstance(shell.run_cell(answer_cell).error_in_exec, NoStudent)
        said = shell.run_cell(test_cell).error_in_exec
        assert isinstance(said, NotPassed), said
        assert str(said).startswith("Not answered yet. Your exercises' data are drawn from your")
        nobody.student = "s1"  # an id now, the answer cell not run again
        said = shell.run_cell(test_cell).error_in_exec
        assert isinstance(said, NotPassed), said
        assert str(said).startswith("Not answered yet: answer_1 is not defined. Run exercise 1's")
        # graded: a name defined in a cell grading removes is said to be why (instructor review)
        assert "the cells you added are removed" in str(said), said
        shell.run_cell(answer_cell, store_history=True).raise_error()
        assert shell.run_cell(test_cell, store_history=True).error_in_exec is None
    finally:
        InteractiveShell.clear_instance()


def test_the_test_cell_refuses_a_pass_from_a_replaced_test_method(shell):
    """The student review (2026-11-29, second): `type(exercises).test = lambda ...: print(...)` in
    an answer cell made the test cell under it print "Correct!" until the kernel restarted."""
    test_cell = _graded_test("1", "batch=batch", "00_demo", ("batch",)).split("### BEGIN")[0]
    answer = "answer_1 = batch.mean(axis=-1)\ntype(exercises).test = lambda *a, **k: print('ok')"
    shipped = Exercises.__dict__["test"]
    try:
        shell.run_cell(answer, store_history=True).raise_error()
        said = shell.run_cell(test_cell, store_history=True).error_in_exec
        assert isinstance(said, NotPassed) and "replaced the checker" in str(said), said
    finally:
        Exercises.test = shipped
