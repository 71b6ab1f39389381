"""Chapter 02's exercises (chapters/02_the_input.ipynb): which elements share a mean, LayerNorm's
axes and BatchNorm's."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import Exercises, domain, forbidding, redrawn, rests_on, variant
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.experiments.the_input import reduction_axes
from lnlib.norms import axis_ids


def means_layer_norm_and_batch_norm() -> Exercise:
    """Exercise 1: how many means LayerNorm and BatchNorm take of a ``(4, 10, 16)`` input."""
    shape = (4, 10, 16)

    def count(axes):
        """How many means a normalization over `axes` takes."""
        return int(axis_ids(shape, axes).max()) + 1

    layer_norm, batch_norm = (count(reduction_axes(name, 3)) for name in ("LayerNorm", "BatchNorm"))
    return Exercise(
        [layer_norm, batch_norm],
        hint="LayerNorm: one mean per token (batch x sequence). BatchNorm: one per hidden unit.",
        mistakes={
            "the two counts are swapped: the list is [layernorm, batchnorm]": [
                batch_norm,
                layer_norm,
            ],
            "one mean per sequence is nn.LayerNorm((10, 16)); a transformer's LayerNorm takes "
            "one per token": [
                count(reduction_axes("LayerNorm over the last two axes", 3)),
                batch_norm,
            ],
            "BatchNorm on a (batch, sequence, hidden) input averages over the sequence "
            "positions too: one mean per hidden unit, not one per position and hidden unit": [
                layer_norm,
                count((0,)),  # over the batch axis alone
            ],
        },
    )


@forbidding("lnlib", "torch")
@variant(lambda rng: {"seq": rng.normal(size=(4, 10, 16))})
@domain(lambda rng: {"seq": rng.normal(rng.normal(), rng.uniform(0.1, 3), size=(4, 10, 16))})
@rests_on("axis as an int and as a tuple")
def normalized_over_the_sequence(seq) -> Exercise:
    """Exercise 2: `seq` normalized as ``nn.LayerNorm((10, 16))`` does, without gamma or beta."""
    seq = np.asarray(seq, dtype=np.float64)
    centred = seq - seq.mean(axis=(1, 2), keepdims=True)
    return Exercise(
        lnlib.layer_norm(seq, axis=(-2, -1)),
        rtol=1e-9,  # the missing ε moves the answer by ε / 2σ², under 1e-6 for a wide spread
        hint="normalized_shape=(10, 16) means: take the mean and variance over axes (1, 2), "
        "keepdims=True.",
        mistakes={
            "you normalized each token over its 16 features alone; normalized_shape=(10, 16) "
            "takes one mean and variance over the whole sequence": lnlib.layer_norm(seq),
            "you divided by N - 1 (ddof=1); LayerNorm's variance divides by the number of "
            "values it averages, here 10 x 16": centred
            / np.sqrt(seq.var(axis=(1, 2), ddof=1, keepdims=True) + 1e-5),
            "ε is missing: add 1e-5 to the variance inside the square root": lnlib.layer_norm(
                seq, axis=(-2, -1), eps=0.0
            ),
            "that takes one mean and variance over the whole array; each of the 4 sequences "
            "gets its own, over axes (1, 2)": (seq - seq.mean()) / np.sqrt(seq.var() + 1e-5),
        },
    )


@variant(
    lambda rng: redrawn(
        rng, lambda r: {"batch": r.normal(size=(4, 6))}, batch_norm_change_from_a_batchmate
    )
)
@domain(lambda rng: {"batch": rng.normal(size=(rng.integers(3, 7), rng.integers(2, 9)))})
@rests_on("The idea")
def batch_norm_change_from_a_batchmate(batch) -> Exercise:
    """Exercise 3: the largest change in sample 1's BatchNorm output when sample 2 of `batch` is
    scaled by 10."""
    batch = np.asarray(batch, dtype=np.float64)

    def change(scaled=1, looked_at=0):
        """Sample `looked_at`'s BatchNorm output after scaling sample `scaled`, minus before."""
        other = batch.copy()
        other[scaled] = 10.0 * other[scaled]
        return (
            lnlib.layer_norm(other, axis=0)[looked_at] - lnlib.layer_norm(batch, axis=0)[looked_at]
        )

    return Exercise(
        float(np.abs(change()).max()),
        hint="Normalize batch and the changed copy over axis=0 (down each column, across the "
        "samples) and compare their first rows.",
        mistakes={
            "0 is LayerNorm's change: its statistics stay inside each row; BatchNorm's run down "
            "each column, across the samples": 0.0,
            "batch[2] is sample 3: numpy counts from 0, so sample 2 is batch[1]": float(
                np.abs(change(scaled=2)).max()
            ),
            "that is the change in sample 2's own output (row 1); the question asks about "
            "sample 1, row 0": float(np.abs(change(looked_at=1)).max()),
            "batch[2] and row 1 are samples 3 and 2: numpy counts from 0, so sample 1 is "
            "batch[0] and sample 2 is batch[1]": float(np.abs(change(scaled=2, looked_at=1)).max()),
            "that is the largest signed change; the question asks for the largest absolute "
            "change, np.abs first": float(change().max()),
        },
    )


exercises = Exercises(
    "02_the_input",
    means_layer_norm_and_batch_norm,
    normalized_over_the_sequence,
    batch_norm_change_from_a_batchmate,
)
