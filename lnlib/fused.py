"""Fused LayerNorm kernels for the CPU, compiled with numba (chapter "LayerNorm
at the speed of memory").

A fused kernel visits each row once: it reads the row, computes the mean and
the reciprocal standard deviation while the row sits in cache, and writes the
output, so main memory sees one read of x and one write of y (the floor the
chapter measures). The backward pass reads x and dy once, writes dx, and adds
each row's share of dγ and dβ into per-thread partial sums, merged at the end.

Statistics are kept in float32 for float16 and bfloat16 storage (as PyTorch's
kernels do), and in the data's own dtype for float32 and float64. The 16-bit
rows are converted to float32 in a per-thread row buffer (decoded from their
bits, so the kernels need no 16-bit support from numba) and the output is
rounded once, to nearest even.

How the kernels keep api.md's "How lnlib computes, everywhere" without a second
pass over x:

- huge or tiny finite inputs: the fast path squares unscaled deviations, so
  after it a check of two numbers per row (mean and rstd) finds the rows it
  cannot trust: a mean that is not finite, an rstd that is 0 or not finite (the
  squares overflowed, or var + eps is 0), or var + eps = 1 / rstd² below
  H·tiny/u (the squares may have underflowed). Those rows, and only those, are
  recomputed by :func:`lnlib.forward.layer_norm`, which scales each row by a
  power of two; float32 1e20, float64 1e200 and bfloat16 1e20 are normalized
  right.
- bad input gets the forward pass's errors: NaN or infinity in x (found through
  its row's mean), ε = 0 with a constant row, an ε that rounds to 0 in the
  compute dtype, and γ or β that are complex (``TypeError``), not finite, or
  overflow the compute dtype once rounded to it.
- an output that overflows its storage dtype (float16 with a large γ or β) is
  refused with the forward pass's ``ValueError``; y is read again for this only
  when ``max|γ|·sqrt(H - 1) + max|β|`` reaches half the dtype's largest value
  (``|x̂| <= sqrt(H - 1)`` always), so ordinary calls never pay for it.

What they do not keep: the backward pass does not read dx again, so a dx
beyond the storage range (float16, with a large dy·γ·rstd) comes out as
infinity instead of an error, as in PyTorch's kernels; a NaN, infinite or too
large dy is still refused, because every dy enters the sums dβ and dγ, which
are checked (H numbers). Only the last axis is normalized, and x must already
be one of the four storage dtypes (lnlib.forward also promotes integers).

numba is an optional dependency (``pip install "lnlib[kernels]"``). Without it,
``import lnlib.fused`` works; calling a kernel with ``compiled=True`` (the
default) raises an ImportError that says how to install it, and
``compiled=False`` runs the very same Python source uncompiled: slow, but right,
which is how the chapter checks the kernels on any machine. The two agree to
rounding, not bit for bit: compiled, a row's sums are split over SIMD lanes and
multiply-adds fused (``fastmath`` reassociation and contraction), so its float32
or float64 results differ from the uncompiled ones by a few units of the compute
dtype (a 16-bit output can then round to the neighbouring value); rows
recomputed by lnlib.forward, and every error, are the same in both modes.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

import numpy as np

from .backward import accumulator, parameter_overflow_cause
from .forward import layer_norm, to_storage
from .validation import BFLOAT16, as_parameter, check_eps, check_finite, float_info, gradient_dtype

__all__ = [
    "STATISTICS",
    "numba_available",
    "fused_layer_norm",
    "fused_add_layer_norm",
    "fused_layer_norm_backward",
    "set_threads",
    "threads",
]

#: tuple of str: How the forward kernel can compute a row's statistics, two
#: sweeps over the row held in cache or Welford's single sweep.
STATISTICS = ("two_pass", "welford")
#: The storage dtypes the kernels take, by name.
STORAGE = {
    "float64": np.dtype(np.float64),
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": BFLOAT16,
}
_INSTALL = (
    'the fused kernels need numba: pip install "lnlib[kernels]" (the student '
    "edition: pip install -r requirements-kernels.txt)"
)
#: numba's fast-math flags for the kernels: reassociation only, so a row's sums
#: can be split over SIMD lanes (the order of additions changes, as in every
#: vectorized sum); NaN and infinity keep their IEEE meaning.
_FASTMATH = {"reassoc", "contract"}


def numba_available() -> bool:
    """True when numba can be imported, so the kernels can be compiled."""
    try:
        importlib.import_module("numba")
    except ImportError:
        return False
    return True


def _numba():
    try:
        return importlib.import_module("numba")
    except ImportError as exc:
        raise ImportError(_INSTALL) from exc


# ---------------------------------------------------------------------------------------------
# Row loaders and storers. A kernel calls load(x_row, buffer) -> the row as an
# array of the compute dtype, target(y_row, buffer) -> where to write the
# output, store(y_row, buffer) -> after. Storage in the compute dtype is used in
# place; 16-bit storage is decoded into the buffer.


def _load_native(row, buffer):
    return row


def _target_native(row, buffer):
    return row


def _store_native(row, buffer):
    return None


def _load_bfloat16(row, buffer):
    bits = buffer.view(np.uint32)
    for j in range(row.shape[0]):
        bits[j] = np.uint32(row[j]) << np.uint32(16)
    return buffer


def _store_bfloat16(row, buffer):
    bits = buffer.view(np.uint32)
    for j in range(row.shape[0]):
        b = bits[j]
        if (b & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):  # NaN stays a (quiet) NaN
            row[j] = np.uint16((b >> np.uint32(16)) | np.uint32(0x40))
        else:  # round to nearest, ties to even
            odd = (b >> np.uint32(16)) & np.uint32(1)
            row[j] = np.uint16((b + np.uint32(0x7FFF) + odd) >> np.uint32(16))
    return None


#: float32 value of every float16 bit pattern (256 KB, stays in cache): decoding
#: is one table look-up.
_FLOAT16_VALUES = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32)


def _load_float16(row, buffer):
    for j in range(row.shape[0]):
        buffer[j] = _FLOAT16_VALUES[row[j]]
    return buffer


def _make_store_float16(float16_bits):
    """The float16 storer; it calls `float16_bits` (compiled, or not, as the
    kernel) outside the normal range."""
    def store(row, buffer):
        bits = buffer.view(np.uint32)
        outside = False
        for j in range(row.shape[0]):  # normal range: branch-free, vectorizable
            b = bits[j]
            magnitude = b & np.uint32(0x7FFFFFFF)
            outside |= ((magnitude < np.uint32(0x38800000))
                        | (magnitude >= np.uint32(0x477FF000)))
            odd = (magnitude >> np.uint32(13)) & np.uint32(1)  # ties to even
            rounded = (magnitude + np.uint32(0xFFF) + odd) >> np.uint32(13)
            sign = (b >> np.uint32(16)) & np.uint32(0x8000)
            rebased = max(rounded, np.uint32(0x1C000)) - np.uint32(0x1C000)
            row[j] = np.uint16(sign | rebased)
        if outside:  # subnormal, zero, overflow, inf, NaN: redo value by value
            for j in range(row.shape[0]):
                row[j] = float16_bits(bits[j])
        return None
    return store


def _float16_bits(b):
    """The float16 bits nearest (ties to even) to the float32 with bits `b`."""
    sign = (b >> np.uint32(16)) & np.uint32(0x8000)
    # rebased to float16's bias
    exponent = np.int32((b >> np.uint32(23)) & np.uint32(0xFF)) - np.int32(112)
    mantissa = b & np.uint32(0x7FFFFF)
    if exponent == 143:  # infinity or NaN
        half = np.uint32(0x7C00) | (np.uint32(0x200) if mantissa else np.uint32(0))
    elif exponent >= 31:
        half = np.uint32(0x7C00)
    elif exponent <= 0:  # a float16 subnormal, or zero
        if exponent < -10:
            half = np.uint32(0)
        else:
            mantissa = mantissa | np.uint32(0x800000)
            shift = np.uint32(14 - exponent)
            half = mantissa >> shift
            rest = mantissa & ((np.uint32(1) << shift) - np.uint32(1))
            tie = np.uint32(1) << (shift - np.uint32(1))
            if rest > tie or (rest == tie and (half & np.uint32(1))):
                half += np.uint32(1)
    else:
        half = (np.uint32(exponent) << np.uint32(10)) | (mantissa >> np.uint32(13))
        rest = mantissa & np.uint32(0x1FFF)
        if rest > np.uint32(0x1000) or (rest == np.uint32(0x1000) and (half & np.uint32(1))):
            # a carry into the exponent rounds up to the next binade, or to infinity
            half += np.uint32(1)
    return np.uint16(sign | half)


def _target_buffer(row, buffer):
    return buffer


# ---------------------------------------------------------------------------------------------
# The kernels, written once as plain Python over rows; _build compiles them for
# one storage kind.


def _make_forward(load, target, store, prange, welford):
    # load, target, store: read a row, where to write y, then write it back
    # (16-bit rows pass through a float32 buffer); prange: numba's parallel
    # range when compiled, plain range otherwise. zero and one are computed
    # from n so they share its type: a literal 0.0 is float64 to numba.
    def forward(x, gamma, beta, eps, n, y, mean, rstd, chunks, bufs, outs):
        rows, size = x.shape
        zero, one = n - n, n / n  # typed as n (H, a float32 or float64)
        for chunk in prange(chunks):  # one block of rows per thread
            first = chunk * rows // chunks
            last = (chunk + 1) * rows // chunks
            for r in range(first, last):
                row = load(x[r], bufs[chunk])  # 16-bit: decoded to float32
                if welford:  # one sweep: running mean, M2
                    mu, m2, count = zero, zero, zero
                    for j in range(size):
                        count += one
                        delta = row[j] - mu
                        mu += delta / count
                        m2 += delta * (row[j] - mu)
                    var = m2 / n
                else:  # two sweeps; the row is in cache for the second
                    total = zero
                    for j in range(size):
                        total += row[j]
                    mu = total / n
                    squares = zero
                    for j in range(size):
                        d = row[j] - mu
                        squares += d * d
                    var = squares / n
                r_std = one / np.sqrt(var + eps)
                out = target(y[r], outs[chunk])
                for j in range(size):  # the one write of y
                    out[j] = (row[j] - mu) * r_std * gamma[j] + beta[j]
                store(y[r], outs[chunk])  # 16-bit: rounded once
                mean[r], rstd[r] = mu, r_std
    return forward


def _make_backward(load, target, store, prange):
    def backward(dy, x, gamma, n, mean, rstd, dx, dgammas, dbetas,
                 chunks, bufs, outs):
        rows, size = x.shape
        zero = n - n  # typed as n (H, a float32 or float64), unlike 0.0
        for chunk in prange(chunks):  # one block of rows per thread
            dgamma, dbeta = dgammas[chunk], dbetas[chunk]  # its partial sums
            first = chunk * rows // chunks
            last = (chunk + 1) * rows // chunks
            for r in range(first, last):
                xr = load(x[r], bufs[chunk, 0])
                dyr = load(dy[r], bufs[chunk, 1])
                mu, r_std = mean[r], rstd[r]
                sum_g, sum_gx = zero, zero
                for j in range(size):  # the row's two sums, and dγ, dβ
                    xhat = (xr[j] - mu) * r_std
                    g = dyr[j] * gamma[j]
                    sum_g += g
                    sum_gx += g * xhat
                    dgamma[j] += dyr[j] * xhat
                    dbeta[j] += dyr[j]
                mean_g, mean_gx = sum_g / n, sum_gx / n
                out = target(dx[r], outs[chunk])
                for j in range(size):  # the one write of dx
                    xhat = (xr[j] - mu) * r_std
                    g = dyr[j] * gamma[j]
                    out[j] = (g - mean_g - xhat * mean_gx) * r_std
                store(dx[r], outs[chunk])
    return backward


def _make_add(load, target, store, prange):
    # s = x + residual, rounded once to the storage dtype as a kernel stores it
    def add(x, residual, s, chunks, bufs, outs):
        rows, size = x.shape
        for chunk in prange(chunks):  # one block of rows per thread
            first = chunk * rows // chunks
            last = (chunk + 1) * rows // chunks
            for r in range(first, last):
                a = load(x[r], bufs[chunk, 0])
                b = load(residual[r], bufs[chunk, 1])
                out = target(s[r], outs[chunk])
                for j in range(size):
                    out[j] = a[j] + b[j]
                store(s[r], outs[chunk])
    return add


_KINDS = {
    "native": (_load_native, _target_native, _store_native),
    "float16": (_load_float16, _target_buffer, None),  # the storer is made by _make_store_float16
    "bfloat16": (_load_bfloat16, _target_buffer, _store_bfloat16),
}


#: Below this many elements the compiled kernels run on the calling thread:
#: starting the thread pool costs more than the work (PyTorch's at::parallel_for
#: has a grain size for the same reason).
PARALLEL_MIN_ELEMENTS = 2**16


@lru_cache(maxsize=None)
def _build(kind: str, part: str, compiled: bool, welford: bool = False, parallel: bool = True):
    """The kernel `part` ("forward", "add" or "backward") for storage `kind`,
    compiled by numba or as plain Python."""
    load, target, store = _KINDS[kind]
    if compiled:
        numba = _numba()
        jit = numba.njit(fastmath=_FASTMATH, nogil=True, error_model="numpy")
        if kind == "float16":
            store = _make_store_float16(jit(_float16_bits))
        load, target, store = jit(load), jit(target), jit(store)
        prange = numba.prange if parallel else range
        wrap = numba.njit(parallel=parallel, fastmath=_FASTMATH, nogil=True, error_model="numpy")
    else:
        prange, wrap = range, (lambda f: f)
        if kind == "float16":
            store = _make_store_float16(_float16_bits)
    if part == "forward":
        return wrap(_make_forward(load, target, store, prange, welford))
    if part == "add":
        return wrap(_make_add(load, target, store, prange))
    return wrap(_make_backward(load, target, store, prange))


def threads() -> int:
    """How many threads the compiled kernels use (numba's setting); 1 without
    numba."""
    return _numba().get_num_threads() if numba_available() else 1


def set_threads(count: int) -> None:
    """Let the compiled kernels use `count` threads (at most the machine's
    cores), as for the chapter's 1-thread and all-core runs."""
    numba = _numba()
    if not isinstance(count, (int, np.integer)) or not 1 <= count <= numba.config.NUMBA_NUM_THREADS:
        raise ValueError(f"count must be an integer from 1 to {numba.config.NUMBA_NUM_THREADS} "
                         f"(this machine's threads); got {count!r}.")
    numba.set_num_threads(int(count))


def _storage(x, name: str) -> tuple[np.ndarray, str, np.dtype]:
    """`x` as a C-contiguous 2-D array, its storage kind and its compute dtype;
    refuses what the kernels cannot take."""
    if not isinstance(x, np.ndarray) or x.dtype not in STORAGE.values():
        kind = x.dtype.name if isinstance(x, np.ndarray) else type(x).__name__
        raise TypeError(f"{name} must be a numpy array of float64, float32, float16 or bfloat16 "
                        f"(ml_dtypes); got {kind}.")
    if x.ndim < 1 or x.shape[-1] == 0:
        raise ValueError(f"{name} must have at least one axis with at least one feature "
                         f"(the normalized last axis); got shape {x.shape}.")
    x2 = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
    if x.dtype == np.float16:
        return x2.view(np.uint16), "float16", np.dtype(np.float32)
    if x.dtype == BFLOAT16:
        return x2.view(np.uint16), "bfloat16", np.dtype(np.float32)
    return x2, "native", x.dtype


def _parameter(value, name: str, size: int, work: np.dtype, default: float) -> np.ndarray:
    """gamma or beta as a contiguous vector of the compute dtype, refused as
    lnlib.forward refuses it.

    Complex, non-numeric, NaN or infinite values, and values that overflow the
    compute dtype once rounded to it, get the forward pass's TypeError or
    ValueError (:func:`~lnlib.validation.as_parameter`).
    """
    if value is None:
        return np.full(size, default, dtype=work)
    if np.shape(value) != (size,):
        raise ValueError(f"{name} must have shape ({size},), the normalized last axis of x; "
                         f"got {np.shape(value)}.")
    if isinstance(value, np.ndarray) and value.dtype in STORAGE.values():  # common: checked quickly
        with np.errstate(over="ignore"):
            cast = np.ascontiguousarray(value, dtype=work)
        if np.isfinite(cast).all():
            return cast
    # refuses or converts
    return np.ascontiguousarray(as_parameter(value, name, (size,), (0,), 1, work))


@lru_cache(maxsize=None)
def _largest_trusted_rstd(work: np.dtype, size: int):
    """rstd above which var + eps = 1 / rstd**2 is below ``size * tiny / u``
    (squares may underflow)."""
    info = float_info(work)
    floor = size * float(info.tiny) / (float(info.eps) / 2)
    return work.type(1 / np.sqrt(floor)) if floor < 1 else work.type(1)


def _trusted_rows(mean: np.ndarray, rstd: np.ndarray, size: int, work: np.dtype) -> np.ndarray:
    """Which rows' statistics the fast path got right: a check of two numbers
    per row.

    A row is redone by lnlib.forward when its mean is not finite (x held NaN or
    infinity, or its sum overflowed), when rstd is 0 or not finite (the squares
    overflowed, or var + eps is 0: eps = 0 with a constant row, or an eps that
    rounds to 0 in the compute dtype), or when var + eps = 1 / rstd**2 is below
    ``size * tiny / u`` (the squares may have underflowed, losing more than one
    rounding's worth).
    """
    largest = _largest_trusted_rstd(work, size)
    with np.errstate(invalid="ignore", over="ignore"):
        # 3 reductions
        if np.isfinite(mean.sum()) and rstd.min(initial=1) > 0 and rstd.max(initial=0) <= largest:
            return np.ones(mean.shape, dtype=bool)
        return np.isfinite(mean) & (rstd > 0) & (rstd <= largest)


def _redo_rows(x, x2, rows, gamma, beta, eps, y, mean, rstd) -> None:
    """Recompute `rows` with lnlib.forward (scaled, checked) into y, mean and
    rstd; or the forward pass's error."""
    storage = x.dtype
    part = x2[rows].view(storage)
    try:
        y_rows, mean_rows, rstd_rows = layer_norm(part, gamma, beta, eps=eps, return_stats=True)
    except ValueError:  # the forward pass's message, indexed into x itself, not the rows redone
        layer_norm(x, gamma, beta, eps=eps)
        raise
    y[rows] = y_rows.view(y.dtype)
    mean[rows], rstd[rows] = mean_rows[:, 0], rstd_rows[:, 0]


@lru_cache(maxsize=None)
def _half_range(storage: np.dtype, size: int) -> float:
    """Half the largest value of `storage`, over ``sqrt(H - 1)``: the largest
    |xhat| (Samuelson)."""
    return float(float_info(storage).max) / 2 / np.sqrt(max(size - 1, 1))


def _output_may_overflow(gamma, beta, size: int, storage: np.dtype) -> bool:
    """Whether ``|gamma * xhat + beta|`` can come near the storage dtype's range
    (None: 1 or 0)."""
    largest_gamma = 1.0 if gamma is None else max(float(gamma.max()), -float(gamma.min()))
    largest_beta = 0.0 if beta is None else max(float(beta.max()), -float(beta.min()))
    return largest_gamma + largest_beta >= _half_range(storage, size)


def _refuse_non_finite(out: np.ndarray) -> None:
    """the forward pass's error for an output that overflowed its storage dtype
    (16-bit: judged by the bits)."""
    if out.dtype.itemsize == 2:
        exponent = np.uint16(0x7C00 if out.dtype == np.float16 else 0x7F80)
        if not ((out.view(np.uint16) & exponent) == exponent).any():
            return
    to_storage(out, out.dtype)


def _chunks(rows: int, size: int, compiled: bool) -> int:
    """Row blocks: one per thread (each with its own buffers and dγ, dβ partial
    sums); one for small inputs."""
    if not compiled or rows * size < PARALLEL_MIN_ELEMENTS:
        return 1
    return max(1, min(rows, threads()))


def fused_layer_norm(x, gamma=None, beta=None, eps: float = 1e-5, *, statistics: str = "two_pass",
                     compiled: bool = True, out=None):
    """LayerNorm over the last axis by a fused kernel: one visit per row
    (chapter "LayerNorm at the speed of memory").

    Parameters
    ----------
    x : numpy.ndarray
        float64, float32, float16 or bfloat16 (``ml_dtypes.bfloat16``), any
        shape; the last axis is normalized.
    gamma : array_like of shape (H,), optional
        Per-feature scale. Default: 1.
    beta : array_like of shape (H,), optional
        Per-feature shift. Default: 0.
    eps : float, default 1e-5
    statistics : {"two_pass", "welford"}, default "two_pass"
        Two sweeps over the row while it is in cache, or Welford's single
        sweep (one division per element; slower, as the chapter measures).
    compiled : bool, default True
        Run the numba-compiled kernel (needs numba); False runs the same
        source as plain Python, slowly (for small inputs and for reading).
    out : numpy.ndarray or tuple of 3 numpy.ndarray, optional
        Where to write y (an array of the shape and dtype of `x`), or y, mean
        and rstd (the last two of shape ``x.shape[:-1]`` in the compute
        dtype), each C-contiguous, writeable and not overlapping `x`. Without
        it the outputs are allocated on every call; above glibc's mmap
        threshold (32 MiB at most) each such allocation is a fresh mapping
        whose pages are faulted in and zeroed on first write, which the
        chapter measures.

    Returns
    -------
    y : numpy.ndarray
        Same shape and dtype as `x` (`out`'s array when given).
    mean, rstd : numpy.ndarray
        Per row (shape ``x.shape[:-1]``), in the compute dtype (float32 for
        16-bit storage): what the backward pass needs.

    Raises
    ------
    ImportError
        With ``compiled=True`` when numba cannot be imported (the message says
        how to install it).
    TypeError
        For an array of another dtype, or a complex or non-numeric gamma or
        beta.
    ValueError
        For gamma or beta of the wrong shape, not finite or overflowing the
        compute dtype; a bad eps or statistics; NaN or infinity in x; a constant
        row with an eps that is 0 in the compute dtype; an output that overflows
        the storage dtype (as :func:`lnlib.forward.layer_norm`); an `out` of the
        wrong shape or dtype, not C-contiguous, read-only or overlapping the
        inputs (the message names the shape and dtype expected).

    Examples
    --------
    >>> x = np.array([[1.0, 2.0, 3.0, 4.0]])
    >>> y, mean, rstd = fused_layer_norm(x, compiled=False)
    >>> np.round(y, 4).tolist()
    [[-1.3416, -0.4472, 0.4472, 1.3416]]
    """
    if statistics not in STATISTICS:
        raise ValueError(f"statistics must be one of {STATISTICS}; got {statistics!r}.")
    eps = check_eps(eps)
    x2, kind, work = _storage(x, "x")
    rows, size = x2.shape
    given = gamma is not None, beta is not None
    gamma = _parameter(gamma, "gamma", size, work, 1.0)
    beta = _parameter(beta, "beta", size, work, 0.0)
    may_overflow = _output_may_overflow(gamma if given[0] else None, beta if given[1] else None,
                                        size, x.dtype)
    chunks = _chunks(rows, size, compiled)
    kernel = _build(kind, "forward", bool(compiled), statistics == "welford", chunks > 1)
    shapes = ((x.shape, x.dtype), (x.shape[:-1], work), (x.shape[:-1], work))
    given_out = _outputs(out, ("y", "mean", "rstd"), shapes, (x,), "fused_layer_norm")
    y = np.empty_like(x2) if given_out[0] is None else given_out[0].view(x2.dtype).reshape(x2.shape)
    mean, rstd = (
        np.empty(rows, dtype=work) if o is None else o.reshape(rows) for o in given_out[1:]
    )
    buffers, outputs = np.empty((chunks, size), dtype=work), np.empty((chunks, size), dtype=work)
    arguments = (x2, gamma, beta, work.type(eps), work.type(size), y, mean, rstd, chunks, buffers,
                 outputs)
    if compiled:
        kernel(*arguments)
    else:
        with np.errstate(all="ignore"):  # numpy scalars warn where the compiled kernel is silent
            kernel(*arguments)
    trusted = _trusted_rows(mean, rstd, size, work)
    # huge, tiny, constant or non-finite rows: the forward pass's scaled, checked path
    if not trusted.all():
        _redo_rows(x, x2, np.flatnonzero(~trusted), gamma, beta, eps, y, mean, rstd)
    result = y.view(x.dtype).reshape(x.shape) if given_out[0] is None else given_out[0]
    if may_overflow:  # only then is y read again
        _refuse_non_finite(result)
    mean, rstd = (
        m.reshape(x.shape[:-1]) if o is None else o for m, o in zip((mean, rstd), given_out[1:])
    )
    return result, mean, rstd


def fused_add_layer_norm(x, residual, gamma=None, beta=None, eps: float = 1e-5, *,
                         statistics: str = "two_pass", compiled: bool = True):
    """The residual add and LayerNorm of a pre-norm transformer block: ``s = x +
    residual``, ``y = LN(s)`` (chapter "LayerNorm at the speed of memory").

    A kernel stores the sum in the storage dtype (it is the residual stream,
    which the next block adds to), so s is rounded to x's dtype and y is
    computed from the stored s, exactly as :func:`fused_layer_norm` on it. The
    add is a kernel of its own, with the same row loaders and storers: it reads
    x and residual and writes s, which the LayerNorm kernel then reads once
    more.

    Parameters
    ----------
    x, residual : numpy.ndarray
        Of the same shape and dtype: float64, float32, float16 or bfloat16.
    gamma, beta, eps, statistics, compiled
        As in :func:`fused_layer_norm`.

    Returns
    -------
    y : numpy.ndarray
        ``LN(s)``, of the shape and dtype of `x`.
    s : numpy.ndarray
        ``x + residual`` rounded to x's dtype, the new residual stream.
    mean, rstd : numpy.ndarray
        The statistics of s, as :func:`fused_layer_norm` returns them, for
        :func:`fused_layer_norm_backward` on s (whose dx is the gradient of both
        x and residual, to which the gradient reaching s along the residual
        stream is added).

    Raises
    ------
    ImportError, TypeError, ValueError
        As :func:`fused_layer_norm`; also for a residual of another shape or
        dtype, and for a sum that overflows the storage dtype (x and residual
        finite, s not).

    Examples
    --------
    >>> x, residual = np.array([[1.0, 2.0]]), np.array([[2.0, 4.0]])
    >>> y, s, mean, rstd = fused_add_layer_norm(x, residual, compiled=False)
    >>> s.tolist(), np.round(y, 4).tolist()
    ([[3.0, 6.0]], [[-1.0, 1.0]])
    """
    x2, kind, work = _storage(x, "x")
    if (not isinstance(residual, np.ndarray) or residual.shape != x.shape
            or residual.dtype != x.dtype):
        got = getattr(residual, "dtype", type(residual).__name__)
        raise ValueError(f"residual must be a numpy array of the shape and dtype of x, {x.shape} "
                         f"{x.dtype.name}; got {np.shape(residual)} {got}.")
    r2 = _storage(residual, "residual")[0]
    rows, size = x2.shape
    chunks = _chunks(rows, size, compiled)
    kernel = _build(kind, "add", bool(compiled), False, chunks > 1)
    s2 = np.empty_like(x2)
    buffers, outputs = np.empty((chunks, 2, size), dtype=work), np.empty((chunks, size), dtype=work)
    with np.errstate(all="ignore"):
        kernel(x2, r2, s2, chunks, buffers, outputs)
    s = s2.view(x.dtype).reshape(x.shape)
    try:
        y, mean, rstd = fused_layer_norm(s, gamma, beta, eps, statistics=statistics,
                                         compiled=compiled)
    except ValueError:  # name the input that is not finite, or the sum that overflowed, not "x"
        for value, name in ((x, "x"), (residual, "residual")):
            check_finite(value, name)
        largest = float(float_info(x.dtype).max)
        check_finite(s, "x + residual",
                     f" after rounding it to {x.dtype.name} (largest value {largest:.6g}): "
                     "the residual stream overflows its storage dtype")
        raise
    return y, s, mean, rstd


def _outputs(out, names, expected, inputs, function) -> tuple:
    """`out` (None, one array for the first output, or one array per output)
    checked against `expected`.

    Each given array must be a writeable, C-contiguous numpy array of exactly
    the expected shape and dtype, and share no memory with `inputs` (the kernels
    read an input after writing an output); the error names what was expected.
    Returns one array or None per output name.
    """
    if out is None:
        return (None,) * len(names)
    given = tuple(out) if isinstance(out, tuple) else (out,)
    if not 1 <= len(given) <= len(names) or (isinstance(out, tuple) and len(given) != len(names)):
        raise ValueError(f"out of {function} must be one array ({names[0]}) or a tuple of "
                         f"{len(names)} ({', '.join(names)}); got {type(out).__name__} of length "
                         f"{len(given)}.")
    for array, name, (shape, dtype) in zip(given, names, expected):
        if (isinstance(array, np.ndarray) and array.shape == tuple(shape) and array.dtype == dtype
                and array.flags.c_contiguous and array.flags.writeable):
            continue  # the common case: no message to build
        wanted = (f"a writeable C-contiguous numpy array of shape {tuple(shape)} and dtype "
                  f"{np.dtype(dtype).name}")
        if not isinstance(array, np.ndarray):
            raise TypeError(f"out's {name} of {function} must be {wanted}; "
                            f"got {type(array).__name__}.")
        if array.shape != tuple(shape) or array.dtype != dtype:
            raise ValueError(f"out's {name} of {function} must be {wanted}; got shape "
                             f"{array.shape} and dtype {array.dtype.name}.")
        raise ValueError(f"out's {name} of {function} must be {wanted}; got one that is "
                         f"{'not C-contiguous' if not array.flags.c_contiguous else 'read-only'}.")
    for i, array in enumerate(given):
        if any(np.may_share_memory(array, other) for other in inputs):
            raise ValueError(f"out's {names[i]} of {function} must not overlap an input "
                             "(the kernel reads the inputs again after writing it).")
        if any(np.may_share_memory(array, other) for other in given[i + 1:]):
            raise ValueError(f"the arrays of out of {function} must not overlap one another.")
    return given + (None,) * (len(names) - len(given))


def fused_layer_norm_backward(dy, x, gamma=None, mean=None, rstd=None, eps: float = 1e-5, *,
                              compiled: bool = True, out=None):
    """The backward pass of :func:`fused_layer_norm`: dx, dγ, dβ in one visit
    per row (chapter "LayerNorm at the speed of memory").

    Parameters
    ----------
    dy : numpy.ndarray
        The gradient of the loss with respect to the output y, in y's dtype,
        which is x's (as PyTorch requires): the kernel reads it as it is, so
        a dy of another dtype is refused, naming both.
    x : numpy.ndarray
        The forward pass's input, of the shape and dtype of `dy` (one of
        float64, float32, float16, bfloat16).
    gamma : array_like of shape (H,), optional
        Default 1.
    mean : numpy.ndarray, optional
        The forward pass's saved mean; recomputed with `rstd` (one more read
        of x) when not given.
    rstd : numpy.ndarray, optional
        The forward pass's saved ``1 / sqrt(var + eps)``.
    eps : float, default 1e-5
        Used only when mean and rstd are recomputed.
    compiled : bool, default True
        As in :func:`fused_layer_norm`.
    out : numpy.ndarray or tuple of 3 numpy.ndarray, optional
        Where to write dx (an array of the shape and dtype of `x`), or dx,
        dgamma and dbeta (the last two of shape (H,) in the dtype they are
        returned in), as for :func:`fused_layer_norm`'s `out`.

    Returns
    -------
    dx : numpy.ndarray
        Shape and dtype of `x` (`out`'s array when given).
    dgamma, dbeta : numpy.ndarray
        Shape (H,), summed over every row (all B·T tokens), in gamma's dtype
        when `gamma` is a numpy array of a float dtype (float32 parameters of
        16-bit x), else in x's, as :func:`lnlib.backward.layer_norm_backward`
        returns them; summed in the wider of that and the compute dtype (float32
        for 16-bit x), never in a 16-bit running sum.

    Raises
    ------
    ImportError
        With ``compiled=True`` when numba cannot be imported.
    TypeError, ValueError
        For arrays of other dtypes or mismatched shapes, a gamma refused as in
        :func:`fused_layer_norm`, only one of mean and rstd, saved statistics
        that are not finite or an rstd that is not positive, and a dgamma or
        dbeta that is not finite in the storage dtype (dy too large, or not
        finite); an `out` refused as in :func:`fused_layer_norm`. A dx beyond
        the storage dtype's range is returned as infinity, not refused (see the
        module).
    """
    x2, kind, work = _storage(x, "x")
    dy2 = _storage(_as_upstream(dy, x), "dy")[0]
    rows, size = x2.shape
    grads = gradient_dtype(gamma, x.dtype)
    gamma = _parameter(gamma, "gamma", size, work, 1.0)
    if (mean is None) != (rstd is None):
        raise ValueError("pass both saved statistics, mean and rstd (from fused_layer_norm), "
                         "or neither.")
    if mean is None:
        _, mean, rstd = fused_layer_norm(x, eps=eps, compiled=compiled)
    mean, rstd = _saved(mean, "mean", rows, work), _saved(rstd, "rstd", rows, work)
    if not (rstd > 0).all():
        raise ValueError("rstd must be positive everywhere: it is 1 / sqrt(var + eps) from the "
                         "forward pass.")
    chunks = _chunks(rows, size, compiled)
    kernel = _build(kind, "backward", bool(compiled), False, chunks > 1)
    shapes = ((x.shape, x.dtype), ((size,), grads), ((size,), grads))
    given_out = _outputs(out, ("dx", "dgamma", "dbeta"), shapes, (x, dy),
                         "fused_layer_norm_backward")
    dx = (np.empty_like(x2) if given_out[0] is None
          else given_out[0].view(x2.dtype).reshape(x2.shape))
    total = accumulator(work, grads)
    dgamma_parts = np.zeros((chunks, size), dtype=total)
    dbeta_parts = np.zeros((chunks, size), dtype=total)
    buffers, outputs = np.empty((chunks, 2, size), dtype=work), np.empty((chunks, size), dtype=work)
    with np.errstate(all="ignore"):
        kernel(dy2, x2, gamma, work.type(size), mean, rstd, dx, dgamma_parts, dbeta_parts, chunks,
               buffers, outputs)
    storage = x.dtype
    with np.errstate(over="ignore", invalid="ignore"):
        dgamma, dbeta = dgamma_parts.sum(axis=0), dbeta_parts.sum(axis=0)
    # every dy enters dbeta's sums: a NaN or infinite dy, or one too large,
    # shows here, in H numbers
    dgamma, dbeta = (to_storage(value, grads, name, parameter_overflow_cause(name, rows))
                     for value, name in ((dgamma, "dgamma"), (dbeta, "dbeta")))
    for target, value in zip(given_out[1:], (dgamma, dbeta)):
        if target is not None:
            target[...] = value
    dgamma, dbeta = (v if t is None else t for v, t in zip((dgamma, dbeta), given_out[1:]))
    dx = dx.view(storage).reshape(x.shape) if given_out[0] is None else given_out[0]
    return dx, dgamma, dbeta


def _as_upstream(dy, x: np.ndarray):
    """dy, refused unless it is an array of the shape and dtype of `x`: the
    kernel reads dy in x's dtype, the output's."""
    if not isinstance(dy, np.ndarray):
        raise TypeError(f"dy must be a numpy array of x's dtype, {x.dtype.name}; "
                        f"got {type(dy).__name__}.")
    if dy.shape != x.shape:
        raise ValueError(f"dy must have the shape of x, {x.shape}; got {np.shape(dy)}.")
    if dy.dtype == x.dtype:
        return dy
    storage = x.dtype.name
    largest, limit = np.max(np.abs(dy), initial=0), float(float_info(storage).max)
    misfit = (f" (its largest magnitude, {float(largest):.6g}, exceeds {storage}'s {limit:.6g}: "
              "scale it, or use a wider x)" if dy.dtype.kind in "fiu" and largest > limit else "")
    raise ValueError(f"dy is {dy.dtype.name} and x is {storage}: the kernel reads dy in x's dtype, "
                     f"the output's (PyTorch requires it too); pass dy in {storage}{misfit}.")


def _saved(value, name: str, rows: int, work: np.dtype) -> np.ndarray:
    """A saved statistic, one finite number per row, in the compute dtype."""
    value = np.asarray(value)
    if value.size != rows or value.dtype.kind not in "fiu":
        raise ValueError(f"{name} must hold one real number per row ({rows}), as fused_layer_norm "
                         f"returns it; got shape {value.shape} of {value.dtype}.")
    value = np.ascontiguousarray(value.astype(work).reshape(rows))
    if not np.isfinite(value).all():
        raise ValueError(f"{name} must be finite, as fused_layer_norm returns it; it holds NaN or "
                         "infinity.")
    return value
