"""The explorer of the chapter "LayerNorm after 2020": placement, depth, and the query/key scale
with or without QK-norm."""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import numpy as np

from ..figures.after_2020 import explorer_figure
from ..figures.render import FastRenderer
from ..models.placements import PLACEMENT_LABELS, PLACEMENTS, placement_profile
from ..tools import prose
from ..tools.progress import progress
from .base import Explorer, described

__all__ = ["DEPTHS", "QK_SCALES", "after_2020_explorer", "explorer_grid"]

#: The settings the explorer offers; every one is measured before the explorer is drawn.
DEPTHS = (4, 8, 16, 32)
QK_SCALES = (1, 8)
WIDTH, SEEDS = 32, 2


@lru_cache(maxsize=1)
def explorer_grid() -> dict:
    """Every profile the explorer of chapter "LayerNorm after 2020" can show, measured once per
    session (several seconds).

    Returns
    -------
    dict
        ``(placement, depth, qk_scale, qk_norm) -> PlacementProfile``.
    """
    settings = [
        (placement, depth, scale, norm)
        for placement in PLACEMENTS
        for depth in DEPTHS
        for scale in QK_SCALES
        for norm in (False, True)
    ]
    measuring = progress(settings, "measuring every setting of the explorer", unit="setting")
    return {
        (placement, depth, scale, norm): placement_profile(
            placement, depth, WIDTH, seeds=SEEDS, qk_scale=scale, qk_norm=norm
        )
        for placement, depth, scale, norm in measuring
    }


def _expected_growth(placement: str, depth: int) -> str:
    """What the readout's ‖x_L‖²/H scatters around for the placements that grow by exactly 2 per
    layer in expectation (Peri-LN and OLMo 2, chapter 12's appendix derives it): learner B read the
    explorer's two seeds, 75.3 at L = 32, against the chapter's 2 per layer (24 seeds: 65 ± 10)."""
    if placement not in ("peri", "olmo2"):
        return ""
    spread = f"the mean of {SEEDS} seeds can land well off it"
    return f" (in expectation 1 + 2L = {1 + 2 * depth}; {spread})"


def _limits(grid: dict) -> dict:
    """Fixed axis limits that hold every setting's curves."""

    def span(measure):
        values = np.concatenate([getattr(p, measure).ravel() for p in grid.values()])
        return values.min(), values.max()

    (v_low, v_high), (g_low, g_high), (_, a_high), (_, e_high) = (
        span(m) for m in ("stream_sq", "grad_norm", "angle", "entropy")
    )
    return {
        "stream_sq": (0.5 * v_low, 2 * v_high),
        "grad_norm": (0.3 * g_low, 2 * g_high),
        "angle": (0, 1.05 * a_high),
        "entropy": (0, 1.05 * e_high),
    }


class After2020Explorer(Explorer):
    """Pick a placement, a depth and the query/key scale; the four per-layer measures follow
    (chapter "LayerNorm after 2020")."""

    def __init__(self, placement: str, depth: int, qk_scale: int, qk_norm: bool):
        self.grid = explorer_grid()
        controls = {
            "placement": described(
                widgets.Dropdown(
                    options=[(PLACEMENT_LABELS[s], s) for s in PLACEMENTS],
                    value=placement,
                    description="placement",
                ),
                "placement, where the normalizations sit in each layer",
            ),
            "depth": described(
                widgets.SelectionSlider(
                    options=DEPTHS, value=depth, description="depth L", continuous_update=True
                ),
                "depth L, the number of layers",
                "layer",
            ),
            "qk_scale": described(
                widgets.ToggleButtons(options=QK_SCALES, value=qk_scale, description="q/k scale"),
                "q/k scale, the factor on the query and key weights",
                format=lambda value, label: f"× {value}",
            ),
            "qk_norm": described(
                widgets.Checkbox(value=qk_norm, description="QK-norm"),
                "QK-norm, a normalization of queries and keys before their dot products",
            ),
        }
        figure, self.panels = explorer_figure(
            self.grid[(placement, depth, qk_scale, qk_norm)],
            max_depth=max(DEPTHS),
            limits=_limits(self.grid),
            managed=False,
        )
        super().__init__(
            "Placements at initialization", controls, FastRenderer(figure, self.panels.artists)
        )

    def compute(self, placement, depth, qk_scale, qk_norm):
        profile = self.grid[(placement, depth, qk_scale, qk_norm)]
        self.panels.update(profile)
        stream, grads, angle = (
            profile.stream_sq.mean(axis=0),
            profile.grad_norm.mean(axis=0),
            profile.angle.mean(axis=0),
        )
        entropy = float(profile.entropy.mean())
        result = {
            "stream_top": float(stream[-1]),
            "grad_top_over_bottom": float(grads[-1] / grads[0]),
            "angle_first": float(angle[0]),
            "angle_last": float(angle[-1]),
            "entropy": entropy,
        }
        readout = (
            f"{PLACEMENT_LABELS[placement]}, L = {depth}, H = {WIDTH} ({SEEDS} seeds): "
            f"‖x<sub>L</sub>‖²/H = <b>{stream[-1]:.3g}</b>{_expected_growth(placement, depth)}; "
            "top/bottom gradient = "
            f"<b>{prose.number(float(grads[-1] / grads[0]), '.2g')}</b>; angle turned by layer 1 "
            f"/ layer L = <b>{angle[0]:.3f}</b> / <b>{angle[-1]:.3f}</b>; attention entropy "
            f"<b>{entropy:.2f}</b> nats (uniform: {np.log(8):.2f})"
        )
        note = ""
        if qk_scale > 1 and not qk_norm and entropy < 0.5:
            note = (
                "The queries and keys are scaled up and nothing normalizes them: the logits grow "
                "with the square of the scale and each query attends to almost one key. Tick "
                "QK-norm to bound them."
            )
        elif placement == "olmo2" and not qk_norm:
            note = (
                "OLMo 2's reordering leaves each branch's input unnormalized, so attention reads "
                "the growing stream and its entropy falls with depth; OLMo 2 pairs it with "
                "QK-norm."
            )
        return readout, note, result


def after_2020_explorer(
    placement: str = "pre", depth: int = 16, qk_scale: int = 1, qk_norm: bool = False
) -> After2020Explorer:
    """Explorer for the chapter "LayerNorm after 2020": variance, gradient, change per layer and
    attention entropy.

    Every setting is measured before the explorer is drawn (:func:`explorer_grid`), so moving a
    control only redraws.

    Parameters
    ----------
    placement : str, default "pre"
        One of :data:`lnlib.book.models.placements.PLACEMENTS`.
    depth : int, default 16
        One of ``DEPTHS``.
    qk_scale : int, default 1
        One of ``QK_SCALES``: the factor on the query and key weights.
    qk_norm : bool, default False

    Raises
    ------
    ValueError
        For a setting the explorer does not offer.
    """
    if (
        placement not in PLACEMENTS
        or depth not in DEPTHS
        or qk_scale not in QK_SCALES
        or not isinstance(qk_norm, bool)
    ):
        raise ValueError(
            f"after_2020_explorer offers placement in {PLACEMENTS}, depth in {DEPTHS}, qk_scale "
            f"in {QK_SCALES} and qk_norm True or False; got placement={placement!r}, "
            f"depth={depth!r}, qk_scale={qk_scale!r}, qk_norm={qk_norm!r}."
        )
    return After2020Explorer(placement, depth, qk_scale, qk_norm)
