"""What to use today's practitioner's path is walkable: each stop it lists opens with a line that
names its number and links the next stop, in the list's order (learner B, 2026-11-29: "the path is
the real product for my team, but it is only a list of links in a callout")."""

import re

from lnlib.book.tools.notebooks import PATH_STOPS
from tests.book.test_links import CHAPTERS, HEADING, LINK, markdown_of, slug

PAGE = CHAPTERS / "what_to_use_today.md"
SIGNPOST = re.compile(
    r"^\*The practitioner's path, stop (\d+) of (\d+)"
    r"(?:, after \[[^\]]*\]\(([^)]*)\))?[;,] (.*)\*$",
    re.M,
)


def stops() -> list[tuple[str, str]]:
    """(file, anchor) of each stop the path's numbered list links, in order; stop 1 is the page."""
    text = PAGE.read_text(encoding="utf-8")
    box = text[text.index("A practitioner's path through the book") :]
    box = box[: box.index("\n```\n")]
    items = re.split(r"^\d+\. ", box, flags=re.M)[1:]
    found = [("what_to_use_today.md", "")]
    for item in items[1:]:
        file, _, anchor = LINK.search(item).group(1).partition("#")
        found.append((file, anchor))
    return found


def signposts(file: str, after: bool = False) -> list[tuple]:
    """(stop, of, section anchor, next link) of each signpost in `file`: the anchor of the heading
    above it ("" before the first heading); with `after`, the link to the stop before it too (or
    None)."""
    text = markdown_of(CHAPTERS / file)
    found = []
    for match in SIGNPOST.finditer(text):
        headings = HEADING.findall(text[: match.start()])  # the first is the page's title
        anchor = "" if len(headings) <= 1 else slug(headings[-1])
        link = LINK.search(match.group(4)).group(1)
        post = (int(match.group(1)), int(match.group(2)), anchor, link)
        found.append((*post, match.group(3)) if after else post)
    return found


def test_a_chapters_first_stop_links_the_stop_before_it():
    """Learner B (2026-11-30): in the view the footer's "previous" led to the book's previous
    chapter, one the path skips. A chapter's first stop names the stop before it (path-view.js
    points the footer there); its other stops follow theirs on the same page."""
    path = stops()
    for file in dict.fromkeys(file for file, _ in path[1:]):
        posts = signposts(file, after=True)
        first, *rest = posts
        before_file, before_anchor = path[first[0] - 2]
        target_file, _, target_anchor = first[4].partition("#")
        assert (target_file, target_anchor) == (before_file, before_anchor), (file, first)
        assert all(post[4] is None for post in rest), (file, rest)


def test_the_path_lists_twelve_stops_as_the_chapters_lines_name_them():
    """PATH_STOPS, from which each chapter's line under its title names the stops in it, are the
    tip box's stops."""
    assert len(stops()) == 12
    assert stops()[1:] == [(file, anchor) for file, anchor, _ in PATH_STOPS]


def test_each_stop_opens_with_its_number_and_links_the_next():
    path = stops()
    for k, (file, anchor) in enumerate(path[1:], start=2):
        posts = [p for p in signposts(file) if p[0] == k]
        assert len(posts) == 1, (k, file, posts)
        stop, of, section, link = posts[0]
        assert of == len(path) and section == anchor, (k, file, section, anchor)
        following = path[k] if k < len(path) else ("what_to_use_today.md", "")
        target_file, _, target_anchor = link.partition("#")
        assert (target_file or file) == following[0], (k, link, following)
        if k < len(path):
            assert target_anchor == following[1], (k, link, following)


def test_no_chapter_has_a_signpost_the_path_does_not_list():
    listed = {k for k in range(2, len(stops()) + 1)}
    seen = [p[0] for page in CHAPTERS.glob("*.ipynb") for p in signposts(page.name)]
    assert sorted(seen) == sorted(listed)


def test_the_path_page_states_the_minutes_the_chapters_lines_add_up_to():
    """Learner B (2026-11-30): the page said "about an hour and a half" where the chapters' lines
    add up to 35 minutes. `make notebooks` writes the page's sentence from the same counts."""
    from lnlib.book.tools.course import (
        PATH_PAGE,
        path_minutes,
        path_page_minutes,
        path_page_sentence,
    )

    page = (CHAPTERS / PATH_PAGE).read_text(encoding="utf-8")
    assert f"<!--time-->{path_page_sentence(CHAPTERS)}<!--/time-->" in page, "run `make notebooks`"
    on_page, in_chapters = path_page_minutes(CHAPTERS)
    lines = sum(path_minutes(CHAPTERS / name) for name in sorted({f for f, _, _ in PATH_STOPS}))
    assert in_chapters == lines  # learner B48: "25 in the chapters" where the lines said 28
    assert 5 <= on_page < 60
