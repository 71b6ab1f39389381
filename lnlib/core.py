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
the biased one (divide by H), as in Ba, Kiros & Hinton (2016) and PyTorch, and
:math:`\varepsilon` sits inside the square root. The chapters "The mean",
"The variance", "Epsilon" and "Normalizing" derive each step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import as_float_array, as_parameter, check_eps, check_nonzero_spread, normalized_axes, normalized_shape

__all__ = ["LayerNormSteps", "layer_norm", "layer_norm_steps"]


@dataclass(frozen=True)
class LayerNormSteps:
    """Every intermediate of one LayerNorm forward pass (chapter "The complete examples").

    The statistics keep the normalized axes with size 1, so they broadcast
    against `x`: for a (2, 4) batch, ``mean`` has shape (2, 1).

    Attributes
    ----------
    x : ndarray
        The input, as a float array.
    mean : ndarray
        Mean over the normalized axes.
    var : ndarray
        Biased variance over the normalized axes (divide by H).
    std : ndarray
        ``sqrt(var + eps)``, the divisor.
    xhat : ndarray
        ``(x - mean) / std``, the normalized input.
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
    std: np.ndarray
    xhat: np.ndarray
    y: np.ndarray
    axes: tuple[int, ...]
    eps: float

    @property
    def size(self) -> int:
        """H, the number of values that share one mean and variance."""
        return int(np.prod([self.x.shape[a] for a in self.axes]))


def layer_norm_steps(x, gamma=None, beta=None, *, eps: float = 1e-5, axis=-1) -> LayerNormSteps:
    """Layer-normalize `x` and keep every intermediate (chapter "The complete examples").

    Parameters
    ----------
    x : array_like
        Input of any shape with at least one axis. Integers and lists are
        promoted to float64; float32 stays float32.
    gamma, beta : array_like, optional
        Per-feature scale and shift, of the shape of the normalized axes
        (``x.shape[axis]`` for an int axis). Default: 1 and 0.
    eps : float, default 1e-5
        Added to the variance inside the square root; must be finite and >= 0.
    axis : int or tuple of int, default -1
        The axes that share one mean and variance. ``axis=(-2, -1)`` matches
        PyTorch's ``normalized_shape`` of the two trailing dimensions.

    Returns
    -------
    LayerNormSteps

    Raises
    ------
    TypeError
        For complex, string or object inputs, a non-integer axis or a non-numeric eps.
    ValueError
        For NaN or infinite values, a gamma or beta of the wrong shape, an
        empty normalized axis, an axis out of range, a negative or non-finite
        eps, or a zero variance with ``eps=0``.

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
    gamma = as_parameter(gamma, "gamma", shape, axes, x.ndim, x.dtype)
    beta = as_parameter(beta, "beta", shape, axes, x.ndim, x.dtype)

    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=axes, keepdims=True)
    check_nonzero_spread(var, eps)
    std = np.sqrt(var + x.dtype.type(eps))
    xhat = centred / std
    y = xhat if gamma is None else xhat * gamma
    y = y if beta is None else y + beta
    return LayerNormSteps(x=x, mean=mean, var=var, std=std, xhat=xhat, y=y, axes=axes, eps=eps)


def layer_norm(x, gamma=None, beta=None, *, eps: float = 1e-5, axis=-1) -> np.ndarray:
    """Layer Normalization: ``gamma * (x - mean) / sqrt(var + eps) + beta`` (chapter "Normalizing").

    Parameters and errors as in :func:`layer_norm_steps`, which also returns
    the intermediates.

    Returns
    -------
    ndarray
        Same shape as `x`; float32 input gives float32 output.

    Examples
    --------
    >>> layer_norm([2.0, 4.0, 6.0, 8.0]).round(4)
    array([-1.3416, -0.4472,  0.4472,  1.3416])
    >>> layer_norm([3.0, 3.0, 3.0, 3.0])
    array([0., 0., 0., 0.])
    """
    return layer_norm_steps(x, gamma, beta, eps=eps, axis=axis).y
