r"""The backward pass of Layer Normalization, in closed form, and a finite-difference check.

With :math:`\hat x = (x - \mu)/s`, :math:`s = \sqrt{\sigma^2 + \varepsilon}`,
:math:`y = \gamma \hat x + \beta` and an upstream gradient :math:`dy = \partial L / \partial y`,

.. math::

    d\hat x = \gamma\, dy, \qquad
    dx = \frac{1}{s}\Big(d\hat x - \operatorname{mean}(d\hat x)
         - \hat x\,\operatorname{mean}(d\hat x\,\hat x)\Big),

    d\gamma = \sum_{\text{other axes}} dy\,\hat x, \qquad
    d\beta = \sum_{\text{other axes}} dy,

where the means run over the normalized axes. The chapter "Gradients through
LayerNorm" derives these formulas with sympy (:mod:`~lnlib.symbolic`) and checks
them against finite differences (:func:`numerical_gradient`) and PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from .forward import standardize, to_storage
from .summation import tree_mean, tree_sum
from .validation import (
    as_float_array,
    as_parameter,
    check_eps,
    check_finite,
    float_info,
    gradient_dtype,
    normalized_axes,
    normalized_shape,
)
from .validation import compute_dtype as resolve_compute_dtype

__all__ = [
    "BackwardParts",
    "backward_parts",
    "layer_norm_backward",
    "layer_norm_jacobian",
    "numerical_gradient",
    "relative_error",
]


@dataclass(frozen=True)
class BackwardParts:
    r"""The pieces of the closed-form backward pass (chapter "Gradients through LayerNorm").

    The input reaches :math:`\hat x` along three paths of the computation graph,
    and dx is the sum of one term per path:
    ``dx = direct + through_mean + through_var``, with ``direct = dxhat * rstd``,
    ``through_mean = -mean(dxhat) * rstd`` and ``through_var = -xhat * mean(dxhat * xhat) * rstd``.
    Statistics keep the normalized axes with size 1, as in :class:`~lnlib.LayerNormSteps`;
    everything is in the compute dtype (float32 for 16-bit inputs).

    Attributes
    ----------
    xhat : ndarray
        From the forward pass (recomputed, or rebuilt from the saved mean and rstd).
    rstd : ndarray
        ``1 / sqrt(var + eps)``, the reciprocal of the forward pass's divisor.
    dxhat : ndarray
        ``gamma * dy``, the gradient with respect to xhat.
    mean_dxhat, mean_dxhat_xhat : ndarray
        The two means the closed form subtracts.
    direct, through_mean, through_var : ndarray
        The three terms of dx, each of the shape of x.
    dx, dgamma, dbeta : ndarray
        As returned by :func:`layer_norm_backward`, before rounding (dx to x's dtype, dgamma and
        dbeta to theirs); dgamma and dbeta are summed in the wider of the compute dtype and theirs.
    """

    xhat: np.ndarray
    rstd: np.ndarray
    dxhat: np.ndarray
    mean_dxhat: np.ndarray
    mean_dxhat_xhat: np.ndarray
    direct: np.ndarray
    through_mean: np.ndarray
    through_var: np.ndarray
    dx: np.ndarray
    dgamma: np.ndarray
    dbeta: np.ndarray

    @property
    def sqrt_var_eps(self) -> np.ndarray:
        """``sqrt(var + eps) = 1 / rstd``, the forward pass's divisor."""
        return 1 / self.rstd


def backward_parts(
    dy, x, gamma=None, *, eps: float = 1e-5, axis=-1, mean=None, rstd=None, compute_dtype=None
) -> BackwardParts:
    """The closed-form backward pass with every intermediate kept (chapter "Gradients through
    LayerNorm").

    Parameters, errors and the meaning of the results as in :func:`layer_norm_backward`.

    Returns
    -------
    BackwardParts
    """
    x = as_float_array(x, "x")
    eps = check_eps(eps)
    axes = normalized_axes(axis, x.ndim)
    shape = normalized_shape(x, axes)
    work = resolve_compute_dtype(x.dtype, compute_dtype)
    xhat, rstd = saved_xhat(x, axes, eps, work, mean, rstd)
    dy = _as_upstream(dy, x).astype(work)
    others = tuple(a for a in range(x.ndim) if a not in axes)
    total = accumulator(work, gradient_dtype(gamma, x.dtype))
    scale = as_parameter(gamma, "gamma", shape, axes, x.ndim, work)
    dxhat = dy if scale is None else dy * scale
    mean_dxhat = tree_mean(dxhat, axes, keepdims=True)
    mean_dxhat_xhat = tree_mean(dxhat * xhat, axes, keepdims=True)
    return BackwardParts(
        xhat=xhat,
        rstd=rstd,
        dxhat=dxhat,
        mean_dxhat=mean_dxhat,
        mean_dxhat_xhat=mean_dxhat_xhat,
        direct=dxhat * rstd,
        through_mean=np.broadcast_to(-mean_dxhat * rstd, x.shape),
        through_var=-xhat * mean_dxhat_xhat * rstd,
        dx=(dxhat - mean_dxhat - xhat * mean_dxhat_xhat) * rstd,
        dgamma=tree_sum(dy * xhat, others, dtype=total),
        dbeta=tree_sum(dy, others, dtype=total),
    )


def layer_norm_backward(
    dy, x, gamma=None, *, eps: float = 1e-5, axis=-1, mean=None, rstd=None, compute_dtype=None
):
    """Gradients of LayerNorm with respect to x, gamma and beta (chapter "Gradients through
    LayerNorm").

    Parameters
    ----------
    dy : array_like
        Upstream gradient dL/dy, of the shape of `x`. It is the gradient of the
        output, which has x's dtype, so a dy of another dtype is rounded to it,
        as a kernel receives it (PyTorch requires dy in that dtype).
    x : array_like
        The forward pass's input, any shape with at least one axis.
    gamma : array_like, optional
        Per-feature scale, of the shape of the normalized axes. Default: 1.
        (beta does not enter any gradient, so it is not a parameter here.)
    eps : float, default 1e-5
        As in the forward pass, inside the square root.
    axis : int or tuple of int, default -1
        The normalized axes, as in :func:`~lnlib.layer_norm`.
    mean : array_like, optional
        The mean the forward pass saved (``layer_norm(..., return_stats=True)``),
        of the shape of the statistics (normalized axes kept as size 1, or
        dropped). Given with `rstd`, the backward pass uses
        ``xhat = (x - mean) * rstd`` instead of recomputing the forward pass,
        as PyTorch's and llm.c's kernels do; `eps` is then not used.
    rstd : array_like, optional
        The saved ``1 / sqrt(var + eps)``, of the same shape as `mean`.
    compute_dtype : dtype or str, optional
        As in :func:`~lnlib.layer_norm`: float32 for 16-bit inputs by default.

    Returns
    -------
    dx : ndarray
        dL/dx, the shape and dtype of `x`.
    dgamma, dbeta : ndarray
        dL/dgamma and dL/dbeta, the shape of the normalized axes: the sums of
        ``dy * xhat`` and ``dy`` over every other axis (over all B·T tokens of a
        (B, T, C) activation). Their dtype is gamma's when `gamma` is a numpy
        array of a float dtype (float32 parameters of 16-bit x, as autocast
        training keeps them), else x's (:func:`~lnlib.validation.gradient_dtype`);
        they are summed in the wider of that and the compute dtype. They are
        returned even when `gamma` is None (then they are the gradients at
        gamma = 1, beta = 0).

    Raises
    ------
    ValueError, TypeError
        As :func:`~lnlib.layer_norm_steps` for `x`, `gamma`, `eps` and `axis`;
        when `dy` is not a finite real array of the shape of `x`, or does not
        fit x's dtype (the message names both dtypes); when only one
        of `mean` and `rstd` is given, or one has the wrong shape, is not
        finite, or rstd is not positive.

    Examples
    --------
    >>> dy, x = [1.0, 0.0, 0.0, 0.0], [2.0, 4.0, 6.0, 8.0]
    >>> dx, dgamma, dbeta = layer_norm_backward(dy, x, eps=0)
    >>> dx.round(4)
    array([ 0.1342, -0.1789, -0.0447,  0.0894])
    >>> dbeta
    array([1., 0., 0., 0.])
    """
    with np.errstate(
        over="ignore", invalid="ignore"
    ):  # an overflow is refused below, with its cause
        parts = backward_parts(
            dy, x, gamma, eps=eps, axis=axis, mean=mean, rstd=rstd, compute_dtype=compute_dtype
        )
    storage = as_float_array(x, "x").dtype
    grads = {"dx": parts.dx, "dgamma": parts.dgamma, "dbeta": parts.dbeta}
    dtypes = {"dx": storage, "dgamma": gradient_dtype(gamma, storage)}
    return tuple(
        to_storage(
            g, dtypes.get(name, dtypes["dgamma"]), name, partial(_overflow_cause, name, parts)
        )
        for name, g in grads.items()
    )


def accumulator(work: np.dtype, gradient: np.dtype) -> np.dtype:
    """The dtype dgamma and dbeta are summed in: the wider of the compute dtype and their own
    (chapter "Gradients through LayerNorm").

    float32 for 16-bit x with float32 gamma, never a 16-bit running sum below the result's
    precision.
    """
    return gradient if gradient.itemsize > work.itemsize else work


def _overflow_cause(name: str, parts: BackwardParts) -> str:
    """Why gradient `name` can overflow, for the message that refuses it (never gamma or beta)."""
    if name != "dx":
        return parameter_overflow_cause(name, parts.xhat.size // max(parts.dgamma.size, 1))
    rstd = np.broadcast_to(parts.rstd, parts.xhat.shape)
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(rstd)), rstd.shape))
    largest = float(rstd[where])
    beyond = (
        ""
        if np.isfinite(largest)
        else (" (beyond the working dtype's range: var + eps is smaller than it can invert)")
    )
    with np.errstate(invalid="ignore"):
        upstream = float(np.max(np.abs(parts.dxhat)))
    index = where[:-1] if len(where) > 1 else where
    return (
        f"dx is (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) * rstd, and "
        f"rstd = 1 / sqrt(var + eps) is {largest:.3g}{beyond} at index {index} for "
        f"|dy * gamma| up to {upstream:.3g}: the row's spread is tiny next to its eps "
        "(eps=0 leaves nothing to bound rstd); use a larger eps, or compute_dtype='float64'"
    )


def parameter_overflow_cause(name: str, rows: int) -> str:
    """Why dgamma or dbeta overflows its dtype, for the message that refuses it (chapter "Gradients
    through LayerNorm")."""
    summed = "dy * xhat" if name == "dgamma" else "dy"
    return (
        f"{name} is the sum of {summed} over every other axis ({rows} rows), and dy is too large "
        "for that sum; pass gamma as a float32 array for float32 dgamma and dbeta (as "
        "mixed-precision training keeps them), or a smaller dy"
    )


def layer_norm_jacobian(x, gamma=None, *, eps: float = 1e-5, axis=-1) -> np.ndarray:
    r"""The H x H Jacobian dy_i/dx_j of LayerNorm for one normalized vector (chapter "Gradients
    through LayerNorm").

    .. math::

        \frac{\partial y_i}{\partial x_j} = \frac{\gamma_i}{\sqrt{\sigma^2 + \varepsilon}}
        \Big(\delta_{ij} - \frac1H - \frac{\hat x_i \hat x_j}{H}\Big)

    with :math:`\sigma^2` the biased variance of `x` and :math:`\delta_{ij}`
    1 when i = j, else 0.

    Parameters
    ----------
    x : array_like
        One normalized slice: `axis` must cover every axis of `x` (a vector of
        shape (H,) with the default ``axis=-1``). Several axes are flattened in
        C order, so H = ``x.size``.
    gamma : array_like, optional
        Per-feature scale of the shape of `x`. Default: 1.
    eps : float, default 1e-5
        As in the forward pass.
    axis : int or tuple of int, default -1

    Returns
    -------
    ndarray of shape (H, H)
        Row i is the gradient of y_i; ``dy @ J`` is the backward pass's dx.

    Raises
    ------
    ValueError
        If `axis` leaves an axis of `x` out (a batch has one Jacobian per slice;
        call this once per slice), or as :func:`~lnlib.layer_norm_steps`.

    Examples
    --------
    >>> layer_norm_jacobian([-1.0, 1.0], eps=0)
    array([[0., 0.],
           [0., 0.]])
    """
    x = as_float_array(x, "x")
    axes = normalized_axes(axis, x.ndim)
    if len(axes) != x.ndim:
        raise ValueError(
            f"layer_norm_jacobian takes one normalized slice, so axis must cover every axis of x; "
            f"x has shape {x.shape} and axis={axis!r} normalizes only axes {axes}. "
            "Pass one slice (e.g. x[i]) at a time."
        )
    stats = standardize(x, axes, check_eps(eps))
    xhat = stats.xhat.ravel()
    size = xhat.size
    scale = (
        np.ones_like(xhat)
        if gamma is None
        else as_parameter(gamma, "gamma", x.shape, axes, x.ndim, xhat.dtype).ravel()
    )
    inner = np.eye(size, dtype=xhat.dtype) - 1.0 / size - np.outer(xhat, xhat) / size
    return scale[:, None] * inner * stats.rstd.ravel()[0]


def numerical_gradient(
    f: Callable[[np.ndarray], np.ndarray], x, dy, *, step: float = 1e-6
) -> np.ndarray:
    """Central-difference gradient of ``L(x) = sum(dy * f(x))`` with respect to x (chapter
    "Gradients through LayerNorm").

    Works for any function of one array, such as ``lambda x: layer_norm(x, g, b)``
    or ``lambda w: block_forward(x, w)``: it perturbs each entry of `x` by
    ``+-step`` in float64 and takes ``(L(x + step) - L(x - step)) / (2 step)``,
    whose error is O(step**2) plus rounding of about ``1e-16 / step``.

    Parameters
    ----------
    f : callable
        Maps an array of the shape of `x` to an array of the shape of `dy`.
    x : array_like
        Where to take the gradient; converted to float64.
    dy : array_like
        Upstream gradient, of the shape of ``f(x)``.
    step : float, default 1e-6
        The perturbation, > 0.

    Returns
    -------
    ndarray
        float64, the shape of `x`.

    Raises
    ------
    ValueError
        If `step` is not a positive finite number, or `dy` does not have the shape of ``f(x)``.

    Examples
    --------
    >>> numerical_gradient(lambda v: v**2, [1.0, 3.0], [1.0, 1.0]).round(6)
    array([2., 6.])
    """
    x = as_float_array(x, "x").astype(np.float64)
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"step must be a positive finite number such as 1e-6; got {step!r}.")
    dy = _as_upstream(dy, np.asarray(f(x), dtype=np.float64))
    grad = np.empty_like(x)
    probe = x.copy()
    for index in np.ndindex(x.shape):
        probe[index] = x[index] + step
        upper = float(np.sum(dy * f(probe)))
        probe[index] = x[index] - step
        lower = float(np.sum(dy * f(probe)))
        probe[index] = x[index]
        grad[index] = (upper - lower) / (2 * step)
    return grad


def relative_error(ours, reference) -> float:
    """``max|ours - reference| / max|reference|``: the error relative to the gradient's scale
    (chapter "Gradients through LayerNorm").

    An elementwise relative error blows up on entries that are nearly zero
    (and a LayerNorm gradient always has some), so the difference is measured
    against the largest entry of the reference instead. Returns 0.0 when both
    are zero, and infinity when only the reference is.

    Examples
    --------
    >>> round(relative_error([1.0, 2.001], [1.0, 2.0]), 6)
    0.0005
    """
    ours = np.asarray(ours, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if ours.shape != reference.shape:
        raise ValueError(
            f"shapes differ, {ours.shape} (ours) against {reference.shape} (reference); compare "
            "arrays of the same shape."
        )
    diff = float(np.max(np.abs(ours - reference), initial=0.0))
    scale = float(np.max(np.abs(reference), initial=0.0))
    if scale == 0.0:
        return 0.0 if diff == 0.0 else float("inf")
    return diff / scale


def saved_xhat(x: np.ndarray, axes: tuple[int, ...], eps: float, work, mean=None, rstd=None):
    """xhat and rstd over `axes` in the dtype `work`: recomputed, or rebuilt from a saved mean and
    rstd (chapter "Gradients through LayerNorm").

    The saved statistics have the statistics' shape (the axes kept as size 1, or dropped);
    a backward pass that has them uses ``xhat = (x - mean) * rstd``, as kernels do.

    Raises
    ------
    ValueError
        When only one of `mean` and `rstd` is given, or one has the wrong shape, is not
        finite, or rstd is not positive.
    """
    if (mean is None) != (rstd is None):
        raise ValueError(
            "pass both saved statistics, mean and rstd (from the forward pass), or neither."
        )
    if mean is None:
        stats = standardize(x, axes, eps, compute_dtype=work)
        return stats.xhat, stats.rstd
    mean, rstd = (
        _saved_statistic(v, name, x, axes, work) for v, name in ((mean, "mean"), (rstd, "rstd"))
    )
    if np.any(rstd <= 0):
        raise ValueError(
            "rstd must be positive everywhere: it is 1 / sqrt(var + eps) from the forward pass."
        )
    return (x.astype(work) - mean) * rstd, rstd


def _saved_statistic(value, name: str, x: np.ndarray, axes: tuple[int, ...], dtype) -> np.ndarray:
    """Check a saved mean or rstd: finite, of the statistics' shape (axes kept or dropped); return
    it with the axes kept."""
    value = np.asarray(as_float_array(value if np.ndim(value) else [value], name))
    kept = tuple(1 if a in axes else n for a, n in enumerate(x.shape))
    dropped = tuple(n for a, n in enumerate(x.shape) if a not in axes)
    if value.shape not in (kept, dropped) and not (value.size == 1 and not dropped):
        raise ValueError(
            f"{name} must have the shape of the statistics, {kept} (or {dropped}), one value per "
            f"normalized slice; got shape {value.shape}."
        )
    return check_finite(value.astype(dtype).reshape(kept), name)


def _as_upstream(dy, out: np.ndarray) -> np.ndarray:
    """Check an upstream gradient: finite, real, the shape of `out`, rounded to its dtype.

    dy is the gradient of the output, which has x's dtype, so a dy of another dtype is rounded to
    it, as a kernel receives it (PyTorch requires dy in the output's dtype); one that does not fit
    is refused as what it is, a dtype mismatch, before it can become an infinite gradient.
    """
    dy = as_float_array(dy, "dy")
    if dy.shape != out.shape:
        raise ValueError(
            f"dy must have the shape of the forward output, {out.shape}; got shape {dy.shape}."
        )
    with np.errstate(over="ignore"):
        rounded = dy.astype(out.dtype, copy=False)
    overflow = ~np.isfinite(rounded)
    if overflow.any():
        largest = float(np.max(np.abs(dy[overflow]).astype(np.float64)))
        name = out.dtype.name
        raise ValueError(
            f"dy is {dy.dtype.name} and does not fit x's {name}: {largest:.6g} > "
            f"{float(float_info(name).max):.6g}. dy is the gradient of the output, which has x's "
            f"dtype, so it is rounded to it as a kernel receives it (PyTorch requires dy in that "
            f"dtype); pass dy in {name}, scaled to fit, or x in a wider dtype."
        )
    return rounded
