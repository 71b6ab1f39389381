"""Every folded code cell's toggle on the website says what it hides (WCAG 2.4.6;
_ext/code_toggles.py).

Build-free: the label function runs on the committed notebooks' cells. tests/browser/test_website.py
checks the built pages.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lnlib.book.tools.notebooks import CHAPTERS, read_notebook

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "_ext"))

from code_toggles import (  # noqa: E402
    GENERIC_SHOW,
    LONGEST,
    TITLE,
    leading_comment,
    shorten,
    toggle_label,
)

KIND = {"hide-input": "source", "hide-cell": "content", "hide-output": "outputs"}


def folded_cells():
    """(chapter, cells, index, kind) of every folded code cell of the committed chapters."""
    for path in sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb")):
        cells = read_notebook(path)["cells"]
        for index, cell in enumerate(cells):
            kinds = [KIND[tag] for tag in cell.get("metadata", {}).get("tags", []) if tag in KIND]
            if cell["cell_type"] == "code" and kinds:
                yield path.stem, cells, index, kinds[0]


def first_folded(predicate):
    """The first folded cell (chapter, cells, index, kind) whose cell satisfies `predicate`."""
    for found in folded_cells():
        if predicate(found[1][found[2]]):
            return found
    pytest.fail("no folded cell of the kind this test needs: the chapters changed, pick another")


def source(cell) -> str:
    return "".join(cell["source"])


def test_the_chapters_fold_cells():
    assert len(list(folded_cells())) > 20


def test_no_folded_cell_keeps_the_generic_label():
    generic = [
        f"{chapter} cell {index}"
        for chapter, cells, index, kind in folded_cells()
        if toggle_label(cells, index, kind)[0] == GENERIC_SHOW
    ]
    assert generic == [], (
        f"nothing describes these folded cells: give them a leading comment: {generic}"
    )


def test_show_and_hide_labels_name_the_same_thing():
    for chapter, cells, index, kind in folded_cells():
        show, hide = toggle_label(cells, index, kind)
        assert show.startswith("Show ") and hide.startswith("Hide "), (chapter, index)
        assert show.removeprefix("Show ") == hide.removeprefix("Hide "), (chapter, index)


def test_a_leading_comment_is_the_label():
    chapter, cells, index, kind = first_folded(
        lambda cell: source(cell).startswith("# ") and len(source(cell).splitlines()[0]) < LONGEST
    )
    comment = source(cells[index]).splitlines()[0][2:].strip().rstrip(".:")
    show, _ = toggle_label(cells, index, kind)
    assert show.replace("\u2019", "'").endswith(comment[0].upper() + comment[1:]), (
        chapter,
        index,
        show,
    )
    assert ("the code and its output" if kind == "content" else "the code") in show


def test_an_inline_comment_is_not_the_label():
    chapter, cells, index, kind = first_folded(
        lambda cell: "#" in source(cell).splitlines()[0] and not source(cell).startswith("#")
    )
    inline = source(cells[index]).splitlines()[0].split("#", 1)[1].strip()
    assert leading_comment(source(cells[index])) is None
    assert inline not in toggle_label(cells, index, kind)[0], (chapter, index)


def test_a_figure_cell_names_its_figure():
    chapter, cells, index, kind = first_folded(
        lambda cell: (
            "figure" in cell["metadata"].get("mystnb", {})
            and not source(cell).startswith("#")
            and "hide-input" in cell["metadata"]["tags"]
        )
    )
    assert toggle_label(cells, index, kind, "7") == (
        "Show the code for Fig. 7",
        "Hide the code for Fig. 7",
    )


def test_a_folded_figure_names_its_figure_and_its_caption():
    chapter, cells, index, kind = first_folded(
        lambda cell: (
            "figure" in cell["metadata"].get("mystnb", {})
            and not source(cell).startswith("#")
            and "hide-cell" in cell["metadata"]["tags"]
        )
    )
    caption = cells[index]["metadata"]["mystnb"]["figure"]["caption"]
    show, hide = toggle_label(cells, index, kind, "16")
    assert show.startswith("Show Fig. 16 and its code: ") and hide == "Hide Fig. 16 and its code"
    assert caption.startswith(show.removeprefix("Show Fig. 16 and its code: ").rstrip("…")), show


def test_without_a_comment_the_nearest_title_before_the_cell_describes_it():
    cells = [
        {"cell_type": "markdown", "source": ["## Explore\n"]},
        {
            "cell_type": "markdown",
            "source": [":::{dropdown} The code behind the verdicts\n", "Text.\n", ":::\n"],
        },
        {
            "cell_type": "markdown",
            "source": ["```{admonition} Check the claim\n", "Quote.\n", "```\n"],
        },
        {"cell_type": "code", "source": ["x = 1  # one\n"], "metadata": {}},
    ]
    assert toggle_label(cells, 3, "content")[0] == (
        "Show the code and its output: The code behind the verdicts"
    )
    assert (
        toggle_label(cells[3:], 0, "source")[0] == GENERIC_SHOW
    )  # nothing before it: the fallback


def test_long_descriptions_end_at_a_word():
    text = "Reproduce " + "the worked example of the documents " * 10
    short = shorten(text)
    assert len(short) <= LONGEST + 1 and short.endswith("…")
    assert text.startswith(short.removesuffix("…"))


def adjacent_folds():
    """(chapter, dropdown title, toggle label) of every folded code cell whose nearest visible cell
    above is a prose dropdown (cells the website removes do not count: the reader sees the two folds
    stacked)."""
    for chapter, cells, index, kind in folded_cells():
        above = index - 1
        while above >= 0 and "remove-cell" in cells[above].get("metadata", {}).get("tags", []):
            above -= 1
        if above < 0 or cells[above]["cell_type"] != "markdown":
            continue
        first = "".join(cells[above]["source"]).strip().splitlines()[0]
        match = TITLE.match(first)
        if match and match.group("title"):
            yield chapter, shorten(match.group("title")), toggle_label(cells, index, kind)[0]


def test_the_chapters_stack_folds():
    """The test below has something to check (chapters 07, 08 and 15 put code folds under
    dropdowns)."""
    assert len(list(adjacent_folds())) >= 3


@pytest.mark.parametrize(
    "chapter, title, label",
    [pytest.param(*fold) for fold in adjacent_folds()],
)
def test_a_fold_under_a_dropdown_does_not_repeat_its_title(chapter, title, label):
    """Two stacked folds with one title read as one thing said twice: the code's toggle says what
    the code holds, from its leading comment."""
    assert not label.endswith(title), f"{chapter}: {label!r} repeats the dropdown above it"


def test_names_from_code_keep_their_underscores_and_case():
    """The truth audit (2026-11-30) read "Batchnormbackward" and "F.layernorm" in labels, a
    dangling comma where a two-line comment was cut, and "Lnlib's"."""
    assert shorten("batch_norm_backward against LN's formula") == (
        "batch_norm_backward against LN\u2019s formula"
    )
    assert shorten("PyTorch's `F.layer_norm` on *the* same data") == (
        "PyTorch\u2019s F.layer_norm on the same data"
    )
    assert shorten("lnlib's norms") == "lnlib\u2019s norms"
    assert shorten("the closed form, in the normalized variables,") == (
        "The closed form, in the normalized variables"
    )
    assert shorten("_emphasis_ at a word's edge goes") == "Emphasis at a word\u2019s edge goes"
