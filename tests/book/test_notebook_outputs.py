"""Committed notebooks hold no live-widget output (lnlib/book/tools/notebooks.py explains why)."""

import json
from pathlib import Path

import pytest

from lnlib.book.tools.notebooks import WIDGET_VIEW, drop_widget_views

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


def test_drop_widget_views_keeps_every_other_output(tmp_path):
    widget = {
        "output_type": "execute_result",
        "data": {WIDGET_VIEW: {"model_id": "x"}, "text/plain": ["Explorer(...)"]},
    }
    stream = {"output_type": "stream", "name": "stdout", "text": ["4.5\n"]}
    path = tmp_path / "nb.ipynb"
    path.write_text(
        json.dumps({"cells": [{"cell_type": "code", "outputs": [widget, stream]}], "metadata": {}})
    )
    assert drop_widget_views(path) is True
    assert json.loads(path.read_text())["cells"][0]["outputs"] == [stream]
    assert drop_widget_views(path) is False
