"""Accessibility fixes to the markup of the theme and extensions (WCAG 2.1 AA).

axe-core (tests/browser/test_accessibility.py) found these in what the book's toolchain writes, on
every page or every page of a kind; each is fixed here once, for all pages, and each names what it
works around:

1. pydata-sphinx-theme 0.17.1 (under sphinx-book-theme 1.3.0): the search field's
   ``aria-label="Search"`` hides its visible text "Search Ctrl+K" (WCAG 2.5.3 Label in Name, axe
   label-content-name-mismatch), and the colour-mode button's icons carry titles ("Light", "Dark")
   that become its visible name while its label says "Color mode". ``accessibility_templates/``
   overrides the two components: the search field is named by its text, the icons are hidden from
   assistive technology and the button's label names the mode it is in (``accessibility.js`` keeps
   it current).
2. myst-nb 1.4.0 (``visit_HideCellInput``): a hidden code cell's ``<summary aria-label="Toggle
   hidden content">`` hides its visible "Show code cell source". The aria-label is dropped: the
   summary is named by its text, which ``code_toggles.py`` makes say what the cell hides ("Show the
   code for Fig. 16").
3. docutils 0.21 (``visit_citation``) wraps citations in ``<div role="list">`` and gives each entry
   the deprecated ``role="doc-biblioentry"``: a list without list items (axe aria-required-children,
   critical). Each entry becomes a ``role="listitem"``.
4. Sphinx 7.4 writes a multi-line signature's parameters (``maximum_signature_line_length``) as
   ``<dd>`` in a ``<dl>`` with no ``<dt>`` (axe definition-list). They become ``<div
   class="sig-param-line">`` in a ``<div class="sig-param-lines">``, laid out as before
   (accessibility.css).
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).parent
HIDDEN_CELL_SUMMARY = '<summary aria-label="Toggle hidden content">'
SIGNATURE_PARAMETERS = re.compile(
    r'(<span class="sig-paren">\(</span>\s*)<dl>(.*?)</dl>(\s*<span class="sig-paren">\))', re.S
)


def _signature_parameters(match: re.Match) -> str:
    lines = (
        match.group(2).replace("<dd>", '<div class="sig-param-line">').replace("</dd>", "</div>")
    )
    return f'{match.group(1)}<div class="sig-param-lines">{lines}</div>{match.group(3)}'


def fix_body(body: str) -> str:
    body = body.replace(HIDDEN_CELL_SUMMARY, "<summary>")
    body = body.replace('role="doc-biblioentry"', 'role="listitem"')
    return SIGNATURE_PARAMETERS.sub(_signature_parameters, body)


def fix_page(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = fix_body(context["body"])


def add_paths(app, config):
    config.templates_path.insert(0, str(HERE / "accessibility_templates"))
    config.html_static_path.append(str(HERE / "accessibility_static"))


def setup(app):
    app.connect("config-inited", add_paths)
    app.connect("html-page-context", fix_page)
    app.add_css_file("accessibility.css")
    app.add_js_file("accessibility.js")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
