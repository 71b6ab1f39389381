r"""QK-norm: attention with LayerNorm on the queries and the keys, forward and backward.

Dehghani et al. (2023) saw the attention logits
:math:`s_{ij} = q_i \cdot k_j / \sqrt d` grow during training until the
softmax put all its weight on one key (zero entropy) and training diverged;
they normalize each query and key with a LayerNorm before the dot product,
crediting Gilmer et al. (Wortsman et al., 2023, reproduce the effect in small
models). The idea is Henry et al.'s QKNorm (2020): queries and keys divided by
their lengths, with a learned scale in place of 1/√d. With
:math:`\gamma = 1` a normalized vector has squared length
:math:`d\,\sigma^2/(\sigma^2+\varepsilon) < d`, so by Cauchy-Schwarz every
logit satisfies :math:`\lvert s_{ij}\rvert < \sqrt d` however large the
projections grow. The chapter "LayerNorm after 2020" shows both numbers.

The attention itself, with and without QK-norm, is
:func:`lnlib.transformer.attention_forward` (``qk_norm=True``) and its
backward; this module measures what the norm does to the logits.
"""

from __future__ import annotations

import numpy as np

from .transformer import attention_forward

__all__ = ["attention_entropy", "logit_statistics"]


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
    _, cache = attention_forward(x, w, qk_norm=qk_norm)
    q, k, a = cache[3], cache[4], cache[6]
    width = q.shape[-1]
    logits = q @ k.transpose(0, 2, 1) / np.sqrt(width)
    return {"max_logit": float(np.abs(logits).max()), "entropy": float(attention_entropy(a).mean()),
            "bound": float(np.sqrt(width))}
