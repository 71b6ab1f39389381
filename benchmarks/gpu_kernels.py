"""LayerNorm and RMSNorm kernels on a GPU against its copy bandwidth (chapter "LayerNorm on a
GPU"): ``make bench-gpu``.

Times, forward and backward, with the GPU's clock between synchronizations:

- the chapter's numba-cuda kernels (``lnlib.gpu``: kernels 1-3, the fused residual add, the
  two-stage backward; kernel 5, add + RMSNorm, and RMSNorm's two-stage backward), compiled for
  the GPU, in float32 and float16 (they read no bfloat16 array: numba has no such type, so they
  are not timed in bfloat16);
- ``torch.nn.functional.layer_norm`` and its autograd backward, and ``torch.nn.functional.rms_norm``
  after a ``torch.add`` (the unfused add + RMSNorm) and its autograd backward, in every dtype;
- a Triton LayerNorm written after Triton's tutorial (``python/tutorials/05-layer-norm.py``: one
  program a row; the backward's dγ, dβ in two stages), in every dtype, where Triton is installed;
- a device-to-device copy of the largest array (``torch.Tensor.copy_``): the bandwidth the kernels
  are compared with;

over chapter 14's shape (4096 x 1024) and real models' widths (H = 768 to 8192) at 2^26 elements an
array, and writes ``lnlib/book/data/gpu_kernels.json``: the GPU, driver, CUDA and package
versions, each time (median, 10th and 90th percentile), the bytes moved at the floor, the achieved
bytes/s and its fraction of the copy's, and, for each kernel, the largest difference from PyTorch's
output. What is absent (no Triton, no GPU) is recorded, never invented. The chapter reads only that
file.

``--smoke`` runs it end to end on a CPU: the kernels on numba's simulator, PyTorch's CPU path,
tiny shapes, one repetition, into ``--out`` (a temporary path): a test of the script, not a
measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "lnlib" / "book" / "data" / "gpu_kernels.json"

#: Chapter 14's running example, then real models' widths (GPT-2 small 768, BERT-large 1024,
#: GPT-2 XL 1600... LLaMA 7B 4096, 13B 5120, 70B 8192), each at 2^26 elements an array; 4096
#: first after chapter 14's: the chapter's predicted floors are for it.
SHAPES = [(4096, 1024)] + [(2**26 // h, h) for h in (4096, 768, 1024, 2048, 5120, 8192)]
SMOKE_SHAPES = [(4, 40)]
DTYPES = ("float32", "float16", "bfloat16")
EPS = 1e-5


def optional(name: str):
    """The module, or None when it does not import (recorded as absent)."""
    try:
        return __import__(name)
    except Exception:  # an installed but broken package is as absent as a missing one
        return None


def versions() -> dict:
    found = {}
    for name in ("numpy", "numba", "numba-cuda", "torch", "triton"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def machine(torch, gpu) -> dict:
    info = {"python": platform.python_version(), "platform": platform.platform()}
    if torch is not None and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info.update(gpu=props.name, memory_gib=round(props.total_memory / 2**30, 1))
        info.update(cuda=torch.version.cuda, driver=driver_version())
    else:
        info.update(gpu=None, cuda=None, driver=None)
    info["numba_simulator"] = gpu.SIMULATED
    return info


def driver_version():
    """The NVIDIA driver's version as nvidia-smi reports it (numba gives the CUDA driver API's)."""
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
        return done.stdout.split()[0]
    except Exception:  # no nvidia-smi: recorded as unknown, never invented
        return None


def numpy_for_numba_cuda() -> None:
    """numba-cuda 0.30.4 overloads ``np.row_stack``, which numpy 2.5 removed (seen on the lent
    H200's numpy 2.5.2): alias it to ``np.vstack`` before ``numba.cuda`` is imported."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


def summary(seconds: list[float]) -> dict:
    values = np.asarray(seconds)
    return {
        "median_s": float(np.median(values)),
        "p10_s": float(np.percentile(values, 10)),
        "p90_s": float(np.percentile(values, 90)),
        "repeats": len(values),
    }


def timed(call, sync, repeats: int, inner: int) -> dict:
    """Median seconds per call: `inner` calls between two synchronizations, `repeats` times."""
    call()
    sync()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            call()
        sync()
        samples.append((time.perf_counter() - start) / inner)
    return summary(samples)


class Bench:
    """One shape and dtype: the inputs on the device, in torch and (float32, float16) in numba."""

    def __init__(self, torch, gpu, device: str, rows: int, size: int, dtype: str):
        self.torch, self.gpu, self.device = torch, gpu, device
        self.rows, self.size, self.dtype = rows, size, dtype
        rng = np.random.default_rng(0)
        kind = getattr(torch, dtype)

        def tensor(shape, scale=1.0, shift=0.0):
            values = (shift + scale * rng.standard_normal(shape)).astype(np.float32)
            return torch.from_numpy(values).to(device=device, dtype=kind)

        self.x, self.res, self.dy = (tensor((rows, size)) for _ in range(3))
        self.gamma, self.beta = tensor(size, 0.5, 1.0), tensor(size, 0.5)
        self.numba = dtype in ("float32", "float16")

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def to_numba(self, tensor, dtype=None):
        """A numba device array of `tensor` (zero-copy on a GPU), float32 parameters when asked."""
        from numba import cuda

        tensor = tensor.detach().to(dtype or tensor.dtype).contiguous()
        if self.gpu.SIMULATED:
            return cuda.to_device(tensor.cpu().numpy())
        return cuda.as_cuda_array(tensor)

    def empty(self, shape, dtype=None):
        return self.torch.empty(shape, device=self.device, dtype=dtype or self.x.dtype)


def torch_calls(b: Bench) -> dict:
    """PyTorch's forward, backward, and the unfused residual add followed by layer_norm.

    Each call returns its main output (y, or dx for the backward), to compare with PyTorch's.
    """
    torch, F = b.torch, b.torch.nn.functional
    x = b.x.clone().requires_grad_(True)
    gamma, beta = b.gamma.clone().requires_grad_(True), b.beta.clone().requires_grad_(True)
    y = F.layer_norm(x, (b.size,), gamma, beta, EPS)
    s = b.empty(x.shape)

    def add_then_norm():
        torch.add(b.x, b.res, out=s)
        return F.layer_norm(s, (b.size,), b.gamma, b.beta, EPS)

    def add_then_rms():
        torch.add(b.x, b.res, out=s)
        return F.rms_norm(s, (b.size,), b.gamma, EPS)

    rms_y = F.rms_norm(x, (b.size,), gamma, EPS)
    return {
        ("PyTorch", "forward"): lambda: F.layer_norm(b.x, (b.size,), b.gamma, b.beta, EPS),
        ("PyTorch", "backward"): lambda: torch.autograd.grad(
            y, (x, gamma, beta), b.dy, retain_graph=True
        )[0],
        ("PyTorch add, then layer_norm", "residual add"): add_then_norm,
        ("PyTorch add, then rms_norm", "add + RMSNorm"): add_then_rms,
        ("PyTorch rms_norm", "RMSNorm backward"): lambda: torch.autograd.grad(
            rms_y, (x, gamma), b.dy, retain_graph=True
        )[0],
    }


def numba_calls(b: Bench) -> dict:
    """The chapter's kernels on the same arrays (float32 and float16 only), returning y or dx."""
    import torch

    from lnlib.gpu import launch

    if not b.numba:
        return {}
    f32 = torch.float32
    x, res, dy = (b.to_numba(t) for t in (b.x, b.res, b.dy))
    gamma, beta = b.to_numba(b.gamma, f32), b.to_numba(b.beta, f32)
    y, other = (b.to_numba(b.empty(b.x.shape)) for _ in range(2))
    mean, rstd, add_mean, add_rstd = (b.to_numba(b.empty(b.rows, f32)) for _ in range(4))
    dgamma, dbeta = (b.to_numba(b.empty(b.size, f32)) for _ in range(2))
    part = b.to_numba(b.empty((2, launch.partial_blocks(b.rows), b.size), f32))
    rms_rstd, add_rms_rstd = (b.to_numba(b.empty(b.rows, f32)) for _ in range(2))

    def forward(kernel, grid):
        launch.launch_forward(kernel, x, gamma, beta, EPS, y, mean, rstd, grid)
        return y

    def add():
        launch.launch_add(x, res, gamma, beta, EPS, other, y, add_mean, add_rstd)
        return y

    def backward():  # each block stores its row of the partial sums: no zeroing between calls
        launch.launch_backward(dy, x, gamma, mean, rstd, other, part, dgamma, dbeta)
        return other

    def add_rms():
        launch.launch_add_rms(x, res, gamma, EPS, other, y, add_rms_rstd)
        return y

    def rms_backward():  # the backward of x's RMSNorm (its rstd saved by a zero-residual add)
        launch.launch_rms_backward(dy, x, gamma, rms_rstd, other, part[0], dgamma)
        return other

    calls = {
        (f"numba: {name}", "forward"): lambda spec=spec: forward(*spec)
        for name, spec in launch.FORWARD_KERNELS.items()
    }
    calls[("numba: kernel 4", "residual add")] = add
    calls[("numba: two-stage backward", "backward")] = backward
    calls[("numba: kernel 5", "add + RMSNorm")] = add_rms
    calls[("numba: RMSNorm backward", "RMSNorm backward")] = rms_backward
    forward(*launch.FORWARD_KERNELS["warp per row"])  # the statistics of x the backward reads
    zero = b.to_numba(b.torch.zeros_like(b.x))
    launch.launch_add_rms(x, zero, gamma, EPS, other, y, rms_rstd)  # x's rstd, for RMSNorm's
    return calls


def triton_calls(b: Bench, triton_ln) -> dict:
    """The Triton LayerNorm after the tutorial (benchmarks/triton_layer_norm.py), where
    installed."""
    if triton_ln is None:
        return {}
    _, mean, rstd = triton_ln.forward(b.x, b.gamma, b.beta, EPS)
    return {
        ("Triton (after the tutorial)", "forward"): lambda: triton_ln.forward(
            b.x, b.gamma, b.beta, EPS
        )[0],
        ("Triton (after the tutorial)", "backward"): lambda: triton_ln.backward(
            b.dy, b.x, b.gamma, mean, rstd
        )[0],
    }


def as_array(output) -> np.ndarray:
    """A call's output (a torch tensor or a numba device array) as float32 numpy."""
    if hasattr(output, "copy_to_host"):
        return output.copy_to_host().astype(np.float32)
    return output.detach().float().cpu().numpy()


#: Each part's arrays at the floor: activation arrays, float32 statistics a row, float32 vectors
#: of H (γ, β and their gradients) each read or written once.
FLOOR = {
    "forward": (2, 2, 2),  # x read, y written; mean, rstd; γ, β
    "backward": (3, 2, 3),  # dy, x read, dx written; mean, rstd; γ read, dγ, dβ written
    "residual add": (4, 2, 2),  # x, r read, s, y written; mean, rstd; γ, β
    "add + RMSNorm": (4, 1, 1),
    "RMSNorm backward": (3, 1, 2),
}
#: The implementation each part's outputs are compared with.
REFERENCE = {
    "forward": "PyTorch",
    "backward": "PyTorch",
    "residual add": "PyTorch add, then layer_norm",
    "add + RMSNorm": "PyTorch add, then rms_norm",
    "RMSNorm backward": "PyTorch rms_norm",
}


def floor_bytes(b: Bench, part: str) -> int:
    """Bytes at the floor: activation arrays once each, float32 statistics and parameters."""
    arrays, stats, vectors = FLOOR[part]
    return arrays * b.rows * b.size * b.x.element_size() + stats * b.rows * 4 + vectors * b.size * 4


def measure(b: Bench, triton_ln, repeats: int, inner: int, log) -> tuple[list, list]:
    """Every implementation at one shape and dtype: the timed entries, and the ones that failed."""
    copy_target = b.empty(b.x.shape)
    copy = timed(lambda: copy_target.copy_(b.x), b.sync, repeats, inner)
    copied = 2 * b.x.numel() * b.x.element_size()
    copy_rate = copied / copy["median_s"]
    shape = {"rows": b.rows, "size": b.size, "dtype": b.dtype}
    entries = [{"implementation": "device-to-device copy", "part": "copy", **shape, **copy,
                "bytes": copied, "bytes_per_s": copy_rate}]  # fmt: skip
    calls = {**torch_calls(b), **numba_calls(b), **triton_calls(b, triton_ln)}
    references = {part: as_array(calls[(name, part)]()) for part, name in REFERENCE.items()}
    failed = []
    for (name, part), call in calls.items():
        try:
            difference = float(np.abs(as_array(call()) - references[part]).max())
            timing = timed(call, b.sync, repeats, inner)
        except Exception as error:  # recorded, never invented: the run goes on
            failed.append({"implementation": name, "part": part, **shape, "error": repr(error)})
            log(f"  {name} {part}: FAILED {error!r}")
            continue
        moved = floor_bytes(b, part)
        rate = moved / timing["median_s"]
        entries.append({"implementation": name, "part": part, **shape, **timing, "bytes": moved,
                        "bytes_per_s": rate, "fraction_of_copy": rate / copy_rate,
                        "max_abs_diff_vs_torch": difference})  # fmt: skip
        log(f"  {name:<34} {part:<16} {timing['median_s'] * 1e6:9.1f} us {rate / copy_rate:6.2f}")
    return entries, failed


def arguments(doc: str, smoke: str, results: Path) -> argparse.Namespace:
    """``--smoke`` (help: `smoke`) and ``--out`` (default `results`), read before ``numba.cuda``
    is imported: ``--smoke`` switches numba's simulator on (this script and gpu_checks.py)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=smoke)
    parser.add_argument("--out", type=Path, default=results)
    args = parser.parse_args()
    if args.smoke:
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    numpy_for_numba_cuda()
    return args


def main() -> None:
    args = arguments(__doc__, "tiny shapes, simulator, CPU", RESULTS)
    from lnlib import gpu  # after the simulator's switch

    torch = optional("torch")
    if torch is None:
        sys.exit("make bench-gpu needs PyTorch (pip install torch)")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not args.smoke:
        sys.exit(
            "no GPU here: make bench-gpu measures on a GPU (--smoke tests the script on a CPU)"
        )
    triton_ln = optional("triton_layer_norm") if device == "cuda" else None
    absent = ["numba kernels in bfloat16: numba has no bfloat16 array type"]
    absent += [] if triton_ln else ["Triton" + ("" if device == "cuda" else ": no GPU")]
    if device == "cpu":
        absent.append("GPU: PyTorch on the CPU, the numba kernels on numba's simulator")
    shapes = SMOKE_SHAPES if args.smoke else SHAPES
    repeats, inner = (1, 1) if args.smoke else (20, 10)
    started, entries, failed = time.time(), [], []
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "smoke": args.smoke,
        "machine": machine(torch, gpu),
        "versions": versions(),
        "absent": absent,
        "timing": f"median of {repeats} repeats of {inner} calls between synchronizations",
        "entries": entries,
        "failed": failed,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for rows, size in shapes:
        for dtype in DTYPES:
            print(f"{rows} x {size} {dtype}", flush=True)
            bench = Bench(torch, gpu, device, rows, size, dtype)
            got, lost = measure(bench, triton_ln, repeats, inner, lambda m: print(m, flush=True))
            entries += got
            failed += lost
            result["seconds"] = round(time.time() - started, 1)
            # written after each shape, so a run stopped early keeps what it measured
            args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out} ({len(entries)} entries, {len(failed)} failed)")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # triton_layer_norm
    main()
