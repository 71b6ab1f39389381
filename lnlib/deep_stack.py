r"""A deep stack of random layers, with and without LayerNorm: the problem LayerNorm was built to solve.

Layer :math:`l = 1, \dots, L` maps the activations :math:`h_{l-1}` (shape ``(batch, width)``) to

.. math::

    z_l = h_{l-1} W_l, \qquad u_l = \mathrm{LN}(z_l) \text{ (or } u_l = z_l \text{ without LayerNorm)}, \qquad h_l = \phi(u_l),

with :math:`\phi` = tanh or ReLU, LayerNorm over the features without gain or bias (their values at
initialization), and weights drawn as :math:`W_l = a\,G_l/\sqrt{\text{width}}` with standard normal
:math:`G_l`: the *weight scale* :math:`a` is the one knob. The loss is :math:`L = \sum g \odot h_L` for a
fixed random :math:`g`, so the gradient that enters the top of the stack has the same size whatever the
activations do. The chapter "Why normalize?" plots, layer by layer, the scale of the activations
:math:`h_l` and of the gradients :math:`\partial L/\partial h_l` and :math:`\partial L/\partial W_l`
that this module computes (the LayerNorm backward pass comes from :mod:`lnlib.backward`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .backward import layer_norm_backward
from .core import layer_norm
from .validation import as_float_array

__all__ = ["ACTIVATIONS", "StackRun", "random_stack", "run_stack", "rms"]

#: The nonlinearities a stack can use.
ACTIVATIONS = ("tanh", "relu")


@dataclass(frozen=True)
class StackRun:
    """The forward and backward pass of one stack (chapter "Why normalize?").

    Attributes
    ----------
    activations : tuple of ndarray
        :math:`h_0` (the input) to :math:`h_L`, each of shape ``(batch, width)``.
    activation_grads : tuple of ndarray
        :math:`\\partial L/\\partial h_0` to :math:`\\partial L/\\partial h_L`: the gradient that reaches
        each layer on its way down, each ``(batch, width)``.
    weight_grads : tuple of ndarray
        :math:`\\partial L/\\partial W_1` to :math:`\\partial L/\\partial W_L`, each ``(width, width)``.
    """

    activations: tuple
    activation_grads: tuple
    weight_grads: tuple

    @property
    def activation_rms(self) -> np.ndarray:
        """Root-mean-square of :math:`h_0, \\dots, h_L`: the activation scale per layer, shape ``(L + 1,)``."""
        return np.array([rms(h) for h in self.activations])

    @property
    def gradient_rms(self) -> np.ndarray:
        """Root-mean-square of :math:`\\partial L/\\partial h_0, \\dots, \\partial L/\\partial h_L`: the gradient scale per layer, shape ``(L + 1,)``."""
        return np.array([rms(g) for g in self.activation_grads])

    @property
    def weight_gradient_rms(self) -> np.ndarray:
        """Root-mean-square of :math:`\\partial L/\\partial W_1, \\dots, \\partial L/\\partial W_L`, shape ``(L,)``."""
        return np.array([rms(g) for g in self.weight_grads])


def rms(a) -> float:
    """Root-mean-square of the entries of `a`, the "scale" of an array (chapter "Why normalize?")."""
    a = np.asarray(a, dtype=np.float64)
    return float(np.sqrt(np.mean(a * a)))


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}.")
    return int(value)


def random_stack(depth: int = 50, width: int = 64, batch: int = 32, *, seed: int = 0):
    """Seeded ingredients of a stack at weight scale 1 (chapter "Why normalize?").

    Multiply the weights by a weight scale `a` before :func:`run_stack`; since
    the draw is fixed, every scale (and every depth, by taking the first layers)
    uses the same random matrices, so curves differ only by what is varied.

    Parameters
    ----------
    depth, width, batch : int
        Number of layers, features per layer, samples.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    x : ndarray of shape (batch, width)
        Standard normal inputs.
    weights : ndarray of shape (depth, width, width)
        Standard normal entries divided by sqrt(width).
    upstream : ndarray of shape (batch, width)
        Standard normal :math:`g = \\partial L/\\partial h_L`.
    """
    depth, width, batch = (_positive_int(v, n) for v, n in ((depth, "depth"), (width, "width"), (batch, "batch")))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, width))
    weights = rng.standard_normal((depth, width, width)) / np.sqrt(width)
    upstream = rng.standard_normal((batch, width))
    return x, weights, upstream


def _activate(u: np.ndarray, activation: str):
    """phi(u) and phi'(u)."""
    if activation == "tanh":
        h = np.tanh(u)
        return h, 1.0 - h * h
    return np.maximum(u, 0.0), (u > 0).astype(u.dtype)


def run_stack(x, weights, upstream, *, layer_norm_on: bool = False, activation: str = "tanh", eps: float = 1e-5) -> StackRun:
    """Forward and backward pass of the stack ``h_l = phi(LN(h_{l-1} W_l))`` (chapter "Why normalize?").

    Parameters
    ----------
    x : array_like of shape (batch, width)
        The input :math:`h_0`.
    weights : array_like of shape (depth, width, width)
        :math:`W_1, \\dots, W_L`; scale them to set the weight scale.
    upstream : array_like of shape (batch, width)
        :math:`g = \\partial L / \\partial h_L`.
    layer_norm_on : bool, default False
        Put a LayerNorm (no gain or bias) between each linear map and its nonlinearity.
    activation : {"tanh", "relu"}
    eps : float, default 1e-5
        LayerNorm's epsilon.

    Returns
    -------
    StackRun

    Raises
    ------
    ValueError, TypeError
        For non-finite or non-numeric arrays, shapes that do not fit together,
        or an unknown activation.
    """
    x = as_float_array(x, "x")
    weights = as_float_array(weights, "weights")
    upstream = as_float_array(upstream, "upstream")
    if x.ndim != 2 or weights.ndim != 3 or weights.shape[1:] != (x.shape[1], x.shape[1]):
        raise ValueError(f"x must be (batch, width) and weights (depth, width, width); got x {x.shape} and weights {weights.shape}.")
    if upstream.shape != x.shape:
        raise ValueError(f"upstream must have the shape of x, {x.shape}; got {upstream.shape}.")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}; got {activation!r}.")
    hs, zs, slopes = [x], [], []
    for w in weights:
        z = hs[-1] @ w
        h, slope = _activate(layer_norm(z, eps=eps) if layer_norm_on else z, activation)
        zs.append(z)
        slopes.append(slope)
        hs.append(h)
    weight_grads, activation_grads = [], [upstream]
    for w, z, slope, h_in in zip(weights[::-1], zs[::-1], slopes[::-1], hs[-2::-1]):
        du = activation_grads[-1] * slope
        dz = layer_norm_backward(du, z, eps=eps)[0] if layer_norm_on else du
        weight_grads.append(h_in.T @ dz)
        activation_grads.append(dz @ w.T)
    return StackRun(activations=tuple(hs), activation_grads=tuple(activation_grads[::-1]), weight_grads=tuple(weight_grads[::-1]))
