"""The memory traffic of LayerNorm, two models side by side (chapters "Computing it right: numerics" and
"LayerNorm at the speed of memory"; not yet one model).

The first counts H-vector transfers between memory and the chip, step by step (chapter 13); the second
counts the bytes a fused kernel must move, measures copy bandwidth and reads the committed kernel
timings (chapter 14). Each part keeps its own introduction below.
"""

from __future__ import annotations

import importlib
import json
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ...validation import BFLOAT16, check_count

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
    "ordinary_copy",
    "page_aligned",
    "timings",
    "interleaved_timings",
    "copy_bandwidths",
    "floor_seconds",
    "fraction_of_floor",
]


# --- H-vector transfers of a kernel, chapter 13 (was kernel_traffic.py) ---------------------------
# Memory traffic of a LayerNorm kernel, counted step by step (chapter "Computing it right: numerics").
#
# LayerNorm does a handful of flops per number it touches, so on a GPU its
# speed is set by how many times whole H-vectors travel between memory and the
# chip, not by arithmetic. A program is a sequence of :class:`KernelStep`; each
# step reads and writes named arrays, and :func:`memory_traffic` counts the
# transfers of H-vectors (one per activation-sized array read or written).
# Scalars per row (the mean, the variance) cost nothing worth counting; gamma
# and beta are shared by every row of a batch, so they stay in cache after the
# first row and are counted only on request.


#: Per-row scalars: reading or writing them is not an H-vector transfer.
SCALARS = frozenset({"mean", "var", "std", "rstd"})
#: Per-feature parameters, shared by all rows of a batch.
PARAMETERS = frozenset({"gamma", "beta"})


@dataclass(frozen=True)
class KernelStep:
    """One operation of a LayerNorm program: what it computes, and which arrays it reads and writes (chapter "Computing it right: numerics")."""

    code: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]


@dataclass(frozen=True)
class Traffic:
    """H-vector transfers between memory and the processor: reads, writes, and their sum (chapter "Computing it right: numerics")."""

    reads: int
    writes: int

    @property
    def total(self) -> int:
        """Reads plus writes."""
        return self.reads + self.writes


#: The textbook numpy sequence: every line is its own pass over memory.
NAIVE_LAYER_NORM = (
    KernelStep("mean = x.mean()", reads=("x",), writes=("mean",)),
    KernelStep("d = x - mean", reads=("x", "mean"), writes=("d",)),
    KernelStep("sq = d * d", reads=("d",), writes=("sq",)),
    KernelStep("var = sq.mean()", reads=("sq",), writes=("var",)),
    KernelStep("std = sqrt(var + eps)", reads=("var",), writes=("std",)),
    KernelStep("xhat = d / std", reads=("d", "std"), writes=("xhat",)),
    KernelStep("scaled = gamma * xhat", reads=("gamma", "xhat"), writes=("scaled",)),
    KernelStep("y = scaled + beta", reads=("scaled", "beta"), writes=("y",)),
)

#: A fused kernel: one Welford sweep for the statistics, one sweep that normalizes, scales and shifts.
FUSED_WELFORD_LAYER_NORM = (
    KernelStep("mean, rstd = welford(x)", reads=("x",), writes=("mean", "rstd")),
    KernelStep(
        "y = (x - mean) * rstd * gamma + beta",
        reads=("x", "mean", "rstd", "gamma", "beta"),
        writes=("y",),
    ),
)


def memory_traffic(steps, *, count_parameters: bool = False) -> Traffic:
    """Count the H-vector reads and writes of a LayerNorm program (chapter "Computing it right: numerics").

    Parameters
    ----------
    steps : sequence of KernelStep
        The program, e.g. :data:`NAIVE_LAYER_NORM` or :data:`FUSED_WELFORD_LAYER_NORM`.
    count_parameters : bool, default False
        Also count reads of gamma and beta (right for a single row; in a batch
        they are read once and then served from cache).

    Returns
    -------
    Traffic

    Raises
    ------
    TypeError
        If a step is not a :class:`KernelStep`.

    Examples
    --------
    >>> memory_traffic(FUSED_WELFORD_LAYER_NORM)
    Traffic(reads=2, writes=1)
    """
    free = SCALARS if count_parameters else SCALARS | PARAMETERS
    reads = writes = 0
    for step in steps:
        if not isinstance(step, KernelStep):
            raise TypeError(f"steps must be KernelStep records; got {type(step).__name__}.")
        reads += sum(name not in free for name in step.reads)
        writes += sum(name not in free for name in step.writes)
    return Traffic(reads, writes)


# --- bytes moved and the bandwidth floor, chapter 14 (was bandwidth.py) ---------------------------
# The memory floor of LayerNorm: bytes moved, copy bandwidth, repeated timings (chapter "LayerNorm at the speed of memory").
#
# LayerNorm does a few flops per number, so a good kernel is limited by how fast
# memory delivers and takes bytes. :func:`bytes_moved` counts the bytes a fused
# kernel must move at the least (each activation-sized array once, see
# :mod:`lnlib.book.experiments.memory_speed` for the passes an unfused one makes);
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


#: The two kernels whose traffic is modelled.
PARTS = ("forward", "backward")
_DTYPES = {
    "float64": np.dtype(np.float64),
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": BFLOAT16,
}


@dataclass(frozen=True)
class Bytes:
    """Bytes a kernel must move, split by what they are (chapter "LayerNorm at the speed of memory").

    Attributes
    ----------
    activations : int
        Activation-sized arrays: x and y (forward), x, dy and dx (backward).
    per_row : int
        The saved mean and rstd (float32, or float64 for float64 data).
    per_feature : int
        γ and β read (forward); γ read, dγ and dβ written (backward).
    """

    activations: int
    per_row: int
    per_feature: int

    @property
    def total(self) -> int:
        """All three."""
        return self.activations + self.per_row + self.per_feature


def _dtype(dtype) -> np.dtype:
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    if name not in _DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}; got {dtype!r}.")
    return _DTYPES[name]


def bytes_moved(rows: int, size: int, dtype="float32", part: str = "forward") -> Bytes:
    """The fewest bytes a LayerNorm kernel moves to and from memory (chapter "LayerNorm at the speed of memory").

    Forward: read x, write y (2 activation arrays), write mean and rstd, read
    γ and β. Backward: read x and dy, write dx (3), read mean and rstd and γ,
    write dγ and dβ. Statistics and parameters are float32 for 16-bit storage.

    Parameters
    ----------
    rows : int
        The number of rows normalized (B·T tokens).
    size : int
        H, the features per row.
    dtype : {"float64", "float32", "float16", "bfloat16"}, default "float32"
        The storage dtype of the activations.
    part : {"forward", "backward"}, default "forward"

    Returns
    -------
    Bytes

    Raises
    ------
    ValueError
        For a count below 1, an unknown dtype or part.

    Examples
    --------
    >>> # x and y, mean and rstd per row, gamma and beta per feature:
    >>> # 2 x 4096 x 1024 x 4 + 2 x 4096 x 4 + 2 x 1024 x 4
    >>> bytes_moved(4096, 1024).total
    33595392
    """
    rows, size = check_count(rows, "rows"), check_count(size, "size")
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}; got {part!r}.")
    storage = _dtype(dtype)
    work = 8 if storage == np.float64 else 4
    arrays, parameters = (2, 2) if part == "forward" else (3, 3)
    return Bytes(arrays * rows * size * storage.itemsize, 2 * rows * work, parameters * size * work)


def floor_seconds(moved: Bytes | int, bandwidth: float) -> float:
    """The least time to move `moved` bytes at `bandwidth` bytes per second: the floor (chapter "LayerNorm at the speed of memory")."""
    total = moved.total if isinstance(moved, Bytes) else int(moved)
    if not bandwidth > 0:
        raise ValueError(
            f"bandwidth must be a positive number of bytes per second; got {bandwidth!r}."
        )
    return total / bandwidth


def fraction_of_floor(seconds: float, moved: Bytes | int, bandwidth: float) -> float:
    """Floor time over measured time: 1 is as fast as a copy of the same bytes; 0.5 twice as slow."""
    if not seconds > 0:
        raise ValueError(f"seconds must be a positive time; got {seconds!r}.")
    return floor_seconds(moved, bandwidth) / seconds


def timings(
    call, *, repeats: int = 5, min_seconds: float = 0.0, max_repeats: int = 200
) -> np.ndarray:
    """Seconds per call of `call()`, after one warm-up call (chapter "LayerNorm at the speed of memory").

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


#: How :func:`copy_bandwidth` can store: glibc's memcpy through ``np.copyto`` (streaming stores above
#: glibc's non-temporal threshold), or ordinary stores from a compiled loop, as the fused kernels store.
COPY_STORES = ("memcpy", "ordinary")


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
    """The compiled ordinary-store copy ``target[i] = source[i] * scale`` (needs numba), one block per chunk."""
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
    """Seconds per call of each of `calls`, timed in turn (a, b, a, b, ...), after one warm-up call each.

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
    """:func:`copy_bandwidth` of each of `stores`, timed in turn (:func:`interleaved_timings`): store -> rates."""
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
    """A call that copies `nbytes` with `store` on `threads` threads, and the bytes it counts (2 x source)."""
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
            f"threads must be at most {numba.config.NUMBA_NUM_THREADS} (numba's threads); got {threads}."
        )
    if numba.get_num_threads() < threads:
        stack.callback(numba.set_num_threads, numba.get_num_threads())
        numba.set_num_threads(threads)
    source = page_aligned(max(nbytes // 4, threads), np.float32)
    source[:] = 1
    target = page_aligned(source.size, np.float32)
    scale = np.float32(1)
    return (lambda: copy(source, target, scale, threads)), 2 * source.nbytes


#: Path: ``benchmarks/results/kernels.json`` in the book's repository (as an absolute path on the
#: machine that imports lnlib), the results file ``make bench-kernels`` writes and the chapter reads.
#:
#: :meta hide-value:
RESULTS_PATH = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "kernels.json"


class KernelResults:
    """The committed benchmark results of ``make bench-kernels``, with the questions the chapter asks of them.

    Parameters
    ----------
    data : dict
        The parsed ``kernels.json``: ``machine``, ``load_average``, ``copy`` and ``kernels`` entries.
    """

    def __init__(self, data: dict):
        self.data = data
        self.kernels = data["kernels"]
        #: list of dict: The float32, 1-thread entries timed with preallocated outputs (empty in older files).
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
                f"no benchmark results at {path}: run `make bench-kernels` in the book's repository."
            ) from None
        return cls(json.loads(text))

    @property
    def thread_counts(self) -> tuple[int, ...]:
        """tuple of int: The thread counts measured, 1 and all cores."""
        return tuple(sorted({c["threads"] for c in self.copies}))

    @property
    def stores(self) -> tuple[str, ...]:
        """tuple of str: The copies measured, of :data:`COPY_STORES` (files before the ordinary copy: memcpy only)."""
        return tuple(
            s for s in COPY_STORES if any(c.get("store", "memcpy") == s for c in self.copies)
        )

    @property
    def non_temporal_threshold(self) -> int | None:
        """Bytes above which this run's glibc memcpy used non-temporal stores, or None where not recorded."""
        return self.data["machine"].get("glibc", {}).get("non_temporal_threshold")

    def memory_bandwidth(self, threads: int = 1, store: str = "memcpy") -> float:
        """Bytes per second of the copy of the largest footprint measured (with `store`): the memory's sustainable bandwidth."""
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
        """Footprints (bytes copied from) and median bandwidths (bytes per second) for `threads` and `store`."""
        rows = self._copies(threads, store)
        return np.array([c["bytes"] for c in rows], dtype=float), np.array(
            [c["median_bytes_per_s"] for c in rows]
        )

    def copy_spread(self, threads: int = 1, store: str = "memcpy") -> tuple[np.ndarray, np.ndarray]:
        """The 10th and 90th percentiles of the repeats' bandwidths (bytes per second), in :meth:`copy_curve`'s order."""
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
        """Entries along the rows axis (give `size`) or the H axis (give `rows`, or None for each H's most rows)."""
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
        """Entries whose achieved bandwidth is over `factor` times above, or below, both neighbours' in a series.

        The series is :meth:`series` along the rows axis at `size`, or along H (each H's most rows)
        where `size` is None. A point that stands apart from both sides of a curve that is otherwise
        smooth was most likely timed during a burst of load on a shared machine: the chapter "LayerNorm
        at the speed of memory" flags such points rather than quoting them alone. The ends of a series,
        with one neighbour, are never flagged.
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

    def fraction(self, entry: dict, store: str = "memcpy") -> float:
        """The measured time's fraction of the floor at the entry's thread count (above 1: faster than a large copy).

        `store` names the copy whose bandwidth sets the floor: "memcpy" (``np.copyto``, streaming
        stores above glibc's threshold) or "ordinary" (stores as the kernels make them).
        """
        return fraction_of_floor(
            entry["median_s"], entry["bytes"], self.memory_bandwidth(entry["threads"], store)
        )
