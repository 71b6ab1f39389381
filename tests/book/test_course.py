"""The course edition (ARCHITECTURE.md, "The course and the PDF"): an nbgrader answer key nbgrader
accepts, and a student edition that gives nothing away (lnlib/book/tools/course.py; `make
instructor`, `make student`)."""

from __future__ import annotations

import csv
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lnlib.book.tools.course import (
    CODE_CELL_MINUTES,
    DERIVATION_POINTS,
    WORDS_PER_MINUTE,
    NoKeySolutions,
    _slug,
    _words,
    answer_key,
    folded_minutes,
    graded_minutes,
    instructor_edition,
    path_minutes,
    reading_minutes,
    student_edition,
    student_package,
    time_sentence,
    unfolded_minutes,
    website_without_solutions,
)
from lnlib.book.tools.notebooks import PATH_STOPS, read_notebook

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
SOLUTION = re.compile(r"```python\n(.*?)\n```", re.S)
# Two chapters run through nbgrader itself (each validate runs the notebook; the answer keys of all
# are checked above): 03, and 09, whose backward pass is the exercise the instructor review could
# pass with one lnlib call.
GRADED = ["03_mean", "09_gradients"]

pytest.importorskip(
    "nbgrader", reason="nbgrader is not installed: run `make test`, which installs it"
)


def solutions(chapter: Path) -> list[str]:
    cells = json.loads(chapter.read_text(encoding="utf-8"))["cells"]
    return [
        SOLUTION.search("".join(c["source"])).group(1)
        for c in cells
        if "lnlib-solution" in c["metadata"].get("tags", [])
    ]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_the_answer_key_grades_each_exercise_once(chapter):
    key = answer_key(chapter)
    graded = [c for c in key["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
    marked = [c for c in key["cells"] if c["metadata"].get("nbgrader", {}).get("solution")]
    assert len(marked) == len(solutions(chapter))
    # one graded test per exercise with the student's own data; the others are practice
    assert len(graded) == len(exercises_of(chapter).graded_exercises())
    assert sum("exercises.data(" in c["source"] for c in marked) == len(graded)
    for cell in marked:
        assert "### BEGIN SOLUTION" in cell["source"] and "### END SOLUTION" in cell["source"]
    assert all(
        c["metadata"]["nbgrader"]["locked"] and c["metadata"]["nbgrader"]["points"] == 1
        for c in graded
    )
    assert not any("lnlib-solution" in c["metadata"].get("tags", []) for c in key["cells"])
    # graded mode, in the student's cells and in the hidden tests: a wrong answer gets no recipe
    code = ["".join(c["source"]) for c in key["cells"] if c["cell_type"] == "code"]
    assert sum("\nexercises.graded = True" in source for source in code) == 1
    assert all(f'_hidden.grade("{module_of(chapter)}"' in c["source"] for c in graded)
    # the hidden part is one line (a traceback around a failure shows no more of it)
    for cell in graded:
        hidden = (
            cell["source"].split("### BEGIN HIDDEN TESTS\n")[1].split("### END HIDDEN TESTS")[0]
        )
        assert hidden.count("\n") == 1, cell["source"]


def module_of(chapter: Path) -> str:
    return re.search(
        r"from lnlib\.book\.exercises\.(\w+) import exercises", chapter.read_text()
    ).group(1)


def exercises_of(chapter: Path):
    module = re.search(
        r"from lnlib\.book\.exercises\.(\w+) import exercises", chapter.read_text()
    ).group(1)
    return importlib.import_module(f"lnlib.book.exercises.{module}").exercises


def nbgrader(*args, cwd) -> str:
    """nbgrader's output; a notebook it validates takes its data from the student id "demo"."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "LNBOOK_STUDENT": "demo",
    }
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    folder = tmp_path_factory.mktemp("course")
    instructor_edition(folder, [ROOT / "chapters" / f"{name}.ipynb" for name in GRADED])
    student_edition(folder)
    return folder


@pytest.mark.parametrize("name", GRADED)
def test_nbgrader_passes_the_key_and_fails_the_student_edition(course, name):
    key = course / "source" / name / f"{name}.ipynb"
    student = course / "release" / name / f"{name}.ipynb"
    assert "Success! Your notebook passes all the tests." in nbgrader(
        "validate", str(key), cwd=course
    )
    said = nbgrader("validate", "--invert", str(student), cwd=course)
    assert "Success! The notebook does not pass any tests." in said, said[-2000:]


@pytest.mark.parametrize("name", GRADED)
def test_the_student_edition_holds_no_solution(course, name):
    text = (course / "release" / name / f"{name}.ipynb").read_text(encoding="utf-8")
    assert "Solution to exercise" not in text and "BEGIN SOLUTION" not in text
    for solution in solutions(ROOT / "chapters" / f"{name}.ipynb"):
        for line in solution.splitlines():
            if line.startswith("answer_") and "=" in line:  # the line that gives the answer away
                assert json.dumps(line)[1:-1] not in text, (
                    f"{name}: {line!r} is in the student edition"
                )
    assert '"outputs": []' in text and '"image/png"' not in text  # outputs cleared


def test_reading_time_counts_words_and_exercises(tmp_path):
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "word " * 1000},
            {"cell_type": "markdown", "metadata": {}, "source": "$x$ and $$y = x$$"},
            {"cell_type": "markdown", "metadata": {}, "source": "**Exercise 1.** Do it."},
            {
                "cell_type": "markdown",
                "metadata": {"tags": ["lnlib-solution"]},
                "source": "x " * 5000,
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "99_demo.ipynb"
    path.write_text(json.dumps(notebook))
    # 1004 words, and 3 + 15 for the two formulas, at 140 a minute: 7 min, rounded to 5
    assert reading_minutes(path) == (5, 10)  # one exercise, counted as code
    notebook["cells"] += [{"cell_type": "code", "metadata": {}, "source": "x", "outputs": []}] * 6
    notebook["cells"] += [
        {"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "source": "y"}
    ] * 9
    path.write_text(json.dumps(notebook))
    # 7 + 2 min for each of the 6 cells shown (not the removed)
    assert reading_minutes(path) == (20, 10)
    # an "## Exercises" section is read as part of its exercises' minutes, not twice
    notebook["cells"] += [
        {"cell_type": "markdown", "metadata": {}, "source": "## Exercises\n\n" + "word " * 2000},
        {"cell_type": "code", "metadata": {}, "source": "x", "outputs": []},
        {"cell_type": "markdown", "metadata": {}, "source": "## Summary\n\n" + "word " * 700},
    ]
    path.write_text(json.dumps(notebook))
    assert reading_minutes(path) == (25, 10)  # + 5 min of summary; the section's 2001 words aside


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_states_its_time_under_its_goal(chapter):
    """The estimate is computed (make notebooks restates it), never typed, and never stale."""
    cells = json.loads(chapter.read_text(encoding="utf-8"))["cells"]
    goal = next("".join(c["source"]) for c in cells if "**Goal.**" in "".join(c["source"]))
    assert f"<!--time-->{time_sentence(chapter)}<!--/time-->" in goal, (
        f"{chapter.name}: the time under the goal is not {time_sentence(chapter)!r}: run make "
        "notebooks"
    )


CHEATS = {
    "replaces the check": (
        'answer_1 = 0.0\nexercises.check = lambda *a, **k: type("F", (), {"kind": "correct", '
        '"text": "Correct!"})()'
    ),
    "changes the data": "batch[:] = 0.0\nanswer_1 = batch.mean(axis=-1)",
}


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_a_submission_that_cheats_fails_the_hidden_test(course, cheat, tmp_path):
    """Chapter 03's exercise 1 answered by a cheat: the visible check may say Correct!, the grade
    does not."""
    key = json.loads((course / "source" / "03_mean" / "03_mean.ipynb").read_text())
    for cell in key["cells"]:
        text = "".join(cell["source"])
        if "### BEGIN SOLUTION" in text and "answer_1 = None" in text:
            start, end = text.index("### BEGIN SOLUTION"), text.index("### END SOLUTION")
            cell["source"] = (
                text[:start] + CHEATS[cheat] + "\n" + text[end + len("### END SOLUTION") :]
            )
    submitted = tmp_path / "03_mean.ipynb"
    submitted.write_text(json.dumps(key))
    said = nbgrader("validate", str(submitted), cwd=course)
    # the graded test cell says why, as its message alone; a checker replaced stays replaced in the
    # kernel, so exercise 2's test cell (the key's answer) cannot vouch for its answer either
    failed = {"replaces the check": 2, "changes the data": 1}[cheat]
    assert f"VALIDATION FAILED ON {failed} CELL(S)" in said, said[-1500:]
    why = {
        "replaces the check": "your code replaced the checker (exercises.check)",
        "changes the data": "your answer is right for data other than those handed out to you",
    }
    assert why[cheat] in said, said[-1500:]


# The instructor review's BLOCKER: chapter 09's student edition passed `nbgrader validate` with
# these.
REVIEW_CHEATS = {
    1: ("answer_1 = lnlib.layer_norm_backward(dye, xe)[1]", "lnlib.layer_norm_backward"),
    2: ("answer_2 = lnlib.layer_norm_backward(dye, xe, ge)[0]", "lnlib.layer_norm_backward"),
    # (exercises.exercise itself is refused in graded mode now: test_exercise_tampering.py)
    3: ("answer_3 = exercises.builders[2](xs=xs, dys=dys).expected", "exercises.builders"),
}
#: The instructor review's bypass: the hidden tests' reload made a no-op, the shipped check
#: replaced.
PATCH_THE_CHECKER = (
    "import importlib\nimportlib.reload = lambda module: module\n"
    "import lnlib.book.exercises.mean as shipped\n"
    'shipped.exercises.check = lambda *a, **k: type("F", (), {"kind": "correct", "text": "ok"})()'
)
FOOL_THE_VISIBLE_CHECK = (
    'exercises.check = lambda *a, **k: type("F", (), {"kind": "correct", "text": "Correct!"})()\n'
    "exercises.test = lambda *a, **k: None\n"
    "import contextlib\n"  # the frame around the test refuses a replaced checker: replaced too
    "type(exercises).answer_defined = lambda self, k: contextlib.nullcontext()"
)


def answered(notebook: dict, answers: dict[int, str], marker: str, student="demo") -> dict:
    """`notebook` with exercise k's `marker` (its solution block, or the stub) replaced by
    `answers[k]`, and `student`'s id written in its student cell."""
    notebook = json.loads(json.dumps(notebook))
    for cell in notebook["cells"]:
        text = "".join(cell["source"])
        text = text.replace("exercises.student = None", f"exercises.student = {student!r}")
        for k, answer in answers.items():
            if f"answer_{k} = None" in text and marker in text and cell["cell_type"] == "code":
                if marker == "### BEGIN SOLUTION":
                    start, end = text.index(marker), text.index("### END SOLUTION")
                    text = text[:start] + answer + text[end + len("### END SOLUTION") :]
                else:
                    text = text.replace(marker, answer, 1)
        cell["source"] = text
    return notebook


def key_solutions(key: dict) -> dict[int, str]:
    """Each exercise's solution in the answer key `key`: the code between nbgrader's solution
    markers."""
    solutions = {}
    for cell in key["cells"]:
        text = "".join(cell["source"])
        found = re.search(r"^answer_(\d+) = None", text, re.M)
        if cell["cell_type"] == "code" and found and "### BEGIN SOLUTION" in text:
            start = text.index("### BEGIN SOLUTION") + len("### BEGIN SOLUTION")
            solutions[int(found.group(1))] = text[start : text.index("### END SOLUTION")].strip()
    return solutions


def test_the_reviews_cheats_fail_the_hidden_tests(course, tmp_path):
    """Each right by value, each fails the hidden test, which names the forbidden call: the visible
    check is fooled here (the notebook's exercises.check replaced), so only the hidden tests stand
    in the way."""
    key = json.loads((course / "source" / "09_gradients" / "09_gradients.ipynb").read_text())
    cheats = {k: answer for k, (answer, _) in REVIEW_CHEATS.items()}
    cheats[1] = f"{FOOL_THE_VISIBLE_CHECK}\n{cheats[1]}"
    submitted = tmp_path / "09_gradients.ipynb"
    submitted.write_text(json.dumps(answered(key, cheats, "### BEGIN SOLUTION")))
    said = nbgrader("validate", str(submitted), cwd=course)
    assert "VALIDATION FAILED ON 3 CELL(S)" in said, said[-3000:]
    assert said.count("_hidden.grade(") >= 3, said[-3000:]
    for answer, named in REVIEW_CHEATS.values():
        assert f"your answer uses {named}" in said, (named, said[-3000:])


def test_the_reviews_cheats_fail_the_student_edition(course, tmp_path):
    """The student edition as the reviewer validated it (its hidden tests stripped): the visible
    check fails them."""
    release = json.loads((course / "release" / "09_gradients" / "09_gradients.ipynb").read_text())
    key = json.loads((course / "source" / "09_gradients" / "09_gradients.ipynb").read_text())
    # the chapter's other exercises answered right, so that only the cheats can fail
    answers = {**key_solutions(key), **{k: answer for k, (answer, _) in REVIEW_CHEATS.items()}}
    submitted = tmp_path / "09_gradients.ipynb"
    submitted.write_text(json.dumps(answered(release, answers, "# your code here")))
    said = nbgrader("validate", str(submitted), cwd=course)
    assert "VALIDATION FAILED ON 3 CELL(S)" in said, said[-3000:]
    for answer, named in REVIEW_CHEATS.values():
        assert f"your answer uses {named}" in said, (named, said[-3000:])


def test_a_course_in_use_loses_nothing(tmp_path):
    """`make student` twice in a row with submissions present, then `make instructor` without and
    with FORCE: every submission, autograded notebook, the gradebook and the instructor's edit to
    the key survive (the Makefile's targets run the same command lines)."""
    makefile = (ROOT / "Makefile").read_text()
    for target in ("instructor", "student"):
        recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
        assert recipe.strip().startswith("$(BIN)/python -m lnlib.book.tools.course"), recipe
        assert "\n" not in recipe.strip(), f"make {target} runs more than the course command"
    course = tmp_path / "course"
    key = instructor_edition(course, [ROOT / "chapters" / "03_mean.ipynb"])[0]
    edited = key.read_text().replace(
        "answer_1 = None", "answer_1 = None  # the instructor's edit", 1
    )
    key.write_text(edited)
    kept = {
        course / "submitted" / "alice" / "03_mean" / "03_mean.ipynb": "alice's work",
        course / "autograded" / "alice" / "03_mean" / "03_mean.ipynb": "alice's graded work",
        course / "feedback" / "alice" / "03_mean" / "03_mean.html": "alice's feedback",
    }
    for path, text in kept.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def course_command(*words):
        return subprocess.run(
            [sys.executable, "-m", "lnlib.book.tools.course", *words, str(course)],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )

    for _ in range(2):
        assert course_command("student").returncode == 0
    assert (course / "gradebook.db").exists()
    gradebook = (course / "gradebook.db").stat().st_size
    refused = course_command("instructor")
    assert refused.returncode != 0 and "FORCE=1" in refused.stderr
    assert key.read_text() == edited
    assert "the instructor's edit" in (course / "release" / "03_mean" / "03_mean.ipynb").read_text()
    forced = subprocess.run(
        [sys.executable, "-m", "lnlib.book.tools.course", "instructor", str(course), "--force"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert forced.returncode == 0, forced.stderr
    (backup,) = course.glob("source.backup-*")
    assert (backup / "03_mean" / "03_mean.ipynb").read_text() == edited
    assert "the instructor's edit" not in key.read_text()
    for path, text in kept.items():
        assert path.read_text() == text, f"{path} was changed"
    assert (course / "gradebook.db").stat().st_size >= gradebook


def test_a_copy_without_the_held_back_solutions_writes_no_course(tmp_path, monkeypatch):
    """The website's source download leaves course_keys/ out (the instructor review, 2026-11-30:
    `make instructor` from it stopped with a traceback at chapter 09 and left a half-written key
    that the next run refused): the key is built whole before anything is written, and the
    command says why it stopped and what to use instead."""
    import lnlib.book.exercises.chapter as chapter

    monkeypatch.setattr(chapter, "COURSE_KEYS", tmp_path / "no_course_keys")
    course = tmp_path / "course"
    chapters = [ROOT / "chapters" / "03_mean.ipynb", ROOT / "chapters" / "09_gradients.ipynb"]
    with pytest.raises(NoKeySolutions, match="Nothing was written.*clone"):
        instructor_edition(course, chapters)
    assert not course.exists()


def walkthrough_commands() -> list[str]:
    """The grading walkthrough of instructors.md: the lines of the bash block under its marker."""
    text = (ROOT / "instructors.md").read_text(encoding="utf-8")
    after = text.split("<!-- the grading walkthrough:", 1)[1]
    block = re.search(r"```bash\n(.*?)\n```", after, re.S).group(1)
    # the test gives each command the book's environment (`source ...activate` is for a person)
    return [line for line in block.splitlines() if line.strip() and not line.startswith("source ")]


def test_the_grading_walkthrough_grades_right_wrong_and_cheating_work(course):
    """instructors.md's walkthrough, run as written on chapter 03 (two graded exercises, each
    student's data their own) with six submissions: right; a classmate's number copied; the data
    changed; wrong, with its test cells emptied; the checker patched in the student-id cell; the
    checker patched in an answer cell. The grades nbgrader exports, the feedback pages and what
    `sanitize` says are checked."""
    commands = walkthrough_commands()
    assert commands[0] == "cd course", commands
    key = json.loads((course / "source" / "03_mean" / "03_mean.ipynb").read_text())
    release = json.loads((course / "release" / "03_mean" / "03_mean.ipynb").read_text())
    right = key_solutions(key)
    wrong = {k: f"answer_{k} = 0.5" for k in right}
    submissions = {
        "alice": answered(release, right, "# your code here", "alice"),
        # on his own data, exercise 1 answered with alice's right answer, copied as a number
        "bob": answered(
            release, {**right, 1: copied_answer("03_mean", 1, "alice")}, "# your code here", "bob"
        ),
        "carol": answered(
            release, {**right, 1: CHEATS["changes the data"]}, "# your code here", "carol"
        ),
        "dave": answered(release, wrong, "# your code here", "dave"),
        "erin": answered(release, wrong, "# your code here", "erin"),
        # the same patch in exercise 1's answer cell, with a right answer to exercise 2
        "fay": answered(
            release,
            {**right, 1: f"{PATCH_THE_CHECKER}\nanswer_1 = 0.5"},
            "# your code here",
            "fay",
        ),
    }
    for cell in submissions["erin"]["cells"]:  # the checker patched where no answer is read
        if cell.get("id") == "student-id":
            cell["source"] += "\n" + PATCH_THE_CHECKER
    for cell in submissions["dave"]["cells"]:  # every test cell emptied
        if cell["metadata"].get("nbgrader", {}).get("grade"):
            cell["source"] = "pass"
    for student, notebook in submissions.items():
        folder = course / "submitted" / student / "03_mean"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "03_mean.ipynb").write_text(json.dumps(notebook))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    said = {}
    for command in commands[1:]:
        done = subprocess.run(
            command, shell=True, cwd=course, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, (command, done.stderr[-2000:])
        said[command.split()[1 if command.startswith("nbgrader") else 3]] = done.stdout
        # nbgrader's checksum false alarm, once per test cell, is filtered by the course's config
        assert "has changed!" not in done.stderr, (command, done.stderr[-2000:])
    cut = dict(line.split(": ", 1) for line in said["sanitize"].splitlines())
    assert {cut[name] for name in ("alice", "bob", "carol")} == {"nothing outside the answers"}, cut
    assert "set aside answer cell exercise-1: it uses import importlib" in cut["fay"], cut
    assert "put back cell exercise-1-test: pass" in cut["dave"], cut
    assert "cut the student-id cell to its id: import importlib" in cut["erin"], cut
    kept = course / "originals" / "erin" / "03_mean" / "03_mean.ipynb"
    assert "importlib.reload" in kept.read_text(), "the submission as handed in is kept"
    with open(course / "grades.csv", newline="") as table:
        rows = {
            row["student_id"]: row
            for row in csv.DictReader(table)
            if row["assignment"] == "03_mean"
        }
    scores = {student: float(row["score"]) for student, row in rows.items()}
    # erin's patch (outside her answers) and fay's (in an answer cell) are set aside before grading
    expected = {"alice": 2.0, "bob": 1.0, "carol": 1.0, "dave": 0.0, "erin": 0.0, "fay": 1.0}
    assert scores == expected, scores
    assert {float(row["max_score"]) for row in rows.values()} == {2.0}
    # copied in, not collected: sanitize wrote each a timestamp (the instructor review's m1)
    assert all(row["timestamp"] for row in rows.values()), rows
    for student in submissions:
        page = course / "feedback" / student / "03_mean" / "03_mean.html"
        assert page.exists(), f"no feedback page for {student}"
        shown = page.read_text()
        assert "_hidden" not in shown and "HIDDEN TESTS" not in shown, (
            f"{student}'s feedback shows the hidden tests"
        )
        # MyST's folded boxes and admonitions as HTML (the instructor review, 2026-11-30)
        assert "{dropdown}" not in shown and "{admonition}" not in shown, student
        assert "<blockquote>" in shown, student  # the chapter's admonition, quoted
    feedback = {
        student: (course / "feedback" / student / "03_mean" / "03_mean.html").read_text()
        for student in submissions
    }
    assert "Not correct" in feedback["bob"]
    # a failed test shows its message alone: no traceback, so no line of the test cell
    assert "most recent call last" not in feedback["bob"] and "Not quite" not in feedback["bob"]
    # what was set aside, and an answer right for other data than those handed out, are said
    assert (
        "this answer cell was set aside before grading: it touches the checker" in feedback["fay"]
    )
    assert "right for data other than those handed out to you" in feedback["carol"]


def test_the_student_edition_runs_from_its_zip_without_the_repository(course, tmp_path):
    """student-edition.zip, unpacked away from the repository: lnlib installed from its wheel alone
    (the other packages from this environment) runs chapter 03's student notebook top to bottom, and
    the zip holds no answer key and every data file the book's package reads."""
    nbclient = pytest.importorskip("nbclient")
    import nbformat

    wheel_dir = tmp_path / "dist"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(wheel_dir),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = wheel_dir.glob("lnlib-*.whl")
    archive = student_package(course, wheel)
    with zipfile.ZipFile(archive) as unzip:
        names = unzip.namelist()
        unzip.extractall(tmp_path / "student")
    assert not any("/source/" in name or name.startswith("source/") for name in names)
    with zipfile.ZipFile(wheel) as package:
        shipped = set(package.namelist())
    for data in (ROOT / "lnlib" / "book" / "data").iterdir():
        assert f"lnlib/book/data/{data.name}" in shipped, f"the wheel lacks {data.name}"
    edition = tmp_path / "student" / "student-edition"
    requirements = (edition / "requirements.txt").read_text().splitlines()
    assert requirements[-1] == f"./{wheel.name}[book]"
    # numba, for chapters 14 and 15 only, is a second file (the student review's m4)
    kernels = (edition / "requirements-kernels.txt").read_text().splitlines()
    assert kernels == ["-r requirements.txt", f"./{wheel.name}[book,kernels]"]
    with zipfile.ZipFile(archive) as unzip:  # readable by all (the student review's n3)
        modes = {info.filename: info.external_attr >> 16 & 0o777 for info in unzip.infolist()}
    assert all(mode & 0o444 == 0o444 for mode in modes.values()), modes
    site = tmp_path / "site"
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    key = json.loads((course / "source" / "03_mean" / "03_mean.ipynb").read_text())
    release = json.loads((edition / "03_mean" / "03_mean.ipynb").read_text())
    # answered right, so that every test cell passes and the whole notebook runs
    notebook = nbformat.from_dict(answered(release, key_solutions(key), "# your code here"))
    notebook.cells.append(nbformat.v4.new_code_cell("import lnlib\nprint(lnlib.__file__)"))
    client = nbclient.NotebookClient(
        notebook, timeout=300, resources={"metadata": {"path": str(edition / "03_mean")}}
    )
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(site)
    try:
        client.execute()
    finally:
        if previous is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = previous
    printed = notebook.cells[-1].outputs[0]["text"]
    assert printed.startswith(str(site)), f"lnlib came from {printed}, not the wheel"
    said = "".join(
        str(o.get("data", o.get("text", ""))) for c in notebook.cells for o in c.get("outputs", [])
    )
    assert said.count("Correct!") >= 3, said[-2000:]


def copied_answer(chapter: str, k: int, classmate: str) -> str:
    """``answer_k = np.array(...)``: the right answer for `classmate`'s data, copied as a number."""
    exercises = exercises_of(ROOT / "chapters" / f"{chapter}.ipynb")
    names = list(exercises.builders[k - 1].variant(np.random.default_rng(0)))
    exercises.student = classmate
    try:
        values = exercises.data(k, *names)
    finally:
        exercises.student = None
    values = values if len(names) > 1 else (values,)
    expected = exercises.exercise(k, **dict(zip(names, values))).expected
    return f"answer_{k} = np.array({np.asarray(expected).tolist()!r})"


FOOL_THE_VISIBLE_CHECK_TOO = f"{FOOL_THE_VISIBLE_CHECK}\n"


@pytest.mark.parametrize("chapter", [p.stem for p in CHAPTERS])
def test_a_chapters_round_trip_grades_three_students_on_their_own_data(chapter, tmp_path):
    """nbgrader grades three students of one chapter, each on their own data: alice answers every
    graded exercise with the key's code (full marks); bob, half with the key's code and half with
    alice's right answers copied as numbers (the copies fail); carol, every one wrong, her first
    answer also replacing the visible check so that it says Correct! (nothing)."""
    if os.environ.get("LNBOOK_COURSE_ALL") != "1":
        pytest.skip(
            "every chapter's round trip runs in `make test-course` (nbgrader executes each "
            "submission); make test runs chapter 03's in the walkthrough test"
        )
    exercises = exercises_of(ROOT / "chapters" / f"{chapter}.ipynb")
    graded = exercises.graded_exercises()
    if not graded:
        pytest.skip(f"{chapter} has no graded exercise: its exercises are the same for everyone")
    course = tmp_path / "course"
    # as `make instructor` builds it: each graded derivation also has a cell graded by hand
    instructor_edition(course, [ROOT / "chapters" / f"{chapter}.ipynb"], by_hand=True)
    student_edition(course)
    release = json.loads((course / "release" / chapter / f"{chapter}.ipynb").read_text())
    key = key_solutions(json.loads((course / "source" / chapter / f"{chapter}.ipynb").read_text()))
    right = {k: key[k] for k in graded}
    halves = {
        k: right[k] if i % 2 == 0 else copied_answer(chapter, k, "alice")
        for i, k in enumerate(graded)
    }
    wrong = {k: f"answer_{k} = 0.5" for k in graded}
    wrong[graded[0]] = FOOL_THE_VISIBLE_CHECK_TOO + wrong[graded[0]]
    answers = {"alice": right, "bob": halves, "carol": wrong}
    for student, given in answers.items():
        folder = course / "submitted" / student / chapter
        folder.mkdir(parents=True)
        notebook = answered(release, given, "# your code here", student)
        (folder / f"{chapter}.ipynb").write_text(json.dumps(notebook))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command in (f"nbgrader autograde {chapter}", "nbgrader export"):
        done = subprocess.run(
            command, shell=True, cwd=course, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, (command, done.stderr[-2000:])
    with open(course / "grades.csv", newline="") as table:
        rows = list(csv.DictReader(table))
    scores = {row["student_id"]: float(row["score"]) for row in rows}
    n = len(graded)
    # the derivations, not written here, score 0 until the instructor grades them by hand
    assert scores == {"alice": n, "bob": (n + 1) // 2, "carol": 0.0}, scores
    by_hand = [k for k in graded if exercises.kind(k) == "derivation"]
    assert {float(row["max_score"]) for row in rows} == {n + DERIVATION_POINTS * len(by_hand)}


def test_the_course_website_has_every_page_but_no_solution(tmp_path):
    """make website-course's sources: every tracked file, the chapters without their solutions and
    otherwise unchanged (the build itself is make book's, tested there)."""
    written = website_without_solutions(tmp_path)
    assert [p.name for p in written] == [p.name for p in CHAPTERS]
    for chapter in CHAPTERS:
        before = json.loads(chapter.read_text())["cells"]
        after = json.loads((tmp_path / "chapters" / chapter.name).read_text())["cells"]
        kept = [c for c in before if "lnlib-solution" not in c["metadata"].get("tags", [])]
        assert [c["id"] for c in after] == [c["id"] for c in kept] and len(kept) < len(before)
        assert "Solution to exercise" not in json.dumps(after)
    for page in ("_config.yml", "_toc.yml", "intro.md", "instructors.md", "Makefile"):
        assert (tmp_path / page).read_bytes() == (ROOT / page).read_bytes()


def test_the_pages_each_chapter_folder_carries_link_into_the_course(tmp_path):
    """The Sources and What-to-use pages sit in each chapter's folder: their links to a chapter
    point into that chapter's folder, as the notebooks' do."""
    instructor_edition(tmp_path, [ROOT / "chapters" / "03_mean.ipynb"])
    for page in (ROOT / "chapters").glob("*.md"):
        text = (tmp_path / "source" / "03_mean" / page.name).read_text(encoding="utf-8")
        assert not re.search(r"\]\(\d\d_\w+\.ipynb", text), page.name
        targets = re.findall(r"\]\(\.\./(\d\d_\w+)/(\d\d_\w+)\.ipynb", text)
        assert all(folder == name for folder, name in targets), page.name


def test_derivations_graded_by_hand(tmp_path):
    """`make instructor` (BY_HAND=1, the default; the instructor reviews' M1): after each graded
    derivation's test, a locked prompt and nbgrader's manually graded answer cell, which the
    student edition hands out as YOUR ANSWER HERE; with BY_HAND=0, no such cell."""

    chapter = ROOT / "chapters" / "09_gradients.ipynb"
    exercises = exercises_of(chapter)
    derivations = [k for k in exercises.graded_exercises() if exercises.kind(k) == "derivation"]
    assert derivations, "chapter 09 grades derivations"
    assert "derivation" not in " ".join(c["id"] for c in answer_key(chapter)["cells"])
    instructor_edition(tmp_path, [chapter], by_hand=True)
    key = json.loads((tmp_path / "source" / chapter.stem / chapter.name).read_text())
    ids = [c["id"] for c in key["cells"]]
    for k in derivations:
        at = ids.index(f"exercise-{k}-test")
        assert ids[at + 1 : at + 3] == [
            f"exercise-{k}-derivation-prompt",
            f"exercise-{k}-derivation",
        ]
        marks = key["cells"][at + 2]["metadata"]["nbgrader"]
        assert marks["grade"] and marks["solution"] and marks["points"] == DERIVATION_POINTS
    student_edition(tmp_path)
    release = json.loads((tmp_path / "release" / chapter.stem / chapter.name).read_text())
    handed = {c["id"]: "".join(c["source"]) for c in release["cells"]}
    assert all(handed[f"exercise-{k}-derivation"] == "YOUR ANSWER HERE" for k in derivations)


def test_a_link_to_another_chapters_section_names_the_section():
    """JupyterLab opens another notebook at its top: in the course edition a link to a section
    of another chapter is followed by the chapter and the section's heading (the student review's
    m2), for every such link of the chapters."""
    for chapter in CHAPTERS:
        for cell in answer_key(chapter)["cells"]:
            text = "".join(cell["source"]) if cell["cell_type"] == "markdown" else ""
            for stem, anchor, after in re.findall(
                r"\]\(\.\./(\d\d_\w+)/\1\.ipynb#([\w-]+)\)(.{0,20})", text
            ):
                assert after.startswith(f" (chapter {stem[:2]}, § "), (chapter.name, anchor)


def test_a_link_to_a_section_of_the_same_chapter_names_the_section():
    """A link within a chapter, ``[shown above](#slug)``, carries the website's slug, which
    JupyterLab's heading ids may not match: in the course edition every such link resolves to a
    heading of its own chapter, and is followed by "(§ <that heading>)" unless its text already is
    the heading (the third student review's finding 6). The website's source keeps the bare link."""
    linked = 0
    for chapter in CHAPTERS:
        cells = answer_key(chapter)["cells"]
        markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
        headings = {
            _slug(title.strip()): title.strip()
            for text in markdown
            for title in re.findall(r"^#{1,4} (.+)$", text, re.M)
        }
        for text in markdown:
            for words, anchor, after in re.findall(
                r"\[([^\]\[]*)\]\(#([\w-]+)\)(.{0,120})", text, re.S
            ):
                linked += 1
                assert anchor in headings, (chapter.name, anchor)
                if _slug(" ".join(words.split())) != anchor:
                    assert after.startswith(f" (§ {headings[anchor]})"), (chapter.name, anchor)
    assert linked, "the chapters link within a chapter (10's 'shown above')"
    website = "".join(
        "".join(c["source"]) for c in read_notebook(ROOT / "chapters" / "10_family.ipynb")["cells"]
    )
    assert "(#batch-norm-depends-on-the-batch-layer-norm-does-not) (§" not in website


def test_the_course_editions_pages_write_citations_out_for_jupyterlab():
    """JupyterLab shows a MyST citation role as its raw key (the fourth student review): the course
    edition's Markdown pages carry the website's text instead."""
    from lnlib.book.tools.course import CITE_ROLE, _cited

    pages = sorted((ROOT / "chapters").glob("*.md"))
    assert any(CITE_ROLE.search(p.read_text(encoding="utf-8")) for p in pages)
    for page in pages:
        assert "{cite" not in _cited(page.read_text(encoding="utf-8")), page.name
    assert _cited("{cite}`zhang2019root`") == "[Zhang and Sennrich, 2019]"
    assert _cited("{cite:t}`zhang2019root`") == "Zhang and Sennrich [2019]"


def test_the_course_edition_drops_the_practitioners_line():
    """In a graded lab, "Here for today's practice?" invites skipping what is graded (the fifth
    student review); the website keeps it."""
    from lnlib.book.tools.notebooks import PRACTITIONER_OPENING, practitioner_line

    chapter = ROOT / "chapters" / "09_gradients.ipynb"
    line = practitioner_line(chapter.name, path_minutes(chapter))
    assert line in chapter.read_text(encoding="utf-8").replace('\\"', '"')
    key = answer_key(chapter)
    assert not any(PRACTITIONER_OPENING in "".join(c["source"]) for c in key["cells"])
    title = "".join(key["cells"][0]["source"]).splitlines()
    assert title[1:3] != ["", ""], title[:4]  # and no second blank line left in its place


def test_the_course_edition_states_the_graded_exercises_time_apart():
    """The student review (2026-11-29, third): the chapters' times add up to 5.5 hours for a
    three-chapter lab, with nothing to say what is graded or may be skipped."""
    chapter = ROOT / "chapters" / "10_family.ipynb"
    texts = ("".join(c["source"]) for c in answer_key(chapter)["cells"])
    goal = next(text for text in texts if "**Goal.**" in text)
    graded, practise = graded_minutes(chapter), reading_minutes(chapter)[1]
    assert 0 < graded < practise  # chapter 10 has graded and practice exercises
    said = f"the graded exercises take about {graded} minutes and the practice ones"
    # the folded boxes apart
    assert said in goal and f"About {unfolded_minutes(chapter)} minutes to read (" in goal, goal


def test_a_chapter_too_long_for_one_sitting_says_where_to_split_it():
    """The student review (2026-11-29, fifteenth session): chapter 09 is "about 3 hours for one
    chapter of a three-chapter lab". A first sitting reads to the end of a section and does the
    graded exercises resting on sections up to it, about half of the time; shorter chapters say
    nothing."""
    from lnlib.book.exercises.gradients import exercises
    from lnlib.book.tools.course import SITTING_MINUTES, _read_cells, section_ends, sittings

    chapter = ROOT / "chapters" / "09_gradients.ipynb"
    section, first = sittings(chapter)
    ends = section_ends(_read_cells(chapter)[0])
    assert first == exercises.graded_exercises()[: len(first)] and 0 < len(first) < 5
    assert all(ends[exercises.section(k)] <= ends[section] for k in first)
    goal = next(
        text for text in ("".join(c["source"]) for c in answer_key(chapter)["cells"])
        if "**Goal.**" in text
    )  # fmt: skip
    assert f"first read to the end of § {section} and do exercises 1 to {first[-1]}" in goal
    for short in ("05_epsilon", "10_family"):
        path = ROOT / "chapters" / f"{short}.ipynb"
        assert sum(reading_minutes(path)[:1]) + graded_minutes(path) <= SITTING_MINUTES
        assert sittings(path) is None


def test_folded_boxes_are_counted_as_reading_a_reader_may_skip(tmp_path):
    folded = ":::{dropdown} Details\n" + "word " * 1400 + "\n:::\n"
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "word " * 700 + "\n\n" + folded},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "99_demo.ipynb"
    path.write_text(json.dumps(notebook))
    assert reading_minutes(path)[0] == 15 and folded_minutes(path) == 10  # 2101 and 1401 words
    assert "About 5 minutes to read, 10 more in folded boxes you may skip" in time_sentence(path)
    # a folded printout (hide-cell, hide-output) is skipped too; a folded source alone is not
    code = {"cell_type": "code", "metadata": {}, "source": "print(1)", "outputs": []}
    notebook["cells"] += [
        code | {"metadata": {"tags": [tag]}} for tag in ("hide-cell", "hide-output", "hide-input")
    ]
    path.write_text(json.dumps(notebook))
    assert reading_minutes(path)[0] == 20 and folded_minutes(path) == 15  # + 3 cells, 2 folded
    # the page as it opens, from the unrounded counts: 700 words and one code cell shown
    assert unfolded_minutes(path) == 5 * round((700 / WORDS_PER_MINUTE + CODE_CELL_MINUTES) / 5)


def test_the_course_edition_drops_hidden_cells_that_only_glue_numbers():
    """The student review (2026-11-29, third): JupyterLab shows each hidden glue cell as a bar
    between paragraphs; the course edition's prose holds the numbers already."""
    chapter = ROOT / "chapters" / "05_epsilon.ipynb"
    hidden = [
        "".join(c["source"])
        for c in read_notebook(chapter)["cells"]
        if "remove-cell" in c["metadata"].get("tags", [])
    ]
    kept = {"".join(c["source"]) for c in answer_key(chapter)["cells"]}
    dropped = [source for source in hidden if source not in kept and "import " not in source]
    assert len(dropped) == 2 and all(source.startswith("glue(") for source in dropped)
    assert any("ten_var" in source for source in hidden if source in kept)  # read by a later cell


def test_make_student_alone_writes_the_key_make_instructor_would(tmp_path, monkeypatch):
    """The student review (2026-11-29, sixth): a course built by `make student` alone (no key yet)
    had no cell for the derivations, since the key it wrote first left BY_HAND's default out."""
    from lnlib.book.tools import course as tools

    recipe = re.search(r"^student:.*\n\t(.*)\n", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert "$(if $(filter 1,$(BY_HAND)),--by-hand)" in recipe
    asked = []

    def write_key(folder, *, by_hand=False):
        asked.append(by_hand)
        (folder / "source").mkdir(parents=True)

    monkeypatch.setattr(tools, "instructor_edition", write_key)
    tools.main(["course", "student", str(tmp_path / "c"), "--by-hand"])
    tools.main(["course", "student", str(tmp_path / "d")])
    assert asked == [True, False]


def test_a_graded_question_that_quotes_the_websites_numbers_says_to_use_ones_own():
    """The student review (2026-11-29): chapter 04's exercise 2 asks about the token [2, 4, 6, 8]
    while the student's data differ, and only a code comment said so. The question says it too;
    a question quoting no numbers does not."""
    from lnlib.book.tools.course import OWN_NUMBERS, PRINTED_LINE

    cells = answer_key(ROOT / "chapters" / "04_variance.ipynb")["cells"]
    texts = ["".join(c["source"]) for c in cells]
    told = [i for i, text in enumerate(texts) if OWN_NUMBERS in text]
    assert told and all("[2, 4, 6, 8]" in texts[i] for i in told), told
    assert all(PRINTED_LINE in texts[i + 1] for i in told)
    questions = [t for t in texts if t.startswith("**Exercise")]
    assert any(OWN_NUMBERS not in t for t in questions)


def test_the_paths_minutes_count_what_its_view_shows(tmp_path):
    """Learner B (2026-11-29): the Practitioner's view still said "About 80 minutes to read". Each
    chapter's line says what its stops take, their folded boxes and printouts aside; together with
    What to use today they come to what the path's page states (path_page_sentence)."""
    from lnlib.book.tools.course import _stop_cells, _without_proofs

    minutes = {c.name: path_minutes(c) for c in sorted((ROOT / "chapters").glob("*.ipynb"))}
    stops = {name: m for name, m in minutes.items() if m is not None}
    assert set(stops) == {file for file, _, _ in PATH_STOPS}
    for name, m in stops.items():
        assert 1 <= m < reading_minutes(ROOT / "chapters" / name)[0], name
    page = (ROOT / "chapters" / "what_to_use_today.md").read_text(encoding="utf-8")
    assert 30 <= sum(stops.values()) + _words(page) / WORDS_PER_MINUTE <= 120
    cells = read_notebook(ROOT / "chapters" / "09_gradients.ipynb")["cells"]
    stop = _stop_cells(cells, "simplified-the-closed-form")
    assert "".join(stop[0]["source"]).startswith("### Simplified: the closed form")
    assert not any("### The Jacobian" in "".join(c["source"]) for c in stop)
    # a stop's proofs, as the view hides them: chapter 09's RMSNorm stop keeps its kernels
    rms = _without_proofs(_stop_cells(cells, "rmsnorms-backward-pass"))
    text = "\n".join("".join(c["source"]) for c in rms)
    assert "### What an RMSNorm kernel saves" in text
    assert "### The Jacobian: one direction" not in text and "### Checked against sympy" not in text
    assert not any("path-skip" in c.get("metadata", {}).get("tags", []) for c in rms)
    # a folded box and a folded cell are not counted, nor a printout (the view folds it, learner B,
    # 2026-11-30); a figure is
    text = "### Stop\n\n" + "word " * 700 + "\n\n:::{dropdown} More\n" + "word " * 1400 + "\n:::\n"
    code = {"cell_type": "code", "metadata": {}, "source": "print(1)", "outputs": []}
    figure = code | {"outputs": [{"output_type": "display_data", "data": {"image/png": "iVBO"}}]}
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "# Title"},
            {"cell_type": "markdown", "metadata": {}, "source": text},
            figure,
            code,
            figure | {"metadata": {"tags": ["hide-cell"]}},
            code | {"metadata": {"tags": ["path-show"]}},  # code the view keeps open: counted
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "16_check_your_own.ipynb"  # a chapter with one stop, "checking-an-rmsnorm"
    notebook["cells"][1]["source"] = text.replace("### Stop", "### Checking an RMSNorm")
    path.write_text(json.dumps(notebook))
    assert path_minutes(path) == round(701 / WORDS_PER_MINUTE + 2 * CODE_CELL_MINUTES)


def test_the_path_page_counts_an_open_box_and_not_a_folded_one(tmp_path):
    """The truth audit (2026-11-30): What to use today's code box, opened, was not counted."""
    from lnlib.book.tools.course import PATH_PAGE, path_page_minutes
    from lnlib.book.tools.notebooks import PATH_STOPS

    for name in {file for file, _, _ in PATH_STOPS}:  # the stops' chapters, which it reads too
        shutil.copy(ROOT / "chapters" / name, tmp_path / name)
    words = "word " * (5 * WORDS_PER_MINUTE)
    for opened, minutes in ((":open:\n", 10), ("", 5)):
        text = f"# Page\n\n{words}\n\n:::{{dropdown}} Code\n{opened}{words}\n:::\n"
        (tmp_path / PATH_PAGE).write_text(text, encoding="utf-8")
        assert path_page_minutes(tmp_path)[0] == minutes, opened


def test_a_graded_cell_says_whether_a_number_typed_in_counts():
    """The student review (2026-11-29, second): chapter 04's exercise 2 took a typed-in 4.38 as
    right while its cell said a number typed in is not counted. Its data are four numbers, which
    the check lets a student work out on paper (chapter.BY_HAND); its cell says so now, and an
    exercise past working by hand keeps the line that refuses typed numbers."""
    from lnlib.book.tools.course import GRADED_BY_HAND_LINE, GRADED_LINE

    def lines(stem):
        cells = answer_key(ROOT / "chapters" / f"{stem}.ipynb")["cells"]
        return {
            re.search(r"^answer_(\d+) = None", "".join(c["source"]), re.M).group(1): "".join(
                c["source"]
            )
            for c in cells
            if re.search(r"^answer_(\d+) = None", "".join(c["source"]), re.M)
        }

    variance, gradients = lines("04_variance"), lines("09_gradients")
    assert GRADED_BY_HAND_LINE in variance["2"] and GRADED_LINE not in variance["2"]
    assert GRADED_LINE in gradients["1"] and GRADED_BY_HAND_LINE not in gradients["1"]


def test_a_long_chapter_marks_where_its_first_sitting_ends():
    """The student review (2026-11-29, second): chapter 09 is "too long for one lab". Its Goal plans
    two sittings; the course edition also says, where the first sitting's reading ends, which
    exercises to do then and which end the second; a chapter of one sitting has no such cell."""
    cells = answer_key(ROOT / "chapters" / "09_gradients.ipynb")["cells"]
    texts = ["".join(c["source"]) for c in cells]
    (at,) = [i for i, t in enumerate(texts) if t.startswith("**End of the first sitting**")]
    assert "exercises 1 to 3" in texts[at] and "exercises 4 and 5" in texts[at]
    assert texts[at + 1].startswith("### Scale")  # the first section after § The Jacobian
    short = answer_key(ROOT / "chapters" / "05_epsilon.ipynb")["cells"]
    assert not any("End of the first sitting" in "".join(c["source"]) for c in short)


def test_reading_minutes_skip_link_addresses_and_nested_folded_boxes():
    """The truth audit (2026-11-30): link addresses counted as words (4 minutes on What to use
    today), and a four-colon box holding another was counted as read (chapter 11's stop)."""
    from lnlib.book.tools.course import FOLDED, _words

    linked = 'see [the code](https://github.com/a/b/blob/123/c.py) and <a href="x/y.whl">it</a>'
    assert _words(linked) == _words("see [the code] and <a>it</a>")
    text = "before\n::::{dropdown} A\nword\n:::{dropdown} B\nx\n:::\nmore\n::::\nafter"
    (box,) = FOLDED.finditer(text)
    assert box.group(0).startswith("::::{dropdown} A") and box.group(0).endswith("more\n::::")
