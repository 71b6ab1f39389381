"""The explorer of the chapter "Scale γ and shift β"."""

from __future__ import annotations

import numpy as np

from ...forward import layer_norm
from ..experiments.complete_examples import documents_embedding
from ..figures.gamma_beta import gamma_beta_figure
from ..figures.render import FastRenderer
from .base import Explorer, slider
from .plans import Sweep, entries, steps, with_presets

__all__ = ["PER_GROUP_BETA", "PER_GROUP_GAMMA", "gamma_beta_explorer"]

GAMMA_RANGE, BETA_RANGE = (-2.0, 2.0), (-3.0, 3.0)
#: The small vector: the book's running token, from chapter 03 (H = 8).
TOKEN = (0.4, -1.1, 0.9, 0.2, -0.6, 1.3, -0.3, 0.0)
H = len(TOKEN)
#: The chapter's γ and β, values training might have left (chapter "Scale γ and shift β").
CHAPTER_GAMMA = (0.5, 1.0, 2.0, -1.0, 1.5, 1.0, -0.5, 1.0)
CHAPTER_BETA = (-2.0, 0.0, 1.0, 3.0, 0.0, -1.0, 0.5, 0.0)
#: The preset "one pair per group" and the chapter's companion figure's last panel: one (γ, β)
#: per group of 64 features, four different pairs, each shared by two neighbouring groups.
PER_GROUP_GAMMA = (2.0, 2.0, -1.0, -1.0, 0.5, 0.5, 1.0, 1.0)
PER_GROUP_BETA = (1.0, 1.0, -2.0, -2.0, 0.0, 0.0, 3.0, 3.0)


class GammaBetaExplorer(Explorer):
    """Set a scale and a shift for each of four features; watch a small vector and a wide one's
    histogram follow."""

    web_plan = Sweep(
        presets={
            "the chapter's γ and β": {
                **entries("gamma", CHAPTER_GAMMA),
                **entries("beta", CHAPTER_BETA),
            },
            "initial: γ = 1, β = 0": {**entries("gamma", (1,) * H), **entries("beta", (0,) * H)},
            "γ = 2, β = 0": {**entries("gamma", (2,) * H), **entries("beta", (0,) * H)},
            "γ = 0.5, β = −1": {**entries("gamma", (0.5,) * H), **entries("beta", (-1,) * H)},
            "one pair per group": {
                **entries("gamma", PER_GROUP_GAMMA),
                **entries("beta", PER_GROUP_BETA),
            },
        },
        # sixteen sliders: half steps of γ and whole steps of β, plus the presets' values,
        # keep the page within its byte budget (web.MAX_BYTES)
        grids={
            **with_presets(
                {f"gamma{i}": steps(-2, 2, 0.5) for i in range(1, H + 1)},
                [CHAPTER_GAMMA, PER_GROUP_GAMMA],
            ),
            **with_presets(
                {f"beta{i}": steps(-3, 3, 1.0) for i in range(1, H + 1)},
                [CHAPTER_BETA, PER_GROUP_BETA],
            ),
        },
    )

    readout_lines = (
        5  # y, and the bars cut at the top when there are any (five lines at JupyterLab's width)
    )

    control_columns = 4  # γ1 … γ4, then β1 … β4 under them; then γ5 … γ8 and β5 … β8

    def __init__(self, gamma, beta):
        self.xhat_small = layer_norm(np.array(TOKEN))
        self.xhat_wide = layer_norm(documents_embedding())
        limits = [
            float(np.ceil(max(map(abs, GAMMA_RANGE)) * np.abs(x).max() + max(map(abs, BETA_RANGE))))
            for x in (self.xhat_small, self.xhat_wide)
        ]
        controls = {}
        for first in range(0, H, 4):  # rows of four: each βᵢ under its γᵢ
            for i in range(first, first + 4):
                controls[f"gamma{i + 1}"] = slider(
                    f"γ{i + 1}",
                    gamma[i],
                    *GAMMA_RANGE,
                    what=f"γ{i + 1}, the scale of feature {i + 1}",
                )
            for i in range(first, first + 4):
                controls[f"beta{i + 1}"] = slider(
                    f"β{i + 1}",
                    beta[i],
                    *BETA_RANGE,
                    what=f"β{i + 1}, the shift of feature {i + 1}",
                )
        figure, self.panels = gamma_beta_figure(
            self.xhat_small, self.xhat_wide, gamma, beta, limits=limits, managed=False
        )
        super().__init__(
            "Scale γ and shift β, one pair per feature",
            controls,
            FastRenderer(figure, self.panels.artists),
        )

    def compute(self, **values):
        gamma = np.array([values[f"gamma{i}"] for i in range(1, H + 1)])
        beta = np.array([values[f"beta{i}"] for i in range(1, H + 1)])
        y_small, y_wide = self.panels.update(gamma, beta)
        groups_y = np.split(y_wide, H)
        readout = (
            f"small vector: y = γ ⊙ x̂ + β = [{_numbers(y_small)}]<br>wide vector, mean of each "
            f"group (βᵢ + γᵢ·mean x̂): [{_numbers(g.mean() for g in groups_y)}]; "
            f"spread (std, |γᵢ|·std x̂): [{_numbers(g.std() for g in groups_y)}]; whole vector: "
            f"mean {_numbers([y_wide.mean()])}, std {_numbers([y_wide.std()])}"
        )
        if self.panels.clipped:
            readout += (
                f"<br>{self.panels.clipped} histogram "
                f"bar{'s are' if self.panels.clipped > 1 else ' is'} taller than the axis "
                f"({self.panels.top:g} features) and cut at the top (▲): a small |γ| packs a "
                "group into few bins."
            )
        note = ""
        if np.any(gamma == 0):
            zeros = ", ".join(str(i + 1) for i in np.flatnonzero(gamma == 0))
            note = (
                f"γ = 0 for feature {zeros}: its output is βᵢ whatever the input, so the feature "
                "carries no information."
            )
        return (
            readout,
            note,
            {
                "y_small": y_small,
                "y_wide": y_wide,
                "group_means": np.array([g.mean() for g in groups_y]),
                "group_stds": np.array([g.std() for g in groups_y]),
            },
        )


def gamma_beta_explorer(gamma=(1.0,) * H, beta=(0.0,) * H) -> GammaBetaExplorer:
    """Explorer for the chapter "Scale γ and shift β": one γ and one β slider for each of eight
    features.

    The small vector is the book's running token (``TOKEN``), normalized; the wide one is
    the normalized 512-d embedding of
    :func:`lnlib.book.experiments.complete_examples.documents_embedding`, whose features are split
    into eight groups of 64 that share the sliders' values.

    Parameters
    ----------
    gamma : sequence of 8 floats, default all 1 (the initialisation)
        Starting scales, each in [-2, 2].
    beta : sequence of 8 floats, default all 0 (the initialisation)
        Starting shifts, each in [-3, 3].

    Returns
    -------
    GammaBetaExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``gamma1`` ... ``gamma8`` and ``beta1`` ...
        ``beta8``.

    Raises
    ------
    ValueError
        If `gamma` or `beta` does not have 8 values, or a value lies outside its slider's range.
    """
    gamma, beta = [float(g) for g in gamma], [float(b) for b in beta]
    for name, values, (low, high) in (("gamma", gamma, GAMMA_RANGE), ("beta", beta, BETA_RANGE)):
        if len(values) != H:
            raise ValueError(
                f"gamma_beta_explorer takes {H} starting values of {name}, one per feature; got "
                f"{len(values)}."
            )
        if not all(low <= v <= high for v in values):
            raise ValueError(
                f"starting values of {name} must lie in [{low}, {high}]; got {values}."
            )
    return GammaBetaExplorer(gamma, beta)


def _numbers(values) -> str:
    """Three decimals, comma-separated, with no "-0.000" for a value that rounds to zero."""
    return ", ".join(f"{round(float(v), 3) + 0.0:.3f}" for v in values)
