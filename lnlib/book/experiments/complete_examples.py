"""The source documents' worked examples as arrays (chapter "The complete examples").

The documents walk three inputs through LayerNorm: a batch of two samples with
four features, a single token ``[2, 4, 6, 8]``, and a 512-dimensional "word
embedding after attention" of which they print only four entries and the
statistics (mean about 0.135, standard deviation about 0.048). The first two
are given in full; the third is rebuilt here, seeded, with the printed entries
in place and exactly the printed statistics, so a reader can follow the
documents' arithmetic digit by digit.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ...validation import as_float_array

__all__ = [
    "EMBEDDING_MEAN",
    "EMBEDDING_SHOWN",
    "EMBEDDING_SIZE",
    "EMBEDDING_STD",
    "documents_batch",
    "documents_token",
    "documents_embedding",
    "vector_with_moments",
    "describe_step",
]

#: The entries of the 512-d embedding the document prints, by (0-based) index: x1, x2, x3 and x512.
EMBEDDING_SHOWN = MappingProxyType({0: 0.146, 1: 0.108, 2: 0.192, 511: 0.11})
#: Size, mean and (biased) standard deviation the document gives for the embedding.
EMBEDDING_SIZE, EMBEDDING_MEAN, EMBEDDING_STD = 512, 0.135, 0.048


def documents_batch() -> np.ndarray:
    """The documents' batch of two samples with four features each, shape (2, 4) (chapter "The
    complete examples")."""
    return np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])


def documents_token() -> np.ndarray:
    """The walkthrough document's single token embedding ``[2, 4, 6, 8]``, shape (4,) (chapter "The
    complete examples")."""
    return np.array([2.0, 4.0, 6.0, 8.0])


def documents_embedding(seed: int = 0) -> np.ndarray:
    """A 512-vector with the document's four printed entries, mean 0.135 and standard deviation
    0.048 (chapter "The complete examples").

    The other 508 entries are seeded Gaussian draws, shifted and scaled so that
    the whole vector has exactly the document's mean and (biased) standard
    deviation, up to floating-point rounding.

    Parameters
    ----------
    seed : int, default 0
        Seed of the Gaussian draws.

    Returns
    -------
    ndarray of shape (512,)
    """
    return vector_with_moments(
        EMBEDDING_SIZE, EMBEDDING_MEAN, EMBEDDING_STD, pinned=EMBEDDING_SHOWN, seed=seed
    )


def vector_with_moments(
    size: int, mean: float, std: float, *, pinned=None, seed: int = 0
) -> np.ndarray:
    """A seeded random vector with exactly the given mean and biased standard deviation (chapter
    "The complete examples").

    Parameters
    ----------
    size : int
        Length of the vector, at least 2 more than the number of pinned entries.
    mean, std : float
        The mean and the standard deviation (divide by `size`) the vector must have; ``std > 0``.
    pinned : mapping of int to float, optional
        Entries fixed in advance, by index; the free entries are fitted around them.
    seed : int, default 0
        Seed of the Gaussian draws for the free entries.

    Raises
    ------
    ValueError
        If `size` is too small, `std` is not positive, an index is out of range,
        or the pinned entries alone already spread more than `std` allows.
    """
    pinned = dict(pinned or {})
    if int(size) != size or size < len(pinned) + 2:
        raise ValueError(
            f"size must be an integer of at least {len(pinned) + 2} (the pinned entries plus two "
            f"free ones); got {size!r}."
        )
    if not std > 0:
        raise ValueError(f"std must be a positive number; got {std!r}.")
    size = int(size)
    index = np.array(sorted(pinned), dtype=int)
    if index.size and not (0 <= index.min() and index.max() < size):
        raise ValueError(f"pinned indices must lie in [0, {size - 1}]; got {sorted(pinned)}.")
    values = (
        as_float_array([pinned[i] for i in index], "pinned values") if index.size else np.empty(0)
    )
    free = np.setdiff1d(np.arange(size), index)
    free_mean = (size * mean - values.sum()) / free.size
    spread_left = size * std**2 - np.sum((values - mean) ** 2) - free.size * (free_mean - mean) ** 2
    if spread_left <= 0:
        raise ValueError(
            f"the pinned entries {pinned} already spread more than std={std} allows for a vector "
            f"of size {size}."
        )
    z = np.random.default_rng(seed).normal(size=free.size)
    z = (z - z.mean()) / z.std()
    out = np.empty(size)
    out[index] = values
    out[free] = free_mean + np.sqrt(spread_left / free.size) * z
    return out


def describe_step(steps, step: int, *, decimals: int = 4) -> list[str]:
    """The numbers of one step of a worked example as text, one line per sample (chapter "The
    complete examples").

    Parameters
    ----------
    steps : lnlib.LayerNormSteps
        The forward pass of a vector or a batch (normalized over the last axis).
    step : int
        0 the input, 1 the mean, 2 the variance and divisor, 3 the normalized x-hat, 4 the output y.
    decimals : int, default 4
        Decimals of the vectors and the mean; the variance and divisor get two more.
        Long vectors show their first three entries and their last, as the documents print them.
    """
    if step not in range(5):
        raise ValueError(f"step must be an integer from 0 to 4; got {step!r}.")
    d = decimals
    x, mean, var, root, xhat, y = (
        np.atleast_2d(a)
        for a in (steps.x, steps.mean, steps.var, steps.sqrt_var_eps, steps.xhat, steps.y)
    )
    lines = []
    for n in range(x.shape[0]):
        text = [
            f"x = {_vector(x[n], d)}",
            f"μ = {mean[n, 0]:.{d}f}",
            (
                f"σ² = {var[n, 0]:.{d + 2}f}, σ = {np.sqrt(var[n, 0]):.{d + 2}f}, √(σ² + ε) = "
                f"{root[n, 0]:.{d + 2}f}"
            ),
            f"x̂ = (x − μ) / √(σ² + ε) = {_vector(xhat[n], d)}",
            f"y = γ ⊙ x̂ + β = {_vector(y[n], d)}",
        ][step]
        lines.append((f"sample {n + 1}: " if x.shape[0] > 1 else "") + text)
    return lines


def _vector(values, decimals: int) -> str:
    shown = (
        [f"{v:.{decimals}f}" for v in values]
        if values.size <= 8
        else [*(f"{v:.{decimals}f}" for v in values[:3]), "…", f"{values[-1]:.{decimals}f}"]
    )
    return "[" + ", ".join(shown) + "]"
