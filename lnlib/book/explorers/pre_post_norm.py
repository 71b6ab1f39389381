"""The explorer of the chapter "Pre-norm vs post-norm": depth, width and placement, at
initialization."""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets

from ..experiments.pre_post_norm import profile_grid
from ..figures.pre_post_norm import EXPLORED_WEIGHT, profile_figure
from ..figures.render import FastRenderer
from ..models.transformer import PLACEMENTS
from .base import Explorer, described

__all__ = ["DEPTHS", "WIDTHS", "explorer_grid", "pre_post_norm_explorer"]

#: The settings the explorer offers; every one is measured before the explorer is drawn.
DEPTHS = (2, 4, 8, 12, 16, 24)
WIDTHS = (16, 32, 64)
SEEDS = 4


@lru_cache(maxsize=1)
def explorer_grid() -> dict:
    """Every profile the explorer of chapter "Pre-norm vs post-norm" can show, measured once per
    session (a few seconds, with a progress bar in a live notebook)."""
    return profile_grid(
        DEPTHS,
        WIDTHS,
        seeds=SEEDS,
        description="measuring every depth, width and placement the explorer offers",
    )


class PrePostNormExplorer(Explorer):
    """Pick a depth, a width and a placement; the stream norm and the per-layer gradients follow
    (chapter "Pre-norm vs post-norm")."""

    def __init__(self, depth: int, width: int, placement: str):
        self.grid = explorer_grid()
        controls = {
            "depth": described(
                widgets.SelectionSlider(
                    options=DEPTHS, value=depth, description="depth L", continuous_update=True
                ),
                "depth L, the number of layers",
                "layer",
            ),
            "width": described(
                widgets.Dropdown(options=WIDTHS, value=width, description="width H"),
                "width H, features per token",
                "feature",
            ),
            "placement": described(
                widgets.ToggleButtons(
                    options=[("post-norm", "post"), ("pre-norm", "pre")],
                    value=placement,
                    description="placement",
                ),
                "placement, where LayerNorm sits: after or before each residual branch",
            ),
        }
        profiles = self.grid.values()
        stream_max = 1.05 * max(p.stream_sq.mean(axis=0).max() for p in profiles)
        low = min(p.mean(EXPLORED_WEIGHT).min() for p in profiles) / 2
        high = 1.5 * max(
            (p.mean(EXPLORED_WEIGHT) + p.spread(EXPLORED_WEIGHT)).max() for p in profiles
        )
        figure, self.panels = profile_figure(
            self.grid[(placement, depth, width)],
            max_depth=max(DEPTHS),
            stream_max=stream_max,
            grad_range=(low, high),
            managed=False,
        )
        super().__init__(
            "Pre-norm vs post-norm at initialization",
            controls,
            FastRenderer(figure, self.panels.artists),
        )

    def compute(self, depth, width, placement):
        profile = self.grid[(placement, depth, width)]
        self.panels.update(profile)
        stream_top = float(profile.stream_sq[:, -1].mean())
        grads = profile.mean(EXPLORED_WEIGHT)
        result = {
            "stream_top": stream_top,
            "last_grad": float(grads[-1]),
            "top_over_bottom": float(grads[-1] / grads[0]),
            "stream": profile.stream_sq.mean(axis=0),
            "grad": grads,
        }
        readout = (
            f"{placement}-norm, L = {depth}, H = {width} ({SEEDS} seeds): ‖x<sub>L</sub>‖²/H = "
            f"<b>{stream_top:.2f}</b>; last layer's ‖∂ℒ/∂W<sub>1</sub>‖ = <b>{grads[-1]:.3g}</b>; "
            f"top layer / bottom layer = <b>{grads[-1] / grads[0]:.2f}</b>"
        )
        note = ""
        if depth == min(DEPTHS):
            note = (
                "With two layers the placements differ little: pre-norm's stream has had only two "
                "layers to grow and the gradients barely tilt; the differences build up with "
                "depth."
            )
        return readout, note, result


def pre_post_norm_explorer(
    depth: int = 12, width: int = 64, placement: str = "post"
) -> PrePostNormExplorer:
    """Explorer for the chapter "Pre-norm vs post-norm": the residual stream and the FFN's W1
    gradients per layer.

    Every setting is measured before the explorer is drawn (:func:`explorer_grid`,
    ``SEEDS`` seeds each), so moving a control only redraws.

    Parameters
    ----------
    depth : int, default 12
        One of ``DEPTHS``.
    width : int, default 64
        One of ``WIDTHS``.
    placement : {"post", "pre"}

    Raises
    ------
    ValueError
        For a depth, width or placement the explorer does not offer.
    """
    if depth not in DEPTHS or width not in WIDTHS or placement not in PLACEMENTS:
        raise ValueError(
            f"pre_post_norm_explorer offers depth in {DEPTHS}, width in {WIDTHS} and placement in "
            f"{PLACEMENTS}; got depth={depth!r}, width={width!r}, placement={placement!r}."
        )
    return PrePostNormExplorer(depth, width, placement)
