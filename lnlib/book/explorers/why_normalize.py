"""The explorer of the chapter "Why normalize?": depth, weight scale, LayerNorm on or off, and the
scales per layer."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..figures.render import FastRenderer
from ..figures.style import new_figure
from ..figures.why_normalize import ScalePanels
from ..models.deep_stack import ACTIVATIONS, random_stack, scale_profiles
from .base import Explorer, choice_slider, described

__all__ = ["why_normalize_explorer"]

#: The depths and weight scales the sliders offer; every combination is precomputed.
DEPTHS = (1, 2, 3, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50)
WEIGHT_SCALES = {
    "0.5": 0.5,
    "0.75": 0.75,
    "1": 1.0,
    "1.25": 1.25,
    "√2": float(np.sqrt(2)),
    "1.75": 1.75,
    "2": 2.0,
    "2.5": 2.5,
    "3": 3.0,
}
SCALE_LABELS = {value: label for label, value in WEIGHT_SCALES.items()}
FLOAT16 = np.finfo(np.float16)


def _note(scales) -> str:
    """What a half-precision run would make of these scales: a scale beyond float16's range is not a
    curiosity."""
    if (
        scales.max() > FLOAT16.max
    ):  # the RMS bounds the largest entry from below, so some entry overflows
        return (
            f"A scale passes {float(FLOAT16.max):g}, the largest float16 number: "
            "in half precision, common in training, this stack overflows to inf."
        )
    if scales.min() < FLOAT16.smallest_subnormal:
        return (
            f"A scale falls below {float(FLOAT16.smallest_subnormal):.1e}, the smallest positive "
            "float16 number: in half precision, typical entries there round to 0."
        )
    return ""


def _precompute() -> dict:
    """Scale profiles of every (weight scale, LayerNorm, activation), for every depth: about two
    seconds, once."""
    x, weights, upstream = random_stack(DEPTHS[-1], 64, 32, seed=0)
    return {
        (a, layer_norm, activation): scale_profiles(
            x, a * weights, upstream, DEPTHS, layer_norm_on=layer_norm, activation=activation
        )
        for a in WEIGHT_SCALES.values()
        for layer_norm in (False, True)
        for activation in ACTIVATIONS
    }


class WhyNormalizeExplorer(Explorer):
    """A seeded stack of up to 50 random layers (width 64, batch 32); move the controls and watch
    the scales (chapter "Why normalize?")."""

    def __init__(self, depth: int, weight_scale: float, layer_norm: bool, activation: str):
        self.profiles = _precompute()
        controls = {
            "depth": choice_slider(
                "depth L",
                DEPTHS,
                depth,
                what="depth L, the number of layers in the stack",
                unit="layer",
            ),
            "weight_scale": choice_slider(
                "weight scale a",
                list(WEIGHT_SCALES.items()),
                weight_scale,
                what="weight scale a, each layer's weights a · N(0, 1) / √64",
            ),
            "layer_norm": described(
                widgets.Checkbox(
                    value=layer_norm,
                    description="LayerNorm after each linear map",
                    indent=False,
                    layout=widgets.Layout(width="max-content"),
                ),
                "LayerNorm after each linear map, before its nonlinearity",
            ),
            "activation": described(
                widgets.Dropdown(
                    options=list(ACTIVATIONS), value=activation, description="nonlinearity"
                ),
                "nonlinearity after each layer",
            ),
        }
        figure, (ax_act, ax_grad) = new_figure(1, 2, figsize=(5.4, 3.4), managed=False)
        self.panels = ScalePanels(ax_act, ax_grad, DEPTHS[-1])
        super().__init__(
            "Why normalize? Activation and gradient scale, layer by layer",
            controls,
            FastRenderer(figure, self.panels.artists),
        )

    def compute(self, depth, weight_scale, layer_norm, activation):
        activation_rms, gradient_rms = self.profiles[(weight_scale, layer_norm, activation)]
        act, grad = activation_rms[: depth + 1], gradient_rms[depth]
        self.panels.update(act, grad, layer_norm, activation)
        readout = (
            f"{activation}, a = {SCALE_LABELS[weight_scale]}, "
            f"{'with' if layer_norm else 'without'} LayerNorm, {depth} layer(s): activation scale "
            f"{act[0]:.3g} at the input, <b>{act[-1]:.3g}</b> after the last layer; gradient "
            f"scale {grad[-1]:.3g} at the top, <b>{grad[0]:.3g}</b> at the input (× "
            f"{(grad[0] / grad[-1]) ** (1 / depth):.3f} per layer on the way down)."
        )
        return (
            readout,
            _note(np.concatenate([act, grad])),
            {"activation_rms": act, "gradient_rms": grad},
        )


def why_normalize_explorer(
    depth: int = 20, weight_scale: float = 2.0, layer_norm: bool = False, activation: str = "relu"
) -> WhyNormalizeExplorer:
    """Explorer for the chapter "Why normalize?": a deep random stack with or without LayerNorm.

    Parameters
    ----------
    depth : int, default 20
        Number of layers, one of ``DEPTHS`` (1 to 50).
    weight_scale : float, default 2.0
        The weight scale a, one of the values of ``WEIGHT_SCALES`` (0.5 to 3, and √2):
        weights are a * N(0, 1) / sqrt(64).
    layer_norm : bool, default False
        Put a LayerNorm between each linear map and its nonlinearity.
    activation : {"relu", "tanh"}

    Returns
    -------
    WhyNormalizeExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``depth``, ``weight_scale``, ``layer_norm``,
        ``activation``.

    Raises
    ------
    ValueError
        For a depth or weight scale the sliders do not offer, or an unknown activation.
    """
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {DEPTHS}; got {depth!r}.")
    if weight_scale not in WEIGHT_SCALES.values():
        raise ValueError(
            f"weight_scale must be one of {list(WEIGHT_SCALES.values())}; got {weight_scale!r}."
        )
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}; got {activation!r}.")
    return WhyNormalizeExplorer(depth, weight_scale, bool(layer_norm), activation)
