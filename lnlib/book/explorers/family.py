"""The explorer of the chapter "LayerNorm and its family": one tensor, five ways to share
statistics."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ...norms import normalize, statistic_ids
from ..figures.family import OutputPanel, SharingPanel
from ..figures.render import FastRenderer
from ..figures.style import new_figure
from .base import Explorer, Info, described

__all__ = ["family_explorer", "family_tensor"]

METHOD_OPTIONS = [
    ("batch norm", "batch"),
    ("layer norm", "layer"),
    ("instance norm", "instance"),
    ("group norm", "group"),
    ("RMS norm", "rms"),
]
NAMES = {value: label for label, value in METHOD_OPTIONS}


def family_tensor(
    samples: int = 6, channels: int = 4, positions: int = 4, *, seed: int = 0
) -> np.ndarray:
    """The explorer's (N, C, positions) tensor: channels with different means and scales, like a
    convolution's features.

    Channel c has mean ``[1, -2, 0.5, 3, ...][c]`` and standard deviation
    ``[1, 2, 0.5, 1.5, ...][c]`` (cycled), so that methods which standardize each channel (batch,
    instance) look different from those which keep channels' differences (layer, RMS).
    """
    means = np.resize([1.0, -2.0, 0.5, 3.0], channels)[None, :, None]
    scales = np.resize([1.0, 2.0, 0.5, 1.5], channels)[None, :, None]
    return means + scales * np.random.default_rng(seed).normal(size=(samples, channels, positions))


class FamilyExplorer(Explorer):
    """Pick a method, a batch size and a number of groups; see which entries share statistics and
    sample 1's output."""

    def __init__(self, x: np.ndarray, method: str, batch: int, groups: int):
        self.x = x
        samples, channels, positions = x.shape
        divisors = [g for g in range(1, channels + 1) if channels % g == 0]
        controls = {
            "method": described(
                widgets.Dropdown(options=METHOD_OPTIONS, value=method, description="method"),
                "method, the normalization whose shared statistics are shown",
            ),
            "batch": described(
                widgets.IntSlider(
                    value=batch,
                    min=1,
                    max=samples,
                    description="batch size",
                    continuous_update=True,
                ),
                "batch size, samples in the batch",
                "sample",
            ),
            "groups": described(
                widgets.SelectionSlider(
                    options=divisors,
                    value=groups,
                    description=f"groups G ({', '.join(map(str, divisors))})",  # its only steps
                    continuous_update=True,
                    style={"description_width": "initial"},  # the whole label, never cut
                ),
                f"groups G ({', '.join(map(str, divisors))}), the channel groups of group norm",
                "group",
            ),
        }
        self.full_batch = {(m, g): normalize(x, m, groups=g)[0] for m in NAMES for g in divisors}
        figure, (grid_ax, out_ax) = new_figure(
            2, 1, figsize=(5.4, 3.6), managed=False, height_ratios=[1, 1.4]
        )
        self.grid = SharingPanel(grid_ax, samples, channels, positions, alternate=False)
        self.output = OutputPanel(out_ax, channels, positions)
        grid_ax.set_title(
            "blue: shares the dot's statistics; grey: other sets; white: not in batch", loc="left"
        )
        out_ax.set_title("sample 1 after normalization", loc="left")
        out_ax.legend(
            loc="lower right",
            bbox_to_anchor=(1.0, 1.0),
            ncol=2,
            fontsize=8,
            frameon=False,
            borderaxespad=0.2,
        )
        super().__init__(
            "LayerNorm's family: who shares statistics?",
            controls,
            FastRenderer(figure, self.grid.artists + self.output.artists),
        )

    def compute(self, method, batch, groups):
        batch_x = self.x[:batch]
        ids = statistic_ids(batch_x.shape, method, groups=groups)
        y = normalize(batch_x, method, groups=groups)
        self.grid.update(ids)
        self.output.update(y[0], self.full_batch[method, groups])
        shared = batch_x[ids == ids[0, 0, 0]]
        change = float(np.max(np.abs(y[0] - self.full_batch[method, groups])))
        rms = float(np.sqrt(np.mean(shared * shared)))
        statistics = (
            f"RMS = {rms:.3f}"
            if method == "rms"
            else f"μ = {shared.mean():.3f}, σ = {shared.std():.3f}"
        )
        readout = (
            f"<b>{NAMES[method]}</b>{f' with G = {groups}' if method == 'group' else ''}, batch "
            f"of {batch}: the dot shares its statistics with {shared.size} entries "
            f"({statistics}). "
            + (
                (
                    f"Sample 1's output differs from its output in a batch of {len(self.x)} by up "
                    f"to <b>{change:.3f}</b>."
                )
                if batch < len(self.x)
                else f"This is the full batch of {len(self.x)}, whose outputs the rings mark."
            )
            + "".join(f" ({reason}.)" for reason in self.inactive({"method": method}).values())
        )
        return (
            readout,
            self._note(method, batch, groups, len(self.x[0])),
            {
                "ids": ids,
                "y": y,
                "set_size": shared.size,
                "set_mean": shared.mean(),
                "set_std": shared.std(),
                "set_rms": rms,
                "change": change,
            },
        )

    def inactive(self, values):
        return {} if values["method"] == "group" else {"groups": "G matters only for group norm"}

    @staticmethod
    def _note(method, batch, groups, channels) -> str:
        if method == "batch" and batch == 1:
            return Info(
                "With one sample, batch norm of an image tensor averages each channel over its "
                "positions only: it is instance norm."
            )
        if method == "batch" and batch == 2:
            return (
                "With a batch of two, each channel's statistics come from two samples: sample 1's "
                "output depends strongly on the other one."
            )
        if method == "group" and groups == 1:
            return Info("G = 1: one group holds every channel, so group norm is layer norm.")
        if method == "group" and groups == channels:
            return Info("G = C: every channel is its own group, so group norm is instance norm.")
        return ""


def family_explorer(
    method: str = "batch", batch: int = 6, groups: int = 2, *, seed: int = 0
) -> FamilyExplorer:
    """Explorer for the chapter "LayerNorm and its family": method, batch size and groups on one (6,
    4, 4) tensor.

    Parameters
    ----------
    method : str, default "batch"
        One of "batch", "layer", "instance", "group", "rms".
    batch : int, default 6
        How many of the 6 samples form the batch (1 to 6).
    groups : int, default 2
        Number of groups for group norm: 1, 2 or 4.
    seed : int
        Seed of the tensor (:func:`family_tensor`).

    Returns
    -------
    FamilyExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``method``, ``batch`` and ``groups``.

    Raises
    ------
    ValueError
        For an unknown method, a batch size outside 1..6, or groups that do not divide 4.
    """
    x = family_tensor(seed=seed)
    if method not in NAMES:
        raise ValueError(f"method must be one of {list(NAMES)}; got {method!r}.")
    if not 1 <= batch <= len(x):
        raise ValueError(f"batch must be between 1 and {len(x)}; got {batch}.")
    if groups not in (1, 2, 4):
        raise ValueError(f"groups must divide the 4 channels: 1, 2 or 4; got {groups!r}.")
    return FamilyExplorer(x, method, batch, groups)
