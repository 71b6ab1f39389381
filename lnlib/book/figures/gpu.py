"""Figures for the chapter "LayerNorm on a GPU": the roofline with each kernel's place on it."""

from __future__ import annotations

import numpy as np

from .style import PALETTE, new_figure

__all__ = ["roofline_figure"]


def roofline_figure(counts, spec: dict, measured: list | None = None, *, width: int = 4):
    """The roofline of a GPU's published figures, and each kernel's arithmetic intensity.

    Parameters
    ----------
    counts : sequence of lnlib.book.experiments.gpu.KernelCount
    spec : dict
        ``bandwidth`` (bytes/s) and ``fp32_flops`` (FLOP/s), labelled as the specification.
    measured : list of (intensity, flops_per_s, label), optional
        Measured points; None or empty draws a note that nothing was measured.
    width : int, default 4
        Storage bytes per element (4: float32).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = new_figure(figsize=(5.4, 3.6))
    intensity = np.logspace(-2, 3, 200)
    roof = np.minimum(spec["bandwidth"] * intensity, spec["fp32_flops"])
    ax.loglog(intensity, roof / 1e12, color=PALETTE["neutral"], label="roof (specification)")
    ridge = spec["fp32_flops"] / spec["bandwidth"]
    ax.axvline(ridge, color=PALETTE["neutral"], linestyle=":", linewidth=1)
    ax.annotate("ridge", (ridge, 100), xytext=(4, 0), textcoords="offset points", fontsize=8)
    places = {}  # kernels at the same intensity share a marker
    for count in counts:
        places.setdefault(count.intensity(width), []).append(count.name.split(":")[0])
    colours = [PALETTE[k] for k in ("input", "mean", "positive", "output", "negative")]
    if len(places) > len(colours):
        raise ValueError(f"{len(places)} intensities to mark, but {len(colours)} markers")
    for (x, names), colour, marker in zip(places.items(), colours, "oDs^v"):
        label = _shared_label(names)
        ax.plot([x], [spec["bandwidth"] * x / 1e12], marker, color=colour, label=label)
    for x, flops, label in measured or []:
        ax.plot([x], [flops / 1e12], "x", color=PALETTE["neutral"], label=label)
    if not measured:
        ax.text(
            0.98, 0.05,
            "kernels drawn at their bound, not a speed;\n"
            "no measured point: not yet measured on a GPU",
            transform=ax.transAxes, ha="right", va="bottom", fontsize=8,
        )  # fmt: skip
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("attainable TFLOP/s")
    ax.set_ylim(0.01, 200)
    fig.legend(loc="outside lower center", ncols=2, fontsize=8)
    return fig


def _shared_label(names: list[str]) -> str:
    """One legend entry for the kernels at one intensity: ``kernels 1, 2, 3; RMSNorm backward``."""
    numbered = [name for name in names if name.isdigit()]
    others = [name for name in names if not name.isdigit()]
    if numbered:
        others.insert(0, ("kernels " if len(numbered) > 1 else "kernel ") + ", ".join(numbered))
    return "; ".join(others)
