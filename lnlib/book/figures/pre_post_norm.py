"""Figures for the chapter "Pre-norm vs post-norm": the two blocks, and Xiong et al.'s three
findings on our model."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Polygon
from matplotlib.ticker import FormatStrFormatter, LogLocator, MaxNLocator, NullFormatter

from .style import PALETTE, new_figure

__all__ = [
    "COLOURS",
    "EXPLORED_WEIGHT",
    "ProfilePanels",
    "block_diagrams",
    "depth_figure",
    "layer_figure",
    "profile_companion",
    "profile_figure",
    "stream_figure",
    "training_figure",
]

#: One colour per placement, used by every figure of the chapter.
COLOURS = {"post": PALETTE["mean"], "pre": PALETTE["input"]}
LABELS = {"post": "post-norm", "pre": "pre-norm"}
#: The weight whose gradient per layer the explorer and its companion plot: W1, on which the
#: chapter's warm-up argument rests (learner B27: the explorer plotted W2).
EXPLORED_WEIGHT = "W1"
BOX_COLOURS = {
    "norm": PALETTE["output"],
    "sub": PALETTE["reference"],
    "io": "white",
    "add": "white",
}

POST_STEPS = [
    ("$x_\\ell$", "io"),
    ("Attention", "sub"),
    ("+", "add"),
    ("LayerNorm", "norm"),
    ("FFN", "sub"),
    ("+", "add"),
    ("LayerNorm", "norm"),
    ("$x_{\\ell+1}$", "io"),
]
PRE_STEPS = [
    ("$x_\\ell$", "io"),
    ("LayerNorm", "norm"),
    ("Attention", "sub"),
    ("+", "add"),
    ("LayerNorm", "norm"),
    ("FFN", "sub"),
    ("+", "add"),
    ("$x_{\\ell+1}$", "io"),
]


def _draw_flow(ax, steps, skips, title):
    """Boxes from bottom to top, arrows between them, and residual (skip) arrows on the left."""
    heights = np.arange(len(steps)) * 1.0
    for (label, kind), y in zip(steps, heights):
        if kind == "add":
            ax.plot(0, y, "o", ms=16, mfc="white", mec=PALETTE["neutral"], zorder=3)
        elif kind != "io":
            ax.add_patch(
                FancyBboxPatch(
                    (-0.9, y - 0.28),
                    1.8,
                    0.56,
                    boxstyle="round,pad=0.02",
                    fc=BOX_COLOURS[kind],
                    ec=PALETTE["neutral"],
                    alpha=0.9,
                )
            )
        ax.text(0, y, label, ha="center", va="center", fontsize=10, zorder=4)
    for low, high in zip(heights[:-1], heights[1:]):
        ax.add_patch(
            FancyArrowPatch(
                (0, low + 0.3),
                (0, high - 0.3),
                arrowstyle="-|>",
                mutation_scale=10,
                color=PALETTE["neutral"],
            )
        )
    for start, end in skips:
        path = [
            (0, heights[start] + 0.35),
            (-1.4, heights[start] + 0.35),
            (-1.4, heights[end]),
            (-0.2, heights[end]),
        ]
        ax.plot(*zip(*path[:-1]), color=PALETTE["positive"], lw=2)
        ax.add_patch(
            FancyArrowPatch(
                path[-2],
                path[-1],
                arrowstyle="-|>",
                mutation_scale=10,
                color=PALETTE["positive"],
                lw=2,
            )
        )
    ax.set(xlim=(-1.8, 1.2), ylim=(-0.6, heights[-1] + 0.6))
    ax.set_title(title, fontsize=9)
    ax.axis("off")


def block_diagrams():
    """The post-norm and the pre-norm layer side by side, input at the bottom, residual paths in
    green."""
    fig, (left, right) = new_figure(1, 2, figsize=(5.4, 4.6))
    # Three-line titles: on two lines, the halves' titles ran into each other.
    _draw_flow(
        left,
        POST_STEPS,
        [(0, 2), (3, 5)],
        "post-norm\n(original Transformer, BERT):\nLayerNorm on the residual stream",
    )
    _draw_flow(
        right,
        PRE_STEPS,
        [(0, 3), (3, 6)],
        "pre-norm\n(GPT-2, GPT-3; LLaMA, RMSNorm):\nLayerNorm only on the branch",
    )
    right.text(
        0,
        -0.55,
        "a final LayerNorm follows the last layer",
        ha="center",
        fontsize=9,
        style="italic",
    )
    return fig


def _plain_log_axis(ax) -> None:
    """A logarithmic y-axis with ticks at 1, 2, 3, 5, 7, 10, ... labelled as plain numbers (not 1.5:
    it overprints 2)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0, 7.0)))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _errorbars(ax, x, rows, placement, **kwargs):
    """Mean over seeds (rows) with +-1 standard deviation error bars."""
    ax.errorbar(
        x,
        rows.mean(axis=0),
        yerr=rows.std(axis=0),
        color=COLOURS[placement],
        marker="o",
        ms=4,
        capsize=3,
        label=LABELS[placement],
        **kwargs,
    )


def stream_figure(profiles: dict):
    """Finding 1: E||x_ℓ||^2 / H across layers for each placement, with Lemma 2's band for pre-norm.

    Parameters
    ----------
    profiles : dict of str to lnlib.book.experiments.pre_post_norm.InitProfile
        One profile per placement, of the same depth.
    """
    fig, ax = new_figure(figsize=(5.4, 3.2))
    depth = next(iter(profiles.values())).depth
    layers = np.arange(depth + 1)
    ax.fill_between(
        layers,
        1 + layers / 2,
        1 + 1.5 * layers,
        color=COLOURS["pre"],
        alpha=0.12,
        label="Lemma 2: between $1 + \\ell/2$ and $1 + 3\\ell/2$",
    )
    for placement, profile in profiles.items():
        _errorbars(ax, layers, profile.stream_sq, placement)
    ax.set(
        xlabel="layer ℓ (the residual stream after ℓ layers)",
        ylabel="$\\|x_\\ell\\|^2 / H$ (mean over tokens)",
    )
    ax.legend(loc="upper left")
    return fig


def depth_figure(depths, last_grads: dict):
    """Finding 2: the last layer's ||dL/dW2|| against depth L, and the same times sqrt(L).

    Parameters
    ----------
    depths : sequence of int
    last_grads : dict of str to ndarray of shape (seeds, len(depths))
        Per placement, one batch's gradient norm per seed and depth.
    """
    depths = np.asarray(depths)
    fig, (left, right) = new_figure(1, 2, figsize=(5.4, 3.0))
    for placement, rows in last_grads.items():
        _errorbars(left, depths, rows, placement)
        _errorbars(right, depths, rows * np.sqrt(depths), placement)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(depths, [str(d) for d in depths])
        ax.set_xlabel("depth L (number of layers)")
    _plain_log_axis(left)
    left.set(
        ylabel="$\\|\\partial\\mathcal{L} / \\partial W_2\\|_F$, last layer",
        title="gradient of the last FFN weight",
    )
    right.set(
        ylabel="gradient norm $\\times \\sqrt{L}$",
        title="times $\\sqrt{L}$: flat means $\\propto 1/\\sqrt{L}$",
    )
    right.set_ylim(bottom=0)
    left.legend()
    return fig


def layer_figure(profiles: dict, weights=("W1", "W2")):
    """Finding 3: per-layer gradient norms of the FFN weights at initialization, one panel per
    weight."""
    fig, axes = new_figure(1, len(weights), figsize=(5.4, 3.2), sharey=True)
    depth = next(iter(profiles.values())).depth
    layers = np.arange(1, depth + 1)
    for ax, weight in zip(np.atleast_1d(axes), weights):
        for placement, profile in profiles.items():
            _errorbars(ax, layers, profile.grad_norm[weight], placement)
        ax.set(
            xlabel="layer index l (1 = bottom)",
            title=(
                f"$\\|\\partial\\mathcal{{L}} / \\partial {weight[0]}_{weight[1]}\\|_F$ per layer"
            ),
        )
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    np.atleast_1d(axes)[0].set_ylabel("gradient norm (mean ± sd over seeds)")
    np.atleast_1d(axes)[0].legend()
    return fig


class ProfilePanels:
    """The explorer's two panels, redrawn in place: the stream norm per layer, and the gradient
    norm per layer of the FFN's first weight, W1, whose post-norm gradients grow toward the top in
    Xiong et al.'s Figure 3 and, in part, in ours.

    Parameters
    ----------
    ax_stream, ax_grad : matplotlib Axes
    max_depth : int
        The largest depth shown; fixes the x-axes.
    stream_max : float
        Fixes the stream panel's y-axis.
    grad_range : (float, float)
        Fixes the gradient panel's (logarithmic) y-axis.
    """

    def __init__(self, ax_stream, ax_grad, max_depth: int, stream_max: float, grad_range):
        self.band = Polygon(
            np.zeros((4, 2)),
            closed=True,
            color=COLOURS["pre"],
            alpha=0.12,
            label="Lemma 2 band\n(pre-norm)",
        )
        ax_stream.add_patch(self.band)
        (self.stream,) = ax_stream.plot([], [], "o-", ms=3, lw=2)
        self.grad_bandfill = Polygon(np.ones((4, 2)), closed=True, alpha=0.2)
        ax_grad.add_patch(self.grad_bandfill)
        (self.grad,) = ax_grad.plot([], [], "o-", ms=3, lw=2)
        ax_stream.set(
            xlim=(-0.5, max_depth + 0.5),
            ylim=(0, stream_max),
            xlabel="layer ℓ",
            ylabel="$\\|x_\\ell\\|^2 / H$",
            title="residual stream\nafter l layers",
        )
        _plain_log_axis(ax_grad)
        ax_grad.set(
            xlim=(0.5, max_depth + 0.5),
            ylim=grad_range,
            xlabel="layer index l (1 = bottom)",
            ylabel="$\\|\\partial\\mathcal{L} / \\partial W_1\\|_F$",
            title="FFN gradient per layer\n(mean ± sd over seeds)",
        )
        # the band's entry, shown only where the band is (pre-norm; learner B: a legend entry for a
        # band the post-norm panel does not draw)
        self.legend = ax_stream.legend(loc="upper left", fontsize=8)

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.band, self.legend, self.stream, self.grad_bandfill, self.grad]

    def update(self, profile) -> None:
        """Show one :class:`lnlib.book.experiments.pre_post_norm.InitProfile`; the spread band's
        lower edge stops at a tenth of the mean, as the axis is logarithmic."""
        colour = COLOURS[profile.placement]
        layers = np.arange(profile.depth + 1)
        self.stream.set_data(layers, profile.stream_sq.mean(axis=0))
        self.stream.set_color(colour)
        self.legend.set_visible(profile.placement == "pre")
        upper = 1 + 1.5 * layers if profile.placement == "pre" else np.ones_like(layers)
        lower = 1 + layers / 2 if profile.placement == "pre" else np.ones_like(layers)
        self.band.set_xy(np.column_stack([np.r_[layers, layers[::-1]], np.r_[lower, upper[::-1]]]))
        index = np.arange(1, profile.depth + 1)
        mean, spread = profile.mean(EXPLORED_WEIGHT), profile.spread(EXPLORED_WEIGHT)
        self.grad.set_data(index, mean)
        self.grad.set_color(colour)
        floor = np.maximum(mean - spread, mean / 10)
        self.grad_bandfill.set_xy(
            np.column_stack([np.r_[index, index[::-1]], np.r_[floor, (mean + spread)[::-1]]])
        )
        self.grad_bandfill.set_color(colour)


def profile_figure(profile, *, max_depth: int, stream_max: float, grad_range, managed: bool = True):
    """The explorer's figure for one profile.

    Returns
    -------
    (Figure, ProfilePanels)
    """
    fig, (left, right) = new_figure(1, 2, figsize=(5.4, 3.0), managed=managed)
    panels = ProfilePanels(left, right, max_depth, stream_max, grad_range)
    panels.update(profile)
    return fig, panels


def profile_companion(grid: dict, depths, width: int):
    """Small multiples standing in for the explorer: for each depth, the stream norm (top) and the
    W1 gradient per layer (bottom), both placements.

    Parameters
    ----------
    grid : dict
        ``(placement, depth, width) -> InitProfile``, as from
        :func:`lnlib.book.experiments.pre_post_norm.profile_grid`.
    depths : sequence of int
        One column per depth.
    width : int
    """
    fig, axes = new_figure(2, len(depths), figsize=(5.4, 4.8), sharey="row")
    for column, depth in enumerate(depths):
        top, bottom = axes[0, column], axes[1, column]
        for placement in COLOURS:
            profile = grid[(placement, depth, width)]
            top.plot(
                np.arange(depth + 1),
                profile.stream_sq.mean(axis=0),
                "o-",
                ms=3,
                color=COLOURS[placement],
                label=LABELS[placement],
            )
            bottom.errorbar(
                np.arange(1, depth + 1),
                profile.mean(EXPLORED_WEIGHT),
                yerr=profile.spread(EXPLORED_WEIGHT),
                color=COLOURS[placement],
                marker="o",
                ms=3,
                capsize=2,
            )
        top.set(title=f"L = {depth}, H = {width}", xlabel="layer ℓ", xticks=[0, depth // 2, depth])
        bottom.set(
            xlabel="layer index l", xticks=[1, depth // 2, depth]
        )  # three ticks: a narrow panel has room for no more
        _plain_log_axis(bottom)
    axes[0, 0].set_ylabel("$\\|x_\\ell\\|^2 / H$")
    axes[1, 0].set_ylabel("$\\|\\partial\\mathcal{L} / \\partial W_1\\|_F$")
    axes[0, 0].legend(loc="upper left")
    return fig


def training_figure(sweep, shown: float):
    """Training runs over several seeds: loss curves at one learning rate (left) and the final loss
    at every rate (right).

    Colour by placement; solid lines and markers with warm-up, dashed lines and open markers
    without. Bands and error bars are ±1 standard deviation across seeds.

    Parameters
    ----------
    sweep : lnlib.book.models.training.WarmupSweep
        The runs, as from :func:`lnlib.book.models.training.warmup_sweep`.
    shown : float
        The learning rate whose curves the left panel shows (one of ``sweep.rates``).
    """
    fig, (left, right) = new_figure(1, 2, figsize=(5.4, 3.9), gridspec_kw={"width_ratios": [3, 2]})
    final = sweep.final()
    steps = np.arange(1, sweep.losses.shape[-1] + 1)
    positions = np.arange(len(sweep.rates))
    for p_index, placement in enumerate(("post", "pre")):
        for warmed in (False, True):
            label = f"{LABELS[placement]}, " + (
                f"{sweep.warmup}-step warm-up" if warmed else "no warm-up"
            )
            curves = sweep.curves(shown, placement, warmed)
            mean, spread = curves.mean(axis=0), curves.std(axis=0)
            left.plot(steps, mean, "-" if warmed else "--", color=COLOURS[placement], label=label)
            left.fill_between(
                steps,
                mean - spread,
                mean + spread,
                color=COLOURS[placement],
                alpha=0.2 if warmed else 0.1,
                lw=0,
            )
            rows = final[:, p_index, int(warmed)]
            right.errorbar(
                positions + (0.08 if warmed else -0.08) + (p_index - 0.5) * 0.3,
                rows.mean(axis=-1),
                yerr=rows.std(axis=-1),
                color=COLOURS[placement],
                marker="o",
                ms=5,
                capsize=3,
                ls="-" if warmed else "--",
                mfc=COLOURS[placement] if warmed else "white",
            )
    start = sweep.losses[..., 0].mean()
    for p_index, placement in enumerate(("post", "pre")):  # each placement's own starting loss
        right.axhline(
            sweep.losses[:, p_index, ..., 0].mean(),
            color=COLOURS[placement],
            lw=1,
            ls=":",
            label=f"{LABELS[placement]} start",
        )
    left.set(
        xlabel="training step",
        ylabel="training loss",
        title=f"learning rate {shown:g},\n{len(sweep.seeds)} seeds (band: ±1 sd)",
    )
    handles = left.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    # below the panels: inside, the curves' legend covered the curves and the start lines' the
    # final losses
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8)
    right.set(
        xticks=positions,
        xticklabels=[f"{lr:g}" for lr in sweep.rates],
        xlabel="peak learning rate",
        ylabel="mean loss over the last 10 steps",
        title=f"after {len(steps)} steps\n(open: no warm-up)",
    )
    right.set_ylim(0, 1.15 * start)
    return fig
