"""Figures for the chapter "The input x": which elements share one mean and variance.

Every element of the input is one square. Squares of one colour share a mean
and a variance; a new colour means new statistics. A ``(batch, features)``
input is drawn as a matrix, one row per sample; a ``(batch, sequence, hidden)``
input as one block per sample, one row per token.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb

from ..contexts import reduction_axes, statistic_groups
from .style import PALETTE, new_figure

__all__ = ["GroupsPanel", "groups_figure", "groups_companion"]

#: Colours of successive statistic groups (they repeat after six groups), as RGB triples.
GROUP_RGB = np.array([to_rgb(PALETTE[k]) for k in ("input", "mean", "positive", "negative", "output", "reference")])


def _canvas(groups: np.ndarray) -> np.ndarray:
    """Lay the groups out on a 2-D grid: a matrix for 2-D inputs, side-by-side blocks (NaN gaps) for 3-D ones."""
    if groups.ndim == 2:
        return groups.astype(float)
    batch, rows, cols = groups.shape
    canvas = np.full((rows, batch * (cols + 1) - 1), np.nan)
    for b in range(batch):
        canvas[:, b * (cols + 1): b * (cols + 1) + cols] = groups[b]
    return canvas


class GroupsPanel:
    """One axes that shows an input's elements as squares coloured by statistic group, redrawable in place.

    The picture is a fixed-size raster (an image whose pixels this class paints),
    so an explorer can change the input's shape without the axes moving: cells
    shrink to fit, and the labels are text artists that move with them.

    Parameters
    ----------
    ax : matplotlib Axes
    raster : (int, int)
        Height and width of the picture in pixels.
    """

    CELL_MAX = 32  # pixels per square at most
    BORDER = 2     # white pixels between squares

    def __init__(self, ax, raster=(160, 640)):
        self.height, self.width = raster
        self.image = ax.imshow(np.ones((self.height, self.width, 3)), interpolation="nearest", extent=(0, self.width, self.height, 0))
        ax.set_axis_off()
        text = {"ha": "center", "fontsize": 9}
        self.labels = [ax.text(0, 0, "", va="top", **text) for _ in range(8)]
        self.xlabel = ax.text(0, self.height + 16, "", va="top", **text)
        self.ylabel = ax.text(-6, self.height / 2, "", va="center", rotation=90, ha="right", fontsize=9)
        self.title = ax.text(self.width / 2, -6, "", va="bottom", **text)
        ax.set_xlim(-20, self.width)
        ax.set_ylim(self.height + 32, -24)

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.image, *self.labels, self.xlabel, self.ylabel, self.title]

    def update(self, groups, axis_names, title: str = "") -> None:
        """Show `groups` (2-D or 3-D labels from :func:`lnlib.contexts.statistic_groups`) with its axis names."""
        groups = np.asarray(groups)
        canvas = _canvas(groups)
        rows, cols = canvas.shape
        cell = int(min(self.CELL_MAX, self.height // rows, self.width // cols))
        left = (self.width - cols * cell) // 2
        raster = np.ones((self.height, self.width, 3))
        for (r, c), value in np.ndenumerate(canvas):
            if not np.isnan(value):
                y, x = r * cell, left + c * cell
                raster[y:y + cell - self.BORDER, x:x + cell - self.BORDER] = GROUP_RGB[int(value) % len(GROUP_RGB)]
        self.image.set_data(raster)
        block = groups.shape[-1] + 1
        for b, label in enumerate(self.labels):
            label.set_visible(groups.ndim == 3 and b < groups.shape[0])
            label.set_text(f"sample {b + 1}")
            label.set_position((left + (b * block + (block - 1) / 2) * cell, rows * cell + 2))
        self.xlabel.set_text(f"{axis_names[-1]} →" + ("  (one block per sample)" if groups.ndim == 3 else ""))
        self.xlabel.set_position((self.width / 2, rows * cell + (16 if groups.ndim == 3 else 4)))
        self.ylabel.set_text(f"← {axis_names[-2]}")
        self.ylabel.set_position((left - 6, rows * cell / 2))
        self.title.set_text(title)


def _title(normalization: str, groups: np.ndarray) -> str:
    count = int(groups.max()) + 1
    return f"{normalization}\n{count} mean{'s' if count > 1 else ''} of {groups.size // count} values each"


def groups_figure(shape, axis_names, normalizations=("LayerNorm", "BatchNorm"), *, managed: bool = True):
    """One panel per normalization, for one input shape (chapter "The input x").

    Parameters
    ----------
    shape : tuple of int
        The input's shape, 2-D or 3-D.
    axis_names : tuple of str
        One name per axis.
    normalizations : sequence of str
        Keys of :data:`lnlib.contexts.NORMALIZATIONS`.
    managed : bool
        As in :func:`lnlib.plots.style.new_figure`.

    Returns
    -------
    Figure
    """
    fig, axes = new_figure(1, len(normalizations), figsize=(3.4 * len(normalizations), 2.4), managed=managed)
    for ax, normalization in zip(np.atleast_1d(axes), normalizations):
        _draw(ax, shape, axis_names, normalization)
    return fig


def _draw(ax, shape, axis_names, normalization: str) -> GroupsPanel:
    """A panel sized to the input, showing `normalization`'s groups."""
    rows, cols = _canvas(np.zeros(shape)).shape
    panel = GroupsPanel(ax, (rows * GroupsPanel.CELL_MAX, cols * GroupsPanel.CELL_MAX))
    groups = statistic_groups(shape, reduction_axes(normalization, len(shape)))
    panel.update(groups, axis_names, _title(normalization, groups))
    return panel


def groups_companion(cases, normalizations=("LayerNorm", "LayerNorm over the last two axes", "BatchNorm")):
    """Small multiples: one row per context, one column per normalization (chapter "The input x").

    The static stand-in for :func:`lnlib.widgets.input_explorer` on the website.

    Parameters
    ----------
    cases : dict of str to (tuple of str, tuple of int)
        Row label to (axis names, shape).
    normalizations : sequence of str
        Keys of :data:`lnlib.contexts.NORMALIZATIONS`, one per column.
    """
    fig, axes = new_figure(len(cases), len(normalizations), figsize=(3.3 * len(normalizations), 2.5 * len(cases)))
    axes = np.atleast_2d(axes)
    for row, (label, (axis_names, shape)) in zip(axes, cases.items()):
        for ax, normalization in zip(row, normalizations):
            panel = _draw(ax, shape, axis_names, normalization)
            panel.title.set_text(f"{label} {shape}\n{panel.title.get_text()}")
    return fig
