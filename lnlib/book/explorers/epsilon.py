"""The explorer of the chapter "Epsilon"."""

from __future__ import annotations

import numpy as np

from ...forward import layer_norm
from ...variants import FRAMEWORK_EPS, layer_norm_eps_outside_sqrt, sample_variance
from ..figures.epsilon import epsilon_figure
from ..figures.render import FastRenderer
from .base import Explorer, log_slider
from .plans import decades

__all__ = ["epsilon_explorer"]

#: The input is ``centre + δ * PATTERN``: for δ = 0.001 and centre 1 it is [1, 1.001, 0.999, 1].
PATTERN = np.array([0.0, 1.0, -1.0, 0.0])
CENTRE = 1.0


class EpsilonExplorer(Explorer):
    """Move ε and the input's spread; see the normalized vector shrink and the two placements of ε
    part ways."""

    web_plan = {"eps": decades(-10, 0, 2), "spread": decades(-5, 1, 2)}

    def __init__(self, eps: float, spread: float):
        controls = {
            "eps": log_slider(
                "ε",
                eps,
                -10,
                0,
                what="ε, added to the variance under the square root",
                readout_format=".2e",  # as the readout prints it (student reviews: 1.3e-5 beside
                # 1.26e-05; d3's ".3g" then wrote 0.0000100): three digits, one format
                digits=3,
            ),
            "spread": log_slider(
                "spread δ",
                spread,
                -5,
                1,
                what="spread δ, how far entries lie from 1: x = [1, 1 + δ, 1 − δ, 1]",
                readout_format=".4g",  # a step between decades, 10^-1.7, reads 0.01995, as the
                # readout says it and σ² follows from it (a student review: "0.0200", σ² 0.000199)
                digits=4,
            ),
        }
        figure, self.bars, self.curves, self.marker = epsilon_figure(
            PATTERN, framework_eps=FRAMEWORK_EPS, managed=False
        )
        dynamic = [*self.bars.artists, *self.curves.artists, *self.marker.artists]
        super().__init__(
            "Epsilon: x = [1, 1 + δ, 1 − δ, 1]", controls, FastRenderer(figure, dynamic)
        )

    def compute(self, eps: float, spread: float):
        x = CENTRE + spread * PATTERN
        variance = float(sample_variance(x))
        exact, inside, outside = (
            layer_norm(x, eps=0.0),
            layer_norm(x, eps=eps),
            layer_norm_eps_outside_sqrt(x, eps=eps),
        )
        std_in, std_out = float(inside.std()), float(outside.std())
        self.bars.update(exact, inside, outside)
        self.curves.update(variance)
        self.marker.update(eps, std_in, std_out)
        readout = (
            # δ and ε as used: a value typed into a log slider moves to its nearest step
            # (base.log_slider)
            f"δ = {spread:.4g}, σ² = {variance:.3g}, ε = {_as_slider(eps)}. ε inside √: output "
            "variance "
            f"σ²/(σ²+ε) = <b>{std_in**2:.4g}</b> (std {std_in:.4g}); ε added to σ: std "
            f"<b>{std_out:.4g}</b>; largest gap between the two outputs: "
            f"{np.max(np.abs(inside - outside)):.3g}"
        )
        note = ""
        if eps >= variance:
            note = (
                "ε ≥ σ²: ε is half of σ² + ε or more, so LayerNorm no longer standardizes; it "
                f"squashes the output toward 0 (variance {std_in**2:.3g} instead of 1)."
            )
        return (
            readout,
            note,
            {
                "x": x,
                "variance": variance,
                "inside": inside,
                "outside": outside,
                "exact": exact,
                "output_variance": std_in**2,
                "std_outside": std_out,
            },
        )


def epsilon_explorer(eps: float = 1e-5, spread: float = 1e-2) -> EpsilonExplorer:
    """Explorer for the chapter "Epsilon": ε on a log slider against an input whose spread you
    control.

    The input is ``[1, 1 + δ, 1 - δ, 1]`` (for δ = 0.001, the chapter's near-constant
    example), normalized with ε inside the square root, with ε added to σ, and without ε.
    By default it opens at δ = 0.01, where PyTorch's ε is still below σ² = 5e-5, though only five
    times, so the output variance is already 5/6, not 1; the chapter opens it at δ = 0.001, the
    near-constant example, where ε takes over. The reader moves δ or ε, and the note says which of
    the two dominates.

    Parameters
    ----------
    eps : float, default 1e-5
        Starting ε, in [1e-10, 1].
    spread : float, default 1e-2
        Starting δ, in [1e-5, 10].

    Returns
    -------
    EpsilonExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``eps`` and ``spread`` (log sliders).

    Raises
    ------
    ValueError
        If a starting value lies outside its slider's range.
    """
    if not 1e-10 <= eps <= 1.0:
        raise ValueError(f"epsilon_explorer: eps must lie in [1e-10, 1]; got {eps}.")
    if not 1e-5 <= spread <= 10.0:
        raise ValueError(f"epsilon_explorer: spread must lie in [1e-5, 10]; got {spread}.")
    return EpsilonExplorer(float(eps), float(spread))


def _as_slider(value: float) -> str:
    """`value` as the ε slider shows it (d3's ".2e": 1.26e-5, no zero before the exponent's
    digit), so the readout and the slider agree to the character (student reviews)."""
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{mantissa}e{int(exponent):+d}"
