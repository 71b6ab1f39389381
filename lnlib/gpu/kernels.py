"""The chapter's CUDA kernels, in numba-cuda (chapter "LayerNorm on a GPU"): LayerNorm's, and
RMSNorm's fused with the residual add (kernel 5) with its backward.

Each kernel normalizes the rows of a 2-D array ``x`` of M rows of H features,
stored in float32 or float16, and computes in float32 (as PyTorch's, llm.c's and
Triton's kernels do). Blocks are one warp, :data:`BLOCK` = 32 threads, so that a
block-wide barrier is also a warp-wide one; every kernel is short enough to read
on the page, and the chapter prints each one.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda
from numba.cuda.core import config

#: Threads per block: one warp.
BLOCK = 32
F32 = numba.float32


@cuda.jit(device=True)
def _hardware_warp_sum(value):
    """Butterfly: after 5 shuffles every lane holds the sum of all 32."""
    offset = 16
    while offset > 0:
        value += cuda.shfl_xor_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    return value


def _simulated_warp_sum(value):
    """The simulator has no shuffles: the lanes pool their values in shared
    memory and each does the butterfly's additions, in its order, itself."""
    pool = cuda.shared.array(BLOCK, numba.float32)
    lane = cuda.threadIdx.x
    pool[lane] = value
    cuda.syncthreads()
    values, lanes = pool.copy(), np.arange(BLOCK)
    cuda.syncthreads()  # all have read the pool before it is reused
    offset = 16
    while offset > 0:
        values = values + values[lanes ^ offset]
        offset //= 2
    return values[lane]


if config.ENABLE_CUDASIM:
    warp_sum = cuda.jit(device=True)(_simulated_warp_sum)
else:
    warp_sum = _hardware_warp_sum


@cuda.jit(device=True)
def block_sum(part, value):
    """Tree sum in shared memory `part`; every thread gets the total."""
    t = cuda.threadIdx.x
    part[t] = value
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if t < half:
            part[t] += part[t + half]
        cuda.syncthreads()  # the next level reads what this one wrote
        half //= 2
    total = part[0]
    cuda.syncthreads()  # everyone has read part[0] before it is reused
    return total


@cuda.jit
def forward_thread_per_row(x, gamma, beta, eps, y, mean, rstd):
    """Kernel 1: one thread per row, three plain loops over its row."""
    row = cuda.grid(1)
    if row >= x.shape[0]:
        return
    size = x.shape[1]
    total = F32(0)
    for i in range(size):
        total += F32(x[row, i])
    mu = total / F32(size)
    total = F32(0)
    for i in range(size):
        d = F32(x[row, i]) - mu
        total += d * d
    r = F32(1) / math.sqrt(total / F32(size) + eps)
    for i in range(size):
        y[row, i] = (F32(x[row, i]) - mu) * r * gamma[i] + beta[i]
    mean[row] = mu
    rstd[row] = r


@cuda.jit
def forward_block_per_row(x, gamma, beta, eps, y, mean, rstd):
    """Kernel 2: one block per row; threads stride, shared memory sums."""
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    size, step = x.shape[1], cuda.blockDim.x
    part = cuda.shared.array(BLOCK, numba.float32)
    total = F32(0)
    for i in range(t, size, step):
        total += F32(x[row, i])
    mu = block_sum(part, total) / F32(size)
    total = F32(0)
    for i in range(t, size, step):
        d = F32(x[row, i]) - mu
        total += d * d
    r = F32(1) / math.sqrt(block_sum(part, total) / F32(size) + eps)
    for i in range(t, size, step):
        y[row, i] = (F32(x[row, i]) - mu) * r * gamma[i] + beta[i]
    if t == 0:
        mean[row] = mu
        rstd[row] = r


@cuda.jit
def forward_warp_per_row(x, gamma, beta, eps, y, mean, rstd):
    """Kernel 3: one warp per row; the lanes sum with shuffles."""
    row, lane = cuda.blockIdx.x, cuda.threadIdx.x
    size = x.shape[1]
    total = F32(0)
    for i in range(lane, size, BLOCK):
        total += F32(x[row, i])
    mu = warp_sum(total) / F32(size)
    total = F32(0)
    for i in range(lane, size, BLOCK):
        d = F32(x[row, i]) - mu
        total += d * d
    r = F32(1) / math.sqrt(warp_sum(total) / F32(size) + eps)
    for i in range(lane, size, BLOCK):
        y[row, i] = (F32(x[row, i]) - mu) * r * gamma[i] + beta[i]
    if lane == 0:
        mean[row] = mu
        rstd[row] = r


@cuda.jit
def add_layer_norm(x, res, gamma, beta, eps, s, y, mean, rstd):
    """Kernel 4: s = x + res, stored, and y = LayerNorm(s), one warp a row."""
    row, lane = cuda.blockIdx.x, cuda.threadIdx.x
    size = x.shape[1]
    total = F32(0)
    for i in range(lane, size, BLOCK):
        s[row, i] = F32(x[row, i]) + F32(res[row, i])
        total += F32(s[row, i])  # the rounded sum the next layer reads
    mu = warp_sum(total) / F32(size)
    total = F32(0)
    for i in range(lane, size, BLOCK):
        d = F32(s[row, i]) - mu
        total += d * d
    r = F32(1) / math.sqrt(warp_sum(total) / F32(size) + eps)
    for i in range(lane, size, BLOCK):
        y[row, i] = (F32(s[row, i]) - mu) * r * gamma[i] + beta[i]
    if lane == 0:
        mean[row] = mu
        rstd[row] = r


@cuda.jit
def backward_rows(dy, x, gamma, mean, rstd, dx, dgamma_part, dbeta_part):
    """Backward, stage 1: a warp per row for dx; then each lane sums the block's
    rows of dy * xhat and dy for its own features in registers and stores each
    sum once, into row b of the partial sums (no other block writes it)."""
    block, lane = cuda.blockIdx.x, cuda.threadIdx.x
    rows, size = x.shape
    for row in range(block, rows, cuda.gridDim.x):
        mu, r = mean[row], rstd[row]
        g_sum, gx_sum = F32(0), F32(0)
        for i in range(lane, size, BLOCK):
            xhat = (F32(x[row, i]) - mu) * r
            g = gamma[i] * F32(dy[row, i])
            g_sum += g
            gx_sum += g * xhat
        g_mean = warp_sum(g_sum) / F32(size)
        gx_mean = warp_sum(gx_sum) / F32(size)
        for i in range(lane, size, BLOCK):
            xhat = (F32(x[row, i]) - mu) * r
            g = gamma[i] * F32(dy[row, i])
            dx[row, i] = (g - g_mean - xhat * gx_mean) * r
    for i in range(lane, size, BLOCK):
        dgamma, dbeta = F32(0), F32(0)
        for row in range(block, rows, cuda.gridDim.x):
            xhat = (F32(x[row, i]) - mean[row]) * rstd[row]
            dgamma += F32(dy[row, i]) * xhat
            dbeta += F32(dy[row, i])
        dgamma_part[block, i] = dgamma
        dbeta_part[block, i] = dbeta


@cuda.jit
def sum_partials(part, total):
    """Backward, stage 2: one thread per feature adds the blocks' rows."""
    i = cuda.grid(1)
    if i < part.shape[1]:
        acc = F32(0)
        for b in range(part.shape[0]):
            acc += part[b, i]
        total[i] = acc


@cuda.jit
def add_rms_norm(x, res, gamma, eps, s, y, rstd):
    """Kernel 5: s = x + res, stored, and y = RMSNorm(s) = γ·s·rstd, one warp
    a row. No mean: one sum (of squares), one saved statistic, no β."""
    row, lane = cuda.blockIdx.x, cuda.threadIdx.x
    size = x.shape[1]
    total = F32(0)
    for i in range(lane, size, BLOCK):
        s[row, i] = F32(x[row, i]) + F32(res[row, i])
        v = F32(s[row, i])  # the rounded sum the next layer reads
        total += v * v
    r = F32(1) / math.sqrt(warp_sum(total) / F32(size) + eps)
    for i in range(lane, size, BLOCK):
        y[row, i] = F32(s[row, i]) * r * gamma[i]
    if lane == 0:
        rstd[row] = r


@cuda.jit
def rms_backward_rows(dy, s, gamma, rstd, ds, dgamma_part):
    """RMSNorm backward, stage 1: a warp a row for ds = rstd·(g − ŝ·mean(g·ŝ)),
    g = γ·dy, ŝ = s·rstd (one row sum, not LayerNorm's two); then each lane
    sums dy·ŝ over the block's rows for its features into partial row b."""
    block, lane = cuda.blockIdx.x, cuda.threadIdx.x
    rows, size = s.shape
    for row in range(block, rows, cuda.gridDim.x):
        r = rstd[row]
        gs_sum = F32(0)
        for i in range(lane, size, BLOCK):
            gs_sum += gamma[i] * F32(dy[row, i]) * (F32(s[row, i]) * r)
        gs_mean = warp_sum(gs_sum) / F32(size)
        for i in range(lane, size, BLOCK):
            shat = F32(s[row, i]) * r
            ds[row, i] = (gamma[i] * F32(dy[row, i]) - shat * gs_mean) * r
    for i in range(lane, size, BLOCK):
        dgamma = F32(0)
        for row in range(block, rows, cuda.gridDim.x):
            dgamma += F32(dy[row, i]) * (F32(s[row, i]) * rstd[row])
        dgamma_part[block, i] = dgamma
