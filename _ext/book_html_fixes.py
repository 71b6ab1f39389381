"""Fixes to the HTML that Jupyter Book 1.x and its theme produce: a clean console, nothing clipped.

1. Jupyter Book registers sphinx-thebe's and sphinx-togglebutton's inline scripts twice; the second
   ``const THEBE_JS_URL`` is a JavaScript SyntaxError on every page. We drop exact duplicate
   scripts.
2. On a reader's first visit (empty localStorage) pydata-sphinx-theme logs "Got invalid theme mode"
   (pydata/pydata-sphinx-theme#1635): its head script sets an empty mode. ``theme-mode.js`` sets the
   default instead, before the theme reads it.
3. ``book-layout.css``: 80-column code and output fit the content column at 1280 px, API signatures
   wrap on a phone, and display math scrolls in its own box rather than widening the page.
4. The page's "Contents" column lists second-level headings too (``show_toc_level``: a long chapter
   such as 09 is easier to move around in); Jupyter Book 1.x has no key for it in _config.yml.

The browser tests (tests/browser) fail on any console error, so a regression here is caught.
"""

from __future__ import annotations


def _script_key(script):
    attributes = getattr(script, "attributes", {}) or {}
    filename = getattr(script, "filename", script) or ""  # inline scripts come with None or ""
    return str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items()))


def drop_duplicate_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def show_subsections_in_page_toc(app, config):
    config.html_theme_options = {**config.html_theme_options, "show_toc_level": 2}


def setup(app):
    app.connect("config-inited", show_subsections_in_page_toc)
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    app.add_js_file("theme-mode.js", priority=100)
    app.add_css_file("book-layout.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
