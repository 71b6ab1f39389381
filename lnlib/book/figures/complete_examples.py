"""Figures for the chapter "The complete examples": the computation diagram, the steps of an
example, and a distribution before and after."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from ...forward import layer_norm_steps
from .style import PALETTE, new_figure

__all__ = [
    "STEP_TITLES",
    "computation_diagram",
    "StepPanels",
    "steps_figure",
    "steps_companion",
    "before_after_figure",
]

#: The panels of a step-by-step figure: the input, then the documents' four steps.
STEP_TITLES = (
    "input x",
    "1. mean μ",
    "2. (x − μ)², mean σ²",
    "3. normalize: x̂",
    "4. scale, shift: y",
)
#: Written in a panel until the reader's step reaches it (short: each update redraws them, and text
#: is slow to draw).
STEP_PREVIEWS = ("",) + tuple(f"shown at\nstep {k}" for k in range(1, len(STEP_TITLES)))

# The computation graph: node -> (x, y, label), in the order of computation, in four rows down the
# column.
_NODES = {
    "x": (0.0, 3.6, "input x"),
    "mean": (2.0, 3.6, "mean\nμ = mean(x)"),
    "centre": (2.0, 2.4, "subtract\nx − μ"),
    "var": (4.4, 3.6, "variance\nσ² = mean((x − μ)²)"),
    "eps": (6.5, 3.6, "add ε\nσ² + ε"),
    "sqrt": (6.5, 2.4, "square root\n√(σ² + ε)"),
    "divide": (4.0, 1.2, "divide\nx̂ = (x − μ) / √(σ² + ε)"),
    "scale": (2.6, 0.0, "scale\nγ ⊙ x̂"),
    "shift": (5.4, 0.0, "shift\ny = γ ⊙ x̂ + β"),
}
_EDGES = [
    ("x", "mean"),
    ("x", "centre"),
    ("mean", "centre"),
    ("centre", "var"),
    ("var", "eps"),
    ("eps", "sqrt"),
    ("centre", "divide"),
    ("sqrt", "divide"),
    ("divide", "scale"),
    ("scale", "shift"),
]
# Inputs from outside the vector: the learned parameters in vermilion, the constant ε in black (it
# is not learned).
_PARAMETERS = {
    "scale": ("γ (learned, per feature)", PALETTE["mean"]),
    "shift": ("β (learned, per feature)", PALETTE["mean"]),
    "eps": ("ε (a fixed constant)", PALETTE["neutral"]),
}
# Where each parameter's label sits, relative to its node.
_PARAMETER_OFFSETS = {"scale": (-2.2, 0.0), "shift": (0.0, -1.0), "eps": (0.0, 0.85)}


def computation_diagram(values: dict | None = None):
    """The whole LayerNorm computation as a graph of boxes and arrows (chapter "The complete
    examples").

    Drawn with matplotlib, so the website needs no diagram service. The
    variance box takes the *centred* values x − μ: the two-pass order of the
    definition (a one-pass variance, mean(x²) − μ², would take x directly).

    Parameters
    ----------
    values : dict of str to str, optional
        Text added under a node's label (keys:
        ``x, mean, centre, var, eps, sqrt, divide, scale, shift``), e.g. the numbers of one worked
        example.
    """
    values = values or {}
    fig, ax = new_figure(figsize=(5.4, 4.4))
    ax.set(xlim=(-0.9, 7.3), ylim=(-1.2, 4.8))
    ax.axis("off")
    boxes = {}
    for name, (col, row, label) in _NODES.items():
        text = label + (f"\n{values[name]}" if name in values else "")
        colour = PALETTE["output"] if name in ("scale", "shift") else PALETTE["reference"]
        boxes[name] = ax.text(
            col,
            row,
            text,
            ha="center",
            va="center",
            fontsize=8,
            zorder=3,
            bbox={
                "boxstyle": "round,pad=0.4",
                "facecolor": colour,
                "alpha": 0.35,
                "edgecolor": PALETTE["neutral"],
            },
        )
    arrow = {"arrowstyle": "-|>", "mutation_scale": 12, "shrinkA": 2, "shrinkB": 2}
    for name, (label, colour) in _PARAMETERS.items():
        col, row, _ = _NODES[name]
        dx, dy = _PARAMETER_OFFSETS[name]
        source = ax.text(
            col + dx,
            row + dy,
            label,
            ha="center",
            va="center",
            fontsize=8,
            color=colour,
            bbox={"boxstyle": "round,pad=0.2", "facecolor": "none", "edgecolor": "none"},
        )
        ax.annotate(
            "",
            xy=(col, row),
            xytext=(col + dx, row + dy),  # from the label's edge to the node's box
            arrowprops=arrow
            | {
                "color": colour,
                "patchA": source.get_bbox_patch(),
                "patchB": boxes[name].get_bbox_patch(),
            },
        )
        source.set_zorder(3)
    for start, end in _EDGES:
        (c0, r0, _), (c1, r1, _) = _NODES[start], _NODES[end]
        ax.annotate(
            "",
            xy=(c1, r1),
            xytext=(c0, r0),
            arrowprops=arrow
            | {
                "color": PALETTE["neutral"],
                "patchA": boxes[start].get_bbox_patch(),
                "patchB": boxes[end].get_bbox_patch(),
            },
        )
    ax.set_title(
        "LayerNorm, one vector at a time: blue boxes are fixed arithmetic,\n"
        "orange boxes take the learned γ, β (vermilion arrows); ε is a constant"
    )
    return fig


class StepPanels:
    """One row of five panels, the input and the documents' four steps, each shown or hidden by
    :meth:`show` (chapter "The complete examples").

    Every sample (row of the input) is drawn as dots over the feature index,
    one colour per sample (blue, then green), with its mean, its variance or
    the zero line as a dashed line (vermillion, then purple) where the step
    has one. The axes limits are fixed per example, so stepping
    through only toggles artists.

    Parameters
    ----------
    axes : sequence of 5 matplotlib Axes
    x : array_like, shape (H,) or (S, H)
        The example: one vector or a batch of S samples.
    gamma, beta : array_like, optional
        Per-feature parameters (default 1 and 0, the initialisation).
    eps : float, default 1e-5
    """

    def __init__(self, axes, x, gamma=None, beta=None, *, eps: float = 1e-5):
        self.steps = layer_norm_steps(np.atleast_2d(x), gamma, beta, eps=eps)
        s = self.steps
        marker = {"ms": 7} if s.size <= 16 else {"ms": 2}
        index = np.arange(1, s.size + 1)
        layers = [s.x, s.x, (s.x - s.mean) ** 2, s.xhat, s.y]
        guides = [None, s.mean, s.var, np.zeros_like(s.mean), None]
        self.panels: list[list] = []
        self.previews = []
        for ax, title, preview, values, guide in zip(
            axes, STEP_TITLES, STEP_PREVIEWS, layers, guides
        ):
            artists = []
            for row, colour, guide_colour in zip(
                range(values.shape[0]),
                (PALETTE["input"], PALETTE["positive"]),
                (PALETTE["mean"], PALETTE["negative"]),
            ):
                artists += ax.plot(index, values[row], "o", color=colour, **marker)
                if guide is not None:
                    artists.append(
                        ax.axhline(guide[row, 0], color=guide_colour, lw=2, ls="--", zorder=4)
                    )
            ax.set(title=title, xlabel="feature i")
            if s.size <= 16:
                ax.set_xticks(index)
                ax.set_xlim(
                    0.4, s.size + 0.6
                )  # room for the whole dot at the first and last feature
            ax.margins(y=0.15)
            self.panels.append(artists)
            self.previews.append(
                ax.text(
                    0.5,
                    0.5,
                    preview,
                    ha="center",
                    va="center",
                    transform=ax.transAxes,
                    fontsize=9,
                    color="#555555",
                    zorder=5,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.9},
                )
            )
        self.frame = Rectangle(
            (0, 0),
            1,
            1,
            fill=False,
            edgecolor=PALETTE["output"],
            lw=3,
            transform=axes[0].transAxes,
            clip_on=False,
            in_layout=False,
        )
        axes[0].add_artist(self.frame)
        self.axes = axes

    def key(self, ax) -> None:
        """Explain the marks in `ax` (the empty sixth cell of the grid): dots per sample, the dashed
        statistic, the frame."""
        rows = self.steps.x.shape[0]
        handles = [self.panels[1][2 * row] for row in range(rows)] + [
            self.panels[1][2 * row + 1] for row in range(rows)
        ]
        labels = [f"sample {n + 1}: entries" for n in range(rows)] if rows > 1 else ["entries xᵢ"]
        labels += (
            [f"sample {n + 1}: μ, σ², 0" for n in range(rows)]
            if rows > 1
            else ["μ (step 1), σ² (2), 0 (3)"]
        )
        handles.append(Rectangle((0, 0), 1, 1, fill=False, edgecolor=PALETTE["output"], lw=3))
        labels.append("frame: the current step")
        ax.axis("off")
        ax.legend(handles, labels, loc="center", fontsize=8, handlelength=1.5, borderaxespad=0.0)

    @property
    def artists(self) -> list:
        """The artists :meth:`show` changes."""
        return [a for panel in self.panels for a in panel] + self.previews + [self.frame]

    def show(self, step: int) -> None:
        """Show the panels up to `step` (0 = the input only, 4 = all), preview the others, and frame
        the current one."""
        for number, (panel, preview) in enumerate(zip(self.panels, self.previews)):
            for artist in panel:
                artist.set_visible(number <= step)
            preview.set_visible(number > step)
        self.frame.set_transform(self.axes[step].transAxes)


def steps_figure(
    x, gamma=None, beta=None, *, eps: float = 1e-5, step: int = 4, managed: bool = True
):
    """The input and the four steps of LayerNorm for one example, revealed up to `step` (chapter
    "The complete examples").

    Returns
    -------
    (Figure, StepPanels)
    """
    fig, axes = new_figure(2, 3, figsize=(5.4, 3.9), managed=managed)
    axes = axes.ravel()
    panels = StepPanels(axes[:5], x, gamma, beta, eps=eps)
    panels.key(axes[5])
    for ax in axes[[0, 3]]:
        ax.set_ylabel("value")
    panels.show(step)
    return fig, panels


def steps_companion(examples: dict):
    """Every step of every example, one column per example: the static stand-in for
    :func:`lnlib.book.explorers.complete_examples_explorer` on the website (chapter "The complete
    examples").

    Parameters
    ----------
    examples : dict of str to array_like
        Column label and input (one vector or a batch).
    """
    fig, axes = new_figure(5, len(examples), figsize=(5.4, 1.9 * 5), squeeze=False)
    for column, (label, x) in zip(axes.T, examples.items()):
        panels = StepPanels(column, x)
        panels.frame.set_visible(False)
        for preview in panels.previews:
            preview.set_visible(False)
        for ax, title in zip(column, STEP_TITLES):
            ax.set_title(f"{label}: {title}", fontsize=8)
    return fig


def before_after_figure(x, y, *, bins: int = 40):
    """Histograms of a vector's entries before and after LayerNorm, with mean and standard deviation
    marked (chapter "The complete examples").

    Parameters
    ----------
    x, y : array_like, shape (H,)
        The input and the output.
    """
    fig, axes = new_figure(1, 2, figsize=(5.4, 3.0))
    for ax, values, colour, title in zip(
        axes,
        (np.asarray(x), np.asarray(y)),
        (PALETTE["input"], PALETTE["output"]),
        ("before: x", "after: y = LayerNorm(x)"),
    ):
        mu, sd = values.mean(), values.std()
        shown_mean = round(mu, 3) + 0.0  # + 0.0 turns a rounded -0.0 into 0.0
        ax.hist(values, bins=bins, color=colour, alpha=0.85)
        ax.axvline(mu, color=PALETTE["neutral"], lw=2, label="mean")
        ax.axvspan(
            mu - sd,
            mu + sd,
            color=PALETTE["reference"],
            alpha=0.2,
            label="mean ± standard deviation",
        )
        # The numbers in the title, the key below: a legend inside would cover the tallest bars.
        ax.set(
            title=f"{title}\nmean {shown_mean:.3f}, std {sd:.3f}",
            xlabel="value of an entry",
            ylabel="number of entries",
        )
    fig.legend(
        handles=axes[0].get_legend_handles_labels()[0],
        loc="outside lower center",
        ncol=2,
        fontsize=8,
    )
    return fig
