"""LayerNorm's memory traffic, one model for two chapters ("Computing it right: numerics" and
"LayerNorm at the speed of memory").

A LayerNorm program is a sequence of :class:`KernelStep`; each step reads and writes named arrays.
An array is one of three kinds, by its name: a per-row statistic (:data:`SCALARS`: M values), a
per-feature parameter or its gradient (:data:`PER_FEATURE`: H values), or an activation (anything
else: M × H values). Both chapters count the same thing, the arrays each step reads and writes:

- chapter 13 counts the *H-vector transfers* of one row (:func:`memory_traffic`): each activation
  read or written is one; per-row scalars are free, and so are γ and β, which every row of a batch
  shares and which stay in cache after the first;
- chapter 14 weighs every transfer by its size in bytes over a batch of M rows
  (:func:`program_bytes`): an activation is M·H·w bytes, a statistic M and a parameter H numbers of
  the compute dtype.

So the activation bytes of a program are its H-vector transfers times M·H·w, for every program
(``tests/book/test_memory_traffic.py``). :func:`bytes_moved` is the floor of chapter 14: the bytes
of the fused kernels (:data:`FUSED_KERNELS`), which visit each row once and keep it in cache, so
memory sees each array once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...validation import BFLOAT16, check_count

__all__ = [
    "FUSED_ADD_FORWARD",
    "FUSED_ADD_RMS_FORWARD",
    "KernelStep",
    "Traffic",
    "Bytes",
    "SCALARS",
    "PARAMETERS",
    "PER_FEATURE",
    "NAIVE_LAYER_NORM",
    "FUSED_WELFORD_LAYER_NORM",
    "FUSED_FORWARD",
    "FUSED_BACKWARD",
    "PARTS",
    "FUSED_KERNELS",
    "FUSED_RMS_FORWARD",
    "FUSED_RMS_BACKWARD",
    "FUSED_RMS_KERNELS",
    "NORMS",
    "memory_traffic",
    "program_bytes",
    "bytes_moved",
]

#: Per-row statistics: M numbers each, never an H-vector.
SCALARS = frozenset({"mean", "var", "std", "rstd"})
#: The per-feature parameters, shared by all rows of a batch.
PARAMETERS = frozenset({"gamma", "beta"})
#: Every per-feature array: the parameters and their gradients (H numbers each).
PER_FEATURE = PARAMETERS | {"dgamma", "dbeta"}


@dataclass(frozen=True)
class KernelStep:
    """One operation of a LayerNorm program: what it computes, and which arrays it reads and writes
    (chapter "Computing it right: numerics")."""

    code: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]


@dataclass(frozen=True)
class Traffic:
    """H-vector transfers between memory and the processor: reads, writes, and their sum (chapter
    "Computing it right: numerics")."""

    reads: int
    writes: int

    @property
    def total(self) -> int:
        """Reads plus writes."""
        return self.reads + self.writes


@dataclass(frozen=True)
class Bytes:
    """Bytes a program moves, split by what they are (chapter "LayerNorm at the speed of memory").

    Attributes
    ----------
    activations : int
        Activation-sized arrays: x and y (forward), x, dy and dx (backward).
    per_row : int
        The per-row statistics (float32, or float64 for float64 data).
    per_feature : int
        γ and β, and their gradients (float32, or float64 for float64 data).
    """

    activations: int
    per_row: int
    per_feature: int

    @property
    def total(self) -> int:
        """All three."""
        return self.activations + self.per_row + self.per_feature


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

#: A streaming kernel: one Welford sweep for the statistics, one sweep that normalizes, scales and
#: shifts; the row is read from memory twice.
FUSED_WELFORD_LAYER_NORM = (
    KernelStep("mean, rstd = welford(x)", reads=("x",), writes=("mean", "rstd")),
    KernelStep(
        "y = (x - mean) * rstd * gamma + beta",
        reads=("x", "mean", "rstd", "gamma", "beta"),
        writes=("y",),
    ),
)

#: The forward kernel of chapter 14 (``lnlib.fused``): one visit per row, the row kept in cache
#: between its sweeps, so memory sees x read once and y, the mean and rstd written once.
FUSED_FORWARD = (
    KernelStep(
        "y, mean, rstd = layer_norm(x, gamma, beta)",
        reads=("x", "gamma", "beta"),
        writes=("y", "mean", "rstd"),
    ),
)

#: The backward kernel of chapter 14: x and dy read once, dx written once; the saved statistics and
#: γ read, dγ and dβ written (per-thread partial sums, added at the end).
FUSED_BACKWARD = (
    KernelStep(
        "dx, dgamma, dbeta = layer_norm_backward(dy, x, mean, rstd, gamma)",
        reads=("dy", "x", "mean", "rstd", "gamma"),
        writes=("dx", "dgamma", "dbeta"),
    ),
)

#: An RMSNorm forward kernel, fused as :data:`FUSED_FORWARD` is: x read once, y and the one saved
#: statistic, rstd, written once; γ read (RMSNorm has no β).
FUSED_RMS_FORWARD = (
    KernelStep("y, rstd = rms_norm(x, gamma)", reads=("x", "gamma"), writes=("y", "rstd")),
)

#: An RMSNorm backward kernel, fused as :data:`FUSED_BACKWARD` is: x and dy read once, dx written
#: once; rstd and γ read, dγ written (no dβ). Chapter 15's RMSNorm backward is this kernel with x
#: the stored stream s.
FUSED_RMS_BACKWARD = (
    KernelStep(
        "dx, dgamma = rms_norm_backward(dy, x, rstd, gamma)",
        reads=("dy", "x", "rstd", "gamma"),
        writes=("dx", "dgamma"),
    ),
)

#: The residual add fused with the forward kernel (chapter "LayerNorm on a GPU", kernel 4): x and
#: the residual r read once, their sum s (the next residual stream) and y written once.
FUSED_ADD_FORWARD = (
    KernelStep(
        "s = x + r; y, mean, rstd = layer_norm(s, gamma, beta)",
        reads=("x", "r", "gamma", "beta"),
        writes=("s", "y", "mean", "rstd"),
    ),
)

#: The residual add fused with RMSNorm (chapter "LayerNorm on a GPU", kernel 5): as
#: :data:`FUSED_ADD_FORWARD`, with no β and one saved statistic.
FUSED_ADD_RMS_FORWARD = (
    KernelStep(
        "s = x + r; y, rstd = rms_norm(s, gamma)",
        reads=("x", "r", "gamma"),
        writes=("s", "y", "rstd"),
    ),
)

#: The two kernels whose floor chapter 14 measures.
PARTS = ("forward", "backward")
#: The fused kernel of each part.
FUSED_KERNELS = {"forward": FUSED_FORWARD, "backward": FUSED_BACKWARD}
#: The fused RMSNorm kernel of each part (chapter "LayerNorm at the speed of memory").
FUSED_RMS_KERNELS = {"forward": FUSED_RMS_FORWARD, "backward": FUSED_RMS_BACKWARD}
#: The norms :func:`bytes_moved` counts, and their fused kernels.
NORMS = {"layer": FUSED_KERNELS, "rms": FUSED_RMS_KERNELS}

_DTYPES = {
    "float64": np.dtype(np.float64),
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": BFLOAT16,
}


def _steps(steps) -> tuple[KernelStep, ...]:
    steps = tuple(steps)
    for step in steps:
        if not isinstance(step, KernelStep):
            raise TypeError(f"steps must be KernelStep records; got {type(step).__name__}.")
    return steps


def memory_traffic(steps, *, count_parameters: bool = False) -> Traffic:
    """Count the H-vector reads and writes of a LayerNorm program (chapter "Computing it right:
    numerics").

    Parameters
    ----------
    steps : sequence of KernelStep
        The program, e.g. :data:`NAIVE_LAYER_NORM` or :data:`FUSED_WELFORD_LAYER_NORM`.
    count_parameters : bool, default False
        Also count the per-feature arrays (γ, β and their gradients): right for a single row; in a
        batch they are read once and then served from cache.

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
    >>> memory_traffic(FUSED_FORWARD)
    Traffic(reads=1, writes=1)
    """
    free = SCALARS if count_parameters else SCALARS | PER_FEATURE
    reads = writes = 0
    for step in _steps(steps):
        reads += sum(name not in free for name in step.reads)
        writes += sum(name not in free for name in step.writes)
    return Traffic(reads, writes)


def _dtype(dtype) -> np.dtype:
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    if name not in _DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}; got {dtype!r}.")
    return _DTYPES[name]


def program_bytes(steps, rows: int, size: int, dtype="float32") -> Bytes:
    """The bytes a LayerNorm program moves over `rows` rows of `size` features (chapter "LayerNorm
    at the speed of memory").

    Every array a step reads or writes is one transfer, weighed by its size: an activation
    ``rows * size`` values of `dtype`, a per-row statistic ``rows`` values and a per-feature array
    ``size`` values of the compute dtype (float64 for float64 data, float32 otherwise).

    Parameters
    ----------
    steps : sequence of KernelStep
    rows, size : int
        M and H.
    dtype : {"float64", "float32", "float16", "bfloat16"}, default "float32"
        The storage dtype of the activations.

    Returns
    -------
    Bytes

    Examples
    --------
    >>> # H-vector transfers times M·H·w: 12 x 2 x 3 x 4 bytes
    >>> program_bytes(NAIVE_LAYER_NORM, 2, 3).activations
    288
    """
    rows, size = check_count(rows, "rows"), check_count(size, "size")
    storage = _dtype(dtype)
    work = 8 if storage == np.float64 else 4
    activations = per_row = per_feature = 0
    for step in _steps(steps):
        for name in step.reads + step.writes:
            if name in SCALARS:
                per_row += rows * work
            elif name in PER_FEATURE:
                per_feature += size * work
            else:
                activations += rows * size * storage.itemsize
    return Bytes(activations, per_row, per_feature)


def bytes_moved(
    rows: int, size: int, dtype="float32", part: str = "forward", norm: str = "layer"
) -> Bytes:
    """The fewest bytes a LayerNorm kernel moves to and from memory (chapter "LayerNorm at the speed
    of memory").

    The bytes of the fused kernel of `part` (:data:`FUSED_FORWARD`, :data:`FUSED_BACKWARD`).
    Forward: read x, write y (2 activation arrays), write mean and rstd, read γ and β. Backward:
    read x and dy, write dx (3), read mean and rstd and γ, write dγ and dβ. Statistics and
    parameters are float32 for 16-bit storage.

    Parameters
    ----------
    rows : int
        The number of rows normalized (B·T tokens).
    size : int
        H, the features per row.
    dtype : {"float64", "float32", "float16", "bfloat16"}, default "float32"
        The storage dtype of the activations.
    part : {"forward", "backward"}, default "forward"
    norm : {"layer", "rms"}, default "layer"
        LayerNorm, or RMSNorm (:data:`FUSED_RMS_KERNELS`: one saved statistic, rstd, and no β).

    Returns
    -------
    Bytes

    Raises
    ------
    ValueError
        For a count below 1, an unknown dtype, part or norm.

    Examples
    --------
    >>> # x and y, mean and rstd per row, gamma and beta per feature:
    >>> # 2 x 4096 x 1024 x 4 + 2 x 4096 x 4 + 2 x 1024 x 4
    >>> bytes_moved(4096, 1024).total
    33595392
    """
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}; got {part!r}.")
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {tuple(NORMS)}; got {norm!r}.")
    return program_bytes(NORMS[norm][part], rows, size, dtype)
