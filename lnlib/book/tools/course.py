"""The course edition: an nbgrader answer key and a student edition of the chapters
(``make instructor``, ``make student``).

``python -m lnlib.book.tools.course instructor DIR`` writes an nbgrader course in DIR: its
``source/<chapter>/<chapter>.ipynb`` are the answer key, each exercise's cell holding its solution
between nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers and followed by a locked,
graded test cell (one point) that asserts what the chapter's own check says: "Correct!". The checks
are in graded mode (``exercises.graded = True``): a wrong answer is told the mistake, never the
recipe or the expected value. The solutions' dropdowns go (the key holds them as code).
``python -m lnlib.book.tools.course student DIR`` then runs nbgrader's own ``generate_assignment``,
which writes ``release/<chapter>/<chapter>.ipynb``: the same notebooks with every solution replaced
by ``# your code here`` (so ``answer_k = None`` stays: the answer cell runs, and the graded cell
under it says "Not answered yet") and every output cleared.

The expected answers never appear in either edition: they are computed by ``lnlib.book.exercises``
inside the check, as in the book. Since the library students install computes them too, the graded
test also fails an answer whose code calls what its exercise forbids (``lnlib.layer_norm_backward``
for the backward pass by hand; ``lnlib.book.exercises.chapter.forbidding``), read from the kernel's
input history.
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from lnlib.book.exercises.chapter import (
    ALWAYS_FORBIDDEN,
    BY_HAND,
    RUN_TIME_NAMES,
    SET_ASIDE,
    _checks,
    _data_lines,
    _parse,
    checker_imports,
    checker_uses,
    forbidden_uses,
    key_solution,
    rebinds,
)
from lnlib.book.tools.notebooks import (
    PATH_STOPS,
    PRACTITIONER_OPENING,
    practitioner_line,
    read_notebook,
    write_notebook,
)

__all__ = [
    "KeyExists",
    "NoKeySolutions",
    "sanitize",
    "answer_key",
    "instructor_edition",
    "reading_minutes",
    "folded_minutes",
    "graded_minutes",
    "course_time_sentence",
    "sittings",
    "plain_heading",
    "section_ends",
    "state_times",
    "student_edition",
    "student_package",
    "website_without_solutions",
]

ROOT = Path(__file__).resolve().parents[3]
ANSWER = re.compile(r"^(answer_(\d+) = None.*)$", re.M)
CHECK = re.compile(r"^exercises\.check\((\d+), answer_\1(?:, (.*))?\)$", re.M)
SOLUTION = re.compile(r"```python\n(.*?)\n```", re.S)
IMPORT = re.compile(r"^(from lnlib\.book\.exercises\.\w+ import exercises)$", re.M)
#: The course edition's checks are graded: a wrong answer's verdict names the mistake, and no hint
#: comes (lnlib.book.exercises.chapter.Exercises.graded), in the student's cells as in the hidden
#: tests.
GRADED = r"\1\nexercises.graded = True  # graded checks, as your instructor's grading runs them"
#: Added under it where the chapter defines functions an answer may call (Exercises.chapters_own).
OWN = "\nexercises.chapters_own = {!r}  # the chapter's own functions"
#: The cell under the first: whose data the exercises hand out (lnlib.book.exercises.students).
STUDENT = (
    '# Your student id, as your course spells it ("jdoe"): your exercises\' data follow from it.\n'
    "# With None, it is read from student_id.txt beside the chapters' folders (write it there\n"
    "# once) or, on your course's JupyterHub, from your user name. With it set, Run All goes on\n"
    "# to the end: each graded test not answered yet says so, and grading counts it wrong until\n"
    "# you answer.\n"
    "exercises.student = None"
)
GRADED_LINE = (
    "# Graded (1 point). Your data are your own, drawn from your student id. Compute the answer\n"
    "# from them in this cell (a number typed in is not counted); full precision or rounded to\n"
    "# the digits the exercise asks for are both right.\n"
)
#: The graded line of an exercise whose data are few enough to work out on paper (at most
#: :data:`~lnlib.book.exercises.chapter.BY_HAND` numbers an array), where a number typed in counts
#: (the student review, 2026-11-29: "a typed-in number passes", against the line above).
GRADED_BY_HAND_LINE = (
    "# Graded (1 point). Your data are your own, drawn from your student id, and few enough to\n"
    "# work out on paper: a number typed in counts here; full precision or rounded to the digits\n"
    "# the exercise asks for are both right.\n"
)
#: Added where the cell prints the student's data (the website's cell wrote its numbers out).
PRINTED_LINE = (
    "# Where the question above quotes the website's numbers, use yours, printed below.\n"
)
#: Under a graded question that quotes the website's numbers (the student review, 2026-11-29: the
#: code comment alone left "a double take").
OWN_NUMBERS = (
    "*Your data differ from the numbers quoted here: use yours, which the next cell prints.*"
)
#: A question that quotes the website's numbers: a list of them, ``[2, 4, 6, 8]`` (PRINTED_LINE).
QUOTED = re.compile(r"\[\s*-?\d[\d.,\s\-]*\]")
#: A student's data drawn by a call (``rng.normal(...)``) are printed too, up to this many numbers.
PRINT_AT_MOST = 60
PRACTICE_LINE = "# Practice, not graded (the same for all): a number worked out by hand counts.\n"
TIME_LINE = re.compile(r"<!--time-->.*?<!--/time-->")
CONFIG = r"""import logging
import os
import warnings

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades
from sqlalchemy.exc import SAWarning

from lnlib.book.tools.feedback_pages import MystAsHtml

c = get_config()  # noqa: F821 (nbgrader's config)
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))  # wherever the course is moved
# A cleared solution leaves the answer cell's own `answer_k = None` in place: the cell still runs.
c.ClearSolutions.code_stub = {"python": "# your code here"}
# nbgrader stops a cell after 30 s by default; chapter 09's symbolic cells take longer when loaded
c.Execute.timeout = 300
# The feedback pages show each test cell without its hidden part (how the grade checks an answer),
# and the chapters' folded boxes and admonitions as HTML, not as MyST's source text
c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    MystAsHtml,
    CSSHTMLHeaderPreprocessor,
]
# Benign noise in autograde's output: nbgrader 0.9's own database warnings (SQLAlchemy's autoflush
# "not in session", once a submission), and each kernel's "running over TCP without encryption" (a
# kernel on this machine, reached on localhost).
warnings.filterwarnings("ignore", r"Object of type <Submitted\w*> not in session", SAWarning)
c.Execute.extra_arguments = ["--IPKernelApp.log_level=ERROR"]
# nbgrader warns "Attribute 'checksum' for cell exercise-k-test has changed!" for every graded test
# cell of every submission: the hidden part the key adds changes the checksum the release recorded
# (nbgrader issue 1961), and autograde puts the locked cells back whatever it says. Left out, so
# that a warning that matters is seen.
logging.getLogger("AutogradeApp").addFilter(
    lambda record: "Attribute 'checksum' for cell" not in record.getMessage()
)
"""


def _cell(kind: str, source: str, **nbgrader) -> dict:
    cell = {
        "cell_type": kind,
        "id": nbgrader["grade_id"],
        "metadata": {"nbgrader": nbgrader},
        "source": source,
    }
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def answer_key(chapter: Path, *, by_hand: bool = False) -> dict:
    """The chapter as nbgrader's source notebook: solutions marked; each exercise with a per-student
    variant (lnlib.book.exercises.chapter.variant) hands out the student's own data
    (:func:`own_data`) and is followed by its graded test; the others stay practice, ungraded.
    With `by_hand`, each graded derivation (``asks_for("derivation")``) is also followed by a
    markdown cell for the student's derivation, graded by hand (:func:`_derivation_cells`)."""
    nb = read_notebook(chapter)
    exercises = importlib.import_module(f"lnlib.book.exercises.{_module_of(nb)}").exercises
    split = sittings(chapter)
    pause = section_ends(nb["cells"])[split[0]] if split else None
    cells = []
    for index, cell in enumerate(nb["cells"]):
        text = "".join(cell["source"])
        if index == pause:
            cells.append(_sitting_cell(split, exercises.graded_exercises()))
        if "lnlib-solution" in cell.get("metadata", {}).get("tags", []):
            continue  # the solution is in the exercise's cell now
        answer = ANSWER.search(text) if cell["cell_type"] == "code" else None
        if answer is None:
            cells.append(_for_the_course(copy.deepcopy(cell), chapter))
            continue
        k = answer.group(2)
        solution = key_solution(exercises.builders[int(k) - 1]) or (
            SOLUTION.search("".join(nb["cells"][index + 1]["source"])).group(1)
        )  # the key's own where the task varies per student (chapter.held_back)
        check = CHECK.search(text)
        graded = int(k) in exercises.graded_exercises()
        if graded:
            text = own_data(text, int(k), exercises)
            answer = ANSWER.search(text)
        bare = f"answer_{k} = None"  # nbgrader's stub says "# your code here" under it
        marked = text.replace(
            answer.group(1), f"{bare}\n### BEGIN SOLUTION\n{solution}\n### END SOLUTION"
        )
        question = "".join(nb["cells"][index - 1]["source"]) if index else ""
        quoted = "print(" in text and QUOTED.search(question)
        graded_line = GRADED_BY_HAND_LINE if graded and _by_hand(exercises, int(k)) else GRADED_LINE
        heading = graded_line + (PRINTED_LINE if quoted else "") if graded else ""
        if graded and quoted and cells and cells[-1]["cell_type"] == "markdown":
            _say_own_numbers(cells[-1])
        marked = (heading or PRACTICE_LINE) + marked
        cells.append(
            _cell(
                "code",
                marked,
                grade=False,
                solution=True,
                locked=False,
                grade_id=f"exercise-{k}",
                schema_version=3,
            )
        )
        if not graded:
            continue
        handed = re.findall(rf"exercises\.data\({k}, (.*)\)", text)  # the names own_data wrote
        names = tuple(n for line in handed for n in ast.literal_eval(f"({line},)"))
        test = _graded_test(k, check.group(2) or "", _module_of(nb), names)
        cells.append(
            _cell(
                "code",
                test,
                grade=True,
                solution=False,
                locked=True,
                points=1,
                grade_id=f"exercise-{k}-test",
                schema_version=3,
            )
        )
        # JupyterLab's Run All goes on past a cell so tagged (it sends the cell with stop_on_error
        # off): a wrong answer's error does not stop the rest of the chapter (the fourth student
        # review); an unanswered one prints so in the student's run and fails when graded.
        cells[-1]["metadata"]["tags"] = ["raises-exception"]
        if by_hand and exercises.kind(int(k)) == "derivation":
            cells += _derivation_cells(k)
    cells = _without_bookkeeping(cells)
    own = _chapters_functions(nb)
    for cell in cells:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
            cell["source"] = IMPORT.sub(GRADED + (OWN.format(own) if own else ""), _text(cell))
        else:
            cell["source"] = _course_links("".join(cell["source"]), chapter.stem)
    return {**nb, "cells": _with_student_cell(cells)}


def _without_bookkeeping(cells: list[dict]) -> list[dict]:
    """`cells` without the hidden cells (``remove-cell``) that only glue numbers into the prose
    (:mod:`lnlib.book.tools.prose`): the course edition's prose holds the numbers already, and
    JupyterLab shows each such cell as a bar between paragraphs (a student review). A hidden cell
    that binds a name a later cell reads, or does anything but glue, import and bind names, stays.
    """
    kept = []
    for index, cell in enumerate(cells):
        later = " ".join(_text(c) for c in cells[index + 1 :] if c["cell_type"] == "code")
        if "remove-cell" in cell.get("metadata", {}).get("tags", []) and _only_glues(
            _text(cell), later
        ):
            continue
        kept.append(cell)
    return kept


def _only_glues(source: str, later: str) -> bool:
    """Whether `source` only glues, imports and binds names that `later` never reads."""
    bound = []
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            called = statement.value.func
            if getattr(called, "id", getattr(called, "attr", None)) not in ("glue", "glue_all"):
                return False
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            bound += [(a.asname or a.name).split(".")[0] for a in statement.names]
        elif isinstance(statement, ast.Assign):
            targets = [t for target in statement.targets for t in ast.walk(target)]
            if not all(isinstance(t, ast.Name | ast.Tuple | ast.Store) for t in targets):
                return False
            bound += [t.id for t in targets if isinstance(t, ast.Name)]
        else:
            return False
    return not any(re.search(rf"\b{re.escape(name)}\b", later) for name in bound)


#: Points of a derivation graded by hand (``make instructor BY_HAND=1``), the autograded answer's 1
#: aside: the derivation is the exercise's point.
DERIVATION_POINTS = 2


def _text(cell: dict) -> str:
    return "".join(cell["source"])


def _chapters_functions(nb: dict) -> tuple[str, ...]:
    """The functions the chapter's own code cells define (``def``, or a name bound to a lambda),
    answer cells aside: an answer may call them (Exercises.chapters_own)."""
    names = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or ANSWER.search(_text(cell)):
            continue
        for node in ast.parse(_text(cell)).body:
            if isinstance(node, ast.FunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return tuple(sorted(names))


def _derivation_cells(k: str) -> list[dict]:
    """Exercise `k`'s derivation, graded by hand: a locked prompt, then nbgrader's "manually graded
    answer" cell (the student edition shows YOUR ANSWER HERE; the key, where to look)."""
    prompt = (
        f"**Exercise {k}, your derivation** (graded by hand, {DERIVATION_POINTS} points): in the "
        "cell below, write the derivation your code follows, in words or in LaTeX between dollar "
        "signs (`$dx = ...$`): each step "
        "from the output back to the input (each node of the graph, or each path from x to y) and "
        "the term it gives, and how those terms make the gradient your code computes."
    )
    answer = (
        "The answer key's solution code, in the cell above, names each path in its comments; "
        "the chapter derives LayerNorm's the same way."
    )
    common = {"schema_version": 3}
    return [
        _cell(
            "markdown",
            prompt,
            grade=False,
            solution=False,
            locked=True,
            grade_id=f"exercise-{k}-derivation-prompt",
            **common,
        ),
        _cell(
            "markdown",
            answer,
            grade=True,
            solution=True,
            locked=False,
            points=DERIVATION_POINTS,
            grade_id=f"exercise-{k}-derivation",
            **common,
        ),
    ]


def _with_student_cell(cells: list[dict]) -> list[dict]:
    """`cells` with the exercises' import cell locked (nbgrader restores it before grading: the
    grade's student id is read there, lnlib.book.exercises.students) and the student's id cell under
    it."""
    first = next(i for i, c in enumerate(cells) if "exercises.graded = True" in c["source"])
    cells[first] = {**cells[first], "id": "imports"}
    cells[first]["metadata"] = {
        **cells[first].get("metadata", {}),
        "nbgrader": {
            "grade": False,
            "solution": False,
            "locked": True,
            "grade_id": "imports",
            "schema_version": 3,
        },
    }
    student = {
        "cell_type": "code",
        "id": "student-id",
        "metadata": {},
        "source": STUDENT,
        "outputs": [],
        "execution_count": None,
    }
    return [*cells[: first + 1], student, *cells[first + 1 :]]


#: The practitioner's line under a chapter's title, with the blank line after it
#: (:func:`lnlib.book.tools.notebooks.practitioner_line`).
PRACTITIONERS_LINE = re.compile(re.escape(PRACTITIONER_OPENING) + r".*?\*(?:\n\n|$)")


def _for_the_course(cell: dict, chapter: Path) -> dict:
    """`cell` without the practitioner's line: in a graded lab it invites skipping what is graded
    (the fifth student review); its time line, if it has one, split into graded and practice
    exercises (:func:`course_time_sentence`)."""
    text = "".join(cell["source"])
    if cell["cell_type"] != "markdown":
        return cell
    text = PRACTITIONERS_LINE.sub("", text)
    cell["source"] = TIME_LINE.sub(f"<!--time-->{course_time_sentence(chapter)}<!--/time-->", text)
    return cell


def own_data(cell: str, k: int, exercises) -> str:
    """Exercise `k`'s cell with its data lines replaced by the student's own
    (``batch = exercises.data(1, "batch")``), each printed if the website's cell wrote it out or,
    drawn by a call, it has at most :data:`PRINT_AT_MOST` numbers.

    The lines replaced are the cell's data lines (lnlib.book.exercises.chapter.handed_out) that bind
    names of the exercise's variant; the rest (imports, a helper the exercise gives) stay.
    """
    sample = exercises.builders[k - 1].variant(np.random.default_rng(0))
    names = list(sample)
    lines = cell.splitlines()
    statements = _data_lines(k, ast.parse(cell)) or []
    replaced, written = [], []
    for statement in statements:
        bound = [
            n.id
            for n in ast.walk(statement)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        ]
        if bound and set(bound) <= set(names):
            replaced.append(statement)
            source = "\n".join(lines[statement.lineno - 1 : statement.end_lineno])
            literal = "np.array(" in source or not re.search(r"[A-Za-z_]\w*\(", source)
            small = all(
                np.asarray(sample[name]).dtype.kind in "biuf"
                and np.size(sample[name]) <= PRINT_AT_MOST
                for name in bound
            )
            if literal or small:
                written += bound
    if not replaced:
        raise ValueError(f"exercise {k}'s cell binds none of its variant's names {names}")
    bound = [
        n.id
        for s in replaced
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]
    quoted = ", ".join(repr(name) for name in bound)
    new = [f"{', '.join(bound)} = exercises.data({k}, {quoted})"]
    new += [f'print("{name} =", repr({name}))' for name in written]
    first, last = replaced[0].lineno - 1, replaced[-1].end_lineno
    kept = [
        line
        for number, line in enumerate(lines[first:last], first + 1)
        if not any(s.lineno <= number <= s.end_lineno for s in replaced)
    ]
    return "\n".join(lines[:first] + kept + new + lines[last:])


def _module_of(nb: dict) -> str:
    """The chapter's exercises module (``from lnlib.book.exercises.<module> import exercises``)."""
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    return re.search(r"from lnlib\.book\.exercises\.(\w+) import exercises", text).group(1)


def _graded_test(k: str, data: str, module: str, handed: tuple[str, ...]) -> str:
    """Exercise k's test cell: the student sees the chapter's check, as the graded test runs it
    (``exercises.test``: it says so when the notebook's checker was replaced); nbgrader grades with
    one hidden line, :func:`lnlib.book.exercises.grading.grade` (`handed`: the names of the data
    the cell hands out), which judges with the checker as
    shipped (reloaded) on the data handed out to the student (drawn again from their id), so neither
    changing the data nor replacing ``exercises.check`` in the notebook can pass it. The check reads
    the answer cell's code from the kernel's input history (nbgrader's autograde and validate run
    the cells in order in one IPython kernel, history kept) and fails an answer that uses a name the
    exercise forbids (``lnlib.book.exercises.chapter.forbidding``), naming the use. A failed test
    shows its message alone (chapter.NotPassed), so the feedback page shows no hidden line; so does
    a test cell whose answer cell left its names undefined (``exercises.answer_defined``)."""
    visible = f", {data}" if data else ""
    return (
        f"# Exercise {k}, graded (1 point): the chapter's check must say Correct!\n"
        f"with exercises.answer_defined({k}):\n"
        f"    exercises.test({k}, answer_{k}{visible})\n"
        "### BEGIN HIDDEN TESTS\n"
        f'import lnlib.book.exercises.grading as _hidden; _hidden.grade("{module}", {k}, '
        f"answer_{k}, {handed!r}{visible})\n"
        "### END HIDDEN TESTS"
    )


def _course_links(text: str, stem: str | None = None) -> str:
    """Each chapter sits in its own folder of the course: a link to 04_x.ipynb becomes
    ../04_x/04_x.ipynb. JupyterLab opens another notebook at its top, whatever the link's
    section, so a link to a section also names it: "(chapter 09, § Simplified: the closed form)",
    for the Table of Contents (the student review's m2). A link to a section of the same chapter
    (`stem`'s), ``[shown above](#slug)``, carries the website's slug, which JupyterLab's own
    heading ids (case and punctuation kept) may not match, so it is followed by the section's
    name too, "(§ Batch norm depends on the batch; layer norm does not)", unless the link's text
    already is that name (the third student review's finding 6)."""

    def named(link: re.Match) -> str:
        stem, anchor = link["stem"], link["anchor"]
        moved = f"](../{stem}/{stem}.ipynb{'#' + anchor if anchor else ''})"
        heading = _section_headings().get((stem, anchor))
        return f"{moved} (chapter {stem[:2]}, § {heading})" if heading else moved

    def here(link: re.Match) -> str:
        heading = _section_headings().get((stem, link["anchor"]))
        if heading is None or _slug(" ".join(link["text"].split())) == link["anchor"]:
            return link[0]
        return f"{link[0]} (§ {heading})"

    text = re.sub(r"\]\((?P<stem>\d\d_\w+)\.ipynb(?:#(?P<anchor>[\w-]+))?\)", named, text)
    return re.sub(r"\[(?P<text>[^\]\[]*)\]\(#(?P<anchor>[\w-]+)\)", here, text) if stem else text


def _slug(heading: str) -> str:
    """The anchor MyST gives a heading (myst_parser's ``default_slugify``, GitHub's rule)."""
    return re.sub(r"[^\w\- ]", "", heading.lower().replace(" ", "-"))


@functools.cache
def _section_headings() -> dict[tuple[str, str], str]:
    """{(chapter stem, anchor): the heading's text} for every section heading of the chapters."""
    headings = {}
    for chapter in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        for cell in read_notebook(chapter)["cells"]:
            if cell["cell_type"] == "markdown":
                for title in re.findall(r"^#{2,4} (.+)$", "".join(cell["source"]), re.M):
                    headings[(chapter.stem, _slug(title.strip()))] = title.strip()
    return headings


class NoKeySolutions(RuntimeError):
    """The answer key needs a solution this copy of the book lacks (``course_keys/``)."""


class KeyExists(RuntimeError):
    """The course already holds an answer key, which an instructor may have edited: not
    overwritten."""


def instructor_edition(
    course: Path, chapters=None, *, force: bool = False, by_hand: bool = False
) -> list[Path]:
    """Write the nbgrader course at `course`: its config (unless it has one) and each chapter's
    answer key (`by_hand`: with the derivations graded by hand, :func:`answer_key`).

    Nothing of a course in use is deleted: an existing key (``source/``) is refused with
    :class:`KeyExists` unless `force`, and then moved aside to ``source.backup-<time>`` first; the
    students' submissions, autograded notebooks, feedback and gradebook are never touched. Every
    key is built before anything is written, so a key that cannot be built (a copy of the book
    without ``course_keys/``: :class:`NoKeySolutions`) leaves no half-written course behind.
    """
    chapters = chapters or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    try:
        keys = [answer_key(chapter, by_hand=by_hand) for chapter in chapters]
    except FileNotFoundError as missing:
        raise NoKeySolutions(
            f"{missing} Nothing was written. The website's source download leaves course_keys/ "
            "out (it holds the solutions the website does not show): build the course from a "
            "clone of the book's repository."
        ) from None
    source = course / "source"
    if source.exists():
        if not force:
            raise KeyExists(
                f"{source} already holds an answer key (edited, perhaps): nothing was written. "
                "To write it anew, run `make instructor FORCE=1`, which moves it to "
                f"{source.name}.backup-<time> first."
            )
        source.rename(course / f"source.backup-{time.strftime('%Y%m%d-%H%M%S')}")
    course.mkdir(parents=True, exist_ok=True)
    if not (course / "nbgrader_config.py").exists():
        (course / "nbgrader_config.py").write_text(CONFIG)
    written = []
    for chapter, key in zip(chapters, keys):
        folder = course / "source" / chapter.stem
        folder.mkdir(parents=True, exist_ok=True)
        write_notebook(folder / chapter.name, key)
        for page in (ROOT / "chapters").glob("*.md"):  # the Sources page the chapters link to
            text = _cited(_course_links(page.read_text(encoding="utf-8")))
            (folder / page.name).write_text(text, encoding="utf-8")
        written.append(folder / chapter.name)
    return written


#: A MyST citation role in a Markdown page: ``{cite}`a,b``` or ``{cite:t}`a```.
CITE_ROLE = re.compile(r"\{cite(?P<textual>:t)?\}`(?P<keys>[^`]+)`")


def _cited(text: str) -> str:
    """`text` with each citation role written out as the website shows it, "[Zhang and Sennrich,
    2019]" or "Zhang and Sennrich [2019]": JupyterLab shows a role as its raw key (the fourth
    student review)."""
    if not CITE_ROLE.search(text):
        return text
    from pybtex.database import parse_file

    entries = parse_file(str(ROOT / "references.bib")).entries

    def authors(key: str) -> str:
        names = [" ".join(p.last_names) for p in entries[key].persons.get("author", [])]
        names = names or [entries[key].fields.get("organization", key)]
        return names[0] + (" and " + names[1] if len(names) == 2 else " et al." * (len(names) > 2))

    def written(role: re.Match) -> str:
        keys = [k.strip() for k in role["keys"].split(",")]
        if role["textual"]:
            return "; ".join(f"{authors(k)} [{entries[k].fields['year']}]" for k in keys)
        return "[" + "; ".join(f"{authors(k)}, {entries[k].fields['year']}" for k in keys) + "]"

    return CITE_ROLE.sub(written, text)


def website_without_solutions(target: Path) -> list[Path]:
    """Copy the book's sources (every file git tracks) to `target`, each chapter without its
    solutions (the cells tagged ``lnlib-solution``): the website an instructor hosts for a term,
    while the graded exercises are open (``make website-course`` builds it). Returns the chapters
    written."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    chapters = sorted((target / "chapters").glob("[0-9][0-9]_*.ipynb"))
    for chapter in chapters:
        nb = read_notebook(chapter)
        nb["cells"] = [
            c for c in nb["cells"] if "lnlib-solution" not in c.get("metadata", {}).get("tags", [])
        ]
        write_notebook(chapter, nb)
    return chapters


def student_edition(
    course: Path, wheel: Path | None = None, *, by_hand: bool = False
) -> list[Path]:
    """nbgrader's ``generate_assignment`` on every chapter of the course at `course`: the student
    edition.

    It rewrites ``release/`` alone (from the key as it stands, edits included); a course without a
    key gets one first (:func:`instructor_edition`, `by_hand` as ``make instructor``'s: a student
    review found no cell for the derivations in a course built by ``make student`` alone). Given
    lnlib's `wheel`, it also writes ``student-edition.zip`` (:func:`student_package`)."""
    if not (course / "source").exists():
        instructor_edition(course, by_hand=by_hand)
    for folder in sorted((course / "source").iterdir()):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "nbgrader",
                "generate_assignment",
                folder.name,
                "--force",
            ],
            cwd=course,
            check=True,
            capture_output=True,
            # nbgrader runs alembic, its database tool, from the PATH: this Python's own scripts
            env={
                **os.environ,
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            },
        )
    if wheel is not None:
        student_package(course, Path(wheel))
    return sorted((course / "release").glob("*/*.ipynb"))


#: What a student installs next to the notebooks (pip's requirements file; Binder and most
#: JupyterHubs read it as it is): JupyterLab, its MyST extension (without it the chapters' dropdowns
#: and admonitions show as raw text) and lnlib with the book's and the kernels' extras, from the
#: wheel in the same folder.
STUDENT_REQUIREMENTS = """jupyterlab>=4.1
jupyterlab-myst>=2.7
./{wheel}[book]
"""
#: Chapters 14 and 15's kernels (numba and numba-cuda, about 230 MB), on top of the rest.
STUDENT_KERNEL_REQUIREMENTS = """-r requirements.txt
./{wheel}[book,kernels]
"""
STUDENT_README = """# LayerNorm, worked out: the student edition

Each folder is one chapter. Your exercises' data are your own: write your student id (as your
course spells it) once in `student_id.txt`, in this folder, or in each notebook in the cell under
the first, `exercises.student = "jdoe"`; then run the cells in order. Write all of an exercise's
code in its answer cell: only the answer cells are graded (cells you add, and changes to the
chapter's cells, are set aside before grading), and the check runs your answer cell again on a
second draw of data of the same kind, so the cell must compute its answer from the data it hands
out, with numpy and Python as you would write them (where the data are a few numbers, four or fewer
an array, the cell's first line says that a number worked out on paper counts instead): an answer
may not use lnlib (the checker lives there), nor, where an exercise forbids a function, `getattr`,
`eval` or `globals()`, which hide names from the check. lnlib is the book's own library and its
code is readable, the copy you install too: code pasted from it, or from the website's solutions,
is not your work, as a classmate's would not be, and your instructor reads the answers and grades
the derivations by hand.
Tries are unlimited: a wrong answer that makes a known mistake is told which, and at the third
wrong answer computed from the data a graded exercise names the section it practises. Before you
hand a notebook in, run it again from the top (Kernel, Restart Kernel and Run All Cells): what is
graded is the notebook as it runs from a fresh start. You need no nbgrader: the test cell under
each graded exercise runs the check your instructor's grading runs, on your data.

To work on them on your own machine (Python 3.11 or newer):

    python3 -m venv .venv
    .venv/bin/python -m pip install -r requirements.txt
    .venv/bin/jupyter labextension disable "@jupyterlab/apputils-extension:announcements"
    .venv/bin/jupyter lab    # as root (in a container): .venv/bin/jupyter lab --allow-root

The install takes a minute or two and about 650 MB. The third line, optional, stops JupyterLab's
news pop-up from covering the notebook. In a container where you are root, JupyterLab refuses to
start without `--allow-root`, as the last line's comment says. Chapters 14
and 15 compile kernels with numba, about 230 MB more: for them, also run
`.venv/bin/python -m pip install -r requirements-kernels.txt`. A link to a
section of another chapter opens that notebook at its top, so the link is followed by the
section's name, "(chapter 09, § Simplified: the closed form)": JupyterLab's Table of Contents (the
left side bar) takes you there. A link to a section of the same notebook names it too, "(§ ...)".

On a course's JupyterHub or on Binder, `requirements.txt` is the environment
(`requirements-kernels.txt` for chapters 14 and 15). Run each notebook top
to bottom; the cell under each exercise says whether your answer is right. Once your student id is
set, Run All goes on to the end of the chapter, so you can read it all first: under each graded
exercise you have not answered yet, its test cell says "not answered yet" (grading counts it wrong
until you answer). A Markdown
cell that looks raw (its `<!--glue:...-->` comments showing) renders when you select it and press
Shift+Enter.
"""


#: The student-id cell as a student may leave it: comments and one assignment of a string (or None).
STUDENT_LINE = re.compile(r"""^exercises\.student = (None|"[^"\n]*"|'[^'\n]*')\s*(#.*)?$""")


def sanitize(course: Path, chapter: str) -> dict[str, list[str]]:
    """Each submission of `chapter` in ``submitted/`` cut down to its answers, before ``nbgrader
    autograde``; returns, for each student, what was put back or removed (for a person to read).

    nbgrader's hidden tests run in the student's kernel, after the student's code: code in a cell
    that is not an answer (the student-id cell, a chapter cell, a cell the student added) could
    patch the checker before the tests run, and no test can stop that. So every code cell but the
    answer cells is put back as the student edition handed it out, the student-id cell keeps only
    its one assignment, and cells the student added are removed (the student edition says: all of
    an answer's code in its cell). An answer cell whose code reaches the checker or what loads it
    (:func:`_tampering`: ``importlib``, ``.check``, ``setattr``, ``eval``, ...) is put back as
    handed out too: not answered. The submission as handed in is kept, once, in
    ``originals/<student>/<chapter>/``. A submission copied in without nbgrader's
    ``timestamp.txt`` gets one, from its file's time, so the export tells it from a missing one.
    """
    handed_out = course / "release" / chapter / f"{chapter}.ipynb"
    if not handed_out.exists():
        names = sorted(p.parent.name for p in (course / "release").glob("*/*.ipynb"))
        raise NoChapter(f"no chapter {chapter}; chapters are: {', '.join(names) or 'none'}")
    release = read_notebook(handed_out)
    handed = {c.get("id"): c for c in release["cells"]}
    answers = {
        key
        for key, c in handed.items()
        if c.get("metadata", {}).get("nbgrader", {}).get("solution")
    }
    found = {}
    for path in sorted((course / "submitted").glob(f"*/{chapter}/{chapter}.ipynb")):
        student = path.parts[-3]
        original = course / "originals" / student / chapter / path.name
        if not original.exists():
            original.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, original)
        notebook, notes, cells = read_notebook(path), [], []
        for cell in notebook["cells"]:
            text, key = "".join(cell["source"]), cell.get("id")
            if cell["cell_type"] == "code" and key in answers and _tampering(text):
                uses = ", ".join(_tampering(text))
                notes.append(f"set aside answer cell {key}: it uses {uses}")
                aside = f"{SET_ASIDE} ({uses}).\n"  # the check reads it, and says so
                cells.append({**cell, "source": aside + "".join(handed[key]["source"])})
                continue
            if (
                cell["cell_type"] != "code"
                or key in answers
                or text == "".join(handed.get(key, {}).get("source", []))
            ):
                cells.append(cell)
                continue
            first = next((line for line in text.splitlines() if line.strip()), "")
            if key not in handed:
                notes.append(f"removed an added cell: {first[:70]}")
                continue
            kept = [line for line in text.splitlines() if STUDENT_LINE.match(line)]
            if key == "student-id" and kept:
                extra = [
                    line
                    for line in text.splitlines()
                    if line.strip() and line not in kept and not line.lstrip().startswith("#")
                ]
                if extra:
                    notes.append(f"cut the student-id cell to its id: {extra[0][:70]}")
                cells.append({**cell, "source": kept[-1]})
                continue
            notes.append(f"put back cell {key}: {first[:70]}")
            cells.append({**cell, "source": "".join(handed[key]["source"])})
        write_notebook(path, {**notebook, "cells": cells})
        stamp = path.parent / "timestamp.txt"
        if not stamp.exists():  # copied in, not collected: the time the file was handed in
            handed_in = time.gmtime(original.stat().st_mtime)
            stamp.write_text(time.strftime("%Y-%m-%d %H:%M:%S.000000 UTC", handed_in))
        found[student] = notes
    return found


class NoChapter(ValueError):
    """``sanitize`` was given a chapter the course has not handed out."""


def _tampering(answer: str) -> list[str]:
    """What in an answer cell reaches the checker or what loads it, read here, outside the
    student's kernel (where a patched checker could not report itself): the names of
    lnlib.book.exercises.chapter.ALWAYS_FORBIDDEN and RUN_TIME_NAMES, and what the cell rebinds
    that it did not create (chapter.rebinds: ``np.all = ...``, ``del np.x``, ``exercises = ...``),
    and an import from the checker's own package (chapter.checker_imports), the cell's own checks
    aside."""
    tree = _parse(answer)
    if tree is None:
        return []
    body = [statement for statement in tree.body if statement not in _checks(None, tree)]
    code = ast.Module(body=body, type_ignores=[])
    uses = forbidden_uses(code, ALWAYS_FORBIDDEN + RUN_TIME_NAMES) + checker_uses(code)
    uses += [use for use in checker_imports(code) if use not in uses]
    return uses + [r for r in rebinds(code) if r.removesuffix(" = ...") not in uses]


def student_package(course: Path, wheel: Path) -> Path:
    """``student-edition.zip`` in `course`: the student notebooks (``release/``), lnlib's `wheel`, a
    requirements file and a README; everything a student needs, no answer key and no repository."""
    target = course / "student-edition.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((course / "release").rglob("*")):
            if path.is_file():
                archive.write(path, Path("student-edition") / path.relative_to(course / "release"))
        archive.write(wheel, Path("student-edition") / wheel.name)
        texts = {
            "requirements.txt": STUDENT_REQUIREMENTS,
            "requirements-kernels.txt": STUDENT_KERNEL_REQUIREMENTS,
            "README.md": STUDENT_README,
        }
        for name, text in texts.items():
            _write_readable(archive, f"student-edition/{name}", text.format(wheel=wheel.name))
    return target


def _write_readable(archive: zipfile.ZipFile, name: str, text: str) -> None:
    """`text` as `name` in `archive`, readable by every user (rw-r--r--: on a shared hub the
    student who unpacks it may not be the one who reads it)."""
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o100644 << 16
    archive.writestr(info, text)


#: Words a minute when reading to learn: Carver's "learning" rate is about 200, his "memorizing"
#: rate 138 (R. P. Carver, *Reading Rate*, 1990); a chapter with derivations to follow is read at
#: the slower one.
WORDS_PER_MINUTE = 140
#: Words counted for a formula: an inline one ($...$) reads like a short phrase, a displayed one
#: like a sentence.
INLINE_MATH_WORDS, DISPLAY_MATH_WORDS = 3, 15
#: Minutes for each code cell a reader sees (read the code and its output).
CODE_CELL_MINUTES = 2
#: Minutes a student needs for an exercise, by what it asks for (Exercises.kind): a graduate
#: instructor's estimates, not timed on a cohort: an atomic backward pass 30,
#: code computed from the data 10 (chapter 09's exercises 1, 3 and 5: 5-10 each), a one-line
#: answer 4 and a True/False 2 (chapter 03: about 10 for two one-liners and a True/False); a
#: number worked out, which the review did not time, ours, scaled as code was (15 to 10).
EXERCISE_MINUTES = {"derivation": 30, "code": 10, "line": 4, "number": 5, "choice": 2}


def reading_minutes(chapter: Path) -> tuple[int, int]:
    """(minutes to read, minutes for the exercises), rounded to 5 (at least 5 to read).

    Reading: the markdown cells' words (the exercises excluded) at :data:`WORDS_PER_MINUTE`, each
    formula counted as :data:`INLINE_MATH_WORDS` or :data:`DISPLAY_MATH_WORDS` words, plus
    :data:`CODE_CELL_MINUTES` for each code cell a reader sees (cells removed from the website are
    not counted), up to an ``## Appendix`` heading (chapter 14's, a reference for one machine).
    Exercises: :data:`EXERCISE_MINUTES` by kind (:func:`exercise_minutes`). An
    instructor who tried the chapters found the first estimate (200 words a minute, formulas not
    counted, a minute a code cell, five an exercise) about half of a student's time; a graduate
    instructor found the exercise minutes that followed (45 a derivation, 15 code) too high.
    """
    cells, prose = _read_cells(chapter)
    minutes = _minutes_to_read(cells)
    return max(5, 5 * round(minutes / 5)), 5 * round(exercise_minutes(chapter, prose) / 5)


def _minutes_to_read(cells: list[dict]) -> float:
    """The unrounded reading minutes of `cells` (:func:`reading_minutes`), their ``## Exercises``
    section aside: reading an exercise is part of its minutes (:data:`EXERCISE_MINUTES`), which
    learner A (2026-11-30) found counted twice in the landing page's table."""
    cells = _outside_exercises(cells)
    code = sum(
        1
        for c in cells
        if c["cell_type"] == "code" and "remove-cell" not in c.get("metadata", {}).get("tags", [])
    )
    return sum(map(_words, _prose_of(cells))) / WORDS_PER_MINUTE + CODE_CELL_MINUTES * code


def _outside_exercises(cells: list[dict]) -> list[dict]:
    """`cells` less those from an ``## Exercises`` heading to the next ``## `` heading."""
    kept, inside = [], False
    for cell in cells:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and text.startswith("## "):
            inside = text.startswith("## Exercises")
        if not inside:
            kept.append(cell)
    return kept


def folded_minutes(chapter: Path) -> int:
    """The part of :func:`reading_minutes`' reading spent in the chapter's folded boxes
    (``:::{dropdown}``: details a reader may skip) and folded code cells (``hide-cell``,
    ``hide-output``: a printout a reader may skip), rounded to 5 (a student review: "as one lab it
    is long")."""
    return 5 * round(_folded_minutes(chapter) / 5)


def unfolded_minutes(chapter: Path) -> int:
    """The reading of :func:`reading_minutes` less its folded boxes (:func:`folded_minutes`): the
    page as it opens, rounded to 5 from the unrounded counts (at least 5), not the difference of
    two rounded numbers (the truth audit of 2026-11-30: 40 said for 37)."""
    cells, _ = _read_cells(chapter)
    return max(5, 5 * round((_minutes_to_read(cells) - _folded_minutes(chapter)) / 5))


def _folded_minutes(chapter: Path) -> float:
    """:func:`folded_minutes`, unrounded, outside the exercises as the reading is."""
    cells = _outside_exercises(_read_cells(chapter)[0])
    prose = _prose_of(cells)
    words = sum(_words(box.group(0)) for text in prose for box in FOLDED.finditer(text))
    folded = sum(
        1
        for c in cells
        if c["cell_type"] == "code"
        and {"hide-cell", "hide-output"} & set(c.get("metadata", {}).get("tags", []))
    )
    return words / WORDS_PER_MINUTE + CODE_CELL_MINUTES * folded


#: A folded box of a markdown cell: from its ``:::{dropdown}`` line to its closing ``:::``, or
#: from ``::::{dropdown}`` to ``::::`` where it holds another box (the truth audit of 2026-11-30:
#: chapter 11's four-colon box was counted as read).
FOLDED = re.compile(r"^(?P<fence>:{3,})\{dropdown\}.*?^(?P=fence)[ \t]*$", re.M | re.S)


def _read_cells(chapter: Path) -> tuple[list[dict], list[str]]:
    """The chapter's cells up to an ``## Appendix`` heading (a reference, not read), and the text
    of its markdown cells, solutions and the time line aside."""
    cells = read_notebook(chapter)["cells"]
    appendix = [i for i, c in enumerate(cells) if "".join(c["source"]).startswith("## Appendix")]
    cells = cells[: appendix[0]] if appendix else cells
    return cells, _prose_of(cells)


def _prose_of(cells: list[dict]) -> list[str]:
    """The text of the markdown cells among `cells`, solutions and the time line aside."""
    return [
        TIME_LINE.sub(" ", "".join(c["source"]))  # the estimate does not count itself
        for c in cells
        if c["cell_type"] == "markdown"
        and "lnlib-solution" not in c.get("metadata", {}).get("tags", [])
    ]


def _words(text: str) -> float:
    """A markdown text's length in words, each formula counted as its words; a link's address is
    not read (the truth audit of 2026-11-30: What to use today's source links counted 4 minutes)."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"\]\([^)\s]*\)|href=\"[^\"]*\"", "] ", text)
    display = len(re.findall(r"\$\$.*?\$\$", text, re.S))
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    inline = len(re.findall(r"\$[^$]+\$", text))
    text = re.sub(r"\$[^$]+\$", " ", text)
    return (
        len(re.findall(r"[A-Za-z]\w*", text))
        + INLINE_MATH_WORDS * inline
        + DISPLAY_MATH_WORDS * display
    )


def exercise_minutes(chapter: Path, prose: list[str]) -> int:
    """The minutes for the chapter's exercises, each by its kind (:data:`EXERCISE_MINUTES`); a
    notebook without an exercises module counts each ``**Exercise k**`` as code."""
    module = re.search(
        r"from lnlib\.book\.exercises\.(\w+) import exercises", Path(chapter).read_text()
    )
    if module is None:
        count = sum(len(re.findall(r"^\*\*Exercise \d", text, re.M)) for text in prose)
        return EXERCISE_MINUTES["code"] * count
    exercises = importlib.import_module(f"lnlib.book.exercises.{module.group(1)}").exercises
    return sum(EXERCISE_MINUTES[exercises.kind(k)] for k in range(1, len(exercises) + 1))


def time_sentence(chapter: Path) -> str:
    """The chapter's time estimate, as its Goal paragraph states it."""
    read, practise = reading_minutes(chapter)
    folded = folded_minutes(chapter)
    if not folded:
        return f"About {read} minutes to read and {practise} for the exercises."
    # the time of the page as it opens first (learner B, 2026-11-30: "About 80 minutes" for a
    # chapter whose checks fold), the folded boxes apart
    return (
        f"About {unfolded_minutes(chapter)} minutes to read, {folded} more in folded boxes you may "
        f"skip, and {practise} for the exercises."
    )


def course_time_sentence(chapter: Path) -> str:
    """The chapter's time estimate as the course edition states it: the graded exercises apart
    from the practice ones (a student review: "as one lab it is long")."""
    read, practise = reading_minutes(chapter)
    graded = graded_minutes(chapter)
    folded = folded_minutes(chapter)
    skippable = f" ({folded} more in folded boxes you may skip)" if folded else ""
    read = unfolded_minutes(chapter) if folded else read
    if not graded:
        return f"About {read} minutes to read{skippable}; its exercises, practice, {practise}."
    practice = f" and the practice ones {practise - graded}" if practise > graded else ""
    return (
        f"About {read} minutes to read{skippable}; the graded exercises take about {graded} "
        f"minutes{practice}.{_sittings_sentence(sittings(chapter))}"
    )


#: The minutes of reading and graded exercises beyond which the course edition plans a chapter in
#: two sittings (a student review of chapter 09: "about 3 hours for one chapter of a three-chapter
#: lab is heavy").
SITTING_MINUTES = 120


def sittings(chapter: Path) -> tuple[str, list[int]] | None:
    """Where the course edition splits a long chapter in two sittings: the section a first sitting
    reads to the end of, and the graded exercises it does, chosen so that the first sitting takes
    about half of the reading and graded exercises; None where they take
    :data:`SITTING_MINUTES` or less. Each graded exercise practises a section (:func:`rests_on`),
    so a first sitting does the first exercises, in order, once it has read their sections."""
    read, graded = reading_minutes(chapter)[0], graded_minutes(chapter)
    if read + graded <= SITTING_MINUTES:
        return None
    exercises = importlib.import_module(
        f"lnlib.book.exercises.{_module_of(read_notebook(chapter))}"
    ).exercises
    cells, _ = _read_cells(chapter)
    ends, numbers, best = section_ends(cells), exercises.graded_exercises(), None
    for n in range(1, len(numbers)):
        first = numbers[:n]
        end, section = max((ends[exercises.section(k)], exercises.section(k)) for k in first)
        minutes = _minutes_to_read(cells[:end]) + sum(
            EXERCISE_MINUTES[exercises.kind(k)] for k in first
        )
        gap = abs(minutes - (read + graded) / 2)
        if best is None or gap < best[0]:
            best = (gap, section, first)
    return None if best is None else best[1:]


def _sitting_cell(split: tuple[str, list[int]], graded: list[int]) -> dict:
    """The markdown cell the course edition puts where a long chapter's first sitting ends
    (:func:`sittings`): which exercises to do now, which the second sitting ends with (the student
    review, 2026-11-29: chapter 09 is "too long for one lab")."""
    section, first = split
    rest = [k for k in graded if k not in first]
    now = f"exercise {first[0]}" if len(first) == 1 else f"exercises {first[0]} to {first[-1]}"
    later = " and ".join(map(str, rest))
    text = (
        f"**End of the first sitting** (§ {section} read): do {now} now, under "
        f"[Exercises](#exercises). The second sitting starts here and ends with exercise"
        f"{'s' if len(rest) > 1 else ''} {later}."
    )
    return {"cell_type": "markdown", "id": "end-of-first-sitting", "metadata": {}, "source": text}


def _sittings_sentence(split: tuple[str, list[int]] | None) -> str:
    if split is None:
        return ""
    section, first = split
    done = f"exercise {first[0]}" if len(first) == 1 else f"exercises {first[0]} to {first[-1]}"
    return (
        f" That is two sittings: first read to the end of § {section} and do {done}, then the rest."
    )


#: A markdown heading line: its level (the #s) and its text.
HEADING_LINE = re.compile(r"^(#{1,6}) +(.+?) *$", re.M)


def plain_heading(heading: str) -> str:
    """A heading as a reader sees it, formulas in plain text ("$d\\beta$" as "dβ"): how
    :func:`~lnlib.book.exercises.chapter.rests_on` names a section."""
    greek = {r"\beta": "β", r"\gamma": "γ", r"\sigma": "σ", r"\varepsilon": "ε"}
    for command, letter in greek.items():
        heading = heading.replace(command, letter)
    return re.sub(r"[$`]", "", heading).strip()


def section_ends(cells: list[dict]) -> dict[str, int]:
    """Each markdown heading of `cells`, in plain text, and the index of the first cell after its
    section (the next heading of its level or above, else the end)."""
    heads = [
        (i, len(m.group(1)), plain_heading(m.group(2)))
        for i, c in enumerate(cells)
        if c["cell_type"] == "markdown"
        for m in HEADING_LINE.finditer("".join(c["source"]))
    ]
    return {
        name: next((j for j, other, _ in heads[n + 1 :] if other <= level and j > i), len(cells))
        for n, (i, level, name) in enumerate(heads)
    }


def _by_hand(exercises, k: int, draws: int = 20) -> bool:
    """Whether every student's data for exercise `k` are few enough to work out on paper (at most
    :data:`~lnlib.book.exercises.chapter.BY_HAND` numbers an array, in `draws` seeded draws): then
    the check counts a number typed in (chapter.py, ``_typed_in``)."""
    draw = exercises.builders[k - 1].variant
    return all(
        all(np.size(value) <= BY_HAND for value in draw(np.random.default_rng(seed)).values())
        for seed in range(draws)
    )


def _say_own_numbers(question: dict) -> None:
    """Append :data:`OWN_NUMBERS` to a graded question's markdown cell."""
    text = "".join(question["source"]).rstrip("\n") + "\n\n" + OWN_NUMBERS
    question["source"] = text.splitlines(keepends=True)


def graded_minutes(chapter: Path) -> int:
    """The minutes, rounded to 5, of the exercises the course edition grades (those with
    per-student data), by kind as :func:`exercise_minutes` counts them."""
    exercises = importlib.import_module(
        f"lnlib.book.exercises.{_module_of(read_notebook(chapter))}"
    ).exercises
    minutes = sum(EXERCISE_MINUTES[exercises.kind(k)] for k in exercises.graded_exercises())
    return 5 * round(minutes / 5)


def _stop_cells(cells: list[dict], anchor: str) -> list[dict]:
    """The cells of the stop at `anchor` of :data:`PATH_STOPS`: its section, from its heading to
    the next heading of its level or above; for a stop at the chapter's top (``""``), its bottom
    line box."""
    if not anchor:
        top = BOTTOM_LINE.search("".join(cells[0]["source"]))
        return [{"cell_type": "markdown", "metadata": {}, "source": top.group(0)}] if top else []
    for i, cell in enumerate(cells):
        text = "".join(cell["source"]) if cell["cell_type"] == "markdown" else ""
        for match in HEADING_LINE.finditer(text):
            if _slug(plain_heading(match.group(2))) == anchor:
                level, first = len(match.group(1)), dict(cell, source=text[match.start() :])
                end = next(
                    (
                        j
                        for j in range(i + 1, len(cells))
                        if cells[j]["cell_type"] == "markdown"
                        and any(
                            len(m.group(1)) <= level
                            for m in HEADING_LINE.finditer("".join(cells[j]["source"]))
                        )
                    ),
                    len(cells),
                )
                return [first, *cells[i + 1 : end]]
    raise ValueError(f"no heading with the anchor {anchor!r}")


#: The bottom line box at a chapter's top (chapter 12's, stop 5 of the path).
BOTTOM_LINE = re.compile(r"^```\{admonition\} The bottom line\n.*?^```", re.M | re.S)


def _without_proofs(stop: list[dict]) -> list[dict]:
    """A stop's cells as the practitioner's view shows them: without the code cells tagged
    ``path-skip`` nor the subsections holding a cell tagged ``path-skip-section`` (a markdown cell
    split at its headings, so that a subsection starting inside one is dropped from there)."""
    pieces = []
    for cell in stop:
        if cell["cell_type"] != "markdown":
            pieces.append(cell)
            continue
        text = "".join(cell["source"])
        starts = [m.start() for m in HEADING_LINE.finditer(text)] or [0]
        bounds = sorted({0, *starts, len(text)})
        pieces += [dict(cell, source=text[a:b]) for a, b in zip(bounds, bounds[1:])]
    top = HEADING_LINE.match("".join(pieces[0]["source"])) if pieces else None
    level = len(top.group(1)) if top else 6  # a stop without a heading has no subsections
    segments: list[list[dict]] = [[]]
    for piece in pieces[1:]:
        text = "".join(piece["source"]) if piece["cell_type"] == "markdown" else ""
        heading = HEADING_LINE.match(text)
        if heading and len(heading.group(1)) > level:
            segments.append([])
        segments[-1].append(piece)
    kept = pieces[:1]
    for n, segment in enumerate(segments):
        tags = [set(c.get("metadata", {}).get("tags", [])) for c in segment]
        if n and any("path-skip-section" in t for t in tags):
            continue  # a subsection the view hides (segment 0 is the stop's own text)
        kept += [c for c, t in zip(segment, tags) if "path-skip" not in t]
    return kept


def path_minutes(chapter: Path) -> int | None:
    """The minutes, rounded to a whole minute, of the chapter's stops on the practitioner's path as
    its view on the website shows them (``_static/path-view.js``): their unfolded prose and their
    figures (the view folds a stop's code and printouts, learner B, 2026-11-30); None for a chapter
    the path skips (learner B, 2026-11-29: the view still said "About 80 minutes to read"). Not
    rounded to 5: six chapters' stops of 2 to 10 minutes would add up to 10 minutes more than the
    path's page states."""
    minutes = _stop_minutes(chapter)
    return None if minutes is None else max(1, round(minutes))


def _stop_minutes(chapter: Path) -> float | None:
    """:func:`path_minutes`, unrounded."""
    anchors = [anchor for file, anchor, _ in PATH_STOPS if file == chapter.name]
    if not anchors:
        return None
    cells = read_notebook(chapter)["cells"]
    minutes = 0.0
    for anchor in anchors:
        stop = _without_proofs(_stop_cells(cells, anchor))
        prose = [FOLDED.sub(" ", text) for text in _prose_of(stop)]
        shown = sum(
            1
            for c in stop
            if c["cell_type"] == "code"
            and not {"remove-cell", "hide-cell", "hide-output"} & set(c["metadata"].get("tags", []))
            and (
                "path-show" in c["metadata"].get("tags", [])  # code the view keeps open
                or any("image/png" in out.get("data", {}) for out in c.get("outputs", []))
            )
        )
        minutes += sum(map(_words, prose)) / WORDS_PER_MINUTE + CODE_CELL_MINUTES * shown
    return minutes


#: The page that opens the practitioner's path and states its minutes (between ``<!--time-->``
#: markers), in the chapters' folder.
PATH_PAGE = "what_to_use_today.md"


def path_page_minutes(folder: Path) -> tuple[int, int]:
    """(minutes on :data:`PATH_PAGE`, rounded to 5: its prose less its folded boxes; minutes in the
    chapters' stops: the sum of the chapters' lines, :func:`path_minutes`) (learner B, 2026-11-30:
    the page said "about an hour and a half" where the chapters' lines add up to 35 minutes; learner
    B48: "25 in the chapters" where the lines add up to 28)."""
    page = FOLDED.sub(_unless_open, (Path(folder) / PATH_PAGE).read_text(encoding="utf-8"))
    stops = sum(
        path_minutes(Path(folder) / name) or 0 for name in sorted({f for f, _, _ in PATH_STOPS})
    )
    return 5 * round(_words(page) / WORDS_PER_MINUTE / 5), stops


def _unless_open(box: re.Match) -> str:
    """A folded box's text gone, an ``:open:`` one's kept: it is read (the truth audit of
    2026-11-30: the checklist's code, opened, was not counted)."""
    opening = box.group(0).split("\n", 2)
    return box.group(0) if len(opening) > 1 and opening[1].strip() == ":open:" else " "


def path_page_sentence(folder: Path) -> str:
    """What :data:`PATH_PAGE` says of the path's length."""
    page, stops = path_page_minutes(folder)
    return f"about {page + stops} minutes ({page} on this page, {stops} in the chapters)"


def _state_path_page(folder: Path) -> bool:
    """Write :func:`path_page_sentence` into :data:`PATH_PAGE`; whether it changed."""
    path = Path(folder) / PATH_PAGE
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    new = TIME_LINE.sub(f"<!--time-->{path_page_sentence(folder)}<!--/time-->", text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def _state_path_line(nb: dict, chapter: Path) -> bool:
    """Write the practitioner's line, with its stops' minutes, under the chapter's title; whether
    it changed."""
    title = nb["cells"][0]
    lines = "".join(title["source"]).split("\n")
    if len(lines) < 3 or not lines[2].startswith(PRACTITIONER_OPENING):
        return False
    line = practitioner_line(chapter.name, path_minutes(chapter))
    if lines[2] == line:
        return False
    lines[2] = line
    title["source"] = "\n".join(lines).splitlines(keepends=True)
    return True


def state_times(chapters) -> list[Path]:
    """Write each chapter's time estimate after its Goal paragraph (between ``<!--time-->``
    markers), its stops' minutes in its practitioner's line, and the path's in :data:`PATH_PAGE`."""
    changed = []
    chapters = list(map(Path, chapters))
    for folder in {chapter.parent for chapter in chapters}:
        if _state_path_page(folder):
            changed.append(folder / PATH_PAGE)
    for chapter in chapters:
        nb = read_notebook(chapter)
        if _state_path_line(nb, chapter):
            write_notebook(chapter, nb)
            changed.append(chapter)
        sentence = time_sentence(chapter)
        for cell in nb["cells"]:
            text = "".join(cell["source"])
            if cell["cell_type"] != "markdown" or "**Goal.**" not in text:
                continue
            marked = f"<!--time-->{sentence}<!--/time-->"
            new = (
                TIME_LINE.sub(marked, text)
                if TIME_LINE.search(text)
                else f"{text.rstrip()}\n\n*{marked}*"
            )
            if new != text:
                cell["source"] = new.splitlines(keepends=True)
                write_notebook(chapter, nb)
                changed.append(chapter)
            break
    return changed


def main(argv: list[str]) -> None:
    """The command line: ``python -m lnlib.book.tools.course instructor|student|website|sanitize|
    times ...`` (the Makefile's course targets)."""
    edition, course = argv[1], Path(argv[2])
    if edition == "times":  # python -m lnlib.book.tools.course times chapters/*.ipynb
        state_times(argv[2:])
    elif edition == "sanitize":  # ... sanitize DIR CHAPTER: submissions cut down to their answers
        try:
            found = sanitize(course, argv[3])
        except NoChapter as missing:
            print(missing, file=sys.stderr)
            sys.exit(2)
        for student, notes in found.items():
            print(f"{student}: " + ("; ".join(notes) if notes else "nothing outside the answers"))
    elif edition == "website":  # ... website DIR: the book's sources without the solutions
        print(f"{len(website_without_solutions(course))} chapters without solutions in {course}")
    elif edition == "instructor":
        try:
            keys = instructor_edition(
                course, force="--force" in argv[3:], by_hand="--by-hand" in argv[3:]
            )
        except (KeyExists, NoKeySolutions) as refused:
            sys.exit(str(refused))
        print(f"{len(keys)} answer keys in {course}/source")
    elif edition == "student":  # ... student DIR [WHEEL] [--by-hand]: with the wheel, the zip
        given = [a for a in argv[3:] if not a.startswith("--")]
        wheel = Path(given[0]) if given else None
        written = student_edition(course, wheel, by_hand="--by-hand" in argv[3:])
        print(f"{len(written)} student notebooks in {course}/release")
        if wheel:
            print(f"and {course}/student-edition.zip, with {wheel.name}")
    else:
        sys.exit(
            "usage: python -m lnlib.book.tools.course instructor DIR [--force] [--by-hand] | "
            "student DIR "
            "[WHEEL] [--by-hand] | website DIR | sanitize DIR CHAPTER"
        )


if __name__ == "__main__":
    main(sys.argv)
