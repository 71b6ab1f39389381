"""Committed notebooks keep no live-widget output: a widget cannot be shown without its kernel.

``make notebooks`` executes each chapter without storing widget state (so a re-run changes only what
the code changed). A live explorer's output is then a reference to a widget model that no longer
exists, and JupyterLab shows its text fallback, ``MeanExplorer(children=(HTML(value=...``, under the
cell until the reader runs it. :func:`drop_widget_views` removes those outputs, so the notebook opens
with an empty explorer cell that comes alive when run; the website executes the chapters itself, and
nbval ignores these cells' outputs (they carry ``nbval-ignore-output``).
"""

from __future__ import annotations

import sys

from .notebook_files import read_notebook, write_notebook

__all__ = ["WIDGET_VIEW", "drop_widget_views"]

#: The MIME type of a live ipywidgets output.
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def drop_widget_views(path) -> bool:
    """Remove every widget-view output of the notebook at `path`, in place; return whether any was removed."""
    nb = read_notebook(path)
    removed = False
    for cell in nb["cells"]:
        outputs = cell.get("outputs", [])
        kept = [out for out in outputs if WIDGET_VIEW not in out.get("data", {})]
        if len(kept) != len(outputs):
            cell["outputs"], removed = kept, True
    if removed:
        write_notebook(path, nb)
    return removed


if __name__ == "__main__":
    for name in sys.argv[1:]:
        drop_widget_views(name)
