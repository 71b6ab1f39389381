"""Every link a chapter makes opens wherever the chapters are read (CONTRIBUTING.md, "Prose that
renders in both places").

A student may get the whole repository (`make lab` serves `chapters/`) or only a copy of
`chapters/`; the website builds the same files. So every relative link in a chapter's prose or
outputs (markdown links, the Sources page's included) must name a file inside `chapters/`, and its
`#anchor` must be a heading of that file. Links to the web (https://...) and within the page (#...)
are not files and are skipped.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)


def markdown_of(path: Path) -> str:
    """A notebook's markdown: its markdown cells and its markdown outputs; a .md file's text."""
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    texts = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            texts.append("".join(cell["source"]))
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("data", {}).get("text/markdown", "")))
    return "\n".join(texts)


def slug(heading: str) -> str:
    """The anchor MyST (and GitHub) gives a heading: lower case, punctuation dropped, spaces to
    hyphens."""
    text = re.sub(r"[`*_]|\$[^$]*\$", "", heading).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def relative_links(path: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(markdown_of(path))
        if not re.match(r"[a-z]+:", target) and not target.startswith("#")
    ]


def broken_links(folder: Path) -> list[str]:
    """Each relative link of each chapter in `folder` whose file or heading is missing there."""
    broken = []
    for page in sorted([*folder.glob("*.ipynb"), *folder.glob("*.md")]):
        for target in relative_links(page):
            file, _, anchor = unquote(target).partition("#")
            linked = (folder / file).resolve()
            if not linked.is_file() or folder.resolve() not in linked.parents:
                broken.append(f"{page.name} -> {target}: no such file in {folder.name}/")
            elif anchor and anchor not in {slug(h) for h in HEADING.findall(markdown_of(linked))}:
                broken.append(f"{page.name} -> {target}: no heading with that anchor")
    return broken


def test_chapters_link_to_something():
    assert sum(len(relative_links(p)) for p in CHAPTERS.glob("*.ipynb")) > 100


@pytest.mark.parametrize("layout", ["repository", "chapters alone"])
def test_every_link_of_every_chapter_opens(layout, tmp_path):
    folder = CHAPTERS
    if layout == "chapters alone":
        folder = tmp_path / "chapters"
        shutil.copytree(CHAPTERS, folder, ignore=shutil.ignore_patterns(".*"))
    assert broken_links(folder) == []


def test_a_link_out_of_the_chapters_folder_is_caught(tmp_path):
    folder = tmp_path / "chapters"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nSee [the API](../api.md) and [B](b.md#nowhere).\n")
    (folder / "b.md").write_text("# B\n")
    assert broken_links(folder) == [
        "a.md -> ../api.md: no such file in chapters/",
        "a.md -> b.md#nowhere: no heading with that anchor",
    ]


def test_every_link_of_the_intro_opens():
    """The intro page's reading paths link sections of the chapters: each file exists and each
    #anchor is one of its headings (the website resolves them by myst_heading_anchors)."""
    intro = ROOT / "intro.md"
    broken = []
    for target in relative_links(intro):
        file, _, anchor = unquote(target).partition("#")
        linked = ROOT / file
        if not linked.is_file():
            broken.append(f"intro.md -> {target}: no such file")
        elif anchor and anchor not in {slug(h) for h in HEADING.findall(markdown_of(linked))}:
            broken.append(f"intro.md -> {target}: no heading with that anchor")
    assert relative_links(intro)
    assert broken == []
