"""Figures for the chapter "LayerNorm at the speed of memory": copy bandwidth, and each implementation against the floor."""

from __future__ import annotations

import numpy as np

from .style import COLUMN_WIDTH, PALETTE, new_figure

__all__ = ["IMPLEMENTATION_STYLE", "copy_figure", "speed_figure", "FloorPanels"]

#: Colour, marker and short label of each implementation the benchmark times.
IMPLEMENTATION_STYLE = {
    "naive numpy": {"color": PALETTE["negative"], "marker": "v", "label": "naive numpy"},
    "lnlib (numpy)": {"color": PALETTE["input"], "marker": "s", "label": "lnlib (numpy)"},
    "fused (numba)": {"color": PALETTE["positive"], "marker": "o", "label": "fused (numba)"},
    "fused Welford (numba)": {
        "color": PALETTE["reference"],
        "marker": "D",
        "label": "fused, Welford",
    },
    "PyTorch": {"color": PALETTE["mean"], "marker": "^", "label": "PyTorch"},
}
#: Implementations timed on all cores too (numpy's are single-threaded).
THREADED = ("fused (numba)", "PyTorch")


def _style(name: str) -> dict:
    return IMPLEMENTATION_STYLE.get(
        name, {"color": PALETTE["neutral"], "marker": "x", "label": name}
    )


def copy_figure(results):
    """Copy bandwidth against the footprint (MiB), 1 thread and all cores, shaded 10th-90th percentile, caches marked.

    Parameters
    ----------
    results : lnlib.book.experiments.memory_speed.KernelResults
    """
    fig, ax = new_figure(figsize=(COLUMN_WIDTH, 3.0))
    for threads, style in zip(results.thread_counts, ("-", "--")):
        footprint, rate = results.copy_curve(threads)
        colour = PALETTE["input"] if threads == 1 else PALETTE["mean"]
        ax.plot(
            footprint / 2**20,
            rate / 1e9,
            style,
            marker="o",
            color=colour,
            label=f"{threads} thread{'s' if threads > 1 else ''}",
        )
        low, high = results.copy_spread(threads)
        ax.fill_between(footprint / 2**20, low / 1e9, high / 1e9, color=colour, alpha=0.2, lw=0)
    caches = results.data["machine"].get("caches_per_core_or_shared", {})
    for level in ("L1", "L2"):
        if level in caches:
            size = _parse_size(caches[level]) / 2**20
            ax.axvline(size, color=PALETTE["neutral"], lw=0.8, ls=":")
            ax.text(
                size * 1.1,
                ax.get_ylim()[1] * 0.92,
                f"{level} {caches[level]}",
                fontsize=9,
                va="top",
            )
    ax.set(
        xscale="log",
        xlabel="array copied (MiB; a copy moves twice this)",
        ylabel="copy bandwidth (GB/s)",
    )
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", fontsize=9)
    return fig


def _parse_size(text: str) -> float:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text)


def speed_figure(results, part: str = "forward", *, size: int = 1024):
    """Achieved GB/s of every implementation against H (most rows) and against rows (at `size`), with the copy's floor.

    The right axis of the second panel reads the same values as a fraction of
    the 1-thread copy bandwidth: 1 is as fast as copying the same bytes.

    Parameters
    ----------
    results : lnlib.book.experiments.memory_speed.KernelResults
    part : {"forward", "backward"}
    size : int, default 1024
        The H of the rows sweep.
    """
    fig, (by_h, by_rows) = new_figure(1, 2, figsize=(COLUMN_WIDTH, 3.3), sharey=True)
    for name in results.implementations:
        style = _style(name)
        for threads in results.thread_counts:
            if threads > 1 and name not in THREADED:
                continue
            kwargs = {
                "color": style["color"],
                "marker": style["marker"],
                "ms": 5,
                "ls": "-" if threads == 1 else "--",
                "mfc": style["color"] if threads == 1 else "white",
            }
            label = style["label"] + ("" if threads == 1 else f", {threads} threads")
            along_h = results.series(name, part, threads=threads)
            if not along_h:  # e.g. the Welford variant, timed forward only
                continue
            by_h.plot(
                [k["size"] for k in along_h],
                [k["bytes"] / k["median_s"] / 1e9 for k in along_h],
                label=label,
                **kwargs,
            )
            along_rows = results.series(name, part, threads=threads, size=size)
            by_rows.plot(
                [k["rows"] for k in along_rows],
                [k["bytes"] / k["median_s"] / 1e9 for k in along_rows],
                **kwargs,
            )
    floor = results.memory_bandwidth(1) / 1e9
    for ax in (by_h, by_rows):
        # Labelled once, in the figure's legend: a label on the line itself sat on the markers.
        ax.axhline(
            floor,
            color=PALETTE["neutral"],
            lw=1.2,
            ls=":",
            label="copy, 1 thread" if ax is by_h else None,
        )
        ax.set(xscale="log", yscale="log")
    by_h.set(xlabel="H (features), most rows", ylabel=f"achieved GB/s ({part})")
    by_rows.set(xlabel=f"rows, H = {size}")
    right = by_rows.secondary_yaxis("right", functions=(lambda v: v / floor, lambda f: f * floor))
    right.set_ylabel("fraction of the floor")
    fig.legend(loc="outside lower center", ncol=3, fontsize=9)
    return fig


class FloorPanels:
    """The explorer's figure: per part, each implementation's measured time against the floor, on a log time axis.

    One row per implementation: a filled marker for 1 thread with its
    10th-90th percentile whisker, an open marker for all cores; vertical lines
    at the floor for 1 thread (dotted) and for all cores (dashed). Axis limits
    are fixed; :meth:`show` only moves artists.
    """

    LIMITS = (3e-7, 30.0)

    def __init__(self, axes, implementations, thread_counts):
        self.implementations = tuple(implementations)
        self.thread_counts = tuple(thread_counts)
        self.markers, self.whiskers, self.floors = {}, {}, {}
        for part, ax in zip(("forward", "backward"), axes):
            ax.set(xscale="log", xlim=self.LIMITS, ylim=(-0.7, len(self.implementations) - 0.3))
            ax.set_yticks(
                range(len(self.implementations)),
                [_style(n)["label"] for n in self.implementations],
                fontsize=9,
            )
            ax.invert_yaxis()
            ax.set_title(part, fontsize=10, loc="left")
            ax.grid(axis="y", visible=False)
            for i, name in enumerate(self.implementations):
                style = _style(name)
                (self.whiskers[part, name],) = ax.plot([], [], color=style["color"], lw=2)
                for threads in self.thread_counts:
                    (self.markers[part, name, threads],) = ax.plot(
                        [],
                        [],
                        style["marker"],
                        color=style["color"],
                        ms=8,
                        mec=style["color"],
                        mfc=style["color"] if threads == 1 else "white",
                    )
            for threads in self.thread_counts:
                self.floors[part, threads] = ax.axvline(
                    1e-6, color=PALETTE["neutral"], lw=1.2, ls=":" if threads == 1 else "--"
                )
        axes[0].set_title("filled: 1 thread, open: all cores", fontsize=9, loc="right")
        axes[-1].set_title("floor: dotted 1 thread, dashed all cores", fontsize=9, loc="right")
        axes[-1].set_xlabel("seconds per call (log)")

    @property
    def artists(self) -> list:
        """What :meth:`show` moves."""
        return [*self.markers.values(), *self.whiskers.values(), *self.floors.values()]

    def show(self, floors: dict, points: dict) -> None:
        """Put the floor lines at ``floors[part, threads]`` seconds and the markers at ``points[part, name, threads]`` entries (or None)."""
        for (part, threads), line in self.floors.items():
            x = float(np.clip(floors[part, threads], *self.LIMITS))
            line.set_xdata([x, x])
        for (part, name, threads), marker in self.markers.items():
            entry = points.get((part, name, threads))
            marker.set_data(
                ([entry["median_s"]], [self.implementations.index(name)]) if entry else ([], [])
            )
        for (part, name), line in self.whiskers.items():
            entry = points.get((part, name, 1))
            y = self.implementations.index(name)
            line.set_data(([entry["p10_s"], entry["p90_s"]], [y, y]) if entry else ([], []))
