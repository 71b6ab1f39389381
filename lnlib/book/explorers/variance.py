"""The explorer of the chapter "The variance"."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ...variants import sample_variance
from ..figures.render import FastRenderer
from ..figures.variance import variance_figure
from .base import Explorer, described
from .mean import RUNNING_TOKEN, checked_entries, entry_sliders
from .plans import Sweep, entries, steps, with_presets

# The subscript of s_{H−1} in the readout, at line height 0 so that choosing the divisor H − 1 does
# not make the readout taller and shift the page below the explorer (JupyterLab test: +4.6 px)
H_MINUS_1 = '<sub style="line-height: 0">H−1</sub>'

__all__ = ["variance_explorer"]

#: The divisor dropdown: label shown to the reader, and whether it is the unbiased (H - 1) variance.
DIVISORS = [("H (LayerNorm, numpy.var)", False), ("H − 1 (torch.std default)", True)]


#: The chapter's running example: the book's running token (chapter 03), and the stretched
#: token, 3 × running − 0.2, the same pattern stretched three times around the same mean.
TOKEN_1 = RUNNING_TOKEN
TOKEN_2 = tuple(round(3 * v - 0.2, 10) for v in TOKEN_1)
#: The sliders' range: the stretched token runs from −3.5 to 3.7.
LOW, HIGH = -4.0, 4.0


class VarianceExplorer(Explorer):
    """Drag the entries; the deviations' squares, their average area σ² and the band μ ± σ
    follow."""

    web_plan = Sweep(
        presets={
            "stretched token: 3x − 0.2": entries("x", TOKEN_2),
            "running token": entries("x", TOKEN_1),
            "constant: all 1": entries("x", (1,) * 8),
        },
        # whole numbers plus the two tokens' entries: a half-step grid for eight sliders
        # comes near the page's byte budget (web.MAX_BYTES)
        grids=with_presets(
            {f"x{i}": steps(LOW, HIGH, 1.0) for i in range(1, 9)},
            [TOKEN_1, TOKEN_2],
        ),
    )

    def __init__(self, values, low: float, high: float):
        controls = entry_sliders(values, low, high)
        controls["divisor"] = described(
            widgets.Dropdown(options=DIVISORS, value=False, description="divide by"),
            "divide by, the divisor of the sum of squared deviations",
        )
        figure, self.panels = variance_figure(values, value_range=(low, high), managed=False)
        dynamic = [artist for panel in self.panels for artist in panel.artists]
        super().__init__("The variance: move the entries", controls, FastRenderer(figure, dynamic))

    def compute(self, divisor: bool, **entries):
        x = np.array(list(entries.values()))
        squares = (x - x.mean()) ** 2
        variance = float(sample_variance(x, unbiased=divisor))
        for panel in self.panels:
            panel.update(x, divisor)
        symbol, count = (f"s{H_MINUS_1}", x.size - 1) if divisor else ("σ", x.size)
        readout = (
            f"μ = {x.mean():.4g}; squares (x − μ)² = [{', '.join(f'{q:.4g}' for q in squares)}], "
            f"sum = {squares.sum():.4g}; {symbol}² = sum / {count} = <b>{variance:.4g}</b>, "
            f"{symbol} = <b>{np.sqrt(variance):.4g}</b>"
        )
        note = ""
        if np.ptp(x) == 0:
            note = (
                "All entries are equal: every square has zero area, so the variance is 0 and "
                "normalizing would divide 0 by 0 (the chapter on ε fixes that)."
            )
        return (
            readout,
            note,
            {
                "mean": float(x.mean()),
                "squares": squares,
                "variance": variance,
                "std": float(np.sqrt(variance)),
            },
        )


def variance_explorer(values=TOKEN_2, *, low: float = LOW, high: float = HIGH) -> VarianceExplorer:
    """Explorer for the chapter "The variance": one slider per entry and a choice of divisor, H or H
    - 1.

    Parameters
    ----------
    values : sequence of float, default TOKEN_2
        The starting entries (2 to 8 of them), each within [low, high]; by default the chapter's
        stretched token.
    low, high : float
        The sliders' range; it fixes the figure's scales, so areas stay comparable.

    Returns
    -------
    VarianceExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``x1``, ``x2``, ... and ``divisor``
        (False: divide by H; True: by H - 1).

    Raises
    ------
    ValueError
        If there are fewer than 2 or more than 8 entries, one lies outside [low, high], or low >=
        high.
    """
    return VarianceExplorer(checked_entries("variance_explorer", values, low, high), low, high)
