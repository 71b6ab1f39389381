"""Figures for the book: pure functions, data in and Figure out.

Each chapter's figures live in a module named after the chapter; the style
(palette, figure factory, PNG rendering) in :mod:`lnlib.plots.style`.
"""

from .mean import MeanPanels, mean_companion, mean_figure
from .render import FastRenderer
from .style import PALETTE, new_figure

__all__ = ["PALETTE", "FastRenderer", "MeanPanels", "mean_companion", "mean_figure", "new_figure"]
