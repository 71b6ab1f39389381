"""The explorer of the chapter "Fact check": the covariance and the moments of x̂, measured against
the claims."""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets

from ..factcheck.measurements import DISTRIBUTIONS, GRID_SIZES, moment_grid, normal_fourth_moment
from ..figures.fact_check import LABELS, moment_explorer_figure
from ..figures.render import FastRenderer
from .base import Explorer, described

__all__ = ["fact_check_explorer"]


@lru_cache(maxsize=1)
def _default_grid():
    """The Monte Carlo grid, sampled once per session (about a second) so a control change only
    looks it up."""
    return moment_grid()


class FactCheckExplorer(Explorer):
    """Pick the number of features H and the input family; see Cov(x̂₁, x̂₂) and the distribution of
    x̂₁."""

    def __init__(self, grid, distribution: str, size: int):
        self.grid = grid
        controls = {
            "size": described(
                widgets.SelectionSlider(
                    options=list(grid.sizes),
                    value=size,
                    description="features H",
                    continuous_update=True,
                ),
                "features H, the length of each normalized vector",
                "feature",
            ),
            "distribution": described(
                widgets.Dropdown(
                    options=[(LABELS[d], d) for d in grid.distributions],
                    value=distribution,
                    description="inputs",
                ),
                "inputs, the distribution the entries are drawn from",
            ),
        }
        figure, self.panels = moment_explorer_figure(grid, distribution, size, managed=False)
        super().__init__(
            "Fact check: covariance and moments of x̂",
            controls,
            FastRenderer(figure, self.panels.artists),
        )

    def compute(self, size, distribution):
        self.panels.update(distribution, size)
        d, k = self.grid.index(distribution, size)
        result = {
            "cov": float(self.grid.cov[d, k]),
            "cov_err": float(self.grid.cov_err[d, k]),
            "cov_claimed": -1.0 / (size - 1),
            "third": float(self.grid.third[d, k]),
            "third_err": float(self.grid.third_err[d, k]),
            "fourth": float(self.grid.fourth[d, k]),
            "fourth_err": float(self.grid.fourth_err[d, k]),
            "fourth_normal": normal_fourth_moment(size),
        }
        readout = (
            f"H = {size}, inputs: {LABELS[distribution]}, n = {self.grid.samples}: Cov(x̂₁, x̂₂) "
            f"= <b>{result['cov']:.3f}</b> ± {result['cov_err']:.3f} (claimed "
            f"{result['cov_claimed']:.3f}); E[x̂₁³] = <b>{result['third']:.2f}</b> ± "
            f"{result['third_err']:.2f} (claimed ≈ 0); E[x̂₁⁴] = <b>{result['fourth']:.2f}</b> ± "
            f"{result['fourth_err']:.2f} (claimed ≈ 3; normal inputs give 3(H−1)/(H+1) = "
            f"{result['fourth_normal']:.2f})"
        )
        notes = []
        if size == 2:
            notes.append(
                "With H = 2 every x̂ is exactly (−1, +1) or (+1, −1), so E[x̂⁴] = 1 whatever the "
                "inputs, and Cov(x̂₁, x̂₂) = −Var(x̂₁) = −(1 − E[x̂₁]²): −1 when x̂₁ has mean 0, "
                "as for exchangeable inputs."
            )
        if distribution == "unequal":
            notes.append(
                "These features have different means and scales, so they are not exchangeable: "
                "−1/(H−1) no longer applies."
            )
        note = " ".join(notes)
        return readout, note, result


def fact_check_explorer(distribution: str = "normal", size: int = 4) -> FactCheckExplorer:
    """Explorer for the chapter "Fact check": an H slider and an input-family dropdown.

    Parameters
    ----------
    distribution : str, default "normal"
        One of :data:`lnlib.book.factcheck.measurements.DISTRIBUTIONS`.
    size : int, default 4
        H, one of :data:`lnlib.book.factcheck.measurements.GRID_SIZES`.

    Returns
    -------
    FactCheckExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``size`` and ``distribution``.

    Raises
    ------
    ValueError
        For a distribution or an H the precomputed grid does not hold.
    """
    if distribution not in DISTRIBUTIONS or size not in GRID_SIZES:
        raise ValueError(
            f"fact_check_explorer takes a distribution in {DISTRIBUTIONS} and H in {GRID_SIZES}; "
            f"got {distribution!r}, H = {size!r}."
        )
    return FactCheckExplorer(_default_grid(), distribution, size)
