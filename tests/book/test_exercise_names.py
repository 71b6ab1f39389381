"""An exercise never rebinds a name the chapter's own cells read from an earlier cell
(CONTRIBUTING.md, "A chapter", step 5).

A student runs an exercise's cell, and its solution's code, in the chapter's kernel; if either binds
a name that a chapter cell takes from an earlier cell (chapter 11's exercise 3 once set
``deep = 32`` over the chapter's 24-layer measurement, which its verdicts cell reads), re-running
that chapter cell afterwards breaks or, worse, shows other numbers. A name a chapter cell binds for
itself (a loop's variable) is free.
"""

from __future__ import annotations

import ast
import json
import re
import symtable
from pathlib import Path

import pytest

from lnlib.book.tools.cells import bound, code

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
SOLUTION = re.compile(r"```python\n(.*?)\n```", re.S)


def names_bound(source: str) -> set[str]:
    return set().union(*(bound(stmt, nested=False) for stmt in ast.parse(source).body))


def names_taken(source: str) -> set[str]:
    """The names a cell takes from the cells run before it: read at its top level, or as globals
    inside its functions, and not bound by the cell itself (Python's own scoping, from the standard
    library's symtable)."""
    top = symtable.symtable(source, "cell", "exec")
    own = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    taken = {s.get_name() for s in top.get_symbols() if s.is_referenced()}
    pending = list(top.get_children())
    while pending:
        table = pending.pop()
        taken |= {s.get_name() for s in table.get_symbols() if s.is_global() and s.is_referenced()}
        pending += table.get_children()
    return taken - own


def exercise_sources(cells: list[dict]) -> list[tuple[str, str]]:
    """Each exercise's cell and its solution's code, as (where, source)."""
    found = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code" and "exercises.check(" in "".join(cell["source"]):
            found.append((f"the cell of {index}", code(cell)))
            after = "".join(cells[index + 1]["source"]) if index + 1 < len(cells) else ""
            if "Solution to exercise" in after:
                found += [(f"the solution after cell {index}", s) for s in SOLUTION.findall(after)]
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_bind_no_name_the_chapter_uses(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    exercises = exercise_sources(cells)
    exercise_cells = {source for _, source in exercises}
    chapter = set().union(
        *(
            names_taken(code(cell))
            for cell in cells
            if cell["cell_type"] == "code" and code(cell) not in exercise_cells
        )
    )
    clashes = [
        f"{where} binds {sorted(names)}"
        for where, source in exercises
        if (names := {n for n in names_bound(source) & chapter if not n.startswith("answer_")})
    ]
    assert clashes == [], f"{path.stem}: an exercise rebinds the chapter's names: {clashes}"
