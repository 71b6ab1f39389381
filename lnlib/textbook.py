r"""LayerNorm in a few lines of numpy, forward and backward: the version to read first.

Written the way llm.c's ``doc/layernorm`` writes it: the mean, the biased variance, x̂ and y over
the last axis; the backward pass in its closed form, dγ and dβ summed over every row (all B·T
tokens). 16-bit data is normalized in float32, as the frameworks do. RMS norm's pair follows, the
same without the mean (:func:`lnlib.harness.check_rms_norm` runs it). The chapter "Check your own
LayerNorm" runs both through :func:`lnlib.harness.check_layer_norm` and plants its bugs in copies of
them.

On ordinary input they equal the library's hardened :func:`lnlib.forward.layer_norm` and
:func:`lnlib.backward.layer_norm_backward`, which add what these leave out (see their docstrings):

>>> import numpy as np
>>> from lnlib.backward import layer_norm_backward
>>> from lnlib.forward import layer_norm
>>> rng = np.random.default_rng(0)
>>> x, dy = rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 3, 8))
>>> gamma, beta = rng.normal(size=8), rng.normal(size=8)
>>> y = numpy_layer_norm(x, gamma, beta, 1e-5)
>>> np.allclose(y, layer_norm(x, gamma, beta, eps=1e-5))
True
>>> ours = numpy_layer_norm_backward(dy, x, gamma, 1e-5)
>>> hardened = layer_norm_backward(dy, x, gamma, eps=1e-5)
>>> all(np.allclose(a, b) for a, b in zip(ours, hardened))
True
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "numpy_layer_norm",
    "numpy_layer_norm_backward",
    "numpy_rms_norm",
    "numpy_rms_norm_backward",
]


def numpy_layer_norm(x, gamma, beta, eps):
    """A correct LayerNorm over the last axis in numpy.

    Float32 statistics for 16-bit data, as the frameworks keep them.
    """
    work = np.float32 if x.dtype.itemsize == 2 else x.dtype
    xw = x.astype(work)
    mean = xw.mean(axis=-1, keepdims=True)
    var = ((xw - mean) ** 2).mean(axis=-1, keepdims=True)
    xhat = (xw - mean) / np.sqrt(var + eps)
    y = xhat * gamma.astype(work) + beta.astype(work)
    return y.astype(x.dtype)


def numpy_layer_norm_backward(dy, x, gamma, eps):
    """The matching backward pass: dx by the closed form, dgamma and dbeta summed over every row
    (all B·T tokens)."""
    work = np.float32 if x.dtype.itemsize == 2 else x.dtype
    xw, dyw, gw = x.astype(work), dy.astype(work), gamma.astype(work)
    mean = xw.mean(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(((xw - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = (xw - mean) * rstd
    dxhat = dyw * gw
    dx = (
        dxhat
        - dxhat.mean(axis=-1, keepdims=True)
        - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)
    ) * rstd
    rows = tuple(range(x.ndim - 1))
    return (
        dx.astype(x.dtype),
        (dyw * xhat).sum(axis=rows).astype(x.dtype),
        dyw.sum(axis=rows).astype(x.dtype),
    )


def numpy_rms_norm(x, gamma, eps):
    """A correct RMSNorm over the last axis in numpy: ``gamma * x / sqrt(mean(x**2) + eps)``.

    Float32 statistics for 16-bit data, as the frameworks keep them.
    """
    work = np.float32 if x.dtype.itemsize == 2 else x.dtype
    xw = x.astype(work)
    rstd = 1 / np.sqrt((xw * xw).mean(axis=-1, keepdims=True) + eps)
    return (xw * rstd * gamma.astype(work)).astype(x.dtype)


def numpy_rms_norm_backward(dy, x, gamma, eps):
    """The matching backward pass: dx by the closed form, dgamma summed over every row."""
    work = np.float32 if x.dtype.itemsize == 2 else x.dtype
    xw, dyw = x.astype(work), dy.astype(work)
    rstd = 1 / np.sqrt((xw * xw).mean(axis=-1, keepdims=True) + eps)
    xhat = xw * rstd
    dxhat = dyw * gamma.astype(work)
    dx = (dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)) * rstd
    return dx.astype(x.dtype), (dyw * xhat).sum(axis=tuple(range(x.ndim - 1))).astype(x.dtype)
