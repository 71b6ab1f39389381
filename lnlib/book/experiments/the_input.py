"""Where LayerNorm's input comes from, and which of its elements share one mean and variance.

A feed-forward layer hands LayerNorm a ``(batch, features)`` array, a recurrent
layer a ``(batch, hidden)`` array at every time step, and a transformer a
``(batch, sequence, hidden)`` array. The normalization decides which axes a
mean and variance are taken *over*; every other index gets its own pair of
statistics. :func:`lnlib.norms.axis_ids` labels each element by the slice it
shares statistics with, which is what the chapter "The input x" colours.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Context", "CONTEXTS", "NORMALIZATIONS", "reduction_axes"]


@dataclass(frozen=True)
class Context:
    """A layer that feeds LayerNorm, with the names of its input's axes (chapter "The input x").

    Attributes
    ----------
    name : str
        "feed-forward", "recurrent" or "transformer".
    axis_names : tuple of str
        One name per axis of the input, e.g. ``("batch", "sequence", "hidden")``.
    source : str
        What x is in that layer, in a few words.
    """

    name: str
    axis_names: tuple[str, ...]
    source: str

    @property
    def ndim(self) -> int:
        """The number of axes of the input."""
        return len(self.axis_names)


#: The three contexts of the source documents, by name.
CONTEXTS = {
    "feed-forward": Context(
        "feed-forward",
        ("batch", "features"),
        "the output W h + b of a linear map, one vector per sample",
    ),
    "recurrent": Context(
        "recurrent", ("batch", "hidden"), "the summed inputs of the hidden state at one time step"
    ),
    "transformer": Context(
        "transformer", ("batch", "sequence", "hidden"), "the residual stream, one vector per token"
    ),
}

#: The normalizations the chapter compares, by name: what each reduces over.
NORMALIZATIONS = {
    "LayerNorm": "the last axis (axis=-1)",
    "LayerNorm over the last two axes": "the last two axes (axis=(-2, -1))",
    "BatchNorm": "every axis but the last",
}


def reduction_axes(normalization: str, ndim: int) -> tuple[int, ...]:
    """The axes `normalization` takes its mean and variance over, for an input of `ndim` axes
    (chapter "The input x").

    Parameters
    ----------
    normalization : str
        A key of :data:`NORMALIZATIONS`.
    ndim : int
        The number of axes of the input, at least 2 (a batch of vectors).

    Returns
    -------
    tuple of int
        Non-negative, sorted: ``(ndim - 1,)`` for LayerNorm, ``(ndim - 2, ndim - 1)``
        for LayerNorm over the last two axes, ``(0, ..., ndim - 2)`` for BatchNorm.

    Raises
    ------
    ValueError
        For an unknown normalization or fewer than 2 axes.

    Examples
    --------
    >>> reduction_axes("LayerNorm", 3), reduction_axes("BatchNorm", 3)
    ((2,), (0, 1))
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(
            f"normalization must be one of {sorted(NORMALIZATIONS)}; got {normalization!r}."
        )
    if ndim < 2:
        raise ValueError(f"the input needs at least 2 axes (a batch of vectors); got {ndim}.")
    if normalization == "LayerNorm":
        return (ndim - 1,)
    if normalization == "BatchNorm":
        return tuple(range(ndim - 1))
    return (ndim - 2, ndim - 1)
