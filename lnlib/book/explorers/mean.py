"""The explorer of the chapter "The mean"."""

from __future__ import annotations

import numpy as np

from ..figures.mean import mean_figure
from ..figures.render import FastRenderer
from .base import Explorer, slider
from .plans import Sweep, entries, steps, with_presets

__all__ = ["mean_explorer", "entry_sliders", "checked_entries"]


#: The book's running token, introduced in chapter 03 and carried to chapter 08.
RUNNING_TOKEN = (0.4, -1.1, 0.9, 0.2, -0.6, 1.3, -0.3, 0.0)
#: The chapter's outlier token (its example): eight features, feature 4 an outlier.
OUTLIER_TOKEN = (0.7, -0.8, 0.5, 14.0, -0.2, 0.9, -1.0, 0.3)


class MeanExplorer(Explorer):
    """Drag the entries of a small vector; the mean line and the centred values follow."""

    web_plan = Sweep(
        presets={
            "outlier token: x4 = 14": entries("x", OUTLIER_TOKEN),
            "outlier token, x4 = 0": entries("x", (*OUTLIER_TOKEN[:3], 0, *OUTLIER_TOKEN[4:])),
            "constant: all 1": entries("x", (1,) * 8),
            "running token": entries("x", RUNNING_TOKEN),
        },
        grids=with_presets(
            {f"x{i}": steps(-5, 15, 1) for i in range(1, 9)}, [OUTLIER_TOKEN, RUNNING_TOKEN]
        ),
    )

    def __init__(self, values, low: float, high: float):
        controls = entry_sliders(values, low, high)
        figure, self.panels = mean_figure(values, value_range=(low, high), managed=False)
        super().__init__(
            "The mean: move the entries", controls, FastRenderer(figure, self.panels.artists)
        )

    def compute(self, **entries):
        x = np.array(list(entries.values()))
        mu = x.mean()
        centred = x - mu
        total = float(centred.sum())
        # The exact sum is 0; in floating point it is a rounding residue, which the readout says
        # rather than prints.
        total_text = (
            "0 (up to rounding)"
            if abs(total) <= 1e-12 * max(1.0, float(np.abs(x).max()))
            else f"{total:.2g}"
        )
        self.panels.update(x)
        readout = (
            f"μ = ({_signed_sum(x)}) / {x.size} = <b>{mu:.4g}</b>; "
            f"centred values x − μ = [{', '.join(f'{c:.3f}' for c in centred)}], sum = {total_text}"
        )
        note = ""
        if np.ptp(x) == 0:
            note = (
                "All entries are equal: every centred value is 0, and the variance will be 0 too "
                "(the chapter on ε shows why that matters)."
            )
        return readout, note, {"mean": mu, "centred": centred}


def mean_explorer(values=OUTLIER_TOKEN, *, low: float = -5.0, high: float = 15.0) -> MeanExplorer:
    """Explorer for the chapter "The mean": one slider per entry of a small vector.

    Parameters
    ----------
    values : sequence of float, default OUTLIER_TOKEN
        The starting entries (2 to 8 of them), each within [low, high]; by default the chapter's
        token with an outlier feature.
    low, high : float
        The sliders' range.

    Returns
    -------
    MeanExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``x1``, ``x2``, ...

    Raises
    ------
    ValueError
        If there are fewer than 2 or more than 8 entries, one lies outside [low, high], or low >=
        high.
    """
    return MeanExplorer(checked_entries("mean_explorer", values, low, high), low, high)


def entry_sliders(values, low: float, high: float) -> dict:
    """One slider per entry, named ``x1``, ``x2``, ... (the explorers of the chapters "The mean" and
    "The variance")."""
    return {
        f"x{i + 1}": slider(
            f"x{i + 1}", float(v), low, high, what=f"x{i + 1}, entry {i + 1} of the input vector x"
        )
        for i, v in enumerate(values)
    }


def checked_entries(explorer: str, values, low: float, high: float) -> list[float]:
    """The starting entries of a slider-per-entry explorer as floats (chapters "The mean" and "The
    variance").

    Raises
    ------
    ValueError
        Naming `explorer`, if there are fewer than 2 or more than 8 entries, if
        low >= high, or if an entry lies outside [low, high].
    """
    values = [float(v) for v in values]
    if not 2 <= len(values) <= 8:
        raise ValueError(f"{explorer} takes 2 to 8 starting values; got {len(values)}.")
    if not low < high:
        raise ValueError(f"{explorer} needs low < high; got low={low}, high={high}.")
    if not all(low <= v <= high for v in values):
        raise ValueError(f"{explorer}: starting values must lie in [{low}, {high}]; got {values}.")
    return values


def _signed_sum(values) -> str:
    """The sum of `values` as written by hand: "0.7 − 0.8 + 0.5", not "0.7 + -0.8 + 0.5" (learner
    A, 2026-11-30)."""
    first, *rest = (float(v) for v in values)
    return f"{first:g}".replace("-", "−") + "".join(
        f" − {-v:g}" if v < 0 else f" + {v:g}" for v in rest
    )
