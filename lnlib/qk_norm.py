r"""QK-norm: attention with LayerNorm on the queries and the keys, forward and backward.

Dehghani et al. (2023) saw the attention logits
:math:`s_{ij} = q_i \cdot k_j / \sqrt d` grow during training until the
softmax put all its weight on one key (zero entropy) and training diverged;
they normalize each query and key with a LayerNorm before the dot product
(Wortsman et al., 2023, reproduce the effect in small models). With
:math:`\gamma = 1` a normalized vector has squared length
:math:`d\,\sigma^2/(\sigma^2+\varepsilon) < d`, so by Cauchy-Schwarz every
logit satisfies :math:`\lvert s_{ij}\rvert < \sqrt d` however large the
projections grow. The chapter "LayerNorm after 2020" shows both numbers.

The functions extend :func:`lnlib.transformer.attention_forward` (same
weights, same shapes); with ``qk_norm=False`` they compute exactly what it
computes.
"""

from __future__ import annotations

import numpy as np

from .backward import layer_norm_backward
from .core import layer_norm
from .transformer import check_activations, weight_gradient, softmax, softmax_backward

__all__ = ["attention_entropy", "logit_statistics", "qk_attention_backward", "qk_attention_forward"]


def qk_attention_forward(x, w: dict, *, qk_norm: bool = False) -> tuple[np.ndarray, tuple]:
    r"""Single-head attention, optionally with LayerNorm on q and k (chapter "LayerNorm after 2020").

    Parameters
    ----------
    x : array_like, shape (batch, tokens, width)
    w : dict
        Holds ``Wq, Wk, Wv, Wo``, each width x width.
    qk_norm : bool, default False
        Normalize each query and key over its width (γ = 1, β = 0) before
        the dot product.

    Returns
    -------
    out : ndarray, the shape of `x`
    cache : tuple
        What :func:`qk_attention_backward` needs.
    """
    x = check_activations(x, w["Wq"].shape[0])
    q_raw, k_raw, v = x @ w["Wq"], x @ w["Wk"], x @ w["Wv"]
    q, k = (layer_norm(q_raw), layer_norm(k_raw)) if qk_norm else (q_raw, k_raw)
    a = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(x.shape[-1]))
    context = a @ v
    return context @ w["Wo"], (x, q_raw, k_raw, q, k, v, a, context, qk_norm)


def qk_attention_backward(dout: np.ndarray, cache: tuple, w: dict) -> tuple[np.ndarray, dict]:
    """Gradients of :func:`qk_attention_forward` with respect to its input and ``Wq, Wk, Wv, Wo`` (chapter "LayerNorm after 2020")."""
    x, q_raw, k_raw, q, k, v, a, context, qk_norm = cache
    grads = {"Wo": weight_gradient(context, dout)}
    dcontext = dout @ w["Wo"].T
    dv = a.transpose(0, 2, 1) @ dcontext
    ds = softmax_backward(dcontext @ v.transpose(0, 2, 1), a) / np.sqrt(x.shape[-1])
    dq, dk = ds @ k, ds.transpose(0, 2, 1) @ q
    if qk_norm:
        dq, dk = layer_norm_backward(dq, q_raw)[0], layer_norm_backward(dk, k_raw)[0]
    grads.update(Wq=weight_gradient(x, dq), Wk=weight_gradient(x, dk), Wv=weight_gradient(x, dv))
    return dq @ w["Wq"].T + dk @ w["Wk"].T + dv @ w["Wv"].T, grads


def attention_entropy(a: np.ndarray) -> np.ndarray:
    r"""The entropy :math:`-\sum_j a_{ij}\ln a_{ij}` of each row of attention weights, in nats (chapter "LayerNorm after 2020").

    Uniform attention over T tokens has entropy ln T; attention on one token has 0.
    """
    return -np.sum(np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0), axis=-1)


def logit_statistics(x, w: dict, *, qk_norm: bool = False) -> dict:
    """The largest absolute attention logit and the mean attention entropy of one attention layer (chapter "LayerNorm after 2020").

    Returns
    -------
    dict
        ``max_logit`` (the largest :math:`\\lvert q\\cdot k\\rvert/\\sqrt d`),
        ``entropy`` (mean over queries, nats) and ``bound`` (√d, the
        ceiling QK-norm puts on every logit).
    """
    _, cache = qk_attention_forward(x, w, qk_norm=qk_norm)
    q, k, a = cache[3], cache[4], cache[6]
    width = q.shape[-1]
    logits = q @ k.transpose(0, 2, 1) / np.sqrt(width)
    return {"max_logit": float(np.abs(logits).max()), "entropy": float(attention_entropy(a).mean()),
            "bound": float(np.sqrt(width))}
