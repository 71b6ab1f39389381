"""Figures for the chapter "The mean": the balance point and the centred values."""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection

from .style import PALETTE, new_figure

__all__ = ["MeanPanels", "mean_figure"]


class MeanPanels:
    """Two panels that can be redrawn in place: the entries with their mean, and the centred values
    (chapter "The mean").

    Left: each entry x_i as a dot, the mean as a horizontal line, and the
    deviation x_i - mu as a segment (green above the mean, purple below).
    Right: the centred values as bars around zero.

    Parameters
    ----------
    ax_values, ax_centred : matplotlib Axes
    size : int
        H, the number of entries.
    value_range : (float, float), optional
        Fixed limits for the entries (an explorer's slider range), so the axes
        never move and only the data is redrawn. Default: fit each update.
    """

    def __init__(self, ax_values, ax_centred, size: int, value_range=None):
        index = np.arange(1, size + 1)
        self.ax_values, self.ax_centred = ax_values, ax_centred
        self.mean_line = ax_values.axhline(0.0, color=PALETTE["mean"], lw=2, label="mean μ")
        self.deviations = LineCollection([], linewidths=2)
        ax_values.add_collection(self.deviations)
        (self.points,) = ax_values.plot(
            index,
            np.zeros(size),
            "o",
            color=PALETTE["input"],
            ms=8,
            label="entries $x_i$",
            zorder=3,
        )
        ax_values.set(
            xlabel="feature index i", ylabel="value", xticks=index, xlim=(0.5, size + 0.5)
        )
        self.bars = ax_centred.bar(index, np.zeros(size), color=PALETTE["positive"])
        ax_centred.axhline(0.0, color=PALETTE["neutral"], lw=1)
        ax_centred.set(xlabel="feature index i", ylabel="centred value $x_i - μ$", xticks=index)
        # No legend: inside the axes an entry moved to the top would run under it; the title says
        # it.
        ax_values.set_title("dots: entries $x_i$; line: their\nmean μ (the balance point)")
        ax_centred.set_title("centred values x − μ:\nthey always sum to 0")
        self.value_range = value_range
        if value_range is not None:
            low, high = value_range
            ax_values.set_ylim(*_padded([low, high], 0.05))
            ax_centred.set_ylim(*_padded([low - high, high - low], 0.05))

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.points, self.mean_line, self.deviations, *self.bars]

    def update(self, x) -> None:
        """Redraw both panels for the vector `x`."""
        x = np.asarray(x, dtype=float)
        index = np.arange(1, x.size + 1)
        mu = x.mean()
        centred = x - mu
        colours = [PALETTE["positive"] if c >= 0 else PALETTE["negative"] for c in centred]
        self.points.set_ydata(x)
        self.mean_line.set_ydata([mu, mu])
        self.deviations.set_segments([[(i, mu), (i, v)] for i, v in zip(index, x)])
        self.deviations.set_colors(colours)
        for bar, height, colour in zip(self.bars, centred, colours):
            bar.set_height(height)
            bar.set_color(colour)
        if self.value_range is None:
            self.ax_values.set_ylim(*_padded(np.append(x, mu)))
            self.ax_centred.set_ylim(*_padded(np.append(centred, 0.0)))


def _padded(values, fraction: float = 0.15):
    low, high = float(np.min(values)), float(np.max(values))
    pad = max(high - low, 1.0) * fraction
    return low - pad, high + pad


def mean_figure(x, *, value_range=None, managed: bool = True):
    """The entries of `x`, their mean, and the centred values (chapter "The mean").

    Returns
    -------
    (Figure, MeanPanels)
    """
    x = np.asarray(x, dtype=float)
    fig, (left, right) = new_figure(1, 2, figsize=(5.4, 2.8), managed=managed)
    panels = MeanPanels(left, right, x.size, value_range)
    panels.update(x)
    return fig, panels
