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
(:func:`panel_grid`), not shrunk. The explorers' figures follow the same rule. Figures have an
opaque white background, so they stay readable in the theme's dark mode.

On a phone (390 px) the column is about 350 px and a PNG's text cannot grow with the screen, so 10
pt text shows at about 7 px and the smallest text a figure may use (:data:`SMALLEST_FONT_PT`) at
about 5 px; there a line under such a figure says "Tap the figure to enlarge it", and a tap (or
Enter) shows it at :data:`PHONE_ZOOM` of its natural width in its own sideways-scrolling box
(``_static/figure-zoom.js``), which puts its smallest text at :data:`MIN_TEXT_PX` or more
(``tests/browser/test_website.py`` measures it); pinch-zoom works as everywhere.
:func:`layout_problems` finds what a reader would trip over: cut, colliding or data-covering text.
"""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = [
    "PALETTE",
    "COLOUR_NAMES",
    "GREYS",
    "DPI",
    "COLUMN_WIDTH",
    "PHONE_FIGURE_PX",
    "PHONE_MIN_TEXT_PX",
    "PHONE_WIDTH",
    "SMALLEST_FONT_PT",
    "MIN_TEXT_PX",
    "PHONE_ZOOM",
    "text_px",
    "phone_text_px",
    "new_figure",
    "panel_grid",
    "layout_problems",
]

#: Okabe-Ito colours by role, so every chapter uses the same colour for the same thing.
PALETTE = {
    "input": "#0072B2",  # blue: the raw input x
    "mean": "#D55E00",  # vermilion: the mean
    "positive": "#009E73",  # bluish green: above the mean / positive
    "negative": "#CC79A7",  # reddish purple: below the mean / negative
    "output": "#E69F00",  # orange: the output y or x-hat
    "reference": "#56B4E9",  # sky blue: a second curve, a reference
    "neutral": "#000000",  # black: axes, guides
    "highlight": "#F0E442",  # yellow: a highlighted region
}

#: Greys for areas that must read apart without hue (chapter "LayerNorm's family": blocks outside
#: the batch, then the two alternating shades of the other statistics sets), lightest first. Each is
#: at least 1.4 times darker than the one before in relative luminance contrast (WCAG's formula), so
#: neighbours stay distinct on a screen, in print and to any colour vision.
GREYS = ("#F7F7F7", "#CCCCCC", "#A0A0A0")

#: The word prose uses for each colour of :data:`PALETTE` (Okabe & Ito's names), so a sentence that
#: says "the orange star" points at what the figure draws in ``PALETTE["output"]``.
COLOUR_NAMES = {
    "input": "blue",
    "mean": "vermilion",
    "positive": "green",
    "negative": "purple",
    "output": "orange",
    "reference": "sky blue",
    "neutral": "black",
    "highlight": "yellow",
}

#: Resolution of every figure, in dots per inch.
DPI = 150
#: Widest figure, in inches: DPI * COLUMN_WIDTH pixels fit the website's column at >= 75 % of
#: natural size.
COLUMN_WIDTH = 5.4
#: How wide a phone (390 CSS px) shows a figure, in CSS px: the column less the page's margins.
PHONE_FIGURE_PX = 350
#: Smallest font size, in CSS px, a figure's text may shrink to on a phone (its body text is 16 px);
#: at :data:`COLUMN_WIDTH` that takes 12.2 pt, so a figure meant for phones is narrower instead.
PHONE_MIN_TEXT_PX = 11.0
#: Width, in inches, of a one-column figure that reads on a phone: 10-pt text shows at 12.8 CSS px.
PHONE_WIDTH = 3.8
#: Smallest font size, in points, of any text in a figure (:func:`layout_problems` reports smaller
#: text): the website's phone zoom (:data:`PHONE_ZOOM`) is sized so that this size reads.
SMALLEST_FONT_PT = 7.0
#: Smallest size, in CSS px, of a figure's text as the reader reads it on the website, zoomed if
#: need be.
MIN_TEXT_PX = 10.0
#: Fraction of its natural width at which a tap shows a figure on a phone
#: (``_static/figure-zoom.js``, ZOOM): :data:`SMALLEST_FONT_PT` at :data:`DPI` then shows at
#: ``7 / 72 * 150 * 0.75`` = 10.9 CSS px.
PHONE_ZOOM = 0.75

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
    "axes.prop_cycle": matplotlib.cycler(
        color=[PALETTE[k] for k in ("input", "mean", "positive", "negative", "output", "reference")]
    ),
}
matplotlib.rcParams.update(BOOK_RC)


def new_figure(
    nrows: int = 1,
    ncols: int = 1,
    *,
    figsize=(5.4, 3.0),
    managed: bool = True,
    squeeze: bool = True,
    **subplot_kw,
):
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
        explorers, which render it themselves (:class:`lnlib.book.figures.render.FastRenderer`).
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
        If a managed (page) figure is wider than :data:`COLUMN_WIDTH`: the website would shrink it,
        and its text with it. The explorers' own figures (``managed=False``) are sized by
        ``lnlib.book.explorers``.
    """
    if managed and figsize[0] > COLUMN_WIDTH + 1e-9:
        raise ValueError(
            f"figsize is {figsize[0]:g} in wide; the book's column holds {COLUMN_WIDTH:g} in: "
            "lay the panels out in more rows rather than shrinking the text."
        )
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
        Width and height of one panel in inches; the width is reduced so the row fits
        :data:`COLUMN_WIDTH`.
    **subplot_kw
        Passed to :func:`new_figure` (e.g. ``sharey=True``).

    Returns
    -------
    (Figure, ndarray of `count` Axes, in reading order)
    """
    ncols = max(1, min(ncols, count))
    nrows = -(-count // ncols)
    width = min(panel[0] * ncols, COLUMN_WIDTH)
    fig, axes = new_figure(
        nrows, ncols, figsize=(width, panel[1] * nrows), squeeze=False, **subplot_kw
    )
    axes = axes.ravel()
    for ax in axes[count:]:
        ax.remove()
    return fig, axes[:count]


def phone_text_px(fig) -> float:
    """The font size, in CSS px, of a figure's smallest drawn text when a phone shows it.

    A phone shows a figure :data:`PHONE_FIGURE_PX` wide (or at its natural size, if smaller), so
    the same point size reads smaller in a wider figure: fewer panels per row, not smaller text,
    is the cure. Compare with :data:`PHONE_MIN_TEXT_PX`.
    """
    fig.canvas.draw()
    hidden = _hidden_tick_labels(fig)
    sizes = [
        text.get_fontsize()
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip() and id(text) not in hidden
    ]
    natural = fig.get_figwidth() * DPI
    return min(sizes) / 72 * DPI * min(1.0, PHONE_FIGURE_PX / natural)


def text_px(font_pt: float, shown_px: float, natural_px: float) -> float:
    """How tall, in CSS px, text of `font_pt` points in a figure drawn at :data:`DPI` shows on a
    page that displays the figure's `natural_px`-wide PNG `shown_px` wide (the website's legibility
    rule)."""
    return font_pt / 72 * DPI * shown_px / natural_px


def _hidden_tick_labels(fig) -> set:
    """Tick labels matplotlib keeps but does not draw: those of ticks outside the axis's view
    interval."""
    import numpy as np

    hidden = set()
    for ax in fig.axes:
        if (
            not ax.axison and ax.name != "3d"
        ):  # set_axis_off(): no ticks, no axis labels (3-D axes draw their own)
            hidden |= {
                id(t)
                for t in (
                    *ax.get_xticklabels(which="both"),
                    *ax.get_yticklabels(which="both"),
                    ax.xaxis.label,
                    ax.yaxis.label,
                    ax.xaxis.offsetText,
                    ax.yaxis.offsetText,
                )
            }
            continue
        for axis in ax._axis_map.values() if hasattr(ax, "_axis_map") else (ax.xaxis, ax.yaxis):
            scale = (
                axis.get_transform()
            )  # compare in the axis's own scale (log axes span many decades)
            low, high = sorted(scale.transform(np.asarray(axis.get_view_interval(), dtype=float)))
            slack = 1e-9 * (high - low)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                where = scale.transform(np.array([tick.get_loc()], dtype=float))[0]
                if not low - slack <= where <= high + slack:
                    hidden |= {id(tick.label1), id(tick.label2)}
    return hidden


def _texts(fig) -> list:
    """Every drawn, non-empty text of `fig` (titles, labels, tick labels, legend entries,
    annotations)."""
    hidden = _hidden_tick_labels(fig)
    return [
        t
        for t in fig.findobj(Text)
        if t.get_visible()
        and t.get_text().strip()
        and id(t) not in hidden
        and (t.axes is None or t.axes.get_visible())
    ]


def _data_points(ax):
    """The display coordinates of what an axes draws: line vertices, scatter offsets, patch
    outlines."""
    import numpy as np

    points = [np.empty((0, 2))]
    for line in ax.lines:
        if line.get_visible():
            points.append(
                line.get_transform().transform(
                    np.asarray(line.get_xydata(), dtype=float).reshape(-1, 2)
                )
            )
    for collection in ax.collections:
        if collection.get_visible():
            offsets = np.asarray(collection.get_offsets(), dtype=float).reshape(-1, 2)
            points.append(collection.get_offset_transform().transform(offsets))
    for patch in ax.patches:
        if patch.get_visible():
            points.append(patch.get_transform().transform(patch.get_path().vertices))
    points = np.concatenate(points)
    return points[np.isfinite(points).all(axis=1)]


def layout_problems(fig, *, legends_over_data: bool = True) -> list[str]:
    """What a reader would find wrong in `fig`'s layout: cut, colliding or covering text.

    Draws the figure once and reports, in words: any text that reaches outside the figure (cut off
    on the page), any text smaller than :data:`SMALLEST_FONT_PT`, any two texts whose boxes overlap
    (titles running into each other, a row's labels into the next row's titles), and, if
    `legends_over_data`, any legend drawn over the data of its axes. Used by the tests of every
    chapter's figures and explorers (``tests/book/test_figure_layout.py``).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    legends_over_data : bool, default True
        Also report a legend inside an axes that covers a data point of that axes.

    Returns
    -------
    list of str
        Empty when the layout is clean.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    frame = fig.bbox
    problems = []
    boxes = []
    for text in _texts(fig):
        box = text.get_window_extent(renderer)
        if box.width == 0 or box.height == 0:
            continue
        label = repr(text.get_text()[:40])
        if text.get_fontsize() < SMALLEST_FONT_PT - 1e-9:
            problems.append(
                f"text {label} is {text.get_fontsize():g} pt, smaller than {SMALLEST_FONT_PT:g} pt "
                "(a phone's zoom would not make it readable)"
            )
        if (
            box.x0 < frame.x0 - 1
            or box.x1 > frame.x1 + 1
            or box.y0 < frame.y0 - 1
            or box.y1 > frame.y1 + 1
        ):
            problems.append(f"text {label} is cut by the figure's edge")
        boxes.append((label, box.padded(-0.5)))
    for i, (label_a, a) in enumerate(boxes):
        for label_b, b in boxes[i + 1 :]:
            if a.overlaps(b):
                problems.append(f"texts {label_a} and {label_b} overlap")
    if legends_over_data:
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None or not legend.get_visible():
                continue
            box = legend.get_window_extent(renderer)
            if not ax.bbox.overlaps(box):
                continue  # a legend placed outside its axes covers nothing
            points = _data_points(ax)
            inside = (
                (points[:, 0] > box.x0)
                & (points[:, 0] < box.x1)
                & (points[:, 1] > box.y0)
                & (points[:, 1] < box.y1)
            )
            if inside.any():
                problems.append(
                    f"the legend of the axes titled {ax.get_title()[:40]!r} covers its data"
                )
    return problems
