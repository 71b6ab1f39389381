"""Memory traffic of a LayerNorm kernel, counted step by step (chapter "Computing it right: numerics").

LayerNorm does a handful of flops per number it touches, so on a GPU its
speed is set by how many times whole H-vectors travel between memory and the
chip, not by arithmetic. A program is a sequence of :class:`KernelStep`; each
step reads and writes named arrays, and :func:`memory_traffic` counts the
transfers of H-vectors (one per activation-sized array read or written).
Scalars per row (the mean, the variance) cost nothing worth counting; gamma
and beta are shared by every row of a batch, so they stay in cache after the
first row and are counted only on request.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KernelStep", "Traffic", "NAIVE_LAYER_NORM", "FUSED_WELFORD_LAYER_NORM", "SCALARS", "PARAMETERS", "memory_traffic"]

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
    KernelStep("y = (x - mean) * rstd * gamma + beta", reads=("x", "mean", "rstd", "gamma", "beta"), writes=("y",)),
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
