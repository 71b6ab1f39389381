"""BatchNorm's training pitfalls, trained: a small MLP on scikit-learn's digits with no norm,
BatchNorm, LayerNorm or RMSNorm.

The chapter "LayerNorm and its family" reads the stored results (``make results-norm-lab``, into
:data:`NORM_LAB_RESULTS`). A 64 → 64 → 64 → 10 network, a norm after each hidden linear layer
and a ReLU after it, is trained with lnlib's own forward and backward passes (``batch_norm`` /
``batch_norm_backward``, ``layer_norm`` / ``layer_norm_backward``, ``rms_norm`` /
``rms_norm_backward``) and Adam, at several batch sizes and seeds. BatchNorm's models are then
evaluated four ways: with the running statistics (eval mode, momentum 0.1 as PyTorch's), and in
train mode with the statistics of the whole test set, of random pairs, and of batches that hold one
digit each. The running statistics are also followed during training, to see how far they lag.

The data are the 1797 8 × 8 images of ``sklearn.datasets.load_digits``, which ships inside
scikit-learn (no download); the tests run the same code on :func:`synthetic_task`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import time
from pathlib import Path

import numpy as np

from ...backward import layer_norm_backward
from ...forward import layer_norm
from ...norms import RunningStats, batch_norm, batch_norm_backward, rms_norm
from ...rms import rms_norm_backward
from ...validation import check_count
from .training import adam_moments, adam_update, machine

__all__ = [
    "LAB_SETTINGS",
    "NORMS",
    "NORM_LAB_RESULTS",
    "Net",
    "digits",
    "evaluate",
    "init_net",
    "lab",
    "load_lab",
    "synthetic_task",
    "train",
]

#: The members compared: no norm, BatchNorm, LayerNorm, RMSNorm.
NORMS = ("none", "batch", "layer", "rms")

#: The stored sweep: every norm at every batch size, a fixed number of Adam steps, 5 seeds;
#: BatchNorm also at a 10x higher rate at batch 32, with the running statistics followed at
#: `checkpoints`.
LAB_SETTINGS = {
    "batches": (2, 8, 32, 128, 256),
    "seeds": tuple(range(5)),
    "steps": 300,
    "rate": 3e-3,
    "high_rate": 3e-2,
    "lag_batch": 32,
    "checkpoints": (1, 2, 4, 8, 16, 32, 64, 128, 300),
    "width": 64,
    "momentum": 0.1,
}

#: Where ``make results-norm-lab`` stores the sweep with its provenance; the chapter reads it.
NORM_LAB_RESULTS = Path(__file__).parents[1] / "data" / "norm_lab.json"

#: Test examples per batch when BatchNorm is evaluated in train mode on batches of one digit each.
ONE_CLASS_BATCH = 25


def digits(split_seed: int = 0, test: int = 500) -> tuple[np.ndarray, ...]:
    """scikit-learn's digits, pixels scaled to [0, 1], split once into train and test (chapter
    "LayerNorm and its family").

    Returns
    -------
    x_train, y_train, x_test, y_test : ndarray
        (1797 - `test`, 64), labels 0-9, and the `test` held-out images.
    """
    # scikit-learn is installed by make results-norm-lab only, so it is imported here
    from sklearn.datasets import load_digits

    data = load_digits()
    order = np.random.default_rng(split_seed).permutation(len(data.target))
    x, y = data.data[order] / 16.0, data.target[order]
    return x[test:], y[test:], x[:test], y[:test]


def synthetic_task(n: int = 400, *, classes: int = 10, features: int = 64, seed: int = 0):
    """A stand-in for :func:`digits` for tests: `classes` Gaussian clusters in [0, 1]-ish pixels,
    split 3:1.

    Returns
    -------
    x_train, y_train, x_test, y_test : ndarray
    """
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 1, size=(classes, features))
    y = rng.integers(0, classes, size=n)
    x = centres[y] + rng.normal(0, 0.3, size=(n, features))
    cut = 3 * n // 4
    return x[:cut], y[:cut], x[cut:], y[cut:]


class Net:
    """The MLP's weights and BatchNorm's running statistics (chapter "LayerNorm and its family").

    ``layers`` is a list of dicts of arrays for :func:`~lnlib.book.models.training.adam_update`:
    ``w``, ``b`` for every linear layer, plus ``gamma``, ``beta`` after each hidden one when
    `norm` is not ``"none"``; ``running`` holds one :class:`~lnlib.norms.RunningStats` per hidden
    layer for BatchNorm.
    """

    def __init__(self, layers: list[dict], norm: str, momentum: float = 0.1):
        self.layers, self.norm = layers, _check_norm(norm)
        self.running = [RunningStats.start(w["w"].shape[1], momentum=momentum) for w in layers[:-1]]


def init_net(rng: np.random.Generator, sizes, norm: str, momentum: float = 0.1) -> Net:
    """He-initialized weights for layer `sizes` (e.g. (64, 64, 64, 10)); gamma 1, beta 0; the same
    weights for every `norm` given the same `rng` state."""
    layers = []
    for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layer = {
            "w": rng.normal(0, np.sqrt(2 / fan_in), size=(fan_in, fan_out)),
            "b": np.zeros(fan_out),
        }
        if norm != "none" and k < len(sizes) - 2:
            layer.update(gamma=np.ones(fan_out), beta=np.zeros(fan_out))
        layers.append(layer)
    return Net(layers, norm, momentum)


def _check_norm(norm: str) -> str:
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}; got {norm!r}.")
    return norm


def _normalize(net: Net, k: int, z: np.ndarray, mode: str) -> np.ndarray:
    """Hidden layer k's norm; `mode` is "train" (batch statistics, running ones updated), "batch"
    (batch statistics only) or "running"."""
    layer = net.layers[k]
    if net.norm == "none":
        return z
    if net.norm == "batch":
        running = net.running[k] if mode != "batch" else None
        return batch_norm(
            z, layer["gamma"], layer["beta"], running=running, training=mode != "running"
        )
    if net.norm == "layer":
        return layer_norm(z, layer["gamma"], layer["beta"])
    return rms_norm(z, layer["gamma"]) + layer["beta"]


def _norm_backward(net: Net, k: int, dn: np.ndarray, z: np.ndarray):
    """dz and the gradients of gamma and beta of hidden layer k's norm (training mode)."""
    layer = net.layers[k]
    if net.norm == "none":
        return dn, {}
    if net.norm == "batch":
        dz, dgamma, dbeta = batch_norm_backward(dn, z, layer["gamma"])
    elif net.norm == "layer":
        dz, dgamma, dbeta = layer_norm_backward(dn, z, layer["gamma"])
    else:
        (dz, dgamma), dbeta = rms_norm_backward(dn, z, layer["gamma"]), dn.sum(axis=0)
    return dz, {"gamma": dgamma, "beta": dbeta}


def forward(net: Net, x: np.ndarray, mode: str = "running") -> tuple[np.ndarray, list]:
    """Logits of `x`, and what the backward pass needs (chapter "LayerNorm and its family"); `mode`
    as in training ("train") or evaluation ("running", "batch")."""
    cache, h = [], x
    for k, layer in enumerate(net.layers[:-1]):
        z = h @ layer["w"] + layer["b"]
        n = _normalize(net, k, z, mode)
        cache.append((h, z, n))
        h = np.maximum(n, 0)
    cache.append((h, None, None))
    return h @ net.layers[-1]["w"] + net.layers[-1]["b"], cache


def _cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy and its gradient with respect to the logits."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(y))
    grad = np.exp(log_p)
    grad[rows, y] -= 1
    return float(-log_p[rows, y].mean()), grad / len(y)


def _backward(net: Net, cache: list, dlogits: np.ndarray) -> list[dict]:
    grads = [None] * len(net.layers)
    h = cache[-1][0]
    grads[-1] = {"w": h.T @ dlogits, "b": dlogits.sum(axis=0)}
    dh = dlogits @ net.layers[-1]["w"].T
    for k in range(len(net.layers) - 2, -1, -1):
        h, z, n = cache[k]
        dz, norm_grads = _norm_backward(net, k, dh * (n > 0), z)
        grads[k] = {"w": h.T @ dz, "b": dz.sum(axis=0), **norm_grads}
        dh = dz @ net.layers[k]["w"].T
    return grads


def evaluate(net: Net, x: np.ndarray, y: np.ndarray, mode: str = "running", batches=None) -> float:
    """Accuracy (%) on `x`, `y` (chapter "LayerNorm and its family").

    `mode` "running" uses BatchNorm's running statistics (eval mode); "batch" its train-mode
    batch statistics, computed over each batch of indices in `batches` (default: all of `x` at
    once). Norms other than BatchNorm give the same answer in every mode.
    """
    batches = [np.arange(len(y))] if batches is None else batches
    correct = sum(int((forward(net, x[b], mode)[0].argmax(axis=1) == y[b]).sum()) for b in batches)
    return 100.0 * correct / sum(len(b) for b in batches)


def eval_batches(y: np.ndarray, how: str, rng: np.random.Generator) -> list[np.ndarray]:
    """Index batches of a test set: "whole" (one batch), "pairs" (random pairs) or "one_class" (each
    batch one label, at most :data:`ONE_CLASS_BATCH` long)."""
    if how == "whole":
        return [np.arange(len(y))]
    if how == "pairs":
        order = rng.permutation(len(y))
        return [order[i : i + 2] for i in range(0, len(y) - 1, 2)]
    if how == "one_class":
        groups = [np.flatnonzero(y == c) for c in np.unique(y)]
        return [
            g[i : i + ONE_CLASS_BATCH]
            for g in groups
            for i in range(0, len(g), ONE_CLASS_BATCH)
            if len(g[i : i + ONE_CLASS_BATCH]) > 1
        ]
    raise ValueError(f"how must be 'whole', 'pairs' or 'one_class'; got {how!r}.")


def train(
    data,
    norm: str,
    *,
    batch: int,
    steps: int,
    rate: float,
    seed: int,
    checkpoints=(),
    width=64,
    momentum: float = 0.1,
) -> dict:
    """Train one MLP with Adam for `steps` batches of `batch` examples (chapter "LayerNorm and its
    family").

    Every run with the same seed starts from the same weights and sees the same batches (epochs
    reshuffled), whatever its norm. At each step count in `checkpoints` BatchNorm's test accuracy
    is recorded with the running statistics and with the whole test set's own statistics.

    Returns
    -------
    dict
        ``net`` (the trained :class:`Net`), ``losses`` (the training loss per step), and for
        BatchNorm ``running_curve`` and ``batch_curve`` (accuracy at each checkpoint, %).
    """
    x_train, y_train, x_test, y_test = data
    batch, steps = check_count(batch, "batch", 2), check_count(steps, "steps")
    rng = np.random.default_rng(seed)
    net = init_net(rng, (x_train.shape[1], width, width, int(y_train.max()) + 1), norm, momentum)
    moments, losses, curves = adam_moments(net.layers), [], {"running_curve": [], "batch_curve": []}
    order, cursor = rng.permutation(len(y_train)), 0
    for step in range(1, steps + 1):
        if cursor + batch > len(order):
            order, cursor = rng.permutation(len(y_train)), 0
        rows = order[cursor : cursor + batch]
        cursor += batch
        logits, cache = forward(net, x_train[rows], "train")
        loss, dlogits = _cross_entropy(logits, y_train[rows])
        adam_update(net.layers, _backward(net, cache, dlogits), moments, step, rate)
        losses.append(loss)
        if norm == "batch" and step in checkpoints:
            curves["running_curve"].append(evaluate(net, x_test, y_test, "running"))
            curves["batch_curve"].append(evaluate(net, x_test, y_test, "batch"))
    return {"net": net, "losses": np.array(losses), **(curves if norm == "batch" else {})}


def lab(data, settings: dict = LAB_SETTINGS) -> dict:
    """The sweep of :data:`LAB_SETTINGS` on `data` (chapter "LayerNorm and its family").

    Returns
    -------
    dict
        ``loss[norm]`` and ``accuracy[norm]``: shape (batches, seeds), the mean training loss of the
        last 10% of steps and the test accuracy (%, eval mode: BatchNorm's running statistics).
        ``batch_modes[how]`` for how in "whole", "pairs", "one_class": BatchNorm's test accuracy in
        train mode with those batches (:func:`eval_batches`), shape (batches, seeds).
        ``lag[rate]`` for rate "rate" and "high_rate": BatchNorm at ``lag_batch``, with ``running``
        and ``whole`` of shape (seeds, checkpoints), the test accuracy during training.
    """
    s = dict(settings)
    common = {"steps": s["steps"], "width": s["width"], "momentum": s["momentum"]}
    tail = max(1, s["steps"] // 10)
    out = {
        "loss": {n: [] for n in NORMS},
        "accuracy": {n: [] for n in NORMS},
        "batch_modes": {h: [] for h in ("whole", "pairs", "one_class")},
    }
    for batch in s["batches"]:
        for norm in NORMS:
            runs = [
                train(data, norm, batch=batch, rate=s["rate"], seed=seed, **common)
                for seed in s["seeds"]
            ]
            out["loss"][norm].append([float(r["losses"][-tail:].mean()) for r in runs])
            out["accuracy"][norm].append([evaluate(r["net"], *data[2:]) for r in runs])
            if norm == "batch":
                for how in out["batch_modes"]:
                    out["batch_modes"][how].append(
                        [
                            evaluate(
                                r["net"],
                                *data[2:],
                                "batch",
                                eval_batches(data[3], how, np.random.default_rng(seed)),
                            )
                            for seed, r in zip(s["seeds"], runs)
                        ]
                    )
    out["lag"] = {}
    for key in ("rate", "high_rate"):
        runs = [
            train(
                data,
                "batch",
                batch=s["lag_batch"],
                rate=s[key],
                seed=seed,
                checkpoints=s["checkpoints"],
                **common,
            )
            for seed in s["seeds"]
        ]
        out["lag"][key] = {
            "running": [r["running_curve"] for r in runs],
            "whole": [r["batch_curve"] for r in runs],
        }
    return out


def load_lab(path=NORM_LAB_RESULTS) -> dict:
    """The record ``make results-norm-lab`` wrote (:func:`main`): ``provenance``, ``settings`` and
    :func:`lab`'s results."""
    return json.loads(Path(path).read_text())


def main(argv=None) -> None:
    """``python -m lnlib.book.models.norm_lab [OUT]``: the lab on scikit-learn's digits, with its
    provenance, into OUT."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("out", nargs="?", default=str(NORM_LAB_RESULTS))
    args = parser.parse_args(argv)
    load_before, start, cpu_start = os.getloadavg(), time.perf_counter(), time.process_time()
    results = lab(digits())
    from sklearn import __version__ as sklearn_version

    record = {
        "provenance": {
            "command": "make results-norm-lab",
            "date": datetime.date.today().isoformat(),
            **machine(),
            "data": f"sklearn.datasets.load_digits, scikit-learn {sklearn_version}",
            "cpus": os.cpu_count(),
            "load_average_before": [round(v, 2) for v in load_before],
            "load_average_after": [round(v, 2) for v in os.getloadavg()],
            "seconds": round(time.perf_counter() - start, 1),
            "cpu_seconds": round(time.process_time() - cpu_start, 1),
        },
        "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in LAB_SETTINGS.items()},
        **results,
    }
    Path(args.out).write_text(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
