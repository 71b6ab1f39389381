"""A Triton LayerNorm for ``make bench-gpu``, written after Triton's layer-norm tutorial (chapter
"LayerNorm on a GPU").

The design of ``python/tutorials/05-layer-norm.py`` in Triton's repository: one program per
row holds the whole row in registers (a power-of-two block, masked), computes the statistics in
float32 and writes y, mean and rstd; the backward writes dx per row and reduces dγ and dβ in two
stages. Where the tutorial's programs (one per row) add into a few partial buffers under locks,
here each program takes a run of rows and writes its own partial row (no lock, as in
``lnlib.gpu``'s stage 1); stage 2 sums the partial rows with ``torch.sum``. Imported only where
Triton is installed.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

#: The most programs (rows of partial sums) the backward's stage 1 launches.
MAX_PARTIALS = 1024


@triton.jit
def _forward(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    y = diff * rstd * w + b
    tl.store(Y + row * stride + cols, y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)


@triton.jit
def _backward_rows(
    DX, DY, PartW, PartB, X, W, Mean, Rstd, stride, N, M, ROWS: tl.constexpr, BLOCK: tl.constexpr
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, ROWS):
        row = pid * ROWS + r
        live = row < M
        where = mask & live
        x = tl.load(X + row * stride + cols, mask=where, other=0.0).to(tl.float32)
        dy = tl.load(DY + row * stride + cols, mask=where, other=0.0).to(tl.float32)
        mean = tl.load(Mean + row, mask=live, other=0.0)
        rstd = tl.load(Rstd + row, mask=live, other=0.0)
        xhat = tl.where(where, (x - mean) * rstd, 0.0)
        g = w * dy
        c1 = tl.sum(xhat * g, axis=0) / N
        c2 = tl.sum(g, axis=0) / N
        dx = (g - (xhat * c1 + c2)) * rstd
        tl.store(DX + row * stride + cols, dx.to(DX.dtype.element_ty), mask=where)
        dw += dy * xhat
        db += dy
    tl.store(PartW + pid * N + cols, dw, mask=mask)
    tl.store(PartB + pid * N + cols, db, mask=mask)


def _config(size: int) -> tuple[int, int]:
    block = triton.next_power_of_2(size)
    return block, min(max(block // 256, 1), 8)  # the tutorial's choice of warps


def forward(x, weight, bias, eps: float = 1e-5):
    """y, mean, rstd of a contiguous 2-D `x` on the GPU."""
    rows, size = x.shape
    y = torch.empty_like(x)
    mean, rstd = (torch.empty(rows, device=x.device, dtype=torch.float32) for _ in range(2))
    block, warps = _config(size)
    _forward[(rows,)](
        x, y, weight, bias, mean, rstd, x.stride(0), size, eps, BLOCK=block, num_warps=warps
    )
    return y, mean, rstd


def backward(dy, x, weight, mean, rstd):
    """dx, dγ, dβ: stage 1 per run of rows, stage 2 a sum over the partial rows."""
    rows, size = x.shape
    programs = min(rows, MAX_PARTIALS)
    per_program = triton.cdiv(rows, programs)
    dx = torch.empty_like(x)
    part = torch.empty((2, programs, size), device=x.device, dtype=torch.float32)
    block, warps = _config(size)
    _backward_rows[(programs,)](
        dx, dy, part[0], part[1], x, weight, mean, rstd, x.stride(0), size, rows,
        ROWS=per_program, BLOCK=block, num_warps=warps,
    )  # fmt: skip
    sums = part.sum(dim=1)
    return dx, sums[0].to(weight.dtype), sums[1].to(weight.dtype)
