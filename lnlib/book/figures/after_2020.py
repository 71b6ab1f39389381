"""Figures for the chapter "LayerNorm after 2020": seven placements side by side, QK-norm's bound,
DyT's S-curve."""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FormatStrFormatter, LogLocator, MaxNLocator, NullFormatter

from ..models.placements import PLACEMENT_LABELS, SUMMARY_MEASURES, placement_summary
from .style import PALETTE, PHONE_WIDTH, new_figure

__all__ = [
    "COLOURS",
    "PlacementPanels",
    "dyt_figure",
    "explorer_figure",
    "placements_figure",
    "qk_figure",
    "stability_figure",
    "STABILITY_FOLDED",
    "STABILITY_OPEN",
    "summary_figure",
]

#: One Okabe-Ito colour and line style per placement, in every figure of the chapter.
COLOURS = {
    "post": PALETTE["mean"],
    "pre": PALETTE["input"],
    "peri": PALETTE["positive"],
    "olmo2": PALETTE["negative"],
    "mixln": PALETTE["output"],
    "deepnorm": PALETTE["neutral"],
    "lns": PALETTE["reference"],
}
STYLES = {
    "post": "-",
    "pre": "-",
    "peri": "--",
    "olmo2": "--",
    "mixln": "-.",
    "deepnorm": ":",
    "lns": "-.",
}

#: The per-layer measures: attribute of PlacementProfile, axis label, log scale.
MEASURES = {
    "stream_sq": ("hidden-state variance\n$\\|x_l\\|^2/H$", True),
    "grad_norm": ("weight gradient\n$\\|\\partial\\mathcal{L}/\\partial W^{(l)}\\|_F$", True),
    "angle": ("change made by layer l\nangle$(x_{l-1}, x_l)/\\pi$", False),
    "entropy": ("attention entropy\n(nats)", False),
}


def _log_axis(ax, subs=(1.0, 3.0)) -> None:
    """A logarithmic y-axis labelled with plain numbers, at `subs` times each power of ten."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _series(profile, measure: str):
    """Layers, mean over seeds and standard deviation of one measure."""
    rows = getattr(profile, measure)
    start = 0 if measure == "stream_sq" else 1
    return np.arange(start, start + rows.shape[1]), rows.mean(axis=0), rows.std(axis=0)


def placements_figure(profiles: dict, measures=("stream_sq", "grad_norm", "angle")):
    """Every placement on the same axes: one row per measure, layer on the x-axis, mean ± sd over
    seeds as a band.

    Parameters
    ----------
    profiles : dict of str to lnlib.book.models.placements.PlacementProfile
        One profile per placement, all of the same depth (as from
        :func:`lnlib.book.models.placements.profile_table`).
    """
    # one column, PHONE_WIDTH wide: a phone shows its text at 12.8 px (style.phone_text_px)
    fig, axes = new_figure(
        len(measures), 1, figsize=(PHONE_WIDTH, 2.3 * len(measures) + 1.2), sharex=True
    )
    for ax, measure in zip(axes, measures):
        label, log = MEASURES[measure]
        for placement, profile in profiles.items():
            layers, mean, spread = _series(profile, measure)
            ax.plot(
                layers,
                mean,
                STYLES[placement],
                color=COLOURS[placement],
                lw=1.8,
                label=PLACEMENT_LABELS[placement],
            )
            low = np.maximum(mean - spread, mean / 3) if log else mean - spread
            ax.fill_between(layers, low, mean + spread, color=COLOURS[placement], alpha=0.15, lw=0)
        ax.set_ylabel(label)
        if log:
            _log_axis(ax)
    axes[-1].set_xlabel("layer l (1 = bottom)")
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=2)
    return fig


def qk_figure(scales, plain: list, normed: list, bound: float, tokens: int):
    """Attention logits and entropy as the query/key scale grows, without and with QK-norm.

    Parameters
    ----------
    scales : sequence of float
    plain, normed : list of dict
        :func:`lnlib.book.models.placements.logit_statistics` at each scale, without and with
        QK-norm.
    bound : float
        √d for heads of width d, QK-norm's ceiling.
    tokens : int
        T, so the plot can mark uniform attention's entropy ln T.
    """
    # stacked, not side by side: a phone shows its text at 12.8 px (style.phone_text_px)
    fig, (left, right) = new_figure(2, 1, figsize=(PHONE_WIDTH, 5.4))
    for rows, colour, marker, label in (
        (plain, PALETTE["mean"], "o", "plain"),
        (normed, PALETTE["input"], "s", "QK-norm"),
    ):
        left.plot(scales, [r["max_logit"] for r in rows], marker=marker, color=colour, label=label)
        right.plot(scales, [r["entropy"] for r in rows], marker=marker, color=colour, label=label)
    left.axhline(bound, color=PALETTE["neutral"], ls=":", lw=1)
    left.text(scales[0], bound * 1.3, "$\\sqrt{d}$", fontsize=10)
    right.axhline(np.log(tokens), color=PALETTE["neutral"], ls=":", lw=1)
    right.text(
        scales[-1],
        np.log(tokens) * 1.03,
        f"uniform, ln {tokens}",
        fontsize=10,
        va="bottom",
        ha="right",
    )
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.set_xlabel("scale λ of $W_q, W_k$")
    left.set_yscale("log")
    left.set(ylabel="largest |logit|", title="logits")
    right.set(
        ylabel="mean entropy (nats)", title="attention entropy", ylim=(0, 1.25 * np.log(tokens))
    )
    left.legend(loc="upper left")
    return fig


def dyt_figure(heavy: tuple, heavy_fit: dict, normal: tuple, normal_fit: dict, width: int):
    """LayerNorm's input against its output, entry by entry: heavy-tailed tokens (left) and normal
    tokens (right), with the fitted tanh and line.

    Parameters
    ----------
    heavy, normal : (ndarray, ndarray)
        Inputs and outputs, as from :func:`lnlib.book.models.dyt.s_curve`.
    heavy_fit, normal_fit : dict
        :func:`lnlib.book.models.dyt.fit_tanh` of each.
    width : int
        The tokens' width H, so the plot can mark LayerNorm's ceiling √(H − 1).
    """
    # stacked, not side by side: a phone shows its text at 12.8 px (style.phone_text_px)
    fig, axes = new_figure(2, 1, figsize=(PHONE_WIDTH, 5.6))
    ceiling = np.sqrt(width - 1)
    for ax, (x, y), fit, title in zip(
        axes, (heavy, normal), (heavy_fit, normal_fit), ("heavy-tailed tokens", "normal tokens")
    ):
        span = np.linspace(x.min(), x.max(), 300)
        ax.plot(x, y, ".", ms=2, color=PALETTE["reference"], alpha=0.4, rasterized=True)
        ax.plot(span, fit["gamma"] * np.tanh(fit["alpha"] * span), color=PALETTE["mean"], lw=2)
        ax.plot(span, fit["slope"] * span, "--", color=PALETTE["neutral"], lw=1)
        for sign in (-1, 1):
            ax.axhline(sign * ceiling, color=PALETTE["neutral"], ls=":", lw=1)
        ax.set(title=title, xlabel="LayerNorm input $x_i$")
    for ax in axes:
        ax.set_ylabel("output $\\hat x_i$")
        ax.set_ylim(-1.15 * ceiling, 1.15 * ceiling)
    handles = [
        Line2D([], [], marker=".", ls="", color=PALETTE["reference"], label="entries"),
        Line2D([], [], color=PALETTE["mean"], lw=2, label="$\\gamma\\tanh(\\alpha x)$ fit"),
        Line2D([], [], color=PALETTE["neutral"], ls="--", label="line fit"),
        Line2D([], [], color=PALETTE["neutral"], ls=":", label="$\\pm\\sqrt{H-1}$"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=2)
    return fig


def _centre_and_bar(values: np.ndarray, log: bool):
    """Mean and sd of the seeds' values (on a log axis: geometric mean, bar from it ÷ to × the
    geometric sd)."""
    if log:
        logs = np.log(values)
        centre, sd = np.exp(logs.mean()), logs.std(ddof=1)
        return centre, [[centre - centre * np.exp(-sd)], [centre * np.exp(sd) - centre]]
    return values.mean(), values.std(ddof=1)


def summary_figure(
    profiles: dict,
    *,
    tokens: int = 8,
    derived_slope: float = 2.0,
    rms: dict | None = None,
    measures=None,
):
    """The placements compared at a glance: one small panel per summary, one row per placement, mean
    ± sd over seeds.

    Chapter "LayerNorm after 2020" reads this instead of a paragraph of numbers per placement. Each
    panel is one of :data:`lnlib.book.models.placements.SUMMARY_MEASURES`; a dot is the mean over
    the seeds and its bar ± one standard deviation (on a log axis the geometric mean, the bar from
    it divided to it multiplied by the geometric sd). Guides mark the slope the sign argument
    derives for Peri-LN and OLMo 2, uniform attention's entropy ln T, and a gradient ratio of 1.

    Parameters
    ----------
    profiles : dict of str to lnlib.book.models.placements.PlacementProfile
        One profile per placement (as from :func:`lnlib.book.models.placements.profile_table`).
    tokens : int, default 8
        T, the sequence length of the profiles, for the entropy guide.
    derived_slope : float, default 2
        The expected growth per layer of Peri-LN's and OLMo 2's stream, for the slope guide.
    rms : dict, optional
        The same placements with every norm an RMSNorm (``profile_table(..., norm="rms")``): each
        row then shows LayerNorm's dot (filled, above) and RMSNorm's (a hollow square, below).
    measures : sequence of str, optional
        The keys of :data:`~lnlib.book.models.placements.SUMMARY_MEASURES` to show, two panels a
        row; all six by default.
    """
    placements = list(profiles)
    measures = list(SUMMARY_MEASURES) if measures is None else list(measures)
    norms = {"LayerNorm": profiles} if rms is None else {"LayerNorm": profiles, "RMSNorm": rms}
    summaries = {
        name: {placement: placement_summary(table[placement]) for placement in placements}
        for name, table in norms.items()
    }
    nrows = -(-len(measures) // 2)
    fig, axes = new_figure(
        nrows,
        2,
        figsize=(PHONE_WIDTH, 7.0 * nrows / 3 + (0.4 if rms else 0.0)),
        sharey=True,
        squeeze=False,
    )
    for ax in axes.ravel()[len(measures) :]:
        ax.remove()
    rows = np.arange(len(placements))[::-1]  # the first placement on top
    offsets = {"LayerNorm": 0.0} if rms is None else {"LayerNorm": 0.18, "RMSNorm": -0.18}
    marker = {"LayerNorm": "o", "RMSNorm": "s"}
    guides = {"slope": derived_slope, "entropy": np.log(tokens), "grad_ratio": 1.0}
    for ax, measure in zip(axes.ravel(), measures):
        label, log = SUMMARY_MEASURES[measure]
        if measure in guides:
            ax.axvline(guides[measure], color=PALETTE["neutral"], ls=":", lw=1)
        for name, summary in summaries.items():
            for row, placement in zip(rows, placements):
                centre, bar = _centre_and_bar(summary[placement][measure], log)
                colour = COLOURS[placement]
                ax.errorbar(
                    centre,
                    row + offsets[name],
                    xerr=bar,
                    fmt=marker[name],
                    ms=4,
                    color=colour,
                    mfc=colour if name == "LayerNorm" else "white",
                    capsize=2,
                    lw=1.2,
                )
        if log:
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(LogLocator(base=10, numticks=4))
            ax.xaxis.set_minor_formatter(NullFormatter())
        else:
            ax.xaxis.set_major_locator(MaxNLocator(3))
            ax.set_xlim(left=0)
        ax.set_xlabel(label)
        ax.grid(axis="y", color=PALETTE["neutral"], alpha=0.1)
    short = {**PLACEMENT_LABELS, "olmo2": "OLMo 2"}
    axes[0, 0].set_yticks(rows, [short[placement] for placement in placements])
    axes[0, 0].set_ylim(-0.6, len(placements) - 0.4)
    if rms is not None:
        handles = [
            Line2D([], [], ls="", marker=marker[name], ms=5, color="black", mfc=fill, label=name)
            for name, fill in (("LayerNorm", "black"), ("RMSNorm", "white"))
        ]
        fig.legend(handles=handles, loc="outside lower center", ncols=2)
    return fig


class PlacementPanels:
    """The explorer's four panels: variance, gradient, change per layer and attention entropy of one
    profile.

    Axis limits are fixed when drawn, so :meth:`update` only moves the lines (chapter "LayerNorm
    after 2020").
    """

    def __init__(self, axes, max_depth: int, limits: dict):
        self.lines, self.bands = {}, {}
        for ax, measure in zip(axes, MEASURES):
            label, log = MEASURES[measure]
            self.bands[measure] = ax.fill_between([0, 1], [0, 0], [0, 0], alpha=0.2, lw=0)
            (self.lines[measure],) = ax.plot([], [], "o-", ms=2.5, lw=1.8)
            ax.set(xlim=(-0.5, max_depth + 0.5), ylim=limits[measure], ylabel=label)
            if log:
                _log_axis(ax, subs=(1.0,))
            ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))
        for ax in axes[-2:]:
            ax.set_xlabel("layer l")

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return list(self.bands.values()) + list(self.lines.values())

    def update(self, profile) -> None:
        """Show one :class:`lnlib.book.models.placements.PlacementProfile` in its placement's
        colour."""
        colour = COLOURS[profile.placement]
        for measure in MEASURES:
            layers, mean, spread = _series(profile, measure)
            log = MEASURES[measure][1]
            low = np.maximum(mean - spread, mean / 3) if log else mean - spread
            self.lines[measure].set_data(layers, mean)
            self.lines[measure].set_color(colour)
            band = self.bands[measure]
            band.set_verts(
                [np.column_stack([np.r_[layers, layers[::-1]], np.r_[low, (mean + spread)[::-1]]])]
            )
            band.set_color(colour)


def explorer_figure(profile, *, max_depth: int, limits: dict, managed: bool = True):
    """The explorer's figure for one profile, a 2 x 2 grid of the four measures.

    Returns
    -------
    (Figure, PlacementPanels)
    """
    fig, axes = new_figure(2, 2, figsize=(5.4, 4.4), managed=managed)
    panels = PlacementPanels(axes.ravel(), max_depth, limits)
    panels.update(profile)
    return fig, panels


#: The stability map's colour per depth (shallow blue, deep vermilion) and line style per schedule.
DEPTH_COLOURS = (PALETTE["input"], PALETTE["mean"])
SCHEDULE_STYLES = {0: ("--", "no warm-up"), 1: ("-", "warm-up")}


#: The stability map's panels, two to a row: each placement beside its rival (DeepNorm by Post-LN,
#: whose stall it fixes), LayerNorm beside RMSNorm, with and without QK-norm, and DyT last.
STABILITY_PANELS = (
    "post", "deepnorm", "peri", "mixln", "pre", "pre_rms", "pre_qk", "pre_rms_qk", "dyt",
)  # fmt: skip


#: The variants chapter 12's stability map shows open; the others fold under it (learner B: "cut
#: Fig. 39 down to four panels").
STABILITY_OPEN = ("post", "pre", "pre_qk", "pre_rms")
#: The variants folded under it.
STABILITY_FOLDED = tuple(name for name in STABILITY_PANELS if name not in STABILITY_OPEN)


def stability_figure(sweep: dict, unigram: float, panels=STABILITY_PANELS):
    """Held-out loss after training against the peak learning rate, one panel per variant of
    `panels`, in the order of :data:`STABILITY_PANELS` (chapter "LayerNorm after 2020").

    Parameters
    ----------
    sweep : dict
        The ``sweep`` of :func:`lnlib.book.models.language.load_results`: ``final`` and ``diverged``
        indexed [placement][depth][rate][schedule][seed].
    unigram : float
        The loss of predicting every character from the characters' frequencies alone
        (:func:`lnlib.book.models.language.unigram_loss`), drawn dotted: a run at that line has
        learned no use of context.
    panels : sequence of str
        The variants to draw (:data:`STABILITY_OPEN` or :data:`STABILITY_FOLDED`); all by default.

    Each line is the median over the seeds, its band the smallest to the largest seed; colour is
    the depth, solid with warm-up and dashed without. A seed that diverged is left out of the
    line and marked with a cross at the top of its panel.
    """
    from ..models.language import PLACEMENT_LABELS

    rates = np.array(sweep["rates"])
    final = np.array(sweep["final"], dtype=float)
    diverged = np.array(sweep["diverged"], dtype=bool)
    final[diverged] = np.nan
    top = np.nanmax(final) + 0.05
    # two columns PHONE_WIDTH wide, so a phone shows the text at the size of chapter 12's other
    # figures
    shown = [name for name in sweep["placements"] if name in panels]
    count = len(shown)
    rows = -(-count // 2)
    fig, axes = new_figure(rows, 2, figsize=(PHONE_WIDTH, 2.1 * rows), sharex=True, sharey=True)
    axes = axes.ravel()
    for ax in axes[count:]:
        ax.remove()
    axes = axes[:count]
    order = sorted(shown, key=lambda n: STABILITY_PANELS.index(n))
    for ax, name in zip(axes, order):
        p = sweep["placements"].index(name)
        ax.axhline(unigram, color=PALETTE["neutral"], ls=":", lw=1)
        for d, colour in enumerate(DEPTH_COLOURS[: len(sweep["depths"])]):
            for warm, (style, _) in SCHEDULE_STYLES.items():
                runs = final[p, d, :, warm]
                ax.plot(rates, np.nanmedian(runs, axis=1), style, color=colour, lw=1.6)
                ax.fill_between(
                    rates, np.nanmin(runs, axis=1), np.nanmax(runs, axis=1),
                    color=colour, alpha=0.12, lw=0,
                )  # fmt: skip
                lost = diverged[p, d, :, warm].any(axis=1)
                ax.plot(rates[lost], np.full(lost.sum(), top), "x", color=colour, ms=6, mew=1.6)
        ax.set_xscale("log")
        ax.set_title(PLACEMENT_LABELS[name])
    for ax in axes[len(axes) - 2 :]:
        ax.set_xlabel("peak learning rate")
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.xaxis.set_major_locator(LogLocator(base=10, numticks=4))
    for ax in axes[::2]:
        ax.set_ylabel("loss (nats/char)")
    handles = [
        Line2D([], [], color=colour, ls=style, label=f"{depth} layers,\n{schedule}")
        for depth, colour in zip(sweep["depths"], DEPTH_COLOURS)
        for style, schedule in SCHEDULE_STYLES.values()
    ]
    handles.append(
        Line2D([], [], color=PALETTE["neutral"], ls=":", label="character\nfrequencies only")
    )
    if diverged.any():
        handles.append(
            Line2D([], [], color=PALETTE["neutral"], ls="", marker="x", label="a seed diverged")
        )
    fig.legend(handles=handles, loc="outside lower center", ncols=2)
    return fig
