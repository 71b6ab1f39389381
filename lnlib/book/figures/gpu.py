"""Figures for the chapter "LayerNorm on a GPU": the roofline with each kernel's place on it, and
what ``make bench-gpu`` measured."""

from __future__ import annotations

import numpy as np

from .style import PALETTE, new_figure

__all__ = ["roofline_figure", "timing_figure"]


def roofline_figure(counts, spec: dict, measured: list | None = None, *, width: int = 4):
    """The roofline of a GPU's published figures, and each kernel's arithmetic intensity.

    Parameters
    ----------
    counts : sequence of lnlib.book.experiments.gpu.KernelCount
    spec : dict
        ``bandwidth`` (bytes/s) and ``fp32_flops`` (FLOP/s), labelled as the specification.
    measured : list of (intensity, flops_per_s, label), optional
        Measured points; None or empty draws a note that the markers are bounds, not speeds.
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
            "kernels drawn at their bound, not a speed",
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


#: Each implementation's colour and marker in :func:`timing_figure`, by its label's first word.
_TIMED_STYLE = {
    "kernel": ("output", "o"),
    "two-stage": ("output", "o"),
    "RMSNorm": ("output", "o"),
    "PyTorch": ("input", "s"),
    "Triton,": ("positive", "D"),
}


def timing_figure(results, compared: dict, dtype: str = "float16"):
    """What ``make bench-gpu`` measured (chapter "LayerNorm on a GPU", § "Timing on a GPU"): each
    implementation's bytes per second as a fraction of a device copy's, by part, on the floor's
    shape (left); the forward kernels' over the models' widths (right).

    Parameters
    ----------
    results : lnlib.book.experiments.gpu.GpuResults
    compared : dict
        Part to ``{label: implementation}`` (:data:`lnlib.book.experiments.gpu.COMPARED`).
    dtype : str, default "float16"
    """
    fig, (bars, lines) = new_figure(1, 2, figsize=(5.4, 4.2), width_ratios=(1.3, 1))
    ticks, y = [], 0
    for part, names in compared.items():
        ticks.append((y, part))  # the group's heading, in bold
        for label, name in names.items():
            y -= 1
            fraction = results.entry(name, part, dtype)["fraction_of_copy"]
            bars.barh(y, fraction, color=PALETTE[_TIMED_STYLE[label.split()[0]][0]], height=0.75)
            bars.text(fraction + 0.02, y, f"{fraction:.2f}", va="center", fontsize=7)
            ticks.append((y, label))
        y -= 1.3
    positions, names = zip(*ticks)
    bars.set_yticks(positions, names, fontsize=8)
    for tick, name in zip(bars.get_yticklabels(), names):
        if name in compared:
            tick.set_fontweight("bold")
    bars.tick_params(axis="y", length=0)
    bars.set_xlim(0, 1)
    bars.set_xlabel("fraction of the copy's bytes/s")
    shape = results.entry("device-to-device copy", "copy", dtype)
    bars.set_title(f"{shape['rows']} × {shape['size']}, {dtype}", fontsize=9)
    for label in ("kernel 1, thread per row", "kernel 3, warp per row", "PyTorch layer_norm",
                  "Triton, tutorial"):  # fmt: skip
        colour, marker = _TIMED_STYLE[label.split()[0]]
        widths = results.widths(compared["forward"][label], "forward", dtype)
        style = "--" if label.startswith("kernel 1") else "-"
        lines.plot(*zip(*widths), style, marker=marker, color=PALETTE[colour], ms=4, label=label)
    lines.set_xscale("log", base=2)
    lines.set_xticks([768, 2048, 8192], ["768", "2048", "8192"])
    lines.minorticks_off()
    lines.set_ylim(0, 1)
    lines.set_xlabel("features per row, H")
    lines.set_ylabel("fraction of the copy's bytes/s")
    lines.set_title("forward, 2²⁶ elements", fontsize=9)
    fig.legend(*lines.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=8)
    return fig
