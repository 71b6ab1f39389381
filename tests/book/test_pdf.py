"""The printable edition (ARCHITECTURE.md, "The course and the PDF"): `make pdf` writes the whole
book as one PDF.

`make test-pdf` builds it and runs these tests; in `make test` they skip unless the PDF has been
built (the single-page build and Chromium's print take about two minutes). Its text, as pypdf
extracts it, holds every chapter's title and every page of the contents, and no raw markup: no MyST
role or directive, no glue marker, no TeX left untypeset.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PDF = Path(os.environ.get("LNBOOK_PDF", ROOT / "_build" / "pdf" / "book.pdf"))
RAW = [
    "{glue",
    "{doc}",
    "{cite}",
    "{ref}",
    "```{",
    ":::{",
    "<!--",
    "\\frac",
    "\\sqrt",
    "\\gamma",
    "$$",
]

pypdf = pytest.importorskip(
    "pypdf", reason="pypdf is not installed: run `make test`, which installs it"
)


@pytest.fixture(scope="module")
def text():
    if not PDF.exists():
        pytest.skip(f"{PDF} is not built: `make test-pdf` builds the PDF and runs these tests")
    reader = pypdf.PdfReader(PDF)
    words = "\n".join(page.extract_text() or "" for page in reader.pages)
    return len(reader.pages), unicodedata.normalize("NFKC", words)  # ligatures (ﬁ) as letters


def titles() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [entry["file"] for part in toc["parts"] for entry in part["chapters"]]
    found = []
    for page in pages:
        notebook, markdown = ROOT / f"{page}.ipynb", ROOT / f"{page}.md"
        if notebook.exists():
            text = "".join(json.loads(notebook.read_text())["cells"][0]["source"])
        else:
            text = markdown.read_text(encoding="utf-8")
        title = re.search(r"^# (.+)$", text, re.M).group(1).strip()
        found.append(unicodedata.normalize("NFKC", title))  # as the PDF's text is read
    return found


def test_the_pdf_holds_the_whole_book(text):
    pages, words = text
    flat = " ".join(words.split())
    assert pages > 100, f"{PDF}: only {pages} pages"
    assert "LayerNorm, worked out" in flat and "Contents" in flat
    missing = [title for title in titles() if " ".join(title.split()) not in flat]
    assert missing == [], f"chapter titles not found in the PDF: {missing}"


def test_the_pdf_shows_no_raw_markup(text):
    _, words = text
    found = [raw for raw in RAW if raw in words]
    assert found == [], f"raw markup in the PDF's text: {found}"
