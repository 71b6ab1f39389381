"""Figures for the chapter "LayerNorm and its family": which entries share statistics, and what that
does."""

from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgba
from matplotlib.legend import Legend
from matplotlib.patches import Patch

from ...norms import normalize, statistic_ids
from .style import GREYS, PALETTE, new_figure

__all__ = [
    "OutputPanel",
    "SharingPanel",
    "batch_effects_figure",
    "family_companion",
    "invariance_figure",
    "norm_lab_figure",
    "rms_layer_figure",
    "sharing_figure",
]

#: Cell colours of a sharing grid: outside the batch (white, drawn with an outline in
#: :data:`OUTLINE`), two shades for the other sets, the marked set.
CELL_COLOURS = np.array([to_rgba(c) for c in ("#FFFFFF", *GREYS[1:], PALETTE["input"])])
OUTSIDE, SHADE_A, SHADE_B, MARKED = range(4)
#: The outline of a cell outside the batch; cells inside the batch are parted by white lines.
OUTLINE = to_rgba(GREYS[2])


def _legend_handles(with_outside: bool, alternate: bool = True) -> list:
    """Legend patches for a sharing grid: the marked set, the other sets (in `alternate` shades or
    one grey), and (optionally) blocks outside the batch."""
    handles = [
        Patch(color=CELL_COLOURS[MARKED], label="share statistics with the dot"),
        Patch(
            color=CELL_COLOURS[SHADE_B],
            label="other sets (alternating shades)" if alternate else "other sets",
        ),
    ]
    if with_outside:
        handles.append(
            Patch(facecolor=CELL_COLOURS[OUTSIDE], edgecolor=OUTLINE, label="not in the batch")
        )
    return handles


class SharingPanel:
    """A tensor drawn as side-by-side blocks (one per sample), each a grid of rows by columns.

    Entries in the same statistics set as the marked entry (a dot) are blue; the
    other sets alternate between two greys, so their borders show (or, with
    ``alternate=False``, are one grey); blocks outside the batch are white,
    outlined in grey, unlike any shade of a set. This is the picture of Wu & He
    (2018), unfolded into the plane.

    Parameters
    ----------
    ax : matplotlib Axes
    blocks, rows, cols : int
        Samples, and the grid of each sample (e.g. channels by positions).
    block_label, row_label, col_label : str
        What the blocks, rows and columns are.
    alternate : bool, default True
        Two greys for the other sets; False gives them one grey (chapter 10's explorer, where a
        lighter grey block was read as "not in the batch": the third student review).
    """

    def __init__(
        self,
        ax,
        blocks: int,
        rows: int,
        cols: int,
        *,
        block_label="sample",
        row_label="channel c",
        col_label="position",
        alternate=True,
    ):
        self.blocks, self.rows, self.cols = blocks, rows, cols
        self.alternate = alternate
        self.width = cols + 1
        n, r, c = (a.ravel() for a in np.indices((blocks, rows, cols)))
        left, top = n * self.width + c - 0.5, r - 0.5
        squares = np.stack(
            [
                np.stack([left, top], 1),
                np.stack([left + 1, top], 1),
                np.stack([left + 1, top + 1], 1),
                np.stack([left, top + 1], 1),
            ],
            1,
        )
        self.cells = PolyCollection(squares, edgecolors="white", linewidths=0.6)
        ax.add_collection(self.cells)
        (self.anchor,) = ax.plot([], [], "o", color=PALETTE["neutral"], ms=4)
        centres = [k * self.width + (cols - 1) / 2 for k in range(blocks)]
        ax.set_xticks(centres, [f"{k + 1}" for k in range(blocks)])
        ax.set_yticks(
            [0, rows - 1], ["1", str(rows)]
        )  # first and last only: small cells leave no room for more
        ax.set(xlim=(-0.5, blocks * self.width - 1.5), ylim=(rows - 0.5, -0.5), aspect="equal")
        ax.set_xlabel(f"{block_label} (each block: {col_label} across)")
        ax.set_ylabel(row_label)
        ax.grid(False)
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.tick_params(length=0)

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.cells, self.anchor]

    def update(self, ids, anchor=(0, 0, 0)) -> None:
        """Colour the grid from statistics labels `ids` of shape (active blocks, rows, cols); later
        blocks are outside the batch."""
        ids = np.asarray(ids)
        cells = np.full((self.blocks, self.rows, self.cols), OUTSIDE)
        cells[: len(ids)] = np.where((ids % 2 == 0) & self.alternate, SHADE_A, SHADE_B)
        cells[: len(ids)][ids == ids[anchor]] = MARKED
        self.cells.set_facecolor(CELL_COLOURS[cells.ravel()])
        self.cells.set_edgecolor(
            np.where(cells.ravel()[:, None] == OUTSIDE, OUTLINE, to_rgba("white"))
        )
        n, r, c = anchor
        self.anchor.set_data([n * self.width + c], [r])


class OutputPanel:
    """One sample's normalized output, entry by entry, channel after channel, on fixed axes.

    Filled dots are the output in the current batch; hollow rings, the output of
    the same sample in the full batch, so a batch-dependent method shows the gap.

    Parameters
    ----------
    ax : matplotlib Axes
    rows, cols : int
        Channels and positions per channel of the sample.
    limit : float
        The y-axis runs over [-limit, limit].
    """

    def __init__(self, ax, rows: int, cols: int, limit: float = 4.0):
        self.index = np.arange(rows * cols)
        self.limit = limit
        (self.reference,) = ax.plot(
            self.index,
            np.zeros(self.index.size),
            "o",
            mfc="none",
            mec=PALETTE["neutral"],
            ms=9,
            label="in the full batch",
        )
        (self.points,) = ax.plot(
            self.index,
            np.zeros(self.index.size),
            "o",
            color=PALETTE["output"],
            ms=6,
            label="in this batch",
        )
        ax.axhline(0.0, color=PALETTE["neutral"], lw=0.8)
        for boundary in range(1, rows):
            ax.axvline(boundary * cols - 0.5, color=PALETTE["neutral"], lw=0.6, ls=":")
        ax.set_xticks(
            [r * cols + (cols - 1) / 2 for r in range(rows)], [f"c{r + 1}" for r in range(rows)]
        )
        # x margins of one entry: the rings (9 pt) at the first and last entry stay inside the frame
        ax.set(
            xlabel="entry of sample 1, by channel",
            ylabel="output y",
            ylim=(-limit, limit),
            xlim=(-1.0, rows * cols),
        )

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.reference, self.points]

    def update(self, y, reference) -> None:
        """Show the output `y` of one sample and its `reference` (the full-batch output), clipped to
        the axis."""
        self.points.set_ydata(np.clip(np.ravel(y), -self.limit, self.limit))
        self.reference.set_ydata(np.clip(np.ravel(reference), -self.limit, self.limit))


def sharing_figure(
    panels: dict[str, np.ndarray],
    *,
    row_label="channel c",
    col_label="position (H·W)",
    block_label="sample n",
):
    """Small multiples of :class:`SharingPanel`, one per method (chapter "LayerNorm and its
    family").

    Parameters
    ----------
    panels : dict of str to ndarray
        Title of each panel and its statistics labels, shape (blocks, rows, cols).
    row_label, col_label, block_label : str
        Axis meanings, the same for every panel.
    """
    shapes = {np.shape(ids) for ids in panels.values()}
    blocks, rows, cols = shapes.pop()
    fig, axes = new_figure(len(panels), 1, figsize=(5.4, 1.25 * len(panels) * (rows + 2) / 6 + 0.6))
    for ax, (title, ids) in zip(np.atleast_1d(axes), panels.items()):
        SharingPanel(
            ax,
            blocks,
            rows,
            cols,
            block_label=block_label,
            row_label=row_label,
            col_label=col_label,
        ).update(ids)
        ax.set_yticks(
            range(rows), [str(k + 1) for k in range(rows)]
        )  # cells this large have room for every row's number
        ax.set_title(title, loc="left")
    np.atleast_1d(axes)[0].legend(
        handles=_legend_handles(False),
        loc="lower right",
        bbox_to_anchor=(1.0, 1.15),
        ncol=2,
        fontsize=8,
    )
    return fig


def batch_effects_figure(effects, feature: int, spread_sizes, spreads):
    """Batch norm's output for one sample across random batches, against layer norm's (chapter
    "LayerNorm and its family").

    Parameters
    ----------
    effects : lnlib.book.experiments.family.BatchEffects
        The experiment, for the batch sizes shown as strips.
    feature : int
        Which feature of the sample to show on the left.
    spread_sizes, spreads : sequences of float
        Batch sizes and the spread of batch norm's output at each, for the right panel.
    """
    fig, (left, right) = new_figure(1, 2, figsize=(5.4, 3.0))
    rng = np.random.default_rng(0)
    sizes = list(effects.training)
    for k, size in enumerate(sizes):
        values = effects.training[size][:, feature]
        left.plot(
            k + rng.uniform(-0.18, 0.18, values.size),
            values,
            ".",
            color=PALETTE["input"],
            alpha=0.5,
            label="batch norm, training" if k == 0 else None,
        )
    left.axhline(
        effects.layer[feature], color=PALETTE["mean"], lw=2, label="layer norm (any batch)"
    )
    left.plot(
        [len(sizes) - 0.5],
        [effects.inference[feature]],
        "D",
        color=PALETTE["output"],
        ms=8,
        label="batch norm, inference",
    )
    left.set(
        xticks=range(len(sizes)),
        xticklabels=[str(s) for s in sizes],
        xlabel="batch size",
        ylabel=f"output, feature {feature + 1} of sample 1",
        title="one sample in\n200 random batches",
        xlim=(-0.5, len(sizes) - 0.2),
    )
    fig.legend(loc="outside lower center", ncol=3, fontsize=8)
    right.loglog(spread_sizes, spreads, "o-", color=PALETTE["input"], label="batch norm, measured")
    reference = spreads[-1] * np.sqrt(spread_sizes[-1] / np.asarray(spread_sizes, dtype=float))
    right.loglog(
        spread_sizes, reference, "--", color=PALETTE["reference"], label="∝ 1/√(batch size)"
    )
    right.set(
        xlabel="batch size",
        ylabel="std across batches",
        title="spread of batch norm's output\n(layer norm's: exactly 0)",
    )
    right.minorticks_off()
    right.set_xticks(spread_sizes, [str(s) for s in spread_sizes])
    right.set_yticks([0.1, 0.2, 0.5, 1.0], ["0.1", "0.2", "0.5", "1"])
    right.legend(fontsize=8)
    return fig


def invariance_figure(table):
    """Table 1 as a heat map of relative output changes, with the verdict in each cell (chapter
    "LayerNorm and its family").

    Parameters
    ----------
    table : lnlib.book.experiments.family.InvarianceTable
    """
    methods = list(table.changes)
    changes = np.array([table.changes[m] for m in methods])
    columns = table.rows()[0][1:]
    fig, ax = new_figure(figsize=(5.4, 3.0))
    image = ax.imshow(
        np.log10(np.maximum(changes, 1e-17)), cmap="cividis", vmin=-17, vmax=1, aspect="auto"
    )
    for (i, j), change in np.ndenumerate(changes):
        verdict = "Invariant" if change <= table.tol else "No"
        ax.text(
            j,
            i,
            f"{verdict}\n{change:.0e}",
            ha="center",
            va="center",
            fontsize=8,
            color="white" if change <= table.tol else "black",
        )
    # Column names wrapped to cell width (one or two words a line): side by side they ran into each
    # other.
    ax.set_xticks(
        range(len(columns)),
        [textwrap.fill(c, 10, break_on_hyphens=False, break_long_words=False) for c in columns],
        fontsize=8,
    )
    ax.set_yticks(range(len(methods)), methods)
    ax.grid(False)
    fig.colorbar(
        image, ax=ax, location="top", shrink=0.6, label="log10 relative change of the output"
    )  # on top: the columns need the width
    return fig


def rms_layer_figure(layer_zero, rms_zero, layer_shifted, rms_shifted):
    """RMS norm against layer norm, for zero-mean inputs and for the same inputs shifted (chapter
    "LayerNorm and its family")."""
    fig, axes = new_figure(1, 2, figsize=(5.4, 3.0), sharex=True, sharey=True)
    for ax, ln, rms, title in zip(
        axes,
        (layer_zero, layer_shifted),
        (rms_zero, rms_shifted),
        ("inputs with mean 0", "the same inputs + 1"),
    ):
        ax.plot(np.ravel(ln), np.ravel(rms), "o", color=PALETTE["input"], ms=4)
        ax.plot([-3, 3], [-3, 3], color=PALETTE["neutral"], lw=0.8, ls="--", label="y = x")
        ax.set(xlabel="layer norm output", title=title)
    axes[0].set_ylabel("RMS norm output")
    axes[0].legend(loc="upper left")
    return fig


def family_companion(x, settings):
    """Small multiples of the family explorer: per setting, the shared sets and sample 1's output.

    The static stand-in for :func:`lnlib.book.explorers.family_explorer` on the website.

    Parameters
    ----------
    x : ndarray, shape (N, C, S)
        The explorer's tensor (positions flattened).
    settings : list of (str, int, int)
        (method, batch size, groups) for each row of panels.
    """
    blocks, rows, cols = x.shape
    fig, axes = new_figure(
        len(settings), 2, figsize=(5.4, 1.6 * len(settings) + 0.7), width_ratios=[2.2, 1]
    )
    for (grid_ax, out_ax), (method, batch, groups) in zip(axes, settings):
        batch_x = x[:batch]
        SharingPanel(grid_ax, blocks, rows, cols, col_label="position", alternate=False).update(
            statistic_ids(batch_x.shape, method, groups=groups)
        )
        OutputPanel(out_ax, rows, cols).update(
            normalize(batch_x, method, groups=groups)[0], normalize(x, method, groups=groups)[0]
        )
        out_ax.set_ylabel("output y")
        label = {
            "group": f"group norm, G = {groups}",
            "batch": f"batch norm, batch of {batch}",
            "rms": "RMS norm",
        }.get(method, f"{method} norm")
        grid_ax.set_title(label, loc="left")
        for ax in (grid_ax, out_ax):
            if ax is not axes[-1][0] and ax is not axes[-1][1]:
                ax.set_xlabel("")
    fig.legend(
        handles=_legend_handles(True, alternate=False) + axes[0][1].get_legend_handles_labels()[0],
        loc="outside upper left",
        ncol=3,
        fontsize=8,
    )
    return fig


#: The BatchNorm lab's curves: legend label, colour role, marker, line style. No two curves of a
#: panel share a colour or a line style, and no panel pairs orange with vermilion or blue with sky
#: blue.
_LAB_NORMS = {
    "layer": ("LayerNorm", "input", "^", "-"),
    "rms": ("RMSNorm", "positive", "v", ":"),
    "batch": ("BatchNorm (eval)", "mean", "o", "-"),
    "none": ("no norm", "neutral", "s", "--"),  # last, so it is drawn on top of the others
}
_LAB_MODES = {
    "running": ("eval: running stats", "mean", "o", "-"),
    "whole": ("train: whole test set", "reference", "D", "--"),
    "pairs": ("train: random pairs", "negative", "^", "-"),
    "one_class": ("train: one digit a batch", "output", "v", "-."),
}


def _mean_sd_line(ax, x, runs, label: str, role: str, marker: str, line: str) -> None:
    """Mean over seeds (rows of `runs` per x, seeds along the last axis) with ± one sd as error
    bars."""
    runs = np.asarray(runs, dtype=float)
    ax.errorbar(
        x,
        runs.mean(axis=-1),
        yerr=runs.std(axis=-1, ddof=1),
        color=PALETTE[role],
        marker=marker,
        ls=line,
        ms=4,
        capsize=2,
        label=label,
    )


def _log2_axis(ax, ticks, label: str) -> None:
    ax.set_xscale("log", base=2)
    ax.minorticks_off()
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel(label)


def _lab_legend(ax, keys, styles, **where) -> None:
    """A legend in `ax` for the curves `keys` of `styles`, kept when another legend is added."""
    handles = dict(zip(*reversed(ax.get_legend_handles_labels())))
    labels = [styles[k][0] for k in keys]
    ax.add_artist(
        Legend(ax, [handles[label] for label in labels], labels, handlelength=1.6, **where)
    )


def norm_lab_figure(record: dict):
    """The BatchNorm lab, from its stored record (chapter "LayerNorm and its family").

    Top left: test accuracy against the training batch size, per norm (BatchNorm with its running
    statistics). Top right: BatchNorm's models evaluated with running statistics and in train mode
    on three kinds of test batches. Bottom: BatchNorm's test accuracy during training at the base
    and the high learning rate, with the running statistics and with the test set's own. Every
    point is the mean over the seeds, with ± one standard deviation. Each panel's legend sits next
    to its curves, in the figure's own font size, so that it reads on a phone.

    Parameters
    ----------
    record : dict
        :func:`lnlib.book.models.norm_lab.load_lab`'s record.
    """
    s = record["settings"]
    fig, axes = new_figure(2, 2, figsize=(5.4, 5.2), sharey=True)
    batches, shown = s["batches"], [b for b in s["batches"] if b != 128]
    for norm, style in _LAB_NORMS.items():
        _mean_sd_line(axes[0, 0], batches, record["accuracy"][norm], *style)
    _lab_legend(axes[0, 0], _LAB_NORMS, _LAB_NORMS, loc="lower right")
    _mean_sd_line(axes[0, 1], batches, record["accuracy"]["batch"], *_LAB_MODES["running"])
    for how in ("whole", "pairs", "one_class"):
        _mean_sd_line(axes[0, 1], batches, record["batch_modes"][how], *_LAB_MODES[how])
    _lab_legend(
        axes[0, 1], ("running", "whole"), _LAB_MODES, loc="upper right", bbox_to_anchor=(1, 0.84)
    )
    _lab_legend(
        axes[0, 1], ("pairs", "one_class"), _LAB_MODES, loc="lower right", bbox_to_anchor=(1, 0.14)
    )
    for ax, title in zip(axes[0], ("every norm", "BatchNorm, evaluated 4 ways")):
        _log2_axis(ax, shown, "training batch size")
        ax.set_title(title)
    checkpoints = s["checkpoints"]
    for ax, key in zip(axes[1], ("rate", "high_rate")):
        lag = record["lag"][key]
        _mean_sd_line(ax, checkpoints, np.transpose(lag["running"]), *_LAB_MODES["running"])
        _mean_sd_line(ax, checkpoints, np.transpose(lag["whole"]), *_LAB_MODES["whole"])
        _log2_axis(ax, [1, 4, 16, 64, 256], "training step")
        ax.set_title(f"BatchNorm while training\n(rate {s[key]:g}, batch {s['lag_batch']})")
    _lab_legend(axes[1, 1], ("running", "whole"), _LAB_MODES, loc="lower right")
    for row in axes:
        row[0].set_ylabel("test accuracy (%)")
    axes[0, 0].set_ylim(0, 100)
    return fig
