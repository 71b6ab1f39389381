"""Chapter 10's exercises (chapters/10_family.ipynb): group norm by hand, RMS norm's invariances,
batch norm's running mean and batch norm's backward pass."""

from __future__ import annotations

import numpy as np

from lnlib.book.exercises.chapter import (
    Exercises,
    asks_for,
    domain,
    forbidding,
    redrawn,
    rests_on,
    variant,
)
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.experiments.family import TRANSFORMATIONS, invariance_table
from lnlib.norms import RunningStats, batch_norm, batch_norm_backward, group_norm

#: Exercise 1's number of groups; the ε of exercises 1 and 4.
GROUPS, EPS = 2, 1e-5
#: Exercise 3's two training batches of one feature, and batch norm's momentum.
BATCHES, MOMENTUM = ([2.0, 4.0], [0.0, 4.0, 8.0]), 0.1


def _group_norm_data(rng: np.random.Generator) -> dict:
    """Exercise 1's domain: any samples, three positions or more, an even number of channels (G =
    2)."""
    samples, positions = rng.integers(1, 5), rng.integers(3, 6)
    return {"acts": rng.normal(size=(samples, GROUPS * rng.integers(1, 5), positions))}


def _standardized(values: np.ndarray, axes: tuple) -> np.ndarray:
    """`values` standardized over `axes` (biased variance, ε inside the root): exercise 1's
    mistakes of normalizing over the wrong axes."""
    centred = values - values.mean(axis=axes, keepdims=True)
    return centred / np.sqrt(values.var(axis=axes, keepdims=True) + EPS)


@rests_on("The idea")
@forbidding("lnlib", "torch")
@variant(lambda rng: {"acts": rng.normal(size=(2, 4, 3))})
@domain(_group_norm_data)
def group_normalized_acts(acts) -> Exercise:
    """Exercise 1: `acts` (samples, channels, positions) group-normalized with G = 2 and ε =
    1e-5."""
    acts = np.asarray(acts, dtype=np.float64)
    channels = acts.shape[1]
    per_group = f"{channels // GROUPS} channel{'s' if channels // GROUPS > 1 else ''}"
    grouped = acts.reshape(acts.shape[0], GROUPS, -1, *acts.shape[2:])
    axes = tuple(range(2, grouped.ndim))
    centred = grouped - grouped.mean(axis=axes, keepdims=True)
    biased = grouped.var(axis=axes, keepdims=True)
    unbiased = grouped.var(axis=axes, keepdims=True, ddof=1)
    return Exercise(
        group_norm(acts, GROUPS, eps=EPS),
        hint=f"Each group is {per_group} x {np.prod(acts.shape[2:], dtype=int)} positions of one "
        "sample; use the biased variance and eps inside the square root.",
        mistakes={
            f"that is layer norm (G = 1, all {channels} channels together); each group has "
            f"{per_group}": group_norm(acts, 1, eps=EPS),
            f"that is instance norm (G = {channels}, one channel per group); each group has "
            f"{per_group}": group_norm(acts, channels, eps=EPS),
            "that normalizes over all the channels at each position, as layer norm does a "
            "token; group norm takes a group's channels at every position together": (
                _standardized(acts, (1,))
            ),
            "that normalizes each group's channels at each position on its own; a group takes "
            "its channels at every position together": _standardized(grouped, (2,)).reshape(
                acts.shape
            ),
            "the values are right, but of the grouped shape: reshape back to acts.shape": (
                centred / np.sqrt(biased + EPS)
            ),
            "that divides by the unbiased variance (ddof=1, n - 1); normalization uses the "
            "biased one, np.var's default": (centred / np.sqrt(unbiased + EPS)).reshape(acts.shape),
            "ε is missing: the question asks for ε = 1e-5 inside the square root": (
                group_norm(acts, GROUPS, eps=0.0)
            ),
            "ε is added to the standard deviation; it belongs inside the square root, "
            "sqrt(var + ε)": (centred / (np.sqrt(biased) + EPS)).reshape(acts.shape),
        },
    )


def rms_norm_ignores_weight_recentering() -> Exercise:
    """Exercise 2: True or False, RMS norm is invariant to weight-matrix re-centering (the chapter's
    table)."""
    row = invariance_table().invariant["RMS norm"]
    invariant = bool(row[list(TRANSFORMATIONS).index("weight matrix re-centering")])
    return Exercise(
        invariant,
        hint="Re-centering adds the same number to every summed input of a case. Does dividing by "
        "the RMS remove an added constant?",
        mistakes={
            "re-centering adds one constant to every summed input; RMS norm subtracts no mean, "
            "so ask whether dividing by the RMS removes that constant": not invariant,
        },
    )


def running_mean_after_two_batches() -> Exercise:
    """Exercise 3: batch norm's running mean after the batches [2, 4] and [0, 4, 8], momentum
    0.1."""

    def running_mean(batches, *, start=0.0, momentum=MOMENTUM) -> float:
        running = RunningStats(mean=np.array([start]), var=np.ones(1), momentum=momentum)
        for batch in batches:
            batch_norm(np.array(batch)[:, None], running=running)
        return float(running.mean[0])

    first, second = (float(np.mean(batch)) for batch in BATCHES)
    return Exercise(
        running_mean(BATCHES),
        hint=f"Apply the rule twice: the first batch's mean is {first:g}, the second's is "
        f"{second:g}.",
        mistakes={
            "the weights are swapped: the running mean keeps 0.9 of itself and takes 0.1 of "
            "the batch's mean": running_mean(BATCHES, momentum=1 - MOMENTUM),
            "the running mean starts at 0, not at the first batch's mean": running_mean(
                BATCHES[1:], start=first
            ),
            "the batches are folded in the wrong order: [2, 4] comes first": running_mean(
                BATCHES[::-1]
            ),
            "that is the mean of all five values; the running mean is an exponential average, "
            "updated batch by batch": float(np.mean(np.concatenate(BATCHES))),
            "you kept all of the first update; the second step keeps only 0.9 of the running "
            "mean the first step left": MOMENTUM * (first + second),
            "that is the running mean after the first batch only; fold in the second batch "
            "too": running_mean(BATCHES[:1]),
            "that is the running mean after the second batch alone; the first batch moved it "
            "from 0 before": running_mean(BATCHES[1:]),
            "that averages the two batch means; the running mean is an exponential average that "
            "starts at 0 and moves 0.1 of the way per batch": (first + second) / 2,
            "that is one update with all five values pooled into one batch; the layer updates "
            "once per batch, with each batch's own mean": running_mean([np.concatenate(BATCHES)]),
        },
    )


def _pooled(x) -> tuple:
    """The axes batch norm pools for each channel (axis 1): the samples and the positions."""
    return (0, *range(2, np.ndim(x)))


def _per_channel(gamma, x) -> np.ndarray:
    """The channels' gains shaped to broadcast against `x` (samples, channels, positions)."""
    return np.reshape(gamma, (1, -1) + (1,) * (np.ndim(x) - 2))


def _bn_dx(x, dy, gamma, *, axes=None, n=None, count=None, ddof=0, paths=("mean", "var")):
    """Batch norm's dx with one piece bent: the pooled `axes` (of the statistics and the sums), the
    number `n` of pooled values (both N of the closed form), the divisor `count` in front alone,
    the variance's `ddof`, or the `paths` through the statistics kept ("mean", "var"; none: the
    statistics held constant)."""
    axes = _pooled(x) if axes is None else axes
    pooled = int(np.prod([x.shape[a] for a in axes])) if n is None else n
    rstd = 1 / np.sqrt(x.var(axis=axes, ddof=ddof, keepdims=True) + EPS)
    xhat, dxhat = (x - x.mean(axis=axes, keepdims=True)) * rstd, _per_channel(gamma, x) * dy
    mean_path = dxhat.sum(axis=axes, keepdims=True) if "mean" in paths else 0.0
    var_path = xhat * (dxhat * xhat).sum(axis=axes, keepdims=True) if "var" in paths else 0.0
    return rstd / (pooled if count is None else count) * (pooled * dxhat - mean_path - var_path)


def _small_sequences(rng: np.random.Generator) -> dict:
    """Exercise 4's data as a student gets them: 2 samples of 3 channels at 2 positions in halves
    from -2 to 3, no channel constant; an upstream gradient in quarters from -1 to 1; gains in
    halves from 0.5 to 2."""
    while True:
        bx = rng.integers(-4, 7, size=(2, 3, 2)) / 2
        if np.all(bx.std(axis=(0, 2)) > 0) and np.all(bx.std(axis=0) > 0):
            return {
                "bx": bx,
                "bdy": rng.integers(-4, 5, size=(2, 3, 2)) / 4,
                "bgamma": rng.integers(1, 5, size=3) / 2,
            }


def _sequence_domain(rng: np.random.Generator) -> dict:
    """Exercise 4's domain: any samples, channels and positions with two values or more per
    channel and per (channel, position)."""
    shape = (rng.integers(2, 5), rng.integers(1, 5), rng.integers(1, 4))
    return {
        "bx": rng.normal(size=shape),
        "bdy": rng.normal(size=shape),
        "bgamma": rng.normal(size=shape[1]),
    }


@rests_on("Batch norm's backward and its pitfalls")
@asks_for("derivation")
@forbidding("lnlib", "torch")
@variant(lambda rng: redrawn(rng, _small_sequences, batch_norm_dx))
@domain(_sequence_domain)
def batch_norm_dx(bx, bdy, bgamma) -> Exercise:
    """Exercise 4: dx of batch norm in training mode (``BatchNorm1d`` on a sequence) for the batch
    `bx` (samples, channels, positions), gains `bgamma` per channel, upstream gradient `bdy`,
    ε = 1e-5."""
    x, dy, gamma = (np.asarray(a, dtype=np.float64) for a in (bx, bdy, bgamma))
    axes = _pooled(x)
    mistakes = {
        "the statistics and sums run over the channels of each sample and position (axis 1), as "
        "in LayerNorm; batch norm pools each channel over the samples and the positions": _bn_dx(
            x, dy, gamma, axes=(1,)
        ),
        "the 1/N in front is missing: the two sums come from means over the N pooled values": (
            _bn_dx(x, dy, gamma, count=1)
        ),
        "gamma is missing: the upstream gradient of x-hat is gamma * dy": _bn_dx(
            x, dy, np.ones_like(gamma)
        ),
        "that treats the batch mean and variance as constants, as eval mode treats its running "
        "statistics; in training mode they depend on every value": _bn_dx(x, dy, gamma, paths=()),
        "that uses the unbiased variance (ddof=1); the normalization divides by N": _bn_dx(
            x, dy, gamma, ddof=1
        ),
        "the path through the mean is missing: the sum of dx-hat over the pooled values": _bn_dx(
            x, dy, gamma, paths=("var",)
        ),
        "the path through the variance is missing: x-hat times the sum of dx-hat x-hat": _bn_dx(
            x, dy, gamma, paths=("mean",)
        ),
    }
    if x.ndim > 2 and x.shape[2] > 1:  # positions a reader may forget
        mistakes |= {
            "that pools each sample's positions (axis 2), as instance norm does; batch norm pools "
            "each channel over the samples and the positions together": _bn_dx(
                x, dy, gamma, axes=(2,)
            ),
            "that pools the samples only (axis 0), as if each position were its own feature; "
            "BatchNorm1d pools each channel over the samples and the positions together": _bn_dx(
                x, dy, gamma, axes=(0,)
            ),
            "the N in front counts the samples only; the means pool N = samples times positions "
            "values per channel": _bn_dx(x, dy, gamma, n=x.shape[0]),
        }
    return Exercise(
        batch_norm_backward(dy, x, gamma, eps=EPS, axis=axes)[0],
        hint="Chapter 09's closed form holds for each channel, with the values it pools (every "
        "sample at every position) where LayerNorm has the features; x-hat uses their mean and "
        "biased variance, and the gains broadcast along axis 1.",
        rtol=1e-4,
        atol=1e-6,
        digits=4,  # as its prompt asks
        mistakes=mistakes,
    )


exercises = Exercises(
    "10_family",
    group_normalized_acts,
    rms_norm_ignores_weight_recentering,
    running_mean_after_two_batches,
    batch_norm_dx,
)
