r"""Dynamic Tanh (DyT), the elementwise stand-in for LayerNorm of Zhu et al. (2025).

.. math::

    \mathrm{DyT}(x) = \gamma \odot \tanh(\alpha x) + \beta

with one learnable scalar :math:`\alpha` (the paper starts it at 0.5) and
per-feature :math:`\gamma, \beta`. It computes no statistic: each output
entry depends on its own input entry only. It still reads and writes every
element once, the same bytes as a LayerNorm kernel, so it saves no memory
traffic. The chapter "LayerNorm after 2020" reproduces the observation
behind it (a LayerNorm over tokens of unequal scale maps its inputs along an
S-shaped curve) and fits :math:`\alpha` to that curve.
"""

from __future__ import annotations

import numpy as np

from ...forward import layer_norm
from ...validation import as_float_array

__all__ = ["ALPHA_INIT", "dyt", "dyt_backward", "fit_tanh", "heavy_tailed_tokens", "s_curve"]

#: The initial α of Zhu et al.'s code (``alpha_init_value=0.5``).
ALPHA_INIT = 0.5


def _check_alpha(alpha) -> float:
    if not np.isscalar(alpha) or not np.isfinite(alpha):
        raise ValueError(f"alpha must be one finite number (DyT's scalar); got {alpha!r}.")
    return float(alpha)


def dyt(x, alpha: float = ALPHA_INIT, gamma=None, beta=None) -> np.ndarray:
    r"""DyT over the last axis: :math:`\gamma \tanh(\alpha x) + \beta` (chapter "LayerNorm after
    2020").

    Parameters
    ----------
    x : array_like, shape (..., width)
    alpha : float, default 0.5
    gamma : array_like of shape (width,), optional
        Per-feature scale. Default: 1.
    beta : array_like of shape (width,), optional
        Per-feature shift. Default: 0.
    """
    x = as_float_array(x, "x")
    y = np.tanh(_check_alpha(alpha) * x)
    if gamma is not None:
        y = y * np.asarray(gamma, dtype=x.dtype)
    if beta is not None:
        y = y + np.asarray(beta, dtype=x.dtype)
    return y


def dyt_backward(dy, x, alpha: float = ALPHA_INIT, gamma=None):
    r"""Gradients of :func:`dyt` with respect to x, α, γ and β (chapter "LayerNorm after 2020").

    With :math:`t = \tanh(\alpha x)`: :math:`\partial y/\partial x = \gamma\alpha(1 - t^2)`,
    :math:`\partial y/\partial\alpha = \gamma x (1 - t^2)`, :math:`\partial y/\partial\gamma = t`.

    Returns
    -------
    dx : ndarray, the shape of `x`
    dalpha : float
    dgamma, dbeta : ndarray of shape (width,)
    """
    x = as_float_array(x, "x")
    dy = np.asarray(dy, dtype=x.dtype)
    if dy.shape != x.shape:
        raise ValueError(f"dy must have the shape of x, {x.shape}; got shape {dy.shape}.")
    t = np.tanh(_check_alpha(alpha) * x)
    g = np.ones(x.shape[-1]) if gamma is None else np.asarray(gamma, dtype=x.dtype)
    dt = dy * g * (1.0 - t * t)
    lead = tuple(range(x.ndim - 1))
    return dt * alpha, float(np.sum(dt * x)), np.sum(dy * t, axis=lead), np.sum(dy, axis=lead)


def heavy_tailed_tokens(tokens: int, width: int, *, df: float = 2.0, seed: int = 0) -> np.ndarray:
    """Tokens whose entries follow Student's t with `df` degrees of freedom (chapter "LayerNorm
    after 2020").

    A stand-in for the activations that reach a LayerNorm deep in a trained
    transformer: most entries are of order one, a few tokens carry entries
    many times larger (the "massive activations" of a few channels), so the
    tokens' standard deviations differ. ``df = inf`` gives normal entries,
    with every token of nearly the same scale.
    """
    rng = np.random.default_rng(seed)
    if np.isinf(df):
        return rng.normal(size=(tokens, width))
    return rng.standard_t(df, size=(tokens, width))


def s_curve(x) -> tuple[np.ndarray, np.ndarray]:
    """Every entry's LayerNorm input and output, flattened: the scatter of Zhu et al.'s Figure 2
    (chapter "LayerNorm after 2020")."""
    x = as_float_array(x, "x")
    return x.ravel(), layer_norm(x).ravel()


def fit_tanh(inputs, outputs) -> dict:
    r"""Least-squares fit of :math:`y \approx \gamma\tanh(\alpha x)` and of a line :math:`y \approx
    c x` (chapter "LayerNorm after 2020").

    Returns
    -------
    dict
        ``alpha``, ``gamma`` of the tanh fit, ``slope`` of the line, and the
        root-mean-square error of each (``rms_tanh``, ``rms_line``).
    """
    x, y = as_float_array(inputs, "inputs").ravel(), as_float_array(outputs, "outputs").ravel()
    if x.shape != y.shape:
        raise ValueError(f"inputs and outputs must have the same size; got {x.size} and {y.size}.")
    slope = float(np.dot(x, y) / np.dot(x, x))
    # imported here: scipy.optimize costs a second at import, and every chapter imports this module
    from scipy.optimize import curve_fit

    (alpha, gamma), _ = curve_fit(
        lambda v, a, g: g * np.tanh(a * v), x, y, p0=(0.5, 2.0 * np.abs(y).max()), maxfev=5000
    )
    return {
        "alpha": float(alpha),
        "gamma": float(gamma),
        "slope": slope,
        "rms_tanh": float(np.sqrt(np.mean((gamma * np.tanh(alpha * x) - y) ** 2))),
        "rms_line": float(np.sqrt(np.mean((slope * x - y) ** 2))),
    }
