"""The chapter "LayerNorm on a GPU": each kernel's bytes and operations per element, and the stored
measurements.

The counts are the kernels' own (lnlib.gpu.kernels), per element of x: what each
reads and writes in storage bytes of w each, once when every re-read of a row
hits the cache (the floor), and when every pass goes to memory again; and the
floating-point operations the kernel's source performs. Nothing here is measured;
:class:`GpuResults` reads what ``make bench-gpu`` measured, when it has run.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from lnlib.gpu.kernels import BLOCK
from lnlib.gpu.launch import partial_blocks
from lnlib.validation import BFLOAT16

from ..tools import prose
from .memory_traffic import (
    FUSED_ADD_FORWARD,
    FUSED_ADD_RMS_FORWARD,
    FUSED_BACKWARD,
    FUSED_FORWARD,
    FUSED_RMS_BACKWARD,
    memory_traffic,
)

__all__ = [
    "H200_SPEC",
    "HOPPER_LIMITS",
    "KERNEL_COUNTS",
    "PARTIAL_ROWS",
    "CHECKS",
    "COMPARED",
    "RESULTS",
    "RMS_KERNEL_COUNTS",
    "GpuResults",
    "KernelCount",
    "bytes_table",
    "findings",
    "itemsize",
    "measured_findings",
    "partial_bytes",
]

#: Where ``make bench-gpu`` (benchmarks/gpu_kernels.py) writes, and the chapter reads: with the
#: book's other stored results, shipped in the package.
RESULTS = Path(__file__).resolve().parents[1] / "data" / "gpu_kernels.json"
#: Where ``make bench-gpu``'s checks (benchmarks/gpu_checks.py) write the harness's reports.
CHECKS = RESULTS.with_name("gpu_checks.json")

#: NVIDIA's published figures for the H200 (SXM) GPU, its product page: HBM3e bandwidth in bytes/s
#: and FP32 (non-tensor) arithmetic in FLOP/s. Specifications, never measurements.
H200_SPEC = {"bandwidth": 4.8e12, "fp32_flops": 67e12, "source": "NVIDIA H200 product page"}

#: Resident blocks and threads per multiprocessor for compute capability 9.0 (Hopper, the H200),
#: from the CUDA C++ Programming Guide's table of technical specifications: with one-warp blocks
#: the block limit, not the thread limit, sets the occupancy. Specifications, never measurements.
HOPPER_LIMITS = {
    "blocks_per_sm": 32,
    "threads_per_sm": 2048,
    # NVIDIA's H100 Tensor Core GPU Architecture whitepaper: 132 multiprocessors on the SXM5 part,
    # whose GH100 chip the H200 SXM keeps
    "multiprocessors": 132,
    "source": "CUDA C++ Programming Guide, compute capability 9.0",
}

#: The rows at which the chapter counts the backward's partial sums: chapter 14's 4096 x 1024.
PARTIAL_ROWS = 4096


@dataclass(frozen=True)
class KernelCount:
    """One kernel's traffic and work per element of x (chapter "LayerNorm on a GPU").

    Attributes
    ----------
    name : str
    program : tuple of KernelStep
        What the kernel reads and writes, in the one memory-traffic model chapters 13 and 14 use
        (:mod:`lnlib.book.experiments.memory_traffic`): its reads and writes at the floor.
    passes : int
        Activation-array sweeps the source makes (reads and writes): the traffic when no
        re-read hits the cache.
    flops : int
        Floating-point operations per element, counted in the kernel's source.
    """

    name: str
    program: tuple
    passes: int
    flops: int

    @property
    def reads(self) -> int:
        """Activation arrays read once each at the floor (re-reads hit the cache)."""
        return memory_traffic(self.program).reads

    @property
    def writes(self) -> int:
        """Activation arrays written once each."""
        return memory_traffic(self.program).writes

    def floor_bytes(self, width: int) -> int:
        """Bytes per element of x at the floor, for storage of `width` bytes."""
        return (self.reads + self.writes) * width

    def worst_bytes(self, width: int) -> int:
        """Bytes per element when every pass over the row goes to memory."""
        return self.passes * width

    def intensity(self, width: int) -> float:
        """FLOPs per byte at the floor: where the kernel sits on the roofline's x axis."""
        return self.flops / self.floor_bytes(width)


#: The chapter's kernels. Forward (1-3): x read for the mean, the variance and the output (3
#: sweeps), y written; 8 FLOPs (1 add; subtract, square, add; subtract, two multiplies, add). Kernel
#: 4: x and the residual read and s written in its first sweep, s read twice more, y written; 9
#: FLOPs (one more add).
#: Backward: x and dy read in the two sweeps of each row and once more when each lane sums its
#: features over the block's rows, dx written (7 sweeps); 18 FLOPs per element: 6 in the first
#: sweep (xhat 2, g 1, two sums 3), 7 in the second (xhat 2, g 1, dx 4), 5 in the partial sums
#: (xhat 2, dγ 2, dβ 1). The block's partial dγ and dβ are per feature, not per element:
#: :func:`partial_bytes` counts them.
KERNEL_COUNTS = (
    KernelCount("1: thread per row", FUSED_FORWARD, 4, 8),
    KernelCount("2: block per row", FUSED_FORWARD, 4, 8),
    KernelCount("3: warp per row", FUSED_FORWARD, 4, 8),
    KernelCount("kernel 4 (residual add)", FUSED_ADD_FORWARD, 6, 9),
    KernelCount("LayerNorm backward, stage 1", FUSED_BACKWARD, 7, 18),
)


#: Kernel 5 (``kernels.add_rms_norm``) and RMSNorm's backward (``kernels.rms_backward_rows``),
#: counted as above. Kernel 5: x and r read and s written in its first sweep, s read once more, y
#: written (5 sweeps); 5 FLOPs (the add; square, add; two multiplies). Backward: s and dy read in
#: the row's two sweeps and in the partial sums, ds written (7 sweeps); 12 FLOPs: 4 in the first
#: sweep (g 1, ŝ 1, product 1, sum 1), 5 in the second (ŝ 1, g 1, ŝ times the mean 1, subtract 1,
#: times rstd 1), 3 in the partial sums (ŝ 1, times dy 1, sum 1). Its partial sums are dγ's alone.
RMS_KERNEL_COUNTS = (
    KernelCount("kernel 5 (add + RMSNorm)", FUSED_ADD_RMS_FORWARD, 5, 5),
    KernelCount("RMSNorm backward, stage 1", FUSED_RMS_BACKWARD, 7, 12),
)


def partial_bytes(rows: int, sums: int = 2) -> dict:
    """The backward's float32 partial sums, in bytes per element of x, for `rows` rows: `sums` = 2
    for LayerNorm's dγ and dβ, 1 for RMSNorm's dγ.

    Stage 1 (``kernels.backward_rows``) stores each block's 2 x H sums once, 4 B each, and stage 2
    reads them back: 2 x 4 B x 2 x blocks / rows per element of x, whatever the storage dtype
    (chapter "LayerNorm on a GPU"); RMSNorm's stage 1 stores H sums a block.

    Returns
    -------
    dict
        ``blocks`` (rows of partial sums) and ``bytes`` (per element of x).
    """
    blocks = partial_blocks(rows)
    return {"blocks": blocks, "bytes": 2 * 4 * sums * blocks / rows}


def bytes_table(rows: int) -> str:
    """:data:`KERNEL_COUNTS` and :data:`RMS_KERNEL_COUNTS` as an HTML table, each norm's backward
    followed by its partial sums at `rows` rows.

    Columns: bytes per element at the floor for 4-byte and 2-byte storage, when every sweep goes
    to memory (4-byte), FLOPs per element and FLOPs per byte at the floor (4-byte). The partial
    sums are float32 in every column. HTML, so that the page's table wraps at phone width.
    """
    head = ("kernel", "floor, 4 B", "floor, 2 B", "all sweeps, 4 B", "FLOP", "FLOP/B")
    body = []
    for counts, sums, label in ((KERNEL_COUNTS, 2, "dγ, dβ"), (RMS_KERNEL_COUNTS, 1, "dγ")):
        body += [
            (k.name, k.floor_bytes(4), k.floor_bytes(2), k.worst_bytes(4), k.flops,
             f"{k.intensity(4):.2f}")
            for k in counts
        ]  # fmt: skip
        part = f"{partial_bytes(rows, sums)['bytes']:g}"
        body.append((f"+ partial {label} ({rows} rows)", part, part, part, "", ""))

    def row(cells, tag):
        return "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"

    # the theme's scrolling container: on a phone the table scrolls in it, with the page's fade cue
    lines = ['<div class="pst-scrollable-table-container">', '<table class="table">', "<thead>"]
    lines += [row(head, "th"), "</thead>", "<tbody>"]
    lines += [row(cells, "td") for cells in body] + ["</tbody>", "</table>", "</div>"]
    return "\n".join(lines)


def itemsize(dtype: str) -> int:
    """Bytes per stored element of `dtype` ("float32", "float16" or "bfloat16")."""
    return 2 if dtype in ("float16", "bfloat16", BFLOAT16.name) else 4


class GpuResults:
    """What ``make bench-gpu`` measured, or that it has not run (chapter "LayerNorm on a GPU").

    Parameters
    ----------
    path : Path, default :data:`RESULTS`

    Attributes
    ----------
    measured : bool
        Whether the file exists.
    data : dict
        Its contents (empty when not measured).
    checks : dict
        The harness's reports from the GPU, ``benchmarks/gpu_checks.py``'s file (empty without it).
    """

    def __init__(self, path: Path = RESULTS, checks: Path = CHECKS):
        self.path = Path(path)
        self.measured = self.path.exists()
        self.data = json.loads(self.path.read_text()) if self.measured else {}
        checks = Path(checks)
        self.checks = json.loads(checks.read_text()) if checks.exists() else {}

    def machine(self) -> str:
        """One line naming the GPU, its driver and CUDA, or that nothing was measured."""
        if not self.measured:
            return "not yet measured on a GPU"
        gpu = self.data["machine"]
        return f"{gpu['gpu']}, driver {gpu['driver']}, CUDA {gpu['cuda']}"

    def entries(self, part: str | None = None) -> list[dict]:
        """The timed entries (each a dict: implementation, part, dtype, rows, size, median_s,
        ...)."""
        return [e for e in self.data.get("entries", []) if part in (None, e["part"])]

    def entry(self, implementation: str, part: str, dtype: str, shape=None) -> dict:
        """The one timed entry of `implementation` doing `part` on `shape` (default
        :data:`FLOOR_SHAPE`) in `dtype`.

        Raises
        ------
        KeyError
            When the file holds no such entry.
        """
        rows, size = shape or FLOOR_SHAPE
        for e in self.entries(part):
            if (e["implementation"], e["dtype"], e["rows"], e["size"]) == (
                implementation, dtype, rows, size,
            ):  # fmt: skip
                return e
        raise KeyError(f"no {implementation!r} {part} on {rows} x {size} {dtype} in {self.path}")

    def checks_table(self) -> str:
        """The harness's reports from the GPU, one line each: what ran (a kernel, a planted bug, a
        library's), its name, its number of checks and how many failed, by suite of cases."""
        if not self.checks:
            return "not yet checked on a GPU: make bench-gpu writes " + CHECKS.name
        lines = [f"{self.checks['machine']['gpu']}, {self.checks['date']}"]
        kinds = {"kernels": "kernel", "planted bugs": "planted", "PyTorch and Triton": "library"}
        for title, groups in self.checks["suites"].items():
            lines.append(f"{title}:")
            for group, reports in groups.items():
                for name, report in reports.items():
                    verdict = "all pass" if report["passed"] else f"{report['failed']} fail"
                    name = name.replace(" (after the tutorial)", ", tutorial")
                    lines.append(
                        f"  {kinds[group]:<8} {name:<26} {report['checks']:3d} checks: {verdict}"
                    )
        return "\n".join(lines)

    def widths(self, implementation: str, part: str, dtype: str) -> list[tuple[int, float]]:
        """``(H, fraction of the copy)`` of `implementation` over the real models' widths, each at
        2^26 elements (``2**26 // H`` rows: ``benchmarks/gpu_kernels.py``'s shapes but chapter
        14's), by H."""
        found = [
            (e["size"], e["fraction_of_copy"])
            for e in self.entries(part)
            if e["implementation"] == implementation
            and e["dtype"] == dtype
            and abs(e["rows"] * e["size"] - 2**26) < e["size"]  # 2^26 // H rows
        ]
        return sorted(found)

    def table(self) -> str:
        """Each timed kernel's fraction of the copy and its time over PyTorch's and Triton's, as
        text.

        One line per implementation, grouped by shape, dtype and part; a ratio is missing ("-")
        where PyTorch or Triton was not timed. Without the file: says it was not measured.
        """
        if not self.measured:
            return "not yet measured on a GPU: make bench-gpu writes " + RESULTS.name
        lines, groups = [], {}
        for e in self.entries():
            if e["part"] != "copy":
                groups.setdefault((e["rows"], e["size"], e["dtype"], e["part"]), []).append(e)
        for (rows, size, dtype, part), group in groups.items():
            base = {e["implementation"].split(" ")[0]: e["median_s"] for e in group}
            lines.append(f"{rows} x {size} {dtype}, {part}:")
            for e in group:
                ratios = [
                    f"{e['median_s'] / base[k]:5.2f}" if k in base else "    -"
                    for k in ("PyTorch", "Triton")
                ]
                lines.append(
                    f"  {e['implementation'][:30]:<30} {e['median_s'] * 1e6:9.1f} µs"
                    f" {e['fraction_of_copy']:5.2f} of copy  x{ratios[0]} x{ratios[1]}"
                )
        return "\n".join(lines)


def findings(block: int = BLOCK) -> dict:
    """The numbers the chapter "LayerNorm on a GPU" states, by glue key (:func:`prose.glue_all`).

    ``ridge``: FLOPs per byte where the H200's published FP32 roof meets its bandwidth roof;
    ``spec_tflops``: that FP32 roof in TFLOP/s; ``most_intensity``: the largest FLOPs per byte of
    the chapter's kernels in float32; ``partial_rows``, ``partial_blocks``, ``partial_bytes``: rows
    of x, rows of partial sums and their bytes per element of x (:func:`partial_bytes`);
    ``backward_16``, ``backward_32``: the backward's floor in bytes per element in 16-bit and
    float32 storage; ``sm_blocks``, ``sm_threads``: Hopper's resident blocks and threads per
    multiprocessor; ``sm_used``: the threads resident with blocks of `block` threads;
    ``warp_load_2``, ``warp_load_16``: bytes one warp instruction moves with 2 and with 16 bytes per
    lane; ``rms_*``: kernel 5 and RMSNorm's backward, each against its LayerNorm counterpart
    (kernel 4, the LayerNorm backward): bytes per element at the floor in 16-bit storage, sweeps,
    FLOPs, and the partial sums at ``partial_rows`` rows; and :func:`spec_floors`' keys.
    """
    part = partial_bytes(PARTIAL_ROWS)
    backward = KERNEL_COUNTS[-1]
    add, rms_add, rms_back = KERNEL_COUNTS[3], *RMS_KERNEL_COUNTS
    spec = H200_SPEC
    return {
        "ridge": prose.number(spec["fp32_flops"] / spec["bandwidth"], ".0f"),
        "spec_tflops": prose.number(spec["fp32_flops"] / 1e12, ".0f"),
        "most_intensity": prose.number(max(k.intensity(4) for k in KERNEL_COUNTS), ".2f"),
        **{
            key: prose.number(value, "g")
            for key, value in {
                "partial_rows": PARTIAL_ROWS,
                "partial_blocks": part["blocks"],
                "partial_bytes": part["bytes"],
                "backward_16": backward.floor_bytes(2),
                "backward_32": backward.floor_bytes(4),
                "sm_blocks": HOPPER_LIMITS["blocks_per_sm"],
                "sm_threads": HOPPER_LIMITS["threads_per_sm"],
                "sm_used": HOPPER_LIMITS["blocks_per_sm"] * block,
                "warp_load_2": block * 2,
                "warp_load_16": block * 16,
                "rms_add_16": rms_add.floor_bytes(2),
                "add_16": add.floor_bytes(2),
                "rms_add_sweeps": rms_add.passes,
                "add_sweeps": add.passes,
                "rms_add_flops": rms_add.flops,
                "add_flops": add.flops,
                "rms_backward_16": rms_back.floor_bytes(2),
                "rms_backward_flops": rms_back.flops,
                "backward_flops": backward.flops,
                "rms_partial_bytes": partial_bytes(PARTIAL_ROWS, 1)["bytes"],
            }.items()
        },
        **spec_floors(),
    }


#: The shape whose floors :func:`spec_floors` predicts: one `make bench-gpu` times
#: (benchmarks/gpu_kernels.py: 2**26 elements at LLaMA-7B's H = 4096), each 16-bit array 128 MiB,
#: more than the L2 cache holds, so the arrays stream from memory as the floor assumes.
FLOOR_SHAPE = (16384, 4096)


def spec_floors(shape=FLOOR_SHAPE, width: int = 2) -> dict:
    """The least time the H200's published bandwidth allows kernels 3 and 5 on `shape` in storage of
    `width` bytes: their bytes at the floor over :data:`H200_SPEC`'s bandwidth (chapter "LayerNorm
    on a GPU"). A prediction from a specification, never a measurement: the chapter says so.

    Returns
    -------
    dict of str to ProseNumber
        ``floor_rows``, ``floor_size``: the shape; ``floor_array_mib``: one array's MiB;
        ``floor_fwd_mib``, ``floor_fwd_us``: kernel 3's bytes (MiB) and time (µs);
        ``floor_rms_us``: kernel 5's time (µs).
    """
    elements = shape[0] * shape[1]
    moved = {
        name: count.floor_bytes(width) * elements
        for name, count in (("fwd", KERNEL_COUNTS[2]), ("rms", RMS_KERNEL_COUNTS[0]))
    }
    seconds = {name: size / H200_SPEC["bandwidth"] for name, size in moved.items()}
    return {
        "floor_rows": prose.number(shape[0], "g"),
        "floor_size": prose.number(shape[1], "g"),
        "floor_fwd_mib": prose.number(moved["fwd"] / 2**20, "g"),
        "floor_array_mib": prose.number(elements * width / 2**20, "g"),
        "floor_fwd_us": prose.number(seconds["fwd"] * 1e6, ".1f"),
        "floor_rms_us": prose.number(seconds["rms"] * 1e6, ".1f"),
    }


#: The implementations chapter "LayerNorm on a GPU" compares, by part: its label, and its name in
#: ``benchmarks/gpu_kernels.py``'s file. PyTorch's rows of the fused parts are its two kernels, an
#: add and then the norm.
COMPARED = {
    "forward": {
        "kernel 1, thread per row": "numba: thread per row",
        "kernel 2, block per row": "numba: block per row",
        "kernel 3, warp per row": "numba: warp per row",
        "PyTorch layer_norm": "PyTorch",
        "Triton, tutorial": "Triton (after the tutorial)",
    },
    "residual add": {
        "kernel 4, fused": "numba: kernel 4",
        "PyTorch add, layer_norm": "PyTorch add, then layer_norm",
    },
    "add + RMSNorm": {
        "kernel 5, fused": "numba: kernel 5",
        "PyTorch add, rms_norm": "PyTorch add, then rms_norm",
    },
    "backward": {
        "two-stage backward": "numba: two-stage backward",
        "PyTorch autograd": "PyTorch",
        "Triton, tutorial": "Triton (after the tutorial)",
    },
    "RMSNorm backward": {
        "two-stage backward": "numba: RMSNorm backward",
        "PyTorch autograd": "PyTorch rms_norm",
    },
}


def measured_findings(results: GpuResults, dtype: str = "float16") -> dict:
    """The numbers chapter "LayerNorm on a GPU" states from ``make bench-gpu``'s files, by glue
    key, on :data:`FLOOR_SHAPE` in `dtype` unless named otherwise.

    ``gpu_machine``, ``gpu_date``, ``gpu_versions``: the run; ``copy_tbs``, ``copy_us``,
    ``copy_of_spec``: the copy's bytes read and written per second (TB/s), its time (µs) and its
    share of :data:`H200_SPEC`'s bandwidth (%); ``spread``: the widest 10th-90th percentile
    range of any time at the shape, in % of its median, rounded up; ``frac_<part>_<n>``: the
    fraction of the copy's bytes per second of the n-th implementation of a part in
    :data:`COMPARED` (``fwd``, ``add``, ``rms``, ``bwd``, ``rmsbwd``); ``us_k3``: kernel 3's
    time (µs); ``k3_over_triton``, ``k5_over_torch``, ``bwd_over_torch``, ``k5_over_k4``,
    ``rmsbwd_over_bwd``: time ratios (the chapter's kernel over PyTorch's; RMSNorm's kernel over
    LayerNorm's); ``k3_lo``/``k3_hi`` and ``triton_lo``/``triton_hi``: the forward's fractions
    over the widths; ``small_k2_32``, ``small_k2_16``: kernel 2's time (µs) at chapter 14's 4096
    x 1024 in float32 and float16; ``stage1_blocks``, ``sm_count``, ``stage1_warps_per_sm``,
    ``sm_warps``: the backward's stage 1 blocks (one warp each) at the shape, the H200's
    multiprocessors, the warps each gets, the most each holds; ``checks_lo``, ``checks_hi``: the
    fewest and most checks of one kernel's report in the harness's cases.
    """
    data, short = results.data, {"forward": "fwd", "residual add": "add", "add + RMSNorm": "rms",
                                 "backward": "bwd", "RMSNorm backward": "rmsbwd"}  # fmt: skip
    copy = results.entry("device-to-device copy", "copy", dtype)
    time = {}
    numbers = {
        "copy_tbs": prose.number(copy["bytes_per_s"] / 1e12, ".1f"),
        "copy_us": prose.number(copy["median_s"] * 1e6, ".0f"),
        "copy_of_spec": prose.number(100 * copy["bytes_per_s"] / H200_SPEC["bandwidth"], ".0f"),
    }
    for part, names in COMPARED.items():
        for index, name in enumerate(names.values(), 1):
            e = results.entry(name, part, dtype)
            time[part, index] = e["median_s"]
            numbers[f"frac_{short[part]}_{index}"] = prose.number(e["fraction_of_copy"], ".2f")
    same_shape = [e for e in results.entries() if (e["rows"], e["size"]) == FLOOR_SHAPE]
    k2_name = COMPARED["forward"]["kernel 2, block per row"]
    small = {
        d: results.entry(k2_name, "forward", d, (4096, 1024))["median_s"]
        for d in ("float32", "float16")
    }
    spread = max((e["p90_s"] - e["p10_s"]) / e["median_s"] for e in same_shape)
    k3 = [f for _, f in results.widths(COMPARED["forward"]["kernel 3, warp per row"], "forward",
                                       dtype)]  # fmt: skip
    triton = [f for _, f in results.widths(COMPARED["forward"]["Triton, tutorial"], "forward",
                                           dtype)]  # fmt: skip
    kernels = results.checks["suites"]["the harness's cases"]["kernels"]
    counts = [report["checks"] for report in kernels.values()]
    versions = data["versions"]
    return numbers | {
        "gpu_machine": f"{data['machine']['gpu']} (driver {data['machine']['driver']}; "
        f"PyTorch's CUDA {data['machine']['cuda']})",
        "gpu_date": data["date"][:10],
        "gpu_versions": f"PyTorch {versions['torch']}, Triton {versions['triton']}, "
        f"numba-cuda {versions['numba-cuda']}",
        "spread": prose.number(math.ceil(100 * spread), "g"),  # rounded up: "no wider than"
        **{
            f"small_k2_{bits}": prose.number(small[dtype] * 1e6, ".0f")
            for bits, dtype in (("32", "float32"), ("16", "float16"))
        },
        "us_k3": prose.number(time["forward", 3] * 1e6, ".0f"),
        "k3_over_triton": prose.number(time["forward", 3] / time["forward", 5], ".1f"),
        "k5_over_torch": prose.number(time["add + RMSNorm", 1] / time["add + RMSNorm", 2], ".1f"),
        "k5_over_k4": prose.number(time["add + RMSNorm", 1] / time["residual add", 1], ".2f"),
        "rmsbwd_over_bwd": prose.number(time["RMSNorm backward", 1] / time["backward", 1], ".2f"),
        "bwd_over_torch": prose.number(time["backward", 1] / time["backward", 2], ".0f"),
        "k3_lo": prose.number(min(k3), ".2f"),
        "k3_hi": prose.number(max(k3), ".2f"),
        "triton_lo": prose.number(min(triton), ".2f"),
        "triton_hi": prose.number(max(triton), ".2f"),
        "stage1_blocks": prose.number(partial_blocks(FLOOR_SHAPE[0]), "g"),
        "sm_count": prose.number(HOPPER_LIMITS["multiprocessors"], "g"),
        "stage1_warps_per_sm": prose.number(
            partial_blocks(FLOOR_SHAPE[0]) / HOPPER_LIMITS["multiprocessors"], ".0f"
        ),
        "sm_warps": prose.number(HOPPER_LIMITS["threads_per_sm"] // 32, "g"),
        "checks_lo": prose.number(min(counts), "g"),
        "checks_hi": prose.number(max(counts), "g"),
    }
