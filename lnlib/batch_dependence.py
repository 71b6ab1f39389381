"""How one sample's batch-norm output depends on its batch, and on training versus inference.

Two experiments of the chapter "LayerNorm and its family". A fixed sample is
normalized inside many random batches drawn from a population: in training
mode batch norm's output for it changes with its companions (more for small
batches), while layer norm's never does. After training, batch norm switches
to running statistics, so the same sample gets yet another output at inference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core import layer_norm
from .norms import RunningStats, batch_norm
from .validation import as_float_array

__all__ = ["BatchEffects", "batch_effects"]


@dataclass(frozen=True)
class BatchEffects:
    """One sample's normalized outputs under batch norm and layer norm.

    Attributes
    ----------
    training : dict of int to ndarray
        Per batch size, batch norm's training-mode outputs for the sample, one
        row per random batch, shape (trials, D).
    inference : ndarray
        Batch norm's inference-mode output for the sample, with running
        statistics accumulated over training batches, shape (D,).
    layer : ndarray
        Layer norm's output for the sample, shape (D,): the same in every batch.
    layer_in_batches : dict of int to ndarray
        Per batch size, layer norm's outputs for the sample inside the same
        random batches, shape (trials, D), to show they never move.
    """

    training: dict[int, np.ndarray]
    inference: np.ndarray
    layer: np.ndarray
    layer_in_batches: dict[int, np.ndarray]

    def spread(self, size: int) -> float:
        """Mean over features of the standard deviation of batch norm's output across batches of `size`."""
        return float(self.training[size].std(axis=0).mean())


def _draw_batch(population: np.ndarray, index: int, size: int, rng) -> np.ndarray:
    """The sample `index` first, then `size - 1` others drawn without replacement."""
    others = np.delete(np.arange(len(population)), index)
    return population[np.concatenate([[index], rng.choice(others, size=size - 1, replace=False)])]


def batch_effects(population, sizes=(2, 8, 64), *, index: int = 0, trials: int = 200, train_steps: int = 200,
                  train_batch: int = 32, momentum: float = 0.1, seed: int = 0) -> BatchEffects:
    """Normalize sample `index` of `population` inside random batches of each size (chapter "LayerNorm and its family").

    Parameters
    ----------
    population : array_like, shape (P, D)
        The data the batches are drawn from.
    sizes : sequence of int
        Batch sizes, each from 2 to P.
    index : int
        The sample that is followed.
    trials : int
        Random batches per size.
    train_steps, train_batch, momentum :
        The training run that accumulates batch norm's running statistics.
    seed : int
        Seed of the random batches.

    Returns
    -------
    BatchEffects

    Raises
    ------
    ValueError
        If the population is not 2-D, a size is outside [2, P], or `index` is out of range.
    """
    population = as_float_array(population, "population")
    if population.ndim != 2:
        raise ValueError(f"population must have shape (P, D), one sample per row; got shape {population.shape}.")
    count = len(population)
    if not 0 <= index < count:
        raise ValueError(f"index must pick a sample, 0 <= index < {count}; got {index}.")
    for size in (*sizes, train_batch):
        if not 2 <= size <= count:
            raise ValueError(f"batch sizes must lie in [2, {count}] (the population size); got {size}.")
    rng = np.random.default_rng(seed)
    training, layer_in_batches = {}, {}
    for size in sizes:
        batches = [_draw_batch(population, index, size, rng) for _ in range(trials)]
        training[size] = np.array([batch_norm(b)[0] for b in batches])
        layer_in_batches[size] = np.array([layer_norm(b)[0] for b in batches])
    running = RunningStats.start(population.shape[1], momentum=momentum)
    for _ in range(train_steps):
        batch_norm(population[rng.choice(count, size=train_batch, replace=False)], running=running)
    inference = batch_norm(population[index : index + 1], running=running, training=False)[0]
    return BatchEffects(training=training, inference=inference, layer=layer_norm(population[index]), layer_in_batches=layer_in_batches)
