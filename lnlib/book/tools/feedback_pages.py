"""The course's feedback pages as a student reads them: MyST's folded boxes and admonitions as HTML.

nbgrader's ``generate_feedback`` renders each graded notebook with nbconvert, whose Markdown knows
no MyST: a chapter's ``:::{dropdown}`` and ```` ```{admonition} ```` blocks showed as source text
(the instructor review, 2026-11-30). :class:`MystAsHtml`, one of the feedback's preprocessors in the
course's ``nbgrader_config.py`` (lnlib.book.tools.course), writes them as HTML that any Markdown
renderer shows: a dropdown as ``<details>``, an admonition as a quoted block under its title.
"""

from __future__ import annotations

import re

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

__all__ = ["MystAsHtml", "plain_markdown"]

#: A folded box: ``:::{dropdown} Title`` to its closing ``:::``.
DROPDOWN = re.compile(
    r"^:::\{dropdown\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^:::[ \t]*$", re.M | re.S
)
#: An admonition: its opening fence and title, an optional ``:class:`` line, to its closing fence.
ADMONITION = re.compile(
    r"^```\{admonition\}[ \t]*(?P<title>[^\n]*)\n(?::class:[^\n]*\n)?(?P<body>.*?)^```[ \t]*$",
    re.M | re.S,
)


def plain_markdown(text: str) -> str:
    """`text` with each MyST dropdown as an HTML ``<details>`` box and each admonition as a quoted
    block with its title in bold.

    Examples
    --------
    >>> print(plain_markdown(":::{dropdown} Why\\nBecause.\\n:::"))
    <details><summary>Why</summary>
    <BLANKLINE>
    Because.
    <BLANKLINE>
    </details>
    >>> print(plain_markdown("```{admonition} In practice\\n:class: tip\\nSave rstd.\\n```"))
    > **In practice**
    >
    > Save rstd.
    """
    text = DROPDOWN.sub(
        lambda m: f"<details><summary>{m['title']}</summary>\n\n{m['body'].strip()}\n\n</details>",
        text,
    )
    return ADMONITION.sub(_quoted, text)


def _quoted(match: re.Match) -> str:
    """An admonition as a Markdown quote under its bold title."""
    lines = match["body"].strip().splitlines()
    return "\n".join([f"> **{match['title']}**", ">", *(f"> {line}".rstrip() for line in lines)])


class MystAsHtml(Preprocessor):
    """nbconvert preprocessor: each Markdown cell through :func:`plain_markdown` (on by default:
    nbgrader registers its converters' preprocessors without enabling them)."""

    enabled = Bool(True).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            cell.source = plain_markdown(cell.source)
        return cell, resources
