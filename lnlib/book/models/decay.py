"""Weight decay on the norms' γ and β, or not: the character model trained both ways (chapter "Scale
γ and shift β").

``make results-decay`` trains :func:`lnlib.book.models.language.train_model` (Pre-LN) with AdamW's
decoupled weight decay on every weight matrix and embedding, once with the norms' γ and β decayed
too and once without, everything else equal (same seed: same initial weights, same batches), for
each seed of :data:`DECAY_SETTINGS`, and stores each run's held-out loss and learned γ and β
statistics with the machine in :data:`DECAY_RESULTS`. The chapter reads that file and never trains.
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import json
import os
import time
from pathlib import Path

import numpy as np

from ..tools import prose
from .language import DATA, char_corpus, train_model
from .training import machine

__all__ = [
    "DECAY_RESULTS",
    "DECAY_SETTINGS",
    "decay_findings",
    "decay_run",
    "decay_sweep",
    "load_decay",
    "main",
    "per_seed",
]

DECAY_RESULTS = DATA / "decay_sweep.json"

#: The runs: Pre-LN, 6 layers, AdamW's decay coefficient 0.1 (PyTorch's AdamW default is 0.01: a
#: short run needs more to show an effect), 600 steps after 50 of warm-up, 5 seeds.
DECAY_SETTINGS = {
    "placement": "pre",
    "lr": 1e-2,
    "warmup": 50,
    "steps": 600,
    "depth": 6,
    "weight_decay": 0.1,
    "seeds": (0, 1, 2, 3, 4),
}


def decay_run(
    *, decay_norms: bool, seed: int, placement: str, weight_decay: float, **train
) -> dict:
    """One run: held-out loss, and the learned γ and β over every norm (chapter "Scale γ and shift
    β").

    Returns
    -------
    dict
        ``final`` (held-out loss, nats per character; None if diverged), ``gamma_mean_abs`` and
        ``beta_mean_abs`` (mean |γ| and |β| over every entry of every norm), ``gamma_norm_means``
        (each norm's mean γ, bottom to top).
    """
    run = train_model(
        placement, seed=seed, weight_decay=weight_decay, decay_norms=decay_norms, **train
    )
    gammas = [v for w in run.model for k, v in w.items() if k.endswith("_gamma")]
    betas = [v for w in run.model for k, v in w.items() if k.endswith("_beta")]
    return {
        "final": None if run.diverged else run.final,
        "gamma_mean_abs": float(np.mean(np.abs(np.concatenate(gammas)))),
        "beta_mean_abs": float(np.mean(np.abs(np.concatenate(betas)))),
        "gamma_norm_means": [float(g.mean()) for g in gammas],
    }


def decay_sweep(settings=DECAY_SETTINGS) -> dict:
    """Every seed with γ and β decayed and not:
    ``{"norms decayed": [run, ...], "norms not decayed": [...]}`` in seed order."""
    common = {k: v for k, v in settings.items() if k != "seeds"}
    return {
        label: [decay_run(decay_norms=on, seed=s, **common) for s in settings["seeds"]]
        for label, on in (("norms decayed", True), ("norms not decayed", False))
    }


def load_decay(path=DECAY_RESULTS) -> dict:
    """The record ``make results-decay`` wrote (:func:`main`)."""
    return json.loads(Path(path).read_text())


def per_seed(record: dict, key: str) -> dict:
    """``{"norms decayed": array, "norms not decayed": array}`` of one run statistic, in seed order
    (chapter "Scale γ and shift β")."""
    return {
        arm: np.array([run[key] for run in runs], dtype=float)
        for arm, runs in record["runs"].items()
    }


def _default(name: str):
    """:func:`lnlib.book.models.language.train_model`'s default for one setting."""
    return inspect.signature(train_model).parameters[name].default


def decay_findings(record: dict) -> dict:
    """What chapter "Scale γ and shift β" says about the weight-decay runs, by glue key.

    Every statistic is a mean ± sd over the seeds (:func:`lnlib.book.tools.prose.mean_sd`);
    ``wd_width``, ``wd_lr`` and ``wd_warmup`` describe the runs (the width is
    :func:`lnlib.book.models.language.train_model`'s default where the settings do not name one);
    ``wd_loss_diff`` is the paired difference (decayed minus not, seed by seed: same initial
    weights, same batches), and ``wd_loss_within`` says whether its mean is within one standard
    deviation of the differences ("within") or not ("beyond"); ``wd_gamma_lower`` counts the seeds
    whose mean |γ| is lower with γ and β decayed.
    """
    settings = record["settings"]
    loss, gamma, beta = (per_seed(record, k) for k in ("final", "gamma_mean_abs", "beta_mean_abs"))
    on, off = "norms decayed", "norms not decayed"
    diff = loss[on] - loss[off]
    return {
        "wd_seeds": prose.number(len(settings["seeds"])),
        "wd_steps": prose.number(settings["steps"]),
        "wd_depth": prose.number(settings["depth"]),
        "wd_width": prose.number(settings.get("width", _default("width"))),
        "wd_lr": prose.number(settings["lr"]),
        "wd_warmup": prose.number(settings["warmup"]),
        "wd_coefficient": prose.number(settings["weight_decay"]),
        "wd_gamma_on": prose.mean_sd(gamma[on]),
        "wd_gamma_off": prose.mean_sd(gamma[off]),
        "wd_beta_on": prose.mean_sd(beta[on]),
        "wd_beta_off": prose.mean_sd(beta[off]),
        "wd_gamma_lower": prose.number(int(np.sum(gamma[on] < gamma[off]))),
        "wd_loss_on": prose.mean_sd(loss[on]),
        "wd_loss_off": prose.mean_sd(loss[off]),
        "wd_loss_diff": prose.mean_sd(diff),
        "wd_loss_within": "within" if abs(diff.mean()) < diff.std(ddof=1) else "beyond",
    }


def main(argv=None) -> None:
    """``python -m lnlib.book.models.decay [OUT]``: the weight-decay runs and their provenance, into
    OUT."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("out", nargs="?", default=str(DECAY_RESULTS))
    args = parser.parse_args(argv)
    start, cpu = time.perf_counter(), time.process_time()
    runs = decay_sweep()
    record = {
        "provenance": {
            "command": "make results-decay",
            "date": datetime.date.today().isoformat(),
            **machine(),
            "cpus": os.cpu_count(),
            "seconds": round(time.perf_counter() - start, 1),
            "cpu_seconds": round(time.process_time() - cpu, 1),
        },
        "corpus_sha256": char_corpus()[2],
        "settings": {**DECAY_SETTINGS, "seeds": list(DECAY_SETTINGS["seeds"])},
        "runs": runs,
    }
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
