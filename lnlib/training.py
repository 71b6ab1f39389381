"""A short training run of the tiny transformer, with or without learning-rate warm-up.

The chapter "Pre-norm vs post-norm" trains :mod:`lnlib.transformer`'s stacks
on a toy task with Adam, to see whether post-norm needs warm-up where pre-norm
does not, as Xiong et al. (2020) report for real translation models.
"""

from __future__ import annotations

import numbers

import numpy as np

from .core import layer_norm
from .transformer import check_placement, init_stack, mse_loss, stack_backward, stack_forward
from .validation import check_count

__all__ = ["ADAM", "mean_token_task", "train", "warmup_rate"]

#: Adam's (beta1, beta2, epsilon), as in the original Transformer (Vaswani et al., 2017).
ADAM = (0.9, 0.98, 1e-9)


def mean_token_task(rng: np.random.Generator, batch: int, tokens: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """A toy task that needs attention: every token must output the layer-normalized mean of its sequence (chapter "Pre-norm vs post-norm").

    Returns
    -------
    x, target : ndarray, shape (batch, tokens, width)
        Inputs with N(0, 1) entries; the target repeats ``LN(mean over tokens of x)`` at every position.
    """
    x = rng.normal(size=(batch, tokens, width))
    return x, np.broadcast_to(layer_norm(x.mean(axis=1, keepdims=True)), x.shape)


def warmup_rate(step: int, lr: float, warmup: int) -> float:
    """The learning rate at `step` (counting from 1): a linear ramp over the first `warmup` steps, then constant (chapter "Pre-norm vs post-norm")."""
    return lr * min(1.0, step / warmup) if warmup > 0 else lr


def train(placement: str, *, lr: float, warmup: int = 0, steps: int = 100, depth: int = 6, width: int = 32,
          tokens: int = 8, batch: int = 8, seed: int = 0) -> np.ndarray:
    """Train a stack with Adam on :func:`mean_token_task`; return the loss at every step (chapter "Pre-norm vs post-norm").

    Parameters
    ----------
    placement : {"post", "pre"}
    lr : float
        The peak learning rate, > 0.
    warmup : int, default 0
        Steps of linear warm-up (0: none).
    steps, depth, width, tokens, batch : int
        Run length and model and batch sizes.
    seed : int
        Seeds both the weights and the batches, so two placements or
        schedules with the same seed see the same data.

    Returns
    -------
    ndarray of shape (steps,)
        The training loss (:func:`lnlib.transformer.mse_loss`) before each update.
    """
    placement = check_placement(placement)
    steps, tokens, batch = (check_count(v, n) for v, n in ((steps, "steps"), (tokens, "tokens"), (batch, "batch")))
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a positive finite number such as 1e-3; got {lr!r}.")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number of steps >= 0; got {warmup!r}.")
    beta1, beta2, eps = ADAM
    rng = np.random.default_rng(seed)
    weights = init_stack(depth, width, seed=seed)
    first = [{k: np.zeros_like(v) for k, v in w.items()} for w in weights]
    second = [{k: np.zeros_like(v) for k, v in w.items()} for w in weights]
    losses = np.empty(steps)
    for step in range(1, steps + 1):
        x, target = mean_token_task(rng, batch, tokens, width)
        out, states, caches = stack_forward(x, weights, placement)
        losses[step - 1], dout = mse_loss(out, target)
        _, grads = stack_backward(dout, states, caches, weights, placement)
        rate = warmup_rate(step, lr, warmup)
        for w, g, m, v in zip(weights, grads, first, second):
            for name in w:
                m[name] = beta1 * m[name] + (1 - beta1) * g[name]
                v[name] = beta2 * v[name] + (1 - beta2) * g[name] ** 2
                w[name] -= rate * (m[name] / (1 - beta1**step)) / (np.sqrt(v[name] / (1 - beta2**step)) + eps)
    return losses
