"""The fact check's verdict table, written into its notebook (``python -m lnlib.book.tools.verdicts
chapters/*.ipynb``, run by ``make notebooks``).

The chapter "Fact check" shows its verdict table in a markdown cell, not as a code cell's output:
the section that holds it folds every code cell (the chapter template). ``make notebooks`` writes
the cell from :mod:`lnlib.book.factcheck.claims`, as it writes the prose numbers from the glued
values. It is a module of its own because the claims read the chapters' titles from
:mod:`.notebooks`: the import graph stays free of cycles (``tests/library/test_layering.py``).
"""

from __future__ import annotations

import sys

from ..factcheck.claims import VERDICTS_TAG, verdicts_markdown
from .notebooks import read_notebook, write_notebook

__all__ = ["fill_verdicts"]


def fill_verdicts(path) -> bool:
    """Write :func:`lnlib.book.factcheck.claims.verdicts_markdown` into the notebook's cell tagged
    :data:`lnlib.book.factcheck.claims.VERDICTS_TAG`, in place; return whether anything changed."""
    nb = read_notebook(path)
    changed = False
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown" and VERDICTS_TAG in cell["metadata"].get("tags", []):
            text = verdicts_markdown()
            if "".join(cell["source"]) != text:
                cell["source"] = text.splitlines(keepends=True)
                changed = True
    if changed:
        write_notebook(path, nb)
    return changed


if __name__ == "__main__":
    for name in sys.argv[1:]:
        fill_verdicts(name)
