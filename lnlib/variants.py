r"""The LayerNorm variants other sources use, kept apart from the standard one in
:mod:`~lnlib.forward`.

The standard LayerNorm (Ba, Kiros & Hinton 2016; PyTorch, Flax, Keras) divides
the centred input by :math:`\sqrt{\sigma^2 + \varepsilon}` with the *biased*
variance (divide by H). Two departures appear in well-read sources:

- ``eps`` added to the standard deviation, :math:`(x - \mu) / (\sigma + \varepsilon)`,
  as in one source document's worked example (:func:`layer_norm_eps_outside_sqrt`);
- the Annotated Transformer's module, which also uses the *unbiased* standard
  deviation (divide by H - 1), the default of ``torch.std``
  (:func:`annotated_transformer_layer_norm`).

The chapters "The variance" and "Epsilon" compare them with the standard one,
and the chapter "Fact check" reuses them. :data:`FRAMEWORK_EPS` holds the
frameworks' default epsilons.

The ``buggy_*`` functions at the end are the bugs the chapter "Check your own LayerNorm" plants
for :func:`lnlib.harness.check_layer_norm` to catch, each a copy of :mod:`lnlib.textbook`'s kernel
with the signature ``(x, gamma, beta, eps)`` (the backward one ``(dy, x, gamma, eps)``) and one
thing wrong: two of them are the variants above (:func:`buggy_eps_outside_root`,
:func:`buggy_unbiased_variance`), the rest are the bugs of real kernels. They are examples, not API.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from .forward import scaled_moments, to_storage
from .textbook import numpy_layer_norm, numpy_layer_norm_backward
from .validation import (
    as_float_array,
    as_parameter,
    check_eps,
    compute_dtype,
    normalized_axes,
    normalized_shape,
)

__all__ = [
    "FRAMEWORK_EPS",
    "sample_variance",
    "layer_norm_eps_outside_sqrt",
    "annotated_transformer_layer_norm",
    "std_inside",
    "std_outside",
]

#: Default ``eps`` of each framework's LayerNorm (chapter "Epsilon"), from their documentation:
#: ``torch.nn.LayerNorm``, ``flax.linen.LayerNorm``, ``keras.layers.LayerNormalization``.
FRAMEWORK_EPS = MappingProxyType({"PyTorch": 1e-5, "Flax": 1e-6, "Keras": 1e-3})


def sample_variance(x, *, unbiased: bool = False, axis=-1, keepdims: bool = False) -> np.ndarray:
    r"""The variance over `axis`, divided by H (LayerNorm's) or, only if asked, by H - 1 (chapter
    "The variance").

    By default :math:`\sigma^2` (the first line), with ``unbiased=True``
    :math:`s^2` (the second):

    .. math::

        \begin{aligned}
        \sigma^2 &= \frac{1}{H}\sum_i (x_i - \mu)^2, \\
        s^2 &= \frac{1}{H - 1}\sum_i (x_i - \mu)^2.
        \end{aligned}

    Parameters
    ----------
    x : array_like
        Input with at least one axis; integers are promoted to float64.
    unbiased : bool, default False
        False: divide by H, as LayerNorm, ``numpy.var`` and ``torch.nn.LayerNorm`` do.
        True: divide by H - 1, as ``torch.var`` and ``torch.std`` do by default
        (Bessel's correction); used here only to show that difference.
    axis : int or tuple of int, default -1
        The axes the variance is taken over.
    keepdims : bool, default False
        Keep the reduced axes with size 1, so the result broadcasts against `x`.

    Returns
    -------
    ndarray

    Raises
    ------
    TypeError, ValueError
        As :func:`~lnlib.forward.layer_norm` for bad inputs; ValueError also when
        ``unbiased=True`` and the axes hold a single value (H - 1 = 0), and for a
        variance beyond the range of x's dtype (it is computed as every lnlib
        statistic is: float32 for 16-bit x, each slice scaled by a power of two).

    Examples
    --------
    >>> sample_variance([1.0, 0.0, 0.0, 0.0])
    array(0.1875)
    >>> sample_variance([1.0, 0.0, 0.0, 0.0], unbiased=True)
    array(0.25)
    """
    x, axes, size = _checked_input(x, axis)
    if unbiased and size < 2:
        raise ValueError(
            "the unbiased variance divides by H - 1 and needs at least 2 values per slice; the "
            f"normalized axes {axes} hold {size}."
        )
    m = scaled_moments(
        x, axes
    )  # like every lnlib statistic: float32 for 16-bit x, each slice scaled first
    with np.errstate(over="ignore", under="ignore"):
        var = m.spread * m.dtype.type(size / (size - 1) if unbiased else 1) * m.scale * m.scale
    var = var if keepdims else np.squeeze(var, axis=axes)
    out = to_storage(var, x.dtype, "the variance", "x's spread is too large for it")
    if np.any(
        (out == 0) & (x.max(axis=axes, keepdims=keepdims) != x.min(axis=axes, keepdims=keepdims))
    ):
        raise ValueError(
            f"the variance underflowed to 0 in {x.dtype.name} although the values differ: it is "
            "smaller "
            f"than {x.dtype.name} can hold; scale x by a power of two first."
        )
    return np.asarray(out)


def layer_norm_eps_outside_sqrt(
    x, gamma=None, beta=None, *, eps: float = 1e-5, axis=-1
) -> np.ndarray:
    r"""LayerNorm with eps added to the standard deviation: ``gamma * (x - mean) / (sqrt(var) + eps)
    + beta`` (chapter "Epsilon").

    Not what PyTorch, Flax or Keras compute (they divide by :math:`\sqrt{\sigma^2 + \varepsilon}`);
    one source document does this in its worked example. The two agree when
    :math:`\sigma^2 \gg \varepsilon` and part ways for near-constant inputs.

    Parameters, returns and errors as in :func:`~lnlib.forward.layer_norm`
    (biased variance, ``eps >= 0``).

    Examples
    --------
    >>> layer_norm_eps_outside_sqrt([1.0, 1.001, 0.999, 1.0], eps=1e-5).round(3)
    array([ 0.   ,  1.394, -1.394,  0.   ])
    """
    x, gamma, beta, eps, axes = _checked_layer_norm_args(x, gamma, beta, eps, axis)
    return _scale_shift(_over_std_plus_eps(x, axes, eps, unbiased=False), gamma, beta, x.dtype)


def annotated_transformer_layer_norm(
    x, a_2=None, b_2=None, *, eps: float = 1e-6, axis=-1
) -> np.ndarray:
    r"""The Annotated Transformer's LayerNorm: ``a_2 * (x - mean) / (std + eps) + b_2`` with the
    unbiased std (chapter "The variance").

    The module in Rush's *The Annotated Transformer* computes
    ``x.std(-1, keepdim=True)``, whose PyTorch default divides by H - 1, and
    adds ``eps`` (default 1e-6) to the standard deviation. ``torch.nn.LayerNorm``
    divides by H and puts eps inside the square root, so for small H the two
    outputs differ by the factor :math:`\sqrt{(H-1)/H}`.

    Parameters
    ----------
    x : array_like
        Input with at least one axis.
    a_2 : array_like, optional
        The module's gain (gamma), of the shape of the normalized axes. Default: 1.
    b_2 : array_like, optional
        The module's bias (beta), of the same shape. Default: 0.
    eps : float, default 1e-6
        Added to the unbiased standard deviation; finite and >= 0.
    axis : int or tuple of int, default -1
        The normalized axes.

    Returns
    -------
    ndarray

    Raises
    ------
    TypeError, ValueError
        As :func:`~lnlib.forward.layer_norm`; ValueError also for a single value per
        slice (the unbiased std divides by H - 1 = 0).

    Examples
    --------
    >>> annotated_transformer_layer_norm([1.0, 0.0, 0.0, 0.0], eps=0.0)
    array([ 1.5, -0.5, -0.5, -0.5])
    """
    x, a_2, b_2, eps, axes = _checked_layer_norm_args(x, a_2, b_2, eps, axis, names=("a_2", "b_2"))
    if int(np.prod(normalized_shape(x, axes))) < 2:
        raise ValueError(
            "the unbiased std divides by H - 1 and needs at least 2 values per slice; the "
            f"normalized axes {axes} hold 1."
        )
    return _scale_shift(_over_std_plus_eps(x, axes, eps, unbiased=True), a_2, b_2, x.dtype)


def _over_std_plus_eps(x, axes, eps, *, unbiased):
    """``(x - mean) / (std + eps)`` through lnlib's shared moments (16-bit inputs in float32, huge
    inputs scaled first)."""
    m = scaled_moments(x, axes)
    m.check(eps, axes, "variance")
    size = int(np.prod(normalized_shape(x, axes)))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        sigma_u = (
            np.sqrt(m.spread * m.dtype.type(size / (size - 1))) if unbiased else np.sqrt(m.spread)
        )
        eps_w = np.asarray(eps).astype(m.dtype)
        eps_u = eps_w / m.scale
        tiny = ~np.isfinite(
            eps_u
        )  # eps / s overflows (so eps > 0): the deviations are negligible next to eps
        divisor = sigma_u + np.where(tiny, 0, eps_u)
        safe = np.where(
            divisor > 0, divisor, 1
        )  # 0 only for a constant slice, whose deviations are 0
        return np.where(tiny, m.centred * m.scale / np.where(eps_w > 0, eps_w, 1), m.centred / safe)


def _checked_input(x, axis):
    x = as_float_array(x, "x")
    axes = normalized_axes(axis, x.ndim)
    size = int(np.prod(normalized_shape(x, axes)))
    return x, axes, size


def _checked_layer_norm_args(x, gamma, beta, eps, axis, names=("gamma", "beta")):
    x, axes, _ = _checked_input(x, axis)
    eps = check_eps(eps)
    shape = normalized_shape(x, axes)
    gamma = as_parameter(gamma, names[0], shape, axes, x.ndim, compute_dtype(x.dtype))
    beta = as_parameter(beta, names[1], shape, axes, x.ndim, compute_dtype(x.dtype))
    return x, gamma, beta, eps, axes


def _scale_shift(xhat, gamma, beta, storage):
    with np.errstate(over="ignore"):
        y = xhat if gamma is None else xhat * gamma
        y = y if beta is None else y + beta
    return to_storage(y, storage)


def std_inside(variance, eps):
    """Standard deviation of the normalized values with ε inside the square root: sqrt(σ² / (σ² +
    ε)) (chapter "Epsilon").

    Parameters
    ----------
    variance : float or ndarray
        σ², the input's biased variance.
    eps : float or ndarray
        ε, added to σ² under the square root (broadcast against `variance`).

    Returns
    -------
    float or ndarray
    """
    return np.sqrt(variance / (variance + eps))


def std_outside(variance, eps):
    """Standard deviation of the normalized values with ε added to σ: σ / (σ + ε) (chapter
    "Epsilon").

    Parameters
    ----------
    variance : float or ndarray
        σ², the input's biased variance.
    eps : float or ndarray
        ε, added to σ = √σ² (broadcast against `variance`).

    Returns
    -------
    float or ndarray
    """
    sigma = np.sqrt(variance)
    return sigma / (sigma + eps)


# The planted bugs of the chapter "Check your own LayerNorm": the textbook kernel with one thing
# wrong.


def _numpy_statistics(xw, eps, features=slice(None), divide_by=None):
    """The textbook mean and rstd of ``xw[..., features]``, divided by `divide_by` (or their
    count)."""
    part = xw[..., features]
    count = part.shape[-1] if divide_by is None else divide_by
    mean = part.sum(axis=-1, keepdims=True) / count
    var = ((part - mean) ** 2).sum(axis=-1, keepdims=True) / count
    return mean, 1 / np.sqrt(var + eps)


def _normalize_with(x, gamma, beta, statistics, clamp=None):
    """LayerNorm of `x` (clamped to ±`clamp`) with a planted bug's ``statistics(xw) -> (mean,
    rstd)``."""
    work = compute_dtype(x.dtype)
    xw = x.astype(work) if clamp is None else np.clip(x.astype(work), -clamp, clamp)
    mean, rstd = statistics(xw)
    return ((xw - mean) * rstd * gamma.astype(work) + beta.astype(work)).astype(x.dtype)


def buggy_vector_tail_skipped(x, gamma, beta, eps):
    """Bug: sums the row four at a time (one SIMD vector) and forgets the H % 4 elements left."""
    body = slice(0, x.shape[-1] - x.shape[-1] % 4)
    return _normalize_with(x, gamma, beta, lambda xw: _numpy_statistics(xw, eps, body, x.shape[-1]))


def buggy_first_1024_features(x, gamma, beta, eps):
    """Bug: the statistics cover only the first 1024 features (one block of 1024 threads, no
    loop)."""
    return _normalize_with(x, gamma, beta, lambda xw: _numpy_statistics(xw, eps, slice(0, 1024)))


def buggy_clamped_inputs(x, gamma, beta, eps):
    """Bug: clamps the inputs to ±10⁴ "for safety" before normalizing."""
    return _normalize_with(x, gamma, beta, lambda xw: _numpy_statistics(xw, eps), clamp=1e4)


def buggy_ignores_eps(x, gamma, beta, eps):
    """Bug: uses a hard-coded ε of 1e-5, whatever `eps` it is given."""
    return _normalize_with(x, gamma, beta, lambda xw: _numpy_statistics(xw, 1e-5))


def buggy_one_pass_variance(x, gamma, beta, eps):
    """Bug: the variance as ``mean(x²) - mean(x)²``, which cancels catastrophically for a large
    mean."""

    def statistics(xw):
        mean = xw.mean(axis=-1, keepdims=True)
        var = np.maximum((xw * xw).mean(axis=-1, keepdims=True) - mean * mean, 0)
        return mean, 1 / np.sqrt(var + eps)

    return _normalize_with(x, gamma, beta, statistics)


def buggy_assumes_c_contiguous(x, gamma, beta, eps):
    """Bug: reads x's memory as rows packed one after another (a C kernel handed ``x.ctypes.data``).

    Emulated safely: the memory from x's first element on is read in order, wrapping at the end
    of the buffer x lives in, instead of out of bounds.
    """
    owner = x
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    memory = np.ravel(owner, order="K")  # in memory order (the harness allocates it packed)
    start = (x.__array_interface__["data"][0] - owner.__array_interface__["data"][0]) // x.itemsize
    packed = np.take(memory, np.arange(start, start + x.size), mode="wrap").reshape(x.shape)
    return _normalize_with(packed, gamma, beta, lambda xw: _numpy_statistics(xw, eps))


def buggy_overwrites_input(x, gamma, beta, eps):
    """Bug: writes y over x (in place, to save memory) and returns x: the residual stream is
    lost."""
    x[...] = numpy_layer_norm(x, gamma, beta, eps)
    return x


def buggy_truncating_bfloat16(x, gamma, beta, eps):
    """Bug: rounds the float32 result to bfloat16 by dropping its low 16 bits (toward zero)."""
    if x.dtype != np.dtype("bfloat16"):
        return numpy_layer_norm(x, gamma, beta, eps)
    xw = x.astype(np.float32)
    mean, rstd = _numpy_statistics(xw, eps)
    y = ((xw - mean) * rstd * gamma.astype(np.float32) + beta.astype(np.float32)).astype(np.float32)
    chopped = (np.ascontiguousarray(y).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    return chopped.astype(x.dtype)  # exact: the low bits are already zero


def buggy_unbiased_variance(x, gamma, beta, eps):
    """Bug: divides the sum of squares by H - 1 (``torch.std``'s default), not by H:
    :func:`sample_variance` with ``unbiased=True``."""
    work = compute_dtype(x.dtype)
    xw = x.astype(work)
    mean = xw.mean(axis=-1, keepdims=True)
    var = sample_variance(xw, unbiased=True, keepdims=True)
    return ((xw - mean) / np.sqrt(var + eps) * gamma.astype(work) + beta.astype(work)).astype(
        x.dtype
    )


def buggy_eps_outside_root(x, gamma, beta, eps):
    """Bug: adds eps to the standard deviation, ``(x - mean) / (std + eps)``:
    :func:`layer_norm_eps_outside_sqrt`."""
    return layer_norm_eps_outside_sqrt(x, gamma, beta, eps=eps)


def buggy_half_statistics(x, gamma, beta, eps):
    """Bug: keeps every operation in the input's dtype, so 16-bit data gets 16-bit statistics."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + x.dtype.type(eps)) * gamma + beta


def buggy_wrong_axis(x, gamma, beta, eps):
    """Bug: takes the statistics over the first axis (the batch, as batch norm does), not the
    features."""
    work = compute_dtype(x.dtype)
    xw = x.astype(work)
    mean = xw.mean(axis=0, keepdims=True)
    var = ((xw - mean) ** 2).mean(axis=0, keepdims=True)
    return ((xw - mean) / np.sqrt(var + eps) * gamma.astype(work) + beta.astype(work)).astype(
        x.dtype
    )


def buggy_dgamma_over_batch_only(dy, x, gamma, eps):
    """Bug: sums dgamma and dbeta over the batch axis only, forgetting the sequence axis of a (B, T,
    C) input."""
    dx, _, _ = numpy_layer_norm_backward(dy, x, gamma, eps)
    work = compute_dtype(x.dtype)
    xw, dyw = x.astype(work), dy.astype(work)
    mean = xw.mean(axis=-1, keepdims=True)
    xhat = (xw - mean) / np.sqrt(((xw - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    return dx, (dyw * xhat).sum(axis=0).astype(x.dtype), dyw.sum(axis=0).astype(x.dtype)


def buggy_storage_dtype_dgamma(dy, x, gamma, eps):
    """Bug: adds each row's contribution to dgamma and dbeta in the storage dtype (a float16
    running sum stalls at 2048 rows of ones; chapter "Computing it right: numerics")."""
    dx, _, _ = numpy_layer_norm_backward(dy, x, gamma, eps)
    work = compute_dtype(x.dtype)
    xw = x.astype(work)
    mean = xw.mean(axis=-1, keepdims=True)
    xhat = ((xw - mean) / np.sqrt(((xw - mean) ** 2).mean(axis=-1, keepdims=True) + eps)).astype(
        x.dtype
    )
    dgamma, dbeta = np.zeros(x.shape[-1], x.dtype), np.zeros(x.shape[-1], x.dtype)
    for row_dy, row_xhat in zip(dy.reshape(-1, x.shape[-1]), xhat.reshape(-1, x.shape[-1])):
        dgamma, dbeta = dgamma + row_dy * row_xhat, dbeta + row_dy  # each sum rounded to x's dtype
    return dx, dgamma, dbeta
