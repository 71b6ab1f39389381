"""One voice on every claim: the "Check the claim" boxes agree with lnlib.book.factcheck.claims, and
they all live in the fact check (CONTRIBUTING.md, "A chapter", step 4).

Every markdown cell that opens a "Check the claim" box lists, in its metadata
``"claims"``, the keys of the claims it judges, in the order it judges them.
Each judgement is written ``**Verdict: <verdict>.**`` with a verdict of the
book's one vocabulary (:data:`lnlib.book.factcheck.claims.VERDICTS`). These tests fail if a
box judges a claim that the fact check's table does not hold, if a chapter's
verdict differs from the table's (so two chapters cannot disagree), if a claim
is judged in two chapters (each fact has one home), or if a box writes a
verdict in another vocabulary ("wrong", "half right", "derived", ...).
"""

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from lnlib.book.factcheck.claims import (
    CLAIMS,
    FACT_CHECK,
    VERDICTS,
    VERDICTS_TAG,
    claim,
    verdicts_markdown,
)

CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"
BOX_OPEN = "{admonition} Check the claim"
MARKER = re.compile(r"\*\*Verdict:\s*([^*]+?)\.\*\*")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
#: Words that start a verdict in some other vocabulary; a bold phrase starting with one must be a
#: canonical marker.
VERDICT_WORDS = (
    "verdict",
    "true",
    "false",
    "wrong",
    "right",
    "half",
    "partly",
    "derived",
    "supported",
    "incomplete",
    "not checkable",
    "too vague",
    "correct",
    "holds",
)


def notebooks():
    return sorted(CHAPTERS.glob("*.ipynb"))


def boxes():
    """(chapter, cell id, claim keys, box text) for every "Check the claim" box of the book."""
    found = []
    for path in notebooks():
        for cell in json.loads(path.read_text())["cells"]:
            text = "".join(cell["source"])
            if cell["cell_type"] != "markdown" or BOX_OPEN not in text:
                continue
            box = text[text.index(BOX_OPEN) :]
            box = box[: box.index("\n````", 1)] if "\n````" in box else box
            found.append(
                (path.stem, cell.get("id"), tuple(cell["metadata"].get("claims", ())), box)
            )
    return found


BOXES = boxes()


def judgements():
    """claim key -> {chapter: verdict written in that chapter's box}."""
    table = defaultdict(dict)
    for chapter, _, keys, box in BOXES:
        for key, verdict in zip(keys, MARKER.findall(box)):
            table[key].setdefault(chapter, set()).add(verdict.strip().lower())
    return table


def test_the_book_has_boxes():
    assert len(BOXES) >= 12, (
        f"found only {len(BOXES)} 'Check the claim' boxes; has the box syntax changed?"
    )


@pytest.mark.parametrize(
    "chapter, cell_id, keys, box", BOXES, ids=[f"{b[0]}:{b[1]}" for b in BOXES]
)
def test_box_judges_claims_of_the_table_with_their_verdicts(chapter, cell_id, keys, box):
    assert keys, (
        f"{chapter}, cell {cell_id}: a 'Check the claim' box must list the claims it judges in its "
        "metadata 'claims'"
    )
    known = {c.key for c in CLAIMS}
    missing = [k for k in keys if k not in known]
    assert not missing, (
        f"{chapter}, cell {cell_id} judges {missing}, which the fact check's table "
        "(lnlib.book.factcheck.claims.CLAIMS) does not hold"
    )
    written = [v.strip().lower() for v in MARKER.findall(box)]
    assert len(written) == len(keys), (
        f"{chapter}, cell {cell_id}: {len(keys)} claims listed ({list(keys)}) but {len(written)} "
        f"verdicts written as '**Verdict: <verdict>.**' ({written})"
    )
    for key, verdict in zip(keys, written):
        assert verdict == claim(key).verdict, (
            f"{chapter}, cell {cell_id} gives {key!r} the verdict {verdict!r}; the fact check's "
            f"table says {claim(key).verdict!r}"
        )


@pytest.mark.parametrize(
    "chapter, cell_id, keys, box", BOXES, ids=[f"{b[0]}:{b[1]}" for b in BOXES]
)
def test_box_uses_only_the_books_verdict_vocabulary(chapter, cell_id, keys, box):
    for phrase in BOLD.findall(box):
        lowered = phrase.strip().lower()
        if lowered.startswith(VERDICT_WORDS) and not MARKER.fullmatch(f"**{phrase}**"):
            assert False, (
                f"{chapter}, cell {cell_id}: '**{phrase}**' reads as a verdict outside the "
                f"vocabulary {VERDICTS}; write '**Verdict: <verdict>.**'"
            )
        if MARKER.fullmatch(f"**{phrase}**"):
            verdict = MARKER.fullmatch(f"**{phrase}**").group(1).strip().lower()
            assert verdict in VERDICTS, (
                f"{chapter}, cell {cell_id}: verdict {verdict!r} is not one of {VERDICTS}"
            )


def test_no_two_chapters_give_one_claim_different_verdicts():
    clashes = {
        key: by_chapter
        for key, by_chapter in judgements().items()
        if len(set().union(*by_chapter.values())) > 1
    }
    assert not clashes, f"claims with different verdicts in different places: {clashes}"


def test_every_claim_has_one_home_and_is_judged_there():
    judged = judgements()
    for item in CLAIMS:
        where = sorted(judged.get(item.key, {}))
        assert where == [item.home], (
            f"claim {item.key!r} must be judged in exactly one chapter, its home {item.home!r}; it "
            f"is judged in {where}"
        )


def test_fact_check_sections_hold_their_claims():
    text = "\n".join(
        "".join(c["source"])
        for c in json.loads((CHAPTERS / f"{FACT_CHECK}.ipynb").read_text())["cells"]
    )
    for item in CLAIMS:
        if item.home == FACT_CHECK:
            assert f"({item.section})=" in text, (
                f"{item.key}: section label {item.section!r} is missing from {FACT_CHECK}"
            )


def test_the_verdict_table_is_the_claims():
    """The fact check shows its table in one markdown cell (its section folds every code cell),
    written from the claims."""
    cells = [
        c
        for c in json.loads((CHAPTERS / f"{FACT_CHECK}.ipynb").read_text())["cells"]
        if VERDICTS_TAG in c["metadata"].get("tags", [])
    ]
    assert len(cells) == 1 and cells[0]["cell_type"] == "markdown", (
        f"{FACT_CHECK} needs one markdown cell tagged {VERDICTS_TAG!r} for its verdict table"
    )
    assert "".join(cells[0]["source"]) == verdicts_markdown(), (
        f"{FACT_CHECK}: the verdict table differs from "
        "lnlib.book.factcheck.claims.verdicts_markdown(); run `make notebooks` "
        "(lnlib.book.tools.verdicts.fill_verdicts writes it)"
    )


def test_chapter_titles_are_read_from_the_notebooks():
    # one home: each title is its notebook's first heading (or the short form that starts it)
    from lnlib.book.tools.notebooks import chapter_titles

    titles = chapter_titles()
    assert list(titles) == [p.stem for p in notebooks()]
    for stem, title in titles.items():
        first = "".join(
            json.loads((CHAPTERS / f"{stem}.ipynb").read_text())["cells"][0]["source"]
        ).splitlines()[0]
        assert first.startswith(f"# {title}"), (
            f"{stem}: title {title!r} does not start its heading {first!r}"
        )
    assert titles["13_numerics"] == "Computing it right: numerics"  # a colon inside a title
    assert titles["17_fact_check"] == "Fact check"  # the short form of a heading with a subtitle


def test_a_short_title_must_start_the_heading(tmp_path):
    from lnlib.book.tools.notebooks import chapter_titles

    heading = {"cell_type": "markdown", "metadata": {}, "source": ["# Long title: subtitle"]}
    nb = {"cells": [heading], "metadata": {"lnbook": {"short_title": "Other"}}}
    (tmp_path / "01_x.ipynb").write_text(json.dumps(nb))
    with pytest.raises(ValueError, match="does not start its heading"):
        chapter_titles(tmp_path)


def test_section_titles_match_the_fact_check_headings():
    from lnlib.book.factcheck.claims import SECTION_TITLES

    text = "\n".join(
        "".join(c["source"])
        for c in json.loads((CHAPTERS / f"{FACT_CHECK}.ipynb").read_text())["cells"]
    )
    for label, title in SECTION_TITLES.items():
        assert f"({label})=\n### {title}" in text, (
            f"section {label!r} is not headed '### {title}' in {FACT_CHECK}"
        )


#: Words that open a verdict on a source's statement; "agrees" (a reproduction of a paper's finding)
#: is not one.
OUTSIDE_WORDS = tuple(w for w in VERDICT_WORDS if w not in ("holds", "correct"))


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.stem)
def test_no_verdict_is_given_outside_a_box(path):
    """A judgement written in running prose would escape the checks above: verdicts live in the
    boxes only."""
    for cell in json.loads(path.read_text())["cells"]:
        generated = {VERDICTS_TAG} & set(cell["metadata"].get("tags", []))
        if cell["cell_type"] != "markdown" or generated:  # written from the claims' records
            continue
        prose_only = re.sub(
            r"````\{admonition\} Check the claim.*?\n````", "", "".join(cell["source"]), flags=re.S
        )
        for phrase in BOLD.findall(prose_only):
            assert not phrase.strip().lower().startswith(OUTSIDE_WORDS), (
                f"{path.stem}, cell {cell.get('id')}: '**{phrase}**' gives a verdict outside a "
                "'Check the claim' box; judge the statement in its home's box and link to it here"
            )


# --- one home for the audit: the other chapters spend at most a short callout on the sources ------

#: Pages that may discuss the sources at length: the fact check and the page that introduces them.
AUDIT_PAGES = {FACT_CHECK, "sources"}
#: The most lines of text a chapter's callout on the sources may hold (its fence lines not counted).
CALLOUT_LINES = 3
#: How often a chapter may write "the documents" or "source documents" outside the fact check.
DOCUMENT_MENTIONS = 2
DOCUMENTS_WORDS = re.compile(r"\b(?:the|source) documents\b", re.I)
FACT_CHECK_LINK = re.compile(rf"\]\({FACT_CHECK}\.ipynb#([\w-]+)\)")


def chapters_outside_the_audit():
    return [p for p in notebooks() if p.stem not in AUDIT_PAGES]


def markdown_of(path):
    return [
        "".join(c["source"])
        for c in json.loads(path.read_text())["cells"]
        if c["cell_type"] == "markdown"
    ]


def fact_check_anchors() -> set[str]:
    """The heading anchors of the fact check, as MyST makes them (``heading_anchors``)."""
    from lnlib.book.factcheck.claims import _slug

    text = "\n".join(markdown_of(CHAPTERS / f"{FACT_CHECK}.ipynb"))
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def callouts(path):
    """The lines of text of each admonition or paragraph of `path` that links the fact check."""
    found = []
    for text in markdown_of(path):
        for block in re.split(r"\n\s*\n", text):
            if FACT_CHECK_LINK.search(block):
                found.append(
                    [line for line in block.splitlines() if not line.startswith(("```", ":class:"))]
                )
    return found


@pytest.mark.parametrize("path", chapters_outside_the_audit(), ids=lambda p: p.stem)
def test_a_chapter_spends_at_most_a_short_callout_on_the_sources(path):
    """Outside the fact check and the sources page: no box, at most one callout of three lines, two
    mentions."""
    text = "\n".join(markdown_of(path))
    assert BOX_OPEN not in text, f"{path.stem}: a 'Check the claim' box belongs in {FACT_CHECK}"
    assert "## What the documents say" not in text, (
        f"{path.stem}: the audit section moved to {FACT_CHECK}"
    )
    found = callouts(path)
    assert len(found) <= 1, (
        f"{path.stem}: {len(found)} passages link the fact check; one callout at most"
    )
    for lines in found:
        assert len(lines) <= CALLOUT_LINES, (
            f"{path.stem}: the callout on the sources has {len(lines)} lines of text; at most "
            f"{CALLOUT_LINES}"
        )
    mentions = len(DOCUMENTS_WORDS.findall(text))
    assert mentions <= DOCUMENT_MENTIONS, (
        f"{path.stem}: 'the documents' or 'source documents' {mentions} times; at most "
        f"{DOCUMENT_MENTIONS}"
    )


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.stem)
def test_links_to_the_fact_check_land_on_a_heading(path):
    anchors = fact_check_anchors()
    for text in markdown_of(path):
        for anchor in FACT_CHECK_LINK.findall(text):
            assert anchor in anchors, (
                f"{path.stem} links {FACT_CHECK}.ipynb#{anchor}, which no heading makes"
            )


def test_every_chapter_with_claims_on_its_topic_links_their_verdicts():
    """A chapter whose step the sources got wrong still points its readers to the verdicts."""
    from lnlib.book.factcheck.claims import SECTION_TITLES, section_anchor

    taught = set()
    for text in "\n".join(markdown_of(CHAPTERS / f"{FACT_CHECK}.ipynb")).split("\n### ")[1:]:
        link = re.search(r"Taught in \[[^\]]+\]\((\d\d_\w+)\.ipynb\)", text)
        if link:
            taught.add((link.group(1), _heading_anchor(text)))
    assert len(taught) >= 14, (
        f"the fact check's topic sections name the chapters that teach them: {taught}"
    )
    for stem, anchor in taught:
        assert anchor in {section_anchor(label) for label in SECTION_TITLES}
        links = FACT_CHECK_LINK.findall("\n".join(markdown_of(CHAPTERS / f"{stem}.ipynb")))
        assert anchor in links, f"{stem} does not link its verdicts, {FACT_CHECK}.ipynb#{anchor}"


def _heading_anchor(section_text: str) -> str:
    from lnlib.book.factcheck.claims import _slug

    return _slug(section_text.splitlines()[0])


def test_the_callout_counter_counts(tmp_path):
    long = {
        "cell_type": "markdown",
        "metadata": {},
        "source": [
            "```{note} A mistake\n",
            "one\n",
            "two\n",
            "three\n",
            f"four [verdict]({FACT_CHECK}.ipynb#epsilon)\n",
            "```",
        ],
    }
    path = tmp_path / "05_x.ipynb"
    path.write_text(json.dumps({"cells": [long]}))
    assert [len(lines) for lines in callouts(path)] == [4]
