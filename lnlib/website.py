"""Whether the chapters are being executed for the website (``make book``), where nothing is interactive.

``make book`` (and ``_ext/web_explorers.py``) set ``LNBOOK_WEBSITE=1`` before executing the chapters;
explorers then display their precomputed website version (chapter "Explore" sections, CONTRIBUTING.md)
and exercise checks say how to try an answer instead of "Not answered yet".
"""

from __future__ import annotations

import os

__all__ = ["website_build"]


def website_build() -> bool:
    """True while ``make book`` executes the chapters for the website (it sets ``LNBOOK_WEBSITE=1``)."""
    return os.environ.get("LNBOOK_WEBSITE") == "1"
