"""Every verdict of the fact check is linked from the chapter that covers its topic (issue: cross-links)."""

import json
import re
from pathlib import Path

import pytest

from lnlib.claims import CLAIMS

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
LINKED = sorted({(claim.key, chapter) for claim in CLAIMS for chapter in claim.chapters if chapter != "13_fact_check"})


def heading_anchor(label: str) -> str:
    """The slug MyST gives the heading that follows the label (myst_heading_anchors), which links use."""
    heading = re.search(rf"\({label}\)=\n#+ (.+)", markdown_of("13_fact_check")).group(1)
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def markdown_of(chapter: str) -> str:
    cells = json.loads((CHAPTERS / f"{chapter}.ipynb").read_text())["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


@pytest.mark.parametrize("key, chapter", LINKED)
def test_chapter_links_the_claims_verdict(key, chapter):
    claim = next(c for c in CLAIMS if c.key == key)
    text = markdown_of(chapter)
    assert f"“{claim.quote}”" in text and f"(13_fact_check.ipynb#{heading_anchor(claim.section)})" in text, (
        f"{chapter} covers the claim {key!r} but does not link its verdict in the fact check"
    )
