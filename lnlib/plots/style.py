"""The book's figure style: a colour-blind-safe palette and figure factories.

Every figure in the book is made through :func:`new_figure`, so all share one
look. The palette is Okabe & Ito's, which stays distinguishable under the
common colour-vision deficiencies.
"""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure

__all__ = ["PALETTE", "new_figure"]

#: Okabe-Ito colours by role, so every chapter uses the same colour for the same thing.
PALETTE = {
    "input": "#0072B2",      # blue: the raw input x
    "mean": "#D55E00",       # vermillion: the mean
    "positive": "#009E73",   # bluish green: above the mean / positive
    "negative": "#CC79A7",   # reddish purple: below the mean / negative
    "output": "#E69F00",     # orange: the output y or x-hat
    "reference": "#56B4E9",  # sky blue: a second curve, a reference
    "neutral": "#000000",    # black: axes, guides
    "highlight": "#F0E442",  # yellow: a highlighted region
}

BOOK_RC = {
    "figure.dpi": 80,
    "savefig.dpi": 80,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "axes.prop_cycle": matplotlib.cycler(color=[PALETTE[k] for k in ("input", "mean", "positive", "negative", "output", "reference")]),
}
matplotlib.rcParams.update(BOOK_RC)


def new_figure(nrows: int = 1, ncols: int = 1, *, figsize=(6.4, 3.2), managed: bool = True, **subplot_kw):
    """Make a figure and its axes in the book's style.

    Parameters
    ----------
    nrows, ncols : int
        The grid of axes.
    figsize : (float, float)
        Width and height in inches.
    managed : bool, default True
        True: a pyplot figure, shown in a notebook by ``plt.show()``.
        False: a free-standing Figure that pyplot never displays, for the
        explorers, which render it themselves (:class:`lnlib.plots.render.FastRenderer`).
    **subplot_kw
        Passed to ``Figure.subplots`` (e.g. ``sharey=True``).

    Returns
    -------
    (Figure, Axes or array of Axes)
    """
    if managed:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=figsize, layout="constrained")
    else:
        fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=True, **subplot_kw)
    return fig, axes

