"""The book's figure style: a colour-blind-safe palette and figure factories.

Every figure in the book is made through :func:`new_figure`, so all share one
look. The palette is Okabe & Ito's, which stays distinguishable under the
common colour-vision deficiencies.

Legibility on the website: at 1280 px the page shows an output image at most
about 670 px wide (the content column of the book's theme), and never below 75 %
of its natural width (``tests/browser/test_website.py``). So a figure is at most
:data:`COLUMN_WIDTH` inches wide, drawn at :data:`DPI`: 5.4 in x 150 dpi = 810 px
(about 840 px with the tight bounding box's margin), shown at >= 79 %, which puts
10 pt text at about 16 px on the page. Wider layouts are re-flowed into more rows
(:func:`panel_grid`), not shrunk. Figures have an opaque white background, so they
stay readable in the theme's dark mode.
"""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure

__all__ = ["PALETTE", "DPI", "COLUMN_WIDTH", "new_figure"]

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

#: Resolution of every figure, in dots per inch.
DPI = 150
#: Widest figure, in inches: DPI * COLUMN_WIDTH pixels fit the website's column at >= 75 % of natural size.
COLUMN_WIDTH = 5.4

BOOK_RC = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
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


def new_figure(nrows: int = 1, ncols: int = 1, *, figsize=(5.4, 3.0), managed: bool = True, squeeze: bool = True, **subplot_kw):
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
    squeeze : bool, default True
        As in ``Figure.subplots``: False always returns a 2-D array of Axes.
    **subplot_kw
        Passed to ``Figure.subplots`` (e.g. ``sharey=True``).

    Returns
    -------
    (Figure, Axes or array of Axes)

    Raises
    ------
    ValueError
        If a managed (page) figure is wider than :data:`COLUMN_WIDTH`: the website would shrink it, and its
        text with it. The explorers' own figures (``managed=False``) are sized by ``lnlib.widgets``.
    """
    if managed and figsize[0] > COLUMN_WIDTH + 1e-9:
        raise ValueError(f"figsize is {figsize[0]:g} in wide; the book's column holds {COLUMN_WIDTH:g} in: "
                         "lay the panels out in more rows rather than shrinking the text.")
    style = {"figsize": figsize, "layout": "constrained", "dpi": DPI, "facecolor": "white"}
    if managed:
        import matplotlib.pyplot as plt

        fig = plt.figure(**style)
    else:
        fig = Figure(**style)
    axes = fig.subplots(nrows, ncols, squeeze=squeeze, **subplot_kw)
    return fig, axes



def panel_grid(count: int, *, ncols: int = 2, panel=(3.0, 2.6), **subplot_kw):
    """`count` panels of one kind, laid out in rows of `ncols` that fit the book's column.

    Small multiples drawn as one long row would be shrunk by the website until their text is
    unreadable; this puts them in as many rows as needed and removes the unused cells.

    Parameters
    ----------
    count : int
        Number of panels.
    ncols : int, default 2
        Panels per row (fewer if `count` is smaller).
    panel : (float, float)
        Width and height of one panel in inches; the width is reduced so the row fits :data:`COLUMN_WIDTH`.
    **subplot_kw
        Passed to :func:`new_figure` (e.g. ``sharey=True``).

    Returns
    -------
    (Figure, ndarray of `count` Axes, in reading order)
    """
    ncols = max(1, min(ncols, count))
    nrows = -(-count // ncols)
    width = min(panel[0] * ncols, COLUMN_WIDTH)
    fig, axes = new_figure(nrows, ncols, figsize=(width, panel[1] * nrows), squeeze=False, **subplot_kw)
    axes = axes.ravel()
    for ax in axes[count:]:
        ax.remove()
    return fig, axes[:count]
