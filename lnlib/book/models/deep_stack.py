r"""A deep stack of random layers, with and without LayerNorm: the problem LayerNorm was built to
solve.

Layer :math:`l = 1, \dots, L` maps the activations :math:`h_{l-1}` (shape ``(batch, width)``) to

.. math::

    z_l = h_{l-1} W_l,
    \qquad u_l = \mathrm{LN}(z_l) \text{ (or } u_l = z_l \text{ without LayerNorm)},
    \qquad h_l = \phi(u_l),

with :math:`\phi` = tanh or ReLU, LayerNorm over the features without gain or bias (their values at
initialization), and weights drawn as :math:`W_l = a\,G_l/\sqrt{\text{width}}` with standard normal
:math:`G_l`: the *weight scale* :math:`a` is the one knob. The loss is :math:`L = \sum g \odot h_L`
for a fixed random :math:`g`, so the gradient that enters the top of the stack has the same size
whatever the activations do. The chapter "Why normalize?" plots, layer by layer, the scale of the
activations :math:`h_l` and of the gradients :math:`\partial L/\partial h_l` and :math:`\partial
L/\partial W_l` that this module computes (the LayerNorm backward pass comes from
:mod:`lnlib.backward`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...backward import layer_norm_backward
from ...forward import layer_norm
from ...validation import as_float_array, check_count

__all__ = ["ACTIVATIONS", "StackRun", "random_stack", "run_stack", "scale_profiles", "rms"]

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
        :math:`\\partial L/\\partial h_0` to :math:`\\partial L/\\partial h_L`: the gradient that
        reaches each layer on its way down, each ``(batch, width)``.
    weight_grads : tuple of ndarray
        :math:`\\partial L/\\partial W_1` to :math:`\\partial L/\\partial W_L`, each
        ``(width, width)``.
    """

    activations: tuple
    activation_grads: tuple
    weight_grads: tuple

    @property
    def activation_rms(self) -> np.ndarray:
        """Root-mean-square of :math:`h_0, \\dots, h_L`: the activation scale per layer, shape
        ``(L + 1,)``."""
        return np.array([rms(h) for h in self.activations])

    @property
    def gradient_rms(self) -> np.ndarray:
        """Root-mean-square of :math:`\\partial L/\\partial h_0, \\dots, \\partial L/\\partial h_L`:
        the gradient scale per layer, shape ``(L + 1,)``."""
        return np.array([rms(g) for g in self.activation_grads])

    @property
    def weight_gradient_rms(self) -> np.ndarray:
        """Root-mean-square of :math:`\\partial L/\\partial W_1, \\dots, \\partial L/\\partial W_L`,
        shape ``(L,)``."""
        return np.array([rms(g) for g in self.weight_grads])


def rms(a) -> float:
    """Root-mean-square of the entries of `a`, the "scale" of an array (chapter "Why
    normalize?")."""
    a = np.asarray(a, dtype=np.float64)
    return float(np.sqrt(np.mean(a * a)))


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

    Raises
    ------
    TypeError
        If a size is not an int.
    ValueError
        If a size is below 1.
    """
    depth, width, batch = (
        check_count(v, n) for v, n in ((depth, "depth"), (width, "width"), (batch, "batch"))
    )
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


def run_stack(
    x,
    weights,
    upstream,
    *,
    layer_norm_on: bool = False,
    activation: str = "tanh",
    eps: float = 1e-5,
) -> StackRun:
    """Forward and backward pass of the stack ``h_l = phi(LN(h_{l-1} W_l))`` (chapter "Why
    normalize?").

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
    x, weights, upstream = _checked(x, weights, upstream, activation)
    hs, zs, slopes = _forward(x, weights, layer_norm_on, activation, eps)
    weight_grads, activation_grads = [], [upstream]
    for w, z, slope, h_in in zip(weights[::-1], zs[::-1], slopes[::-1], hs[-2::-1]):
        du = activation_grads[-1] * slope
        dz = layer_norm_backward(du, z, eps=eps)[0] if layer_norm_on else du
        weight_grads.append(h_in.T @ dz)
        activation_grads.append(dz @ w.T)
    return StackRun(
        activations=tuple(hs),
        activation_grads=tuple(activation_grads[::-1]),
        weight_grads=tuple(weight_grads[::-1]),
    )


def scale_profiles(
    x,
    weights,
    upstream,
    depths,
    *,
    layer_norm_on: bool = False,
    activation: str = "tanh",
    eps: float = 1e-5,
):
    """Activation and gradient scale per layer for stacks of several depths at once (chapter "Why
    normalize?").

    A stack of depth d is the first d layers of `weights`, with the loss
    ``sum(upstream * h_d)`` on top; its numbers equal those of
    ``run_stack(x, weights[:d], upstream)``. The forward pass is shared by all
    depths, and the backward passes run together, one LayerNorm backward call
    per layer for all depths: this is how the chapter's explorer precomputes
    every setting.

    Parameters
    ----------
    x, weights, upstream, layer_norm_on, activation, eps :
        As in :func:`run_stack`.
    depths : iterable of int
        Depths from 1 to ``len(weights)``.

    Returns
    -------
    activation_rms : ndarray of shape (len(weights) + 1,)
        RMS of h_0 to h_L for the full stack; a depth-d stack shows the first d + 1.
    gradient_rms : dict of int to ndarray
        For each depth d, the RMS of dL/dh_0 to dL/dh_d, shape (d + 1,).

    Raises
    ------
    ValueError, TypeError
        As :func:`run_stack`, and for a depth outside 1 to ``len(weights)``.
    """
    x, weights, upstream = _checked(x, weights, upstream, activation)
    depths = sorted({check_count(d, "depth") for d in depths}, reverse=True)
    if not depths or depths[0] > len(weights):
        raise ValueError(
            f"depths must be between 1 and the number of layers, {len(weights)}; got {depths}."
        )
    hs, zs, slopes = _forward(x, weights, layer_norm_on, activation, eps)
    gradient_rms = {d: np.empty(d + 1) for d in depths}
    active, signal = [], np.empty((0, *x.shape))
    for layer in range(depths[0], 0, -1):
        if layer in gradient_rms:  # a stack of this depth starts its backward pass here
            active.append(layer)
            signal = np.concatenate([signal, upstream[None]])
            gradient_rms[layer][layer] = rms(upstream)
        du = signal * slopes[layer - 1]
        z = np.broadcast_to(zs[layer - 1], du.shape)
        dz = layer_norm_backward(du, z, eps=eps)[0] if layer_norm_on else du
        signal = dz @ weights[layer - 1].T
        for depth, grad in zip(active, signal):
            gradient_rms[depth][layer - 1] = rms(grad)
    return np.array([rms(h) for h in hs]), gradient_rms


def _checked(x, weights, upstream, activation: str):
    """Validate the inputs of a stack and return them as float arrays."""
    x = as_float_array(x, "x")
    weights = as_float_array(weights, "weights")
    upstream = as_float_array(upstream, "upstream")
    if x.ndim != 2 or weights.ndim != 3 or weights.shape[1:] != (x.shape[1], x.shape[1]):
        raise ValueError(
            f"x must be (batch, width) and weights (depth, width, width); got x {x.shape} and "
            f"weights {weights.shape}."
        )
    if upstream.shape != x.shape:
        raise ValueError(f"upstream must have the shape of x, {x.shape}; got {upstream.shape}.")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}; got {activation!r}.")
    return x, weights, upstream


def _forward(x, weights, layer_norm_on: bool, activation: str, eps: float):
    """Activations h_0..h_L, pre-normalization z_1..z_L and slopes phi'(u_1)..phi'(u_L)."""
    hs, zs, slopes = [x], [], []
    for w in weights:
        z = hs[-1] @ w
        h, slope = _activate(layer_norm(z, eps=eps) if layer_norm_on else z, activation)
        zs.append(z)
        slopes.append(slope)
        hs.append(h)
    return hs, zs, slopes
