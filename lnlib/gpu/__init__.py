"""LayerNorm kernels in CUDA's programming model, written with numba-cuda (chapter "LayerNorm on a
GPU"), and an add + RMSNorm kernel with its backward (the chapter's kernel 5).

The kernels follow llm.c's progression (``dev/cuda/layernorm_forward.cu`` and
``layernorm_backward.cu``): one thread per row, one block per row reducing in
shared memory, one warp per row reducing with warp shuffles, the residual add
fused with the norm, and the backward pass with dγ and dβ reduced across rows in
two stages: each block stores its own row of partial sums, so no lock is needed
(Triton's layer-norm tutorial also reduces in two stages, into fewer buffers that
a lock guards). :mod:`lnlib.gpu.kernels` holds
them, :mod:`lnlib.gpu.launch` the host side that checks, launches and converts,
and :mod:`lnlib.gpu.bugs` the planted GPU bugs the harness must catch.

Without an NVIDIA driver the kernels run on numba's CUDA simulator, which runs
one Python thread per CUDA thread and one block at a time: slow, so keep shapes
tiny there. It rounds a*b + c twice where the GPU fuses it into one FMA, so the
two can differ in float32's last bit.
numba reads ``NUMBA_ENABLE_CUDASIM`` when ``numba.cuda`` is first imported, so
importing this package sets it to 1 when the variable is unset and no driver
library is found; set it yourself (0 or 1) before any import of ``numba.cuda``
to choose. :data:`SIMULATED` says which one this process runs.
"""

from __future__ import annotations

import ctypes.util
import os

if "NUMBA_ENABLE_CUDASIM" not in os.environ and ctypes.util.find_library("cuda") is None:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

try:
    from numba.cuda.core import config as _config  # noqa: E402  (after the switch above)
except ModuleNotFoundError as missing:  # the optional extra is not installed
    raise ModuleNotFoundError(
        'lnlib.gpu needs numba-cuda: pip install "lnlib[kernels]" (the student edition: '
        "pip install -r requirements-kernels.txt)"
    ) from missing

#: bool: True when the kernels run on numba's CUDA simulator (no GPU in this process).
SIMULATED = bool(_config.ENABLE_CUDASIM)

if SIMULATED:  # its shared arrays, made without a lock, could differ between threads
    from numba.cuda.simulator.kernelapi import FakeCUDAShared as _FakeCUDAShared

    from .simulator import serialize_shared_arrays

    serialize_shared_arrays(_FakeCUDAShared)

from .launch import (  # noqa: E402
    BLOCK,
    CASES,
    FORWARD_KERNELS,
    RMS_CASES,
    add_layer_norm,
    add_rms_norm,
    add_rms_norm_backward,
    layer_norm,
    layer_norm_backward,
    rms_norm_backward,
)

__all__ = [
    "BLOCK",
    "CASES",
    "FORWARD_KERNELS",
    "RMS_CASES",
    "SIMULATED",
    "add_layer_norm",
    "add_rms_norm",
    "add_rms_norm_backward",
    "layer_norm",
    "layer_norm_backward",
    "rms_norm_backward",
]
