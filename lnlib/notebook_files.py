"""Read and write a chapter notebook in the committed format (JSON, indent 1, UTF-8, a final newline).

One format for every tool that rewrites notebooks after ``make notebooks`` executes them
(:mod:`lnlib.prose` fills the prose numbers, :mod:`lnlib.notebook_outputs` drops live-widget outputs),
so a rewrite changes only what it meant to change and diffs stay readable (CONTRIBUTING.md).
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["read_notebook", "write_notebook"]


def read_notebook(path) -> dict:
    """The notebook at `path` as a JSON dict."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_notebook(path, nb: dict) -> None:
    """Write `nb` to `path` as the committed notebooks are written (``json.dump(nb, indent=1)``)."""
    Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
