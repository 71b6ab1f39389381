"""The printable edition (ARCHITECTURE.md, "The course and the PDF"): `make pdf` writes the whole
book as one PDF.

`make test-pdf` builds it and runs these tests; in `make test` they skip unless the PDF has been
built (a few minutes after `make book`, about 10 from a fresh clone: instructors.md). Its text, as
pypdf extracts it, holds every chapter's title and every page of the contents, and no raw markup:
no MyST role or directive, no glue marker, no TeX left untypeset. The contents give each entry's
page, and that page, numbered so in its footer, opens with the entry's title.
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
def pages() -> list[str]:
    """Each page's text, as pypdf extracts it, ligatures (ﬁ) as letters."""
    if not PDF.exists():
        pytest.skip(f"{PDF} is not built: `make test-pdf` builds the PDF and runs these tests")
    reader = pypdf.PdfReader(PDF)
    return [unicodedata.normalize("NFKC", page.extract_text() or "") for page in reader.pages]


@pytest.fixture(scope="module")
def text(pages):
    return len(pages), "\n".join(pages)


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


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_contents_give_the_page_each_chapter_starts_on(pages):
    # the contents: the sheets from "Contents" to the introduction, one entry a line, "title page"
    first = next(i for i, page in enumerate(pages) if page.lstrip().startswith("Contents"))
    contents = []
    for page in pages[first:]:
        contents.append(page)
        if "Bibliography" in page:
            break
    entries = {}
    for line in "\n".join(contents).splitlines():
        found = re.fullmatch(r"(.+?)\s+(\d+)", line.strip())
        if found and not found.group(1).endswith("/"):  # not the footer, "2 / 408"
            entries[flat(found.group(1))] = int(found.group(2))
    expected = ["Introduction", *(flat(title) for title in titles())]
    assert [title for title in expected if title not in entries] == [], (
        f"entries without a page number in the contents: {entries}"
    )
    numbers = [entries[title] for title in expected]
    assert numbers == sorted(numbers) and numbers[0] > first + 1, numbers
    headings = {"Introduction": "LayerNorm, worked out"}
    wrong = []
    for title in expected:
        number = entries[title]
        page = pages[number - 1]
        # pypdf reads the bibliography's labels ([1] [2] ...) before the page's heading
        text = re.sub(r"^(\[\d+\] )+", "", flat(page))
        opens = text[: len(headings.get(title, title))]
        footer = f"{number} / {len(pages)}"
        if opens != headings.get(title, title) or footer not in page:
            wrong.append((title, number, flat(page)[:60]))
    assert wrong == [], f"the contents' page numbers do not match the pages: {wrong}"
