"""Figures for the chapter "LayerNorm at the speed of memory": copy bandwidth, and each
implementation against the floor."""

from __future__ import annotations

import numpy as np

from ..experiments.memory_speed import FLOOR_STORE
from .style import COLUMN_WIDTH, PALETTE, new_figure

__all__ = [
    "IMPLEMENTATION_STYLE",
    "COPY_STYLE",
    "copy_figure",
    "speed_figure",
    "cliff_figure",
    "FloorPanels",
]

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
#: Colour and label of each copy (:data:`lnlib.book.experiments.memory_speed.COPY_STORES`).
COPY_STYLE = {
    "memcpy": {"color": PALETTE["input"], "marker": "o", "label": "np.copyto (memcpy)"},
    "ordinary": {"color": PALETTE["mean"], "marker": "s", "label": "ordinary stores"},
}
#: Implementations timed on all cores too (numpy's are single-threaded).
THREADED = ("fused (numba)", "PyTorch")


def _style(name: str) -> dict:
    return IMPLEMENTATION_STYLE.get(
        name, {"color": PALETTE["neutral"], "marker": "x", "label": name}
    )


def copy_figure(results):
    """Copy bandwidth against the footprint (MiB), both copies, 1 thread and all cores, shaded
    10th-90th percentile.

    Colour tells the copy (glibc's memcpy through ``np.copyto``, or ordinary stores as the kernels
    make them), the line style the threads (solid 1, dashed all cores). The L1 and L2 sizes are
    marked where recorded, and so is where memcpy starts to stream its stores: above glibc's
    non-temporal threshold on 1 thread, above threads x threshold on all cores (each thread's memcpy
    copies its own piece, which must exceed the threshold).

    Parameters
    ----------
    results : lnlib.book.experiments.memory_speed.KernelResults
    """
    fig, ax = new_figure(figsize=(COLUMN_WIDTH, 3.4))
    for store in results.stores:
        style = COPY_STYLE[store]
        for threads, line in zip(results.thread_counts, ("-", "--")):
            footprint, rate = results.copy_curve(threads, store)
            ax.plot(
                footprint / 2**20,
                rate / 1e9,
                line,
                marker=style["marker"],
                ms=4,
                color=style["color"],
                mfc=style["color"] if threads == 1 else "white",
                label=f"{style['label']}, {threads} thread{'s' if threads > 1 else ''}",
            )
            low, high = results.copy_spread(threads, store)
            ax.fill_between(
                footprint / 2**20, low / 1e9, high / 1e9, color=style["color"], alpha=0.15, lw=0
            )
    ax.set_yscale("log")  # ratios read as distances: the two copies compare at every size
    caches = results.data["machine"].get("caches_per_core_or_shared", {})
    marks = [
        (_parse_size(caches[level]), f"{level} {caches[level]}")
        for level in ("L1", "L2")
        if level in caches
    ]
    if results.non_temporal_threshold:
        marks.append((results.non_temporal_threshold, "memcpy streams →"))
    for size, _ in marks:
        ax.axvline(size / 2**20, color=PALETTE["neutral"], lw=0.8, ls=":")
    if results.non_temporal_threshold:
        # on all cores each thread's memcpy copies its own piece, which streams once it exceeds the
        # threshold
        for threads in results.thread_counts[1:]:
            ax.axvline(
                threads * results.non_temporal_threshold / 2**20,
                color=PALETTE["neutral"],
                lw=0.8,
                ls="--",
                label=f"memcpy streams, {threads} threads →",
            )
    ax.set_xscale("log")
    if marks:  # named on a top axis, clear of the data
        top_axis = ax.secondary_xaxis("top")
        top_axis.set_xticks([size / 2**20 for size, _ in marks], [text for _, text in marks])
        top_axis.tick_params(labelsize=9, length=0)
    ax.set(
        xscale="log",
        xlabel="array copied (MiB; a copy moves twice this)",
        ylabel="copy bandwidth (GB/s, log)",
    )
    fig.legend(loc="outside lower center", ncol=2, fontsize=9)
    return fig


def _parse_size(text: str) -> float:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text)


def speed_figure(results, part: str = "forward", *, size: int = 1024, store: str = FLOOR_STORE):
    """Achieved GB/s of every implementation against H (most rows) and against rows (at `size`),
    with the copy's floor.

    The right axis of the second panel reads the same values as a fraction of
    the 1-thread bandwidth of the copy `store` (the ordinary-store copy by default, the chapter's
    floor): 1 is as fast as copying the same bytes.

    Parameters
    ----------
    results : lnlib.book.experiments.memory_speed.KernelResults
    part : {"forward", "backward"}
    size : int, default 1024
        The H of the rows sweep.
    store : {"ordinary", "memcpy"}, default "ordinary"
        The copy whose one-thread rate is the floor drawn.
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
    floor = results.memory_bandwidth(1, store) / 1e9
    for ax in (by_h, by_rows):
        # Labelled once, in the figure's legend: a label on the line itself sat on the markers.
        ax.axhline(
            floor,
            color=PALETTE["neutral"],
            lw=1.2,
            ls=":",
            label=f"floor: copy, {COPY_STYLE[store]['label']}, 1 thread" if ax is by_h else None,
        )
        ax.set(xscale="log", yscale="log")
    low, high = by_h.get_ylim()  # whole decades and a margin: no tick label on the top edge
    by_h.set_ylim(10 ** np.floor(np.log10(low)), 1.5 * 10 ** np.ceil(np.log10(high)))
    by_h.set(xlabel="H (features), most rows", ylabel=f"achieved GB/s ({part})")
    by_rows.set(xlabel=f"rows, H = {size}")
    right = by_rows.secondary_yaxis("right", functions=(lambda v: v / floor, lambda f: f * floor))
    low, high = (limit / floor for limit in by_rows.get_ylim())
    # decades inside the view only (a secondary axis keeps the tick labels past its ends)
    right.set_yticks(10.0 ** np.arange(np.ceil(np.log10(low)), np.floor(np.log10(high)) + 1))
    right.set_ylabel("fraction of the floor")
    fig.legend(loc="outside lower center", ncol=2, fontsize=9)
    return fig


def cliff_figure(results):
    """Time with a fresh output over time with a preallocated one, against the size of one array, 1
    thread.

    Every float32 shape of the benchmark, for the fused kernels, forward and backward panels: the
    two calls were timed in turn, so the ratio is the cost of allocating the outputs on every call.
    A dotted line marks glibc's largest mmap threshold (32 MiB on a 64-bit machine): a fresh output
    larger than it is a fresh mapping, faulted in page by page on every call.

    Parameters
    ----------
    results : lnlib.book.experiments.memory_speed.KernelResults
    """
    fig, axes = new_figure(1, 2, figsize=(COLUMN_WIDTH, 3.2), sharey=True)
    threshold = results.data["machine"].get("glibc", {}).get("mmap_threshold_max", 32 * 2**20)
    for ax, part in zip(axes, ("forward", "backward")):
        for name in PREALLOCATED_SHOWN:
            style = _style(name)
            pairs = [
                (k, results.point(name, part, "float32", 1, k["rows"], k["size"]))
                for k in results.preallocated
                if (k["implementation"], k["part"], k["dtype"]) == (name, part, "float32")
            ]
            pairs.sort(key=lambda pair: pair[0]["rows"] * pair[0]["size"])
            ax.plot(
                [kept["rows"] * kept["size"] * 4 / 2**20 for kept, _ in pairs],
                [fresh["median_s"] / kept["median_s"] for kept, fresh in pairs],
                style["marker"],
                ms=5,
                color=style["color"],
                label=style["label"] if ax is axes[0] else None,
            )
        ax.axvline(threshold / 2**20, color=PALETTE["neutral"], lw=1.0, ls=":")
        ax.axhline(1, color=PALETTE["neutral"], lw=0.8, ls="-")
        ax.set(xscale="log", yscale="log", xlabel="one array of x (MiB, float32)")
        ax.set_title(part, fontsize=10, loc="left")
    axes[0].set_ylabel("time, fresh output / out=")
    fig.legend(loc="outside lower center", ncol=2, fontsize=9)
    return fig


#: The implementations :func:`cliff_figure` shows, timed with fresh and with preallocated outputs.
#: Not PyTorch: its ``native_layer_norm.out`` is CompositeExplicitAutograd, the fresh-output kernel
#: followed by ``copy_``, so it preallocates nothing (chapter "LayerNorm at the speed of memory").
PREALLOCATED_SHOWN = ("fused (numba)",)


class FloorPanels:
    """The explorer's figure: per part, each implementation's measured time against the floor, on a
    log time axis.

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
        """Put the floor lines at ``floors[part, threads]`` seconds and the markers at
        ``points[part, name, threads]`` entries (or None)."""
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
