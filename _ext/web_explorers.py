"""The explorers on the website: mark the build, and load their front-end only where an explorer is.

``make book`` sets ``LNBOOK_WEBSITE=1`` before it executes the chapters; setting it here too covers
a chapter that the build itself executes (a cache miss), since the kernel inherits this environment.
With it set, each explorer displays as the precomputed HTML of :mod:`lnlib.book.explorers.web`. The
front-end, ``web_explorers_static/lnlib-explorers.js`` and ``.css``, is copied into the site's
``_static`` and linked at the end of the body of pages that hold an explorer, and of no other page.
(It does not live in the book's ``_static`` folder: Jupyter Book links every .js and .css file there
into every page.) The exercises' answer boxes get ``lnlib-exercises.js`` and ``.css`` the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

MARKER = 'class="lnlib-web-explorer"'
EXERCISE_MARKER = 'class="lnlib-exercise"'  # an exercise's answer box (lnlib/book/exercises/web.py)
STATIC = Path(__file__).with_name("web_explorers_static")


def add_static_path(app, config):
    config.html_static_path.append(str(STATIC))


def add_assets(app, pagename, templatename, context, doctree):
    body = context.get("body", "")
    pathto = context["pathto"]
    for marker, name in ((MARKER, "lnlib-explorers"), (EXERCISE_MARKER, "lnlib-exercises")):
        if marker in body:
            body += (
                f'<link rel="stylesheet" href="{pathto(f"_static/{name}.css", 1)}">'
                f'<script defer src="{pathto(f"_static/{name}.js", 1)}"></script>'
            )
    context["body"] = body


def setup(app):
    os.environ["LNBOOK_WEBSITE"] = "1"
    app.connect("config-inited", add_static_path)
    app.connect("html-page-context", add_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
