"""A short training run of the tiny transformer, with or without learning-rate warm-up.

The chapter "Pre-norm vs post-norm" trains :mod:`lnlib.transformer`'s stacks
on a toy task with Adam, over several seeds and learning rates, with and
without warm-up (:func:`warmup_sweep`), to see whether post-norm needs warm-up
where pre-norm does not, as Xiong et al. (2020) report for real translation models.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .core import layer_norm
from .transformer import check_placement, init_stack, mse_loss, stack_backward, stack_forward
from .validation import check_count

__all__ = ["ADAM", "PLACEMENTS", "WarmupSweep", "mean_token_task", "train", "warmup_rate", "warmup_sweep"]

#: The two placements, in the order :class:`WarmupSweep` stores them.
PLACEMENTS = ("post", "pre")

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


@dataclass(frozen=True)
class WarmupSweep:
    """Training losses over learning rates, placements, schedules and seeds (chapter "Pre-norm vs post-norm").

    Attributes
    ----------
    rates : tuple of float
        The peak learning rates.
    warmup : int
        Warm-up steps of the runs with warm-up.
    seeds : tuple of int
    losses : ndarray, shape (len(rates), 2, 2, len(seeds), steps)
        Indexed by rate, placement (:data:`PLACEMENTS`), schedule (0: no warm-up, 1: warm-up) and seed.
    """

    rates: tuple
    warmup: int
    seeds: tuple
    losses: np.ndarray

    def curves(self, rate: float, placement: str, warmed: bool) -> np.ndarray:
        """The loss curves of one setting, one row per seed."""
        if rate not in self.rates:
            raise ValueError(f"rate must be one of the swept rates {self.rates}; got {rate!r}.")
        return self.losses[self.rates.index(rate), PLACEMENTS.index(check_placement(placement)), int(bool(warmed))]

    def final(self, last: int = 10) -> np.ndarray:
        """The mean loss over the last `last` steps of every run, shape (rates, 2, 2, seeds)."""
        return self.losses[..., -last:].mean(axis=-1)


def warmup_sweep(rates, *, seeds=(0, 1, 2, 3), warmup: int = 25, steps: int = 100, depth: int = 6, width: int = 32) -> WarmupSweep:
    """Train both placements at every rate, with and without `warmup` steps of warm-up, once per seed (chapter "Pre-norm vs post-norm").

    Every run with the same seed starts from the same weights and sees the same
    batches (:func:`train`), so a difference between schedules or placements is
    not a difference of luck.
    """
    rates, seeds = tuple(float(r) for r in rates), tuple(seeds)
    if not rates or not seeds:
        raise ValueError(f"rates and seeds must be non-empty; got rates={rates!r}, seeds={seeds!r}.")
    losses = np.array([[[[train(p, lr=lr, warmup=wu, steps=steps, depth=depth, width=width, seed=seed) for seed in seeds]
                         for wu in (0, warmup)] for p in PLACEMENTS] for lr in rates])
    return WarmupSweep(rates, warmup, seeds, losses)
