"""lnlib.book.experiments.memory_traffic: the one memory-traffic model of chapters 13 and 14.

Expected counts are written out by hand from each program's steps; the bytes are checked against
the H-vector count times M·H·w (the model's one rule) and against hand sums.
"""

import numpy as np
import pytest

from lnlib.book.experiments import memory_speed, memory_traffic
from lnlib.book.experiments.memory_traffic import (
    FUSED_BACKWARD,
    FUSED_FORWARD,
    FUSED_WELFORD_LAYER_NORM,
    NAIVE_LAYER_NORM,
    KernelStep,
    Traffic,
    bytes_moved,
    program_bytes,
)
from lnlib.book.experiments.memory_traffic import (
    memory_traffic as count,
)

PROGRAMS = {
    "naive": NAIVE_LAYER_NORM,
    "fused Welford": FUSED_WELFORD_LAYER_NORM,
    "fused forward": FUSED_FORWARD,
    "fused backward": FUSED_BACKWARD,
}


def test_h_vector_transfers_counted_by_hand():
    # naive: x read twice, d twice, sq, xhat, scaled once each (7 reads); d, sq, xhat, scaled, y
    # written
    assert count(NAIVE_LAYER_NORM) == Traffic(7, 5)
    assert count(FUSED_WELFORD_LAYER_NORM) == Traffic(2, 1)  # x twice, y once
    assert count(FUSED_FORWARD) == Traffic(1, 1)  # a row kept on chip: x once, y once
    assert count(FUSED_BACKWARD) == Traffic(2, 1)  # x and dy, dx
    # for one row, gamma and beta (and their gradients) are H-vectors too
    assert count(NAIVE_LAYER_NORM, count_parameters=True) == Traffic(9, 5)
    assert count(FUSED_BACKWARD, count_parameters=True) == Traffic(3, 3)


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("dtype, itemsize", [("float64", 8), ("float32", 4), ("bfloat16", 2)])
def test_activation_bytes_are_h_vector_transfers_times_m_h_w(name, dtype, itemsize):
    rows, size = 6, 10
    moved = program_bytes(PROGRAMS[name], rows, size, dtype)
    assert moved.activations == count(PROGRAMS[name]).total * rows * size * itemsize


def test_statistics_and_parameters_weigh_rows_and_features():
    rows, size = 5, 7
    # naive: mean, var, std each written once and read once (6 x M floats); gamma, beta read once
    naive = program_bytes(NAIVE_LAYER_NORM, rows, size)
    assert (naive.per_row, naive.per_feature) == (6 * rows * 4, 2 * size * 4)
    # float64 data keeps float64 statistics; 16-bit data float32 ones
    assert program_bytes(NAIVE_LAYER_NORM, rows, size, "float64").per_row == 6 * rows * 8
    assert program_bytes(NAIVE_LAYER_NORM, rows, size, "float16").per_row == 6 * rows * 4


def test_bytes_moved_is_the_fused_kernels_bytes_summed_by_hand():
    m, h = 4096, 1024
    assert bytes_moved(m, h).total == 2 * m * h * 4 + 2 * m * 4 + 2 * h * 4 == 33595392
    back = bytes_moved(m, h, "bfloat16", "backward")
    assert (back.activations, back.per_row, back.per_feature) == (
        3 * m * h * 2,
        2 * m * 4,
        3 * h * 4,
    )
    assert bytes_moved(3, 5, np.float64).total == 2 * 3 * 5 * 8 + 2 * 3 * 8 + 2 * 5 * 8


def test_refusals():
    with pytest.raises(TypeError, match="KernelStep"):
        count([("x",)])
    with pytest.raises(TypeError, match="KernelStep"):
        program_bytes(["y = x"], 1, 1)
    with pytest.raises(ValueError, match="part must be one of"):
        bytes_moved(1, 1, part="sideways")
    with pytest.raises(ValueError, match="dtype must be one of"):
        bytes_moved(1, 1, "int8")
    with pytest.raises(ValueError):
        bytes_moved(0, 4)


def test_a_new_program_counts_as_the_rule_says():
    two_pass = (
        KernelStep("mean = sum(x) / H", ("x",), ("mean",)),
        KernelStep("var = sum((x - mean)**2) / H", ("x", "mean"), ("var",)),
        KernelStep(
            "y = (x - mean) / sqrt(var + eps) * gamma + beta",
            ("x", "mean", "var", "gamma", "beta"),
            ("y",),
        ),
    )
    assert count(two_pass).total == 4
    assert program_bytes(two_pass, 2, 3).total == 4 * 2 * 3 * 4 + 5 * 2 * 4 + 2 * 3 * 4


def test_chapter_13s_old_import_path_is_the_same_model():
    """Chapter 13 and its exercises import these names from memory_speed; they are this module's."""
    for name in (
        "KernelStep",
        "Traffic",
        "NAIVE_LAYER_NORM",
        "FUSED_WELFORD_LAYER_NORM",
        "SCALARS",
        "PARAMETERS",
        "memory_traffic",
        "PARTS",
        "Bytes",
        "bytes_moved",
    ):
        assert getattr(memory_speed, name) is getattr(memory_traffic, name), name


def test_the_fused_residual_add_reads_two_arrays_and_writes_two():
    """Chapter "LayerNorm on a GPU", kernel 4: x and r in, s = x + r and y out (γ, β and the
    statistics are per-feature or per-row, not counted)."""
    from lnlib.book.experiments.memory_traffic import FUSED_ADD_FORWARD, Traffic, memory_traffic

    assert memory_traffic(FUSED_ADD_FORWARD) == Traffic(reads=2, writes=2)


def test_rms_norm_bytes_are_layer_norms_less_one_statistic_and_beta():
    """Chapter "LayerNorm at the speed of memory": an RMSNorm kernel moves the same activations as
    LayerNorm's (the same floor), one saved statistic (rstd) instead of two, and no β or dβ."""
    m, h = 4096, 1024
    for dtype, w in (("float32", 4), ("bfloat16", 2)):
        fwd = bytes_moved(m, h, dtype, "forward", norm="rms")
        assert (fwd.activations, fwd.per_row, fwd.per_feature) == (2 * m * h * w, m * 4, h * 4)
        bwd = bytes_moved(m, h, dtype, "backward", norm="rms")
        assert (bwd.activations, bwd.per_row, bwd.per_feature) == (3 * m * h * w, m * 4, 2 * h * 4)
        for part in ("forward", "backward"):
            layer = bytes_moved(m, h, dtype, part)
            assert layer.activations == bytes_moved(m, h, dtype, part, norm="rms").activations
    with pytest.raises(ValueError, match="norm must be one of"):
        bytes_moved(m, h, norm="batch")
