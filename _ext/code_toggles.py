"""Folded code cells say what they hide (WCAG 2.4.6 Headings and Labels).

myst-nb 1.4.0 labels every folded cell's toggle with one generic text, "Show code cell source" (a
``hide-input`` cell), "Show code cell content" (``hide-cell``) or "Show code cell outputs"; a reader
cannot tell the documents' forensics from the plotting code. myst-nb reads a per-cell label from the
cell's metadata, ``{"mystnb": {"code_prompt_show": "...", "code_prompt_hide": "..."}}``
(``myst_nb/core/config.py`` ``code_prompt_show``; ``{type}`` in it becomes content/source/outputs),
and ``HideInputCells`` (``myst_nb/sphinx_.py``, a post-transform of priority 199) copies
``prompt_show``/``prompt_hide`` from the cell's container into the ``<summary>``.
:class:`LabelToggles` runs just before it and writes a label derived from the cell itself into the
container, unless the notebook's author set one in the metadata:

1. the cell's leading comment line (``# The documents' batch: ...``): "Show the code: The documents'
   batch: ...";
2. a figure cell: "Show the code for Fig. N" (the figure shows, its code folds), or "Show Fig. N and
   its code: <its caption's first words>" when the figure folds too;
3. otherwise the title of the nearest markdown before it, a dropdown's or a heading
   ("Show the code: The code behind the verdicts");
4. the generic label only when none of these exists (a cell with no markdown before it).

The summary keeps no ``aria-label`` (``accessibility.py``, item 2), so its accessible name is the
visible label. :func:`toggle_label` is a pure function of the notebook's cells, tested in
``tests/book/test_code_toggles.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

#: What a toggle folds, as myst-nb's hide tags name it, and how the label says it.
KINDS = {"source": "the code", "content": "the code and its output", "outputs": "the output"}
#: The generic labels (myst-nb's defaults), kept only for a cell nothing describes.
GENERIC_SHOW, GENERIC_HIDE = "Show code cell {type}", "Hide code cell {type}"
LONGEST = 90  # characters of a description; longer ones end at a word, with an ellipsis
CAPTION_LONGEST = 60  # characters of a caption's first clause
COMMENT = re.compile(r"#+\s*(?P<text>.*\S)")
TITLE = re.compile(
    r"^(?::{3,}|`{3,})\{(?:dropdown|admonition)\}\s+(?P<title>\S.*)$|^#{1,6}\s+(?P<heading>\S.*)$"
)
# Titles that say nothing about one cell: the book's repeated admonition titles.
UNINFORMATIVE = {"check the claim", "exercise", "solution", "note", "tip", "warning"}


#: Markup a title or comment may carry: code and math marks, and emphasis (``*``, or ``_`` at a
#: word's edge; an underscore inside a name, ``batch_norm``, ``W_1``, stays: the truth audit of
#: 2026-11-30 read "Batchnormbackward").
MARKUP = re.compile(r"[*`$]|(?<!\w)_+|_+(?!\w)")


def _capitalized(text: str) -> str:
    """A Latin first letter capitalized, unless the first word is a name from code (``lnlib``,
    ``batch_norm``, ``F.layer_norm``) or Greek (γ is not Γ)."""
    first = text.split(" ", 1)[0]
    if not text[:1].isascii() or re.search(r"[_.]", first) or first.startswith("lnlib"):
        return text
    return text[:1].upper() + text[1:]


def shorten(text: str, limit: int = LONGEST) -> str:
    """`text` without markup characters, cut at a word with an ellipsis if longer than `limit`,
    without a trailing comma or colon; its first letter capitalized (:func:`_capitalized`)."""
    text = _capitalized(MARKUP.sub("", text).strip().rstrip(".:,;"))
    text = re.sub(r"(?<=\w)'", "\u2019", text)  # the prose's apostrophe, as smartquotes
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def leading_comment(source: str) -> str | None:
    """The first line of the comment a cell opens with (before any code), or None."""
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        match = COMMENT.fullmatch(stripped)
        if not match or stripped.startswith(("#!", "# noqa", "# type:")):
            return None
        return match["text"]
    return None


def preceding_title(cells: list[dict], index: int) -> str | None:
    """The title of the nearest dropdown, admonition or heading written before cell `index`."""
    for cell in reversed(cells[:index]):
        if cell["cell_type"] != "markdown":
            continue
        for line in reversed("".join(cell["source"]).splitlines()):
            match = TITLE.match(line.strip())
            if match:
                title = match["title"] or match["heading"]
                if shorten(title).lower() not in UNINFORMATIVE:
                    return title
    return None


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def toggle_label(
    cells: list[dict], index: int, kind: str, figure_number: str | None = None
) -> tuple[str, str]:
    """The show and hide labels of the toggle that folds cell `index` of a notebook (see the
    module's docstring).

    Parameters
    ----------
    cells : list of dict
        The notebook's cells, as in its JSON.
    index : int
        The folded cell.
    kind : {"source", "content", "outputs"}
        What folds: the code only (``hide-input``), code and output (``hide-cell``), or the output.
    figure_number : str, optional
        The cell's figure's number on the page ("16"), if it makes a numbered figure.

    Returns
    -------
    (str, str)
        The label while folded and while open. The generic ``Show code cell {type}`` when nothing
        describes the cell.
    """
    cell = cells[index]
    what = KINDS[kind]
    comment = leading_comment(_source(cell))
    if comment:
        text = shorten(comment)
        return f"Show {what}: {text}", f"Hide {what}: {text}"
    if figure_number:
        if kind == "source":
            return (
                f"Show the code for Fig. {figure_number}",
                f"Hide the code for Fig. {figure_number}",
            )
        caption = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption", "")
        about = re.split(r"[:;.]\s", caption)[0]  # the caption's first clause
        about = f": {shorten(about, CAPTION_LONGEST)}" if about.strip() else ""
        return (
            f"Show Fig. {figure_number} and its code{about}",
            f"Hide Fig. {figure_number} and its code",
        )
    title = preceding_title(cells, index)
    if title:
        text = shorten(title)
        return f"Show {what}: {text}", f"Hide {what}: {text}"
    return GENERIC_SHOW, GENERIC_HIDE


def kind_of(container: nodes.Element) -> str:
    """What myst-nb's ``HideInputCells`` will fold in this cell's container (its ``{type}``)."""
    mode = container["hide_mode"]
    has_input = (
        bool(container.children) and container.children[0].get("nb_element") == "cell_code_source"
    )
    if not has_input:
        return "outputs"
    return {"all": "content", "input": "source"}.get(
        mode, "source" if mode == "input+output" else "outputs"
    )


class LabelToggles(SphinxPostTransform):
    """Give each folded cell's container a label derived from its cell, before myst-nb builds the
    toggle."""

    default_priority = 198  # myst-nb's HideInputCells runs at 199
    formats = ("html",)

    def run(self, **kwargs):
        cells = None
        for container in self.document.findall(nodes.container):
            if container.get("nb_element") != "cell_code" or not container.get("hide_mode"):
                continue
            metadata = container.get("cell_metadata") or {}
            if "code_prompt_show" in metadata.get("mystnb", {}):
                continue  # the author's own label
            if cells is None:
                path = Path(self.env.doc2path(self.env.docname))
                if path.suffix != ".ipynb":
                    return
                cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            show, hide = toggle_label(
                cells, container["cell_index"], kind_of(container), self.figure_number(container)
            )
            # myst-nb replaces "{type}" in the label; a derived label has none, the generic one
            # keeps it
            container["prompt_show"], container["prompt_hide"] = show, hide

    def figure_number(self, container) -> str | None:
        numbers = self.env.toc_fignumbers.get(self.env.docname, {}).get("figure", {})
        for figure in container.findall(nodes.figure):
            for figure_id in figure["ids"]:
                if figure_id in numbers:
                    return ".".join(map(str, numbers[figure_id]))
        return None


def setup(app):
    app.add_post_transform(LabelToggles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
