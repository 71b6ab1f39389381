"""lnlib.fused and lnlib.book.experiments.memory_speed (chapter "LayerNorm at the speed of memory").

The compiled kernels are checked against lnlib's float64 reference with the
kernel-check harness over shapes, dtypes and edge cases, and against PyTorch
where installed; without numba those tests skip with the reason. The same
kernels run uncompiled everywhere, and one test proves lnlib and the chapter
work with numba unavailable. No test times anything.
"""

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from lnlib import fused
from lnlib.backward import layer_norm_backward
from lnlib.book.experiments.memory_speed import (
    Bytes,
    bytes_moved,
    copy_bandwidth,
    copy_bandwidths,
    floor_seconds,
    fraction_of_floor,
    timings,
)
from lnlib.forward import layer_norm
from lnlib.harness import CASES, Case, check_layer_norm

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "chapters" / "14_memory_speed.ipynb"
NUMBA_MISSING = (
    "numba is not installed, so the compiled kernels are not tested; "
    'install it with pip install "lnlib[kernels]"'
)

#: More shapes and edge cases than the harness's defaults: odd and large H, one row, many rows, huge
#: offsets.
WIDE_CASES = (
    *CASES,
    Case("one row, H = 4099", (1, 4099)),
    Case("257 rows, H = 7", (257, 7)),
    Case("offset 10^4, H = 1024", (16, 1024), offset=1e4),
    Case("constant rows, H = 1024", (8, 1024), offset=-7.5, spread=0.0),
    Case("3-D (2, 5, 96)", (2, 5, 96), offset=3.0, spread=2.0),
)


@pytest.fixture(scope="module")
def numba():
    return pytest.importorskip("numba", reason=NUMBA_MISSING)


def forward_of(compiled, statistics="two_pass"):
    return lambda x, g, b, eps: fused.fused_layer_norm(
        x, g, b, eps, statistics=statistics, compiled=compiled
    )[0]


def backward_of(compiled):
    return lambda dy, x, g, eps: fused.fused_layer_norm_backward(
        dy, x, g, eps=eps, compiled=compiled
    )


@pytest.mark.parametrize("statistics", fused.STATISTICS)
def test_compiled_kernels_pass_the_harness_over_shapes_dtypes_and_edge_cases(numba, statistics):
    report = check_layer_norm(forward_of(True, statistics), backward_of(True), cases=WIDE_CASES)
    assert report.passed, str(report)
    pairs = sum(4 if case.dtypes is None else len(case.dtypes) for case in WIDE_CASES)
    assert (
        len(report.results) == 2 * pairs + 2
    )  # and the rounding-bias checks of float16 and bfloat16
    huge = (
        Case("offset 10^6", (4, 256), offset=1e6, spread=10.0),
    )  # beyond float16's range (65504)
    report = check_layer_norm(
        forward_of(True, statistics), backward_of(True), cases=huge, dtypes=("float64", "float32")
    )
    assert report.passed, str(report)


def test_uncompiled_kernels_pass_the_harness_without_numba():
    report = check_layer_norm(forward_of(False), backward_of(False))
    assert report.passed, str(report)


def test_saved_statistics_are_the_references_in_float32_for_half_storage(numba):
    rng = np.random.default_rng(1)
    x64 = 50 + 3 * rng.normal(size=(33, 300))
    for dtype in ("float32", "float16", ml_dtypes.bfloat16):
        x = x64.astype(dtype)
        _, mean, rstd = fused.fused_layer_norm(x, eps=1e-5)
        assert mean.dtype == rstd.dtype == np.float32
        _, ref_mean, ref_rstd = layer_norm(x.astype(np.float64), eps=1e-5, return_stats=True)
        np.testing.assert_allclose(mean, ref_mean[:, 0], rtol=300 * 2**-24)
        np.testing.assert_allclose(rstd, ref_rstd[:, 0], rtol=300 * 2**-23)


def test_more_threads_give_the_same_answer_within_rounding(numba):
    rng = np.random.default_rng(2)
    x, dy = (
        rng.normal(size=(2001, 64)).astype(np.float32),
        rng.normal(size=(2001, 64)).astype(np.float32),
    )  # above PARALLEL_MIN_ELEMENTS
    runs = []
    for count in (1, numba.config.NUMBA_NUM_THREADS):
        fused.set_threads(count)
        runs.append((fused.fused_layer_norm(x)[0], *fused.fused_layer_norm_backward(dy, x)))
    fused.set_threads(numba.config.NUMBA_NUM_THREADS)
    np.testing.assert_array_equal(runs[0][0], runs[1][0])  # rows are independent: bit-identical
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    reference = layer_norm_backward(dy.astype(np.float64), x.astype(np.float64))
    for one, many, ref in zip(
        runs[0][2:], runs[1][2:], reference[1:]
    ):  # dγ, dβ: partial sums merged in another order
        np.testing.assert_allclose(one, ref, rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(many, ref, rtol=1e-4, atol=1e-3)


def test_16_bit_decoding_and_rounding_match_numpy_on_every_float16_and_bfloat16_value(numba):
    every = np.arange(2**16, dtype=np.uint16)
    buffer = np.empty(every.size, dtype=np.float32)
    store_float16 = fused._make_store_float16(numba.njit(fused._float16_bits))
    for storage, load, store in (
        (np.float16, fused._load_float16, store_float16),
        (ml_dtypes.bfloat16, fused._load_bfloat16, fused._store_bfloat16),
    ):
        decoded = numba.njit(load)(every, buffer).copy()
        expected = every.view(storage).astype(np.float32)
        np.testing.assert_array_equal(
            decoded.view(np.uint32)[np.isfinite(expected)],
            expected.view(np.uint32)[np.isfinite(expected)],
        )
        assert np.isnan(decoded[np.isnan(expected)]).all()
        rng = np.random.default_rng(
            3
        )  # float32 values of every scale, and halfway ties, rounded back
        finite = np.sort(decoded[np.isfinite(decoded)].astype(np.float64))
        values = np.concatenate(
            [
                rng.normal(size=20000) * 10.0 ** rng.uniform(-9, 6, 20000),
                finite,
                (finite[:-1] + finite[1:]) / 2,
            ]
        ).astype(np.float32)  # every value and every halfway tie
        out = np.empty(values.size, dtype=np.uint16)
        numba.njit(store)(out, values.copy())
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out, values.astype(storage).view(np.uint16))


def test_matches_pytorch_forward_and_autograd_backward(numba, torch):
    rng = np.random.default_rng(4)
    x, dy = rng.normal(size=(64, 768)) * 2 + 1, rng.normal(size=(64, 768))
    gamma, beta = 1 + 0.3 * rng.normal(size=768), 0.3 * rng.normal(size=768)
    for dtype, tdtype, tol in (
        ("float32", torch.float32, 1e-5),
        ("bfloat16", torch.bfloat16, 2e-2),
    ):
        xs, dys = (
            x.astype(np.float32).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype),
            dy.astype(np.float32),
        )
        tx = torch.tensor(xs.astype(np.float32), dtype=tdtype, requires_grad=True)
        tg, tb = (
            torch.tensor(gamma, dtype=torch.float32, requires_grad=True),
            torch.tensor(beta, dtype=torch.float32, requires_grad=True),
        )
        ty = torch.nn.functional.layer_norm(tx, (768,), tg, tb, eps=1e-5)
        ty.backward(torch.tensor(dys, dtype=tdtype))
        y, mean, rstd = fused.fused_layer_norm(xs, gamma, beta, 1e-5)
        dx, dgamma, dbeta = fused.fused_layer_norm_backward(
            dys.astype(xs.dtype), xs, gamma, mean, rstd
        )
        for ours, theirs in ((y, ty.detach()), (dx, tx.grad), (dgamma, tg.grad), (dbeta, tb.grad)):
            np.testing.assert_allclose(
                ours.astype(np.float64), theirs.float().numpy(), rtol=tol, atol=tol * 30
            )


def test_add_layer_norm_matches_pytorch_add_then_layer_norm(numba, torch):
    rng = np.random.default_rng(4)
    x, residual = (rng.normal(size=(64, 256)).astype(np.float32) for _ in range(2))
    gamma, beta = (
        rng.uniform(0.5, 1.5, 256).astype(np.float32),
        rng.normal(size=256).astype(np.float32),
    )
    y, s, _, _ = fused.fused_add_layer_norm(x, residual, gamma, beta)
    ts = torch.from_numpy(x) + torch.from_numpy(residual)
    theirs = torch.nn.functional.layer_norm(
        ts, (256,), torch.from_numpy(gamma), torch.from_numpy(beta)
    )
    np.testing.assert_array_equal(s, ts.numpy())
    np.testing.assert_allclose(y, theirs.numpy(), rtol=1e-5, atol=1e-5)


def test_bad_inputs_get_clear_errors():
    with pytest.raises(TypeError, match="float64, float32, float16 or bfloat16"):
        fused.fused_layer_norm(np.arange(4), compiled=False)
    with pytest.raises(ValueError, match=r"gamma must have shape \(4,\)"):
        fused.fused_layer_norm(np.ones((2, 4)), gamma=np.ones(3), compiled=False)
    with pytest.raises(ValueError, match="statistics must be one of"):
        fused.fused_layer_norm(np.ones((2, 4)), statistics="one_pass", compiled=False)
    with pytest.raises(ValueError, match=r"dy must have the shape of x, \(2, 5\); got \(2, 4\)"):
        fused.fused_layer_norm_backward(np.ones((2, 4)), np.ones((2, 5)), compiled=False)


def test_lnlib_and_the_chapter_work_without_numba():
    """numba made unimportable: lnlib, its explorers and every code cell of the chapter run; the
    kernels say how to install it."""
    script = textwrap.dedent(f"""
        import json, sys
        sys.modules["numba"] = None  # import numba now raises ImportError
        import matplotlib
        matplotlib.use("Agg")
        import lnlib, lnlib.book.explorers
        from lnlib import fused
        assert not fused.numba_available()
        try:
            fused.fused_layer_norm(__import__("numpy").ones((2, 3)))
        except ImportError as exc:
            assert 'pip install "lnlib[kernels]"' in str(exc), exc
        else:
            raise AssertionError("no ImportError without numba")
        cells = json.load(open({str(CHAPTER)!r}))["cells"]
        namespace = {{}}
        for cell in cells:
            if cell["cell_type"] == "code":
                exec("".join(cell["source"]), namespace)
        print("ran", sum(c["cell_type"] == "code" for c in cells), "cells")
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=CHAPTER.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1].startswith("ran ")


def test_bytes_moved_counts_each_array_once():
    f32 = bytes_moved(4096, 1024, "float32", "forward")
    assert f32 == Bytes(
        activations=2 * 4096 * 1024 * 4, per_row=2 * 4096 * 4, per_feature=2 * 1024 * 4
    )
    b16 = bytes_moved(10, 64, "bfloat16", "backward")
    assert b16 == Bytes(activations=3 * 10 * 64 * 2, per_row=2 * 10 * 4, per_feature=3 * 64 * 4)
    assert bytes_moved(1, 8, "float64").per_row == 16
    assert floor_seconds(f32, 1e9) == f32.total / 1e9
    assert fraction_of_floor(2 * floor_seconds(1000, 1e9), 1000, 1e9) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="dtype must be one of"):
        bytes_moved(1, 8, "int8")
    with pytest.raises(ValueError, match="part must be one of"):
        bytes_moved(1, 8, part="both")
    with pytest.raises(ValueError, match="bandwidth must be a positive"):
        floor_seconds(8, 0)


def test_copy_bandwidth_and_timings_return_every_repetition():
    seconds = timings(lambda: None, repeats=4)
    assert seconds.shape == (4,) and (seconds >= 0).all()
    for threads in (1, 2):
        rates = copy_bandwidth(2**16, threads=threads, repeats=3, min_seconds=0)
        assert rates.shape == (3,) and (rates > 0).all()
    with pytest.raises(ValueError, match="store must be one of"):
        copy_bandwidth(2**16, store="streaming")


def test_interleaved_timings_alternate_the_calls_so_that_they_share_the_load():
    from lnlib.book.experiments.memory_speed import interleaved_timings

    order = []
    seconds = interleaved_timings([lambda: order.append("a"), lambda: order.append("b")], repeats=4)
    assert [t.shape for t in seconds] == [(4,), (4,)] and all((t >= 0).all() for t in seconds)
    assert order == ["a", "b"] + ["a", "b"] * 4  # one warm-up call each, then in turn
    slow_and_fast = interleaved_timings(
        [lambda: time.sleep(0.002), lambda: None], repeats=2, min_seconds=0.01, max_repeats=50
    )
    assert slow_and_fast[0].size < slow_and_fast[1].size == 50  # each call keeps its own count
    rates = copy_bandwidths(2**16, stores=("memcpy",), repeats=3, min_seconds=0)
    assert set(rates) == {"memcpy"} and rates["memcpy"].shape == (3,)


def test_the_ordinary_copy_copies_with_ordinary_vector_stores(numba):
    """The floor's second copy: no call to memcpy, no non-temporal store, every element copied."""
    from lnlib.book.experiments.memory_speed import ordinary_copy

    source = np.random.default_rng(3).normal(size=1001).astype(np.float32)
    for parallel, chunks in ((False, 1), (True, 2)):
        copy = ordinary_copy(parallel)
        target = np.zeros_like(source)
        copy(source, target, np.float32(1), chunks)
        np.testing.assert_array_equal(target, source)
        assembly = copy.inspect_asm(copy.signatures[0]).lower()
        assert "memcpy" not in assembly and "memmove" not in assembly
        assert "movnt" not in assembly  # movntps, movntdq: the streaming stores memcpy uses
        assert re.search(r"v?movup[sd]\s+%[xyz]mm\d+, -?\d*\(", assembly)  # whole-vector stores
        assert "extractps" not in assembly  # not element by element
        assert (
            "vmulps" in assembly or "mulps" in assembly
        )  # the multiplication by a run-time 1 was kept
    for threads in (1, 2):
        rates = copy_bandwidth(2**16, threads=threads, repeats=3, min_seconds=0, store="ordinary")
        assert rates.shape == (3,) and (rates > 0).all()


def test_results_keep_both_copies_and_preallocated_runs_apart():
    """KernelResults on a small made-up file: each copy's floor, fresh and preallocated entries, old
    files."""
    from lnlib.book.experiments.memory_speed import KernelResults

    def copy(store, size, rate):
        return {
            "store": store,
            "bytes": size,
            "threads": 1,
            "median_bytes_per_s": rate,
            "p10_bytes_per_s": rate,
            "p90_bytes_per_s": rate,
            "repetitions": 5,
        }

    def timed(output, seconds):
        return {
            "implementation": "fused (numba)",
            "part": "forward",
            "dtype": "float32",
            "rows": 10,
            "size": 64,
            "threads": 1,
            "output": output,
            "bytes": 6000,
            "median_s": seconds,
        }

    data = {
        "machine": {"glibc": {"non_temporal_threshold": 3 * 2**20}},
        "copy": [
            copy("memcpy", 2**20, 9.0),
            copy("memcpy", 2**22, 6.0),
            copy("ordinary", 2**22, 4.0),
            copy("ordinary", 2**20, 8.0),
        ],
        "kernels": [timed("fresh", 2e-6)],
        "preallocated": [timed("preallocated", 1e-6)],
    }
    results = KernelResults(data)
    assert results.stores == ("memcpy", "ordinary") and results.non_temporal_threshold == 3 * 2**20
    assert results.memory_bandwidth(1) == 6.0 and results.memory_bandwidth(1, "ordinary") == 4.0
    assert results.copy_curve(1, "ordinary")[1].tolist() == [8.0, 4.0]
    fresh = results.point("fused (numba)", "forward", "float32", 1, 10, 64)
    kept = results.point("fused (numba)", "forward", "float32", 1, 10, 64, output="preallocated")
    assert fresh["median_s"] == 2e-6 and kept["median_s"] == 1e-6
    assert results.fraction(fresh) == pytest.approx(6000 / 6.0 / 2e-6)
    assert results.fraction(kept, "ordinary") == pytest.approx(6000 / 4.0 / 1e-6)
    older = KernelResults(
        {
            "machine": {},
            "copy": [{k: v for k, v in copy("memcpy", 2**20, 9.0).items() if k != "store"}],
            "kernels": [],
        }
    )
    assert (
        older.stores == ("memcpy",)
        and older.preallocated == []
        and older.non_temporal_threshold is None
    )
    with pytest.raises(ValueError, match="no ordinary copy"):
        older.memory_bandwidth(1, "ordinary")


def test_far_from_neighbours_flags_a_lone_dip_or_peak_not_a_trend_nor_an_end():
    """KernelResults.far_from_neighbours on made-up series: a point off both neighbours by over the
    factor."""
    from lnlib.book.experiments.memory_speed import KernelResults

    def timed(rows, seconds):
        return {
            "implementation": "fused (numba)",
            "part": "forward",
            "dtype": "float32",
            "rows": rows,
            "size": 64,
            "threads": 1,
            "bytes": 1000 * rows,
            "median_s": seconds,
        }

    # achieved bytes/s along the rows: 1000, 10000, 1000 (a peak), 1000, 100 (an end), then a trend
    times = {1: 1.0, 10: 1.0, 100: 100.0, 1000: 1000.0, 10000: 100000.0}
    results = KernelResults({"copy": [], "kernels": [timed(r, t) for r, t in times.items()]})
    assert [
        k["rows"] for k in results.far_from_neighbours("fused (numba)", "forward", size=64)
    ] == [10]
    assert results.far_from_neighbours("fused (numba)", "forward", size=64, factor=20) == []
    dip = KernelResults(
        {"copy": [], "kernels": [timed(1, 1.0), timed(10, 40.0), timed(100, 100.0)]}
    )
    assert [k["rows"] for k in dip.far_from_neighbours("fused (numba)", "forward", size=64)] == [10]
    trend = KernelResults({"copy": [], "kernels": [timed(r, 1.0) for r in (1, 10, 100, 1000)]})
    assert trend.far_from_neighbours("fused (numba)", "forward", size=64) == []
    with pytest.raises(ValueError, match="factor must be above 1"):
        trend.far_from_neighbours("fused (numba)", "forward", size=64, factor=1)


def test_copy_buffers_start_on_a_page():
    from lnlib.book.experiments.memory_speed import PAGE, page_aligned

    for count, dtype in ((1, np.float64), (1001, np.float32), (2**14, np.float64)):
        array = page_aligned(count, dtype)
        assert array.ctypes.data % PAGE == 0 and array.shape == (count,) and array.dtype == dtype


def test_the_chapter_figures_read_cleanly():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lnlib.book.experiments.memory_speed import KernelResults
    from lnlib.book.figures.memory_speed import cliff_figure, copy_figure, speed_figure
    from lnlib.book.figures.style import layout_problems

    results = KernelResults.load()
    for fig in (
        copy_figure(results),
        speed_figure(results, "forward"),
        speed_figure(results, "backward"),
        cliff_figure(results),
    ):
        assert layout_problems(fig) == []
        assert all(ax.get_xlabel() for ax in fig.axes if ax.get_visible() and ax.lines)
        plt.close(fig)


def test_committed_benchmark_results_describe_their_machine_and_cover_the_sweeps():
    results = json.loads((ROOT / "lnlib" / "book" / "data" / "kernels.json").read_text())
    assert {"cpu", "cores", "versions"} <= set(results["machine"])
    assert {"start", "end"} == set(results["load_average"])
    sizes = {k["size"] for k in results["kernels"]}
    rows = {k["rows"] for k in results["kernels"]}
    assert min(sizes) == 64 and max(sizes) == 16384 and min(rows) == 1 and max(rows) == 100000
    for entry in results["kernels"] + results["preallocated"]:
        assert entry["p10_s"] <= entry["median_s"] <= entry["p90_s"] and entry["repetitions"] >= 3
        assert (
            entry["bytes"]
            == bytes_moved(entry["rows"], entry["size"], entry["dtype"], entry["part"]).total
        )
    assert {c["store"] for c in results["copy"]} == {"memcpy", "ordinary"}
    fresh = {
        (k["implementation"], k["part"], k["rows"], k["size"])
        for k in results["kernels"]
        if k["implementation"] == "fused (numba)" and k["dtype"] == "float32" and k["threads"] == 1
    }
    kept = {
        (k["implementation"], k["part"], k["rows"], k["size"])
        for k in results["preallocated"]
        if k["implementation"] == "fused (numba)"
    }
    assert kept == fresh  # every fused float32 shape timed both ways
    # PyTorch's native_layer_norm.out is its fresh-output kernel plus copy_: never timed as
    # preallocated
    assert {k["implementation"] for k in results["preallocated"]} == {"fused (numba)"}
    assert results["machine"]["glibc"]["mmap_threshold_max"] == 32 * 2**20
    # on all cores each thread's memcpy copies its own piece: the largest piece must stream too
    threshold = results["machine"]["glibc"]["non_temporal_threshold"]
    cores = max(c["threads"] for c in results["copy"])
    largest = max(c["bytes"] for c in results["copy"] if c["threads"] == cores)
    assert largest / cores > threshold


def test_the_explorer_shows_the_model_floor_and_the_committed_measurements():
    from lnlib.book.experiments.memory_speed import KernelResults
    from lnlib.book.explorers import memory_speed_explorer

    results = KernelResults.load()
    explorer = memory_speed_explorer(rows=1000, size=1024, dtype="float32")
    floors, points = explorer.result["floors"], explorer.result["points"]
    expected = 2 * 1000 * 1024 * 4 + 2 * 1000 * 4 + 2 * 1024 * 4  # x, y; mean, rstd; gamma, beta
    assert floors["forward", 1] == pytest.approx(expected / results.memory_bandwidth(1, "ordinary"))
    fused_point = points["forward", "fused (numba)", 1]
    assert fused_point == results.point("fused (numba)", "forward", "float32", 1, 1000, 1024)
    assert f"{results.fraction(fused_point, 'ordinary'):.2f}×" in explorer.readout.value
    assert (
        "the speed as a multiple of the floor's" in explorer.readout.value
    )  # a speed ratio, said once
    # faster than the floor somewhere at this shape (the data fit in cache): the note says why
    # (learner B, 2026-11-30: "beats its own floor without explanation")
    beaten = any(results.fraction(p, "ordinary") > 1 for p in points.values())
    assert beaten == ("Faster than the floor" in explorer.note.value), explorer.note.value
    explorer.controls["rows"].value = 10000  # 80 MB read and written: past the caches, no note
    assert not any(results.fraction(p, "ordinary") > 1 for p in explorer.result["points"].values())
    assert not explorer.note.value
    explorer.controls["rows"].value = 100000
    explorer.controls[
        "size"
    ].value = 16384  # over the benchmark's 2^24 elements: the model only, with a note
    assert not explorer.result["points"] and "Not measured" in explorer.note.value
    with pytest.raises(ValueError, match="rows must be one of"):
        memory_speed_explorer(rows=7)
