"""Planted GPU bugs for the harness to catch (chapter "LayerNorm on a GPU").

Each is one of the chapter's kernels with one mistake GPU code is known for;
:func:`lnlib.harness.check_layer_norm` must fail every one (the tests check it):

- :func:`no_barrier_forward`: the shared-memory tree sum without the barrier
  between its levels, so a thread reads a partial sum before it is written;
- :func:`whole_blocks_forward`: strides that assume H is a multiple of the block,
  dropping the last ``H % 32`` features of each row;
- :func:`half_statistics_forward`: kernel 1 with its sums kept in the storage
  dtype (16 bits for float16) instead of float32;
- :func:`racy_backward`: dγ and dβ added straight into one shared vector by
  every thread, with a plain load and store, instead of the two-stage reduction;
- :func:`centred_rms_backward`: RMSNorm's backward with LayerNorm's ds, which also
  subtracts the row's mean of γ·dy, a mean RMSNorm never took
  (:func:`lnlib.harness.check_rms_norm` must fail it).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .kernels import BLOCK, F32, warp_sum
from .launch import _paced, _parameter, _rows, layer_norm, rms_norm_backward


@cuda.jit(device=True)
def _sum_without_barrier(part, value):
    t = cuda.threadIdx.x
    part[t] = value
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if t < half:
            part[t] += part[t + half]
        half //= 2  # BUG: no cuda.syncthreads() between the levels
    total = part[0]
    cuda.syncthreads()
    return total


@cuda.jit
def _no_barrier(x, gamma, beta, eps, y, mean, rstd):
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    size, step = x.shape[1], cuda.blockDim.x
    part = cuda.shared.array(BLOCK, np.float32)
    total = F32(0)
    for i in range(t, size, step):
        total += F32(x[row, i])
    mu = _sum_without_barrier(part, total) / F32(size)
    total = F32(0)
    for i in range(t, size, step):
        d = F32(x[row, i]) - mu
        total += d * d
    r = F32(1) / math.sqrt(_sum_without_barrier(part, total) / F32(size) + eps)
    for i in range(t, size, step):
        y[row, i] = (F32(x[row, i]) - mu) * r * gamma[i] + beta[i]
    if t == 0:
        mean[row], rstd[row] = mu, r


@cuda.jit(device=True)
def _block_sum(part, value):
    t = cuda.threadIdx.x
    part[t] = value
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if t < half:
            part[t] += part[t + half]
        cuda.syncthreads()
        half //= 2
    total = part[0]
    cuda.syncthreads()
    return total


@cuda.jit
def _whole_blocks(x, gamma, beta, eps, y, mean, rstd):
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    size, step = x.shape[1], cuda.blockDim.x
    part = cuda.shared.array(BLOCK, np.float32)
    total = F32(0)
    for k in range(size // step):  # BUG: the last size % step are never read
        total += F32(x[row, k * step + t])
    mu = _block_sum(part, total) / F32(size)
    total = F32(0)
    for k in range(size // step):
        d = F32(x[row, k * step + t]) - mu
        total += d * d
    r = F32(1) / math.sqrt(_block_sum(part, total) / F32(size) + eps)
    for i in range(t, size, step):
        y[row, i] = (F32(x[row, i]) - mu) * r * gamma[i] + beta[i]
    if t == 0:
        mean[row], rstd[row] = mu, r


@cuda.jit
def _half_statistics(x, gamma, beta, eps, y, mean, rstd):
    row = cuda.grid(1)
    if row >= x.shape[0]:
        return
    size = x.shape[1]
    total = x[row, 0] - x[row, 0]  # BUG: a zero of the storage dtype
    for i in range(size):
        total += x[row, i]
    mu = total / size
    total = x[row, 0] - x[row, 0]
    for i in range(size):
        d = x[row, i] - mu
        total += d * d
    r = F32(1) / math.sqrt(F32(total / size) + eps)
    for i in range(size):
        y[row, i] = (F32(x[row, i]) - F32(mu)) * r * gamma[i] + beta[i]
    mean[row], rstd[row] = mu, r


@cuda.jit
def _racy_rows(dy, x, gamma, mean, rstd, dx, dgamma, dbeta):
    row = cuda.grid(1)
    rows, size = x.shape
    live = row < rows
    g_sum, gx_sum = F32(0), F32(0)
    if live:
        mu, r = mean[row], rstd[row]
        for i in range(size):
            xhat = (F32(x[row, i]) - mu) * r
            g = gamma[i] * F32(dy[row, i])
            g_sum += g
            gx_sum += g * xhat
        for i in range(size):
            xhat = (F32(x[row, i]) - mu) * r
            g = gamma[i] * F32(dy[row, i])
            dx[row, i] = (g - g_sum / size - xhat * gx_sum / size) * r
    for i in range(size):
        # BUG: every thread adds into the same dgamma[i]: a plain load ...
        old_g, old_b = dgamma[i], dbeta[i]
        # ... the 32 lanes of a warp load together, then store together
        # (the barrier makes the simulator keep a warp's lockstep order) ...
        cuda.syncthreads()
        if live:
            xhat = (F32(x[row, i]) - mean[row]) * rstd[row]
            dgamma[i] = old_g + F32(dy[row, i]) * xhat  # ... one store wins
            dbeta[i] = old_b + F32(dy[row, i])
        cuda.syncthreads()


def no_barrier_forward(x, gamma, beta, eps):
    """Kernel 2 with the barrier between the tree sum's levels left out."""
    return layer_norm(x, gamma, beta, eps, kernel=(_no_barrier, "blocks"))


def whole_blocks_forward(x, gamma, beta, eps):
    """Kernel 2 with strides that assume H is a multiple of the block."""
    return layer_norm(x, gamma, beta, eps, kernel=(_whole_blocks, "blocks"))


def half_statistics_forward(x, gamma, beta, eps):
    """Kernel 1 with its mean and variance summed in the storage dtype."""
    return layer_norm(x, gamma, beta, eps, kernel=(_half_statistics, "threads"))


@_paced
def racy_backward(dy, x, gamma, eps, mean, rstd):
    """A one-stage backward: every thread adds its row into dγ and dβ directly."""
    x = np.asarray(x)
    rows, drows = _rows(x), _rows(np.asarray(dy))
    size = rows.shape[1]
    d_dx = cuda.device_array(rows.shape, rows.dtype)
    d_dgamma = cuda.to_device(np.zeros(size, np.float32))
    d_dbeta = cuda.to_device(np.zeros(size, np.float32))
    stats = [cuda.to_device(np.ascontiguousarray(s, np.float32).ravel()) for s in (mean, rstd)]
    d_gamma = cuda.to_device(_parameter(gamma, size, 1.0))
    _racy_rows[math.ceil(rows.shape[0] / BLOCK), BLOCK](
        cuda.to_device(drows), cuda.to_device(rows), d_gamma, *stats, d_dx, d_dgamma, d_dbeta
    )
    return tuple(
        d.copy_to_host().reshape(shape).astype(x.dtype)
        for d, shape in ((d_dx, x.shape), (d_dgamma, x.shape[-1:]), (d_dbeta, x.shape[-1:]))
    )


@cuda.jit
def _centred_rms_rows(dy, s, gamma, rstd, ds, dgamma_part):
    block, lane = cuda.blockIdx.x, cuda.threadIdx.x
    rows, size = s.shape
    for row in range(block, rows, cuda.gridDim.x):
        r = rstd[row]
        g_sum, gs_sum = F32(0), F32(0)
        for i in range(lane, size, BLOCK):
            g = gamma[i] * F32(dy[row, i])
            g_sum += g
            gs_sum += g * (F32(s[row, i]) * r)
        g_mean = warp_sum(g_sum) / F32(size)
        gs_mean = warp_sum(gs_sum) / F32(size)
        for i in range(lane, size, BLOCK):
            shat = F32(s[row, i]) * r
            g = gamma[i] * F32(dy[row, i])
            ds[row, i] = (g - g_mean - shat * gs_mean) * r  # BUG: - g_mean, LayerNorm's term
    for i in range(lane, size, BLOCK):
        dgamma = F32(0)
        for row in range(block, rows, cuda.gridDim.x):
            dgamma += F32(dy[row, i]) * (F32(s[row, i]) * rstd[row])
        dgamma_part[block, i] = dgamma


def centred_rms_backward(dy, s, gamma, eps, rstd):
    """RMSNorm's two-stage backward with LayerNorm's ds: it subtracts the mean of γ·dy too."""
    return rms_norm_backward(dy, s, gamma, eps, rstd, stage_1=_centred_rms_rows)
