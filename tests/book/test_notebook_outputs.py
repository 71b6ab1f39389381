"""Committed notebooks hold no live-widget output, and each explorer cell a placeholder that says
what it shows once run (lnlib/book/tools/notebooks.py explains why)."""

import json
import re
from pathlib import Path

import pytest

from lnlib.book.tools.notebooks import (
    PLACEHOLDER,
    WIDGET_VIEW,
    explorer_placeholder,
    hide_removed_sources,
    replace_widget_views,
)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_committed_notebook_has_no_widget_view(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    holding = [
        cell["id"]
        for cell in cells
        for out in cell.get("outputs", [])
        if WIDGET_VIEW in out.get("data", {})
    ]
    assert holding == [], (
        f"{notebook.name}: cells {holding} keep a widget output; run `make notebooks`"
    )


def joined(output: dict) -> dict:
    """`output` with each mime bundle's text as one string (nbformat may store a list of lines)."""
    data = {k: "".join(v) if isinstance(v, list) else v for k, v in output.get("data", {}).items()}
    return {**output, "data": data} if "data" in output else output


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_explorer_cell_says_what_it_shows_before_it_runs(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        source = "".join(cell["source"]).strip()
        if cell["cell_type"] == "code" and re.match(r"\w+_explorer\(", source):
            assert [joined(out) for out in cell["outputs"]] == [explorer_placeholder(source)], (
                f"{notebook.name}: the explorer cell {cell['id']} has no placeholder; run `make "
                "notebooks`"
            )


def test_replace_widget_views_keeps_every_other_output(tmp_path):
    widget = {
        "output_type": "execute_result",
        "data": {WIDGET_VIEW: {"model_id": "x"}, "text/plain": ["Explorer(...)"]},
    }
    stream = {"output_type": "stream", "name": "stdout", "text": ["4.5\n"]}
    path = tmp_path / "nb.ipynb"
    cell = {
        "cell_type": "code",
        "source": ["mean_explorer(values=[1.0])"],
        "outputs": [widget, stream],
    }
    path.write_text(json.dumps({"cells": [cell], "metadata": {}}))
    assert replace_widget_views(path) is True
    stored = json.loads(path.read_text())["cells"][0]["outputs"]
    assert stored[0] == stream and stored[1]["metadata"] == {PLACEHOLDER: True}
    assert "`mean_explorer`" in stored[1]["data"]["text/markdown"]
    assert replace_widget_views(path) is False


def test_make_notebooks_folds_every_cell_the_website_removes(tmp_path):
    """A remove-cell code cell (imports, glue lines) gets JupyterLab's source_hidden; no other cell
    does. tests/book/test_book.py checks the committed chapters carry it."""
    cells = [
        {"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "source": ["import numpy"]},
        {"cell_type": "code", "metadata": {"tags": ["hide-input"]}, "source": ["plot()"]},
        {"cell_type": "markdown", "metadata": {"tags": ["remove-cell"]}, "source": ["note"]},
    ]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}}))
    assert hide_removed_sources(path) is True
    stored = json.loads(path.read_text())["cells"]
    assert stored[0]["metadata"] == {"tags": ["remove-cell"], "jupyter": {"source_hidden": True}}
    assert "jupyter" not in stored[1]["metadata"] and "jupyter" not in stored[2]["metadata"]
    assert hide_removed_sources(path) is False
