"""The explorer of the chapter "Normalizing": move a 3-vector, watch its projection and its image on
the circle."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ...forward import layer_norm_steps
from ..experiments.normalizing import ones_component, plane_coordinates
from ..figures.normalizing import normalizing_figure
from ..figures.render import FastRenderer
from .base import Explorer, described
from .mean import entry_sliders
from .plans import Sweep, entries, steps

__all__ = ["normalizing_explorer"]

#: The eps choices: 0 puts x̂ exactly on the circle; a large eps pulls it visibly inside.
EPS_OPTIONS = (("0", 0.0), ("1e-5 (PyTorch)", 1e-5), ("0.1", 0.1), ("1", 1.0))


def _vector(values) -> str:
    return "(" + ", ".join(f"{v:.3f}" for v in values) + ")"


class NormalizingExplorer(Explorer):
    """Three sliders for x and a choice of eps; the plane view and the bars follow."""

    web_plan = Sweep(
        presets={
            "outlier: (0.5, −0.5, 3)": entries("x", (0.5, -0.5, 3)),
            "x = (1, 2, 3)": entries("x", (1, 2, 3)),
            "constant: (2, 2, 2)": entries("x", (2, 2, 2)),
            "near-constant: (1, 1, 1.5)": entries("x", (1, 1, 1.5)),
        },
        grids={f"x{i}": steps(-3, 3, 0.5) for i in range(1, 4)},
    )

    # the statistics and the projection: four lines at the width of the live figure (LIVE_DPI)
    readout_lines = 4

    def __init__(self, values, eps: float, low: float, high: float):
        controls = entry_sliders(values, low, high)
        controls["eps"] = described(
            widgets.Dropdown(
                options=EPS_OPTIONS,
                value=eps,
                description="ε",
                layout=widgets.Layout(width="200px"),
            ),
            "ε, added to the variance under the square root",
        )
        figure, (self.plane, self.entries) = normalizing_figure(
            values, eps, value_range=(low, high), managed=False
        )
        super().__init__(
            "Normalizing: move x, watch x̂ land on the circle",
            controls,
            FastRenderer(figure, self.plane.artists + self.entries.artists),
        )

    def compute(self, x1, x2, x3, eps):
        x = np.array([x1, x2, x3])
        self.plane.update(x, eps)
        along_ones = float(ones_component(x))
        point = plane_coordinates(x)
        if np.ptp(x) == 0:
            self.entries.update(x, None if eps == 0 else np.zeros(3))
            note = (
                "All entries are equal: x lies on the line through (1, 1, 1), so its "
                "projection is the origin. "
            ) + (
                "With ε = 0, x̂ = 0/0 is undefined."
                if eps == 0
                else "With ε > 0, x̂ = 0: the centre of the circle, not a point on it."
            )
            readout = (
                f"μ = {x1:.3f}, σ² = 0, ε = {eps:g}; the whole of x is along (1, 1, 1): √3·μ = "
                f"{along_ones:.3f} is discarded; projection = (0, 0)"
            )
            return (
                readout,
                note,
                {
                    "mean": x1,
                    "var": 0.0,
                    "projection": point,
                    "xhat": None if eps == 0 else np.zeros(3),
                    "radius": 0.0,
                },
            )
        steps = layer_norm_steps(x, eps=eps)
        xhat = steps.xhat
        radius = float(np.linalg.norm(xhat))
        var = float(steps.var.item())
        self.entries.update(x, xhat)
        readout = (
            f"μ = {steps.mean.item():.3f}, σ² = {var:.3f}, ε = {eps:g}; discarded along (1, 1, "
            f"1): √3·μ = {along_ones:.3f};<br>projection (u₁, u₂) = {_vector(point)}, length "
            f"{np.linalg.norm(point):.3f}; x̂ = {_vector(xhat)}, ‖x̂‖ = √3·√(σ²/(σ²+ε)) = "
            f"<b>{radius:.4f}</b>"
        )
        if 0 < eps and var / (var + eps) > 0.999:
            # The figure cannot show a change of a thousandth of the radius: say so, or the reader
            # sees nothing happen.
            readout += (
                f"<br>ε = {eps:g} is tiny next to σ² = {var:.3g}: x̂ is at "
                f"{radius / np.sqrt(3):.4%} of the radius, too close to the circle for the figure "
                "to show the difference from ε = 0."
            )
        note = (
            ""
            if eps == 0 or var / (var + eps) > 0.999
            else (
                "ε is not small next to σ² here: x̂ sits inside the circle, at "
                f"{radius / np.sqrt(3):.1%} of its radius."
            )
        )
        return (
            readout,
            note,
            {
                "mean": float(steps.mean.item()),
                "var": var,
                "projection": point,
                "xhat": xhat,
                "radius": radius,
            },
        )


def normalizing_explorer(
    values=(1.0, 2.0, 3.0), *, eps: float = 0.0, low: float = -3.0, high: float = 3.0
) -> NormalizingExplorer:
    """Explorer for the chapter "Normalizing": three sliders for x in R³ and a choice of eps.

    The left panel shows the plane x₁ + x₂ + x₃ = 0 face on (in the basis of
    :func:`lnlib.book.experiments.normalizing.plane_basis`): the projection of x, its image x̂ and
    the circle of radius √3; the right panel shows the entries of x and x̂.

    Parameters
    ----------
    values : sequence of 3 floats, default (1, 2, 3)
        The starting input, each entry within [low, high].
    eps : float, default 0
        One of 0, 1e-5, 0.1 and 1.
    low, high : float
        The sliders' range.

    Returns
    -------
    NormalizingExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``x1``, ``x2``, ``x3`` and ``eps``.

    Raises
    ------
    ValueError
        If `values` does not hold 3 numbers within [low, high], or `eps` is not one of the choices.
    """
    values = [float(v) for v in values]
    if len(values) != 3:
        raise ValueError(
            "normalizing_explorer draws the plane of 3-vectors, so it takes 3 starting values; "
            f"got {len(values)}."
        )
    if not all(low <= v <= high for v in values):
        raise ValueError(f"starting values must lie in [{low}, {high}]; got {values}.")
    choices = [value for _, value in EPS_OPTIONS]
    if eps not in choices:
        raise ValueError(f"eps must be one of {choices}; got {eps!r}.")
    return NormalizingExplorer(values, float(eps), low, high)
