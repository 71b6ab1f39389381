"""LayerNorm kernels against the memory floor (chapter "LayerNorm at the speed of memory"):
``make bench-kernels``.

Measures, on this machine, in one run (about 3-4 minutes on 2 cores):

- the copy bandwidth (``lnlib.book.experiments.memory_speed.copy_bandwidth``) over footprints from
  64 KiB to 512 MiB, on 1 thread and on all cores, twice: with ``np.copyto`` (glibc's memcpy, which
  switches to non-temporal stores above its threshold, recorded with the machine; on all cores each
  thread copies its own piece, so the largest copy, 512 MiB, exceeds 2 x the threshold) and with a
  compiled loop that stores as the kernels do (ordinary stores, which read each line before writing
  it): the floors' denominators; every buffer page-aligned;
- forward and backward LayerNorm over the grid H = 64 ... 16384 (powers of 4)
  by rows = 1 ... 10^5 (powers of 10), at most 2^24 elements an array, float32,
  for: the textbook numpy sequence, ``lnlib.layer_norm`` /
  ``lnlib.layer_norm_backward``, the fused numba kernels (``lnlib.fused``) and
  PyTorch's CPU kernels where installed, on 1 thread; the fused kernels and
  PyTorch also on all cores, and in float16 and bfloat16 at H = 1024; the
  fused forward with Welford's statistics on 1 thread; the fused kernels again
  on 1 thread in float32 with preallocated outputs (``out=``), kept apart under
  "preallocated", since a fresh output above glibc's mmap threshold is a fresh
  mapping, faulted in on every call (PyTorch's ``native_layer_norm.out`` is not
  timed: its dispatch entry is CompositeExplicitAutograd, ``native_layer_norm``
  into fresh tensors followed by ``copy_``, so it preallocates nothing);
  the two copies at each size, and each fresh and preallocated pair, are timed
  in turn (a, b, a, b, ...) so that they share whatever load the machine has;
- every time is kept: the file holds medians, the 10th and 90th percentiles and
  the repetitions, with the machine (CPU, cores, library versions, load average
  at start and end).

Writes ``lnlib/book/data/kernels.json``, which the chapter reads. Times are
never asserted anywhere; a loaded machine gives slower, noisier numbers, which
is why the load is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import lnlib  # noqa: E402
from lnlib import fused  # noqa: E402
from lnlib.book.experiments.memory_speed import (  # noqa: E402
    COPY_STORES,
    bytes_moved,
    copy_bandwidths,
    interleaved_timings,
)

RESULTS = ROOT / "lnlib" / "book" / "data" / "kernels.json"
#: Footprints of the copy, in bytes (source size; a copy moves twice this).
COPY_SIZES = tuple(sorted({2**k for k in range(16, 29, 2)} | {2**27, 2**29}))
#: The grid of shapes (rows x H, at most MAX_ELEMENTS elements); 16-bit storage is measured at H =
#: ROWS_H.
SIZES = (64, 256, 1024, 4096, 16384)
ROWS = (1, 10, 100, 1000, 10000, 100000)
ROWS_H = 1024
MAX_ELEMENTS = 2**24
#: Each measurement repeats until its calls add up to this many seconds (at least 5 calls, at most
#: 200).
MIN_SECONDS = 0.15
#: A numpy implementation slower than this per call is timed with 3 calls only.
SLOW_CALL = 0.5
EPS = 1e-5


def naive_layer_norm(x, gamma, beta, eps=EPS):
    """The textbook numpy sequence (lnlib.book.experiments.memory_traffic.NAIVE_LAYER_NORM): every
    line a pass over memory."""
    mean = x.mean(axis=-1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(var + eps) * gamma + beta


def naive_layer_norm_backward(dy, x, gamma, eps=EPS):
    """The closed-form backward pass written line by line in numpy, statistics recomputed as an
    unfused program would."""
    mean = x.mean(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    g = dy * gamma
    dx = (
        g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)
    ) * rstd
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def shapes() -> list[tuple[int, int]]:
    """(rows, H) of the grid, at most MAX_ELEMENTS elements."""
    return [(r, h) for h in SIZES for r in ROWS if r * h <= MAX_ELEMENTS]


def summary(seconds: np.ndarray) -> dict:
    return {
        "median_s": float(np.median(seconds)),
        "p10_s": float(np.percentile(seconds, 10)),
        "p90_s": float(np.percentile(seconds, 90)),
        "repetitions": int(seconds.size),
    }


def torch_module():
    try:
        import torch
    except ImportError:
        return None
    return torch


def implementations(torch, dtype: str):
    """name -> (forward(x, gamma, beta), backward(dy, x, gamma, mean, rstd) or None, uses threads),
    for one dtype."""
    impls = {}
    if dtype == "float32":
        impls["naive numpy"] = (
            lambda x, g, b: naive_layer_norm(x, g, b),
            lambda dy, x, g, m, r: naive_layer_norm_backward(dy, x, g),
            False,
        )
        impls["lnlib (numpy)"] = (
            lambda x, g, b: lnlib.layer_norm(x, g, b, eps=EPS),
            lambda dy, x, g, m, r: lnlib.layer_norm_backward(dy, x, g, eps=EPS),
            False,
        )
    if fused.numba_available():
        impls["fused (numba)"] = (
            lambda x, g, b: fused.fused_layer_norm(x, g, b, EPS),
            lambda dy, x, g, m, r: fused.fused_layer_norm_backward(dy, x, g, m, r),
            True,
        )
        if (
            dtype == "float32"
        ):  # Welford's single sweep, forward only, to see what its division per element costs
            impls["fused Welford (numba)"] = (
                lambda x, g, b: fused.fused_layer_norm(x, g, b, EPS, statistics="welford"),
                None,
                False,
            )
    if torch is not None:

        def t_forward(x, g, b):
            return torch.ops.aten.native_layer_norm(x, [x.shape[-1]], g, b, EPS)

        def t_backward(dy, x, g, m, r):
            return torch.ops.aten.native_layer_norm_backward(
                dy, x, [x.shape[-1]], m, r, g, g, [True, True, True]
            )

        impls["PyTorch"] = (t_forward, t_backward, True)
    return impls


#: The implementations timed again with preallocated outputs (float32, 1 thread). Not PyTorch: its
#: ``native_layer_norm.out`` is CompositeExplicitAutograd in ``native_functions.yaml``, the
#: fresh-output kernel followed by ``copy_`` into the given tensors, so it would time an extra copy,
#: not a kernel that writes into preallocated memory.
PREALLOCATED = ("fused (numba)",)


def preallocated_calls(name: str, x, g, b, dy, m, r, torch):
    """forward() and backward() of `name` (one of PREALLOCATED) writing into outputs allocated once,
    before the timing."""
    if name not in PREALLOCATED:
        raise ValueError(
            f"{name!r} is not timed with preallocated outputs; PREALLOCATED: {PREALLOCATED}."
        )
    outs = np.empty_like(x), np.empty_like(m), np.empty_like(r)
    grads = np.empty_like(x), np.empty_like(g), np.empty_like(g)
    forward = lambda: fused.fused_layer_norm(x, g, b, EPS, out=outs)  # noqa: E731
    backward = lambda: fused.fused_layer_norm_backward(dy, x, g, m, r, out=grads)  # noqa: E731
    return forward, backward


def to_storage(array: np.ndarray, dtype: str) -> np.ndarray:
    return array.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


def inputs(name: str, rows: int, size: int, dtype: str, torch):
    """x, γ, β, dy, and the forward's saved mean and rstd, as the implementation takes them."""
    rng = np.random.default_rng([rows, size])
    x = to_storage(rng.normal(size=(rows, size)).astype(np.float32), dtype)
    dy = to_storage(rng.normal(size=(rows, size)).astype(np.float32), dtype)
    work = np.float32
    gamma, beta = (
        (1 + 0.1 * rng.normal(size=size)).astype(work),
        (0.1 * rng.normal(size=size)).astype(work),
    )
    if name == "PyTorch":
        tdtype = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[
            dtype
        ]
        tx = torch.from_numpy(x.astype(np.float32)).to(tdtype)
        tdy = torch.from_numpy(dy.astype(np.float32)).to(tdtype)
        tg, tb = torch.from_numpy(gamma), torch.from_numpy(beta)
        _, m, r = torch.ops.aten.native_layer_norm(tx, [size], tg, tb, EPS)
        return tx, tg, tb, tdy, m, r
    if name.startswith("fused"):
        _, m, r = fused.fused_layer_norm(x, gamma, beta, EPS)
        return x, gamma, beta, dy, m, r
    return x, gamma.astype(x.dtype), beta.astype(x.dtype), dy, None, None


def set_threads(torch, count: int) -> None:
    if fused.numba_available():
        fused.set_threads(count)
    if torch is not None:
        torch.set_num_threads(count)


def measure(*calls) -> list[dict]:
    """Summaries of each call's times, the calls timed in turn (a, b, a, b, ...), so that they share
    the load."""
    first = time.perf_counter()
    for call in calls:
        call()
    slow = (time.perf_counter() - first) / len(calls) > SLOW_CALL
    seconds = interleaved_timings(
        calls, repeats=3 if slow else 5, min_seconds=0 if slow else MIN_SECONDS
    )
    return [summary(t) for t in seconds]


def entry(name, part, dtype, rows, size, threads, result, output="fresh") -> dict:
    moved = bytes_moved(rows, size, dtype, part)
    return {
        "implementation": name,
        "part": part,
        "dtype": dtype,
        "rows": rows,
        "size": size,
        "threads": threads,
        "output": output,
        "bytes": moved.total,
        **result,
    }


def kernel_rows(torch, cores: int, log) -> tuple[list[dict], list[dict]]:
    """The fresh-output entries of every implementation, and the preallocated ones."""
    rows_out, preallocated = [], []
    plan = [("float32", shape) for shape in shapes()]
    plan += [
        (d, (r, ROWS_H))
        for d in ("float16", "bfloat16")
        for r in ROWS
        if r * ROWS_H <= MAX_ELEMENTS
    ]
    for dtype, (rows, size) in plan:
        for name, (forward, backward, threaded) in implementations(torch, dtype).items():
            x, g, b, dy, m, r = inputs(name, rows, size, dtype, torch)
            both = dtype == "float32" and name in PREALLOCATED
            kept = dict(
                zip(("forward", "backward"), preallocated_calls(name, x, g, b, dy, m, r, torch))
                if both
                else ()
            )
            for threads in (1, cores) if threaded and cores > 1 and dtype == "float32" else (1,):
                set_threads(torch, threads)
                for part in ("forward", "backward") if backward is not None else ("forward",):
                    call = (
                        (lambda: forward(x, g, b))
                        if part == "forward"
                        else (lambda: backward(dy, x, g, m, r))
                    )
                    if both and threads == 1:  # fresh and preallocated outputs, timed in turn
                        fresh, given = measure(call, kept[part])
                        preallocated.append(
                            entry(name, part, dtype, rows, size, 1, given, "preallocated")
                        )
                        log_entry(log, preallocated[-1])
                    else:
                        (fresh,) = measure(call)
                    rows_out.append(entry(name, part, dtype, rows, size, threads, fresh))
                    log_entry(log, rows_out[-1])
            set_threads(torch, 1)
    return rows_out, preallocated


def log_entry(log, e: dict) -> None:
    log(
        f"{e['dtype']:>8} {e['rows']:>6} x {e['size']:<5} {e['implementation']:<14} "
        f"{e['part']:<8} {e['threads']}t {e['output']:<12} {e['median_s'] * 1e3:9.3f} ms  "
        f"{e['bytes'] / e['median_s'] / 1e9:6.2f} GB/s"
    )


def machine(torch) -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    caches = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level, kind, size = ((index / f).read_text().strip() for f in ("level", "type", "size"))
        except OSError:
            continue
        if kind != "Instruction":
            caches[f"L{level}"] = size
    versions = {
        name: metadata.version(name) for name in ("numpy", "numba", "torch") if _installed(name)
    }
    return {
        "cpu": cpu,
        "glibc": glibc(),
        "huge_pages": huge_pages(),
        "cores": os.cpu_count(),
        "machine": platform.machine(),
        "system": platform.system(),
        "python": platform.python_version(),
        "caches_per_core_or_shared": caches,
        "versions": versions,
    }


def glibc() -> dict:
    """glibc's version and the copy thresholds its dynamic loader chose for this CPU
    (``ld.so --list-diagnostics``).

    ``x86.cpu_features.non_temporal_threshold`` is the size above which glibc's memcpy (hence
    ``np.copyto``) writes with non-temporal stores; the loader prints it from glibc 2.33 on.
    The mmap threshold is malloc's default ceiling: 4 Mi longs, 32 MiB on a 64-bit machine.
    """
    import subprocess

    library, version = platform.libc_ver()
    info = {"library": library, "version": version, "mmap_threshold_max": 4 * 1024 * 1024 * 8}
    try:
        maps = Path("/proc/self/maps").read_text().split()
        loader = next(p for p in maps if "/ld-linux" in p)
        text = subprocess.run(
            [loader, "--list-diagnostics"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, StopIteration, subprocess.SubprocessError):
        return info
    for line in text.splitlines():
        key, _, value = line.partition("=")
        for name in (
            "non_temporal_threshold",
            "rep_movsb_threshold",
            "rep_movsb_stop_threshold",
            "shared_cache_size",
        ):
            if key == f"x86.cpu_features.{name}":
                info[name] = int(value, 16)
    return info


def huge_pages() -> dict:
    """Transparent huge pages: the kernel's setting, and whether numpy asks for them (madvise) on
    large arrays."""
    try:
        setting = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().strip()
    except OSError:
        setting = None
    try:
        numpy_madvise = bool(np._core.multiarray._get_madvise_hugepage())
    except AttributeError:
        numpy_madvise = None
    return {"transparent_hugepage": setting, "numpy_madvise_hugepage": numpy_madvise}


def _installed(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def summary_markdown(path: Path = RESULTS) -> str:
    """The table BENCHMARKS.md records: fractions of the floor and ratios to PyTorch, 1 thread,
    float32, from one results file."""
    from lnlib.book.experiments.memory_speed import KernelResults

    results = KernelResults.load(path)
    fused_name, torch_name = "fused (numba)", "PyTorch"
    machine, load = results.data["machine"], results.data["load_average"]
    glibc = machine.get("glibc", {})
    threshold = glibc.get("non_temporal_threshold")
    lines = [
        f"Run of {results.data['date']} on {machine['cpu']}, {machine['cores']} cores, "
        f"{machine['versions']}, glibc {glibc.get('version', '?')}"
        + (f" (non-temporal threshold {threshold / 2**20:.0f} MiB)" if threshold else "")
        + (
            f"; load average {load['start'][0]:.1f} at start, {load['end'][0]:.1f} at end; copy "
            "bandwidth "
        )
        + "; ".join(
            f"{store} stores "
            + ", ".join(
                f"{results.memory_bandwidth(t, store) / 1e9:.1f} GB/s on {t} thread(s)"
                for t in results.thread_counts
            )
            for store in results.stores
        )
        + ".",
        "",
        'Floor: the memcpy copy (`np.copyto`); "ordinary": the ordinary-store copy; "out=": '
        'outputs allocated once; "fresh / out=": time with outputs allocated by every call over '
        "time with `out=` (the fused kernel only: PyTorch's `native_layer_norm.out` is "
        "CompositeExplicitAutograd, its fresh-output kernel followed by `copy_`, so it "
        "preallocates nothing and is not timed).",
        "",
        "| rows × H | fused fwd / floor | PyTorch fwd / floor | fused / PyTorch fwd | fused bwd / "
        "floor | PyTorch bwd / floor | fused / PyTorch bwd | fused fwd, out= / ordinary | fused "
        "fwd fresh / out= |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    shapes = sorted(
        {
            (k["rows"], k["size"])
            for k in results.kernels
            if k["implementation"] == fused_name and k["dtype"] == "float32"
        },
        key=lambda s: (s[1], s[0]),
    )
    ordinary = "ordinary" in results.stores
    for rows, size in shapes:
        cells = []
        for part in ("forward", "backward"):
            ours = results.point(fused_name, part, "float32", 1, rows, size)
            theirs = results.point(torch_name, part, "float32", 1, rows, size)
            cells += [
                f"{results.fraction(ours):.2f}",
                f"{results.fraction(theirs):.2f}" if theirs else "-",
                f"{ours['median_s'] / theirs['median_s']:.2f}" if theirs else "-",
            ]
        kept = results.point(fused_name, "forward", "float32", 1, rows, size, "preallocated")
        cells.append(f"{results.fraction(kept, 'ordinary'):.2f}" if kept and ordinary else "-")
        fresh = results.point(fused_name, "forward", "float32", 1, rows, size)
        kept = results.point(fused_name, "forward", "float32", 1, rows, size, "preallocated")
        cells.append(f"{fresh['median_s'] / kept['median_s']:.2f}" if kept else "-")
        lines.append(f"| {rows} × {size} | " + " | ".join(cells) + " |")
    big = [
        (max(r for r, h in shapes if h == size), size)
        for size in sorted({h for _, h in shapes})
        if size >= 1024
    ]
    fractions = [
        results.fraction(results.point(fused_name, "forward", "float32", 1, *s)) for s in big
    ]
    ratios = {
        part: [
            results.point(fused_name, part, "float32", 1, *s)["median_s"]
            / results.point(torch_name, part, "float32", 1, *s)["median_s"]
            for s in big
        ]
        for part in ("forward", "backward")
        if results.point(torch_name, part, "float32", 1, *big[0])
    }
    lines += [
        "",
        "Goals of chapter 14's kernels in this run, 1 thread, float32, H ≥ 1024 at the most rows "
        f"({', '.join(f'{r} × {h}' for r, h in big)}): the fused forward reached "
        f"{min(fractions):.2f}-{max(fractions):.2f} of the floor (goal: at least 0.5; met at "
        f"{sum(f >= 0.5 for f in fractions)} of {len(big)} shapes)",
    ]
    if ratios:
        lines[-1] += (
            f"; it took {min(ratios['forward']):.2f}-{max(ratios['forward']):.2f} times PyTorch's "
            f"forward time (goal: at most 1.5; met at {sum(r <= 1.5 for r in ratios['forward'])} "
            f"of {len(big)}); the fused backward took "
            f"{min(ratios['backward']):.2f}-{max(ratios['backward']):.2f} times PyTorch's "
            f"backward kernel (goal: at most 2; met at {sum(r <= 2 for r in ratios['backward'])} "
            f"of {len(big)})"
        )
    lines[-1] += "."
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument(
        "--summary",
        action="store_true",
        help="print the markdown table of an existing results file and exit",
    )
    args = parser.parse_args()
    if args.summary:
        print(summary_markdown(args.output))
        return
    start = time.perf_counter()
    torch = torch_module()
    cores = os.cpu_count() or 1
    load_start = os.getloadavg()
    log = lambda text: print(text, flush=True)  # noqa: E731
    copies = []
    stores = COPY_STORES if fused.numba_available() else ("memcpy",)
    for threads in sorted({1, cores}):
        for nbytes in COPY_SIZES:  # both copies timed in turn, so that they share the load
            rates = copy_bandwidths(nbytes, threads=threads, stores=stores, min_seconds=MIN_SECONDS)
            for store, bandwidth in rates.items():
                copies.append(
                    {
                        "store": store,
                        "bytes": nbytes,
                        "threads": threads,
                        "median_bytes_per_s": float(np.median(bandwidth)),
                        "p10_bytes_per_s": float(np.percentile(bandwidth, 10)),
                        "p90_bytes_per_s": float(np.percentile(bandwidth, 90)),
                        "repetitions": int(bandwidth.size),
                    }
                )
                log(
                    f"copy {store:<8} {nbytes / 2**20:8.2f} MB {threads}t "
                    f"{np.median(bandwidth) / 1e9:6.2f} GB/s"
                )
    kernels, preallocated = kernel_rows(torch, cores, log)
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(torch),
        "load_average": {"start": list(load_start), "end": list(os.getloadavg())},
        "settings": {
            "eps": EPS,
            "max_elements": MAX_ELEMENTS,
            "rows_sweep_size": ROWS_H,
            "min_seconds": MIN_SECONDS,
            "copy": (
                "store memcpy: np.copyto of float64 arrays (glibc memcpy), store ordinary: a "
                "numba loop y[i] = x[i] * 1 over float32 arrays (ordinary stores, as the "
                "kernels); one contiguous piece per thread; buffers page-aligned; bytes = 2 x "
                "source"
            ),
            "preallocated": (
                "float32, 1 thread: lnlib.fused with out=, outputs allocated once before timing "
                "(not PyTorch: its native_layer_norm.out is CompositeExplicitAutograd, the "
                "fresh-output kernel followed by copy_)"
            ),
            "pytorch": (
                "torch.ops.aten.native_layer_norm and native_layer_norm_backward (CPU kernels)"
            ),
        },
        "copy": copies,
        "kernels": kernels,
        "preallocated": preallocated,
        "seconds": round(time.perf_counter() - start, 1),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n")
    log(
        "wrote "
        f"{args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output} in "
        f"{result['seconds']} s"
    )


if __name__ == "__main__":
    main()
