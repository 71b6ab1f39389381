"""The chapter "Why normalize?": one stack run at a chosen weight scale.

The chapter compares one random stack (:func:`lnlib.book.models.deep_stack.random_stack`) at several
weight scales :math:`a`, with and without a LayerNorm after each linear map; :func:`scaled_run` is
that run, so the chapter's hidden cells hold no function of their own.
"""

from __future__ import annotations

import numpy as np

from ..models.deep_stack import StackRun, random_stack, run_stack

__all__ = ["he_drift", "scaled_run"]


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


def he_drift(seeds=range(20), depth: int = 50, width: int = 64, batch: int = 32) -> np.ndarray:
    """How far the ReLU stack's scale drifts at He initialization, :math:`a = \\sqrt2`, one draw of
    the weights per seed (chapter "Why normalize?", "The idea").

    :math:`a = \\sqrt2` keeps the mean square on average over the weights, but each layer's
    factor is random, and a product of random factors is typically smaller than the product of
    their averages (the average of a factor's logarithm lies below the logarithm of its average):
    at finite width the scale of one draw drifts down.

    Parameters
    ----------
    seeds : iterable of int, default 0 to 19
        Seeds of :func:`lnlib.book.models.deep_stack.random_stack`, one stack each.
    depth, width, batch : int
        The stack's sizes (the chapter's by default).

    Returns
    -------
    ndarray of shape (len(seeds),)
        :math:`\\mathrm{RMS}(h_L) / \\mathrm{RMS}(h_0)` of each draw, without LayerNorm.

    Examples
    --------
    >>> ratios = he_drift(seeds=range(3))
    >>> ratios.round(2)  # seed 0 is the chapter's stack
    array([0.27, 0.2 , 0.13])
    """
    ratios = []
    for seed in seeds:
        x, weights, upstream = random_stack(depth, width, batch, seed=seed)
        run = scaled_run(x, weights, upstream, np.sqrt(2), layer_norm_on=False)
        ratios.append(run.activation_rms[depth] / run.activation_rms[0])
    return np.array(ratios)
