"""Figures for the chapter "Gradients through LayerNorm": the computation graph, the Jacobian, where
dx comes from, and RMSNorm's dx."""

from __future__ import annotations

import numpy as np
from matplotlib.collections import PolyCollection

from ...backward import backward_parts, layer_norm_jacobian
from ...rms import rms_backward_parts
from .style import PALETTE, PHONE_WIDTH, new_figure

__all__ = [
    "PATH_COLOURS",
    "GradientPanels",
    "computation_graph_figure",
    "equation",
    "jacobian_figure",
    "gradients_figure",
    "gradients_companion",
    "scaling_figure",
    "rms_gradient_figure",
]

#: One colour per path from x to xhat, shared by the graph, the bars and the text.
PATH_COLOURS = {
    "direct": PALETTE["reference"],
    "through_mean": PALETTE["mean"],
    "through_var": PALETTE["negative"],
}
PATH_LABELS = {
    "direct": "direct: $d\\hat x_j$",
    "through_mean": "via μ: $-\\mathrm{mean}(d\\hat x)$",
    "through_var": "via σ²: $-\\hat x_j\\,\\mathrm{mean}(d\\hat x\\,\\hat x)$",
}
JACOBIAN_CMAP = "PuOr"  # diverging and colour-blind safe
JACOBIAN_TITLE = r"$s\,\partial y_i/\partial x_j$"

LOSS = r"$\mathcal{L}$"  # the loss (L is a depth elsewhere in the book)
_NODES = {
    "x": (0.0, 0.0),
    "μ": (1.5, 0.75),
    "σ²": (2.9, 1.55),
    "x̂": (4.2, 0.0),
    "y": (5.6, 0.0),
    LOSS: (7.0, 0.0),
    "γ": (4.9, 1.0),
    "β": (4.9, -1.0),
}
_EDGES = [
    ("x", "μ", "through_mean"),
    ("μ", "σ²", "zero"),
    ("x", "σ²", "through_var"),
    ("μ", "x̂", "through_mean"),
    ("σ²", "x̂", "through_var"),
    ("x", "x̂", "direct"),
    ("x̂", "y", None),
    ("γ", "y", None),
    ("β", "y", None),
    ("y", LOSS, None),
]


def computation_graph_figure():
    """LayerNorm's computation graph, x to the loss ℒ, with the three paths from x to xhat coloured
    (chapter "Gradients through LayerNorm").

    Returns
    -------
    Figure
    """
    fig, ax = new_figure(figsize=(5.4, 3.2))
    for start, end, path in _EDGES:
        colour = PATH_COLOURS.get(path, PALETTE["neutral"])
        ax.annotate(
            "",
            xy=_NODES[end],
            xytext=_NODES[start],
            arrowprops={
                "arrowstyle": "-|>",
                "color": colour,
                "lw": 1.2 if path == "zero" else 2.2,
                "shrinkA": 14,
                "shrinkB": 14,
                "linestyle": "--" if path == "zero" else "-",
                "connectionstyle": "arc3,rad=-0.3" if (start, end) == ("x", "σ²") else "arc3",
            },
        )
    for name, (px, py) in _NODES.items():
        parameter = name in ("γ", "β")
        ax.text(
            px,
            py,
            name,
            ha="center",
            va="center",
            fontsize=13,
            bbox={
                "boxstyle": "circle",
                "fc": PALETTE["highlight"] if parameter else "white",
                "ec": PALETTE["neutral"],
            },
        )
    for path, label in PATH_LABELS.items():
        ax.plot([], [], color=PATH_COLOURS[path], lw=2.2, label=f"path {label}")
    ax.plot(
        [],
        [],
        color=PALETTE["neutral"],
        lw=1.2,
        ls="--",
        label="μ → σ²: ∂σ²/∂μ = −(2/H)·Σᵢ(xᵢ − μ) = 0, adds nothing",
    )
    # below the graph, not in its empty lower left: there its title ran into the β node
    fig.legend(
        loc="outside lower center",
        fontsize=8,
        title="x reaches x̂ three ways; dx sums one term per path (× 1/s)",
        title_fontsize=8,
    )
    ax.set(
        xlim=(-0.6, 7.6),
        ylim=(-1.35, 2.0),
        xticks=[],
        yticks=[],
        title="forward: left to right; backward: right to left, along every arrow",
    )
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    return fig


def jacobian_figure(x, gamma=None, *, eps: float = 0.0):
    """Heatmap of the Jacobian s*J of LayerNorm at one vector, and the eigenvalues that explain it
    (chapter "Gradients through LayerNorm").

    Left: the entries of ``s * dy_i/dx_j`` (s = sqrt(var + eps)), written in each
    cell. Right: the eigenvalues of ``s * J`` (gamma = 1: a projection when
    eps = 0, with eigenvalue 0 along the all-ones direction and along xhat).

    Returns
    -------
    Figure
    """
    x = np.asarray(x, dtype=float)
    parts = backward_parts(np.zeros_like(x), x, gamma, eps=eps)
    scaled = layer_norm_jacobian(x, gamma, eps=eps) * parts.sqrt_var_eps.item()
    fig, (ax_map, ax_eig) = new_figure(1, 2, figsize=(5.4, 3.0))
    limit = max(1.0, float(np.abs(scaled).max()))
    image = ax_map.imshow(scaled, cmap=JACOBIAN_CMAP, vmin=-limit, vmax=limit)
    for (i, j), value in np.ndenumerate(scaled):
        ax_map.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8)
    ticks = np.arange(x.size)
    ax_map.set(
        xticks=ticks,
        yticks=ticks,
        xticklabels=ticks + 1,
        yticklabels=ticks + 1,
        xlabel="input feature j",
        ylabel="output feature i",
        title=JACOBIAN_TITLE,
    )
    ax_map.grid(False)
    fig.colorbar(image, ax=ax_map, shrink=0.8)
    eigenvalues = np.sort(np.linalg.eigvals(scaled).real)
    ax_eig.stem(
        np.arange(1, x.size + 1), eigenvalues, linefmt=PALETTE["input"], markerfmt="o", basefmt=" "
    )
    ax_eig.axhline(0.0, color=PALETTE["neutral"], lw=1)
    ax_eig.set(
        xlabel="eigenvalue number (sorted)",
        ylabel="eigenvalue of s·J",
        xticks=np.arange(1, x.size + 1),
        ylim=(-0.15, 1.2 * max(1.0, eigenvalues.max())),
        title="two zeros: along (1, …, 1)\nand along x̂",
    )
    return fig


def _bar_verts(centres, heights, width: float) -> list:
    """Rectangles from 0 to each height, as polygon vertices (one collection draws faster than many
    bars)."""
    return [
        [(c - width / 2, 0.0), (c - width / 2, h), (c + width / 2, h), (c + width / 2, 0.0)]
        for c, h in zip(centres, heights)
    ]


class GradientPanels:
    """Three panels redrawn in place: the input, the three terms of s*dx, and the heatmap of s*J
    (chapter "Gradients through LayerNorm").

    The input's bars are one ``PolyCollection``, the three terms' bars another, and the heatmap
    one ``QuadMesh``, so an update redraws five artists, and two texts (the panels' note).

    Parameters
    ----------
    ax_input, ax_terms, ax_jac : matplotlib Axes
    size : int
        H, the vector's length.
    value_range : (float, float)
        The range of the input (the explorer's slider range), for fixed limits.
    term_limit : float
        Fixed limit of the terms panel; ``abs(s * dx)`` and each term stay below it
        for upstream gradients in the explorer's range.
    jac_limit : float
        Colour limit of the heatmap, ``max(abs(gamma))``, since
        ``abs(s * J[i, j]) <= abs(gamma[i])``.
    """

    WIDTH = 0.22

    def __init__(
        self,
        ax_input,
        ax_terms,
        ax_jac,
        size: int,
        value_range,
        term_limit: float,
        jac_limit: float,
    ):
        self.index = np.arange(1, size + 1)
        zeros = np.zeros(size)
        self.input_bars = PolyCollection(
            _bar_verts(self.index, zeros, 0.7), facecolors=PALETTE["input"], label="input $x_i$"
        )
        ax_input.add_collection(self.input_bars)
        (self.xhat_points,) = ax_input.plot(
            self.index, zeros, "D", color=PALETTE["output"], ms=7, label="$\\hat x_i$"
        )
        ax_input.axhline(0.0, color=PALETTE["neutral"], lw=1)
        low, high = value_range
        ax_input.set(
            xlabel="feature i",
            ylabel="value",
            xticks=self.index,
            xlim=(0.4, size + 0.6),
            ylim=(min(low, -2.0) * 1.05, max(high, 2.0) * 1.05),
            title="bars: input x; ◆: x̂",
        )
        self.offsets = dict(zip(PATH_COLOURS, (-self.WIDTH, 0.0, self.WIDTH)))
        self.term_bars = PolyCollection(
            self._term_verts({path: zeros for path in PATH_COLOURS}),
            facecolors=[colour for colour in PATH_COLOURS.values() for _ in range(size)],
        )
        ax_terms.add_collection(self.term_bars)
        for path, colour in PATH_COLOURS.items():
            ax_terms.fill_between([], [], color=colour, label=PATH_LABELS[path])
        (self.dx_points,) = ax_terms.plot(
            self.index, zeros, "o", color=PALETTE["neutral"], ms=8, label="sum: $s\\,dx_j$"
        )
        ax_terms.axhline(0.0, color=PALETTE["neutral"], lw=1)
        ax_terms.set(
            xlabel="feature i",
            ylabel="term × s",
            xticks=self.index,
            xlim=(0.4, size + 0.6),
            ylim=(-term_limit, term_limit),
            title="s·dx, s = √(σ² + ε): three terms and their sum",
        )
        # The terms' legend below the panels: inside them, the moving bars would be drawn over it.
        ax_terms.figure.legend(
            handles=ax_terms.get_legend_handles_labels()[0],
            loc="outside lower center",
            ncol=2,
            fontsize=8,
        )
        edges = np.arange(size + 1) + 0.5
        self.heatmap = ax_jac.pcolormesh(
            edges,
            edges,
            np.zeros((size, size)),
            cmap=JACOBIAN_CMAP,
            vmin=-jac_limit,
            vmax=jac_limit,
        )
        ax_jac.set(
            xticks=self.index,
            yticks=self.index,
            xlabel="input feature j",
            ylabel="output feature i",
            title=JACOBIAN_TITLE,
            aspect="equal",
        )
        ax_jac.invert_yaxis()
        ax_jac.grid(False)
        ax_jac.figure.colorbar(self.heatmap, ax=ax_jac, shrink=0.8)
        # where LayerNorm is undefined (a constant x with ε = 0), said in the panels that go blank
        self.notes = [
            ax.text(0.5, 0.5, "", transform=ax.transAxes, ha="center", va="center", fontsize=10)
            for ax in (ax_terms, ax_jac)
        ]

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [
            self.input_bars,
            self.xhat_points,
            self.term_bars,
            self.dx_points,
            self.heatmap,
            *self.notes,
        ]

    def _term_verts(self, terms: dict) -> list:
        """The bars of all three terms, path by path, as one list of polygons."""
        return [
            vert
            for path, offset in self.offsets.items()
            for vert in _bar_verts(self.index + offset, terms[path], self.WIDTH)
        ]

    def update(self, x, xhat, terms: dict, scaled_dx, scaled_jacobian, note: str = "") -> None:
        """Redraw for input `x`, its `xhat`, the three `terms` of s*dx (by path), their sum and
        s*J; `note`, when given, is written across the terms' and the heatmap's panels (why they
        are empty)."""
        for text in self.notes:
            text.set_text(note)
        self.input_bars.set_verts(_bar_verts(self.index, x, 0.7))
        self.xhat_points.set_ydata(xhat)
        self.term_bars.set_verts(self._term_verts(terms))
        self.dx_points.set_ydata(scaled_dx)
        self.heatmap.set_array(np.asarray(scaled_jacobian).ravel())


def scaled_pieces(x, dy, gamma=None, *, eps: float):
    """xhat, the three terms of s*dx by path, s*dx, s*J and s for one vector: what
    :class:`GradientPanels` shows (chapter "Gradients through LayerNorm")."""
    parts = backward_parts(dy, x, gamma, eps=eps)
    std = parts.sqrt_var_eps.item()
    terms = {path: getattr(parts, path) * std for path in PATH_COLOURS}
    return parts.xhat, terms, parts.dx * std, layer_norm_jacobian(x, gamma, eps=eps) * std, std


def gradients_figure(
    x,
    dy,
    gamma=None,
    *,
    eps: float = 0.0,
    value_range=(-5.0, 5.0),
    term_limit: float = 8.0,
    managed: bool = True,
):
    """The explorer's picture: input and xhat, the three terms of dx (times s), and the heatmap of
    s*J (chapter "Gradients through LayerNorm").

    Returns
    -------
    (Figure, GradientPanels)
    """
    x = np.asarray(x, dtype=float)
    jac_limit = 1.0 if gamma is None else float(np.max(np.abs(gamma)))
    # Input and Jacobian side by side; the terms, with their legend, across the whole width below.
    fig, axes = new_figure(2, 2, figsize=(5.4, 4.3), managed=managed)
    grid = axes[1, 0].get_gridspec()
    for ax in axes[1]:
        ax.remove()
    panels = GradientPanels(
        axes[0, 0],
        fig.add_subplot(grid[1, :]),
        axes[0, 1],
        x.size,
        value_range,
        term_limit,
        jac_limit,
    )
    xhat, terms, scaled_dx, scaled_jac, _ = scaled_pieces(x, dy, gamma, eps=eps)
    panels.update(x, xhat, terms, scaled_dx, scaled_jac)
    return fig, panels


def gradients_companion(examples: dict, gamma=None):
    """Small multiples of the explorer: for each example (a row), the three terms of s*dx (left) and
    s*J (right) (chapter "Gradients through LayerNorm").

    The static stand-in for :func:`lnlib.book.explorers.gradients_explorer` on the website.

    Parameters
    ----------
    examples : dict of str to (x, dy, eps)
        Title of each row and the setting it shows.
    """
    fig, axes = new_figure(
        len(examples), 2, figsize=(5.4, 2.3 * len(examples) + 0.6), squeeze=False
    )
    pieces = {
        title: scaled_pieces(x, dy, gamma, eps=eps) for title, (x, dy, eps) in examples.items()
    }
    limit = 1.15 * max(
        max(np.abs(p[2]).max(), *(np.abs(t).max() for t in p[1].values())) for p in pieces.values()
    )
    jac_limit = (
        1.0 if gamma is None else float(np.max(np.abs(gamma)))
    )  # abs(s * J[i, j]) <= abs(gamma[i])
    for column, (title, (_, terms, scaled_dx, scaled_jac, _)) in enumerate(pieces.items()):
        ax_terms, ax_jac = axes[column, 0], axes[column, 1]
        index = np.arange(1, len(scaled_dx) + 1)
        handles = [
            ax_terms.bar(
                index + offset, terms[path], 0.22, color=PATH_COLOURS[path], label=PATH_LABELS[path]
            )
            for offset, path in zip((-0.22, 0.0, 0.22), PATH_COLOURS)
        ]
        handles += ax_terms.plot(
            index, scaled_dx, "o", color=PALETTE["neutral"], ms=7, label="sum: $s\\,dx_j$"
        )
        ax_terms.axhline(0.0, color=PALETTE["neutral"], lw=1)
        ax_terms.set(title=title, xticks=index, xlabel="feature i", ylim=(-limit, limit))
        image = ax_jac.imshow(scaled_jac, cmap=JACOBIAN_CMAP, vmin=-jac_limit, vmax=jac_limit)
        ticks = np.arange(len(scaled_dx))
        ax_jac.set(
            xticks=ticks,
            yticks=ticks,
            xticklabels=index,
            yticklabels=index,
            xlabel="input j",
            ylabel="output i",
        )
        ax_jac.grid(False)
    for ax_terms, _ in axes:
        ax_terms.set_ylabel("term × s")
    axes[0, 1].set_title(JACOBIAN_TITLE)
    fig.legend(
        handles=handles, loc="outside upper center", ncol=2, fontsize=8
    )  # the three paths, then their sum
    fig.colorbar(image, ax=axes[:, 1], shrink=0.6, label="s·J entry")
    return fig


def scaling_figure(alphas, ratios: dict):
    """How the gradient at alpha*x compares with the gradient at x, for several eps (chapter
    "Gradients through LayerNorm").

    Parameters
    ----------
    alphas : array of float
        The scale factors (> 0), on a log axis.
    ratios : dict of str to array
        For each label (an eps), ``alpha * |dx(alpha x)| / |dx(x)|``: 1 where the
        source's "1/alpha" rule holds.
    """
    fig, ax = new_figure(figsize=(5.4, 3.2))
    for (label, ratio), colour in zip(
        ratios.items(),
        (PALETTE["input"], PALETTE["mean"], PALETTE["positive"], PALETTE["negative"]),
    ):
        ax.plot(alphas, ratio, lw=2, color=colour, label=label)
    ax.axhline(1.0, color=PALETTE["neutral"], lw=1, ls="--", label="the 1/α rule")
    ax.set(
        xscale="log",
        xlabel="scale factor α applied to the input",
        ylabel="α·|∇ at αx| / |∇ at x|",
        title="the 1/α rule holds only when ε ≪ α²·σ²",
    )
    ax.legend(fontsize=8)
    return fig


def rms_gradient_figure(x, dy, leftover: dict, leftover_formula: dict):
    """RMS norm's dx in two dimensions, as its two terms, and what ε leaves of Jx (chapter
    "Gradients through LayerNorm").

    Parameters
    ----------
    x, dy : array_like
        One input of two entries and its upstream gradient (γ = 1, ε = 0).
    leftover, leftover_formula : dict of float to float
        For each ε / mean(x²), ‖Jx‖ / ‖x̂‖ measured and predicted
        (:func:`lnlib.book.experiments.gradients.jacobian_geometry`).
    """
    x, dy = np.asarray(x, dtype=np.float64), np.asarray(dy, dtype=np.float64)
    parts = rms_backward_parts(dy, x, eps=0.0)
    # stacked, PHONE_WIDTH wide: a phone shows its smallest text (9 pt) at 11.5 px
    # (style.phone_text_px)
    fig, (geo, eps_ax) = new_figure(2, 1, figsize=(PHONE_WIDTH, 7.6))
    radius = np.linalg.norm(x)
    turn = np.linspace(0, 2 * np.pi, 200)
    geo.plot(radius * np.cos(turn), radius * np.sin(turn), color=PALETTE["neutral"], lw=0.8, ls=":")
    geo.plot(
        [0, 1.6 * x[0]],
        [0, 1.6 * x[1]],
        color=PALETTE["neutral"],
        lw=0.8,
        ls="--",
        label="αx: same y",
    )
    arrows = (
        (x, parts.direct, PATH_COLOURS["direct"], "direct: rstd·$d\\hat x$"),
        (x + parts.direct, parts.through_ms, PATH_COLOURS["through_var"], "via mean(x²)"),
        (x, parts.dx, PALETTE["neutral"], "dx: their sum"),
    )
    for start, step, colour, label in arrows:
        geo.annotate(
            "", start + step, start, arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 2}
        )
        geo.plot([], [], color=colour, lw=2, label=label)
    geo.plot(*x, "o", color=PALETTE["input"], ms=5, zorder=0, label="x")
    tips = np.array([x, x + parts.direct, x + parts.dx, 1.6 * x])
    low, high = min(tips.min(), 0.0) - 0.2, tips.max() + 0.2
    geo.set(
        xlim=(low, high),
        ylim=(low, high),
        box_aspect=1,
        xlabel="x₁",
        ylabel="x₂",
        title="dx is tangent to the circle |x| = const",
    )
    geo.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    ratios = np.array(sorted(leftover))
    eps_ax.plot(
        ratios,
        [leftover_formula[t] for t in ratios],
        color=PALETTE["reference"],
        lw=2,
        label="ε / (mean(x²) + ε)",
    )
    eps_ax.plot(
        ratios, [leftover[t] for t in ratios], "o", color=PALETTE["neutral"], ms=4, label="measured"
    )
    eps_ax.set(
        xscale="log",
        yscale="log",
        xlabel="ε / mean(x²)",
        ylabel="|Jx| / |x̂|",
        title="what ε leaves along x",
    )
    eps_ax.legend(fontsize=9, loc="upper left")
    return fig


def equation(lhs: str, rhs, per_line: int = 2):
    """``lhs = rhs`` as displayed math, `per_line` terms a line (chapter "Gradients through
    LayerNorm").

    Parameters
    ----------
    lhs : str
        LaTeX for the left-hand side, such as ``r"d\\mu"``.
    rhs : sympy expression
        Written by :func:`lnlib.symbolic.to_latex_lines` with the chapter's gradient symbols.
    per_line : int
        Terms per line, so that long sums wrap on a phone.

    Returns
    -------
    IPython.display.Math
        What a notebook cell displays.
    """
    from IPython.display import Math

    from ... import symbolic

    return Math(symbolic.to_latex_lines(lhs, rhs, per_line=per_line))
