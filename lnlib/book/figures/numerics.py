"""Figures for the chapter "Computing it right: numerics": how wrong each variance algorithm is, and
what that does to LayerNorm."""

from __future__ import annotations

import textwrap

import numpy as np

from .style import PALETTE, new_figure

__all__ = [
    "METHOD_STYLE",
    "ErrorPanels",
    "error_vs_shift_figure",
    "output_scatter_figure",
    "numerics_companion",
    "running_sum_figure",
    "RMS_KERNEL_STYLE",
    "rms_half_figure",
]

#: Colour, marker and label of each variance algorithm, shared by every figure of the chapter.
METHOD_STYLE = {
    "one_pass": {"color": PALETTE["mean"], "marker": "o", "label": "one-pass E[x²] − E[x]²"},
    "two_pass": {"color": PALETTE["input"], "marker": "s", "label": "two-pass"},
    "welford": {"color": PALETTE["positive"], "marker": "^", "label": "Welford + Chan merge"},
}
#: Where errors are drawn: a floor for exact results, and a ceiling row for inf / NaN.
ERROR_FLOOR, ERROR_CEILING = 1e-17, 1e4
SHIFT_LIMITS = (0.8, 1.25e5)


#: On the inf / NaN row each method sits a little above or below the line, so that two methods
#: that both overflow show both markers (one would hide the other).
CEILING_OFFSET = {"one_pass": 2.5, "two_pass": 1.0, "welford": 0.4}


def _plottable(errors, method: str | None = None) -> np.ndarray:
    """Errors clipped to the axes: exact results at the floor, inf (overflow or NaN) on the ceiling
    row.

    With `method`, an inf sits at that method's :data:`CEILING_OFFSET` times the ceiling.
    """
    errors = np.asarray(errors, dtype=np.float64)
    ceiling = ERROR_CEILING * CEILING_OFFSET.get(method, 1.0)
    return np.where(np.isinf(errors), ceiling, np.clip(errors, ERROR_FLOOR, ERROR_CEILING))


#: Labels of the error panels' y-axis ticks: every fourth decade, so a narrow panel stays legible.
ERROR_TICKS = (1e-16, 1e-12, 1e-8, 1e-4, 1.0)
#: The box behind a label inside an error panel: the page's background, a little see-through.
LABEL_BOX = {"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.0}
#: The axis label of the shift, shared by every panel of the chapter.
SHIFT_LABEL = "shift κ = mean / std"


def _error_axes(ax, ylabel: str | None = None, band: str | None = "wrong by 100 % or more") -> None:
    """Log-log axes of an error against the shift, the "100 % wrong" band shaded, the inf / NaN row
    at the top.

    `band` labels the band inside the panel (None: no label, for narrow panels).
    """
    ax.set(
        xscale="log",
        yscale="log",
        xlim=SHIFT_LIMITS,
        ylim=(ERROR_FLOOR / 3, ERROR_CEILING * 30),
        ylabel=ylabel,
    )
    ax.set_yticks(ERROR_TICKS, [f"$10^{{{round(np.log10(t))}}}$" for t in ERROR_TICKS])
    ax.set_xticks([1.0, 1e1, 1e2, 1e3, 1e4, 1e5], ["1", "", "$10^2$", "", "$10^4$", ""])
    ax.minorticks_off()
    ax.axhspan(1.0, ERROR_CEILING / 3, color=PALETTE["highlight"], alpha=0.25, lw=0)
    ax.axhline(ERROR_CEILING, color=PALETTE["neutral"], lw=0.8, ls=":")
    # the labels sit on a pale box above the curves, which would otherwise run through them
    # (learner B37, 2026-11-30: the one-pass curve crossed "≥ 100 % wrong")
    label = {"fontsize": 8, "zorder": 5, "bbox": LABEL_BOX}
    ax.text(SHIFT_LIMITS[0] * 1.2, ERROR_CEILING * 2, "inf / NaN", va="bottom", **label)
    if band:
        ax.text(SHIFT_LIMITS[0] * 1.2, 30.0, band, va="center", **label)


class ErrorPanels:
    """Two panels redrawn in place: variance relative error and LayerNorm output error against the
    shift.

    Each panel has one curve per method (a whole sweep) and one marker per
    method at the current shift, with a vertical line there. The axes limits
    are fixed, so an explorer only moves artists (a full redraw of log axes
    costs over 100 ms; redrawing six curves and markers costs a few).

    Parameters
    ----------
    ax_variance, ax_output : matplotlib Axes
        Side by side with a shared y-axis (only the left one gets the y label), or in one column.
    band_labels : bool, default True
        Label the "100 % wrong" band inside each panel (False for narrow panels).
    """

    TITLES = {
        "variance_error": "variance: relative error",
        "output_error": "output: max |y − y_exact|",
    }
    BANDS = {"variance_error": "≥ 100 % wrong", "output_error": "error ≥ output"}

    def __init__(self, ax_variance, ax_output, *, band_labels: bool = True):
        self.curves, self.markers = {}, {}
        for key, ax in (("variance_error", ax_variance), ("output_error", ax_output)):
            _error_axes(ax, band=self.BANDS[key] if band_labels else None)
            ax.set_title(self.TITLES[key])
            for method, style in METHOD_STYLE.items():
                (self.curves[key, method],) = ax.plot(
                    [], [], color=style["color"], lw=1.5, label=style["label"]
                )
                (self.markers[key, method],) = ax.plot(
                    [], [], style["marker"], color=style["color"], ms=8, mec="black"
                )
        self.cursors = [
            ax.axvline(1.0, color=PALETTE["neutral"], lw=1, ls="--")
            for ax in (ax_variance, ax_output)
        ]
        ax_variance.set_ylabel("error (log scale)")
        for ax in (ax_variance, ax_output):
            ax.set_xlabel(SHIFT_LABEL)

    def legend(self, figure, **kwargs):
        """One legend of the three methods for the whole figure, above the panels (never over the
        curves)."""
        handles = [self.curves["variance_error", method] for method in METHOD_STYLE]
        return figure.legend(
            handles=handles,
            loc="outside upper center",
            ncol=3,
            fontsize=8,
            handlelength=1.5,
            columnspacing=1.0,
            **kwargs,
        )

    @property
    def artists(self) -> list:
        """The artists :meth:`show_sweep` and :meth:`show_point` change."""
        return [*self.curves.values(), *self.markers.values(), *self.cursors]

    def show_sweep(self, sweep) -> None:
        """Draw the curves of an :class:`lnlib.book.experiments.numerics.ErrorSweep`."""
        for (key, method), line in self.curves.items():
            line.set_data(sweep.shifts, _plottable(getattr(sweep, key)[method], method))

    def show_point(self, shift: float, errors) -> None:
        """Put the markers at `shift`; `errors` is an
        :class:`lnlib.book.experiments.numerics.ShiftErrors`, or None to hide them."""
        for cursor in self.cursors:
            cursor.set_xdata([shift, shift])
        for (key, method), marker in self.markers.items():
            marker.set_data(
                ([shift], _plottable([getattr(errors, key)[method]], method))
                if errors is not None
                else ([], [])
            )


def error_vs_shift_figure(sweeps, guides: dict[str, float]):
    """Relative error of the variance against the shift, one panel per dtype, with the error laws as
    guides.

    Parameters
    ----------
    sweeps : sequence of lnlib.book.experiments.numerics.ErrorSweep
        One per dtype (a panel each).
    guides : dict of str to float
        The unit roundoff u of each dtype, by name: dashed lines show u·κ²
        (one-pass), u·κ (Welford) and (u·κ)² (two-pass's second-order term), with κ the shift.
    """
    fig, axes = new_figure(1, len(sweeps), figsize=(5.4, 3.4), sharey=True)
    for ax, sweep in zip(np.atleast_1d(axes), sweeps):
        _error_axes(ax, band=None)
        ax.set_xlabel(SHIFT_LABEL)
        kappa = np.logspace(0, 5, 50)
        u = guides[sweep.dtype]
        ax.plot(
            kappa,
            np.clip(u * kappa**2, None, ERROR_CEILING / 3),
            color=METHOD_STYLE["one_pass"]["color"],
            ls="--",
            lw=1,
            label="u·κ²",
        )
        ax.plot(
            kappa, u * kappa, color=METHOD_STYLE["welford"]["color"], ls="--", lw=1, label="u·κ"
        )
        ax.plot(
            kappa,
            (u * kappa) ** 2,
            color=METHOD_STYLE["two_pass"]["color"],
            ls="--",
            lw=1,
            label="(u·κ)²",
        )
        for method, style in METHOD_STYLE.items():
            ax.plot(
                sweep.shifts,
                _plottable(sweep.variance_error[method], method),
                marker=style["marker"],
                ms=4,
                color=style["color"],
                label=style["label"],
            )
        ax.set_title(f"{sweep.dtype}\nu = {u:.1e}")
    np.atleast_1d(axes)[0].set_ylabel("relative error of the variance")
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    order = [3, 0, 4, 2, 5, 1]  # one column per method, its law below it: u·κ², (u·κ)², u·κ
    fig.legend(
        [handles[k] for k in order],
        [labels[k] for k in order],
        loc="outside lower center",
        ncol=3,
        fontsize=8,
    )
    return fig


def output_scatter_figure(y_exact, outputs: dict[str, np.ndarray], title: str):
    """Each method's LayerNorm output against the exact one, one panel per method; NaN outputs are
    counted in the title.

    Each panel has its own (square) scale, wide enough for its finite points,
    so a method that is off by a factor of 300 and one that is right are both
    readable; the dotted diagonal is perfect agreement.

    Parameters
    ----------
    y_exact : ndarray
        The exact output.
    outputs : dict of str to ndarray
        The computed outputs, by method name (keys of :data:`METHOD_STYLE`).
    title : str
        The figure's title (the setting).
    """
    fig, axes = new_figure(1, len(outputs), figsize=(5.4, 2.8))
    for ax, (method, y) in zip(np.atleast_1d(axes), outputs.items()):
        style = METHOD_STYLE[method]
        finite = np.isfinite(y)
        limit = 1.1 * max(
            float(np.max(np.abs(y[finite]), initial=0.0)), float(np.max(np.abs(y_exact)))
        )
        ax.plot([-limit, limit], [-limit, limit], color=PALETTE["neutral"], lw=0.8, ls=":")
        ax.plot(np.ravel(y_exact), np.ravel(y), style["marker"], color=style["color"], ms=3)
        ax.set(
            xlim=(-limit, limit),
            ylim=(-limit, limit),
            xlabel="exact output",
            title=f"{style['label']}\n{int(np.sum(~finite))} NaN outputs",
        )
    np.atleast_1d(axes)[0].set_ylabel("computed output")
    fig.suptitle(textwrap.fill(title, 56))  # wrapped: a long setting would widen the figure
    return fig


def numerics_companion(sweeps, shift: float, points):
    """Small multiples of the explorer: one column per dtype, both error panels, markers at one
    shift.

    The static stand-in for :func:`lnlib.book.explorers.numerics_explorer` on the website.

    Parameters
    ----------
    sweeps : sequence of lnlib.book.experiments.numerics.ErrorSweep
        One per dtype.
    shift : float
        Where the markers sit.
    points : sequence of lnlib.book.experiments.numerics.ShiftErrors or None
        The errors at `shift` for each dtype (None where the dtype cannot hold the data).
    """
    fig, axes = new_figure(2, len(sweeps), figsize=(5.4, 5.0), sharex=True, sharey=True)
    for column, (sweep, point) in enumerate(zip(sweeps, points)):
        panels = ErrorPanels(axes[0, column], axes[1, column], band_labels=False)
        panels.show_sweep(sweep)
        panels.show_point(shift, point)
        axes[0, column].set_title(sweep.dtype)
        axes[1, column].set_title("")
        for ax in axes[:, column]:
            ax.set_xlabel("")
            ax.set_ylabel("")
    axes[0, 0].set_ylabel("variance: relative error")
    axes[1, 0].set_ylabel("output: max |y − y_exact|")
    fig.supxlabel(
        f"{SHIFT_LABEL} (markers at {shift:g}); shaded: wrong by 100 % or more", fontsize=9
    )
    panels.legend(fig)
    return fig


def running_sum_figure(count_trace, small):
    """The float16 running sum against the exact sum, row by row: counting ones, and small
    gradients.

    Parameters
    ----------
    count_trace : ndarray
        The float16 running sum of ones after each row
        (:attr:`lnlib.book.experiments.numerics.GradientSums.count_trace`); the exact sum is the row
        count.
    small : lnlib.book.experiments.numerics.SmallGradientSums
        Its first seed's traces: gradients of about 1/N each.
    """
    fig, axes = new_figure(1, 2, figsize=(5.4, 2.8))
    rows = np.arange(1, len(count_trace) + 1)
    panels = (
        (axes[0], rows, count_trace, "dy = 1: counting rows", "sum"),
        (axes[1], small.trace_exact, small.trace_running, "gradients ≈ 1/N", None),
    )
    for ax, exact, running, title, ylabel in panels:
        ax.plot(rows, exact, color=PALETTE["input"], lw=2, label="exact")
        ax.plot(rows, running, color=PALETTE["mean"], lw=2, ls="--", label="float16 running sum")
        ax.set(title=title, xlabel="rows summed", ylabel=ylabel, ylim=(0, None))
        ax.set_xticks([0, 35_000, 70_000], ["0", "35 000", "70 000"])
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2, fontsize=9)
    return fig


#: Colour, marker, line style and label of each RMSNorm kernel of
#: :data:`lnlib.book.experiments.numerics.RMS_KERNELS` (how each sums the squares).
#: Where two kernels coincide (both at 100 % or at 0 % of rows zeroed), the first's large hollow
#: marker rings the second's small filled one, so both show.
RMS_KERNEL_STYLE = {
    ("float16", "running"): {"color": PALETTE["mean"], "marker": "o", "ls": "-", "big": True},
    ("float16", "pairwise"): {"color": PALETTE["output"], "marker": "s", "ls": "--", "big": False},
    ("bfloat16", "running"): {"color": PALETTE["negative"], "marker": "^", "ls": "-.", "big": True},
    ("float32", "running"): {"color": PALETTE["input"], "marker": "D", "ls": ":", "big": False},
}


def rms_half_figure(sweep):
    """Each RMSNorm kernel on float16 rows of growing RMS: the share of rows it returns as all
    zeros (left) and its worst error of y in the others (right), with the RMS at which a row's sum
    of squares overflows float16 marked (chapter "Computing it right: numerics", section "RMSNorm
    in half precision").

    Parameters
    ----------
    sweep : lnlib.book.experiments.numerics.RMSHalfSweep
        :func:`lnlib.book.experiments.numerics.rms_half_sweep`'s result.
    """
    fig, axes = new_figure(1, 2, figsize=(5.4, 3.0))
    for kernel, style in RMS_KERNEL_STYLE.items():
        label = f"{kernel[0]} {kernel[1]} sum"
        common = {"color": style["color"], "marker": style["marker"], "ls": style["ls"]}
        common |= {"ms": 9, "mfc": "none", "mew": 1.5} if style["big"] else {"ms": 4}
        axes[0].plot(sweep.scales, 100 * sweep.zeroed_share(kernel), label=label, **common)
        axes[1].plot(sweep.scales, sweep.worst_error(kernel), **common)
    axes[0].set(title="rows returned as zeros", ylabel="share of rows (%)", ylim=(-5, 105))
    axes[1].set(title="worst error of y, other rows", ylabel="relative error", yscale="log")
    ticks = []  # each RMS of the sweep, but one within a factor 1.5 of the last (4, 5: "45")
    for value in sweep.scales:
        if not ticks or value / ticks[-1] >= 1.5:
            ticks.append(value)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks(ticks, [f"{v:g}" for v in ticks], minor=False)
        ax.minorticks_off()
        ax.set_xlabel("RMS of the rows")
        ax.axvline(sweep.overflow_rms, color=PALETTE["neutral"], lw=1, ls=":")
    axes[0].annotate(
        "sum of squares\noverflows",
        (sweep.overflow_rms, 50),
        xytext=(6, 0),
        textcoords="offset points",
        fontsize=8,
        va="center",
    )
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2, fontsize=8)
    return fig
