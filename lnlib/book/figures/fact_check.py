"""Figures for the chapter "Fact check": measured statistics of x̂ against the documents' claims."""

from __future__ import annotations

import numpy as np

from ..factcheck.measurements import normal_fourth_moment
from .style import PALETTE, new_figure

__all__ = [
    "LABELS",
    "MomentPanels",
    "moment_explorer_figure",
    "moment_curves_figure",
    "moments_companion",
    "covariance_figure",
]

#: Plot label of each input family of :data:`lnlib.book.factcheck.measurements.DISTRIBUTIONS`.
LABELS = {
    "normal": "normal",
    "uniform": "uniform",
    "laplace": "Laplace",
    "exponential": "exponential",
    "unequal": "unequal features",
}
COLOURS = {
    "normal": PALETTE["input"],
    "uniform": PALETTE["positive"],
    "laplace": PALETTE["mean"],
    "exponential": PALETTE["negative"],
    "unequal": PALETTE["neutral"],
}


def _normal_density(z):
    return np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)


def _claimed_covariance(sizes):
    sizes = np.asarray(sizes, dtype=float)
    return -1.0 / (sizes - 1.0)


class MomentPanels:
    """Two panels redrawn in place: Cov(x̂_1, x̂_2) against H, and the histogram of x̂_1 at one H.

    Left: the document's −1/(H − 1) (fixed) and the measured covariance of
    one input family over the grid, with a marker at the selected H. Right:
    the standard normal density (fixed) and the histogram of x̂_1.
    """

    def __init__(self, ax_cov, ax_hist, grid):
        self.grid = grid
        sizes = np.array(grid.sizes, dtype=float)
        fine = np.geomspace(sizes[0], sizes[-1], 200)
        ax_cov.plot(
            fine,
            _claimed_covariance(fine),
            color=PALETTE["reference"],
            lw=3,
            label="claimed: −1/(H−1); N(0, 1)",
        )
        (self.cov_line,) = ax_cov.plot(
            sizes, grid.cov[0], "o-", color=PALETTE["output"], label="measured"
        )
        (self.cov_marker,) = ax_cov.plot(
            [sizes[0]], [grid.cov[0, 0]], "s", color=PALETTE["mean"], ms=11, label="selected H"
        )
        ax_cov.set(
            xscale="log",
            ylim=(-1.1, 0.3),
            xlabel="features H (log scale)",
            ylabel="Cov(x̂₁, x̂₂)",
            title="covariance of two\nfeatures against H",
        )
        centres = 0.5 * (grid.edges[1:] + grid.edges[:-1])
        z = np.linspace(-4, 4, 200)
        ax_hist.plot(z, _normal_density(z), color=PALETTE["reference"], lw=3)
        (self.hist_line,) = ax_hist.step(
            centres, grid.density[0, 0], where="mid", color=PALETTE["output"], lw=2
        )
        ax_hist.set(
            xlim=(-4, 4),
            ylim=(0, 1.2),
            xlabel="x̂₁ (no unit)",
            ylabel="density",
            title="distribution of\none feature, x̂₁",
        )
        # One legend for both panels, below them: the same colours mean the same in each (claim,
        # measurement), and inside, the curves and the H = 2 spikes would run under it.
        self.cut_note = ax_hist.text(
            0.98,
            0.75,
            "peaks cut\nat 1.2",
            transform=ax_hist.transAxes,
            ha="right",
            va="center",
            fontsize=8,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.9},
            visible=False,
        )
        ax_cov.figure.legend(
            handles=[self.cov_line.axes.lines[0], self.cov_line, self.cov_marker],
            loc="outside lower center",
            ncol=3,
            fontsize=8,
            handlelength=1.5,
            columnspacing=1.0,
        )

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.cov_line, self.cov_marker, self.hist_line, self.cut_note]

    def update(self, distribution: str, size: int) -> None:
        """Show the input family `distribution` with the marker and histogram at H = `size`."""
        d, k = self.grid.index(distribution, size)
        self.cov_line.set_ydata(self.grid.cov[d])
        self.cov_marker.set_data([size], [self.grid.cov[d, k]])
        density = self.grid.density[d, k]
        self.hist_line.set_ydata(np.minimum(density, 1.19))
        self.cut_note.set_visible(bool(density.max() > 1.19))  # say so where the axis cuts a peak


def moment_explorer_figure(
    grid, distribution: str = "normal", size: int = 4, *, managed: bool = True
):
    """The explorer's figure at one setting (chapter "Fact check").

    Returns
    -------
    (Figure, MomentPanels)
    """
    fig, (left, right) = new_figure(1, 2, figsize=(5.4, 3.0), managed=managed)
    panels = MomentPanels(left, right, grid)
    panels.update(distribution, size)
    return fig, panels


def moment_curves_figure(grid):
    """Cov(x̂_1, x̂_2) and E[x̂_1⁴] against H for every input family, with −1/(H−1) and 3 (chapter
    "Fact check")."""
    fig, (left, right) = new_figure(1, 2, figsize=(5.4, 4.2))
    sizes = np.array(grid.sizes, dtype=float)
    fine = np.geomspace(sizes[0], sizes[-1], 200)
    left.plot(
        fine,
        _claimed_covariance(fine),
        color=PALETTE["reference"],
        lw=4,
        alpha=0.6,
        label="−1/(H−1)",
    )
    right.axhline(3.0, color=PALETTE["reference"], lw=4, alpha=0.6, label="3")
    right.plot(
        fine,
        [normal_fourth_moment(int(round(h))) if h >= 2 else np.nan for h in fine],
        color=PALETTE["neutral"],
        ls="--",
        label="3(H−1)/(H+1), normal inputs",
    )
    for d, name in enumerate(grid.distributions):
        left.errorbar(
            sizes,
            grid.cov[d],
            yerr=2 * grid.cov_err[d],
            marker="o",
            ms=4,
            color=COLOURS[name],
            label=LABELS[name],
        )
        right.errorbar(
            sizes,
            grid.fourth[d],
            yerr=2 * grid.fourth_err[d],
            marker="o",
            ms=4,
            color=COLOURS[name],
            label=LABELS[name],
        )
    left.set(
        xscale="log",
        xlabel="features H (log scale)",
        ylabel="Cov(x̂₁, x̂₂)",
        title="covariance of two\nfeatures (±2 s.e.)",
    )
    right.set(
        xscale="log",
        xlabel="features H (log scale)",
        ylabel="E[x̂₁⁴]",
        title="fourth moment of\none feature (±2 s.e.)",
    )
    # One legend below both panels (the families share their colours); inside, it covered the
    # curves.
    handles, labels = right.get_legend_handles_labels()
    labels = ["−1/(H−1), left; 3, right" if label == "3" else label for label in labels]
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=8)
    return fig


def moments_companion(grid, settings):
    """Small multiples of the explorer's histogram panel, one per (distribution, H) setting (chapter
    "Fact check").

    The static stand-in for :func:`lnlib.book.explorers.fact_check_explorer` on the website.
    """
    fig, axes = new_figure(
        2, (len(settings) + 1) // 2, figsize=(5.4, 5.2), sharex=True, sharey=True
    )
    z = np.linspace(-4, 4, 200)
    centres = 0.5 * (grid.edges[1:] + grid.edges[:-1])
    for ax, (name, size) in zip(axes.ravel(), settings):
        d, k = grid.index(name, size)
        ax.plot(z, _normal_density(z), color=PALETTE["reference"], lw=3)
        ax.step(
            centres, np.minimum(grid.density[d, k], 1.19), where="mid", color=COLOURS[name], lw=2
        )
        ax.set(
            title=(
                f"{LABELS[name]}, H = {size}\nE[x̂⁴] = {grid.fourth[d, k]:.2f}, cov = "
                f"{round(grid.cov[d, k], 2) + 0.0:.2f}"
            ),
            ylim=(0, 1.2),
            xlim=(-4, 4),
        )
    for ax in axes[-1]:
        ax.set_xlabel("x̂₁")
    for ax in axes[:, 0]:
        ax.set_ylabel("density")
    return fig


def covariance_figure(covariances):
    """Heat maps of Cov(y_i, y_j): measured, exact for exchangeable inputs, and the document's
    formula (chapter "Fact check").

    Parameters
    ----------
    covariances : lnlib.book.factcheck.measurements.OutputCovariances
    """
    panels = [
        ("measured\n(Monte Carlo)", covariances.measured),
        ("exact:\nγᵢγⱼ H/(H−1) (δᵢⱼ − 1/H)", covariances.exact),
        ("document:\nγᵢγⱼ/H (δᵢⱼ − 1/H)", covariances.document),
    ]
    limit = float(np.abs(covariances.exact).max())
    # 2 x 2: three matrices large enough for their numbers, the colour bar in the fourth cell.
    fig, axes = new_figure(2, 2, figsize=(5.4, 5.0))
    size = covariances.exact.shape[0]
    for ax, (title, matrix) in zip(axes.ravel(), panels):
        image = ax.imshow(matrix, cmap="PuOr_r", vmin=-limit, vmax=limit)
        for (i, j), value in np.ndenumerate(matrix):
            ax.text(
                j,
                i,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if abs(value) > 0.6 * limit else "black",
            )
        ax.set(
            title=title,
            xticks=range(size),
            yticks=range(size),
            xticklabels=range(1, size + 1),
            yticklabels=range(1, size + 1),
            xlabel="feature j",
            ylabel="feature i",
        )
        ax.grid(False)
    key = axes[1, 1]
    key.axis("off")
    fig.colorbar(
        image,
        cax=key.inset_axes([0.1, 0.55, 0.8, 0.08]),
        orientation="horizontal",
        label="covariance",
    )
    return fig
