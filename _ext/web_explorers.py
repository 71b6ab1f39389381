"""The explorers on the website: mark the build, and load their front-end only where an explorer is.

``make book`` sets ``LNBOOK_WEBSITE=1`` before it executes the chapters; setting it here too covers a
chapter that the build itself executes (a cache miss), since the kernel inherits this environment.
With it set, each explorer displays as the precomputed HTML of :mod:`lnlib.widgets.web`.
``lnlib-explorers.js`` and ``.css`` are added only to pages whose body holds an explorer
(Sphinx >= 3.5: ``add_js_file`` inside ``html-page-context`` adds to that page alone).
"""

from __future__ import annotations

import os

MARKER = 'class="lnlib-web-explorer"'


def add_assets(app, pagename, templatename, context, doctree):
    if MARKER in context.get("body", ""):
        app.add_css_file("lnlib-explorers.css")
        app.add_js_file("lnlib-explorers.js", loading_method="defer")


def setup(app):
    os.environ["LNBOOK_WEBSITE"] = "1"
    app.connect("html-page-context", add_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
