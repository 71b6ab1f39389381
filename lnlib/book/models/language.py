r"""A character-level language model of the standard library's docstrings, trained under each
placement.

The chapters "Pre-norm vs post-norm" and "LayerNorm after 2020" measure the placements of
:mod:`lnlib.book.models.placements` at initialization and on a toy task; this module trains them
on real text every Python ships: the docstrings of twenty standard-library modules
(:data:`CORPUS_MODULES`), committed as ``lnlib/book/data/stdlib_docstrings.json`` with the
Python version they come from, their SHA-256 and their licence (the Python Software Foundation
License), so every Python trains on the same characters.

The model embeds each character and its position, runs a causal stack of
:func:`lnlib.book.models.placements.placement_forward` whose norms carry learned γ and β
(:func:`lnlib.book.models.transformer.norm_forward`), ends with a final norm where the placement
has one, and predicts the next character with a linear head and a softmax, trained with Adam
(:func:`lnlib.book.models.training.adam_update`) on the cross-entropy in nats per character.
:data:`TRAINED_PLACEMENTS` names the nine variants the sweep trains: the placements of
:data:`lnlib.book.models.placements.PLACEMENTS` that the papers train, DyT (Zhu et al., 2025: every
LayerNorm of a Pre-LN stack replaced by :math:`\gamma\tanh(\alpha x)+\beta`), Pre-LN with
QK-norm, and today's norm: Pre-LN with every norm an RMSNorm with a learned γ and no β, with and
without QK-norm.

``make results-placements`` runs :func:`placement_sweep` (:data:`SWEEP_SETTINGS`) and
:func:`what_layernorm_sees` into :data:`PLACEMENT_RESULTS`; the chapters "Why normalize?",
"Scale γ and shift β" and "LayerNorm after 2020" read that file and never train.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib
import inspect
import json
import os
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from ...validation import check_count
from ..tools import prose
from .dyt import ALPHA_INIT
from .placements import (
    init_weights,
    placement_backward,
    placement_forward,
    sublayer_rules,
)
from .training import adam_moments, adam_update, machine, warmup_rate
from .transformer import norm_backward, norm_forward, softmax, weight_gradient

__all__ = [
    "CORPUS",
    "CORPUS_MODULES",
    "NORM_PARAMETERS",
    "PLACEMENT_LABELS",
    "PLACEMENT_RESULTS",
    "SWEEP_SETTINGS",
    "TRAINED_PLACEMENTS",
    "TrainedRun",
    "char_corpus",
    "corpus_record",
    "cross_entropy",
    "decay_weights",
    "init_model",
    "load_results",
    "model_backward",
    "model_forward",
    "norm_inputs",
    "norm_name",
    "outlier_norm",
    "sees_findings",
    "trained_findings",
    "placement_findings",
    "placement_setup",
    "placement_sweep",
    "stdlib_docstrings",
    "sweep_runs",
    "rms_gap",
    "text_batch",
    "train_model",
    "unigram_loss",
    "what_layernorm_sees",
]

DATA = Path(__file__).parents[1] / "data"

#: The committed corpus (:func:`corpus_record`) and the results of ``make results-placements``.
CORPUS = DATA / "stdlib_docstrings.json"
PLACEMENT_RESULTS = DATA / "placement_sweep.json"

#: The standard-library modules whose docstrings make the corpus (:func:`stdlib_docstrings`).
CORPUS_MODULES = (
    "textwrap", "difflib", "heapq", "bisect", "functools", "collections", "json", "random",
    "statistics", "string", "fractions", "shlex", "argparse", "pathlib", "dataclasses", "enum",
    "contextlib", "itertools", "operator", "re",
)  # fmt: skip

#: The variants the sweep trains: name -> (its base placement of
#: :mod:`~lnlib.book.models.placements`, QK-norm, DyT, the norm: "layer" or "rms"). QK-norm is the
#: same parameter-free LayerNorm of q and k in every variant that has it.
TRAINED_PLACEMENTS = {
    "post": ("post", False, False, "layer"),
    "pre": ("pre", False, False, "layer"),
    "peri": ("peri", False, False, "layer"),
    "mixln": ("mixln", False, False, "layer"),
    "deepnorm": ("deepnorm", False, False, "layer"),
    "dyt": ("pre", False, True, "layer"),
    "pre_qk": ("pre", True, False, "layer"),
    "pre_rms": ("pre", False, False, "rms"),
    "pre_rms_qk": ("pre", True, False, "rms"),
}

#: How the chapters and figures name each trained placement.
PLACEMENT_LABELS = {
    "post": "Post-LN",
    "pre": "Pre-LN",
    "peri": "Peri-LN",
    "mixln": "Mix-LN",
    "deepnorm": "DeepNorm",
    "dyt": "DyT",
    "pre_qk": "Pre-LN + QK-norm",
    "pre_rms": "Pre-RMSNorm",
    "pre_rms_qk": "Pre-RMS + QK-norm",  # the stability map's panel is narrow
}

#: The sweep of chapter "LayerNorm after 2020": 5 peak rates a factor of about 3 apart, two depths,
#: with and without warm-up, 3 seeds, short runs of a small model.
SWEEP_SETTINGS = {
    "rates": (1e-3, 3e-3, 1e-2, 3e-2, 1e-1),
    "depths": (2, 6),
    "seeds": (0, 1, 2),
    "warmup": 25,
    "steps": 120,
    "width": 32,
    "tokens": 16,
    "batch": 16,
}

#: The longer Pre-LN run whose activations, γ and β chapters "Why normalize?" and "Scale γ and shift
#: β" show.
SEES_SETTINGS = {
    "placement": "pre",
    "lr": 1e-2,
    "warmup": 100,
    "steps": 1000,
    "depth": 6,
    "seed": 0,
}

_NO_FINAL_NORM = ("post", "deepnorm")
_NORM_PLACES = {"post": ("out",), "pre": ("in",), "peri": ("in", "out"), "olmo2": ("out",)}


# --- the text ---------------------------------------------------------------------------------


def stdlib_docstrings(modules=CORPUS_MODULES) -> str:
    """The docstrings of `modules` and of their public functions and classes, as the running Python
    has them.

    Each module's own docstring, then those of its public names (its ``__all__``, else every name
    not starting with an underscore) in sorted order, separated by blank lines. The text differs
    between Python versions, which is why the book trains on the committed copy
    (:func:`char_corpus`).
    """
    parts = []
    for name in modules:
        module = importlib.import_module(name)
        parts.append(inspect.getdoc(module) or "")
        public = getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")])
        for attr in sorted(public):
            obj = getattr(module, attr, None)
            doc = inspect.getdoc(obj) if obj is not None else None
            if doc and (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj)):
                parts.append(doc)
    return "\n\n".join(parts)


def corpus_record(text: str) -> dict:
    """The committed corpus: the text with its source, Python version, licence and SHA-256."""
    return {
        "source": "inspect.getdoc of these standard-library modules and their public functions "
        "and classes (lnlib.book.models.language.stdlib_docstrings)",
        "modules": list(CORPUS_MODULES),
        "python": ".".join(map(str, sys.version_info[:3])),
        "licence": "Python Software Foundation License Version 2 (the docstrings are part of "
        "CPython's standard library, Copyright (c) 2001 Python Software Foundation)",
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "text": text,
    }


@lru_cache(maxsize=1)
def char_corpus(path=CORPUS) -> tuple[np.ndarray, str, str]:
    """The committed corpus as character ids: ``(ids, alphabet, sha256)``, after checking its hash.

    The alphabet is the sorted set of its characters; ``ids[i]`` indexes it.
    """
    record = json.loads(Path(path).read_text())
    text = record["text"]
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest != record["sha256"]:
        raise ValueError(f"{path} changed: its text hashes to {digest}, not {record['sha256']}.")
    alphabet = "".join(sorted(set(text)))
    lookup = {c: i for i, c in enumerate(alphabet)}
    return np.array([lookup[c] for c in text], dtype=np.int64), alphabet, digest


def text_batch(rng, ids: np.ndarray, batch: int, tokens: int, *, held_out: bool = False):
    """`batch` random windows of `tokens` characters and the characters that follow each one.

    The last tenth of the text is held out: training windows come from the first nine tenths,
    ``held_out=True`` windows from the rest.

    Returns
    -------
    inputs, targets : ndarray of int, shape (batch, tokens)
        ``targets[:, t]`` is the character after ``inputs[:, t]``.
    """
    split = int(0.9 * ids.size)
    low, high = (split, ids.size) if held_out else (0, split)
    starts = rng.integers(low, high - tokens - 1, size=batch)
    windows = ids[starts[:, None] + np.arange(tokens + 1)]
    return windows[:, :-1], windows[:, 1:]


def unigram_loss() -> float:
    """The held-out loss of predicting each character from the training text's character frequencies
    alone (add-one smoothed).

    The floor a model reaches without using any context: the stability map's dotted line
    (chapter "LayerNorm after 2020").
    """
    ids, alphabet, _ = char_corpus()
    split = int(0.9 * ids.size)
    counts = np.bincount(ids[:split], minlength=len(alphabet)) + 1.0
    return float(-np.mean(np.log(counts / counts.sum())[ids[split:]]))


# --- the model --------------------------------------------------------------------------------


def placement_setup(placement: str) -> tuple[str, bool, bool, str]:
    """``(base, qk_norm, dyt, norm)`` of a placement in :data:`TRAINED_PLACEMENTS`."""
    if placement not in TRAINED_PLACEMENTS:
        raise ValueError(
            f"placement must be one of {tuple(TRAINED_PLACEMENTS)}; got {placement!r}."
        )
    return TRAINED_PLACEMENTS[placement]


def _norm_params(width: int, dyt: bool, norm: str) -> dict[str, np.ndarray]:
    params = {"gamma": np.ones(width)}
    if norm == "layer":
        params["beta"] = np.zeros(width)
    if dyt:
        params["alpha"] = np.array(ALPHA_INIT)
    return params


def init_model(
    placement: str, depth: int, width: int, vocab: int, tokens: int, *, seed: int = 0
) -> list[dict[str, np.ndarray]]:
    """A model's parameters: one dict per layer, then one dict for the embeddings, final norm and
    head.

    Layer weights are :func:`lnlib.book.models.placements.init_weights` (Xavier-normal, DeepNorm's β
    where it applies); every norm gets γ = 1 and β = 0 (an RMSNorm no β, DyT also α = 0.5), named
    by sub-layer and side (``attn_in_gamma``, ``ffn_out_beta``, ...). The last dict holds
    ``embed`` (vocab x width) and ``pos`` (tokens x width), both N(0, 1/2) so that their sum has
    unit variance, ``head`` (width x vocab, Xavier-normal) and the final norm's ``final_gamma``,
    ``final_beta`` where the base placement has one.
    """
    base, _, dyt, norm = placement_setup(placement)
    depth, width = check_count(depth, "depth"), check_count(width, "width")
    rng = np.random.default_rng(seed)
    layers = init_weights(base, depth, width, rng=rng)
    for w, rule in zip(layers, sublayer_rules(base, depth)):
        for sub in ("attn", "ffn"):
            for side in _NORM_PLACES[rule.kind]:
                for key, value in _norm_params(width, dyt, norm).items():
                    w[f"{sub}_{side}_{key}"] = value
    top = {
        "embed": rng.normal(0.0, np.sqrt(0.5), size=(vocab, width)),
        "pos": rng.normal(0.0, np.sqrt(0.5), size=(tokens, width)),
        "head": rng.normal(0.0, np.sqrt(2.0 / (width + vocab)), size=(width, vocab)),
    }
    if base not in _NO_FINAL_NORM:
        top.update({f"final_{k}": v for k, v in _norm_params(width, dyt, norm).items()})
    return [*layers, top]


def model_forward(inputs: np.ndarray, model: list[dict], placement: str):
    """The logits of the next character at every position, and what :func:`model_backward` needs.

    Returns
    -------
    logits : ndarray, shape (batch, tokens, vocab)
    cache : tuple
    """
    base, qk_norm, _, norm = placement_setup(placement)
    *layers, top = model
    x = top["embed"][inputs] + top["pos"][: inputs.shape[1]]
    out, states, caches = placement_forward(
        x, layers, base, qk_norm=qk_norm, causal=True, final_norm=False, norm=norm
    )
    h, saved = norm_forward(out, top, "final", norm) if "final_gamma" in top else (out, None)
    return h @ top["head"], (inputs, h, saved, out, states, caches)


def model_backward(
    dlogits: np.ndarray, cache: tuple, model: list[dict], placement: str
) -> list[dict]:
    """The gradients of every parameter of :func:`model_forward`, in the model's structure."""
    base, _, _, norm = placement_setup(placement)
    inputs, h, saved, out, states, caches = cache
    *layers, top = model
    top_grads = {"head": weight_gradient(h, dlogits)}
    dout = dlogits @ top["head"].T
    if saved is not None:
        dout, final_grads = norm_backward(dout, saved, top, "final", norm)
        top_grads.update(final_grads)
    stream_grads, grads = placement_backward(
        dout, states, caches, layers, base, final_norm=False, norm=norm
    )
    dx = stream_grads[0]
    top_grads["embed"] = np.zeros_like(top["embed"])
    np.add.at(top_grads["embed"], inputs, dx)
    top_grads["pos"] = np.zeros_like(top["pos"])
    top_grads["pos"][: inputs.shape[1]] = dx.sum(axis=0)
    return [*grads, top_grads]


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy in nats per character, and its gradient with respect to the logits."""
    p = softmax(logits)
    flat = p.reshape(-1, p.shape[-1])
    rows = np.arange(flat.shape[0])
    loss = -float(np.mean(np.log(flat[rows, targets.ravel()])))
    flat = flat.copy()
    flat[rows, targets.ravel()] -= 1.0
    return loss, flat.reshape(p.shape) / rows.size


# --- training ---------------------------------------------------------------------------------


@dataclass
class TrainedRun:
    """One training run (chapter "LayerNorm after 2020").

    Attributes
    ----------
    losses : ndarray, shape (steps,)
        Training loss before each update (NaN after a divergence).
    final : float
        Held-out loss at the end, nats per character (NaN if diverged).
    diverged : bool
        A loss or a parameter stopped being finite, or the held-out loss ended above the loss
        of guessing uniformly, ln(vocabulary).
    model : list of dict
        The parameters at the end.
    """

    losses: np.ndarray
    final: float
    diverged: bool
    model: list


def held_out_loss(model: list[dict], placement: str, ids: np.ndarray, tokens: int) -> float:
    """The mean loss over 8 fixed batches of 32 windows from the held-out text (the same for every
    run)."""
    rng = np.random.default_rng(2020)
    losses = []
    for _ in range(8):
        inputs, targets = text_batch(rng, ids, 32, tokens, held_out=True)
        losses.append(cross_entropy(model_forward(inputs, model, placement)[0], targets)[0])
    return float(np.mean(losses))


def train_model(
    placement: str,
    *,
    lr: float,
    warmup: int = 0,
    steps: int = 200,
    depth: int = 2,
    width: int = 32,
    tokens: int = 32,
    batch: int = 16,
    seed: int = 0,
    weight_decay: float = 0.0,
    decay_norms: bool = False,
) -> TrainedRun:
    """Train one placement with Adam on the corpus, with `warmup` steps of linear warm-up (chapter
    "LayerNorm after 2020").

    `seed` seeds both the weights and the batches, so runs that differ only in placement,
    rate or schedule start from the same draws and see the same text. A run whose loss or
    parameters stop being finite stops there and counts as diverged. A `weight_decay` above 0
    makes it AdamW (:func:`decay_weights` before each Adam step), applied to the norms' γ and β
    too only with `decay_norms` (chapter "Scale γ and shift β").
    """
    ids, alphabet, _ = char_corpus()
    model = init_model(placement, depth, width, len(alphabet), tokens, seed=seed)
    moments, rng = adam_moments(model), np.random.default_rng(seed)
    losses = np.full(check_count(steps, "steps"), np.nan)
    with np.errstate(all="ignore"):
        for step in range(1, steps + 1):
            inputs, targets = text_batch(rng, ids, batch, tokens)
            logits, cache = model_forward(inputs, model, placement)
            loss, dlogits = cross_entropy(logits, targets)
            if not np.isfinite(loss):
                break
            losses[step - 1] = loss
            grads = model_backward(dlogits, cache, model, placement)
            if weight_decay:
                decay_weights(model, warmup_rate(step, lr, warmup) * weight_decay, decay_norms)
            adam_update(model, grads, moments, step, warmup_rate(step, lr, warmup))
            if not all(np.all(np.isfinite(v)) for w in model for v in w.values()):
                break
        finite = bool(np.all(np.isfinite(losses)))
        final = held_out_loss(model, placement, ids, tokens) if finite else float("nan")
    diverged = bool(not np.isfinite(final) or final > np.log(len(alphabet)))
    return TrainedRun(losses, final, diverged, model)


#: The endings of the norms' parameter names (:func:`init_model`): γ and β
NORM_PARAMETERS = ("_gamma", "_beta")


def decay_weights(model: list[dict], factor: float, norms: bool) -> None:
    """Decoupled weight decay, in place: every parameter times ``1 - factor`` (chapter "Scale γ and
    shift β").

    `factor` is the step's rate times the decay coefficient, as PyTorch's AdamW multiplies each
    parameter by ``1 - lr * weight_decay`` before its Adam step. The norms' γ and β
    (:data:`NORM_PARAMETERS`) are decayed only if `norms` is true; DyT's α never.
    """
    for w in model:
        for key, value in w.items():
            if (key.endswith(NORM_PARAMETERS) and not norms) or key.endswith("_alpha"):
                continue
            value *= 1.0 - factor


def _run(job: tuple) -> tuple:
    placement, depth, lr, warmup, seed, kwargs = job
    run = train_model(placement, lr=lr, warmup=warmup, depth=depth, seed=seed, **kwargs)
    last = run.losses[-10:]
    return run.final, run.diverged, float(last.mean()) if np.all(np.isfinite(last)) else np.nan


def placement_sweep(
    rates,
    depths,
    seeds,
    *,
    warmup: int,
    steps: int,
    width: int = 32,
    tokens: int = 32,
    batch: int = 16,
    placements=tuple(TRAINED_PLACEMENTS),
    workers: int = 1,
) -> dict:
    """Train every placement at every depth and peak rate, with and without warm-up, once per seed.

    Returns
    -------
    dict
        ``final`` (held-out loss), ``diverged`` (bool) and ``train_last`` (mean training loss over
        the last 10 steps), each a nested list indexed [placement][depth][rate][schedule][seed]
        (schedule 0: no warm-up, 1: warm-up), and the settings.
    """
    workers = check_count(workers, "workers")
    kwargs = {"steps": steps, "width": width, "tokens": tokens, "batch": batch}
    jobs = [
        (p, d, float(lr), w, s, kwargs)
        for p in placements
        for d in depths
        for lr in rates
        for w in (0, warmup)
        for s in seeds
    ]
    with (
        ProcessPoolExecutor(workers, mp_context=get_context("fork"))
        if workers > 1
        else nullcontext() as pool
    ):
        runs = list(pool.map(_run, jobs, chunksize=1) if pool else map(_run, jobs))
    shape = (len(placements), len(depths), len(rates), 2, len(seeds))
    final, diverged, last = (np.array([r[i] for r in runs]).reshape(shape) for i in range(3))
    return {
        "placements": list(placements),
        "depths": list(depths),
        "rates": [float(r) for r in rates],
        "seeds": list(seeds),
        "warmup": warmup,
        "settings": kwargs,
        "final": np.where(np.isfinite(final), final, None).tolist(),
        "diverged": diverged.astype(bool).tolist(),
        "train_last": np.where(np.isfinite(last), last, None).tolist(),
    }


# --- what LayerNorm sees -----------------------------------------------------------------------


def norm_inputs(
    inputs: np.ndarray, model: list[dict], placement: str
) -> list[tuple[str, np.ndarray]]:
    """What every norm of a Pre-LN-style model receives: ``(label, input)`` bottom to top.

    A pre sub-layer's norm reads the residual stream entering it, so these are the stream
    before each attention (``L1 attn``) and each FFN (``L1 ffn``), and ``final`` (the stream
    at the top).
    """
    base, qk_norm, _, norm = placement_setup(placement)
    if base != "pre":
        raise ValueError(f"norm_inputs reads Pre-LN-style models; got {placement!r}.")
    *layers, top = model
    x = top["embed"][inputs] + top["pos"][: inputs.shape[1]]
    _, states, caches = placement_forward(
        x, layers, base, qk_norm=qk_norm, causal=True, final_norm=False, norm=norm
    )
    seen = []
    for ell, (state, w, (attn_cache, _)) in enumerate(zip(states, layers, caches), start=1):
        middle = state + attn_cache[1][7] @ w["Wo"]  # the stream after the attention sub-layer
        seen += [(f"L{ell} attn", state), (f"L{ell} ffn", middle)]
    return [*seen, ("final", states[-1])]


def _token_stats(h: np.ndarray) -> dict:
    mean, sd = h.mean(axis=-1).ravel(), h.std(axis=-1).ravel()
    feature_rms = np.sqrt(np.mean(h * h, axis=(0, 1)))
    q = (5, 50, 95)
    return {
        "mean_quantiles": np.percentile(mean, q).tolist(),
        "sd_quantiles": np.percentile(sd, q).tolist(),
        "feature_rms": feature_rms.tolist(),
    }


def what_layernorm_sees(
    placement: str = "pre",
    *,
    lr: float,
    warmup: int,
    steps: int,
    depth: int,
    seed: int = 0,
    width: int = 32,
    tokens: int = 32,
    batch: int = 16,
) -> dict:
    """What the norms of one model receive before and after training, and the γ and β it learned
    (chapters "Why normalize?", "Scale γ and shift β").

    On 4 fixed held-out batches of 32 windows: for each norm (:func:`norm_inputs`), the 5th,
    50th and 95th percentiles over tokens of each token's mean and standard deviation, and each
    feature's root-mean-square over tokens (an outlier feature stands out there), in the untrained
    model and the trained one; and every norm's learned γ and β.
    """
    ids, alphabet, _ = char_corpus()
    untrained = init_model(placement, depth, width, len(alphabet), tokens, seed=seed)
    run = train_model(
        placement, lr=lr, warmup=warmup, steps=steps, depth=depth, width=width,
        tokens=tokens, batch=batch, seed=seed,
    )  # fmt: skip
    rng = np.random.default_rng(2021)
    inputs = np.concatenate([text_batch(rng, ids, 32, tokens, held_out=True)[0] for _ in range(4)])
    record = {"placement": placement, "lr": lr, "warmup": warmup, "steps": steps, "depth": depth,
              "seed": seed, "final": run.final, "diverged": run.diverged}  # fmt: skip
    for label, model in (("untrained", untrained), ("trained", run.model)):
        seen = norm_inputs(inputs, model, placement)
        record[label] = {"norms": [n for n, _ in seen], **_stats_by_norm(seen)}
    *layers, top = run.model
    record["gamma"] = [w[f"{sub}_in_gamma"].tolist() for w in layers for sub in ("attn", "ffn")]
    record["beta"] = [w[f"{sub}_in_beta"].tolist() for w in layers for sub in ("attn", "ffn")]
    record["gamma"].append(top["final_gamma"].tolist())
    record["beta"].append(top["final_beta"].tolist())
    return record


def outlier_norm(sees: dict) -> tuple[int, int, float]:
    """The norm input whose largest per-feature RMS stands out most in the trained model (chapter
    "Scale γ and shift β").

    Returns
    -------
    (norm index, feature index, ratio of that feature's RMS to the median feature's RMS)
    """
    rms = np.array(sees["trained"]["feature_rms"])
    ratios = rms.max(axis=1) / np.median(rms, axis=1)
    k = int(np.argmax(ratios))
    return k, int(np.argmax(rms[k])), float(ratios[k])


def norm_name(label: str) -> str:
    """A norm's label in :func:`norm_inputs` (``L3 attn``, ``final``) in words (chapters "Why
    normalize?", "Scale γ and shift β")."""
    if label == "final":
        return "the final norm"
    layer, sub = label.split()
    return f"layer {layer[1:]}'s {'attention' if sub == 'attn' else 'FFN'} norm"


def about(value: float) -> prose.ProseNumber:
    """`value` to one significant digit: what a single training run supports on any CPU (chapters
    "Why normalize?", "Scale γ and shift β")."""
    return prose.number(float(f"{value:.1g}"), "g")


def sees_findings(sees: dict) -> dict:
    """What chapters "Why normalize?" and "Scale γ and shift β" say about the trained model, by glue
    key.

    One run, so one significant digit (:func:`about`) or one decimal for γ and β:
    ``tests/book/test_training_placements.py`` retrains it under another BLAS kernel and
    checks every text is unchanged.
    """
    sd = {k: np.array(sees[k]["sd_quantiles"])[:, 1] for k in ("untrained", "trained")}
    gamma, beta = np.array(sees["gamma"]), np.array(sees["beta"])
    k, feature, ratio = outlier_norm(sees)
    rms_u = np.array(sees["untrained"]["feature_rms"][k])
    norms = sees["trained"]["norms"]
    return {
        "sees_steps": prose.number(sees["steps"]),
        "sees_depth": prose.number(sees["depth"]),
        "sees_loss": about(sees["final"]),
        "sees_sd_bottom": about(sd["trained"][0]),
        "sees_sd_top": about(sd["trained"][-1]),
        "sees_sd_top_untrained": about(sd["untrained"][-1]),
        "sees_gamma_attn": about(float(np.median(gamma[0:-1:2]))),
        "sees_gamma_ffn": about(float(np.median(gamma[1:-1:2]))),
        "sees_gamma_low": prose.number(float(gamma.min()), ".1f"),
        "sees_gamma_high": prose.number(float(gamma.max()), ".1f"),
        "sees_beta_low": prose.number(float(beta.min()), ".1f"),
        "sees_beta_high": prose.number(float(beta.max()), ".1f"),
        "sees_outlier_norm": norm_name(norms[k]),
        "sees_outlier_feature": prose.number(feature + 1),
        "sees_outlier_ratio": about(ratio),
        "sees_outlier_ratio_untrained": about(float(rms_u.max() / np.median(rms_u))),
    }


def trained_findings(trained: dict) -> dict:
    """The glue keys of the trained model for chapters "Why normalize?" and "Scale γ and shift β":
    :func:`sees_findings` of ``trained["sees"]``, plus ``sees_vocab`` (the characters the model
    predicts among) and ``sees_uniform`` (the loss of a uniform guess among them, ln of that
    count, in nats)."""
    alphabet = trained["corpus"]["alphabet"]
    return {
        **sees_findings(trained["sees"]),
        "sees_uniform": prose.number(float(np.log(alphabet)), ".1f"),
        "sees_vocab": prose.number(alphabet),
    }


def _stats_by_norm(seen: list) -> dict:
    stats = [_token_stats(h) for _, h in seen]
    return {key: [s[key] for s in stats] for key in stats[0]}


# --- the results file ---------------------------------------------------------------------------


def load_results(path=PLACEMENT_RESULTS) -> dict:
    """The record ``make results-placements`` wrote (:func:`main`)."""
    return json.loads(Path(path).read_text())


def main(argv=None) -> None:
    """``python -m lnlib.book.models.language [OUT]``: the placement sweep and the model the
    chapters read, into OUT."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("out", nargs="?", default=str(PLACEMENT_RESULTS))
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    _, alphabet, digest = char_corpus()
    load_before, start = os.getloadavg(), time.perf_counter()
    sweep = placement_sweep(**SWEEP_SETTINGS, workers=args.workers)
    seconds_sweep = time.perf_counter() - start
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN) if args.workers > 1 else None
    cpu_sweep = cpu.ru_utime + cpu.ru_stime if cpu else time.process_time()
    sees = what_layernorm_sees(**SEES_SETTINGS)
    record = {
        "provenance": {
            "command": "make results-placements",
            "date": datetime.date.today().isoformat(),
            **machine(),
            "workers": args.workers,
            "cpus": os.cpu_count(),
            "load_average_before": [round(v, 2) for v in load_before],
            "load_average_after": [round(v, 2) for v in os.getloadavg()],
            "seconds_sweep": round(seconds_sweep, 1),
            "cpu_seconds_sweep": round(cpu_sweep, 1),
            "seconds_total": round(time.perf_counter() - start, 1),
        },
        "corpus": {
            "file": CORPUS.name,
            "sha256": digest,
            "characters": int(char_corpus()[0].size),
            "alphabet": len(alphabet),
        },
        "sweep": sweep,
        "sees": sees,
    }
    Path(args.out).write_text(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()


def sweep_runs(sweep: dict, placement: str, depth: int, rate: float | None = None, warmed=None):
    """The held-out losses of one placement and depth (NaN where a run diverged), optionally of one
    rate and schedule.

    Shape (rates, 2, seeds) without `rate` and `warmed`; (seeds,) with both.
    """
    final = np.array(sweep["final"], dtype=float)
    final[np.array(sweep["diverged"], dtype=bool)] = np.nan
    runs = final[sweep["placements"].index(placement), sweep["depths"].index(depth)]
    if rate is not None:
        runs = runs[sweep["rates"].index(rate)]
        if warmed is not None:
            runs = runs[int(warmed)]
    return runs


def placement_findings(results: dict) -> dict:
    """What chapter "LayerNorm after 2020" says about the stability map, by glue key.

    Final losses of a setting are means ± sd over its seeds at the precision the seeds support
    (:func:`lnlib.book.tools.prose.mean_sd`); ranges over many runs are given to one decimal;
    the floor (:func:`unigram_loss`) is computed, not trained.
    ``tests/book/test_training_placements.py`` checks the claims these numbers support in the stored
    sweep.
    """
    sweep, settings = results["sweep"], results["sweep"]["settings"]
    shallow, deep = sweep["depths"]

    def ms(placement, depth, rate, warmed):
        return prose.mean_sd(sweep_runs(sweep, placement, depth, rate, warmed))

    post_deep = sweep_runs(sweep, "post", deep)
    provenance = results["provenance"]
    return {
        "pl_runs": prose.number(int(np.size(sweep["final"]))),
        "pl_seeds": prose.number(len(sweep["seeds"])),
        "pl_steps": prose.number(settings["steps"]),
        "pl_warmup": prose.number(sweep["warmup"]),
        "pl_shallow": prose.number(shallow),
        "pl_deep": prose.number(deep),
        "pl_cpu_minutes": prose.number(round(provenance["cpu_seconds_sweep"] / 60)),
        "pl_floor": prose.number(unigram_loss(), ".2f"),
        "pl_post_shallow_best": ms("post", shallow, 1e-2, False),
        "pl_post_deep_low": prose.number(float(np.nanmin(post_deep)), ".1f"),
        "pl_post_deep_high": prose.number(float(np.nanmax(post_deep)), ".1f"),
        "pl_pre_deep_best": ms("pre", deep, 1e-2, False),
        "pl_post_shallow_fast": ms("post", shallow, 3e-2, False),
        "pl_pre_shallow_fast": ms("pre", shallow, 3e-2, False),
        "pl_peri_deep_fastest": ms("peri", deep, 1e-1, False),
        "pl_pre_deep_fastest": ms("pre", deep, 1e-1, False),
        "pl_pre_deep_fastest_warm": ms("pre", deep, 1e-1, True),
        "pl_qk_deep_fastest_warm": ms("pre_qk", deep, 1e-1, True),
        "pl_dyt_deep_best": ms("dyt", deep, 1e-2, False),
        "pl_rms_deep_best_gap": prose.number(
            abs(
                float(np.mean(sweep_runs(sweep, "pre_rms", deep, 1e-2, False)))
                - float(np.mean(sweep_runs(sweep, "pre", deep, 1e-2, False)))
            ),
            ".2f",
        ),
        "pl_rms_gap": prose.number(rms_gap(sweep), ".2f"),
        "pl_rms_fastest_warm_gap": prose.number(
            abs(
                float(np.mean(sweep_runs(sweep, "pre_rms", deep, 1e-1, True)))
                - float(np.mean(sweep_runs(sweep, "pre", deep, 1e-1, True)))
            ),
            ".2f",
        ),
        "pl_rms_deep_fastest_warm": ms("pre_rms", deep, 1e-1, True),
        "pl_rms_qk_deep_fastest_warm": ms("pre_rms_qk", deep, 1e-1, True),
    }


def rms_gap(sweep: dict) -> float:
    """The largest gap, in nats per character, between the medians over the seeds of Pre-RMSNorm
    and Pre-LN, over every depth, rate and schedule of the sweep (chapter "LayerNorm after
    2020")."""
    return max(
        float(np.max(np.abs(
            np.median(sweep_runs(sweep, "pre_rms", d), axis=-1)
            - np.median(sweep_runs(sweep, "pre", d), axis=-1)
        )))
        for d in sweep["depths"]
    )  # fmt: skip
