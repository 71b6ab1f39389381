"""Turn the notebooks' prose markers into MyST roles at source-read time, so the website shows this
build's values.

A chapter's markdown carries what JupyterLab shows between two HTML comments (see
``lnlib/book/tools/prose.py`` and CONTRIBUTING.md):

- ``<!--glue:key-->2.5<!--/glue-->`` becomes ``{glue:text}`key```: the number glued by this build's
  own execution of the chapter, never the literal committed in the notebook;
- ``<!--cite:key1,key2-->Ba et al. (2016)<!--/cite-->`` becomes ``{cite}`key1,key2```, so the
  website keeps sphinxcontrib-bibtex's citation, while JupyterLab, which cannot resolve a citation,
  shows the author and year;
- ``<!--citet:key-->Xu et al. [2019]<!--/citet-->`` becomes ``{cite:t}`key```, the textual form, for
  a sentence that names the authors ("Xu et al. [2019] show ...") without repeating them.

myst-nb parses the text that ``source-read`` hands on (Sphinx's reader emits the event, then passes
the modified text to the parser; myst-nb reads the notebook from that string and takes only the code
cells' outputs from the execution cache), so rewriting the raw ``.ipynb`` JSON here is enough.
"""

from __future__ import annotations

import re

MARKER = re.compile(r"<!--(glue|cite|citet):([\w,-]+)-->.*?<!--/\1-->")
ROLE = {"glue": "glue:text", "cite": "cite", "citet": "cite:t"}


def to_roles(text: str) -> str:
    """Replace every marker in ``text`` by its MyST role (the literal between the comments is
    dropped)."""
    return MARKER.sub(lambda m: f"{{{ROLE[m.group(1)]}}}`{m.group(2)}`", text)


def rewrite_markers(app, docname, source):
    source[0] = to_roles(source[0])


def setup(app):
    app.connect("source-read", rewrite_markers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
