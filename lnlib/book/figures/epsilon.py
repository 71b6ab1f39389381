r"""Figures for the chapter "Epsilon": how ε shrinks the output, inside the square root and added to
σ.

For an input with (biased) variance :math:`\sigma^2`, the normalized values have
standard deviation :math:`\sqrt{\sigma^2 / (\sigma^2 + \varepsilon)}` when ε sits inside the
square root (PyTorch, Flax, Keras) and :math:`\sigma / (\sigma + \varepsilon)` when ε is added to σ.
"""

from __future__ import annotations

import numpy as np

from ...variants import std_inside, std_outside
from ..tools.prose import number
from .style import PALETTE, PHONE_WIDTH, new_figure, panel_grid

__all__ = [
    "OutputBars",
    "StdCurves",
    "EpsilonMarker",
    "epsilon_figure",
    "epsilon_companion",
    "output_variance_figure",
]

#: Fixed ε axis of the curves: 1e-11 to 100, 16 points a decade; from below the explorer's smallest
#: σ² (δ = 1e-5: 5e-11), so that its ε = σ² diamond never leaves the axis (a student review), to
#: two decades past δ = 1's σ² = 0.5, so that its fall is not squeezed at the edge (learner A10).
EPS_GRID = np.logspace(-11, 2, 209)
#: Every curve of the chapter's figures is ε inside the square root (orange) or ε added to σ (sky
#: blue); the frameworks are told apart by name, never by a colour, so orange means one thing in the
#: whole chapter.
FRAMEWORK_LINE = {"color": PALETTE["neutral"], "lw": 1, "ls": ":", "alpha": 0.6}


class OutputBars:
    """The normalized values of one vector, ε inside the square root against ε added to σ, beside
    the ε = 0 values (chapter "Epsilon").

    Parameters
    ----------
    ax : matplotlib Axes
    size : int
        H, the number of entries.
    limit : float
        Fixed half-height of the value axis (the largest ``abs(x̂)`` reachable, e.g. sqrt(H - 1)).
    """

    def __init__(self, ax, size: int, limit: float):
        index = np.arange(1, size + 1)
        self.inside = ax.bar(
            index - 0.2,
            np.zeros(size),
            width=0.4,
            color=PALETTE["output"],
            label="ε inside √ (frameworks)",
        )
        self.outside = ax.bar(
            index + 0.2, np.zeros(size), width=0.4, color=PALETTE["reference"], label="ε added to σ"
        )
        (self.exact,) = ax.plot(
            index,
            np.zeros(size),
            "_",
            color=PALETTE["neutral"],
            ms=28,
            mew=2,
            label="ε = 0 (short black bars)",
        )
        ax.axhline(0.0, color=PALETTE["neutral"], lw=1)
        ax.set(
            xlabel="feature index i",
            ylabel="normalized value $\\hat{x}_i$",
            xticks=index,
            ylim=(-1.15 * limit, 1.15 * limit),
        )
        ax.set_title("the normalized vector x̂,\nthree ways")

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [*self.inside, *self.outside, self.exact]

    def update(self, exact, inside, outside) -> None:
        """Show the normalized values without ε (`exact`), with ε inside the root, and with ε added
        to σ."""
        for bars, heights in ((self.inside, inside), (self.outside, outside)):
            for bar, height in zip(bars, heights):
                bar.set_height(height)
        self.exact.set_ydata(exact)


class StdCurves:
    """The output's standard deviation against ε (log scale) for one input variance, both placements
    of ε (chapter "Epsilon").

    Parameters
    ----------
    ax : matplotlib Axes
    framework_eps : dict of str to float, optional
        Defaults to mark as vertical lines, e.g. ``lnlib.variants.FRAMEWORK_EPS``.
    """

    def __init__(self, ax, framework_eps=None):
        (self.inside,) = ax.semilogx(
            EPS_GRID, np.ones_like(EPS_GRID), color=PALETTE["output"], lw=2, label="ε inside √"
        )
        (self.outside,) = ax.semilogx(
            EPS_GRID,
            np.ones_like(EPS_GRID),
            color=PALETTE["reference"],
            lw=2,
            ls="--",
            label="ε added to σ",
        )
        # a diamond, not a tick: the bars' ε = 0 values are short black bars (one name, one shape
        # each)
        (self.variance_mark,) = ax.plot(
            [], [], "D", color=PALETTE["neutral"], ms=6, label="ε = σ² (black diamond)"
        )
        for name, eps, side in _label_sides(framework_eps or {}):
            ax.axvline(eps, **FRAMEWORK_LINE)
            # upright along its line, above the axes
            ax.text(
                eps,
                1.02,
                name,
                transform=ax.get_xaxis_transform(),
                fontsize=9,
                rotation=90,
                ha=side,
                va="bottom",
                color=PALETTE["neutral"],
            )
        ax.set(
            xlabel="ε (log scale)",
            ylabel="std of the output $\\hat{x}$",
            xlim=(EPS_GRID[0], EPS_GRID[-1]),
            ylim=(0.0, 1.12),
            xticks=[1e-9, 1e-6, 1e-3, 1.0],
        )

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.inside, self.outside, self.variance_mark]

    def update(self, variance: float) -> None:
        """Redraw both curves for an input of (biased) variance `variance`."""
        self.inside.set_ydata(std_inside(variance, EPS_GRID))
        self.outside.set_ydata(std_outside(variance, EPS_GRID))
        self.variance_mark.set_data([variance], [std_inside(variance, variance)])


def _label_sides(framework_eps: dict[str, float]) -> list[tuple[str, float, str]]:
    """Each default's name, ε and how its upright label sits on its line: centred, or, for the
    smaller of two defaults within a decade and a half (Flax's 1e-6 beside PyTorch's 1e-5), to the
    left of its line, so that on a panel of thirteen decades the two labels do not touch."""
    ordered = sorted(framework_eps.items(), key=lambda item: item[1])
    crowded = [abs(np.log10(b[1] / a[1])) < 1.5 for a, b in zip(ordered, ordered[1:])] + [False]
    return [
        (name, eps, "right" if close else "center") for (name, eps), close in zip(ordered, crowded)
    ]


class EpsilonMarker:
    """The current ε on a :class:`StdCurves` panel: a vertical line and the two outputs' standard
    deviations (chapter "Epsilon").

    Parameters
    ----------
    ax : matplotlib Axes
        The :class:`StdCurves` panel.
    """

    def __init__(self, ax):
        self.line = ax.axvline(1e-5, color=PALETTE["neutral"], lw=1.5)
        (self.dots,) = ax.plot([1e-5, 1e-5], [1.0, 1.0], "o", color=PALETTE["neutral"], ms=6)

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.line, self.dots]

    def update(self, eps: float, std_in: float, std_out: float) -> None:
        """Move the marker to `eps`, with dots at the two standard deviations."""
        self.line.set_xdata([eps, eps])
        self.dots.set_data([eps, eps], [std_in, std_out])


def epsilon_figure(pattern, *, framework_eps=None, managed: bool = True):
    """The explorer's figure (chapter "Epsilon"): the normalized vector three ways, and the output
    std against ε.

    Parameters
    ----------
    pattern : array_like
        The direction of the input's spread (its deviations are ``δ * pattern``); fixes the bar
        limits.
    framework_eps : dict of str to float, optional
        Framework defaults marked on the ε axis.
    managed : bool, default True
        False for a free-standing figure (explorers).

    Returns
    -------
    (Figure, OutputBars, StdCurves, EpsilonMarker)
    """
    pattern = np.asarray(pattern, dtype=float)
    centred = pattern - pattern.mean()
    limit = float(np.max(np.abs(centred)) / np.sqrt(np.mean(centred**2)))
    # stacked, PHONE_WIDTH wide: a phone shows its text at 11.5 px or more (style.phone_text_px)
    fig, (left, right) = new_figure(2, 1, figsize=(PHONE_WIDTH, 5.6), managed=managed)
    bars = OutputBars(left, pattern.size, limit)
    curves = StdCurves(right, framework_eps)
    right.set_title(
        "std of x̂ against ε\n(vertical black line: the current ε)",
        pad=44 if framework_eps else None,
    )
    # One legend for both panels, below them: inside, the moving bars and curves would run under it.
    handles = [bars.inside, bars.outside, bars.exact, curves.variance_mark]
    labels = [
        "ε inside √ (frameworks)",
        "ε added to σ",
        "ε = 0 (short black bars)",
        "ε = σ² (black diamond)",
    ]
    # markerscale: the ε = 0 mark is a short bar across each pair; at full size its legend entry
    # would read as a long line, the current ε's shape
    fig.legend(handles, labels, loc="outside lower center", ncols=1, fontsize=9, markerscale=0.4)
    return fig, bars, curves, EpsilonMarker(right)


def epsilon_companion(variances: dict[str, float], *, framework_eps=None):
    """Small multiples of :class:`StdCurves`, one per input variance (chapter "Epsilon").

    The static stand-in for :func:`lnlib.book.explorers.epsilon_explorer` on the website: each
    panel sweeps ε over thirteen decades (1e-11 to 100) for one input spread, with the framework
    defaults marked.

    Parameters
    ----------
    variances : dict of str to float
        Title of each panel and the input's (biased) variance σ² it shows.
    framework_eps : dict of str to float, optional
        Framework defaults marked on the ε axis.

    Returns
    -------
    Figure
    """
    # two narrow panels a row, PHONE_WIDTH in all: a phone shows the text at 11.5 px or more
    # (style.phone_text_px)
    fig, axes = panel_grid(len(variances), panel=(PHONE_WIDTH / 2, 3.0), sharey=True)
    for ax, (title, variance) in zip(np.atleast_1d(axes), variances.items()):
        StdCurves(ax, framework_eps).update(variance)
        ax.set_title(  # two lines: on one, a row's two titles ran into each other (learner A6)
            f"{title}\nσ² = {number(variance, '.2g')}",
            fontsize=9,
            fontweight="bold",
            pad=44 if framework_eps else None,
        )
        ax.set_ylabel("")
    first = np.atleast_1d(axes)[0]
    first.set_ylabel("std of the output $\\hat{x}$")
    # A row's titles sit a clear gap below the row above, so on a phone they read as the titles of
    # the panels under them, not as captions of the x-axes above them.
    fig.get_layout_engine().set(hspace=0.2)
    fig.legend(
        *first.get_legend_handles_labels(), loc="outside lower center", ncols=2
    )  # inside, it covers a curve
    return fig


def output_variance_figure(framework_eps: dict[str, float], variances=np.logspace(-10, 2, 241)):
    """The output variance σ² / (σ² + ε) against the input variance σ², one curve per framework
    default ε (chapter "Epsilon").

    Parameters
    ----------
    framework_eps : dict of str to float
        Name and ε of each curve, e.g. ``lnlib.variants.FRAMEWORK_EPS``.
    variances : array_like
        Input variances to plot (log-spaced).

    Returns
    -------
    Figure
    """
    variances = np.asarray(variances, dtype=float)
    # PHONE_WIDTH wide: a phone shows its text at 12.8 px (style.phone_text_px)
    fig, ax = new_figure(figsize=(PHONE_WIDTH, 3.2))
    ordered = sorted(framework_eps.items(), key=lambda item: item[1])
    for k, (name, eps) in enumerate(ordered):
        # one colour for all: each curve is ε inside the root, as in the chapter's other figures;
        # named in place
        ax.semilogx(variances, variances / (variances + eps), color=PALETTE["output"], lw=2)
        ax.plot([eps], [0.5], "o", color=PALETTE["neutral"])
        # the smallest ε is named on the empty left of its curve, the others on the empty right
        # below theirs, each a label's height lower than the one before (in a phone-wide figure they
        # would meet)
        left = k == 0
        ax.annotate(
            f"{name}\nε = {number(eps, '.0e')}",
            (eps, 0.5),
            xytext=(-7, 4) if left else (7, -4 - 26 * (k - 1)),
            textcoords="offset points",
            ha="right" if left else "left",
            va="bottom" if left else "top",
            fontsize=9,
        )
    ax.axhline(1.0, color=PALETTE["neutral"], lw=1, ls=":")
    ax.set(
        xlabel="input variance σ² (log scale)",
        ylabel="output variance σ² / (σ² + ε)",
        title="LayerNorm's output variance is 1\nonly when σ² ≫ ε (dots: σ² = ε gives 1/2)",
    )
    return fig
