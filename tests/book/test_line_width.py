"""Code and printed output fit the website's column: at most 80 characters a line.

At 1280 px the book's content column holds about 85 monospace characters; a longer line is cut off
mid-number or needs a scroll bar. Checked: the source of every code cell the website shows (not
``remove-cell`` / ``remove-input``) and every text output it shows (not ``remove-output``; rich
outputs such as figures and tables are measured by the browser tests instead).
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
WIDTH = 80
PROSE_WIDTH = 76  # code blocks inside a dropdown (exercise solutions)
RICH = (
    "image/png",
    "image/svg+xml",
    "text/html",
    "text/markdown",
    "text/latex",
    "application/vnd.jupyter.widget-view+json",
)  # a live explorer shows as a widget, not as its repr


def shown_text(cell: dict) -> list[tuple[str, str]]:
    """(kind, line) for every line of a code cell that the website shows."""
    tags = set(cell["metadata"].get("tags", []))
    if "remove-cell" in tags:
        return []
    lines = []
    if "remove-input" not in tags:
        lines += [("code", line) for line in "".join(cell["source"]).splitlines()]
    if "remove-output" not in tags:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if output.get("output_type") == "stream":
                text = output["text"]
            elif "text/plain" in data and not any(kind in data for kind in RICH):
                text = data["text/plain"]
            else:
                continue
            lines += [("output", line) for line in "".join(text).splitlines()]
    return lines


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_code_and_output_fit_80_columns(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    long = [
        f"cell {cell.get('id')}, {kind} ({len(line)} chars): {line[:60]}…"
        for cell in cells
        if cell["cell_type"] == "code"
        for kind, line in shown_text(cell)
        if len(line) > WIDTH
    ]
    assert long == [], (
        f"{notebook.name}: {len(long)} lines wider than {WIDTH} columns:\n" + "\n".join(long)
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_code_in_prose_fits_80_columns(notebook):
    """Code blocks in markdown (the exercises' solutions) sit inside a dropdown, whose padding
    leaves fewer columns than a code cell's box: 76 fit at 1280 px."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    long = [
        f"cell {cell.get('id')} ({len(line)} chars): {line[:60]}…"
        for cell in cells
        if cell["cell_type"] == "markdown"
        for block in re.findall(r"```python\n(.*?)```", "".join(cell["source"]), re.S)
        for line in block.splitlines()
        if len(line) > PROSE_WIDTH
    ]
    assert long == [], (
        f"{notebook.name}: {len(long)} lines wider than {PROSE_WIDTH} columns:\n" + "\n".join(long)
    )
