"""Figures for the chapter "The variance": deviations from the mean, drawn as squares whose average
area is σ²."""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.patches import Rectangle

from .style import PALETTE, new_figure

__all__ = ["SpreadPanel", "SquaresPanel", "variance_figure", "variance_companion", "bessel_figure"]

#: Gap between neighbouring squares, in data units.
GAP = 0.3


def _divisor(size: int, unbiased: bool) -> int:
    return size - 1 if unbiased else size


def _variance_label(x, unbiased: bool) -> str:
    """'σ² = sum / H = value' (or s_{H-1}² and H - 1) for titles."""
    divisor = _divisor(x.size, unbiased)
    return (
        f"{'$s_{H-1}^2$' if unbiased else 'σ²'} = sum / {divisor} = "
        f"{np.sum((x - x.mean()) ** 2) / divisor:.3g}"
    )


class SpreadPanel:
    """The entries as dots, their mean as a line, the deviations as segments and the band μ ± σ
    (chapter "The variance").

    Parameters
    ----------
    ax : matplotlib Axes
    size : int
        H, the number of entries.
    value_range : (float, float)
        Fixed limits of the value axis (an explorer's slider range).
    """

    def __init__(self, ax, size: int, value_range):
        index = np.arange(1, size + 1)
        self.band = ax.add_patch(
            Rectangle((0.5, 0.0), size, 0.0, color=PALETTE["reference"], alpha=0.3, lw=0)
        )
        self.mean_line = ax.axhline(0.0, color=PALETTE["mean"], lw=2)
        self.deviations = LineCollection([], linewidths=2)
        ax.add_collection(self.deviations)
        (self.points,) = ax.plot(index, np.zeros(size), "o", color=PALETTE["input"], ms=8, zorder=3)
        low, high = value_range
        pad = 0.05 * (high - low)
        ax.set(
            xlabel="feature index i",
            ylabel="value",
            xticks=index,
            xlim=(0.5, size + 0.5),
            ylim=(low - pad, high + pad),
        )
        ax.set_title("dots: entries $x_i$; line: mean μ; shaded band: μ ± σ")

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.band, self.mean_line, self.deviations, self.points]

    def update(self, x, unbiased: bool = False) -> None:
        """Redraw for the vector `x`; the band uses the variance divided by H, or by H - 1 if
        `unbiased`."""
        x = np.asarray(x, dtype=float)
        mu = x.mean()
        sigma = np.sqrt(np.sum((x - mu) ** 2) / _divisor(x.size, unbiased))
        self.points.set_ydata(x)
        self.mean_line.set_ydata([mu, mu])
        self.band.set_y(mu - sigma)
        self.band.set_height(2 * sigma)
        self.deviations.set_segments([[(i, mu), (i, v)] for i, v in enumerate(x, start=1)])
        self.deviations.set_colors(
            [PALETTE["positive"] if v >= mu else PALETTE["negative"] for v in x]
        )


class SquaresPanel:
    """Each squared deviation as a square of side ``abs(x_i - μ)``, in a row, then the average
    square of area σ² (chapter "The variance").

    The axes have equal aspect, so areas are true areas: the dashed square's
    area is the sum of the coloured areas divided by H (or by H - 1).

    Parameters
    ----------
    ax : matplotlib Axes
    size : int
        H, the number of entries (>= 2).
    span : float
        Width of the range the entries stay in (fixes the limits, so areas stay comparable).
    """

    def __init__(self, ax, size: int, span: float):
        self.squares = [
            ax.add_patch(Rectangle((0.0, 0.0), 0.0, 0.0, alpha=0.75, lw=1, ec="white"))
            for _ in range(size)
        ]
        self.average = ax.add_patch(
            Rectangle((0.0, 0.0), 0.0, 0.0, fill=False, ec=PALETTE["mean"], lw=2, ls="--")
        )
        # Entries within a range of width `span`: one deviation is at most span (H - 1) / H, their
        # sum at most H span / 2 (half the entries at each end), the side of the average square at
        # most span / 2 sqrt(H / (H - 1)).
        tallest = span * (size - 1) / size
        width = size * span / 2 + (size + 1) * GAP + span / 2 * np.sqrt(size / (size - 1))
        ax.set(
            xlim=(-GAP, width + GAP),
            ylim=(0.0, max(tallest, span / 2 * np.sqrt(size / (size - 1))) * 1.25),
            aspect="equal",
            xlabel="the squares side by side (value units)",
            ylabel="side $|x_i - \\mu|$",
        )
        ax.set_title("squared deviations as areas;\ndashed: their average, the variance")

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [*self.squares, self.average]

    def update(self, x, unbiased: bool = False) -> None:
        """Redraw for the vector `x`."""
        x = np.asarray(x, dtype=float)
        deviations = x - x.mean()
        left = 0.0
        for square, d in zip(self.squares, deviations):
            square.set_bounds(left, 0.0, abs(d), abs(d))
            square.set_facecolor(PALETTE["positive"] if d >= 0 else PALETTE["negative"])
            left += abs(d) + GAP
        side = np.sqrt(np.sum(deviations**2) / _divisor(x.size, unbiased))
        self.average.set_bounds(left + GAP, 0.0, side, side)

    def extent(self) -> tuple[float, float]:
        """Width and height of what is drawn now, to fit static figures to their data."""
        shapes = [*self.squares, self.average]
        return max(r.get_x() + r.get_width() for r in shapes), max(r.get_height() for r in shapes)

    def fit(self, width: float, height: float) -> None:
        """Set the limits to hold a drawing of `width` by `height`."""
        self.average.axes.set(xlim=(-GAP, width + GAP), ylim=(0.0, height * 1.15))


def variance_figure(x, *, value_range=None, unbiased: bool = False, managed: bool = True):
    """The spread of `x` (dots, mean, μ ± σ) and its squared deviations as squares (chapter "The
    variance").

    Parameters
    ----------
    x : array_like
        A small vector (2 to 8 entries).
    value_range : (float, float), optional
        Fixed limits for the values (an explorer's slider range). Default: fit both panels to `x`.
    unbiased : bool, default False
        Average the squares over H - 1 instead of H.
    managed : bool, default True
        False for a free-standing figure (explorers).

    Returns
    -------
    (Figure, (SpreadPanel, SquaresPanel))
    """
    x = np.asarray(x, dtype=float)
    fitted = value_range is None
    if fitted:
        pad = max(np.ptp(x), 1.0) * 0.25
        value_range = (x.min() - pad, x.max() + pad)
    # one above the other: the squares, in a row, are wide and short, and need the column's whole
    # width (side by side they were 70 px tall on the page)
    fig, (top, bottom) = new_figure(2, 1, figsize=(5.4, 4.4), managed=managed)
    panels = (
        SpreadPanel(top, x.size, value_range),
        SquaresPanel(bottom, x.size, value_range[1] - value_range[0]),
    )
    for panel in panels:
        panel.update(x, unbiased)
    if fitted:
        panels[1].fit(*panels[1].extent())
        bottom.set_title(
            f"squared deviations as areas;\ndashed: their average, {_variance_label(x, unbiased)}"
        )
    return fig, panels


def variance_companion(examples: dict[str, list[float]], *, unbiased: bool = False, ncols: int = 2):
    """Small multiples of :class:`SquaresPanel`, one per example vector, on shared scales (chapter
    "The variance").

    The static stand-in for :func:`lnlib.book.explorers.variance_explorer` on the website.

    Parameters
    ----------
    examples : dict of str to list of float
        Title of each panel and the vector it shows (each with at least 2 entries).
    unbiased : bool, default False
        Average over H - 1 instead of H.
    ncols : int, default 2
        Panels per row.

    Returns
    -------
    Figure
    """
    vectors = [np.asarray(v, dtype=float) for v in examples.values()]
    nrows = -(-len(vectors) // ncols)
    fig, axes = new_figure(nrows, ncols, figsize=(2.7 * ncols, 2.2 * nrows))
    axes = np.atleast_1d(axes).ravel()
    panels = []
    for ax, title, x in zip(axes, examples, vectors):
        panels.append(SquaresPanel(ax, x.size, float(np.ptp(x)) or 1.0))
        panels[-1].update(x, unbiased)
        ax.set_title(
            (
                f"{title}: x = [{', '.join(f'{v:g}' for v in x)}]\ndashed: "
                f"{_variance_label(x, unbiased)}"
            ),
            fontsize=9,
        )
    widths, heights = zip(*(panel.extent() for panel in panels))
    for panel in panels:  # one scale for all panels, so areas compare across them
        panel.fit(max(widths), max(heights))
    for ax in axes[len(vectors) :]:
        ax.set_visible(False)
    return fig


def bessel_figure(sizes, *, marked=(4, 512)):
    """How much the unbiased standard deviation shrinks LayerNorm's output: the factor sqrt((H - 1)
    / H) against H.

    Dividing by the unbiased std s_{H-1} instead of the biased σ multiplies every
    normalized value by σ / s_{H-1} = sqrt((H - 1) / H) (chapter "The variance").

    Parameters
    ----------
    sizes : array_like of int
        The values of H to plot (>= 2).
    marked : tuple of int
        Values of H to mark and label.

    Returns
    -------
    Figure
    """
    sizes = np.asarray(sizes, dtype=float)
    fig, ax = new_figure(figsize=(5.4, 3.0))
    ax.semilogx(
        sizes,
        np.sqrt((sizes - 1) / sizes),
        color=PALETTE["input"],
        lw=2,
        label="σ / s = √((H − 1) / H)",
    )
    ax.axhline(1.0, color=PALETTE["neutral"], lw=1, ls=":")
    for h in marked:
        ratio = np.sqrt((h - 1) / h)
        ax.plot([h], [ratio], "o", color=PALETTE["mean"])
        ax.annotate(
            f"H = {h}: {ratio:.4f}",
            (h, ratio),
            textcoords="offset points",
            xytext=(8, -14),
            fontsize=9,
        )
    ax.set(
        xlabel="H, number of features (log scale)",
        ylabel="unbiased output / biased output",
        title="Unbiased std: every output shrinks by √((H − 1)/H)",
    )
    ax.legend(loc="lower right")
    return fig
