r"""LayerNorm's learnable scale :math:`\gamma` and shift :math:`\beta` (chapter "Scale γ and shift
β").

After normalization, :math:`y_i = \gamma_i \hat x_i + \beta_i`: one scale and one
shift **per feature** i, shared by every sample and every token. This module
holds what the chapter computes about them: the parameters that undo the
normalization of one input, an experiment showing why parameters indexed by
the sample's position in the batch could not be learned, and the number of
LayerNorm parameters in a GPT-2-sized model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...forward import layer_norm_steps
from ...validation import as_float_array, check_count

__all__ = [
    "ScaleShiftFit",
    "identity_parameters",
    "sigma_shortfall",
    "best_shared_scale_shift",
    "train_scale_shift",
    "gpt2_parameter_counts",
]


def identity_parameters(x, *, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    r"""The per-feature ``gamma`` and ``beta`` that make LayerNorm give back the vector `x` itself
    (chapter "Scale γ and shift β").

    :math:`\gamma_i = \sqrt{\sigma^2 + \varepsilon}` and :math:`\beta_i = \mu` for every
    feature i. With :math:`\gamma_i = \sigma` instead, the output misses `x` by
    the factor :math:`\sigma / \sqrt{\sigma^2 + \varepsilon}` on every deviation.

    Parameters
    ----------
    x : array_like, shape (H,)
        One input vector.
    eps : float, default 1e-5
        The epsilon of the LayerNorm to undo.

    Returns
    -------
    (gamma, beta) : two ndarrays of shape (H,)

    Raises
    ------
    ValueError
        If `x` is not one vector (shape (H,)), or as :func:`lnlib.layer_norm_steps`.
    """
    x = as_float_array(x, "x")
    if x.ndim != 1:
        raise ValueError(
            f"x must be one vector of shape (H,); got shape {x.shape}. Per-feature parameters are "
            "shared by all samples, so they can undo the normalization of only one mean and one "
            "standard deviation at a time."
        )
    steps = layer_norm_steps(x, eps=eps)
    return np.full(x.shape, steps.sqrt_var_eps.item()), np.full(x.shape, steps.mean.item())


def sigma_shortfall(x, *, eps: float = 1e-5) -> float:
    r"""How far short :math:`\gamma = \sigma` falls of undoing LayerNorm on `x` (chapter "Scale γ
    and shift β").

    With :math:`\beta = \mu`, the scale :math:`\gamma = \sigma` gives back each deviation times
    :math:`\sigma / \sqrt{\sigma^2 + \varepsilon}`; this returns the fraction it misses,
    :math:`1 - \sigma / \sqrt{\sigma^2 + \varepsilon}`, about :math:`\varepsilon / (2\sigma^2)`.

    Parameters
    ----------
    x : array_like of shape (H,)
        One token.
    eps : float, default 1e-5

    Returns
    -------
    float

    Examples
    --------
    >>> round(sigma_shortfall([1.0, 3.0, 5.0, 7.0]), 9)  # σ² = 5: about ε/10
    1e-06
    """
    steps = layer_norm_steps(as_float_array(x, "x"), eps=eps)
    return float(1.0 - np.sqrt(steps.var.item()) / steps.sqrt_var_eps.item())


def best_shared_scale_shift(xhat, target) -> tuple[float, float]:
    """The single scale and shift, shared by every entry, that fit `target` best in least squares
    (chapter "Scale γ and shift β").

    A straight-line fit of all entries of `target` against all entries of `xhat`.

    Parameters
    ----------
    xhat, target : array_like of the same shape

    Returns
    -------
    (gamma, beta) : two floats

    Raises
    ------
    ValueError
        If the shapes differ, or every entry of `xhat` is equal: then every
        scale fits equally well (with its own shift), and no best one exists.
    """
    xhat = as_float_array(xhat, "xhat").ravel()
    target = as_float_array(target, "target").ravel()
    if xhat.shape != target.shape:
        raise ValueError(
            f"xhat and target must have the same number of entries; got {xhat.size} and "
            f"{target.size}."
        )
    if np.all(xhat == xhat[0]):
        raise ValueError(
            f"every entry of xhat equals {xhat[0]:g}, so the fit has no unique scale (a line "
            "through one x-value); pass an xhat whose entries differ."
        )
    gamma = float(np.mean((xhat - xhat.mean()) * (target - target.mean())) / np.var(xhat))
    return gamma, float(target.mean() - gamma * xhat.mean())


@dataclass(frozen=True)
class ScaleShiftFit:
    """The result of :func:`train_scale_shift` (chapter "Scale γ and shift β").

    Attributes
    ----------
    gamma, beta : ndarray
        The learned parameters, averaged over the second half of training:
        shape (H,) per feature, or (batch_size,) per slot.
    final_loss : float
        The mean squared error of the mini-batches over the last half of training.
    """

    gamma: np.ndarray
    beta: np.ndarray
    final_loss: float


def train_scale_shift(
    xhat,
    target,
    *,
    per: str = "feature",
    batch_size: int = 8,
    steps: int = 2000,
    lr: float = 0.05,
    seed: int = 0,
) -> ScaleShiftFit:
    r"""Learn ``gamma`` and ``beta`` by minibatch gradient descent on
    ``mean((gamma * xhat + beta - target)**2)``.

    ``per="feature"`` gives each feature its own pair, as LayerNorm does.
    ``per="slot"`` gives each *position in the mini-batch* its own pair, as a
    per-sample indexing :math:`\gamma_n, \beta_n` would; mini-batches are drawn
    at random, so a slot sees a different example at every step (chapter
    "Scale γ and shift β").

    Parameters
    ----------
    xhat, target : array_like, shape (N, H)
        Normalized inputs and the outputs to fit, one row per example.
    per : {"feature", "slot"}
    batch_size : int, default 8
        Examples per step, at most N.
    steps : int, default 2000
        Gradient steps.
    lr : float, default 0.05
        Learning rate.
    seed : int, default 0
        Seed of the mini-batch draws.

    Returns
    -------
    ScaleShiftFit
    """
    xhat = as_float_array(xhat, "xhat")
    target = as_float_array(target, "target")
    if xhat.ndim != 2 or xhat.shape != target.shape:
        raise ValueError(
            f"xhat and target must both have shape (N, H); got {xhat.shape} and {target.shape}."
        )
    if per not in ("feature", "slot"):
        raise ValueError(f"per must be 'feature' or 'slot'; got {per!r}.")
    batch_size, steps = check_count(batch_size, "batch_size"), check_count(steps, "steps")
    if batch_size > xhat.shape[0]:
        raise ValueError(
            f"batch_size must be at most the number of examples, {xhat.shape[0]}; got {batch_size}."
        )
    axis = 0 if per == "feature" else 1  # the axis a parameter is shared over
    size = xhat.shape[1] if per == "feature" else batch_size
    gamma, beta = np.ones(size), np.zeros(size)
    rng = np.random.default_rng(seed)
    kept_gamma, kept_beta, losses = [], [], []
    for step in range(steps):
        rows = rng.choice(xhat.shape[0], size=batch_size, replace=False)
        xb, tb = xhat[rows], target[rows]
        g, b = (gamma, beta) if per == "feature" else (gamma[:, None], beta[:, None])
        error = g * xb + b - tb
        gamma = gamma - lr * 2 * np.mean(error * xb, axis=axis)
        beta = beta - lr * 2 * np.mean(error, axis=axis)
        if step >= steps // 2:
            kept_gamma.append(gamma)
            kept_beta.append(beta)
            losses.append(np.mean(error**2))
    return ScaleShiftFit(
        gamma=np.mean(kept_gamma, axis=0),
        beta=np.mean(kept_beta, axis=0),
        final_loss=float(np.mean(losses)),
    )


def gpt2_parameter_counts(
    d_model: int = 768, n_layers: int = 12, vocab_size: int = 50257, n_positions: int = 1024
) -> dict[str, int]:
    """Parameter counts of a GPT-2-style model, and how many of them are LayerNorm's (chapter "Scale
    γ and shift β").

    GPT-2 (Radford et al. 2019) has two LayerNorms per block (before the
    attention and before the MLP) and one after the last block, each with
    ``2 * d_model`` parameters (gamma and beta). The rest: token and position
    embeddings (the output layer reuses the token embedding), and per block
    the attention's query/key/value and output projections and a 4x-wide
    MLP, all with biases. The defaults are GPT-2 small's published sizes.

    Returns
    -------
    dict with keys ``"per_layer_norm"``, ``"layer_norms"`` (their number),
    ``"layer_norm"`` (all their parameters), ``"total"``.
    """
    d, layers = check_count(d_model, "d_model"), check_count(n_layers, "n_layers")
    vocab, positions = (
        check_count(vocab_size, "vocab_size"),
        check_count(n_positions, "n_positions"),
    )
    per_layer_norm = 2 * d
    layer_norms = 2 * layers + 1
    attention = (d * 3 * d + 3 * d) + (d * d + d)
    mlp = (d * 4 * d + 4 * d) + (4 * d * d + d)
    embeddings = vocab * d + positions * d
    layer_norm = layer_norms * per_layer_norm
    return {
        "per_layer_norm": per_layer_norm,
        "layer_norms": layer_norms,
        "layer_norm": layer_norm,
        "total": embeddings + layers * (attention + mlp) + layer_norm,
    }
