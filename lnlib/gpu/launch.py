"""The host side of the chapter's CUDA kernels: check, launch, convert (chapter "LayerNorm on a
GPU").

:func:`layer_norm`, :func:`add_layer_norm` and :func:`layer_norm_backward` (and RMSNorm's
:func:`add_rms_norm` and :func:`rms_norm_backward`) take
numpy arrays of any shape (the last axis normalized), copy them to the device,
run a kernel of :mod:`lnlib.gpu.kernels` and copy the results back, in the
signatures lnlib's harness calls (:func:`lnlib.harness.check_layer_norm`,
:func:`lnlib.harness.check_rms_norm`).
The ``launch_*`` functions run a kernel on arrays already on the device: the
benchmark times those. float32 and float16 are read by the kernels as stored;
bfloat16 (``ml_dtypes.bfloat16``, which numba has no array type for) is widened
to float32 on the host and the results rounded back to it there.
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np
from numba import cuda
from numba.cuda.core import config

from ..harness import Case
from ..validation import BFLOAT16, check_eps
from . import kernels
from .kernels import BLOCK

#: The forward kernels by name: (kernel, how the grid covers the rows): "threads", one
#: thread a row; "blocks", one block a row.
FORWARD_KERNELS = {
    "thread per row": (kernels.forward_thread_per_row, "threads"),
    "block per row": (kernels.forward_block_per_row, "blocks"),
    "warp per row": (kernels.forward_warp_per_row, "blocks"),
}
#: The backward pass's stage 1 gives each block this many rows (at least), and at most
#: :data:`MAX_PARTIALS` blocks: the rows of the partial dγ and dβ that stage 2 adds.
ROWS_PER_BLOCK = 4
#: The most blocks the backward's stage 1 uses: each stores one row of partial dγ and dβ.
MAX_PARTIALS = 1024

#: Small shapes for the simulator, one Python thread per CUDA thread: H below, at and above
#: the warp, not a multiple of it, H = 1, one row, offsets, constant rows, odd layouts.
CASES = (
    Case("random (2, 3, 40)", (2, 3, 40)),
    Case("H = 1 (3, 1)", (3, 1)),
    Case("one row, H = 100", (1, 100), offset=2.0, spread=3.0),
    Case("offset 1000 (6, 32)", (6, 32), offset=1000.0),
    Case("constant rows (2, 16)", (2, 16), offset=3.0, spread=0.0),
    Case("H = 7, sliced (9, 7)", (9, 7), offset=-2.0, layout="sliced"),
    Case("eps 0.1, transposed (5, 33)", (5, 33), spread=0.5, layout="transposed", eps=0.1),
)
#: :data:`CASES` and rows of zeros, RMSNorm's edge (the divisor is sqrt(eps) alone), as
#: :data:`lnlib.harness.RMS_CASES` adds them.
RMS_CASES = (*CASES, Case("all-zero rows (4, 16)", (4, 16), spread=0.0))


def _paced(function):
    """Under the simulator, switch Python threads every 50 µs during `function`: its barriers
    wait on 32 threads each, and the default 5 ms switch interval makes each wait slow."""

    @functools.wraps(function)
    def paced(*args, **kwargs):
        if not config.ENABLE_CUDASIM:
            return function(*args, **kwargs)
        interval = sys.getswitchinterval()
        sys.setswitchinterval(5e-5)
        try:
            return function(*args, **kwargs)
        finally:
            sys.setswitchinterval(interval)

    return paced


def _kernel_dtype(dtype) -> np.dtype:
    """The dtype the kernels read for storage `dtype`; TypeError for others."""
    dtype = np.dtype(dtype)
    if dtype in (np.float32, np.float16):
        return dtype
    if dtype == BFLOAT16:
        return np.dtype(np.float32)
    raise TypeError(
        f"the GPU kernels take float32, float16 or bfloat16; got {dtype} "
        "(they compute in float32, too coarse for float64 data)."
    )


def _rows(array) -> np.ndarray:
    """`array` as contiguous rows in the kernels' dtype (a copy for bfloat16)."""
    array = np.asarray(array)
    kind = _kernel_dtype(array.dtype)
    return np.ascontiguousarray(array.reshape(-1, array.shape[-1]), dtype=kind)


def _parameter(value, size: int, fill: float) -> np.ndarray:
    """γ or β as a float32 vector of `size` (`fill` when None)."""
    if value is None:
        return np.full(size, fill, dtype=np.float32)
    return np.ascontiguousarray(np.asarray(value), dtype=np.float32).reshape(size)


def _stats(rows: int):
    return cuda.device_array(rows, np.float32), cuda.device_array(rows, np.float32)


def launch_forward(kernel, d_x, d_gamma, d_beta, eps, d_y, d_mean, d_rstd, grid: str):
    """Run a forward kernel on device arrays; `grid` is "threads" or "blocks"."""
    rows = d_x.shape[0]
    blocks = math.ceil(rows / BLOCK) if grid == "threads" else rows
    kernel[blocks, BLOCK](d_x, d_gamma, d_beta, np.float32(eps), d_y, d_mean, d_rstd)


def launch_add(d_x, d_res, d_gamma, d_beta, eps, d_s, d_y, d_mean, d_rstd):
    """Run the fused residual add and LayerNorm (kernel 4) on device arrays."""
    args = (d_x, d_res, d_gamma, d_beta, np.float32(eps), d_s, d_y, d_mean, d_rstd)
    kernels.add_layer_norm[d_x.shape[0], BLOCK](*args)


def launch_add_rms(d_x, d_res, d_gamma, eps, d_s, d_y, d_rstd):
    """Run the fused residual add and RMSNorm (kernel 5) on device arrays."""
    args = (d_x, d_res, d_gamma, np.float32(eps), d_s, d_y, d_rstd)
    kernels.add_rms_norm[d_x.shape[0], BLOCK](*args)


def partial_blocks(rows: int) -> int:
    """How many blocks (rows of partial sums) the backward's stage 1 uses."""
    return max(1, min(MAX_PARTIALS, rows // ROWS_PER_BLOCK))


def launch_backward(d_dy, d_x, d_gamma, d_mean, d_rstd, d_dx, d_part, d_dgamma, d_dbeta):
    """Run both backward stages on device arrays; `d_part` is (2, blocks, H): stage 1 writes
    every entry once, so it needs no zeroing."""
    blocks, size = d_part.shape[1], d_x.shape[1]
    kernels.backward_rows[blocks, BLOCK](
        d_dy, d_x, d_gamma, d_mean, d_rstd, d_dx, d_part[0], d_part[1]
    )
    threads = math.ceil(size / BLOCK)
    kernels.sum_partials[threads, BLOCK](d_part[0], d_dgamma)
    kernels.sum_partials[threads, BLOCK](d_part[1], d_dbeta)


def launch_rms_backward(d_dy, d_s, d_gamma, d_rstd, d_ds, d_part, d_dgamma, stage_1=None):
    """Run RMSNorm's two backward stages on device arrays; `d_part` is (blocks, H), every entry
    written once by stage 1 (`stage_1`: ``kernels.rms_backward_rows`` unless given)."""
    blocks, size = d_part.shape[0], d_s.shape[1]
    stage_1 = stage_1 or kernels.rms_backward_rows
    stage_1[blocks, BLOCK](d_dy, d_s, d_gamma, d_rstd, d_ds, d_part)
    kernels.sum_partials[math.ceil(size / BLOCK), BLOCK](d_part, d_dgamma)


@_paced
def layer_norm(x, gamma=None, beta=None, eps: float = 1e-5, kernel="warp per row"):
    """LayerNorm over the last axis on the GPU (or its simulator), as the harness calls it.

    Parameters
    ----------
    x : array_like
        float32, float16 or bfloat16, any shape; the last axis is normalized.
    gamma, beta : array_like, optional
        Of shape ``x.shape[-1]``; ones and zeros when omitted.
    eps : float, default 1e-5
    kernel : str or tuple, default "warp per row"
        A name of :data:`FORWARD_KERNELS`, or a ``(kernel, grid)`` pair of the same form.

    Returns
    -------
    y, mean, rstd : numpy.ndarray
        y in the dtype of x; the saved statistics in float32, of shape ``x.shape[:-1]``.
    """
    check_eps(eps)
    x = np.asarray(x)
    function, grid = FORWARD_KERNELS[kernel] if isinstance(kernel, str) else kernel
    rows = _rows(x)
    size = rows.shape[1]
    d_y = cuda.device_array(rows.shape, rows.dtype)
    d_mean, d_rstd = _stats(rows.shape[0])
    d_gamma = cuda.to_device(_parameter(gamma, size, 1.0))
    d_beta = cuda.to_device(_parameter(beta, size, 0.0))
    launch_forward(function, cuda.to_device(rows), d_gamma, d_beta, eps, d_y, d_mean, d_rstd, grid)
    return _back(d_y, x), _back(d_mean, x, stats=True), _back(d_rstd, x, stats=True)


@_paced
def add_layer_norm(x, residual, gamma=None, beta=None, eps: float = 1e-5):
    """Kernel 4 on numpy arrays: ``(s, y, mean, rstd)`` with ``s = x + residual`` and y =
    LayerNorm(s)."""
    check_eps(eps)
    x = np.asarray(x)
    rows, res = _rows(x), _rows(np.asarray(residual, dtype=x.dtype))
    size = rows.shape[1]
    d_s = cuda.device_array(rows.shape, rows.dtype)
    d_y = cuda.device_array(rows.shape, rows.dtype)
    d_mean, d_rstd = _stats(rows.shape[0])
    d_gamma = cuda.to_device(_parameter(gamma, size, 1.0))
    d_beta = cuda.to_device(_parameter(beta, size, 0.0))
    d_x, d_res = cuda.to_device(rows), cuda.to_device(res)
    launch_add(d_x, d_res, d_gamma, d_beta, eps, d_s, d_y, d_mean, d_rstd)
    stats = (_back(d, x, stats=True) for d in (d_mean, d_rstd))
    return (_back(d_s, x), _back(d_y, x), *stats)


@_paced
def layer_norm_backward(dy, x, gamma, eps: float, mean, rstd):
    """The backward kernels (both stages) on numpy arrays, as the harness calls them.

    Returns ``(dx, dgamma, dbeta)`` in the dtype of x; `mean` and `rstd` are what
    :func:`layer_norm` saved (`eps` is already inside rstd).
    """
    check_eps(eps)
    x = np.asarray(x)
    rows, drows = _rows(x), _rows(np.asarray(dy))
    size = rows.shape[1]
    d_dx = cuda.device_array(rows.shape, rows.dtype)
    blocks = partial_blocks(rows.shape[0])
    d_part = cuda.device_array((2, blocks, size), np.float32)
    d_dgamma, d_dbeta = (cuda.device_array(size, np.float32) for _ in range(2))
    stats = (cuda.to_device(np.ascontiguousarray(s, np.float32).ravel()) for s in (mean, rstd))
    d_gamma = cuda.to_device(_parameter(gamma, size, 1.0))
    launch_backward(
        cuda.to_device(drows), cuda.to_device(rows), d_gamma, *stats, d_dx, d_part,
        d_dgamma, d_dbeta,
    )  # fmt: skip
    return _back(d_dx, x), _back(d_dgamma, x, params=True), _back(d_dbeta, x, params=True)


@_paced
def add_rms_norm(x, residual, gamma=None, eps: float = 1e-6):
    """Kernel 5 on numpy arrays: ``(s, y, rstd)`` with ``s = x + residual`` and y = RMSNorm(s)
    (chapter "LayerNorm on a GPU"). With a zero residual it is an RMSNorm, as
    :func:`lnlib.harness.check_rms_norm` calls one (``[1:]``: y and the saved rstd)."""
    check_eps(eps)
    x = np.asarray(x)
    rows, res = _rows(x), _rows(np.asarray(residual, dtype=x.dtype))
    d_s, d_y = (cuda.device_array(rows.shape, rows.dtype) for _ in range(2))
    d_rstd = cuda.device_array(rows.shape[0], np.float32)
    d_gamma = cuda.to_device(_parameter(gamma, rows.shape[1], 1.0))
    launch_add_rms(cuda.to_device(rows), cuda.to_device(res), d_gamma, eps, d_s, d_y, d_rstd)
    return _back(d_s, x), _back(d_y, x), _back(d_rstd, x, stats=True)


@_paced
def rms_norm_backward(dy, s, gamma, eps: float, rstd, *, stage_1=None):
    """RMSNorm's backward kernels (both stages) on numpy arrays, as
    :func:`lnlib.harness.check_rms_norm` calls them (chapter "LayerNorm on a GPU").

    Returns ``(ds, dgamma)`` in the dtype of s; `rstd` is what :func:`add_rms_norm` saved
    (`eps` is already inside it); `stage_1` replaces ``kernels.rms_backward_rows`` (as
    :mod:`lnlib.gpu.bugs` does). In a block, ds is the norm's share of the stream's gradient:
    the caller adds the gradient the stream carries past the norm.
    """
    check_eps(eps)
    s = np.asarray(s)
    rows, drows = _rows(s), _rows(np.asarray(dy))
    size = rows.shape[1]
    d_ds = cuda.device_array(rows.shape, rows.dtype)
    d_part = cuda.device_array((partial_blocks(rows.shape[0]), size), np.float32)
    d_dgamma = cuda.device_array(size, np.float32)
    d_rstd = cuda.to_device(np.ascontiguousarray(rstd, np.float32).ravel())
    d_gamma = cuda.to_device(_parameter(gamma, size, 1.0))
    launch_rms_backward(
        cuda.to_device(drows),
        cuda.to_device(rows),
        d_gamma,
        d_rstd,
        d_ds,
        d_part,
        d_dgamma,
        stage_1,
    )
    return _back(d_ds, s), _back(d_dgamma, s, params=True)


def add_rms_norm_backward(dy, ds, s, gamma, eps: float, rstd):
    """Kernel 5's backward pass as a block runs it: :func:`rms_norm_backward`'s ds (the norm's
    share), plus `ds`, the gradient the stream carries past the norm, added in float32 and rounded
    once to s's dtype. ``(dx, dgamma)``, dx the gradient of x and of the residual alike: in
    :func:`lnlib.harness_add.check_add_rms_norm`'s signature (chapter "LayerNorm on a GPU")."""
    norm_share, dgamma = rms_norm_backward(dy, s, gamma, eps, rstd)
    total = norm_share.astype(np.float32) + np.asarray(ds).astype(np.float32)
    return total.astype(norm_share.dtype), dgamma


def _back(device_array, like: np.ndarray, stats: bool = False, params: bool = False):
    """A device array copied to the host: shaped as `like` (its rows, or its last axis), in its
    dtype."""
    host = device_array.copy_to_host()
    if stats:
        return host.reshape(like.shape[:-1])
    return host.reshape(like.shape[-1:] if params else like.shape).astype(like.dtype)
