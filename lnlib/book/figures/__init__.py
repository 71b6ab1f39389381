"""Figures for the book: pure functions, data in and Figure out.

Each chapter's figures live in a module named after the chapter (``lnlib.book.figures.mean``, ...),
imported from there; the shared style (palette, figure factory) is in
:mod:`lnlib.book.figures.style` and fast explorer rendering in :mod:`lnlib.book.figures.render`.
"""

from .render import FastRenderer
from .style import PALETTE, new_figure

__all__ = ["PALETTE", "FastRenderer", "new_figure"]
