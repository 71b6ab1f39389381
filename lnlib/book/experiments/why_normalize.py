"""The chapter "Why normalize?": one stack run at a chosen weight scale.

The chapter compares one random stack (:func:`lnlib.book.models.deep_stack.random_stack`) at several
weight scales :math:`a`, with and without a LayerNorm after each linear map; :func:`scaled_run` is
that run, so the chapter's hidden cells hold no function of their own.
"""

from __future__ import annotations

from ..models.deep_stack import StackRun, run_stack

__all__ = ["scaled_run"]


def scaled_run(
    x, weights, upstream, a: float, layer_norm_on: bool, activation: str = "relu"
) -> StackRun:
    """The stack with its matrices multiplied by the weight scale `a` (chapter "Why normalize?",
    "The idea").

    Parameters
    ----------
    x, weights, upstream : array_like
        The stack of :func:`lnlib.book.models.deep_stack.random_stack`: the input, the matrices
        :math:`G_\\ell` and the upstream gradient :math:`g`.
    a : float
        The weight scale: layer :math:`\\ell` multiplies by :math:`a\\,G_\\ell`.
    layer_norm_on : bool
        Put a LayerNorm between each linear map and its nonlinearity.
    activation : {"relu", "tanh"}, default "relu"

    Returns
    -------
    StackRun
        :func:`lnlib.book.models.deep_stack.run_stack`'s result.

    Examples
    --------
    >>> from lnlib.book.models.deep_stack import random_stack
    >>> x, weights, upstream = random_stack(depth=3, width=8, batch=4, seed=0)
    >>> run = scaled_run(x, weights, upstream, 2.0, layer_norm_on=True)
    >>> run.activation_rms.shape
    (4,)
    """
    return run_stack(x, a * weights, upstream, layer_norm_on=layer_norm_on, activation=activation)
