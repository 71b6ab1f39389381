r"""The forward pass of Layer Normalization.

.. math::

    \begin{aligned}
    \mu &= \frac{1}{H}\sum_i x_i, &
    \sigma^2 &= \frac{1}{H}\sum_i (x_i - \mu)^2, \\
    \hat x_i &= \frac{x_i - \mu}{\sqrt{\sigma^2 + \varepsilon}}, &
    y_i &= \gamma_i \hat x_i + \beta_i
    \end{aligned}

The statistics are taken over the normalized axes (the last one by default),
separately for every other index (every sample, every token). The variance is
the biased one (divide by H), as in Ba, Kiros & Hinton (2016); their paper has
no :math:`\varepsilon`, which sits inside the square root as in PyTorch,
TensorFlow and Flax. The chapters "The mean", "The variance", "Epsilon" and
"Normalizing" derive each step.

How it is computed (the rules every normalization in lnlib follows, through
:func:`standardize`):

- float16 and bfloat16 inputs are normalized in float32 and the output is
  rounded back, as PyTorch's CPU and CUDA kernels do
  (chapter "Computing it right: numerics"); ``compute_dtype`` chooses otherwise.
- each slice is first divided by a power of two near its largest magnitude
  (exact), so huge finite inputs never overflow when squared and tiny ones
  never underflow; ε is carried along in the same units.
- a zero divisor is judged in the working dtype: an eps that rounds to 0 there
  counts as 0, and a variance that underflowed is named as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .summation import tree_sum
from .validation import (
    as_float_array,
    as_parameter,
    check_eps,
    check_finite,
    check_nonzero_spread,
    float_info,
    normalized_axes,
    normalized_shape,
)
from .validation import compute_dtype as resolve_compute_dtype

__all__ = [
    "LayerNormSteps",
    "ScaledMoments",
    "Standardized",
    "layer_norm",
    "layer_norm_steps",
    "scaled_moments",
    "standardize",
    "to_storage",
]


@dataclass(frozen=True)
class Standardized:
    """The statistics and normalized values of :func:`standardize`, all in the working dtype.

    Statistics keep the normalized axes with size 1, so they broadcast against the input.

    Attributes
    ----------
    mean : ndarray
        Mean over the normalized axes (0 when not centring).
    var : ndarray
        Biased variance (or mean square); ``inf`` where it exceeds the working
        dtype's range, which the other fields survive because they are computed
        from scaled values.
    sqrt_var_eps : ndarray
        ``sqrt(var + eps)``, the divisor.
    rstd : ndarray
        ``1 / sqrt(var + eps)``, what a kernel saves for its backward pass.
    xhat : ndarray
        The normalized values.
    """

    mean: np.ndarray
    var: np.ndarray
    sqrt_var_eps: np.ndarray
    rstd: np.ndarray
    xhat: np.ndarray


@dataclass(frozen=True)
class ScaledMoments:
    """A slice's deviations and spread, measured in units of a power of two near its largest
    magnitude (see :func:`scaled_moments`).

    Attributes
    ----------
    scale : ndarray
        s, the power of two each slice was divided by (normalized axes kept as size 1).
    mean : ndarray
        The mean in those units (0 without centring).
    centred : ndarray
        ``x / s - mean``, the deviations in those units, in (-4, 4).
    spread : ndarray
        ``mean(centred**2)``: the variance (mean square without centring) in those units.
    dtype : numpy.dtype
        The working dtype everything was computed in.
    """

    scale: np.ndarray
    mean: np.ndarray
    centred: np.ndarray
    spread: np.ndarray
    dtype: np.dtype

    def check(self, eps: float, axes: tuple[int, ...], what: str) -> None:
        """Refuse a zero divisor, judged in the working dtype (see
        :func:`~lnlib.validation.check_nonzero_spread`)."""
        check_nonzero_spread(
            self.spread,
            eps,
            varies=np.any(self.centred != 0, axis=axes, keepdims=True),
            dtype=self.dtype,
            what=what,
        )


def scaled_moments(
    x: np.ndarray, axes: tuple[int, ...], *, centre: bool = True, compute_dtype=None
) -> ScaledMoments:
    """Mean and variance of each slice of `x`, computed on ``x / s`` with s a power of two near its
    largest magnitude.

    Dividing by a power of two is exact, and afterwards every value lies in
    (-2, 2), so the squares can neither overflow nor underflow (chapter
    "Computing it right: numerics"). Sums run in the compute dtype.

    Raises
    ------
    ValueError
        If `x` does not fit in the compute dtype, a normalized axis is empty, or a slice's sum
        overflows the compute dtype (float16 with about 16,000 values or more).
    """
    normalized_shape(x, axes)
    work = resolve_compute_dtype(x.dtype, compute_dtype)
    with np.errstate(over="ignore"):
        xw = x.astype(work)
    check_finite(
        xw,
        "x",
        f" after rounding it to the compute dtype {work.name} (largest value "
        f"{float(float_info(work).max):.6g})",
    )
    size = work.type(int(np.prod([x.shape[a] for a in axes])))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        _, exponent = np.frexp(np.max(np.abs(xw), axis=axes, keepdims=True).astype(np.float64))
        scale = np.ldexp(1.0, exponent - 1).astype(work)
        u = xw / scale
        mean = (
            tree_sum(u, axes, keepdims=True, dtype=work) / size if centre else np.zeros_like(scale)
        )
        centred = u - mean
        spread = tree_sum(centred * centred, axes, keepdims=True, dtype=work) / size
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(spread))):
        raise ValueError(
            f"the sum over a normalized slice of {int(size)} values overflows the compute dtype "
            f"{work.name} (largest value {float(float_info(work).max):.6g}), even with each value "
            "scaled into (-2, 2); use a wider compute_dtype, e.g. 'float32' (the default for "
            "16-bit input)."
        )
    return ScaledMoments(scale=scale, mean=mean, centred=centred, spread=spread, dtype=work)


def standardize(
    x: np.ndarray, axes: tuple[int, ...], eps: float, *, centre: bool = True, compute_dtype=None
) -> Standardized:
    r"""``(x - mean) / sqrt(var + eps)`` over `axes`, the one kernel every lnlib normalization uses
    (chapter "Computing it right: numerics").

    The moments come from :func:`scaled_moments` (each slice divided by
    :math:`s = 2^k` near its largest magnitude), and
    :math:`\hat x = (u - \bar u) / \sqrt{\sigma_u^2 + \varepsilon / s^2}`, where
    :math:`u = x / s` is the scaled slice, :math:`\bar u` its mean and
    :math:`\sigma_u^2` its biased variance. This
    equals the textbook formula: with :math:`\varepsilon = 0` LayerNorm is
    scale-invariant, and with :math:`\varepsilon > 0` the scaling carries ε along.

    Parameters
    ----------
    x : ndarray
        A validated float array (see :func:`~lnlib.validation.as_float_array`).
    axes : tuple of int
        The normalized axes, as from :func:`~lnlib.validation.normalized_axes`.
    eps : float
        A checked eps >= 0.
    centre : bool, default True
        False for RMS norm: divide by ``sqrt(mean(x**2) + eps)`` without subtracting the mean.
    compute_dtype : dtype or str, optional
        See :func:`~lnlib.validation.compute_dtype`: float32 for 16-bit inputs by default.

    Raises
    ------
    ValueError
        If `x` does not fit in the compute dtype, a slice's variance underflowed,
        or a slice is constant (all zero without centring) while eps is 0 in
        the compute dtype.
    """
    m = scaled_moments(x, axes, centre=centre, compute_dtype=compute_dtype)
    m.check(eps, axes, "variance" if centre else "mean square")
    eps_w = np.asarray(eps).astype(m.dtype)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        inv_scale = m.dtype.type(1) / m.scale
        eps_u = eps_w * inv_scale * inv_scale if eps_w > 0 else np.zeros_like(m.scale)
        tiny = ~np.isfinite(
            eps_u
        )  # eps / s**2 overflows: the slice's variance is negligible next to eps
        root_u = np.sqrt(m.spread + np.where(tiny, 0, eps_u))
        eps_only = tiny | (
            root_u == 0
        )  # or a constant slice whose eps / s**2 underflowed: the divisor is sqrt(eps)
        safe_root = np.where(eps_only, 1, root_u)
        xhat = np.where(tiny, m.centred * m.scale / np.sqrt(eps_w), m.centred / safe_root)
        rstd = np.where(eps_only, 1 / np.sqrt(eps_w), inv_scale / safe_root)
        sqrt_var_eps = np.where(eps_only, np.sqrt(eps_w), m.scale * safe_root)
        return Standardized(
            mean=m.mean * m.scale,
            var=m.spread * m.scale * m.scale,
            sqrt_var_eps=sqrt_var_eps,
            rstd=rstd,
            xhat=xhat,
        )


def to_storage(
    y: np.ndarray,
    dtype,
    name: str = "the output",
    cause: str | Callable[[], str] = "gamma or beta is too large for it",
) -> np.ndarray:
    """Round a result computed in the working dtype back to the input's dtype, refusing an overflow
    (chapter "Computing it right: numerics").

    Parameters
    ----------
    y : ndarray
        The result in the working dtype.
    dtype : dtype
        The storage dtype to round to.
    name : str, default "the output"
        Names the result in the message.
    cause : str or callable, default "gamma or beta is too large for it"
        What makes the result too large, for the message: the forward pass's output grows only
        with gamma and beta (``|xhat| <= sqrt(H - 1)``); a gradient names its own cause. A
        callable is called only to build the message, so a costly cause is found only on failure.

    Raises
    ------
    ValueError
        If a value of `y` is not finite after rounding to `dtype`.
    """
    with np.errstate(over="ignore"):
        out = y.astype(dtype, copy=False)
    if np.isfinite(out).all():
        return out
    largest = float(float_info(dtype).max)
    why = cause() if callable(cause) else cause
    where = f" after rounding it to {np.dtype(dtype).name} (largest value {largest:.6g}): {why}"
    return check_finite(out, name, where)


@dataclass(frozen=True)
class LayerNormSteps:
    """Every intermediate of one LayerNorm forward pass (chapter "The complete examples").

    The statistics keep the normalized axes with size 1, so they broadcast
    against `x`: for a (2, 4) batch, ``mean`` has shape (2, 1). Statistics and
    ``xhat`` are in the compute dtype (float32 for float16 and bfloat16 inputs);
    ``y`` has the dtype of ``x``.

    Attributes
    ----------
    x : ndarray
        The input, as a float array.
    mean : ndarray
        Mean over the normalized axes (saved by kernels for the backward pass).
    var : ndarray
        Biased variance over the normalized axes (divide by H).
    sqrt_var_eps : ndarray
        ``sqrt(var + eps)``, the divisor. (Not the standard deviation ``sqrt(var)``:
        the chapter "Epsilon" contrasts the two.)
    rstd : ndarray
        ``1 / sqrt(var + eps)``, the reciprocal divisor kernels save for the backward pass.
    xhat : ndarray
        ``(x - mean) / sqrt_var_eps``, the normalized input.
    y : ndarray
        ``gamma * xhat + beta``, the output.
    axes : tuple of int
        The normalized axes, non-negative and sorted.
    eps : float
        The epsilon that was used.
    """

    x: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    sqrt_var_eps: np.ndarray
    rstd: np.ndarray
    xhat: np.ndarray
    y: np.ndarray
    axes: tuple[int, ...]
    eps: float

    @property
    def size(self) -> int:
        """H, the number of values that share one mean and variance."""
        return int(np.prod([self.x.shape[a] for a in self.axes]))


def layer_norm_steps(
    x, gamma=None, beta=None, *, eps: float = 1e-5, axis=-1, compute_dtype=None
) -> LayerNormSteps:
    """Layer-normalize `x` and keep every intermediate (chapter "The complete examples").

    Parameters
    ----------
    x : array_like
        Input of any shape with at least one axis. Integers and lists are
        promoted to float64; float16, bfloat16, float32 and float64 keep their dtype.
    gamma : array_like, optional
        Per-feature scale, of the shape of the normalized axes
        (``x.shape[axis]`` for an int axis). Default: 1.
    beta : array_like, optional
        Per-feature shift, of the same shape. Default: 0.
    eps : float, default 1e-5
        Added to the variance inside the square root; must be finite and >= 0.
    axis : int or tuple of int, default -1
        The axes that share one mean and variance. ``axis=(-2, -1)`` matches
        PyTorch's ``normalized_shape`` of the two trailing dimensions.
    compute_dtype : dtype or str, optional
        The dtype of the statistics and of the arithmetic. Default: float32
        for float16 and bfloat16 inputs (as PyTorch's kernels),
        the input's dtype otherwise. ``compute_dtype="float16"`` runs every
        operation in float16, as the chapter "Computing it right: numerics" compares.

    Returns
    -------
    LayerNormSteps

    Raises
    ------
    TypeError
        For complex, string, object or masked inputs, a non-integer axis or a non-numeric eps.
    ValueError
        For NaN or infinite values, a gamma or beta of the wrong shape or that
        overflows the compute dtype, an output that overflows the input's
        dtype, an empty normalized axis, an axis out of range, a negative or
        non-finite eps, a zero variance with an eps that is 0 in the compute
        dtype, or a variance that underflowed.

    Examples
    --------
    >>> steps = layer_norm_steps([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    >>> steps.mean.ravel(), steps.var.ravel()
    (array([2.5, 6.5]), array([1.25, 1.25]))
    >>> steps.xhat[0].round(4)
    array([-1.3416, -0.4472,  0.4472,  1.3416])
    """
    x = as_float_array(x, "x")
    eps = check_eps(eps)
    axes = normalized_axes(axis, x.ndim)
    shape = normalized_shape(x, axes)
    work = resolve_compute_dtype(x.dtype, compute_dtype)
    gamma = as_parameter(gamma, "gamma", shape, axes, x.ndim, work)
    beta = as_parameter(beta, "beta", shape, axes, x.ndim, work)
    stats = standardize(x, axes, eps, compute_dtype=work)
    with np.errstate(over="ignore"):
        y = stats.xhat if gamma is None else stats.xhat * gamma
        y = y if beta is None else y + beta
    return LayerNormSteps(
        x=x,
        mean=stats.mean,
        var=stats.var,
        sqrt_var_eps=stats.sqrt_var_eps,
        rstd=stats.rstd,
        xhat=stats.xhat,
        y=to_storage(y, x.dtype),
        axes=axes,
        eps=eps,
    )


def layer_norm(
    x,
    gamma=None,
    beta=None,
    *,
    eps: float = 1e-5,
    axis=-1,
    compute_dtype=None,
    return_stats: bool = False,
):
    """Layer Normalization: ``gamma * (x - mean) / sqrt(var + eps) + beta`` (chapter "Normalizing").

    Parameters and errors as in :func:`layer_norm_steps`, which also returns
    every intermediate.

    On ordinary input this is :func:`lnlib.textbook.numpy_layer_norm`, the
    ten-line version to read first. What this one adds, and why a reference
    needs it:

    - any axes (``axis=(-2, -1)`` is PyTorch's two-dimensional
      ``normalized_shape``), and optional gamma and beta;
    - a clear ``ValueError`` or ``TypeError`` for every bad input (NaN or
      infinite values, wrong gamma/beta shape, an empty axis, a bad eps, a
      zero variance with eps = 0, complex or non-numeric data), where the
      textbook version returns NaN or broadcasts silently;
    - integers promoted to float64, and a chosen ``compute_dtype`` (float32
      statistics for 16-bit inputs by default, as PyTorch's kernels);
    - each slice scaled by a power of two first (exact), so huge finite inputs
      do not overflow when squared and tiny ones do not underflow;
    - the saved statistics for the backward pass (``return_stats``).

    Parameters
    ----------
    return_stats : bool, default False
        Also return the saved statistics ``mean`` and ``rstd = 1 / sqrt(var + eps)``,
        as PyTorch's ``native_layer_norm`` and llm.c's ``layernorm_forward`` do,
        for :func:`~lnlib.backward.layer_norm_backward` (chapter "Gradients through LayerNorm").

    Returns
    -------
    y : ndarray
        Same shape and dtype as `x`.
    mean, rstd : ndarray
        Only with ``return_stats=True``: the statistics in the compute dtype
        (float32 for 16-bit inputs, as CUDA kernels keep them), with the
        normalized axes kept as size 1.

    Examples
    --------
    >>> layer_norm([2.0, 4.0, 6.0, 8.0]).round(4)
    array([-1.3416, -0.4472,  0.4472,  1.3416])
    >>> layer_norm([3.0, 3.0, 3.0, 3.0])
    array([0., 0., 0., 0.])
    >>> x = [[2.0, 4.0, 6.0, 8.0]]
    >>> y, mean, rstd = layer_norm(x, eps=0, return_stats=True)
    >>> mean, rstd.round(4)
    (array([[5.]]), array([[0.4472]]))
    """
    steps = layer_norm_steps(x, gamma, beta, eps=eps, axis=axis, compute_dtype=compute_dtype)
    return (steps.y, steps.mean, steps.rstd) if return_stats else steps.y
