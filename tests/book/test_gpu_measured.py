"""What `make bench-gpu` measured on a GPU (lnlib/book/data/gpu_kernels.json, gpu_checks.json),
and what chapter "LayerNorm on a GPU" says of it.

The files are a stored run; these tests recompute every derived number from its raw fields (times,
shapes, the copy), check the run is what the chapter says it is (a GPU, not the simulator or a
smoke run), and hold each sentence of the chapter's § "Timing on a GPU" to the data. The scripts
themselves run on numba's simulator in tests/book/test_gpu_chapter.py.
"""

import pytest

from lnlib.book.experiments.gpu import (
    COMPARED,
    FLOOR_SHAPE,
    H200_SPEC,
    GpuResults,
    measured_findings,
)
from lnlib.book.figures.gpu import timing_figure
from lnlib.book.figures.style import layout_problems

RESULTS = GpuResults()
DATA, CHECKS = RESULTS.data, RESULTS.checks
#: Activation-sized arrays, float32 statistics a row, float32 vectors of H at each part's floor:
#: benchmarks/gpu_kernels.py's table, restated so that each entry's bytes and fraction are
#: recomputed here from it and the raw times.
FLOOR = {
    "forward": (2, 2, 2),
    "backward": (3, 2, 3),
    "residual add": (4, 2, 2),
    "add + RMSNorm": (4, 1, 1),
    "RMSNorm backward": (3, 1, 2),
}


def fraction(e: dict, copy: dict) -> float:
    width = 4 if e["dtype"] == "float32" else 2
    arrays, stats, vectors = FLOOR[e["part"]]
    moved = (arrays * width * e["size"] + stats * 4) * e["rows"] + vectors * 4 * e["size"]
    assert e["bytes"] == moved
    copied = 2 * e["rows"] * e["size"] * width
    return (moved / e["median_s"]) / (copied / copy["median_s"])


def copy_of(e: dict) -> dict:
    return RESULTS.entry("device-to-device copy", "copy", e["dtype"], (e["rows"], e["size"]))


def test_the_stored_run_is_one_on_a_gpu():
    machine = DATA["machine"]
    assert not DATA["smoke"] and not machine["numba_simulator"]
    assert machine["gpu"] == "NVIDIA H200" and machine["driver"] and machine["cuda"]
    assert DATA["failed"] == []
    assert DATA["absent"] == ["numba kernels in bfloat16: numba has no bfloat16 array type"]
    assert CHECKS["machine"]["gpu"] == machine["gpu"] and not CHECKS["smoke"]
    shapes = {(e["rows"], e["size"]) for e in RESULTS.entries()}
    assert FLOOR_SHAPE in shapes and (4096, 1024) in shapes and len(shapes) == 7


def test_each_fraction_is_its_floor_bytes_per_second_over_the_copys():
    for e in RESULTS.entries():
        if e["part"] != "copy":
            assert e["fraction_of_copy"] == pytest.approx(fraction(e, copy_of(e)), rel=1e-9)
            assert e["p10_s"] <= e["median_s"] <= e["p90_s"]


def test_every_output_agreed_with_pytorchs():
    """A wrong kernel is off by O(1); rounding stays within a few units of the stored dtype."""
    budget = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-1}
    for e in RESULTS.entries():
        if e["part"] != "copy":
            assert e["max_abs_diff_vs_torch"] <= budget[e["dtype"]], e


def test_the_findings_are_recomputed_from_the_raw_times():
    found = {k: str(v) for k, v in measured_findings(RESULTS).items()}

    def time(part, label):
        return RESULTS.entry(COMPARED[part][label], part, "float16")["median_s"]

    copy = RESULTS.entry("device-to-device copy", "copy", "float16")
    rows, size = FLOOR_SHAPE
    rate = 2 * rows * size * 2 / copy["median_s"]
    assert found["copy_tbs"] == f"{rate / 1e12:.1f}"
    assert found["copy_of_spec"] == f"{100 * rate / H200_SPEC['bandwidth']:.0f}"
    assert found["us_k3"] == f"{time('forward', 'kernel 3, warp per row') * 1e6:.0f}"
    k3_over_triton = time("forward", "kernel 3, warp per row") / time("forward", "Triton, tutorial")
    assert found["k3_over_triton"] == f"{k3_over_triton:.1f}"
    k5 = time("add + RMSNorm", "kernel 5, fused")
    assert found["k5_over_torch"] == f"{k5 / time('add + RMSNorm', 'PyTorch add, rms_norm'):.1f}"
    assert found["k5_over_k4"] == f"{k5 / time('residual add', 'kernel 4, fused'):.2f}"
    backward = time("backward", "two-stage backward")
    assert found["bwd_over_torch"] == f"{backward / time('backward', 'PyTorch autograd'):.0f}"
    rms = time("RMSNorm backward", "two-stage backward")
    assert found["rmsbwd_over_bwd"] == f"{rms / backward:.2f}"
    assert found["gpu_machine"] == "NVIDIA H200 (driver 580.159.04; PyTorch's CUDA 13.0)"
    widest = max(
        (e["p90_s"] - e["p10_s"]) / e["median_s"]
        for e in RESULTS.entries()
        if (e["rows"], e["size"]) == FLOOR_SHAPE
    )
    assert int(found["spread"]) - 1 < 100 * widest <= int(found["spread"])  # "no wider than"


def test_what_the_chapter_says_of_the_times_holds():
    def frac(part, label, dtype="float16"):
        return RESULTS.entry(COMPARED[part][label], part, dtype)["fraction_of_copy"]

    for dtype in ("float32", "float16"):
        # "A library kernel runs near the copy's speed": Triton's forward is the fastest, > 0.8
        forward = {label: frac("forward", label, dtype) for label in COMPARED["forward"]}
        assert max(forward, key=forward.get) == "Triton, tutorial"
        assert forward["Triton, tutorial"] > 0.8
        # "correct, not fast": every kernel of the chapter below every library's, in every part
        for part, labels in COMPARED.items():
            ours = [frac(part, x, dtype) for x in labels if not x.startswith(("PyTorch", "Triton"))]
            theirs = [frac(part, x, dtype) for x in labels if x.startswith(("PyTorch", "Triton"))]
            assert max(ours) < min(theirs) / (2 if dtype == "float16" else 1), (part, dtype)
    # "at a model's size several times slower than a library's kernel": every part, at the shape
    for part, labels in COMPARED.items():
        times = {x: RESULTS.entry(name, part, "float16")["median_s"] for x, name in labels.items()}
        fastest_library = min(t for x, t in times.items() if x.startswith(("PyTorch", "Triton")))
        ours = [t for x, t in times.items() if not x.startswith(("PyTorch", "Triton"))]
        assert min(ours) > 2.5 * fastest_library, part
    # "At 4096 x 1024 the rows time launches": float16 moves half the bytes in about the same time
    k2 = COMPARED["forward"]["kernel 2, block per row"]
    small = [
        RESULTS.entry(k2, "forward", d, (4096, 1024))["median_s"] for d in ("float32", "float16")
    ]
    assert 0.9 < small[1] / small[0] < 1.1
    # "Fusion saves bytes, not time": kernel 5 slower than PyTorch's add followed by rms_norm
    assert frac("add + RMSNorm", "kernel 5, fused") < frac("add + RMSNorm", "PyTorch add, rms_norm")
    # the Triton range over the widths, and kernel 3's, as the chapter gives them
    for label in ("Triton, tutorial", "kernel 3, warp per row"):
        widths = RESULTS.widths(COMPARED["forward"][label], "forward", "float16")
        assert [h for h, _ in widths] == [768, 1024, 2048, 4096, 5120, 8192]
    # "a little less": RMSNorm's kernels take less time than LayerNorm's, both far from the floor
    found = measured_findings(RESULTS)
    assert found["k5_over_k4"].value < 1 and found["rmsbwd_over_bwd"].value < 1
    assert frac("add + RMSNorm", "kernel 5, fused") < 0.5


def test_what_the_chapter_says_of_the_checks_on_the_gpu_holds():
    for title in ("the chapter's cases", "the harness's cases"):
        suite = CHECKS["suites"][title]
        assert all(r["passed"] for r in suite["kernels"].values())  # "Every kernel passed"
        assert all(r["passed"] for r in suite["PyTorch and Triton"].values())  # "So did PyTorch's"
        planted = suite["planted bugs"]
        assert planted["no barrier"]["passed"]  # "passed every check": the GPU hid the race
        assert not planted["racy dγ"]["passed"]  # "Two planted bugs failed there"
        assert not planted["LayerNorm's dx in RMSNorm"]["passed"]
    counts = [r["checks"] for r in CHECKS["suites"]["the harness's cases"]["kernels"].values()]
    assert (min(counts), max(counts)) == (41, 86)


def test_the_timing_figure_draws_cleanly():
    fig = timing_figure(RESULTS, COMPARED)
    assert layout_problems(fig) == []
    bars = fig.axes[0].patches
    assert len(bars) == sum(len(labels) for labels in COMPARED.values())
