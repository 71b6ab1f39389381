"""Figures for the chapter "The input x": which elements share one mean and variance.

Every element of the input is one square. Squares of one colour share a mean
and a variance; a new colour means new statistics. A ``(batch, features)``
input is drawn as a matrix, one row per sample; a ``(batch, sequence, hidden)``
input as one block per sample, one row per token.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgb

from ...norms import axis_ids
from ..experiments.the_input import reduction_axes
from .style import PALETTE, new_figure

__all__ = ["GroupsPanel", "groups_figure", "groups_companion"]

#: Colours of successive statistic groups (they repeat after six groups), as RGB triples.
GROUP_RGB = np.array(
    [to_rgb(PALETTE[k]) for k in ("input", "mean", "positive", "negative", "output", "reference")]
)


def _canvas(groups: np.ndarray) -> np.ndarray:
    """Lay the groups out on a 2-D grid: a matrix for 2-D inputs, side-by-side blocks (NaN gaps) for
    3-D ones."""
    if groups.ndim == 2:
        return groups.astype(float)
    batch, rows, cols = groups.shape
    canvas = np.full((rows, batch * (cols + 1) - 1), np.nan)
    for b in range(batch):
        canvas[:, b * (cols + 1) : b * (cols + 1) + cols] = groups[b]
    return canvas


class GroupsPanel:
    """An input's elements as squares coloured by statistic group, redrawable in place (chapter "The
    input x").

    The squares are one collection whose polygons and colours :meth:`update`
    replaces, inside a fixed box of `box` cells, so an explorer can change the
    input's shape without the axes moving: the squares rescale to fit.

    Parameters
    ----------
    ax : matplotlib Axes
    box : (int, int)
        Rows and columns of squares the picture must fit in.
    labels : bool, default True
        Name the last two axes next to the squares ("hidden →", "← sequence") and
        label each sample's block of a 3-D input ("sample 1", ...). The explorer
        leaves all text out (text is the slowest thing to redraw) and names the
        axes in its readout instead.
    """

    def __init__(self, ax, box=(5, 35), labels: bool = True):
        self.rows, self.cols = box
        self.cells = PolyCollection([], edgecolors="white", linewidths=1.5)
        ax.add_collection(self.cells)
        ax.set_xlim(-1.0 if labels else -0.2, self.cols + 0.2)
        ax.set_ylim(self.rows + (1.6 if labels else 0.2), -0.2)
        ax.set_aspect("equal")
        ax.set_axis_off()
        self.labels = [
            ax.text(0, 0, "", ha="center", va="top", fontsize=8) for _ in range(4 if labels else 0)
        ]
        self.axis_labels = (
            [
                ax.text(0, 0, "", ha=ha, va=va, rotation=rotation, fontsize=8)
                for ha, va, rotation in (("center", "top", 0), ("right", "center", 90))
            ]
            if labels
            else []
        )

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.cells, *self.labels, *self.axis_labels]

    def update(self, groups, axis_names) -> None:
        """Show `groups` (2-D or 3-D labels from :func:`lnlib.norms.axis_ids`) with its axis
        names."""
        groups = np.asarray(groups)
        canvas = _canvas(groups)
        rows, cols = canvas.shape
        size = min(self.rows / rows, self.cols / cols, 2.0)
        left = (self.cols - cols * size) / 2
        where = np.argwhere(~np.isnan(canvas))
        corners = np.array([[0, 0], [1, 0], [1, 1], [0, 1]])
        self.cells.set_verts([(left + c * size, r * size) + corners * size for r, c in where])
        self.cells.set_facecolor([GROUP_RGB[int(canvas[r, c]) % len(GROUP_RGB)] for r, c in where])
        bottom = rows * size
        three_d = groups.ndim == 3
        block = (groups.shape[-1] + 1) * size
        for b, label in enumerate(self.labels):
            label.set_visible(three_d and b < groups.shape[0])
            label.set_text(f"sample {b + 1}")
            label.set_position((left + b * block + (block - size) / 2, bottom + 0.15))
        if self.axis_labels:
            xlabel, ylabel = self.axis_labels
            xlabel.set_text(f"{axis_names[-1]} →")
            xlabel.set_position((left + cols * size / 2, bottom + (0.8 if three_d else 0.15)))
            ylabel.set_text(f"← {axis_names[-2]}")
            ylabel.set_position((left - 0.15, bottom / 2))


def _title(normalization: str, groups: np.ndarray) -> str:
    count = int(groups.max()) + 1
    return (
        f"{normalization}\n{count} mean{'s' if count > 1 else ''} of {groups.size // count} values "
        "each"
    )


def groups_figure(
    shape, axis_names, normalizations=("LayerNorm", "BatchNorm"), *, managed: bool = True
):
    """One panel per normalization, for one input shape (chapter "The input x").

    Parameters
    ----------
    shape : tuple of int
        The input's shape, 2-D or 3-D.
    axis_names : tuple of str
        One name per axis.
    normalizations : sequence of str
        Keys of :data:`lnlib.book.experiments.the_input.NORMALIZATIONS`.
    managed : bool
        As in :func:`lnlib.book.figures.style.new_figure`.

    Returns
    -------
    Figure
    """
    fig, axes = new_figure(1, len(normalizations), figsize=(5.4, 2.2), managed=managed)
    for ax, normalization in zip(np.atleast_1d(axes), normalizations):
        _draw(ax, shape, axis_names, normalization)
    return fig


def _draw(ax, shape, axis_names, normalization: str):
    """A panel sized to the input, showing `normalization`'s groups."""
    panel = GroupsPanel(ax, _canvas(np.zeros(shape)).shape)
    groups = axis_ids(shape, reduction_axes(normalization, len(shape)))
    panel.update(groups, axis_names)
    ax.set_title(_title(normalization, groups))
    return ax


def groups_companion(
    cases, normalizations=("LayerNorm", "LayerNorm over the last two axes", "BatchNorm")
):
    """Small multiples: one row per context, one column per normalization (chapter "The input x").

    The static stand-in for :func:`lnlib.book.explorers.input_explorer` on the website.

    Parameters
    ----------
    cases : dict of str to (tuple of str, tuple of int)
        Row label to (axis names, shape).
    normalizations : sequence of str
        Keys of :data:`lnlib.book.experiments.the_input.NORMALIZATIONS`, one per column.
    """
    fig, _ = new_figure(figsize=(5.4, 1.9 * len(cases)))
    fig.axes[0].remove()
    # One sub-figure per context, headed by a bold, left-aligned line across the row, so it reads as
    # the row's heading and not as the middle panel's title.
    for band, (label, (axis_names, shape)) in zip(
        np.atleast_1d(fig.subfigures(len(cases), 1)), cases.items()
    ):
        band.suptitle(
            f"{label}: x of shape {shape}", x=0.01, ha="left", fontsize=10, fontweight="bold"
        )
        for ax, normalization in zip(
            np.atleast_1d(band.subplots(1, len(normalizations))), normalizations
        ):
            _draw(ax, shape, axis_names, normalization)
            ax.set_title(
                ax.get_title().replace(
                    "LayerNorm over the last two axes", "LayerNorm (last 2 axes)"
                ),
                fontsize=9,
            )
    return fig
