"""The memory floor of LayerNorm, measured (chapter "LayerNorm at the speed of memory"): copy
bandwidth, repeated timings, the committed kernel timings, and the numbers and sentences the chapter
quotes from them (:func:`copy_findings`, :func:`kernel_findings`, :func:`cliff_findings`).

The bytes a kernel moves come from the one memory-traffic model,
:mod:`lnlib.book.experiments.memory_traffic`; its names are re-exported here, where chapter 13 and
its exercises first imported them.
"""

from __future__ import annotations

import importlib
import json
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from functools import lru_cache
from pathlib import Path

import numpy as np

from ...validation import check_count
from ..tools import prose
from .memory_traffic import (
    FUSED_WELFORD_LAYER_NORM,
    NAIVE_LAYER_NORM,
    PARAMETERS,
    PARTS,
    SCALARS,
    Bytes,
    KernelStep,
    Traffic,
    bytes_moved,
    memory_traffic,
)

__all__ = [
    "KernelStep",
    "Traffic",
    "NAIVE_LAYER_NORM",
    "FUSED_WELFORD_LAYER_NORM",
    "SCALARS",
    "PARAMETERS",
    "memory_traffic",
    "PARTS",
    "RESULTS_PATH",
    "KernelResults",
    "Bytes",
    "bytes_moved",
    "copy_bandwidth",
    "COPY_STORES",
    "FLOOR_STORE",
    "ordinary_copy",
    "page_aligned",
    "timings",
    "interleaved_timings",
    "copy_bandwidths",
    "floor_seconds",
    "fraction_of_floor",
    "FUSED",
    "COPY_KEYS",
    "KERNEL_KEYS",
    "CLIFF_KEYS",
    "copy_findings",
    "kernel_findings",
    "cliff_groups",
    "cliff_findings",
]


# The memory floor of LayerNorm: bytes moved, copy bandwidth, repeated timings (chapter "LayerNorm
# at the speed of memory").
#
# LayerNorm does a few flops per number, so a good kernel is limited by how fast
# memory delivers and takes bytes. :func:`bytes_moved` counts the bytes a fused
# kernel must move at the least (each activation-sized array once, see
# :mod:`lnlib.book.experiments.memory_traffic` for the passes an unfused one makes);
# :func:`copy_bandwidth` measures how many bytes per second this machine moves
# in the simplest memory-bound program there is, a copy; their ratio is the
# floor. :func:`timings` repeats a call and keeps every time, so a benchmark can
# report a median and its spread.
#
# Two copies, because a store can be made two ways. ``np.copyto`` calls glibc's
# ``memcpy``, which above a threshold derived from the cache size
# (``x86_non_temporal_threshold``) writes with non-temporal (streaming) stores:
# they go to memory without first reading the destination's cache line. An
# ordinary store, as the fused kernels and PyTorch's make, first reads the line
# it writes (read-for-ownership), so memory moves 3 bytes per 2 a copy counts
# (4 per 3 for LayerNorm's backward). The "ordinary" copy, a compiled loop
# ``y[i] = x[i] * 1``, stores as the kernels do.


def floor_seconds(moved: Bytes | int, bandwidth: float) -> float:
    """The least time to move `moved` bytes at `bandwidth` bytes per second: the floor (chapter
    "LayerNorm at the speed of memory")."""
    total = moved.total if isinstance(moved, Bytes) else int(moved)
    if not bandwidth > 0:
        raise ValueError(
            f"bandwidth must be a positive number of bytes per second; got {bandwidth!r}."
        )
    return total / bandwidth


def fraction_of_floor(seconds: float, moved: Bytes | int, bandwidth: float) -> float:
    """Floor time over measured time: 1 is as fast as a copy of the same bytes; 0.5 twice as
    slow."""
    if not seconds > 0:
        raise ValueError(f"seconds must be a positive time; got {seconds!r}.")
    return floor_seconds(moved, bandwidth) / seconds


def timings(
    call, *, repeats: int = 5, min_seconds: float = 0.0, max_repeats: int = 200
) -> np.ndarray:
    """Seconds per call of `call()`, after one warm-up call (chapter "LayerNorm at the speed of
    memory").

    Parameters
    ----------
    call : callable
        Called with no arguments.
    repeats : int, default 5
        At least this many timed calls.
    min_seconds : float, default 0
        Keep calling until the timed calls add up to this much (fast calls get more repetitions) ...
    max_repeats : int, default 200
        ... but never more than this many.

    Returns
    -------
    numpy.ndarray
        One time per call, in seconds, in the order they ran.
    """
    repeats = check_count(repeats, "repeats")
    call()
    times = []
    while len(times) < repeats or (sum(times) < min_seconds and len(times) < max_repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return np.array(times)


#: How :func:`copy_bandwidth` can store: glibc's memcpy through ``np.copyto`` (streaming stores
#: above glibc's non-temporal threshold), or ordinary stores from a compiled loop, as the fused
#: kernels store.
COPY_STORES = ("memcpy", "ordinary")
#: The copy whose rate is chapter 14's floor in its main text: ordinary stores, as the kernels
#: store (the appendix compares ``np.copyto``, whose large copies stream their stores).
FLOOR_STORE = "ordinary"


def _make_ordinary_copy(prange):
    # y = x * scale with a scale known only at run time (1): the compiler can neither turn the loop
    # into a memcpy call nor drop the multiplication, so it stores with ordinary vector stores.
    # Each block is a view indexed from 0, as the kernels index a row: with an index known to be
    # non-negative the loads and stores are whole vectors (a possibly negative index is not).
    def copy(source, target, scale, chunks):
        n = source.shape[0]
        for chunk in prange(chunks):  # one block per thread
            first, last = chunk * n // chunks, (chunk + 1) * n // chunks
            s, t = source[first:last], target[first:last]
            for i in range(t.shape[0]):
                t[i] = s[i] * scale

    return copy


@lru_cache(maxsize=None)
def ordinary_copy(parallel: bool):
    """The compiled ordinary-store copy ``target[i] = source[i] * scale`` (needs numba), one block
    per chunk."""
    try:
        numba = importlib.import_module("numba")
    except ImportError as exc:
        raise ImportError(
            'the ordinary-store copy needs numba: pip install "lnlib[kernels]"'
        ) from exc
    jit = numba.njit(
        parallel=parallel, fastmath={"reassoc", "contract"}, nogil=True, error_model="numpy"
    )
    return jit(_make_ordinary_copy(numba.prange if parallel else range))


def interleaved_timings(
    calls, *, repeats: int = 5, min_seconds: float = 0.0, max_repeats: int = 200
) -> list[np.ndarray]:
    """Seconds per call of each of `calls`, timed in turn (a, b, a, b, ...), after one warm-up call
    each.

    Two implementations compared on a shared, busy machine see the same load this way: a burst of
    load slows both, not only the one timed during it (chapter "LayerNorm at the speed of memory").

    Parameters
    ----------
    calls : sequence of callable
        Each called with no arguments.
    repeats, min_seconds, max_repeats
        As in :func:`timings`, for each call: at least `repeats` timed calls, more until each call's
        times add up to `min_seconds`, at most `max_repeats`.

    Returns
    -------
    list of numpy.ndarray
        One array of times per call, in the order they ran.
    """
    repeats = check_count(repeats, "repeats")
    for call in calls:
        call()
    times = [[] for _ in calls]

    def more(t):
        return len(t) < repeats or (sum(t) < min_seconds and len(t) < max_repeats)

    while any(more(t) for t in times):
        for call, t in zip(calls, times):
            if more(t):
                start = time.perf_counter()
                call()
                t.append(time.perf_counter() - start)
    return [np.array(t) for t in times]


def copy_bandwidth(
    nbytes: int,
    *,
    threads: int = 1,
    repeats: int = 5,
    min_seconds: float = 0.2,
    store: str = "memcpy",
) -> np.ndarray:
    """Bytes per second a copy of `nbytes` bytes moves (read + written), one value per repetition.

    The source and destination are split into `threads` contiguous pieces,
    each copied on its own thread. Arrays much larger than the caches measure
    the memory's sustainable bandwidth; smaller ones measure a cache's.

    Parameters
    ----------
    nbytes : int
        Size of the source (and of the destination).
    threads : int, default 1
    repeats, min_seconds
        As in :func:`timings`.
    store : {"memcpy", "ordinary"}, default "memcpy"
        "memcpy": float64 arrays, each piece copied by ``np.copyto`` on a
        thread of a pool (numpy releases the GIL while it copies), so glibc's
        ``memcpy`` chooses the stores (non-temporal above its threshold).
        "ordinary": float32 arrays copied by a numba-compiled loop (one block
        of the loop per thread) with ordinary stores, as the fused kernels
        store; needs numba.

    Returns
    -------
    numpy.ndarray
        ``2 * nbytes / seconds`` for every timed copy: the bytes a copy must
        move, not the 3 per 2 that memory moves for an ordinary store.
    """
    return copy_bandwidths(
        nbytes, threads=threads, stores=(store,), repeats=repeats, min_seconds=min_seconds
    )[store]


def copy_bandwidths(
    nbytes: int,
    *,
    threads: int = 1,
    stores=COPY_STORES,
    repeats: int = 5,
    min_seconds: float = 0.2,
) -> dict[str, np.ndarray]:
    """:func:`copy_bandwidth` of each of `stores`, timed in turn (:func:`interleaved_timings`):
    store -> rates."""
    nbytes, threads = check_count(nbytes, "nbytes"), check_count(threads, "threads")
    for store in stores:
        if store not in COPY_STORES:
            raise ValueError(f"store must be one of {COPY_STORES}; got {store!r}.")
    with ExitStack() as stack:
        prepared = [_copy_call(nbytes, threads, store, stack) for store in stores]
        seconds = interleaved_timings(
            [call for call, _ in prepared], repeats=repeats, min_seconds=min_seconds
        )
    return {store: moved / t for store, (_, moved), t in zip(stores, prepared, seconds)}


#: Bytes of a page: the copy's buffers start on one.
PAGE = 4096


def page_aligned(count: int, dtype) -> np.ndarray:
    """An uninitialized array of `count` elements of `dtype` whose first byte starts a page.

    Two buffers malloc places side by side can sit a few bytes past a multiple of 4 KiB apart, and
    some copy paths (glibc's ``rep movsb``) slow down several times for such a mutual offset; the
    copies of chapter "LayerNorm at the speed of memory" start source and target on a page each.
    """
    dtype = np.dtype(dtype)
    raw = np.empty(count * dtype.itemsize + PAGE, dtype=np.uint8)
    start = -raw.ctypes.data % PAGE
    return raw[start : start + count * dtype.itemsize].view(dtype)


def _copy_call(nbytes: int, threads: int, store: str, stack: ExitStack):
    """A call that copies `nbytes` with `store` on `threads` threads, and the bytes it counts (2 x
    source)."""
    if store == "memcpy":
        source = page_aligned(max(nbytes // 8, threads), np.float64)
        source[:] = 1
        target = page_aligned(source.size, np.float64)
        if threads == 1:
            return (lambda: np.copyto(target, source)), 2 * source.nbytes
        pieces = list(zip(np.array_split(target, threads), np.array_split(source, threads)))
        pool = stack.enter_context(ThreadPoolExecutor(threads))
        return (lambda: list(pool.map(lambda pair: np.copyto(*pair), pieces))), 2 * source.nbytes
    copy = ordinary_copy(threads > 1)
    numba = importlib.import_module("numba")
    if threads > numba.config.NUMBA_NUM_THREADS:
        raise ValueError(
            f"threads must be at most {numba.config.NUMBA_NUM_THREADS} (numba's threads); got "
            f"{threads}."
        )
    if numba.get_num_threads() < threads:
        stack.callback(numba.set_num_threads, numba.get_num_threads())
        numba.set_num_threads(threads)
    source = page_aligned(max(nbytes // 4, threads), np.float32)
    source[:] = 1
    target = page_aligned(source.size, np.float32)
    scale = np.float32(1)
    return (lambda: copy(source, target, scale, threads)), 2 * source.nbytes


#: Path: ``lnlib/book/data/kernels.json``, shipped with the package like the book's other stored
#: results (so the wheel runs the chapter without the repository): the file ``make bench-kernels``
#: writes and the chapter reads.
#:
#: :meta hide-value:
RESULTS_PATH = Path(__file__).resolve().parents[1] / "data" / "kernels.json"


class KernelResults:
    """The committed benchmark results of ``make bench-kernels``, with the questions the chapter
    asks of them.

    Parameters
    ----------
    data : dict
        The parsed ``kernels.json``: ``machine``, ``load_average``, ``copy`` and ``kernels``
        entries.
    """

    def __init__(self, data: dict):
        self.data = data
        self.kernels = data["kernels"]
        #: list of dict: The float32, 1-thread entries timed with preallocated outputs (empty in
        #: older files).
        self.preallocated = data.get("preallocated", [])
        self.copies = data["copy"]

    @classmethod
    def load(cls, path=None) -> "KernelResults":
        """Read the results file (default :data:`RESULTS_PATH`)."""
        path = RESULTS_PATH if path is None else path
        try:
            text = open(path, encoding="utf-8").read()
        except FileNotFoundError:
            raise FileNotFoundError(
                f"no benchmark results at {path}: run `make bench-kernels` in the book's "
                "repository."
            ) from None
        return cls(json.loads(text))

    @property
    def thread_counts(self) -> tuple[int, ...]:
        """tuple of int: The thread counts measured, 1 and all cores."""
        return tuple(sorted({c["threads"] for c in self.copies}))

    @property
    def stores(self) -> tuple[str, ...]:
        """tuple of str: The copies measured, of :data:`COPY_STORES` (files before the ordinary
        copy: memcpy only)."""
        return tuple(
            s for s in COPY_STORES if any(c.get("store", "memcpy") == s for c in self.copies)
        )

    @property
    def non_temporal_threshold(self) -> int | None:
        """Bytes above which this run's glibc memcpy used non-temporal stores, or None where not
        recorded."""
        return self.data["machine"].get("glibc", {}).get("non_temporal_threshold")

    def memory_bandwidth(self, threads: int = 1, store: str = "memcpy") -> float:
        """Bytes per second of the copy of the largest footprint measured (with `store`): the
        memory's sustainable bandwidth."""
        return self._copies(threads, store)[-1]["median_bytes_per_s"]

    def _copies(self, threads: int, store: str = "memcpy") -> list[dict]:
        if store not in COPY_STORES:
            raise ValueError(f"store must be one of {COPY_STORES}; got {store!r}.")
        rows = sorted(
            (
                c
                for c in self.copies
                if c["threads"] == threads and c.get("store", "memcpy") == store
            ),
            key=lambda c: c["bytes"],
        )
        if not rows:
            raise ValueError(f"no {store} copy on {threads} thread(s) in these results.")
        return rows

    def copy_curve(self, threads: int = 1, store: str = "memcpy") -> tuple[np.ndarray, np.ndarray]:
        """Footprints (bytes copied from) and median bandwidths (bytes per second) for `threads` and
        `store`."""
        rows = self._copies(threads, store)
        return np.array([c["bytes"] for c in rows], dtype=float), np.array(
            [c["median_bytes_per_s"] for c in rows]
        )

    def copy_spread(self, threads: int = 1, store: str = "memcpy") -> tuple[np.ndarray, np.ndarray]:
        """The 10th and 90th percentiles of the repeats' bandwidths (bytes per second), in
        :meth:`copy_curve`'s order."""
        rows = self._copies(threads, store)
        return np.array([c["p10_bytes_per_s"] for c in rows]), np.array(
            [c["p90_bytes_per_s"] for c in rows]
        )

    @property
    def implementations(self) -> tuple[str, ...]:
        """Implementation names, in the order they were measured."""
        return tuple(dict.fromkeys(k["implementation"] for k in self.kernels))

    def point(
        self,
        implementation: str,
        part: str,
        dtype: str,
        threads: int,
        rows: int,
        size: int,
        output: str = "fresh",
    ) -> dict | None:
        """The entry of one measurement, or None where it was not measured.

        `output` is "fresh" (outputs allocated by every call) or "preallocated" (``out=``).
        """
        if output not in ("fresh", "preallocated"):
            raise ValueError(f"output must be 'fresh' or 'preallocated'; got {output!r}.")
        for k in self.kernels if output == "fresh" else self.preallocated:
            if (k["implementation"], k["part"], k["dtype"], k["threads"], k["rows"], k["size"]) == (
                implementation,
                part,
                dtype,
                threads,
                rows,
                size,
            ):
                return k
        return None

    def series(
        self,
        implementation: str,
        part: str,
        *,
        threads: int = 1,
        dtype: str = "float32",
        rows=None,
        size=None,
        output: str = "fresh",
    ) -> list[dict]:
        """Entries along the rows axis (give `size`) or the H axis (give `rows`, or None for each
        H's most rows)."""
        chosen = [
            k
            for k in (self.kernels if output == "fresh" else self.preallocated)
            if (k["implementation"], k["part"], k["dtype"], k["threads"])
            == (implementation, part, dtype, threads)
        ]
        if size is not None:
            return sorted((k for k in chosen if k["size"] == size), key=lambda k: k["rows"])
        if rows is not None:
            return sorted((k for k in chosen if k["rows"] == rows), key=lambda k: k["size"])
        most = {}
        for k in sorted(chosen, key=lambda k: k["rows"]):
            most[k["size"]] = k
        return [most[s] for s in sorted(most)]

    def far_from_neighbours(
        self,
        implementation: str,
        part: str,
        *,
        threads: int = 1,
        dtype: str = "float32",
        size: int | None = None,
        factor: float = 2.0,
    ) -> list[dict]:
        """Entries whose achieved bandwidth is over `factor` times above, or below, both neighbours'
        in a series.

        The series is :meth:`series` along the rows axis at `size`, or along H (each H's most rows)
        where `size` is None. A point that stands apart from both sides of a curve that is otherwise
        smooth was most likely timed during a burst of load on a shared machine: the chapter
        "LayerNorm at the speed of memory" flags such points rather than quoting them alone. The
        ends of a series, with one neighbour, are never flagged.
        """
        if not factor > 1:
            raise ValueError(f"factor must be above 1; got {factor!r}.")
        entries = self.series(implementation, part, threads=threads, dtype=dtype, size=size)
        rates = [k["bytes"] / k["median_s"] for k in entries]
        flagged = []
        for before, (entry, rate), after in zip(rates, zip(entries[1:], rates[1:]), rates[2:]):
            if min(before, after) > factor * rate or rate > factor * max(before, after):
                flagged.append(entry)
        return flagged

    def cache_bytes(self, level: str) -> int | None:
        """Bytes of the cache `level` ("L1", "L2", "L3") Linux reported for this run, or None."""
        text = self.data["machine"].get("caches_per_core_or_shared", {}).get(level, "")
        return int(text[:-1]) * 1024 if text.endswith("K") else None

    def most_rows(self, size: int, output: str = "fresh") -> int:
        """The most rows measured at `size` (the benchmark stops at its largest element count)."""
        chosen = self.kernels if output == "fresh" else self.preallocated
        return max(k["rows"] for k in chosen if k["size"] == size)

    def at(self, implementation, part, rows, size, *, threads=1, dtype="float32", output="fresh"):
        """The entry of one measurement (:meth:`point`), by keyword; KeyError where not measured."""
        entry = self.point(implementation, part, dtype, threads, rows, size, output)
        if entry is None:
            raise KeyError(
                f"{implementation} {part} {dtype} at {rows} x {size}, {threads} thread(s),"
                f" {output} outputs: not measured."
            )
        return entry

    def fraction_at(self, implementation, part, rows, size, *, store="memcpy", **where) -> float:
        """:meth:`fraction` of the entry :meth:`at` finds (`where`: threads, dtype, output)."""
        return self.fraction(self.at(implementation, part, rows, size, **where), store)

    def ratio(self, implementation, other, part, rows, size, **where) -> float:
        """Median time of `implementation` over that of `other` at one shape (below 1: faster)."""
        ours, theirs = (self.at(n, part, rows, size, **where) for n in (implementation, other))
        return ours["median_s"] / theirs["median_s"]

    def fresh_over_kept(self, implementation, part, low, high) -> list[float]:
        """Time with fresh outputs over time with ``out=``, one thread, float32, at every shape
        whose x holds from `low` to `high` bytes (chapter "LayerNorm at the speed of memory")."""
        return [
            self.at(implementation, part, k["rows"], k["size"])["median_s"] / k["median_s"]
            for k in self.preallocated
            if (k["implementation"], k["part"]) == (implementation, part)
            and low <= k["rows"] * k["size"] * 4 <= high
        ]

    def fraction(self, entry: dict, store: str = "memcpy") -> float:
        """The measured time's fraction of the floor at the entry's thread count (above 1: faster
        than a large copy).

        `store` names the copy whose bandwidth sets the floor: "memcpy" (``np.copyto``, streaming
        stores above glibc's threshold) or "ordinary" (stores as the kernels make them).
        """
        return fraction_of_floor(
            entry["median_s"], entry["bytes"], self.memory_bandwidth(entry["threads"], store)
        )


# --- what chapter 14 says about the committed results, by glue key --------------------------------
# Each function returns {glue key: ProseNumber or sentence} for one section of the chapter; the
# chapter glues them all (``prose.glue_all``). Each key's meaning is in the section's KEYS table.

#: The fused kernel's name in the results.
FUSED = "fused (numba)"

#: The keys of :func:`copy_findings` and what each is (section "The floor: bytes that must move").
COPY_KEYS = {
    "n_cores": "the cores of the machine that ran the benchmark",
    "load_start": "its load average (1 min) when the benchmark started",
    "load_end": "its load average (1 min) when the benchmark ended",
    "copy_1": "np.copyto's rate on the largest copy, one thread, GB/s",
    "copy_all": "np.copyto's rate on the largest copy, all cores, GB/s",
    "copy_ord_1": "the ordinary-store copy's rate on the largest copy, one thread, GB/s",
    "copy_ord_all": "the ordinary-store copy's rate on the largest copy, all cores, GB/s",
    "copy_peak": "np.copyto's fastest rate at any size, one thread, GB/s",
    "copy_peak_mb": "the size (MiB) copied at that fastest rate",
    "peak_footprint_mb": "that copy's source and destination together, MiB",
    "peak_fit": "which cache that footprint fits in (a phrase)",
    "copy_largest_mb": "the largest copy's source, MiB",
    "copy_footprint_mb": "the largest copy's source and destination together, MiB",
    "l3_cache": "the L3 cache Linux reported, 'N MiB'",
    "copy_vs_l3": "whether the largest copy's footprint is larger than the L3 (a phrase)",
    "rfo_ratio": (
        "derived: 2/3, the ordinary-store copy's rate over a streaming one's at equal traffic"
    ),
    "store_ratio": "measured: ordinary-store rate over np.copyto's, one thread, largest copy",
    "store_ratio_all": "the same ratio on all cores",
    "store_ratio_note": "why one thread falls below 2/3 where all cores do not (a sentence)",
    "nt_mib": "glibc's non-temporal threshold, MiB",
    "largest_vs_nt": "whether the largest copy is 'above' or 'below' the threshold",
    "below_nt_mib": "the largest copy at or below the threshold, MiB",
    "memcpy_step": (
        "np.copyto's rate at the largest copy over that at the largest below the threshold"
    ),
    "ordinary_step": "the same ratio for the ordinary-store copy",
    "example_mb": "bytes (MB) a forward pass over the chapter's batch moves",
    "example_floor_ms": "its floor at np.copyto's one-thread rate, ms",
    "example_floor_ord_ms": "its floor at the ordinary-store copy's one-thread rate, ms",
    "glibc_version": "the glibc version of the run",
    "shared_cache_mib": "glibc's shared_cache_size, MiB",
    "shared_vs_sysfs": "how that compares with the L3 Linux reports, and why (a clause)",
    "nt_formula": "the threshold as a fraction of shared_cache_size (a phrase)",
    "all_threads": "the thread count of the all-core copies",
    "all_largest_mb": "the largest all-core copy, MiB",
    "all_piece_mb": "each thread's piece of it, MiB",
    "all_stream_mb": "the all-core copy size above which every piece streams, MiB",
    "all_piece_vs_nt": "whether the all-core floor streams (a clause)",
    "rep_movsb_bytes": "glibc's rep movsb threshold, bytes",
    "rep_movsb_stop_kib": "glibc's rep movsb stop threshold, KiB",
    "exceed_note": "how many measurements beat the np.copyto floor, and where (a clause)",
    "exceed_ordinary_note": "how many preallocated ones beat the ordinary-store floor (a sentence)",
}


def _mib(nbytes, spec: str = ".0f"):
    return prose.number(nbytes / 2**20, spec)


def _listed(items) -> str:
    """'a', 'a and b', 'a, b and c'."""
    items = list(items)
    return " and ".join([", ".join(items[:-1]), items[-1]] if len(items) > 1 else items)


def _shapes(shapes) -> str:
    return _listed(f"{r} × {h}" for r, h in shapes)


def _store_ratio_note(one: float, every: float, threads: int) -> str:
    """Chapter 14: why one thread's ordinary-store copy can fall below the derived 2/3."""
    if one >= 2 / 3 or every <= one:
        return ""
    return (
        f" On {threads} threads the same ratio is {prose.number(every, '.2f')}: one core keeps"
        " only so many cache-line misses in flight, and each ordinary store's read-for-ownership"
        " holds one of them as a load does, where a streaming store does not, so one core's"
        " ordinary copy falls short of memory's rate. Both ratios are this machine's, measured,"
        " not a law."
    )


def _glibc_clause(shared: int, l3: int | None, cores: int) -> str:
    """Chapter 14: glibc's shared_cache_size against the L3 Linux reports, and what it implies."""
    if l3 is None:
        return "while Linux reported no L3 cache"
    if shared == l3:
        return "the same as the L3 cache Linux reports (in /sys, from leaf 0x8000001D)"
    times = shared / l3
    what = prose.number(times, ".0f") if times == int(times) else prose.number(times, ".2f")
    return (
        f"{what} times the {l3 // 2**20} MiB L3 of one core complex that Linux reports (in /sys,"
        " from leaf 0x8000001D). The run did not record the leaves. If, as on the virtual"
        " machines this chapter was checked on, leaf 1 and leaf 0x8000001D both count the"
        f" machine's own {cores} threads, the two counts cancel, and leaf 0x80000006 reported"
        f" {_mib(shared)} MiB: as much L3 as {what} such complexes hold, the whole package's"
        " rather than one complex's"
    )


def _peak_fit(peak_footprint: float, l2: int | None, l3: int | None) -> str:
    if l2 and peak_footprint <= l2:
        return "inside a core's L2 cache"
    if l3 and peak_footprint <= l3:
        beside = f" of {l2 // 1024} KiB" if l2 else ""
        return f"inside the shared L3 cache of {l3 // 2**20} MiB, though not a core's L2{beside}"
    return "larger than the caches this processor reports"


def _exceed_note(results: KernelResults, l3: int | None) -> str:
    beating = [k for k in results.kernels if results.fraction(k) > 1]
    if not beating:
        return ", though none of this run's measurements does"
    where = ["on all cores"] if all(k["threads"] > 1 for k in beating) else []
    if l3 and all(k["bytes"] <= l3 for k in beating):
        where.append("moving no more bytes than the L3 cache holds")
    return f", as {prose.number(len(beating))} of this run's measurements do" + (
        ", all " + " and ".join(where) if where else ""
    )


def _exceed_ordinary_note(results: KernelResults, l3: int | None) -> str:
    over = [k for k in results.preallocated if results.fraction(k, "ordinary") > 1]
    if not over:
        return ""
    best = max(results.fraction(k, "ordinary") for k in over)
    in_l3 = l3 and all(k["bytes"] <= l3 for k in over)
    return (
        f" Against the ordinary-store copy's rate, {prose.number(len(over))} of the measurements"
        f" with preallocated outputs beat the floor (by a factor of up to"
        f" {prose.number(best, '.2f')})"
        + (
            ", each moving no more bytes than the L3 cache holds: their data need not travel to"
            " memory and back, as the copy's did"
            if in_l3
            else ""
        )
        + "."
    )


def copy_findings(results: KernelResults, rows: int, size: int) -> dict:
    """The numbers and sentences of chapter 14's section on the floor, by glue key
    (:data:`COPY_KEYS`).

    Parameters
    ----------
    results : KernelResults
        The committed benchmark (``KernelResults.load()``).
    rows, size : int
        The chapter's running example, whose forward floor the section states.

    Returns
    -------
    dict
        {key: ProseNumber or str}, the keys of :data:`COPY_KEYS`.
    """
    machine, load = results.data["machine"], results.data["load_average"]
    libc, l2, l3 = machine["glibc"], results.cache_bytes("L2"), results.cache_bytes("L3")
    every = max(results.thread_counts)
    rate = {(t, s): results.memory_bandwidth(t, s) for t in (1, every) for s in COPY_STORES}
    footprints, rates = results.copy_curve(1)
    ordinary_rates = results.copy_curve(1, "ordinary")[1]
    threshold, shared = results.non_temporal_threshold, libc["shared_cache_size"]
    below = footprints <= threshold
    peak = footprints[rates.argmax()]
    all_largest = results.copy_curve(every)[0].max()
    piece = all_largest / every
    example = bytes_moved(rows, size, "float32", "forward")
    one, on_all = (rate[t, "ordinary"] / rate[t, "memcpy"] for t in (1, every))
    found = {
        "n_cores": prose.number(machine["cores"]),
        "load_start": prose.number(load["start"][0], ".1f"),
        "load_end": prose.number(load["end"][0], ".1f"),
        "copy_peak": prose.number(rates.max() / 1e9, ".0f"),
        "copy_peak_mb": _mib(peak, ".2f"),
        "peak_footprint_mb": _mib(2 * peak),
        "peak_fit": _peak_fit(2 * peak, l2, l3),
        "copy_largest_mb": _mib(footprints.max()),
        "copy_footprint_mb": _mib(2 * footprints.max()),
        "l3_cache": f"{l3 // 2**20} MiB" if l3 else "an unknown",
        "copy_vs_l3": "no larger than" if l3 and 2 * footprints.max() <= l3 else "larger than",
        "rfo_ratio": prose.number(2 / 3, ".2f"),
        "store_ratio": prose.number(one, ".2f"),
        "store_ratio_all": prose.number(on_all, ".2f"),
        "store_ratio_note": _store_ratio_note(one, on_all, every),
        "nt_mib": _mib(threshold),
        "largest_vs_nt": "above" if footprints.max() > threshold else "below",
        "below_nt_mib": _mib(footprints[below].max()),
        "memcpy_step": prose.number(rates[-1] / rates[below][-1], ".2f"),
        "ordinary_step": prose.number(ordinary_rates[-1] / ordinary_rates[below][-1], ".2f"),
        "example_mb": prose.number(example.total / 1e6, ".1f"),
        "example_floor_ms": prose.number(floor_seconds(example, rate[1, "memcpy"]) * 1e3, ".2f"),
        "example_floor_ord_ms": prose.number(
            floor_seconds(example, rate[1, "ordinary"]) * 1e3, ".2f"
        ),
        "glibc_version": libc["version"],
        "shared_cache_mib": _mib(shared),
        "shared_vs_sysfs": _glibc_clause(shared, l3, machine["cores"]),
        "nt_formula": "three quarters of it"
        if threshold == shared * 3 // 4
        else f"{prose.number(threshold / shared, '.2f')} of it",
        "all_threads": prose.number(every),
        "all_largest_mb": _mib(all_largest),
        "all_piece_mb": _mib(piece),
        "all_stream_mb": _mib(every * threshold),
        "all_piece_vs_nt": "above the threshold, so the all-core floor streams too"
        if piece > threshold
        else "below the threshold, so the all-core np.copyto floor stores ordinarily,"
        " as the kernels do",
        "rep_movsb_bytes": prose.number(libc["rep_movsb_threshold"]),
        "rep_movsb_stop_kib": prose.number(libc["rep_movsb_stop_threshold"] / 1024, ".0f"),
        "exceed_note": _exceed_note(results, l3),
        "exceed_ordinary_note": _exceed_ordinary_note(results, l3),
    }
    for key, (threads, store) in (
        ("copy_1", (1, "memcpy")),
        ("copy_all", (every, "memcpy")),
        ("copy_ord_1", (1, "ordinary")),
        ("copy_ord_all", (every, "ordinary")),
    ):
        found[key] = prose.number(rate[threads, store] / 1e9, ".1f")
    return found


#: The keys of :func:`kernel_findings` and what each is (section "Measured against the floor").
KERNEL_KEYS = {
    "big_shapes": "the most rows measured at H = 1024, 4096 and 16384, as 'M × H' shapes",
    "big_over": "how many of them have arrays over glibc's mmap threshold ('None' to 'All three')",
    "fused_fwd_min": (
        "the fused forward's least fraction of the np.copyto floor there, fresh outputs"
    ),
    "fused_fwd_max": "its greatest",
    "torch_fwd_min": "the fused forward's least time over PyTorch's there",
    "torch_fwd_max": "its greatest",
    "torch_bwd_min": "the fused backward's least time over PyTorch's there",
    "torch_bwd_max": "its greatest",
    "fused_fwd_ord": "the fused forward's fractions of the ordinary-store floor with out=, at the"
    " shapes whose x and y together exceed the L3 (a range)",
    "fused_fwd_ord_shapes": "those shapes",
    "fused_fwd_ord_note": (
        "the shapes whose x and y fit in the L3, with their fractions (a sentence)"
    ),
    "wide_shapes": "the big shapes and 1000 × 1024, the shapes of the ranges below",
    "naive_fwd_frac": (
        "the textbook numpy forward's fractions of the ordinary-store floor over them, fresh"
        " outputs (a range)"
    ),
    "lnlib_fwd_frac": "lnlib.layer_norm's (a range)",
    "torch_fwd_frac": "PyTorch's (a range)",
    "torch_over_note": "where PyTorch's exceed 1, and why (a parenthesis, or empty)",
    "lnlib_over_fused": "lnlib.layer_norm's time over the fused kernel's (a range)",
    "faulted_note": "which of them have arrays over 32 MiB, whose fresh outputs fault (a sentence)",
    "one_row_us": "the fused forward's time on one row of H = 1024, µs",
    "one_row_floor_us": "that row's floor at the ordinary-store copy's one-thread rate, µs",
    "one_row_torch_us": "PyTorch's time on it, µs",
    "short_rows_claim": (
        "what this run shows of short rows' per-row cost, like for like (sentences)"
    ),
    "welford_ratio": "the Welford forward's time over the two-pass one's (a range)",
    "fused_fwd_all_frac": (
        "the fused forward's fractions of the all-core floor on all cores (a range)"
    ),
    "all_over_note": "where they exceed 1, and why (a parenthesis)",
    "load_note": "whether the load average was at or above the core count (a sentence)",
    "half_rows": "the row counts of the 16-bit comparison at H = 1024",
    "half_ratio": "the fused float16 forward's time over PyTorch's (a range)",
    "bf16_ratio": "the same in bfloat16 (a range)",
    "outlier_note": "the one-thread points far from both neighbours, if any (a sentence)",
}


def _fused_ord(results: KernelResults, big, l3: int | None) -> dict:
    """Chapter 14: the fused forward with out= against the ordinary-store floor, like for like."""
    fraction = {
        s: results.fraction_at(FUSED, "forward", *s, output="preallocated", store="ordinary")
        for s in big
    }
    streaming = [s for s in big if l3 and 2 * s[0] * s[1] * 4 > l3]
    cached = [s for s in big if s not in streaming]
    note = "".join(
        f" At {r} × {h}, whose x and y together ({_mib(2 * r * h * 4)} MiB) fit in the"
        f" {l3 // 2**20} MiB L3 cache, it reaches {prose.number(fraction[r, h], '.2f')}: repeated"
        " calls find part of their data in cache, as the copy's did not."
        for r, h in cached
        if l3
    )
    return {
        "fused_fwd_ord": prose.span([fraction[s] for s in streaming or big], ".2f"),
        "fused_fwd_ord_shapes": _shapes(streaming or big),
        "fused_fwd_ord_note": note,
    }


def _short_rows(results: KernelResults, l3: int | None) -> dict:
    """Chapter 14: H = 64 against longer rows, each at its most rows, with out=, x alone > L3."""

    def fraction(rows, size):
        return results.fraction_at(
            FUSED, "forward", rows, size, output="preallocated", store="ordinary"
        )

    def streams(rows, size):
        return bool(l3) and rows * size * 4 > l3  # x alone larger than the L3

    short = (results.most_rows(64, "preallocated"), 64)
    longer = [(results.most_rows(h, "preallocated"), h) for h in (256, 1024, 4096, 16384)]
    longer = [s for s in longer if streams(*s)]
    if not longer:
        return {
            "short_rows_claim": "This run has no longer rows that stream from memory to compare"
            " with.",
        }
    others = [fraction(*s) for s in longer]
    heights = _listed(str(prose.number(h)) for _, h in longer)
    if not streams(*short):
        return {
            "short_rows_claim": (
                f"This run cannot show it: its largest input at H = 64, {short[0]} rows, holds x"
                f" in {_mib(short[0] * 64 * 4)} MiB, inside the {l3 // 2**20} MiB L3 cache, so"
                f" repeated calls find part of it in cache, where x alone exceeds the L3 at the"
                f" rows of H = {heights} ({_listed(f'{r} × {h}' for r, h in longer)}). Its"
                f" {prose.number(fraction(*short), '.2f')} of the ordinary-store copy, against"
                f" their {prose.span(others, '.2f')}, compares data in cache with data in memory."
            ),
        }
    h64 = fraction(*short)
    where = "below" if h64 < min(others) else "above" if h64 > max(others) else "within"
    return {
        "short_rows_claim": (
            f"Where x alone exceeds the L3 cache, the fused forward with out= at H = 64"
            f" ({short[0]} rows) reaches {prose.number(h64, '.2f')} of the ordinary-store copy,"
            f" {where} the fractions of H = {heights} ({prose.span(others, '.2f')})."
            + (" Here they paid a per-row cost." if where == "below" else "")
        ),
    }


def _outlier_note(results: KernelResults, mmap_max: int) -> str:
    """Chapter 14: one-thread points over twice above or below both neighbours along an axis."""
    apart, faulted_near = set(), False
    for name in results.implementations:
        for part in PARTS:
            for axis in (None, 1024):
                line = results.series(name, part, size=axis)
                for k in results.far_from_neighbours(name, part, size=axis):
                    i = line.index(k)
                    apart.add((name, part, k["rows"], k["size"]))
                    faulted_near |= any(
                        n["rows"] * n["size"] * 4 > mmap_max for n in line[i - 1 : i + 2]
                    )
    if not apart:
        return (
            "In this run no one-thread point stands over twice above or below both its"
            " neighbours along either axis of the figures."
        )
    shapes = sorted({(r, h) for _, _, r, h in apart}, key=lambda s: (s[1], s[0]))
    why = (
        "the point or a neighbour has arrays over 32 MiB, whose fresh outputs are faulted in on"
        " every call (below), or a burst of load slowed a point"
        if faulted_near
        else "most likely timed during a burst of load"
    )
    return (
        f"In this run {prose.number(len(apart))} one-thread points (of the implementations and"
        f" passes together), at {_shapes(shapes)}, stand over twice above or below both their"
        f" neighbours along an axis of the figures: {why}; read them with their neighbours,"
        " and the ranges above with them."
    )


def _all_cores(results: KernelResults, wide, l3: int | None) -> dict:
    every = max(results.thread_counts)
    fractions = {s: results.fraction_at(FUSED, "forward", *s, threads=every) for s in wide}
    over = [s for s, f in fractions.items() if f > 1]
    if not over:
        note = ""
    elif l3 and all(2 * r * h * 4 <= l3 for r, h in over):
        note = (
            f" (above 1 at {_shapes(over)}, whose x and y fit in the L3 cache: data that stay"
            " in cache are not bound by the floor)"
        )
    else:
        note = f" (above 1 at {_shapes(over)}: more than this run's all-core copy sustained)"
    return {"fused_fwd_all_frac": prose.span(fractions.values(), ".2f"), "all_over_note": note}


def _over_floor_note(results: KernelResults, name: str, wide, l3: int | None) -> str:
    """Chapter 14: where `name`'s one-thread forward beats the ordinary-store floor, and why (a
    parenthesis, or "")."""
    over = [s for s in wide if results.fraction_at(name, "forward", *s, store=FLOOR_STORE) > 1]
    if not over:
        return ""
    if l3 and all(2 * r * h * 4 <= l3 for r, h in over):
        return (
            f" (above 1 at {_shapes(over)}, whose x and y fit in the L3 cache: data that stay"
            " in cache are not bound by the floor)"
        )
    return f" (above 1 at {_shapes(over)}: more than this run's copy sustained)"


def _load_note(results: KernelResults) -> str:
    load, cores = results.data["load_average"], results.data["machine"]["cores"]
    if max(load["start"][0], load["end"][0]) >= cores:
        return (
            f"This run's load average, {prose.number(load['start'][0], '.1f')} at the start, was"
            f" at or above its {cores} cores: other processes held the cores the threads waited"
            " for, so the all-core timings measure the operating system's scheduler as much as"
            " the kernels."
        )
    return (
        "Whether more cores help depends on whether one core could already saturate the memory,"
        " and on what else the machine is running."
    )


def kernel_findings(results: KernelResults) -> dict:
    """The numbers and sentences of chapter 14's section "Measured against the floor", by glue key.

    Parameters
    ----------
    results : KernelResults

    Returns
    -------
    dict
        {key: ProseNumber or str}, the keys of :data:`KERNEL_KEYS`.
    """
    l3 = results.cache_bytes("L3")
    mmap_max = results.data["machine"]["glibc"]["mmap_threshold_max"]
    big = [(results.most_rows(h), h) for h in (1024, 4096, 16384)]
    wide = sorted({*big, (1000, 1024)}, key=lambda s: (s[1], s[0]))
    fused_fwd = [results.fraction_at(FUSED, "forward", *s) for s in big]
    torch = {p: [results.ratio(FUSED, "PyTorch", p, *s) for s in big] for p in PARTS}
    over = sum(r * h * 4 > mmap_max for r, h in big)
    faulted = [(r, h) for r, h in wide if r * h * 4 > mmap_max]
    one_row = results.at(FUSED, "forward", 1, 1024)
    half_rows = [
        k["rows"]
        for k in results.series(FUSED, "forward", dtype="float16", size=1024)
        if k["rows"] >= 1000
    ]
    found = {
        "big_shapes": ", ".join(f"{r} × {h}" for r, h in big),
        "big_over": ("None", "One", "Two", "All three")[over],
        "fused_fwd_min": prose.number(min(fused_fwd), ".2f"),
        "fused_fwd_max": prose.number(max(fused_fwd), ".2f"),
        "wide_shapes": ", ".join(f"{r} × {h}" for r, h in wide),
        "lnlib_over_fused": prose.span(
            [results.ratio("lnlib (numpy)", FUSED, "forward", *s) for s in wide], ".0f"
        ),
        "faulted_note": (
            f"At {_shapes(faulted)}, over 32 MiB an array, PyTorch's fresh outputs pay the page"
            " faults described below, so its fraction there measures its allocator as well as"
            " its kernel."
        )
        if faulted
        else "None of them has an array over 32 MiB, where page faults would intrude.",
        "one_row_us": prose.number(one_row["median_s"] * 1e6, ".1f"),
        "one_row_floor_us": prose.number(
            floor_seconds(one_row["bytes"], results.memory_bandwidth(1, FLOOR_STORE)) * 1e6, ".2f"
        ),
        "one_row_torch_us": prose.number(
            results.at("PyTorch", "forward", 1, 1024)["median_s"] * 1e6, ".1f"
        ),
        "welford_ratio": prose.span(
            [results.ratio("fused Welford (numba)", FUSED, "forward", *s) for s in wide], ".1f"
        ),
        "load_note": _load_note(results),
        "half_rows": " and ".join(str(prose.number(r)) for r in half_rows),
        "outlier_note": _outlier_note(results, mmap_max),
    }
    for p, short in (("forward", "fwd"), ("backward", "bwd")):
        found[f"torch_{short}_min"] = prose.number(min(torch[p]), ".2f")
        found[f"torch_{short}_max"] = prose.number(max(torch[p]), ".2f")
    for key, name in (
        ("naive_fwd_frac", "naive numpy"),
        ("lnlib_fwd_frac", "lnlib (numpy)"),
        ("torch_fwd_frac", "PyTorch"),
    ):
        found[key] = prose.span(
            [results.fraction_at(name, "forward", *s, store=FLOOR_STORE) for s in wide], ".2f"
        )
    for key, dtype in (("half_ratio", "float16"), ("bf16_ratio", "bfloat16")):
        found[key] = prose.span(
            [results.ratio(FUSED, "PyTorch", "forward", r, 1024, dtype=dtype) for r in half_rows],
            ".1f",
        )
    found["torch_over_note"] = _over_floor_note(results, "PyTorch", wide, l3)
    found.update(_fused_ord(results, big, l3))
    found.update(_short_rows(results, l3))
    found.update(_all_cores(results, wide, l3))
    return found


#: The keys of :func:`cliff_findings` and what each is (section "Large arrays: the cost of a fresh
#: output"); the ``cliff_`` ranges are time with a fresh output over time with ``out=``, one thread.
CLIFF_KEYS = {
    "mmap_mib": "glibc's largest mmap threshold, MiB",
    "cliff_over_fused_fwd_min": "the fused forward's least ratio, x over the threshold",
    "cliff_over_fused_fwd_max": "its greatest",
    "cliff_over_fused_bwd_min": "the fused backward's least ratio, x over the threshold",
    "cliff_over_fused_bwd_max": "its greatest",
    "cliff_under_fused_fwd_min": "the fused forward's least ratio, x from 1 MiB to the threshold",
    "cliff_under_fused_fwd_max": "its greatest",
    "cliff_under_fused_bwd_min": "the fused backward's least ratio, x from 1 MiB to the threshold",
    "cliff_under_fused_bwd_max": "its greatest",
    "cliff_verdict": "whether every forward ratio over the threshold exceeds every one under it",
    "below_one_note": "the ratios below 1, if any, and what they can and cannot mean (a sentence)",
}


def cliff_groups(results: KernelResults) -> dict[str, tuple[float, float]]:
    """Chapter 14's two groups of shapes by the bytes of x: from 1 MiB to glibc's largest mmap
    threshold, and over it: {label: (low, high)}."""
    mmap_max = results.data["machine"]["glibc"]["mmap_threshold_max"]
    mib = mmap_max / 2**20
    return {
        f"x from 1 MiB to {mib:.0f} MiB": (2**20, mmap_max),
        f"x over {mib:.0f} MiB": (mmap_max + 1, float("inf")),
    }


def _below_one_note(lowest: float) -> str:
    """Chapter 14: fresh-over-kept ratios below 1, and what they can and cannot mean."""
    if lowest >= 1:
        return "No ratio fell below 1."
    return (
        f"Ratios below 1 occur (down to {prose.number(lowest, '.2f')}). Mostly they are the noise"
        " of a shared machine between two calls timed in turn, and they bound how far any one"
        " ratio here can be trusted; but the out= path also checks the arrays it is given on"
        " every call (their shape, dtype and layout, and that they overlap no input), and a"
        " block malloc recycles and a buffer kept from call to call can sit differently in"
        " the caches, so at arrays of a few MiB a ratio slightly below 1 can be real."
    )


def cliff_findings(results: KernelResults) -> dict:
    """The numbers and sentences of chapter 14's section on fresh outputs, by glue key.

    Returns
    -------
    dict
        {key: ProseNumber or str}, the keys of :data:`CLIFF_KEYS`.
    """
    low, high = cliff_groups(results).values()
    ratios = {}
    found = {"mmap_mib": _mib(low[1])}
    for key, bounds in (("under", low), ("over", high)):
        for short, part in (("fused_fwd", "forward"), ("fused_bwd", "backward")):
            values = ratios[key, part] = results.fresh_over_kept(FUSED, part, *bounds)
            found[f"cliff_{key}_{short}_min"] = prose.number(min(values), ".2f")
            found[f"cliff_{key}_{short}_max"] = prose.number(max(values), ".2f")
    separated = min(ratios["over", "forward"]) > max(ratios["under", "forward"])
    found["cliff_verdict"] = (
        "every fused forward over the threshold lost more to a fresh output than any from 1 MiB"
        " up to it"
        if separated
        else "the fused forward's two groups overlap: the run was too noisy to separate them"
    )
    found["below_one_note"] = _below_one_note(min(min(v) for v in ratios.values()))
    return found
