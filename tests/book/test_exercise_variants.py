"""Each student's own data (the course edition): every exercise with a per-student variant
(lnlib.book.exercises.chapter.variant) hands out data like the website's, judges its own right
answer right and a classmate's wrong, and its key's solution computes the right answer from them.

The course round trip through nbgrader, chapter by chapter, is in tests/book/test_course.py.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest

from lnlib.book.exercises import every_chapter
from lnlib.book.exercises.chapter import key_solution
from lnlib.book.exercises.students import student_rng

ROOT = Path(__file__).resolve().parents[2]
STUDENTS = [f"student{n:02d}" for n in range(12)]
SOLUTION = re.compile(r"```python\n(.*?)\n```", re.S)
EXERCISES = [(ex, k) for ex in every_chapter() for k in range(1, len(ex) + 1)]
#: Exercises with data whose answer is the same whatever the data: practice in the course edition.
SAME_FOR_EVERYONE = {
    ("01_why_normalize", 2): "the ratio is 1/2 for every stack: the question is why",
    ("11_pre_post_norm", 2): "with ε = 0 LayerNorm ignores its input's scale: 1/25 for any data",
    ("11_pre_post_norm", 3): "depths from the chapter's sweep, [2, 4, 8, 16, 32]: four answers",
}
GRADED = [(ex, k) for ex, k in EXERCISES if k in ex.graded_exercises()]


def draw(exercises, k: int, student: str) -> dict:
    return exercises.builders[k - 1].variant(student_rng(exercises.chapter, k, student))


def exercise_cells(chapter: str, k: int) -> tuple[list[str], str, str]:
    """What chapter `chapter` defines before exercise `k` (its first code cell; the imports,
    functions and aliases of the code cells after it, no computation; the data of earlier
    exercises), exercise `k`'s cell and its solution's code."""
    cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    before = ["".join(code[0]["source"])]
    for i, cell in enumerate(cells):
        text = "".join(cell["source"])
        if cell["cell_type"] == "code" and re.search(rf"^exercises\.check\({k}, ", text, re.M):
            solution = SOLUTION.search("".join(cells[i + 1]["source"])).group(1)
            return before, text, solution
        if cell["cell_type"] == "code" and cell is not code[0]:
            earlier = re.search(r"^exercises\.check\((\d+), ", text, re.M)
            definitions = [
                statement
                for statement in ast.parse(text).body
                if isinstance(statement, (ast.Import, ast.ImportFrom, ast.FunctionDef))
                or (  # an alias (LN = lnlib.layer_norm), or an earlier exercise's data
                    isinstance(statement, ast.Assign)
                    and (
                        isinstance(statement.value, (ast.Attribute, ast.Name))
                        or (earlier and not ast.unparse(statement).startswith("answer_"))
                    )
                )
            ]
            before += [ast.unparse(statement) for statement in definitions]
    raise AssertionError(f"{chapter} has no cell for exercise {k}")


def same(a, b) -> bool:
    if isinstance(a, dict):
        return sorted(a) == sorted(b) and all(same(a[key], b[key]) for key in a)
    return bool(np.array_equal(a, b))


def passed_names(cell: str, k: int) -> list[str]:
    """The names the cell passes to its check: exercises.check(k, answer_k, a=a, ...)."""
    for node in ast.walk(ast.parse(cell)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "check":
            return [keyword.arg for keyword in node.keywords]
    return []


def test_every_number_or_code_exercise_with_data_is_graded_per_student():
    """An exercise whose answer is a number or an array and whose cell hands out data has a
    variant; True/False and choices stay practice, as do the exercises whose answer no data can
    change (SAME_FOR_EVERYONE)."""
    missing = []
    for exercises, k in EXERCISES:
        if (exercises.chapter, k) in SAME_FOR_EVERYONE:
            continue
        builder = exercises.builders[k - 1]
        if not inspect.signature(builder).parameters or hasattr(builder, "variant"):
            continue
        expected = exercises.exercise(k, **exercises.sample(k, np.random.default_rng(0))).expected
        if not isinstance(expected, (bool, np.bool_)):
            missing.append(f"{exercises.chapter} {k}")
    assert not missing, f"declare @variant(...) for {missing}"
    assert len(GRADED) >= 25


@pytest.mark.parametrize("exercises, k", GRADED, ids=[f"{e.chapter}-{k}" for e, k in GRADED])
def test_a_students_data_look_like_the_websites_and_their_answer_is_theirs(exercises, k):
    first, cell, solution = exercise_cells(exercises.chapter, k)
    # the answer key's solution: the website's, or the key's own where the task varies per student
    solution = key_solution(exercises.builders[k - 1]) or solution
    website = {}
    exec(first[0], website)  # the chapter's imports
    for statement in first[1:]:  # what later cells define, where it needs no computed state
        try:
            exec(statement, website)
        except NameError:
            pass
    lines = [s for s in ast.parse(cell).body if not ast.unparse(s).startswith(("answer_", "exer"))]
    exec(ast.unparse(ast.Module(body=lines, type_ignores=[])), website)
    names = passed_names(cell, k)
    expected = {}
    for student in STUDENTS:
        data = draw(exercises, k, student)
        assert data == {} or sorted(data) == sorted(names), (data.keys(), names)
        for name, value in data.items():
            if isinstance(value, dict):  # a layer's weights
                assert sorted(value) == sorted(website[name]), name
                continue
            shown = np.asarray(website[name])
            assert np.shape(value) == shown.shape, (name, np.shape(value), shown.shape)
            assert np.asarray(value).dtype.kind == shown.dtype.kind, (name, student)
        again = draw(exercises, k, student)
        assert all(same(again[n], data[n]) for n in data), "not the same on a re-draw"
        built = exercises.exercise(k, **data)
        assert built.check(built.expected).kind == "correct", student
        for said, value in built.mistakes.items():
            assert built.check(value).kind != "correct", (student, said)
        namespace = {**website, **data}
        exec(solution, namespace)
        answer = namespace[f"answer_{k}"]
        assert built.check(answer).kind == "correct", (student, built.check(answer).text)
        expected[student] = built
    # a classmate's right answer is wrong: for a single number at the digits asked, two students of
    # a class may share one by chance (instructors.md says how often); at most 1 pair in 20 here
    shared = [
        (a, b)
        for a in STUDENTS
        for b in STUDENTS
        if a < b and expected[b].check(expected[a].expected).kind == "correct"
    ]
    pairs = len(STUDENTS) * (len(STUDENTS) - 1) // 2
    assert len(shared) <= pairs // 20, shared


def test_a_task_that_varies_per_student_is_not_solved_by_the_websites_solution():
    """Chapter 09's exercise 4 (chapter.held_back): each student derives the backward pass of
    another norm than the website's, so the website's solution, run on a student's data, is
    wrong for every student, and the key's is right."""
    from lnlib.book.exercises.gradients import WEBSITE_NORM, exercises

    first, cell, solution = exercise_cells(exercises.chapter, 4)
    assert f'norm = "{WEBSITE_NORM}"' in cell
    for student in STUDENTS:
        data = draw(exercises, 4, student)
        assert data["norm"] != WEBSITE_NORM
        built = exercises.exercise(4, **data)
        for code, right in ((solution, False), (key_solution(exercises.builders[3]), True)):
            namespace = {"np": np, **data}
            exec(code, namespace)
            assert (built.check(namespace["answer_4"]).kind == "correct") is right, student


def test_the_student_id_cell_says_whose_data_or_where_the_id_goes(monkeypatch, capsys):
    """In graded mode, setting the id says whose data the notebook hands out; an id left out is
    told there, in the id cell, and not first at exercise 1 (a student review). Outside the course
    edition nothing is printed."""
    for name in ("LNBOOK_STUDENT", "JUPYTERHUB_USER"):
        monkeypatch.delenv(name, raising=False)
    exercises = next(e for e in every_chapter() if e.chapter == "03_mean")
    monkeypatch.setattr(exercises, "_student", None)  # put back after the test
    exercises.student = "alice"
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(exercises, "_graded_mode", True)
    exercises.student = "alice"
    assert capsys.readouterr().out == "Your exercises' data are drawn for 'alice'.\n"
    exercises.student = None
    assert 'exercises.student = "your id"' in capsys.readouterr().out
    monkeypatch.setenv("JUPYTERHUB_USER", "bob")
    exercises.student = None
    assert capsys.readouterr().out == "Your exercises' data are drawn for 'bob'.\n"


def test_an_id_written_once_in_student_id_txt_serves_every_chapter(monkeypatch, tmp_path):
    """The student review (2026-11-29, sixteenth session): the id had to be typed into every
    notebook. student_id.txt in the edition's root (a chapter folder's parent) or in the chapter's
    folder serves them all; an id written in the notebook still comes first."""
    from lnlib.book.exercises import students

    for name in ("LNBOOK_STUDENT", "JUPYTERHUB_USER"):
        monkeypatch.delenv(name, raising=False)
    chapter = tmp_path / "05_epsilon"
    chapter.mkdir()
    monkeypatch.setattr(students, "STARTED", (None, chapter))
    with pytest.raises(students.NoStudent, match="student_id.txt"):
        students.student_id(None)
    (tmp_path / "student_id.txt").write_text("carol\n", encoding="utf-8")
    assert students.student_id(None) == "carol"
    assert students.student_id("dave") == "dave"
    (chapter / "student_id.txt").write_text("erin\n", encoding="utf-8")
    assert students.student_id(None) == "erin"


@pytest.mark.parametrize("exercises,k", GRADED, ids=lambda v: getattr(v, "chapter", v))
def test_each_students_right_answer_rounded_to_the_digits_asked_is_right(exercises, k):
    """The truth audit (2026-11-29): in chapter 07's exercise 1, a student whose σ was exactly 5.5
    typed the right 5.50 and was told "γ = σ leaves out ε". A student's data are redrawn until the
    answer, rounded to the digits asked, is judged right (chapter.redrawn)."""
    from lnlib.book.exercises.feedback import round_to_digits

    for student in STUDENTS:
        built = exercises.exercise(k, **draw(exercises, k, student))
        if built.asks_digits:
            typed = round_to_digits(built.expected, built.asks_digits)
            assert built.check(typed).kind == "correct", (student, str(built.check(typed)))
