"""The book's notebook and website tools: the committed notebook format, the chapters' titles,
whether this run builds the website, a placeholder for each live-widget output in committed
notebooks (``python -m lnlib.book.tools.notebooks chapters/*.ipynb``, run by ``make notebooks``; the
fact check's verdict table is :mod:`lnlib.book.tools.verdicts`).
Each part keeps its own introduction below.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from pathlib import Path

__all__ = [
    "CHAPTERS",
    "read_notebook",
    "write_notebook",
    "chapter_titles",
    "PRACTITIONER_CHAPTERS",
    "PRACTITIONER_OPENING",
    "PATH_STOPS",
    "practitioner_line",
    "website_build",
    "WIDGET_VIEW",
    "PLACEHOLDER",
    "explorer_placeholder",
    "replace_widget_views",
]


# --- the committed notebook format (was notebook_files.py) ----------------------------------------
# Read and write a chapter notebook in the committed format (JSON, indent 1, UTF-8, a final
# newline).
#
# One format for every tool that rewrites notebooks after ``make notebooks`` executes them
# (:mod:`lnlib.book.tools.prose` fills the prose numbers, :mod:`lnlib.book.tools.notebooks` replaces
# live-widget outputs), so a rewrite changes only what it meant to change and diffs stay readable
# (CONTRIBUTING.md).


def read_notebook(path) -> dict:
    """The notebook at `path` as a JSON dict."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_notebook(path, nb: dict) -> None:
    """Write `nb` to `path` as the committed notebooks are written (``json.dump(nb, indent=1)``)."""
    Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# --- the chapters' titles ------------------------------------------------------------------------
# A chapter's title lives in one place, its notebook: the first ``# `` heading. A heading with a
# subtitle (``# Fact check: what the sources get right and wrong``) names the short form links use
# in the notebook's metadata, ``{"lnbook": {"short_title": "Fact check"}}``.

#: The folder of the chapter notebooks, ``NN_<slug>.ipynb``.
CHAPTERS = Path(__file__).resolve().parents[3] / "chapters"


@functools.cache
def chapter_titles(chapters=CHAPTERS) -> dict[str, str]:
    """Chapter file stem -> its title, read from each ``chapters/NN_*.ipynb``, in reading order.

    The title is the notebook's short title (metadata ``lnbook.short_title``) if it has one, else
    its first ``# `` heading. For the links the fact check's table and the chapters' callouts write.

    Raises
    ------
    ValueError
        If a chapter has no ``# `` heading, or a short title that does not start it.
    """
    titles = {}
    for path in sorted(Path(chapters).glob("[0-9][0-9]_*.ipynb")):
        nb = read_notebook(path)
        lines = (
            line
            for cell in nb["cells"]
            if cell["cell_type"] == "markdown"
            for line in "".join(cell["source"]).splitlines()
        )
        heading = next((line[2:].strip() for line in lines if line.startswith("# ")), None)
        if heading is None:
            raise ValueError(f"{path.name} has no '# ' heading to take its title from.")
        short = nb["metadata"].get("lnbook", {}).get("short_title")
        if short is not None and not heading.startswith(short):
            raise ValueError(
                f"{path.name}: short title {short!r} does not start its heading {heading!r}."
            )
        titles[path.stem] = short or heading
    return titles


# --- is this the website build? (was website.py) --------------------------------------------------
# Whether the chapters are being executed for the website (``make book``), where nothing is
# interactive.
#
# ``make book`` (and ``_ext/web_explorers.py``) set ``LNBOOK_WEBSITE=1`` before executing the
# chapters; explorers then display their precomputed website version (chapter "Explore" sections,
# CONTRIBUTING.md) and exercise checks say how to try an answer instead of "Not answered yet".


# --- the practitioner's line ----------------------------------------------------------------------
# Chapters 09 to 16 open, on the line under the title, with one line to the practitioner's path (the
# tip box of What to use today, which the introduction's reading paths and each chapter's "In
# practice" box link as well) that names the path's stops in the chapter, or says the path skips
# it: tests/book/test_book.py holds each chapter to :func:`practitioner_line`, and
# tests/book/test_practitioners_path.py holds :data:`PATH_STOPS` to the tip box and to the line
# that opens each stop.

#: The chapters that open with :func:`practitioner_line`, by number.
PRACTITIONER_CHAPTERS = ("09", "10", "11", "12", "13", "14", "15", "16")
#: Where every practitioner's line starts (the course edition removes the line: course.py).
PRACTITIONER_OPENING = "*Here for today's practice? [The practitioner's path](what_to_use_today.md)"
#: The path's stops after What to use today itself, in order: (notebook, section anchor ("" for the
#: chapter's top), the stop's name).
PATH_STOPS = (
    ("09_gradients.ipynb", "simplified-the-closed-form", "LayerNorm's closed form"),
    ("09_gradients.ipynb", "rmsnorms-backward-pass", "RMSNorm's backward pass"),
    ("11_pre_post_norm.ipynb", "what-this-means-in-practice", "what pre-norm means in practice"),
    ("12_after_2020.ipynb", "", "the bottom line"),
    ("12_after_2020.ipynb", "rmsnorm-what-todays-llms-normalize-with", "RMSNorm"),
    ("12_after_2020.ipynb", "qk-norm", "QK-norm"),
    ("13_numerics.ipynb", "half-precision-as-the-frameworks-do-it", "half precision"),
    ("13_numerics.ipynb", "rmsnorm-in-half-precision", "RMSNorm in half precision"),
    ("13_numerics.ipynb", "gradients-in-mixed-precision", "gradients in mixed precision"),
    ("15_gpu.ipynb", "kernel-5-add--rmsnorm-the-kernel-most-of-todays-models-run", "add + RMSNorm"),
    ("16_check_your_own.ipynb", "checking-an-rmsnorm", "checking an RMSNorm"),
)


def practitioner_line(notebook: str, minutes: int | None = None) -> str:
    """The line under chapter `notebook`'s title (e.g. ``"09_gradients.ipynb"``): the path's stops
    in it, each linked to its section (a stop at the chapter's top is the box just below), and the
    `minutes` their unfolded reading takes (:func:`lnlib.book.tools.course.path_minutes`), or that
    the path skips it, and its next stop."""
    stops = [
        f"[{name}](#{anchor})" if anchor else f"{name} below"
        for file, anchor, name in PATH_STOPS
        if file == notebook
    ]
    if not stops:
        # and says where it goes on (learner B, 2026-11-30: in the view, a skipped chapter showed
        # in full with no way on)
        file, anchor, name = next(stop for stop in PATH_STOPS if stop[0] > notebook)
        target = f"{file}#{anchor}" if anchor else file
        return f"{PRACTITIONER_OPENING} skips this chapter; its next stop is [{name}]({target}).*"
    listed = stops[0] if len(stops) == 1 else f"{', '.join(stops[:-1])} and {stops[-1]}"
    time = f", about {minutes} minute{'s' if minutes != 1 else ''}" if minutes else ""
    return f"{PRACTITIONER_OPENING} reads {listed} in this chapter{time}, and skips the rest.*"


def website_build() -> bool:
    """True while ``make book`` executes the chapters for the website (it sets
    ``LNBOOK_WEBSITE=1``)."""
    return os.environ.get("LNBOOK_WEBSITE") == "1"


def course_website_build() -> bool:
    """True while ``make website-course`` executes the chapters for a course's website (it also
    sets ``LNBOOK_COURSE_SITE=1``): graded exercises get no hint there, as in the notebooks."""
    return website_build() and os.environ.get("LNBOOK_COURSE_SITE") == "1"


# --- no live-widget output in committed notebooks (was notebook_outputs.py) -----------------------
# Committed notebooks keep no live-widget output: a widget cannot be shown without its kernel.
#
# ``make notebooks`` executes each chapter without storing widget state (so a re-run changes only
# what the code changed). A live explorer's output is then a reference to a widget model that no
# longer exists, and JupyterLab would show its text fallback,
# ``MeanExplorer(children=(HTML(value=...``, under the cell until the reader runs it.
# :func:`replace_widget_views` puts a one-line placeholder in its place that says what the cell
# shows once it runs; running the cell replaces it with the live explorer.
# The website executes the chapters itself, and nbval ignores these cells' outputs (they carry
# ``nbval-ignore-output``).

#: The MIME type of a live ipywidgets output.
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: An explorer cell: one call of a chapter's ``*_explorer`` function.
EXPLORER_CELL = re.compile(r"^\s*\w+_explorer\(")
#: The metadata key that marks a stored placeholder output.
PLACEHOLDER = "lnlib-explorer-placeholder"


def explorer_placeholder(source: str) -> dict:
    """The stored output of an explorer cell (``name_explorer(...)``) before it runs: what it will
    show."""
    name = source.strip().split("(")[0]
    # the cell needs the chapter's imports and data above it: after a restart, Shift+Enter alone
    # fails
    text = (
        f"The live explorer `{name}` appears here once the cells above it have run: "
        "Run All, or run the chapter's cells in order down to this one."
    )
    return {
        "output_type": "display_data",
        "data": {"text/markdown": text, "text/plain": text.replace("`", "")},
        "metadata": {PLACEHOLDER: True},
    }


def replace_widget_views(path) -> bool:
    """Replace every widget-view output of the notebook at `path` by its placeholder, in place;
    return whether anything changed."""
    nb = read_notebook(path)
    changed = False
    for cell in nb["cells"]:
        outputs = cell.get("outputs", [])
        kept = [out for out in outputs if WIDGET_VIEW not in out.get("data", {})]
        if len(kept) != len(outputs):
            source = "".join(cell["source"])
            # an explorer's widget gets its placeholder; a progress bar (lnlib.book.tools.progress)
            # goes
            cell["outputs"] = kept + (
                [explorer_placeholder(source)] if EXPLORER_CELL.match(source) else []
            )
            changed = True
    if changed:
        write_notebook(path, nb)
    return changed


# --- cells the website removes stay folded in JupyterLab ------------------------------------------
# A code cell tagged ``remove-cell`` (the imports, the ``glue(...)`` lines) is not on the website;
# in JupyterLab its whole source showed above the prose. ``"jupyter": {"source_hidden": true}``
# is JupyterLab's own "collapsed input" flag (nbformat's documented cell metadata): the cell shows
# as one folded line, which a student can still open.

#: The tag of a cell the website removes.
REMOVE_CELL = "remove-cell"


def hide_removed_sources(path) -> bool:
    """Fold, in JupyterLab, the source of every code cell of the notebook at `path` tagged
    :data:`REMOVE_CELL`, in place; return whether anything changed."""
    nb = read_notebook(path)
    changed = False
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and REMOVE_CELL in cell["metadata"].get("tags", []):
            jupyter = cell["metadata"].setdefault("jupyter", {})
            if jupyter.get("source_hidden") is not True:
                jupyter["source_hidden"] = True
                changed = True
    if changed:
        write_notebook(path, nb)
    return changed


if __name__ == "__main__":
    for name in sys.argv[1:]:
        replace_widget_views(name)
        hide_removed_sources(name)
