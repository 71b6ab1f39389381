"""Figures for the chapter "Scale γ and shift β": what the per-feature scale and shift do to the
normalized values."""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D

from ..models.language import norm_name, outlier_norm
from .style import GREYS, PALETTE, PHONE_WIDTH, new_figure, panel_grid
from .why_normalize import TRAINED_STYLES, norm_axis

__all__ = [
    "GROUP_COLOURS",
    "grouped",
    "per_feature_figure",
    "GammaBetaPanels",
    "gamma_beta_figure",
    "gamma_beta_companion",
    "trained_gamma_beta_figure",
    "decay_gamma_figure",
]

#: One colour per feature (or feature group), in the order of the sliders: Okabe-Ito's seven hues,
#: then the darkest grey (black draws the guides and the βᵢ marks).
GROUP_COLOURS = (
    PALETTE["input"],
    PALETTE["mean"],
    PALETTE["positive"],
    PALETTE["negative"],
    PALETTE["output"],
    PALETTE["reference"],
    PALETTE["highlight"],
    GREYS[-1],
)


def grouped(values, size: int) -> np.ndarray:
    """Repeat each of the k `values` over a block of ``size // k`` consecutive features (`size` must
    divide evenly; chapter "Scale γ and shift β").

    The wide vector of the explorer has 512 features but only eight sliders per
    parameter: features 1-64 take the first value, 65-128 the second, and so on.
    """
    values = np.atleast_1d(np.asarray(values, dtype=float))
    if size % values.size:
        raise ValueError(f"{values.size} groups do not divide {size} features evenly.")
    return np.repeat(values, size // values.size)


def per_feature_figure(xhat_tokens, gamma, beta):
    """Histograms over many tokens of each feature, before and after the scale and shift (chapter
    "Scale γ and shift β").

    Left: every feature of x-hat has mean 0 and spread 1 across tokens. Right:
    feature i of y = gamma * x-hat + beta is centred on beta_i with spread abs(gamma_i).

    Parameters
    ----------
    xhat_tokens : array_like, shape (N, H)
        Normalized tokens, H <= 8 features.
    gamma, beta : array_like, shape (H,)
    """
    xhat_tokens = np.asarray(xhat_tokens, dtype=float)
    y = xhat_tokens * gamma + beta
    edges = np.linspace(min(y.min(), xhat_tokens.min()), max(y.max(), xhat_tokens.max()), 61)
    fig, (left, right) = new_figure(1, 2, figsize=(5.0, 3.8), sharex=True, sharey=True)
    for i, colour in enumerate(GROUP_COLOURS[: xhat_tokens.shape[1]]):
        left.hist(
            xhat_tokens[:, i],
            bins=edges,
            histtype="step",
            lw=1.8,
            color=colour,
        )
        right.hist(
            y[:, i],
            bins=edges,
            histtype="step",
            lw=1.8,
            color=colour,
            label=f"{i + 1}: γ={gamma[i]:g}, β={beta[i]:g}",
        )
        right.axvline(beta[i], color=colour, ls=":", lw=1.2)
    left.set(
        title="x̂: every feature has\nmean 0, spread 1",
        xlabel="value of the feature",
        ylabel="number of tokens",
    )
    right.set(
        title="y = γ x̂ + β: feature i\ncentred on βᵢ, spread |γᵢ|", xlabel="value of the feature"
    )
    # one legend below both panels: inside, it covered the dotted β lines (learner A, 2026-11-30)
    fig.legend(
        *right.get_legend_handles_labels(),
        loc="outside lower center",
        ncols=4,
        fontsize=7,
        title="feature: its γ and β",
        title_fontsize=7,
    )
    return fig


class GammaBetaPanels:
    """The explorer's two panels, redrawn in place by :meth:`update` (chapter "Scale γ and shift
    β").

    Left: a small vector's x-hat (hollow bars) and y (filled bars), one colour
    per feature, with each beta_i marked. Right: the histogram of a wide
    vector's y, stacked by feature group, over the fixed outline of its x-hat.

    Parameters
    ----------
    ax_small, ax_wide : matplotlib Axes
    xhat_small : array_like, shape (k,)
        The small normalized vector, k <= 8.
    xhat_wide : array_like, shape (H,)
        The wide normalized vector; H divisible by k.
    limits : (float, float)
        Half-widths of the fixed value ranges of the two panels, large enough for every slider
        setting.
    """

    def __init__(self, ax_small, ax_wide, xhat_small, xhat_wide, limits):
        small_limit, wide_limit = limits
        self.xhat_small = np.asarray(xhat_small, dtype=float)
        self.xhat_wide = np.asarray(xhat_wide, dtype=float)
        k = self.xhat_small.size
        index = np.arange(1, k + 1)
        colours = GROUP_COLOURS[:k]
        before = ax_small.bar(
            index, self.xhat_small, width=0.8, fill=False, edgecolor=PALETTE["neutral"], ls="--"
        )
        self.bars = ax_small.bar(index, self.xhat_small, width=0.5, color=colours)
        (self.beta_marks,) = ax_small.plot(
            index, np.zeros(k), "_", ms=88 / k, mew=2.5, color=PALETTE["neutral"]
        )
        ax_small.axhline(0, color=PALETTE["neutral"], lw=0.8)
        ax_small.set(
            xticks=index,
            xlim=(0.4, k + 0.6),
            ylim=(-small_limit, small_limit),
            xlabel="feature i",
            ylabel="value",
            title="a small vector,\nfeature by feature",
        )
        self.edges = np.linspace(-wide_limit, wide_limit, 81)
        outline, _ = np.histogram(self.xhat_wide, bins=self.edges)
        ax_wide.stairs(outline, self.edges, color=PALETTE["neutral"], ls="--", lw=1.2)
        block = self.xhat_wide.size // k
        self.stacks = [
            ax_wide.stairs(np.zeros(80), self.edges, fill=True, color=c) for c in colours
        ]
        #: The wide panel's fixed height; a taller bar is cut there and marked by a triangle
        #: (:attr:`clipped`).
        self.top = float(np.ceil(2.5 * outline.max()))
        (self.clip_marks,) = ax_wide.plot([], [], "^", color=PALETTE["neutral"], ms=8)
        ax_wide.set(
            xlim=(-wide_limit, wide_limit),
            ylim=(0, self.top),
            xlabel="value",
            ylabel="number of features",
            title=(
                f"a {self.xhat_wide.size}-vector's y, stacked\nby group i of {block} (shares γᵢ, "
                "βᵢ)"
            ),
        )
        # One legend for both panels, below them: inside, the moving bars would be drawn over it.
        handles = [self.bars[0], before, self.beta_marks, self.clip_marks]
        labels = [
            "y = γ x̂ + β (colour: feature or group i)",
            "x̂, before (dashed)",
            "βᵢ",
            "bar cut at the top",
        ]
        ax_small.figure.legend(
            handles, labels, loc="outside lower center", ncols=2, fontsize=9, markerscale=0.6
        )
        #: Bins of the last update taller than the wide panel (cut at its top, marked).
        self.clipped = 0

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [*self.bars, self.beta_marks, *self.stacks, self.clip_marks]

    def update(self, gamma, beta) -> tuple[np.ndarray, np.ndarray]:
        """Redraw for per-feature (per-group) `gamma` and `beta`; return the small and wide
        outputs."""
        gamma, beta = np.asarray(gamma, dtype=float), np.asarray(beta, dtype=float)
        y_small = gamma * self.xhat_small + beta
        for bar, height in zip(self.bars, y_small):
            bar.set_height(height)
        self.beta_marks.set_ydata(beta)
        y_wide = grouped(gamma, self.xhat_wide.size) * self.xhat_wide + grouped(
            beta, self.xhat_wide.size
        )
        baseline = np.zeros(self.edges.size - 1)
        for stack, part in zip(self.stacks, np.split(y_wide, len(self.stacks))):
            counts, _ = np.histogram(part, bins=self.edges)
            stack.set_data(baseline + counts, baseline=baseline.copy())
            baseline = baseline + counts
        cut = baseline > self.top
        self.clipped = int(cut.sum())
        centres = (self.edges[:-1] + self.edges[1:]) / 2
        self.clip_marks.set_data(centres[cut], np.full(self.clipped, 0.95 * self.top))
        return y_small, y_wide


def gamma_beta_figure(
    xhat_small, xhat_wide, gamma, beta, *, limits=(6.0, 12.0), managed: bool = True
):
    """The explorer's figure at one setting of gamma and beta (chapter "Scale γ and shift β").

    Returns
    -------
    (Figure, GammaBetaPanels)
    """
    fig, (left, right) = new_figure(
        1, 2, figsize=(5.4, 3.4), managed=managed, gridspec_kw={"width_ratios": [1, 1.6]}
    )
    panels = GammaBetaPanels(left, right, xhat_small, xhat_wide, limits)
    panels.update(gamma, beta)
    return fig, panels


def gamma_beta_companion(xhat_wide, settings: dict):
    """Small multiples: the histogram of a wide vector's y for a few settings of gamma and beta
    (chapter "Scale γ and shift β").

    The static stand-in for :func:`lnlib.book.explorers.gamma_beta_explorer` on the website.

    Parameters
    ----------
    xhat_wide : array_like, shape (H,)
    settings : dict of str to (gamma, beta)
        Panel title and the parameters: scalars (the same for every feature) or
        one value per feature group, as in the explorer.
    """
    xhat_wide = np.asarray(xhat_wide, dtype=float)
    fig, axes = panel_grid(len(settings), ncols=3, panel=(2.0, 2.6), sharex=True, sharey=True)
    edges = np.linspace(-6, 6, 61)
    for ax, (title, (gamma, beta)) in zip(np.atleast_1d(axes), settings.items()):
        y = grouped(gamma, xhat_wide.size) * xhat_wide + grouped(beta, xhat_wide.size)
        ax.hist(
            xhat_wide,
            bins=edges,
            histtype="step",
            ls="--",
            color=PALETTE["neutral"],
            label="x̂ (before)",
        )
        ax.hist(y, bins=edges, color=PALETTE["output"], alpha=0.85, label="y = γ x̂ + β")
        ax.set(xlabel="value")
        ax.set_title(
            f"{title}\nmean {round(y.mean(), 2) + 0.0:.2f}, σ² = {y.var():.2f}", fontsize=9
        )
        ax.tick_params(labelbottom=True)  # a panel with no panel below it needs its own value axis
    first = np.atleast_1d(axes)[0]
    first.set_ylabel("number of features")
    first.legend(loc="upper left", fontsize=7)
    return fig


#: How the trained γ/β figure draws each kind of norm, so the attention and FFN columns can be told
#: apart.
NORM_KIND_STYLES = {
    "attention": {"marker": "o", "color": PALETTE["input"]},
    "FFN": {"marker": "s", "color": PALETTE["output"]},
    "final": {"marker": "^", "color": PALETTE["neutral"]},
}


def norm_kind(name: str) -> str:
    """Which kind of norm ("attention", "FFN" or "final") a norm input's name (``"L1 attn"``) is
    (chapter "Scale γ and shift β")."""
    return {"attn": "attention", "ffn": "FFN"}.get(name.split()[-1], "final")


def trained_gamma_beta_figure(sees: dict):
    """The γ and β a Pre-LN character model learned, norm by norm, and the features one norm
    receives (chapter "Scale γ and shift β").

    Top and middle: every feature's γ and β at each norm (dots; a norm's 32 features in a column,
    nudged sideways to be seen); they all started at 1 and 0. Bottom: the root-mean-square of
    each feature of the norm input with the most outlying feature (:func:`outlier_norm`),
    untrained and trained.
    """
    gamma, beta = np.array(sees["gamma"]), np.array(sees["beta"])
    norms = sees["trained"]["norms"]
    fig, (ax_g, ax_b, ax_f) = new_figure(3, 1, figsize=(PHONE_WIDTH, 7.5))
    nudge = np.linspace(-0.25, 0.25, gamma.shape[1])
    for ax, values, start, name in ((ax_g, gamma, 1.0, "γ"), (ax_b, beta, 0.0, "β")):
        for k, row in enumerate(values):
            ax.plot(
                k + nudge,
                row,
                ms=2.5,
                alpha=0.7,
                ls="none",
                **NORM_KIND_STYLES[norm_kind(norms[k])],
            )
        ax.axhline(start, color=PALETTE["neutral"], lw=0.8, ls=":")
        ax.set_ylabel(f"learned {name}\n(started at {start:g})")
        norm_axis(ax, norms)
    k, feature, _ = outlier_norm(sees)
    features = np.arange(1, gamma.shape[1] + 1)
    for label, style in TRAINED_STYLES.items():
        ax_f.plot(features, sees[label]["feature_rms"][k], marker="o", ms=3, lw=1.2, **style)
    ax_f.set_xlabel(f"feature of what {norm_name(norms[k])} reads")
    ax_f.set_ylabel("RMS over tokens")
    fig.legend(*ax_f.get_legend_handles_labels(), loc="outside lower center", ncols=2)
    kinds = [Line2D([], [], ms=4, ls="none", **style) for style in NORM_KIND_STYLES.values()]
    fig.legend(kinds, list(NORM_KIND_STYLES), loc="outside upper center", ncols=3)
    return fig


#: Colour, marker and offset of each arm of the weight-decay runs (:mod:`lnlib.book.models.decay`).
DECAY_ARM_STYLES = {
    "norms decayed": {"color": PALETTE["mean"], "marker": "o", "offset": -0.15},
    "norms not decayed": {"color": PALETTE["input"], "marker": "s", "offset": 0.15},
}


def decay_gamma_figure(norm_means: dict):
    """Each norm's mean γ after training, with and without weight decay on γ and β, one dot per seed
    (chapter "Scale γ and shift β").

    Parameters
    ----------
    norm_means : dict of str to ndarray
        Per arm ("norms decayed", "norms not decayed"), an array of seeds x norms: each norm's
        mean γ, bottom to top, the last the final norm
        (``per_seed(record, "gamma_norm_means")`` of :mod:`lnlib.book.models.decay`).
    """
    fig, ax = new_figure(1, 1, figsize=(PHONE_WIDTH, 3.0))
    for arm, means in norm_means.items():
        style = DECAY_ARM_STYLES[arm]
        seeds, norms = means.shape
        positions = np.tile(np.arange(1, norms + 1) + style["offset"], seeds)
        ax.plot(
            positions,
            means.ravel(),
            ls="none",
            ms=4,
            alpha=0.8,
            label=arm,
            color=style["color"],
            marker=style["marker"],
        )
    ax.axhline(1.0, color=PALETTE["neutral"], lw=0.8, ls=":")
    # two norms a layer (attention's, then the FFN's), then the final norm
    layers = (norms - 1) // 2
    ticks = [*(2 * np.arange(1, layers + 1) - 0.5), norms]
    ax.set_xticks(ticks, [*(str(k) for k in range(1, layers + 1)), "final"])
    ax.set(
        xlabel="layer (its two norms), then final norm", ylabel="mean γ of the norm\n(started at 1)"
    )
    fig.legend(loc="outside lower center", ncols=2)
    return fig
