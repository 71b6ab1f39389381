r"""LayerNorm's family: batch, instance, group and RMS normalization (chapter "LayerNorm and its
family").

Every member standardizes a tensor over some set of entries that *share statistics*
and then applies a per-feature (per-channel) gain and bias:

.. math::

    \hat x = \frac{x - \mu_S}{\sqrt{\sigma^2_S + \varepsilon}}, \qquad y = \gamma \hat x + \beta ,

where :math:`S` is the set of entries the entry belongs to. The members differ only in
:math:`S`. For an image tensor of shape (N, C, H, W), in the picture of Wu & He (2018):

- batch norm: one channel over the whole batch and all positions, axes (N, H, W);
- layer norm: one sample, all channels and positions, axes (C, H, W);
- instance norm: one sample and one channel, over its positions, axes (H, W);
- group norm: one sample and a group of C/G consecutive channels, over their positions;
- RMS norm: the axes of layer norm, but without subtracting the mean:
  :math:`y = \gamma\, x / \sqrt{\operatorname{mean}(x^2) + \varepsilon}`.

As in :mod:`~lnlib.forward`, variances are biased (divide by the set's size) and
:math:`\varepsilon` sits inside the square root; inputs are checked by
:mod:`~lnlib.validation` and normalized by :func:`~lnlib.forward.standardize`, so every
member follows the same rules: 16-bit inputs get float32 statistics (``compute_dtype``
chooses otherwise), huge finite inputs are scaled before squaring, and a zero
divisor is judged in the working dtype.
Batch norm also keeps running statistics for inference (:class:`RunningStats`),
updated like PyTorch's ``momentum`` rule.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .backward import _as_upstream, accumulator, parameter_overflow_cause, saved_xhat
from .forward import layer_norm, standardize, to_storage
from .summation import tree_sum
from .validation import (
    as_float_array,
    as_parameter,
    check_eps,
    check_finite,
    check_nonzero_spread,
    gradient_dtype,
    normalized_axes,
    normalized_shape,
)
from .validation import compute_dtype as resolve_compute_dtype

__all__ = [
    "METHODS",
    "RunningStats",
    "batch_norm",
    "batch_norm_backward",
    "group_norm",
    "instance_norm",
    "normalize",
    "rms_norm",
    "axis_ids",
    "statistic_ids",
]

#: The members of the family that :func:`normalize` and :func:`statistic_ids` know, by name.
METHODS = ("batch", "layer", "instance", "group", "rms")


def _normalized(x: np.ndarray, axes: tuple[int, ...], eps: float, compute_dtype) -> np.ndarray:
    """x-hat over `axes` in the compute dtype, by the shared kernel
    :func:`~lnlib.forward.standardize`."""
    return standardize(x, axes, eps, compute_dtype=compute_dtype).xhat


def _affine(xhat: np.ndarray, gamma, beta, param_axes: tuple[int, ...], storage) -> np.ndarray:
    """Apply a per-feature gain and bias whose shape is that of `param_axes` of `xhat`, then round
    to `storage`."""
    shape = tuple(xhat.shape[a] for a in param_axes)
    gamma = as_parameter(gamma, "gamma", shape, param_axes, xhat.ndim, xhat.dtype)
    beta = as_parameter(beta, "beta", shape, param_axes, xhat.ndim, xhat.dtype)
    with np.errstate(over="ignore"):
        y = xhat if gamma is None else xhat * gamma
        y = y if beta is None else y + beta
    return to_storage(y, storage)


def _other_axes(axes: tuple[int, ...], ndim: int) -> tuple[int, ...]:
    return tuple(a for a in range(ndim) if a not in axes)


def _channels_first(x, name: str, min_ndim: int) -> np.ndarray:
    """Check that `x` has the ``(N, C, *spatial)`` layout with at least `min_ndim` axes."""
    x = as_float_array(x, "x")
    if x.ndim < min_ndim:
        spatial = "" if min_ndim == 2 else ", with at least one spatial axis"
        raise ValueError(
            f"{name} expects an input of shape (N, C, *spatial){spatial}; got shape {x.shape}."
        )
    return x


@dataclass
class RunningStats:
    """Batch norm's running mean and variance, used instead of batch statistics at inference.

    Updated in place by :func:`batch_norm` in training mode, as PyTorch does:
    ``running = (1 - momentum) * running + momentum * batch_statistic``, where the
    variance that enters is the *unbiased* batch variance (divide by n - 1), while
    the normalization itself uses the biased one. The chapter "LayerNorm and its
    family" shows the gap between training and inference that this creates.

    Attributes
    ----------
    mean : ndarray
        Running mean, one value per feature (the shape of the axes batch norm keeps).
    var : ndarray
        Running unbiased variance, of the same shape.
    momentum : float
        Weight of the newest batch, in (0, 1].
    updates : int
        How many training batches have been folded in.
    """

    mean: np.ndarray
    var: np.ndarray
    momentum: float = 0.1
    updates: int = 0

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse statistics that cannot normalize: non-finite values, a negative variance,
        mismatched shapes, a bad momentum.

        Called on creation and by :func:`batch_norm` before every use.

        Raises
        ------
        ValueError
            Naming the problem.
        """
        if (
            isinstance(self.momentum, bool)
            or not isinstance(self.momentum, numbers.Real)
            or not 0 < self.momentum <= 1
        ):
            raise ValueError(
                f"momentum must be a number in (0, 1], such as 0.1; got {self.momentum!r}."
            )
        self.mean = check_finite(as_float_array(self.mean, "running mean"), "running mean")
        self.var = check_finite(as_float_array(self.var, "running variance"), "running variance")
        if self.mean.shape != self.var.shape:
            raise ValueError(
                f"the running mean and variance must have the same shape; got {self.mean.shape} "
                f"and {self.var.shape}."
            )
        if np.any(self.var < 0):
            where = tuple(int(i) for i in np.argwhere(self.var < 0)[0])
            raise ValueError(
                f"the running variance is negative at index {where} ({float(self.var[where]):g}); "
                "a variance is >= 0."
            )

    @classmethod
    def start(cls, shape, *, momentum: float = 0.1) -> "RunningStats":
        """Fresh statistics, mean 0 and variance 1, as PyTorch initializes them.

        Raises
        ------
        ValueError
            If `momentum` is not in (0, 1].
        """
        shape = tuple(int(s) for s in np.atleast_1d(shape))
        return cls(mean=np.zeros(shape), var=np.ones(shape), momentum=momentum)

    def update(self, batch_mean: np.ndarray, batch_var: np.ndarray, count: int) -> None:
        """Fold in one batch's mean and biased variance over `count` values per feature."""
        unbiased = batch_var * (count / (count - 1))
        self.mean = (1 - self.momentum) * self.mean + self.momentum * np.asarray(
            batch_mean, dtype=np.float64
        )
        self.var = (1 - self.momentum) * self.var + self.momentum * np.asarray(
            unbiased, dtype=np.float64
        )
        self.updates += 1
        self.check()


def batch_norm(
    x,
    gamma=None,
    beta=None,
    *,
    eps: float = 1e-5,
    axis=0,
    running: RunningStats | None = None,
    training: bool = True,
    compute_dtype=None,
) -> np.ndarray:
    """Batch normalization (chapter "LayerNorm and its family").

    In training mode each feature is standardized with the mean and biased
    variance of the current batch, over `axis`; if `running` is given, it is
    updated in place. In inference mode (``training=False``) the stored running
    statistics are used instead, so one sample's output no longer depends on
    the others in its batch.

    Parameters
    ----------
    x : array_like
        Input, e.g. (N, D) for a dense layer or (N, C, H, W) for a convolution.
    gamma : array_like, optional
        Per-feature scale, of the shape of the axes *not* in `axis`
        ((D,) or (C,)). Default: 1.
    beta : array_like, optional
        Per-feature shift, of the same shape. Default: 0.
    eps : float, default 1e-5
        Added to the variance inside the square root.
    axis : int or tuple of int, default 0
        The axes that share statistics: 0 for (N, D); ``(0, 2, 3)`` for (N, C, H, W).
    running : RunningStats, optional
        Running statistics: updated in training mode, required in inference mode.
    training : bool, default True
        Batch statistics (True) or running statistics (False).
    compute_dtype : dtype or str, optional
        As in :func:`~lnlib.layer_norm`: float32 for 16-bit inputs by default.

    Returns
    -------
    ndarray
        Same shape and floating dtype as `x`.

    Raises
    ------
    TypeError, ValueError
        For the input errors of :func:`~lnlib.layer_norm`; in training mode, when
        each feature has only one value (a batch of one sample in a dense layer);
        in inference mode, without running statistics, with ones of the wrong
        shape, or with a negative or non-finite running variance.

    Examples
    --------
    >>> batch_norm([[1.0, 10.0], [3.0, 30.0]], eps=0.0)
    array([[-1., -1.],
           [ 1.,  1.]])
    """
    x = as_float_array(x, "x")
    eps = check_eps(eps)
    axes = normalized_axes(axis, x.ndim)
    kept = _other_axes(axes, x.ndim)
    count = int(np.prod(normalized_shape(x, axes)))
    kept_shape = tuple(x.shape[a] for a in kept)
    work = resolve_compute_dtype(x.dtype, compute_dtype)
    if running is not None:
        running.check()
        if running.mean.shape != kept_shape:
            raise ValueError(
                f"running statistics must have one value per feature, shape {kept_shape}; got "
                f"shape {running.mean.shape}."
            )
    if training:
        _batch_count(x, axes)
        stats = standardize(x, axes, eps, compute_dtype=work)
        xhat = stats.xhat
        if running is not None:
            running.update(stats.mean.squeeze(axes), stats.var.squeeze(axes), count)
    else:
        if running is None:
            raise ValueError(
                "batch norm in inference mode (training=False) needs running statistics: pass "
                "running=RunningStats(...)."
            )
        shape = [1] * x.ndim
        for a in kept:
            shape[a] = x.shape[a]
        mean = running.mean.reshape(shape).astype(work)
        var = running.var.reshape(shape).astype(work)
        check_nonzero_spread(var, eps, dtype=work, what="running variance")
        with np.errstate(over="ignore", invalid="ignore"):
            xhat = (x.astype(work) - mean) / np.sqrt(var + np.asarray(eps).astype(work))
        check_finite(
            xhat, "the normalized x", f" (the running statistics do not fit in {work.name})"
        )
    return _affine(xhat, gamma, beta, kept, x.dtype)


def batch_norm_backward(
    dy,
    x,
    gamma=None,
    *,
    eps: float = 1e-5,
    axis=0,
    mean=None,
    rstd=None,
    compute_dtype=None,
):
    r"""Gradients of :func:`batch_norm` in training mode with respect to x, gamma and beta (chapter
    "LayerNorm and its family").

    With the batch statistics over `axis` (N values per feature: the batch, and the
    positions of an image), :math:`\mathrm{rstd} = 1/\sqrt{\sigma^2 + \varepsilon}`,
    :math:`d\hat x = \gamma\, dy` and

    .. math::

        dx = \frac{\mathrm{rstd}}{N}\Big(N\, d\hat x - \sum d\hat x
             - \hat x \sum d\hat x\, \hat x\Big),

    .. math::

        d\gamma = \sum dy\, \hat x, \qquad d\beta = \sum dy,

    every sum over `axis`: LayerNorm's closed form (:func:`~lnlib.layer_norm_backward`,
    chapter "Gradients through LayerNorm") with its sums over the batch instead of the
    features. In inference mode the running statistics are constants, and the gradient
    is just ``gamma * dy * rstd``; this function is the training-mode one.

    Parameters
    ----------
    dy : array_like
        Upstream gradient dL/dy, of the shape of `x` (rounded to x's dtype, as in
        :func:`~lnlib.layer_norm_backward`).
    x : array_like
        The forward pass's input, e.g. (N, D) or (N, C, H, W).
    gamma : array_like, optional
        Per-feature scale, of the shape of the axes *not* in `axis`. Default: 1.
    eps : float, default 1e-5
        As in the forward pass, inside the square root.
    axis : int or tuple of int, default 0
        The axes that share statistics, as in :func:`batch_norm`: 0 for (N, D),
        ``(0, 2, 3)`` for (N, C, H, W).
    mean, rstd : array_like, optional
        The batch mean and ``1 / sqrt(var + eps)`` of the forward pass, one value per
        feature (the axes of `axis` kept as size 1, or dropped); given both, xhat is
        rebuilt as ``(x - mean) * rstd`` and `eps` is not used.
    compute_dtype : dtype or str, optional
        As in :func:`~lnlib.layer_norm`: float32 for 16-bit inputs by default.

    Returns
    -------
    dx : ndarray
        dL/dx, the shape and dtype of `x`.
    dgamma, dbeta : ndarray
        One value per feature, summed over `axis`; in gamma's dtype when `gamma` is a
        float ndarray, else in x's (:func:`~lnlib.validation.gradient_dtype`), summed in
        the wider of that and the compute dtype.

    Raises
    ------
    ValueError, TypeError
        As :func:`batch_norm` in training mode for `x`, `gamma`, `eps` and `axis`: an
        empty batch is refused (its statistics are undefined, and the forward pass
        refuses it too), and so is one value per feature; as
        :func:`~lnlib.layer_norm_backward` for `dy`, `mean` and `rstd`; when a gradient
        overflows its dtype.

    Examples
    --------
    >>> dy, x = [[1.0], [0.0]], [[1.0], [3.0]]
    >>> dx, dgamma, dbeta = batch_norm_backward(dy, x, eps=0)
    >>> dx, dgamma, dbeta
    (array([[0.],
           [0.]]), array([-1.]), array([1.]))
    """
    x = as_float_array(x, "x")
    eps = check_eps(eps)
    axes = normalized_axes(axis, x.ndim)
    kept = _other_axes(axes, x.ndim)
    count = _batch_count(x, axes)
    work = resolve_compute_dtype(x.dtype, compute_dtype)
    storage = gradient_dtype(gamma, x.dtype)
    total = accumulator(work, storage)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        xhat, rstd = saved_xhat(x, axes, eps, work, mean, rstd)
        dy = _as_upstream(dy, x).astype(work)
        scale = as_parameter(gamma, "gamma", tuple(x.shape[a] for a in kept), kept, x.ndim, work)
        dxhat = dy if scale is None else dy * scale
        sums = (tree_sum(dxhat, axes, keepdims=True), tree_sum(dxhat * xhat, axes, keepdims=True))
        dx = rstd / count * (count * dxhat - sums[0] - xhat * sums[1])
        dgamma = tree_sum(dy * xhat, axes, dtype=total)
        dbeta = tree_sum(dy, axes, dtype=total)
    return (
        to_storage(dx, x.dtype, "dx", _BN_DX_OVERFLOW),
        to_storage(dgamma, storage, "dgamma", parameter_overflow_cause("dgamma", count)),
        to_storage(dbeta, storage, "dbeta", parameter_overflow_cause("dbeta", count)),
    )


_BN_DX_OVERFLOW = (
    "dx is rstd / N * (N * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)), and rstd = "
    "1 / sqrt(var + eps) is large where a feature barely varies over the batch; use a larger eps, "
    "or compute_dtype='float64'"
)


def _batch_count(x: np.ndarray, axes: tuple[int, ...]) -> int:
    """N, the values per feature over the batch axes; refuse an empty batch or a batch of one value,
    as training mode must."""
    count = int(np.prod(normalized_shape(x, axes)))
    if count == 1:
        raise ValueError(
            "batch norm in training mode needs more than one value per feature to estimate a "
            f"variance; the axes {axes} of "
            f"shape {x.shape} hold one. Use a larger batch, or training=False with running "
            "statistics."
        )
    return count


def instance_norm(x, gamma=None, beta=None, *, eps: float = 1e-5, compute_dtype=None) -> np.ndarray:
    """Instance normalization: each channel of each sample over its positions (chapter "LayerNorm
    and its family").

    Parameters
    ----------
    x : array_like
        Input of shape ``(N, C, *spatial)`` with at least one spatial axis.
    gamma : array_like, optional
        Per-channel scale, shape (C,). Default: 1.
    beta : array_like, optional
        Per-channel shift, shape (C,). Default: 0.
    eps : float, default 1e-5

    Raises
    ------
    TypeError, ValueError
        For the input errors of :func:`~lnlib.layer_norm`, or an input without a spatial axis.

    Examples
    --------
    >>> instance_norm([[[1.0, 3.0], [0.0, 10.0]]], eps=0.0)
    array([[[-1.,  1.],
            [-1.,  1.]]])
    """
    x = _channels_first(x, "instance_norm", 3)
    eps = check_eps(eps)
    return _affine(
        _normalized(x, tuple(range(2, x.ndim)), eps, compute_dtype), gamma, beta, (1,), x.dtype
    )


def group_norm(
    x, groups: int, gamma=None, beta=None, *, eps: float = 1e-5, compute_dtype=None
) -> np.ndarray:
    """Group normalization: each group of C/G channels of each sample, over those channels and
    positions.

    ``groups=1`` is layer norm over ``(C, *spatial)``; ``groups=C`` is instance norm
    (chapter "LayerNorm and its family").

    Parameters
    ----------
    x : array_like
        Input of shape ``(N, C, *spatial)``.
    groups : int
        G, the number of groups; must divide C.
    gamma : array_like, optional
        Per-channel scale, shape (C,). Default: 1.
    beta : array_like, optional
        Per-channel shift, shape (C,). Default: 0.
    eps : float, default 1e-5

    Raises
    ------
    TypeError
        If `groups` is not an integer (or for the input errors of :func:`~lnlib.layer_norm`).
    ValueError
        If `groups` is not a divisor of C (or for the input errors of :func:`~lnlib.layer_norm`).

    Examples
    --------
    >>> group_norm([[1.0, 3.0, 0.0, 10.0]], groups=2, eps=0.0)
    array([[-1.,  1., -1.,  1.]])
    """
    x = _channels_first(x, "group_norm", 2)
    eps = check_eps(eps)
    channels = x.shape[1]
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral):
        raise TypeError(
            f"groups must be an int that divides the {channels} channels; got {groups!r}."
        )
    if groups < 1 or channels % groups:
        divisors = [g for g in range(1, channels + 1) if channels % g == 0]
        raise ValueError(
            f"groups must divide the number of channels C = {channels}, i.e. be one of "
            f"{divisors}; got {groups}."
        )
    grouped = x.reshape(x.shape[0], int(groups), channels // int(groups), *x.shape[2:])
    xhat = _normalized(grouped, tuple(range(2, grouped.ndim)), eps, compute_dtype).reshape(x.shape)
    return _affine(xhat, gamma, beta, (1,), x.dtype)


def rms_norm(
    x, gamma=None, *, eps: float = 1e-6, axis=-1, compute_dtype=None, return_stats: bool = False
):
    r"""RMS normalization, :math:`y = \gamma\, x / \sqrt{\operatorname{mean}(x^2) + \varepsilon}`
    (chapter "LayerNorm and its family").

    Zhang & Sennrich (2019): layer norm without the mean (and without beta).
    It equals ``layer_norm(x, gamma)`` when every normalized slice has mean zero.

    Parameters
    ----------
    x : array_like
        Input of any shape.
    gamma : array_like, optional
        Per-feature scale, of the shape of the normalized axes.
    eps : float, default 1e-6
        Added to the mean square inside the square root.
    axis : int or tuple of int, default -1
        The axes that share one root mean square.
    compute_dtype : dtype or str, optional
        As in :func:`~lnlib.layer_norm`: float32 for 16-bit inputs by default.
    return_stats : bool, default False
        Also return the saved statistic ``rstd = 1 / sqrt(mean(x**2) + eps)`` for
        :func:`~lnlib.rms.rms_norm_backward`.

    Returns
    -------
    y : ndarray
        Same shape and dtype as `x`.
    rstd : ndarray
        Only with ``return_stats=True``: in the compute dtype, the normalized axes kept as size 1.

    Raises
    ------
    TypeError, ValueError
        For the input errors of :func:`~lnlib.layer_norm`; with ``eps=0``, an
        all-zero slice (mean square 0) is refused.

    Examples
    --------
    >>> rms_norm([3.0, -4.0, 0.0, 0.0], eps=0.0)
    array([ 1.2, -1.6,  0. ,  0. ])
    """
    x = as_float_array(x, "x")
    eps = check_eps(eps)
    axes = normalized_axes(axis, x.ndim)
    stats = standardize(x, axes, eps, centre=False, compute_dtype=compute_dtype)
    y = _affine(stats.xhat, gamma, None, axes, x.dtype)
    return (y, stats.rstd) if return_stats else y


def normalize(x, method: str, *, groups: int = 1, eps: float | None = None) -> np.ndarray:
    """Apply one family member, by name, to an ``(N, C, *spatial)`` tensor in training mode.

    The explorer of the chapter "LayerNorm and its family" calls this with the
    method chosen in its dropdown. Layer and RMS norm take all of ``(C, *spatial)``.

    Parameters
    ----------
    x : array_like
        Input of shape ``(N, C, *spatial)``.
    method : str
        One of :data:`METHODS`.
    groups : int, default 1
        For ``method="group"`` only.
    eps : float, optional
        Default: each member's own default (1e-5, and 1e-6 for RMS norm, as :func:`rms_norm`).

    Raises
    ------
    ValueError
        For an unknown method, and the errors of the chosen norm.
    """
    x = _channels_first(x, "normalize", 2)
    trailing = tuple(range(1, x.ndim))
    if method == "rms":
        return rms_norm(x, axis=trailing) if eps is None else rms_norm(x, eps=eps, axis=trailing)
    eps = 1e-5 if eps is None else eps
    if method == "batch":
        return batch_norm(x, eps=eps, axis=(0, *range(2, x.ndim)))
    if method == "layer":
        return layer_norm(x, eps=eps, axis=trailing)
    if method == "instance":
        return instance_norm(x, eps=eps)
    if method == "group":
        return group_norm(x, groups, eps=eps)
    raise ValueError(f"method must be one of {METHODS}; got {method!r}.")


def axis_ids(shape, axes) -> np.ndarray:
    """Label every entry of a tensor of `shape` with the statistics set it belongs to when `axes`
    share statistics.

    Entries share a set exactly when they agree on every axis *not* in `axes`;
    the label is that index, flattened. For a (batch, sequence, hidden) tensor,
    ``axes=-1`` gives layer norm's sets (one per token) and ``axes=(0, 1)``
    batch norm's (one per hidden feature): the chapter "LayerNorm and its family" draws both.

    Raises
    ------
    TypeError, ValueError
        For an axis that is not an int or is out of range.
    """
    shape = tuple(int(s) for s in shape)
    kept = _other_axes(normalized_axes(axes, len(shape)), len(shape))
    index = np.indices(shape)
    kept_shape = tuple(shape[a] for a in kept)
    return (
        np.ravel_multi_index(tuple(index[a] for a in kept), kept_shape)
        if kept
        else np.zeros(shape, dtype=int)
    )


def statistic_ids(shape, method: str, *, groups: int = 1) -> np.ndarray:
    """Label every entry of an ``(N, C, *spatial)`` tensor with the statistics set it belongs to.

    Two entries share a mean and variance exactly when they carry the same label:
    the picture of Wu & He (2018) drawn in the chapter "LayerNorm and its family".

    Parameters
    ----------
    shape : tuple of int
        ``(N, C, *spatial)``.
    method : str
        One of :data:`METHODS`.
    groups : int, default 1
        For ``method="group"``; must divide C.

    Returns
    -------
    ndarray of int, of shape `shape`

    Raises
    ------
    ValueError
        For an unknown method, fewer than two axes, or groups that do not divide C.
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) < 2:
        raise ValueError(f"statistic_ids expects a shape (N, C, *spatial); got {shape}.")
    if method == "batch":
        return axis_ids(shape, (0, *range(2, len(shape))))
    if method in ("layer", "rms"):
        return axis_ids(shape, tuple(range(1, len(shape))))
    if method == "instance":
        n, c = np.indices(shape)[:2]
        return n * shape[1] + c
    if method == "group":
        if (
            isinstance(groups, bool)
            or not isinstance(groups, numbers.Integral)
            or groups < 1
            or shape[1] % groups
        ):
            raise ValueError(
                f"groups must divide the number of channels C = {shape[1]}; got {groups!r}."
            )
        n, c = np.indices(shape)[:2]
        return n * groups + c // (shape[1] // groups)
    raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
