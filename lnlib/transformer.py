r"""A tiny transformer in numpy, post-norm or pre-norm, with a hand-written backward pass.

One layer is two residual sub-layers, single-head self-attention and a
two-layer ReLU feed-forward network (FFN), arranged in one of two ways
(Xiong et al., 2020):

.. math::

    \text{post-norm:}\quad x' = \mathrm{LN}(x + \mathrm{Attn}(x)), \qquad x_{l+1} = \mathrm{LN}(x' + \mathrm{FFN}(x'))

    \text{pre-norm:}\quad x' = x + \mathrm{Attn}(\mathrm{LN}(x)), \qquad x_{l+1} = x' + \mathrm{FFN}(\mathrm{LN}(x'))

and a pre-norm stack ends with one more LayerNorm. Weights are Xavier-normal,
with no biases, and every LayerNorm has gamma = 1, beta = 0, as at
initialization. Every piece has a forward function that returns its output and
a cache, and a backward function that takes the upstream gradient and the
cache; LayerNorm is :func:`model_norm`, the textbook formula, held to
:func:`lnlib.layer_norm` and :func:`lnlib.backward.layer_norm_backward` by the tests.
The chapter "Pre-norm vs post-norm" explains the model and uses
:func:`init_profile` to measure the residual stream and the weight gradients at
initialization.

Shapes: activations are ``(batch, tokens, width)``; a layer's weights are a
dict with ``Wq, Wk, Wv, Wo`` (width x width) and ``W1`` (width x ffn_width),
``W2`` (ffn_width x width).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backward import layer_norm_backward
from .core import layer_norm
from .validation import as_float_array, check_count

__all__ = [
    "PLACEMENTS",
    "InitProfile",
    "attention_backward",
    "attention_forward",
    "block_backward",
    "block_forward",
    "check_activations",
    "check_placement",
    "depth_sweep",
    "ffn_backward",
    "ffn_forward",
    "init_layer",
    "init_profile",
    "init_stack",
    "loss_gradient_norm",
    "MODEL_EPS",
    "model_norm",
    "model_norm_backward",
    "mse_loss",
    "profile_grid",
    "softmax",
    "softmax_backward",
    "stack_backward",
    "stack_forward",
    "weight_gradient",
    "xavier_normal",
]

#: The two places a LayerNorm can sit in a residual sub-layer.
PLACEMENTS = ("post", "pre")

ATTENTION_WEIGHTS = ("Wq", "Wk", "Wv", "Wo")
FFN_WEIGHTS = ("W1", "W2")


# --- checks -----------------------------------------------------------------------------------



def check_placement(value) -> str:
    """Return `value` after checking it is 'post' or 'pre' (the placements of chapter "Pre-norm vs post-norm")."""
    if value not in PLACEMENTS:
        raise ValueError(f"placement must be 'post' or 'pre'; got {value!r}.")
    return value


def check_activations(x, width: int | None = None) -> np.ndarray:
    """Check a (batch, tokens, width) activation array, as a float array (chapter "Pre-norm vs post-norm")."""
    x = as_float_array(x, "x")
    if x.ndim != 3:
        raise ValueError(f"x must have shape (batch, tokens, width); got shape {x.shape}.")
    if width is not None and x.shape[-1] != width:
        raise ValueError(f"x has width {x.shape[-1]}, but the weights expect width {width}.")
    return x


# --- initialization ---------------------------------------------------------------------------


def xavier_normal(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    """A fan_in x fan_out matrix with N(0, 2 / (fan_in + fan_out)) entries, Glorot & Bengio's Xavier-normal (chapter "Pre-norm vs post-norm")."""
    return rng.normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), size=(fan_in, fan_out))


def init_layer(rng: np.random.Generator, width: int, ffn_width: int | None = None) -> dict[str, np.ndarray]:
    """Xavier-normal weights of one layer (chapter "Pre-norm vs post-norm").

    Parameters
    ----------
    rng : numpy.random.Generator
    width : int
        d, the width of the residual stream.
    ffn_width : int, optional
        The FFN's hidden width. Default: `width`, the setting of Xiong et al.'s analysis.

    Returns
    -------
    dict of str to ndarray
        ``Wq, Wk, Wv, Wo, W1, W2``.
    """
    width = check_count(width, "width")
    ffn_width = width if ffn_width is None else check_count(ffn_width, "ffn_width")
    weights = {name: xavier_normal(rng, width, width) for name in ATTENTION_WEIGHTS}
    weights["W1"] = xavier_normal(rng, width, ffn_width)
    weights["W2"] = xavier_normal(rng, ffn_width, width)
    return weights


def init_stack(depth: int, width: int, *, ffn_width: int | None = None, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """The weights of `depth` layers, drawn from ``np.random.default_rng(seed)`` (chapter "Pre-norm vs post-norm")."""
    depth = check_count(depth, "depth")
    rng = np.random.default_rng(seed)
    return [init_layer(rng, width, ffn_width) for _ in range(depth)]


# --- softmax and attention --------------------------------------------------------------------


def softmax(s: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along `axis`, shifted by the maximum so that exp never overflows (chapter "Pre-norm vs post-norm")."""
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_backward(da: np.ndarray, a: np.ndarray, axis: int = -1) -> np.ndarray:
    r"""Gradient through softmax: :math:`ds = a \odot (da - \sum_j da_j a_j)`, given the output `a` (chapter "Pre-norm vs post-norm")."""
    return a * (da - (da * a).sum(axis=axis, keepdims=True))


def attention_forward(x, w: dict, *, qk_norm: bool = False) -> tuple[np.ndarray, tuple]:
    r"""Single-head scaled dot-product self-attention, :math:`\mathrm{softmax}(QK^\top/\sqrt d)\,V\,W_o` (chapter "Pre-norm vs post-norm").

    Parameters
    ----------
    x : array_like, shape (batch, tokens, width)
    w : dict
        Holds ``Wq, Wk, Wv, Wo``, each width x width.
    qk_norm : bool, default False
        Normalize each query and key over its width (γ = 1, β = 0) before the dot product: QK-norm
        (chapter "LayerNorm after 2020", :mod:`lnlib.qk_norm`).

    Returns
    -------
    out : ndarray, the shape of `x`
    cache : tuple
        ``(x, q_raw, k_raw, q, k, v, a, context, qk_norm)``: what :func:`attention_backward` needs.
    """
    x = check_activations(x, w["Wq"].shape[0])
    q_raw, k_raw, v = x @ w["Wq"], x @ w["Wk"], x @ w["Wv"]
    q, k = (layer_norm(q_raw), layer_norm(k_raw)) if qk_norm else (q_raw, k_raw)
    a = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(x.shape[-1]))
    context = a @ v
    return context @ w["Wo"], (x, q_raw, k_raw, q, k, v, a, context, qk_norm)


def attention_backward(dout: np.ndarray, cache: tuple, w: dict) -> tuple[np.ndarray, dict]:
    """Gradients of :func:`attention_forward` with respect to its input and its four weights (chapter "Pre-norm vs post-norm").

    Returns
    -------
    dx : ndarray
    grads : dict
        ``Wq, Wk, Wv, Wo``, summed over the batch and the tokens.
    """
    x, q_raw, k_raw, q, k, v, a, context, qk_norm = cache
    grads = {"Wo": weight_gradient(context, dout)}
    dcontext = dout @ w["Wo"].T
    dv = a.transpose(0, 2, 1) @ dcontext
    ds = softmax_backward(dcontext @ v.transpose(0, 2, 1), a) * (1.0 / np.sqrt(x.shape[-1]))
    dq, dk = ds @ k, ds.transpose(0, 2, 1) @ q
    if qk_norm:  # back through the LayerNorms on q and k (chapter "Gradients through LayerNorm")
        dq, dk = layer_norm_backward(dq, q_raw)[0], layer_norm_backward(dk, k_raw)[0]
    grads.update(Wq=weight_gradient(x, dq), Wk=weight_gradient(x, dk), Wv=weight_gradient(x, dv))
    return dq @ w["Wq"].T + dk @ w["Wk"].T + dv @ w["Wv"].T, grads


def weight_gradient(inputs: np.ndarray, doutputs: np.ndarray) -> np.ndarray:
    """dL/dW for ``outputs = inputs @ W``: the sum over batch and tokens of inputs^T doutputs (chapter "Pre-norm vs post-norm")."""
    return inputs.reshape(-1, inputs.shape[-1]).T @ doutputs.reshape(-1, doutputs.shape[-1])


# --- feed-forward -----------------------------------------------------------------------------


def ffn_forward(x, w: dict) -> tuple[np.ndarray, tuple]:
    r"""The two-layer ReLU feed-forward network, :math:`\max(0, x W_1)\, W_2` (chapter "Pre-norm vs post-norm")."""
    x = check_activations(x, w["W1"].shape[0])
    h = x @ w["W1"]
    r = np.maximum(h, 0.0)
    return r @ w["W2"], (x, h, r)


def ffn_backward(dout: np.ndarray, cache: tuple, w: dict) -> tuple[np.ndarray, dict]:
    """Gradients of :func:`ffn_forward` with respect to its input and ``W1, W2`` (chapter "Pre-norm vs post-norm")."""
    x, h, r = cache
    dr = dout @ w["W2"].T
    dh = dr * (h > 0)
    return dh @ w["W1"].T, {"W1": weight_gradient(x, dh), "W2": weight_gradient(r, dout)}


# --- residual sub-layers, blocks, stacks ------------------------------------------------------


#: The models' LayerNorm ε, lnlib.core.layer_norm's default.
MODEL_EPS = 1e-5


def model_norm(x: np.ndarray) -> tuple[np.ndarray, tuple]:
    """The models' LayerNorm over the last axis (γ = 1, β = 0, ε = :data:`MODEL_EPS`), and what its backward needs (chapter "Pre-norm vs post-norm").

    The textbook formula in float64, without :func:`lnlib.core.layer_norm`'s
    input checks and scaling: a model calls it hundreds of times per run on
    small, finite float64 activations, where those checks cost two thirds of
    the time. ``tests/test_transformer.py`` holds it to :func:`lnlib.core.layer_norm`
    and :func:`lnlib.backward.layer_norm_backward`.

    Returns
    -------
    y : ndarray
        The normalized `x`.
    saved : tuple
        ``(y, rstd)`` for :func:`model_norm_backward`.
    """
    centred = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + MODEL_EPS)
    y = centred * rstd
    return y, (y, rstd)


def model_norm_backward(dy: np.ndarray, saved: tuple) -> np.ndarray:
    """dL/dx of :func:`model_norm` from the upstream gradient and its saved ``(y, rstd)`` (chapter "Gradients through LayerNorm")."""
    xhat, rstd = saved
    return (dy - dy.mean(axis=-1, keepdims=True) - xhat * np.mean(dy * xhat, axis=-1, keepdims=True)) * rstd


def _sublayer_forward(x: np.ndarray, f_forward, w: dict, placement: str) -> tuple[np.ndarray, tuple]:
    """post: LN(x + F(x)); pre: x + F(LN(x))."""
    if placement == "post":
        f_out, f_cache = f_forward(x, w)
        y, saved = model_norm(x + f_out)
        return y, (saved, f_cache)
    normed, saved = model_norm(x)
    f_out, f_cache = f_forward(normed, w)
    return x + f_out, (saved, f_cache)


def _sublayer_backward(dy: np.ndarray, cache: tuple, f_backward, w: dict, placement: str) -> tuple[np.ndarray, dict]:
    """The residual adds the identity path's gradient to the branch's."""
    saved, f_cache = cache
    if placement == "post":
        dz = model_norm_backward(dy, saved)
        df, grads = f_backward(dz, f_cache, w)
        return dz + df, grads
    dnormed, grads = f_backward(dy, f_cache, w)
    return dy + model_norm_backward(dnormed, saved), grads


def block_forward(x, w: dict, placement: str) -> tuple[np.ndarray, tuple]:
    """One transformer layer: an attention sub-layer, then an FFN sub-layer (chapter "Pre-norm vs post-norm").

    Parameters
    ----------
    x : array_like, shape (batch, tokens, width)
    w : dict
        One layer's weights, as from :func:`init_layer`.
    placement : {"post", "pre"}

    Returns
    -------
    out : ndarray, the shape of `x`
    cache : tuple
        What :func:`block_backward` needs.
    """
    placement = check_placement(placement)
    x = check_activations(x, w["Wq"].shape[0])
    middle, attn_cache = _sublayer_forward(x, attention_forward, w, placement)
    out, ffn_cache = _sublayer_forward(middle, ffn_forward, w, placement)
    return out, (attn_cache, ffn_cache)


def block_backward(dout: np.ndarray, cache: tuple, w: dict, placement: str) -> tuple[np.ndarray, dict]:
    """Gradients of :func:`block_forward` with respect to its input and the layer's six weights (chapter "Pre-norm vs post-norm")."""
    attn_cache, ffn_cache = cache
    dmiddle, grads = _sublayer_backward(dout, ffn_cache, ffn_backward, w, placement)
    dx, attn_grads = _sublayer_backward(dmiddle, attn_cache, attention_backward, w, placement)
    return dx, {**attn_grads, **grads}


def stack_forward(x, weights: list[dict], placement: str) -> tuple[np.ndarray, list[np.ndarray], list[tuple]]:
    """A stack of layers; a pre-norm stack ends with a final LayerNorm (chapter "Pre-norm vs post-norm").

    Returns
    -------
    out : ndarray
        The stack's output (after the final LayerNorm for pre-norm).
    states : list of ndarray
        The residual stream x_0 (the input), x_1, ..., x_L after each layer,
        before any final LayerNorm.
    caches : list of tuple
        One per layer, for :func:`stack_backward`.
    """
    placement = check_placement(placement)
    states, caches = [check_activations(x, weights[0]["Wq"].shape[0])], []
    for w in weights:
        out, cache = block_forward(states[-1], w, placement)
        states.append(out)
        caches.append(cache)
    out = model_norm(states[-1])[0] if placement == "pre" else states[-1]
    return out, states, caches


def stack_backward(dout: np.ndarray, states: list, caches: list, weights: list[dict], placement: str) -> tuple[list[np.ndarray], list[dict]]:
    """Gradients of :func:`stack_forward` (chapter "Pre-norm vs post-norm").

    Returns
    -------
    stream_grads : list of ndarray
        dL/dx_l for every state of the residual stream, x_0 (the input) to x_L.
    grads : list of dict
        Every layer's weight gradients, bottom layer first.
    """
    stream_grads = [model_norm_backward(dout, model_norm(states[-1])[1]) if placement == "pre" else dout]
    grads = []
    for w, cache in zip(reversed(weights), reversed(caches)):
        grad, layer_grads = block_backward(stream_grads[-1], cache, w, placement)
        stream_grads.append(grad)
        grads.append(layer_grads)
    return stream_grads[::-1], grads[::-1]


def mse_loss(y: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray]:
    r"""Half the squared error per token, :math:`\frac{1}{2BT}\sum \|y - t\|^2`, and its gradient with respect to y (chapter "Pre-norm vs post-norm")."""
    target = as_float_array(target, "target")
    if target.shape != y.shape:
        raise ValueError(f"target must have the shape of the output, {y.shape}; got shape {target.shape}.")
    count = y.shape[0] * y.shape[1]
    diff = y - target
    return 0.5 * float(np.sum(diff * diff)) / count, diff / count


def loss_gradient_norm(x, target, weights: list[dict], placement: str) -> float:
    """The Frobenius norm of all weight gradients of :func:`mse_loss` for one batch (chapter "Pre-norm vs post-norm").

    Parameters
    ----------
    x : array_like, shape (batch, tokens, width)
        The stack's input.
    target : array_like, shape (batch, tokens, width)
        What the stack's output is compared with.
    weights : list of dict
        One dict per layer, as from :func:`init_stack`.
    placement : {"post", "pre"}

    Returns
    -------
    float
        The square root of the sum of squares of every entry of every layer's six weight gradients.
    """
    out, states, caches = stack_forward(x, weights, placement)
    _, grads = stack_backward(mse_loss(out, target)[1], states, caches, weights, placement)
    return float(np.sqrt(sum(np.sum(g * g) for layer in grads for g in layer.values())))


# --- the experiment of the chapter ------------------------------------------------------------


@dataclass(frozen=True)
class InitProfile:
    r"""Residual-stream norms and weight-gradient norms at initialization, one row per seed (chapter "Pre-norm vs post-norm").

    Attributes
    ----------
    placement : str
        ``"post"`` or ``"pre"``: where each layer's LayerNorm sits.
    depth, width, tokens, batch : int
        As passed to :func:`init_profile`.
    stream_sq : ndarray, shape (seeds, depth + 1)
        Mean over tokens of :math:`\lVert x_l \rVert^2 / d` (d the width), for l = 0 (the input) to the depth.
    grad_norm : dict of str to ndarray, each (seeds, depth)
        The Frobenius norm of each weight's loss gradient, per layer (bottom first).
    stream_grad : ndarray, shape (seeds, depth + 1)
        The Frobenius norm of dL/dx_l over the batch, for l = 0 .. depth.
    """

    placement: str
    depth: int
    width: int
    tokens: int
    batch: int
    stream_sq: np.ndarray
    grad_norm: dict
    stream_grad: np.ndarray

    def mean(self, weight: str = "W2") -> np.ndarray:
        """Per-layer gradient norm of `weight`, averaged over the seeds."""
        return self.grad_norm[weight].mean(axis=0)

    def spread(self, weight: str = "W2") -> np.ndarray:
        """Per-layer standard deviation of `weight`'s gradient norm across the seeds."""
        return self.grad_norm[weight].std(axis=0)


def init_profile(depth: int, width: int, placement: str, *, seeds: int = 8, tokens: int = 8, batch: int = 4,
                 batches: int = 1, ffn_width: int | None = None, first_seed: int = 0) -> InitProfile:
    """Measure one stack at initialization over several seeds (chapter "Pre-norm vs post-norm").

    For each seed: fresh Xavier weights, then a fresh batch of inputs and
    targets with N(0, 1) entries, one forward pass and one backward pass of
    :func:`mse_loss`. With ``batches=1`` the gradient norms are those of this
    one batch's gradient (the norm is taken per seed, then the seeds are
    summarized), the quantity Xiong et al.'s Theorem 1 bounds. With
    ``batches > 1`` the gradient is averaged over that many batches (same
    weights) before its norm is taken, and the stream statistics are averaged
    over the batches.

    Parameters
    ----------
    depth : int
        L, the number of layers.
    width : int
        d, the width of the residual stream.
    placement : {"post", "pre"}
    seeds : int, default 8
        Independent repetitions (weights and data).
    tokens : int, default 8
        Sequence length.
    batch : int, default 4
        Number of sequences per batch.
    batches : int, default 1
        Batches whose gradients are averaged before the norm is taken.
    ffn_width : int, optional
        Default: `width`.
    first_seed : int, default 0
        Seed s uses ``np.random.default_rng(first_seed + s)``.

    Returns
    -------
    InitProfile
    """
    placement = check_placement(placement)
    depth, width = check_count(depth, "depth"), check_count(width, "width")
    seeds, tokens, batch = check_count(seeds, "seeds"), check_count(tokens, "tokens"), check_count(batch, "batch")
    batches = check_count(batches, "batches")
    names = ATTENTION_WEIGHTS + FFN_WEIGHTS
    stream_sq, stream_grad = np.zeros((seeds, depth + 1)), np.zeros((seeds, depth + 1))
    grad_norm = {name: np.empty((seeds, depth)) for name in names}
    for s in range(seeds):
        rng = np.random.default_rng(first_seed + s)
        weights = [init_layer(rng, width, ffn_width) for _ in range(depth)]
        total = [{name: np.zeros_like(w[name]) for name in names} for w in weights]
        for _ in range(batches):
            states, stream_grads, grads = _one_batch(rng, weights, placement, batch, tokens)
            stream_sq[s] += [np.mean(np.sum(h * h, axis=-1)) / width / batches for h in states]
            stream_grad[s] += [np.linalg.norm(g) / batches for g in stream_grads]
            for layer_total, layer_grads in zip(total, grads):
                for name in names:
                    layer_total[name] += layer_grads[name] / batches
        for name in names:
            grad_norm[name][s] = [np.linalg.norm(g[name]) for g in total]
    return InitProfile(placement, depth, width, tokens, batch, stream_sq, grad_norm, stream_grad)


def _one_batch(rng: np.random.Generator, weights: list[dict], placement: str, batch: int, tokens: int):
    """Draw inputs and targets with N(0, 1) entries; return the stream states, their gradients and the weight gradients."""
    width = weights[0]["Wq"].shape[0]
    x = rng.normal(size=(batch, tokens, width))
    target = rng.normal(size=(batch, tokens, width))
    out, states, caches = stack_forward(x, weights, placement)
    _, dout = mse_loss(out, target)
    stream_grads, grads = stack_backward(dout, states, caches, weights, placement)
    return states, stream_grads, grads


def depth_sweep(depths, width: int, placement: str, *, seeds: int = 8, weight: str = "W2", **kwargs) -> np.ndarray:
    """One batch's gradient norm of the last layer's `weight`, per seed and depth (chapter "Pre-norm vs post-norm").

    Returns
    -------
    ndarray of shape (seeds, len(depths))
        Column j is the top layer of a ``depths[j]``-layer stack; other
        keyword arguments go to :func:`init_profile`.
    """
    return np.column_stack([init_profile(depth, width, placement, seeds=seeds, **kwargs).grad_norm[weight][:, -1] for depth in depths])


def profile_grid(depths, widths, *, seeds: int = 4, **kwargs) -> dict:
    """:func:`init_profile` for every placement, depth and width: what the explorer of chapter "Pre-norm vs post-norm" shows.

    Returns
    -------
    dict
        ``(placement, depth, width) -> InitProfile``.
    """
    return {(placement, depth, width): init_profile(depth, width, placement, seeds=seeds, **kwargs)
            for placement in PLACEMENTS for depth in depths for width in widths}
