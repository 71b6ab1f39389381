"""Chapter 15's exercises (chapters/15_gpu.ipynb): a kernel's bytes per element, and what fusing
saves."""

from __future__ import annotations

from lnlib.book.exercises.chapter import Exercises
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.experiments.gpu import KERNEL_COUNTS, itemsize

BACKWARD = next(k for k in KERNEL_COUNTS if k.name.startswith("LayerNorm backward"))
FUSED_ADD = next(k for k in KERNEL_COUNTS if "residual" in k.name)


def backward_bytes() -> Exercise:
    """Exercise 1: bytes per element of x the backward's stage 1 must move in float16, at the
    floor."""
    width = itemsize("float16")
    return Exercise(
        BACKWARD.floor_bytes(width),
        hint="Count the activation-sized arrays the backward reads and writes once each "
        "(not γ, the statistics or the partial sums: those are per row or per feature), "
        "times the bytes one float16 value takes.",
        mistakes={
            "that is with 4-byte values: float16 stores 2 bytes a value": BACKWARD.floor_bytes(4),
            "that counts every sweep of the source from memory; at the floor the later "
            "sweeps' x and dy come from the cache": BACKWARD.worst_bytes(width),
            "that counts two arrays: the backward reads x and dy and writes dx": 2 * width,
        },
    )


def fusion_saving() -> Exercise:
    """Exercise 2: bytes per element saved in float16 by fusing the residual add into the
    LayerNorm."""
    width = itemsize("float16")
    unfused = 3 * width + 2 * width  # add: read x and r, write s; norm: read s, write y
    fused = FUSED_ADD.floor_bytes(width)
    return Exercise(
        unfused - fused,
        hint="Count each kernel's arrays at the floor: the add kernel alone, then the "
        "norm kernel alone, then kernel 4, which does both; s must still be written, "
        "because the next block adds to it.",
        mistakes={
            "that is the fused kernel's own traffic; the question asks what it saves": fused,
            "that is the two separate kernels' traffic; subtract the fused kernel's": unfused,
            "that saves the write of s as well; the residual stream needs s stored": 2 * width,
            "that is the ratio of the traffics; the question asks for bytes": unfused / fused,
            f"that counts the arrays saved; the question asks for bytes: times the {width} "
            "bytes of a float16 value": (unfused - fused) // width,
            f"that is with 4-byte values: float16 stores {width} bytes a value": (
                (unfused - fused) // width * 4
            ),
            "that counts the two separate kernels' arrays, in arrays rather than bytes; "
            "subtract the fused kernel's, then count bytes": unfused // width,
            "that counts the fused kernel's arrays; the question asks for the bytes it saves": (
                fused // width
            ),
        },
    )


exercises = Exercises("15_gpu", backward_bytes, fusion_saving)
