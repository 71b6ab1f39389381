"""The chapter's kernels, PyTorch's and the Triton tutorial's LayerNorm through lnlib's harness on a
GPU (chapter "LayerNorm on a GPU", § "Timing on a GPU"): part of ``make bench-gpu``.

On numba's simulator the chapter checks its kernels on small cases; a GPU runs the real shuffles,
fused multiply-adds and blocks side by side, so this runs them again there, on the same small cases
and on the harness's own (:data:`lnlib.harness.CASES`: H up to 4096, 4096 rows, offsets up to 10^6),
with the three planted bugs the chapter runs, and PyTorch's CUDA ``LayerNorm`` and ``RMSNorm``
modules and the Triton LayerNorm of ``benchmarks/triton_layer_norm.py`` for comparison. It writes
``lnlib/book/data/gpu_checks.json``: each report's number of checks, whether all passed, and its
failures (part, case, dtype, detail). What is absent is recorded, never invented.

``--smoke`` runs it on a CPU (the simulator, one case in float32, into ``--out``): a test of the
script, not a GPU result.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "lnlib" / "book" / "data" / "gpu_checks.json"


def summary(report, seconds: float) -> dict:
    """A report as JSON: its counts and each failure (at most 20 listed)."""
    failures = [
        {"part": f.part, "case": f.case, "dtype": f.dtype, "detail": f.detail}
        for f in report.failures
    ]
    return {
        "checks": len(report.results),
        "passed": report.passed,
        "failed": len(failures),
        "undefined": len(report.undefined),
        "failures": failures[:20],
        "seconds": round(seconds, 1),
    }


def timed_reports(run) -> dict:
    """`run()`'s reports, each summarized; an exception is recorded as the entry's error."""
    start = time.time()
    try:
        reports = run()
    except Exception as error:  # recorded, never invented: the run goes on
        return {"error": repr(error)}
    seconds = (time.time() - start) / max(len(reports), 1)
    return {name: summary(report, seconds) for name, report in reports.items()}


def torch_reports(torch, triton_ln, cases, rms_cases) -> dict:
    """PyTorch's CUDA modules and the Triton LayerNorm, in float32, float16 and bfloat16."""
    from lnlib.harness import check_layer_norm, check_rms_norm, torch_function, torch_module

    dtypes = ("float32", "float16", "bfloat16")
    reports = {
        "PyTorch nn.LayerNorm": check_layer_norm(
            *torch_module(lambda size, eps: torch.nn.LayerNorm(size, eps=eps), "cuda"),
            dtypes=dtypes, cases=cases,
        ),
        "PyTorch nn.RMSNorm": check_rms_norm(
            *torch_module(lambda size, eps: torch.nn.RMSNorm(size, eps=eps), "cuda"),
            dtypes=dtypes, cases=rms_cases,
        ),
    }  # fmt: skip
    if triton_ln is not None:
        reports["Triton (after the tutorial)"] = check_layer_norm(
            torch_function(lambda x, g, b, eps: triton_forward(triton_ln, x, g, b, eps), "cuda"),
            torch_function(
                lambda dy, x, g, eps, *saved: triton_backward(triton_ln, dy, x, g, *saved), "cuda"
            ),
            dtypes=dtypes, cases=cases,
        )  # fmt: skip
    return reports


def rows_of(tensor):
    """`tensor` as a contiguous 2-D tensor of rows: the Triton kernels' layout."""
    return tensor.reshape(-1, tensor.shape[-1]).contiguous()


def triton_forward(triton_ln, x, gamma, beta, eps):
    """The Triton forward on any shape: ``(y, mean, rstd)``."""
    y, mean, rstd = triton_ln.forward(rows_of(x), gamma, beta, eps)
    return y.reshape(x.shape), mean, rstd


def triton_backward(triton_ln, dy, x, gamma, mean, rstd):
    """The Triton backward on any shape: ``(dx, dgamma, dbeta)``."""
    dx, dgamma, dbeta = triton_ln.backward(rows_of(dy), rows_of(x), gamma, mean, rstd)
    return dx.reshape(x.shape), dgamma, dbeta


def main() -> None:
    from gpu_kernels import arguments, machine, optional, versions

    args = arguments(__doc__, "the simulator, one case in float32", RESULTS)
    from lnlib import gpu, harness
    from lnlib.gpu import suite

    torch = optional("torch")
    on_gpu = torch is not None and torch.cuda.is_available() and not gpu.SIMULATED
    if not (on_gpu or args.smoke):
        sys.exit("no GPU here: the checks run on a GPU (--smoke tests the script on a CPU)")
    suites = {"the chapter's cases": (gpu.CASES, gpu.RMS_CASES)}
    dtypes = suite.DTYPES
    if on_gpu:
        suites["the harness's cases"] = (harness.CASES, harness.RMS_CASES)
    else:  # the chapter runs the whole list on the simulator; the smoke test checks the wiring
        suites = {"the chapter's cases": (gpu.CASES[:1], gpu.RMS_CASES[-1:])}
        dtypes = ("float32",)
    triton_ln = optional("triton_layer_norm") if on_gpu else None
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "smoke": args.smoke,
        "machine": machine(torch, gpu),
        "versions": versions(),
        "suites": {},
    }
    for title, (cases, rms_cases) in suites.items():
        print(title, flush=True)
        entry = {
            "kernels": timed_reports(lambda: suite.kernel_reports(cases, rms_cases, dtypes)),
            "planted bugs": timed_reports(lambda: suite.planted_reports(cases, rms_cases, dtypes)),
        }
        if on_gpu:
            entry["PyTorch and Triton"] = timed_reports(
                lambda: torch_reports(torch, triton_ln, cases, rms_cases)
            )
        result["suites"][title] = entry
        for group, reports in entry.items():
            for name, report in reports.items():
                print(f"  {group}: {name}: {report}"[:300], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # gpu_kernels, triton_layer_norm
    main()
