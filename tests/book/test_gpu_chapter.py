"""The chapter "LayerNorm on a GPU": its counts, its figure, its exercises, and make bench-gpu's
script run end to end.

The script is run with --smoke (numba's simulator, PyTorch on the CPU, a tiny shape) into a
temporary file, and what it writes is checked: every implementation there timed with its fraction of
the copy, every kernel agreeing with PyTorch, and what was absent (Triton, the GPU) named. Nothing
here is a measurement.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lnlib.book.experiments.gpu import (
    H200_SPEC,
    KERNEL_COUNTS,
    RMS_KERNEL_COUNTS,
    GpuResults,
    bytes_table,
    itemsize,
    partial_bytes,
)
from lnlib.book.figures.gpu import roofline_figure
from lnlib.book.figures.style import layout_problems

ROOT = Path(__file__).resolve().parents[2]


def test_the_counts_follow_the_kernels_sweeps():
    forward = [k for k in KERNEL_COUNTS if k.name[0] in "123"]
    assert len(forward) == 3 and {(k.floor_bytes(4), k.worst_bytes(4)) for k in forward} == {
        (8, 16)
    }
    add = next(k for k in KERNEL_COUNTS if "residual" in k.name)
    assert add.floor_bytes(2) == 8  # x, r read; s, y written; 2 bytes each
    backward = next(k for k in KERNEL_COUNTS if k.name.startswith("LayerNorm backward"))
    # 6 + 7 + 5 FLOPs in its three loops over a row's features; 12 B: x, dy, dx in float32
    assert backward.floor_bytes(2) == 6 and backward.intensity(4) == pytest.approx(18 / 12)
    assert backward.worst_bytes(2) == 14  # x and dy read three times, dx written
    assert itemsize("bfloat16") == itemsize("float16") == 2 and itemsize("float32") == 4


def test_the_partial_sums_are_counted_per_block():
    # 4096 rows, 4 rows a block: 1024 blocks, each writing dγ and dβ (4 B each) once and stage 2
    # reading them once: 16 B x 1024 / 4096 = 4 B per element; 40 000 rows share the 1024 cap.
    assert partial_bytes(4096) == {"blocks": 1024, "bytes": 4.0}
    assert partial_bytes(40_000)["bytes"] == pytest.approx(16 * 1024 / 40_000)
    assert partial_bytes(3)["blocks"] == 1
    assert partial_bytes(4096, sums=1)["bytes"] == 2.0  # RMSNorm: dγ alone
    rows = [line for line in bytes_table(4096).splitlines() if line.startswith("<tr>")]
    assert len(rows) == 1 + len(KERNEL_COUNTS) + 1 + len(RMS_KERNEL_COUNTS) + 1
    assert rows[len(KERNEL_COUNTS) + 1].startswith(
        "<tr><td>+ partial dγ, dβ (4096 rows)</td><td>4</td>"
    )
    assert rows[-1].startswith("<tr><td>+ partial dγ (4096 rows)</td><td>2</td>")


def test_the_rms_counts_follow_kernel_5_and_its_backward():
    add_rms, backward = RMS_KERNEL_COUNTS
    add = next(k for k in KERNEL_COUNTS if "residual" in k.name)
    # the same arrays as kernel 4 (x, r read; s, y written), one sweep of s fewer, no mean
    assert add_rms.floor_bytes(2) == add.floor_bytes(2) == 8
    assert (add_rms.passes, add.passes) == (5, 6) and add_rms.flops < add.flops
    # s and dy read, ds written: LayerNorm's backward's arrays; 4 + 5 + 3 FLOPs
    assert backward.floor_bytes(2) == 6 and backward.worst_bytes(2) == 14 and backward.flops == 12


def test_without_the_results_file_nothing_is_measured(tmp_path):
    results = GpuResults(tmp_path / "absent.json")
    assert not results.measured and results.entries() == []
    assert results.machine() == "not yet measured on a GPU"


def test_the_measured_table_reads_the_rms_rows(tmp_path):
    shape = {"rows": 4096, "size": 1024, "dtype": "float16", "bytes": 1, "bytes_per_s": 1.0}
    entries = [
        {"implementation": name, "part": part, "median_s": seconds, "fraction_of_copy": 0.5,
         **shape}
        for name, part, seconds in (
            ("PyTorch add, then rms_norm", "add + RMSNorm", 2e-5),
            ("numba: kernel 5", "add + RMSNorm", 3e-5),
            ("PyTorch rms_norm", "RMSNorm backward", 4e-5),
            ("numba: RMSNorm backward", "RMSNorm backward", 2e-5),
        )
    ]  # fmt: skip
    path = tmp_path / "gpu_kernels.json"
    machine = {"gpu": "a GPU", "driver": "1", "cuda": "2"}
    path.write_text(json.dumps({"machine": machine, "entries": entries}))
    table = GpuResults(path).table()
    assert "4096 x 1024 float16, add + RMSNorm:" in table
    assert "4096 x 1024 float16, RMSNorm backward:" in table
    line = next(x for x in table.splitlines() if x.strip().startswith("numba: kernel 5"))
    assert "30.0 µs" in line and "x 1.50" in line  # its time over PyTorch's unfused add + norm


def test_the_roofline_draws_cleanly_with_and_without_measurements():
    for measured in (None, [(1.0, 2e12, "measured")]):
        fig = roofline_figure(KERNEL_COUNTS, H200_SPEC, measured)
        assert layout_problems(fig) == []
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert ("kernels drawn at their bound, not a speed" in texts) == (measured is None)


def smoke_run(script: str, tmp_path) -> dict:
    """What `benchmarks/<script> --smoke` writes, run on numba's simulator: a GPU-less run."""
    out = tmp_path / "smoke.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--smoke", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NUMBA_ENABLE_CUDASIM": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["smoke"] and data["machine"]["numba_simulator"] and data["machine"]["gpu"] is None
    return data


def test_the_benchmark_script_runs_end_to_end_on_the_cpu(tmp_path):
    data = smoke_run("gpu_kernels.py", tmp_path)
    assert data["failed"] == [] and any(a.startswith("Triton") for a in data["absent"])
    timed = {(e["implementation"], e["part"], e["dtype"]) for e in data["entries"]}
    for dtype in ("float32", "float16"):
        for name in ("thread per row", "block per row", "warp per row"):
            assert (f"numba: {name}", "forward", dtype) in timed
        assert ("numba: two-stage backward", "backward", dtype) in timed
    assert ("PyTorch", "backward", "bfloat16") in timed
    for dtype in ("float32", "float16", "bfloat16"):
        assert ("PyTorch add, then rms_norm", "add + RMSNorm", dtype) in timed
        assert ("PyTorch rms_norm", "RMSNorm backward", dtype) in timed
    for dtype in ("float32", "float16"):
        assert ("numba: kernel 5", "add + RMSNorm", dtype) in timed
        assert ("numba: RMSNorm backward", "RMSNorm backward", dtype) in timed
    for entry in data["entries"]:
        assert entry["median_s"] > 0 and entry["bytes"] > 0
        if entry["part"] != "copy":
            assert np.isfinite(entry["fraction_of_copy"])
            assert entry["max_abs_diff_vs_torch"] <= (2e-5 if entry["dtype"] == "float32" else 1e-2)


def test_findings_states_each_number_from_its_source():
    """Every key of the chapter's findings, recomputed here from the constants it reads."""
    from lnlib.book.experiments.gpu import (
        H200_SPEC,
        HOPPER_LIMITS,
        KERNEL_COUNTS,
        PARTIAL_ROWS,
        findings,
        partial_bytes,
    )

    found = {k: str(v) for k, v in findings(block=32).items()}
    assert found["ridge"] == str(round(67e12 / 4.8e12)) == "14"
    assert found["spec_tflops"] == "67" and H200_SPEC["bandwidth"] == 4.8e12
    assert (
        found["most_intensity"] == f"{max(k.flops / k.floor_bytes(4) for k in KERNEL_COUNTS):.2f}"
    )
    part = partial_bytes(PARTIAL_ROWS)
    assert found["partial_rows"] == f"{PARTIAL_ROWS:g}"
    assert found["partial_blocks"] == f"{part['blocks']:g}"
    assert found["partial_bytes"] == f"{part['bytes']:g}"
    backward = KERNEL_COUNTS[-1]
    assert found["backward_16"] == f"{(backward.reads + backward.writes) * 2:g}" == "6"
    assert found["backward_32"] == "12"
    assert found["sm_blocks"] == f"{HOPPER_LIMITS['blocks_per_sm']:g}"
    assert found["sm_threads"] == f"{HOPPER_LIMITS['threads_per_sm']:g}"
    assert found["sm_used"] == f"{HOPPER_LIMITS['blocks_per_sm'] * 32:g}"
    assert (found["warp_load_2"], found["warp_load_16"]) == ("64", "512")
    assert str(findings(block=64)["warp_load_2"]) == "128"
    rms = {k: v for k, v in found.items() if k.startswith("rms_") or k.startswith("add_")}
    assert rms == {
        "rms_add_16": "8", "add_16": "8", "rms_add_sweeps": "5", "add_sweeps": "6",
        "rms_add_flops": "5", "add_flops": "9", "rms_backward_16": "6",
        "rms_backward_flops": "12", "rms_partial_bytes": "2",
    }  # fmt: skip
    assert found["backward_flops"] == str(backward.flops) == "18"


def test_the_checks_script_runs_end_to_end_on_the_simulator(tmp_path):
    suite = smoke_run("gpu_checks.py", tmp_path)["suites"]["the chapter's cases"]
    assert set(suite) == {"kernels", "planted bugs"}  # no GPU: no PyTorch CUDA, no Triton
    assert all(r["passed"] and r["checks"] > 0 for r in suite["kernels"].values())
    assert len(suite["kernels"]) == 7
    # the racy dγ and RMSNorm's centred dx fail on any case; the missing barrier only by chance
    assert not suite["planted bugs"]["racy dγ"]["passed"]
    assert not suite["planted bugs"]["LayerNorm's dx in RMSNorm"]["passed"]


def test_exercise_2_names_arrays_counted_instead_of_bytes():
    """Fresh readers answered exercise 2 with 1, the arrays saved, and were told only "not the
    expected count"; exercise 1 on the same page names its slips."""
    from lnlib.book.exercises.gpu import exercises

    exercise = exercises.exercise(2)
    assert "counts the arrays saved" in exercise.feedback(1)
    assert "4-byte values" in exercise.feedback(4)
    assert "counts the fused kernel's arrays" in exercise.feedback(4)
    assert "separate kernels' arrays" in exercise.feedback(5)
    assert exercise.feedback(2) == "Correct!"
