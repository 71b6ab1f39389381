"""No cell a student sees holds an exercise's expected answer (the course edition's promise:
ARCHITECTURE.md, "The course and the PDF").

The committed chapters are the student edition's source (nbgrader's ``generate_assignment`` only
replaces the solutions and clears outputs, tests/book/test_course.py), and JupyterLab shows every
cell's source and stored output, hidden or folded. So, for every exercise of every chapter, this
test builds the exercise from its data as the check does (``exercises.exercise(k, **data)``, the
data re-computed from the chapter's own code: the exercise cell's lines and, for data an earlier
cell made, the earlier statements they come from), writes each number of the expected answer in the
forms a student would recognise (3 and 4 significant digits, 3 and 4 decimals, numpy's default
print, Python's repr), and searches every cell's source and text outputs, except the exercise's own
cell and the solution dropdowns.

Some answers cannot be searched meaningfully, and are skipped by rule, visibly (each skip says why):
True/False answers and numbers with fewer than three significant digits (an integer such as 12, a
mean of 5.0, 0.25), which any chapter prints for other reasons.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from lnlib.book.tools.cells import code, evaluate

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
CHECK = re.compile(r"^exercises\.check\((\d+), answer_\1(?:, (.*))?\)$", re.M)
NUMBER = re.compile(
    r"(?<![\d.,])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?!\d)"
)  # each number as written, unsigned
MODULE = re.compile(r"from lnlib\.book\.exercises\.(\w+) import exercises")
SMALL_ARRAY = 16  # an expected array this long or shorter is searched at three digits


def the_data(cells: list[dict], index: int, data: str) -> dict:
    """The data exercise cell `index` passes to its check, computed from the statements they
    need."""
    own = "".join(cells[index]["source"]).split("answer_")[
        0
    ]  # the cell's data lines, before its answer
    return evaluate(cells, index, f"dict({data})", own=own)


def exercises_of(chapter: Path) -> list[tuple[int, int, str]]:
    """Each exercise of `chapter`: (its number, its cell's index, the data its check passes)."""
    cells = json.loads(chapter.read_text())["cells"]
    found = []
    for index, cell in enumerate(cells):
        match = CHECK.search("".join(cell["source"])) if cell["cell_type"] == "code" else None
        if match:
            found.append((int(match.group(1)), index, match.group(2) or ""))
    return found


def visible_text(cells: list[dict], exercise: int) -> list[tuple[str, str]]:
    """(where, text) for every cell's source and text outputs a student sees, but the exercise's own
    cell and the solutions' dropdowns."""
    texts = []
    for index, cell in enumerate(cells):
        if index == exercise or "lnlib-solution" in cell.get("metadata", {}).get("tags", []):
            continue
        texts.append((f"cell {index} source", "".join(cell["source"])))
        for n, output in enumerate(cell.get("outputs", [])):
            parts = [output.get("text", "")] + [
                output.get("data", {}).get(kind, "")
                for kind in ("text/plain", "text/markdown", "text/html", "text/latex")
            ]
            text = "".join("".join(part) if isinstance(part, list) else part for part in parts)
            texts.append((f"cell {index} output {n}", text))
    return texts


def digits(written: str) -> int:
    """The significant digits a number is written with: "0.130" has 3, "1" has 1."""
    return len(written.split("e")[0].replace(".", "").lstrip("0"))


def forms(value: float) -> list[str] | None:
    """How a student would see `value` printed (its absolute value: a sign may stand apart), each
    form with at least three significant digits; None if the value has fewer than three (5.0, 0.25,
    12), so that it cannot be searched meaningfully."""
    value = abs(float(value))
    if not np.isfinite(value) or digits(f"{value:.6g}".rstrip("0")) < 3:
        return None
    written = {
        f"{value:.3g}",
        f"{value:.4g}",
        repr(value),
        np.format_float_positional(value, precision=8),
    }
    if value >= 1e-3:
        written |= {f"{value:.3f}", f"{value:.4f}"}
    if value == int(value):  # a count: 100352, 100,352
        written |= {f"{int(value)}", f"{int(value):,}"}
    return sorted(w for w in written if digits(w) >= 3)


def numbers(expected) -> list[float]:
    return [float(v) for v in np.ravel(np.asarray(expected, dtype=float))]


def leaks(chapter: Path) -> tuple[list[str], list[str]]:
    """Where each searchable expected number of `chapter`'s exercises shows; and what was skipped,
    why."""
    cells = json.loads(chapter.read_text())["cells"]
    module = MODULE.search("".join(code(c) for c in cells if c["cell_type"] == "code")).group(1)
    exercises = importlib.import_module(f"lnlib.book.exercises.{module}").exercises
    found, skipped = [], []
    for k, index, data in exercises_of(chapter):
        expected = exercises.exercise(k, **the_data(cells, index, data)).expected
        if isinstance(expected, (bool, np.bool_)) or np.asarray(expected).dtype == bool:
            skipped.append(f"exercise {k}: a True/False answer")
            continue
        texts = visible_text(cells, index)
        searchable = [(v, forms(v)) for v in numbers(expected)]
        small = [v for v, written in searchable if written is None]
        if small:
            skipped.append(
                f"exercise {k}: {len(small)} of {len(searchable)} numbers have under 3 significant "
                "digits"
            )
        # A number is a leak at three digits or more. An array leaks when at least three of its
        # numbers (all, if fewer) show in one text; for an array of more than 16 numbers, at four
        # digits or more: one number alone, or three digits among hundreds, match unrelated
        # printouts by chance.
        least = 4 if len(searchable) > SMALL_ARRAY else 3
        enough = min(3, len(searchable))
        for where, text in texts:
            tokens = set(NUMBER.findall(text))
            shown = {
                value: form
                for value, written in searchable
                for form in written or []
                if form in tokens and digits(form) >= least
            }
            if len(shown) >= enough:
                listed = "; ".join(
                    f"{value!r} as {form!r}" for value, form in sorted(shown.items())
                )
                found.append(f"{chapter.stem} exercise {k}, {where}: {listed}")
    return found, skipped


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_cell_a_student_sees_holds_an_expected_answer(chapter):
    found, skipped = leaks(chapter)
    for line in skipped:
        print(f"{chapter.stem}, not searched: {line}")
    assert not found, "\n".join(sorted(set(found)))


def test_the_search_finds_an_answer_printed_in_an_earlier_cell(tmp_path):
    """The search can fail: chapter 06 with exercise 2's answer printed (4 decimals) in a cell above
    it."""
    chapter = ROOT / "chapters" / "06_normalizing.ipynb"
    nb = json.loads(chapter.read_text())
    k, index, data = next(e for e in exercises_of(chapter) if e[0] == 2)
    from lnlib.book.exercises.normalizing import exercises

    expected = np.ravel(exercises.exercise(k, **the_data(nb["cells"], index, data)).expected)
    shown = "[" + " ".join(f"{v:.4f}" for v in expected[:3]) + "]"
    folded = {
        "cell_type": "code",
        "metadata": {},
        "source": ["print(w)"],
        "execution_count": 1,
        "outputs": [{"output_type": "stream", "name": "stdout", "text": [shown]}],
    }
    nb["cells"].insert(index - 1, folded)
    planted = tmp_path / chapter.name
    planted.write_text(json.dumps(nb))
    found, _ = leaks(planted)
    assert found and all(f"cell {index - 1} output 0" in line for line in found), found
