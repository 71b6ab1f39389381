"""Chapter 04's exercises (chapters/04_variance.ipynb): the biased variance, torch.std's default and
the Annotated Transformer's LayerNorm."""

from __future__ import annotations

import numpy as np

from lnlib.book.exercises.chapter import (
    Exercises,
    domain,
    forbidding,
    integer_rows,
    redrawn,
    rests_on,
    variant,
)
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.explorers.variance import TOKEN_1, TOKEN_2
from lnlib.variants import annotated_transformer_layer_norm, sample_variance


def _token_of_integers(rng: np.random.Generator) -> dict:
    """Exercise 2's data as a student gets them: a token of four one-decimal numbers, not all
    equal (small integers give too few distinct answers: classmates would share them)."""
    while True:
        token = rng.integers(-99, 100, size=4) / 10
        if token.std() > 0:
            return {"token": token}


@rests_on("The idea")
@forbidding("lnlib", "torch")
@variant(lambda rng: redrawn(rng, lambda r: {"batch": integer_rows(r, 3, 4)}, per_sample_variances))
@domain(lambda rng: {"batch": rng.integers(-9, 10, size=(rng.integers(2, 6), 4)).astype(float)})
def per_sample_variances(batch) -> Exercise:
    """Exercise 1: the biased variance of each row of `batch`, shape ``(rows,)``."""
    rows = np.asarray(batch, dtype=np.float64)
    squares = (rows - rows.mean(axis=-1, keepdims=True)) ** 2
    return Exercise(
        sample_variance(rows),
        hint="Square each deviation from its row's mean, then average over the features.",
        mistakes={
            "you divided by H - 1 = 3 (the unbiased variance); LayerNorm's variance divides by "
            "H = 4": sample_variance(rows, unbiased=True),
            "that averages down the columns (axis=0), one variance per feature; LayerNorm takes "
            "one per sample, along axis=-1": rows.var(axis=0),
            "that is the standard deviation σ; the variance is its square": np.sqrt(
                sample_variance(rows)
            ),
            "that is each row's sum of squares, Hσ²: divide by H": squares.sum(axis=-1),
            "you averaged the squares of the entries, not of the deviations: subtract each "
            "row's mean first": (rows**2).mean(axis=-1),
        },
    )


@rests_on("Divide by H or by H - 1?")
@variant(lambda rng: redrawn(rng, _token_of_integers, torch_std_default))
@domain(lambda rng: {"token": rng.normal(size=rng.integers(2, 9))})
def torch_std_default(token) -> Exercise:
    """Exercise 2: what ``torch.std`` returns for `token` with its default settings (divide by H -
    1)."""
    token = np.asarray(token, dtype=np.float64)
    return Exercise(
        float(np.sqrt(sample_variance(token, unbiased=True))),
        hint="What does torch.std divide the sum of squares by, unless told otherwise?",
        mistakes={
            "that is the biased standard deviation (numpy's default, ddof=0); torch.std's "
            "default divides by H - 1": float(np.sqrt(sample_variance(token))),
            "that is the unbiased variance s_{H-1}², as torch.var returns it; torch.std returns "
            "its square root": float(sample_variance(token, unbiased=True)),
            "that is the biased variance σ²: torch.std divides by H - 1 and takes the square "
            "root": float(sample_variance(token)),
        },
    )


def variance_of_three_times() -> Exercise:
    """Exercise 3: whether multiplying a vector by 3 multiplies its variance by 3 (it multiplies it
    by 9)."""
    token = np.array([2.0, 4.0, 6.0, 8.0])
    return Exercise(
        bool(np.isclose(sample_variance(3 * token), 3 * sample_variance(token))),
        hint="Each deviation is multiplied by 3; what happens to its square?",
        mistakes={
            "every deviation is multiplied by 3 and its square by 9, so the variance is "
            "multiplied by 9, not 3": True,
        },
    )


def annotated_output_variance() -> Exercise:
    """Exercise 4: the biased variance of the Annotated Transformer's LayerNorm output (ε = 0) for H
    = 16.

    Not the running token's H = 8, whose output the chapter prints.
    """
    sample = np.random.default_rng(4).normal(size=16)
    factor = float(sample_variance(annotated_transformer_layer_norm(sample, eps=0.0)))
    one_hot = np.eye(4)[0]  # the chapter's x = [1, 0, 0, 0], H = 4
    return Exercise(
        factor,
        hint="Its output is the standard output times sqrt((H - 1) / H); the standard output "
        "has variance 1.",
        mistakes={
            "1 is the variance of the standard LayerNorm's output; this one divides by a larger "
            "σ": 1.0,
            "that is the factor on the output, sqrt((H - 1) / H); the variance gets its square": (
                np.sqrt(factor)
            ),
            "that is H / (H - 1), upside down: dividing by the larger s makes the output smaller, "
            "(H - 1) / H": 1 / factor,
            "that is (H - 1) / H for H = 4, as in the documents' examples; here H = 16": float(
                sample_variance(annotated_transformer_layer_norm(one_hot, eps=0.0))
            ),
        },
    )


def unbiased_variance_of_stretched_token() -> Exercise:
    """Exercise 5 (predict, then check): the variance the explorer shows for the stretched token (it
    opens on it) with the divisor H - 1."""
    running = np.array(TOKEN_1)  # the running token
    stretched = np.array(TOKEN_2)  # the chapter's stretched token, 3 × running − 0.2
    biased = float(sample_variance(stretched))
    unbiased = float(sample_variance(stretched, unbiased=True))
    return Exercise(
        unbiased,
        hint="The same sum of squared deviations, divided by H - 1 = 7 instead of H = 8: scale "
        "the stretched token's σ² by the ratio of the two divisors.",
        mistakes={
            "that is σ², which divides by H; the prompt asks for the divisor H - 1": biased,
            "that scales σ² the wrong way round: s² is the larger of the two": float(
                biased * (stretched.size - 1) / stretched.size
            ),
            "that is the standard deviation s, not the variance s²": float(np.sqrt(unbiased)),
            "that is the running token's s², before the stretch": float(
                sample_variance(running, unbiased=True)
            ),
        },
    )


exercises = Exercises(
    "04_variance",
    per_sample_variances,
    torch_std_default,
    variance_of_three_times,
    annotated_output_variance,
    unbiased_variance_of_stretched_token,
)
