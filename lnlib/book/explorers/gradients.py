"""The explorer of the chapter "Gradients through LayerNorm"."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..figures.gradients import gradients_figure, scaled_pieces
from ..figures.render import FastRenderer
from ..tools.prose import number
from .base import Explorer, described, slider
from .plans import Sweep, entries, steps

__all__ = ["gradients_explorer"]

EPS_OPTIONS = [("0", 0.0), ("1e-5", 1e-5), ("0.01", 1e-2), ("1", 1.0)]


class GradientsExplorer(Explorer):
    """Drag an input vector x and an upstream gradient dy; dx, its three terms and the Jacobian
    follow (chapter "Gradients through LayerNorm")."""

    web_plan = Sweep(
        presets={
            "generic dy, ε = 0": {
                **entries("x", (2, 4, 6, 8)),
                **entries("dy", (1.5, -0.5, 0, 0.5)),
                "eps": 0.0,
            },
            "dy constant, ε = 0": {
                **entries("x", (2, 4, 6, 8)),
                **entries("dy", (1, 1, 1, 1)),
                "eps": 0.0,
            },
            "dy ∝ x̂, ε = 0": {
                **entries("x", (2, 4, 6, 8)),
                **entries("dy", (-1.5, -0.5, 0.5, 1.5)),
                "eps": 0.0,
            },
            "dy ∝ x̂, ε = 1": {
                **entries("x", (2, 4, 6, 8)),
                **entries("dy", (-1.5, -0.5, 0.5, 1.5)),
                "eps": 1.0,
            },
        },
        grids={
            **{f"x{i}": steps(-8, 8, 2) for i in range(1, 5)},
            **{f"dy{i}": steps(-2, 2, 0.5) for i in range(1, 5)},
        },
    )

    def __init__(self, x, dy, gamma, eps: float, x_range: float, dy_range: float):
        size = len(x)
        self.gamma = None if gamma is None else np.asarray(gamma, dtype=float)
        controls = {
            f"x{i + 1}": slider(
                f"x{i + 1}",
                float(v),
                -x_range,
                x_range,
                0.01,  # a value typed in stays as typed, to the readout's two decimals
                what=f"x{i + 1}, entry {i + 1} of the input x",
            )
            for i, v in enumerate(x)
        }
        controls |= {
            f"dy{i + 1}": slider(
                f"dy{i + 1}",
                float(v),
                -dy_range,
                dy_range,
                0.05,
                what=f"dy{i + 1}, the upstream gradient ∂L/∂y{i + 1}",
            )
            for i, v in enumerate(dy)
        }
        controls["eps"] = described(
            widgets.Dropdown(options=EPS_OPTIONS, value=eps, description="ε"),
            "ε, added to the variance under the square root",
        )
        max_gamma = 1.0 if gamma is None else float(np.max(np.abs(self.gamma)))
        # With M = max|dxhat|: |direct|, |via mu| <= M; |via var| <= |xhat_j| M <= sqrt(H - 1) M;
        # and |s dx| <= ||(I - 11'/H - xhat xhat'/H) dxhat|| <= ||dxhat|| <= sqrt(H) M (the matrix
        # has eigenvalues in [0, 1]).
        term_limit = 1.05 * dy_range * max_gamma * np.sqrt(size)
        figure, self.panels = gradients_figure(
            x,
            dy,
            gamma,
            eps=eps,
            value_range=(-x_range, x_range),
            term_limit=term_limit,
            managed=False,
        )
        super().__init__(
            "Gradients through LayerNorm: move x and the upstream gradient dy",
            controls,
            FastRenderer(figure, self.panels.artists),
        )

    def compute(self, eps, **values):
        size = len(values) // 2
        x = np.array([values[f"x{i + 1}"] for i in range(size)])
        dy = np.array([values[f"dy{i + 1}"] for i in range(size)])
        var = float(x.var())
        if var == 0.0 and eps == 0.0:
            zeros, undefined = np.zeros(size), np.full(size, np.nan)  # nan: no x̂ or dx drawn
            self.panels.update(
                x,
                undefined,
                {path: zeros for path in ("direct", "through_mean", "through_var")},
                undefined,
                np.zeros((size, size)),
                note="undefined:\nσ² + ε = 0",
            )
            readout = (
                f"x = [{_fmt(x)}] is constant and ε = 0: σ² + ε = 0, so x̂ = 0/0: LayerNorm is "
                f"undefined here, and there is no dx to pass dy = [{_fmt(dy)}] back through."
            )
            return (
                readout,
                (
                    "All entries are equal and ε = 0: LayerNorm is undefined here. Pick ε > 0 or "
                    "move one entry."
                ),
                {"defined": False},
            )
        xhat, terms, scaled_dx, scaled_jac, std = scaled_pieces(x, dy, self.gamma, eps=eps)
        self.panels.update(x, xhat, terms, scaled_dx, scaled_jac)
        dx = scaled_dx / std
        along_ones, along_xhat = float(dx.sum()), float(dx @ xhat)
        readout = (
            f"s = √(σ² + ε) = √({var:.4g} + {eps:g}) = {std:.4g}; "
            f"dx = [{_fmt_small(dx)}]<br>Σ dx = "
            f"{_small(along_ones)} (always 0) &nbsp;·&nbsp; dx · x̂ = {_small(along_xhat)} "
            "(always 0 when ε = 0)"
        )
        note = ""
        if var == 0.0:
            note = (
                "All entries are equal: x̂ = 0, and dx = (dx̂ − mean(dx̂))/√ε, which is huge for "
                f"small ε (here s = {std:.3g})."
            )
        elif eps > var:
            note = (
                "ε is larger than the variance: LayerNorm barely rescales, and the gradient keeps "
                "a visible component along x̂."
            )
        elif 0.0 < eps < 0.01 * var:
            # s = √(σ² + ε) grows by a factor √(1 + ε/σ²): under half a percent here
            growth = 100 * (std / np.sqrt(var) - 1)
            note = (
                f"ε is {number(float(f'{eps / var:.2g}'))} of σ²: s grows {growth:.2g} %, too "
                "little to see in the figures"
                + ("; the readout's dx · x̂ leaves 0" if abs(along_xhat) >= 1e-12 else "")
                + ". Try ε = 1, or bring the entries of x together."
            )
        return (
            readout,
            note,
            {
                "defined": True,
                "dx": dx,
                "std": std,
                "xhat": xhat,
                "sum_dx": along_ones,
                "dx_dot_xhat": along_xhat,
                "jacobian": scaled_jac / std,
            },
        )


def _fmt(values) -> str:
    return ", ".join(f"{v:.3g}" for v in values)


def _fmt_small(values) -> str:
    """Values that may be zero, rounding noise shown as 0 (learner B39, 2026-12-01: all dy equal
    printed dx = [-1.51e-17, ...] under a line that promises dx = 0)."""
    return ", ".join(_small(float(v)) for v in values)


def _small(value: float) -> str:
    """A number that should be zero, shown as 0 below rounding noise."""
    return "0" if abs(value) < 1e-12 else f"{value:.3g}"


def gradients_explorer(
    x=(2.0, 4.0, 6.0, 8.0),
    dy=(1.5, -0.5, 0.0, 0.5),
    *,
    gamma=None,
    eps: float = 0.0,
    x_range: float = 10.0,
    dy_range: float = 2.0,
) -> GradientsExplorer:
    """Explorer for the chapter "Gradients through LayerNorm": sliders for x and dy, a choice of
    eps.

    Parameters
    ----------
    x, dy : sequence of float, default (2, 4, 6, 8) and (1.5, -0.5, 0, 0.5)
        The starting input and upstream gradient, of the same length (2 to 6).
    gamma : sequence of float, optional
        A fixed per-feature scale (default 1).
    eps : float, default 0
        One of 0, 1e-5, 0.01, 1.
    x_range, dy_range : float
        The sliders run over [-x_range, x_range] and [-dy_range, dy_range].

    Returns
    -------
    GradientsExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``x1``.., ``dy1``.. and ``eps``.

    Raises
    ------
    ValueError
        If x and dy differ in length or have fewer than 2 or more than 6 entries,
        a value lies outside its slider's range, gamma has the wrong length,
        or eps is not one of the offered values.
    """
    x, dy = [float(v) for v in x], [float(v) for v in dy]
    if len(x) != len(dy) or not 2 <= len(x) <= 6:
        raise ValueError(
            f"gradients_explorer needs x and dy of the same length, 2 to 6; got {len(x)} and "
            f"{len(dy)}."
        )
    if not all(abs(v) <= x_range for v in x) or not all(abs(v) <= dy_range for v in dy):
        raise ValueError(
            f"starting values must lie in [-{x_range}, {x_range}] (x) and [-{dy_range}, "
            f"{dy_range}] (dy); got x={x}, dy={dy}."
        )
    if gamma is not None and np.shape(gamma) != (len(x),):
        raise ValueError(
            f"gamma must have one value per feature, shape ({len(x)},); got shape "
            f"{np.shape(gamma)}."
        )
    if eps not in dict(EPS_OPTIONS).values():
        raise ValueError(f"eps must be one of {[value for _, value in EPS_OPTIONS]}; got {eps!r}.")
    return GradientsExplorer(x, dy, gamma, eps, x_range, dy_range)
