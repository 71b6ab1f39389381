"""Every verdict of the fact check is linked from the chapter that covers its topic (issue: cross-links)."""

import json
from pathlib import Path

import pytest

from lnlib.claims import CLAIMS

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
LINKED = sorted({(claim.key, chapter) for claim in CLAIMS for chapter in claim.chapters if chapter != "13_fact_check"})


def markdown_of(chapter: str) -> str:
    cells = json.loads((CHAPTERS / f"{chapter}.ipynb").read_text())["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


@pytest.mark.parametrize("key, chapter", LINKED)
def test_chapter_links_the_claims_verdict(key, chapter):
    claim = next(c for c in CLAIMS if c.key == key)
    text = markdown_of(chapter)
    assert f"“{claim.quote}”" in text and f"{{ref}}`{claim.section}`" in text, (
        f"{chapter} covers the claim {key!r} but does not link its verdict in the fact check"
    )
