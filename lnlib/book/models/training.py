"""A short training run of the tiny transformer, with or without learning-rate warm-up.

The chapter "Pre-norm vs post-norm" trains :mod:`lnlib.book.models.transformer`'s stacks
on a toy task with Adam, over several seeds and learning rates, with and
without warm-up (:func:`warmup_sweep`), to see whether post-norm needs warm-up
where pre-norm does not, as Xiong et al. (2020) report for real translation models.
"""

from __future__ import annotations

import argparse
import datetime
import json
import numbers
import os
import platform
import sys
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from ...forward import layer_norm
from ...validation import check_count
from ..tools import prose
from .transformer import (
    PLACEMENTS,
    check_placement,
    init_stack,
    mse_loss,
    stack_backward,
    stack_forward,
)

__all__ = [
    "ADAM",
    "PLACEMENTS",
    "WARMUP_RESULTS",
    "WARMUP_SETTINGS",
    "WarmupSweep",
    "adam_moments",
    "adam_update",
    "load_sweep",
    "machine",
    "mean_token_task",
    "save_sweep",
    "train",
    "warmup_findings",
    "warmup_rate",
    "warmup_sweep",
]

#: Adam's (beta1, beta2, epsilon), as in the original Transformer (Vaswani et al., 2017).
ADAM = (0.9, 0.98, 1e-9)

#: The sweep the chapter reports: three peak rates a factor of about 3 apart, 8 seeds.
WARMUP_SETTINGS = {
    "rates": (3e-3, 1e-2, 3e-2),
    "seeds": tuple(range(8)),
    "warmup": 200,
    "steps": 500,
    "depth": 6,
    "width": 32,
}

#: The chapter's sweep, computed once by ``make results`` (:func:`save_sweep`) and read by the
#: chapter (:func:`load_sweep`). Training is chaotic: another CPU's rounding (another BLAS kernel)
#: moves every run's loss after a few dozen steps, so the chapter reads one stored run and states
#: each number with its spread over the seeds; ``tests/book/test_training_cpus.py`` re-runs the
#: sweep under two BLAS kernels.
WARMUP_RESULTS = Path(__file__).parents[1] / "data" / "warmup_sweep.json"


def mean_token_task(
    rng: np.random.Generator, batch: int, tokens: int, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """A toy task that needs attention: every token must output the layer-normalized mean of its
    sequence (chapter "Pre-norm vs post-norm").

    Returns
    -------
    x, target : ndarray, shape (batch, tokens, width)
        Inputs with N(0, 1) entries; the target repeats ``LN(mean over tokens of x)`` at every
        position.
    """
    x = rng.normal(size=(batch, tokens, width))
    return x, np.broadcast_to(layer_norm(x.mean(axis=1, keepdims=True)), x.shape)


def warmup_rate(step: int, lr: float, warmup: int) -> float:
    """The learning rate at `step` (counting from 1): a linear ramp over the first `warmup` steps,
    then constant (chapter "Pre-norm vs post-norm")."""
    return lr * min(1.0, step / warmup) if warmup > 0 else lr


def train(
    placement: str,
    *,
    lr: float,
    warmup: int = 0,
    steps: int = 100,
    depth: int = 6,
    width: int = 32,
    tokens: int = 8,
    batch: int = 8,
    seed: int = 0,
) -> np.ndarray:
    """Train a stack with Adam on :func:`mean_token_task`; return the loss at every step (chapter
    "Pre-norm vs post-norm").

    Parameters
    ----------
    placement : {"post", "pre"}
    lr : float
        The peak learning rate, > 0.
    warmup : int, default 0
        Steps of linear warm-up (0: none).
    steps, depth, width, tokens, batch : int
        Run length and model and batch sizes.
    seed : int
        Seeds both the weights and the batches, so two placements or
        schedules with the same seed see the same data.

    Returns
    -------
    ndarray of shape (steps,)
        The training loss (:func:`lnlib.book.models.transformer.mse_loss`) before each update.
    """
    placement = check_placement(placement)
    steps, tokens, batch = (
        check_count(v, n) for v, n in ((steps, "steps"), (tokens, "tokens"), (batch, "batch"))
    )
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a positive finite number such as 1e-3; got {lr!r}.")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number of steps >= 0; got {warmup!r}.")
    rng = np.random.default_rng(seed)
    weights = init_stack(depth, width, seed=seed)
    moments = adam_moments(weights)
    losses = np.empty(steps)
    for step in range(1, steps + 1):
        x, target = mean_token_task(rng, batch, tokens, width)
        out, states, caches = stack_forward(x, weights, placement)
        losses[step - 1], dout = mse_loss(out, target)
        _, grads = stack_backward(dout, states, caches, weights, placement)
        adam_update(weights, grads, moments, step, warmup_rate(step, lr, warmup))
    return losses


def adam_moments(weights: list[dict]) -> tuple[list[dict], list[dict]]:
    """Adam's first and second moments for `weights` (a list of dicts of arrays), all zero (chapter
    "Pre-norm vs post-norm")."""
    return tuple([{k: np.zeros_like(v) for k, v in w.items()} for w in weights] for _ in range(2))


def adam_update(weights: list[dict], grads: list[dict], moments: tuple, step: int, rate: float):
    """One Adam step (Kingma & Ba, with :data:`ADAM`'s constants) on `weights`, in place (chapter
    "Pre-norm vs post-norm").

    `moments` is :func:`adam_moments`'s pair, updated in place; `step` counts from 1 (bias
    correction).
    """
    beta1, beta2, eps = ADAM
    for w, g, m, v in zip(weights, grads, *moments):
        for name in w:
            m[name] = beta1 * m[name] + (1 - beta1) * g[name]
            v[name] = beta2 * v[name] + (1 - beta2) * g[name] ** 2
            w[name] -= (
                rate * (m[name] / (1 - beta1**step)) / (np.sqrt(v[name] / (1 - beta2**step)) + eps)
            )


@dataclass(frozen=True)
class WarmupSweep:
    """Training losses over learning rates, placements, schedules and seeds (chapter "Pre-norm vs
    post-norm").

    Attributes
    ----------
    rates : tuple of float
        The peak learning rates.
    warmup : int
        Warm-up steps of the runs with warm-up.
    seeds : tuple of int
    losses : ndarray, shape (len(rates), 2, 2, len(seeds), steps)
        Indexed by rate, placement (in the order of
        :data:`~lnlib.book.models.transformer.PLACEMENTS`), schedule (0: no warm-up, 1: warm-up) and
        seed.
    """

    rates: tuple
    warmup: int
    seeds: tuple
    losses: np.ndarray

    def curves(self, rate: float, placement: str, warmed: bool) -> np.ndarray:
        """The loss curves of one setting, one row per seed."""
        if rate not in self.rates:
            raise ValueError(f"rate must be one of the swept rates {self.rates}; got {rate!r}.")
        return self.losses[
            self.rates.index(rate), PLACEMENTS.index(check_placement(placement)), int(bool(warmed))
        ]

    def final(self, last: int = 10) -> np.ndarray:
        """The mean loss over the last `last` steps of every run, shape (rates, 2, 2, seeds)."""
        return self.losses[..., -last:].mean(axis=-1)


def warmup_findings(sweep: WarmupSweep) -> dict:
    """What chapter "Pre-norm vs post-norm" says about a sweep of three rates, by glue key.

    Final losses (the mean of each run's last 10) are means ± sd over the seeds at the precision
    the seeds support (:func:`lnlib.book.tools.prose.mean_sd`); keys name placement, schedule and
    rate (``train_post_nowarm_mid``: post-norm, no warm-up, the middle rate). Also: the seed count,
    the steps and warm-up steps of each run, and each placement's starting loss at the middle rate.
    """
    rates, final = dict(zip(("low", "mid", "high"), sweep.rates, strict=True)), sweep.final()

    def runs(rate: str, placement: str, warmed: bool) -> np.ndarray:
        return final[sweep.rates.index(rates[rate]), PLACEMENTS.index(placement), int(warmed)]

    findings = {
        "train_seeds": prose.number(len(sweep.seeds)),
        "train_steps": prose.number(sweep.losses.shape[-1]),
        "train_warmup": prose.number(sweep.warmup),
        "train_start": prose.number(
            float(sweep.curves(rates["mid"], "post", False)[:, 0].mean()), ".1f"
        ),
        "train_start_pre": prose.number(
            float(sweep.curves(rates["mid"], "pre", False)[:, 0].mean()), ".1f"
        ),
    }
    for rate in rates:
        for placement in PLACEMENTS:
            for warmed, schedule in ((False, "nowarm"), (True, "warm")):
                findings[f"train_{placement}_{schedule}_{rate}"] = prose.mean_sd(
                    runs(rate, placement, warmed)
                )
    return findings


def _run(job: tuple) -> np.ndarray:
    lr, placement, warmup, seed, kwargs = job
    return train(placement, lr=lr, warmup=warmup, seed=seed, **kwargs)


def warmup_sweep(
    rates,
    *,
    seeds=(0, 1, 2, 3),
    warmup: int = 25,
    steps: int = 100,
    depth: int = 6,
    width: int = 32,
    workers: int = 1,
    progress: bool = False,
) -> WarmupSweep:
    """Train both placements at every rate, with and without `warmup` steps of warm-up, once per
    seed (chapter "Pre-norm vs post-norm").

    Every run with the same seed starts from the same weights and sees the same
    batches (:func:`train`), so a difference between schedules or placements is
    not a difference of luck.

    Parameters
    ----------
    workers : int, default 1
        Processes to train in (runs are independent; the result does not depend on it).
    progress : bool, default False
        Show a progress bar in a reader's notebook (:func:`lnlib.book.tools.progress.progress`).
    """
    rates, seeds = tuple(float(r) for r in rates), tuple(seeds)
    if not rates or not seeds:
        raise ValueError(
            f"rates and seeds must be non-empty; got rates={rates!r}, seeds={seeds!r}."
        )
    workers = check_count(workers, "workers")
    kwargs = {"steps": steps, "depth": depth, "width": width}
    jobs = [
        (lr, p, wu, seed, kwargs)
        for lr in rates
        for p in PLACEMENTS
        for wu in (0, warmup)
        for seed in seeds
    ]
    with (
        ProcessPoolExecutor(workers, mp_context=get_context("fork"))
        if workers > 1
        else nullcontext() as pool
    ):
        runs = pool.map(_run, jobs) if pool else map(_run, jobs)
        if progress:
            from lnlib.book.tools.progress import progress as bar

            runs = bar(runs, f"training {len(jobs)} small transformers", len(jobs), "run")
        losses = np.array(list(runs)).reshape(len(rates), len(PLACEMENTS), 2, len(seeds), steps)
    return WarmupSweep(rates, warmup, seeds, losses)


def machine() -> dict:
    """Where a result was computed: CPU, Python, numpy and the BLAS kernel family numpy's OpenBLAS
    chose."""
    cpu = next(
        (line.split(":", 1)[1].strip() for line in _cpuinfo() if line.startswith("model name")),
        platform.processor(),
    )
    info = {
        "cpu": cpu,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", ""),
    }
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return info
    blas = [lib for lib in threadpool_info() if lib.get("internal_api") == "openblas"]
    if blas:
        info["blas"] = f"OpenBLAS {blas[0].get('version')} ({blas[0].get('architecture')} kernels)"
    return info


def _cpuinfo() -> list[str]:
    try:
        return Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return []


def save_sweep(sweep: WarmupSweep, path, *, command: str = "make results") -> None:
    """Write a sweep and where it was computed to a JSON file (read back by :func:`load_sweep`)."""
    record = {
        "provenance": {"command": command, "date": datetime.date.today().isoformat(), **machine()},
        "rates": list(sweep.rates),
        "warmup": sweep.warmup,
        "seeds": list(sweep.seeds),
        "losses": sweep.losses.tolist(),
    }
    Path(path).write_text(json.dumps(record, indent=None) + "\n")


def load_sweep(path=WARMUP_RESULTS) -> WarmupSweep:
    """The sweep stored by :func:`save_sweep` (by default the chapter's, :data:`WARMUP_RESULTS`)."""
    record = json.loads(Path(path).read_text())
    return WarmupSweep(
        tuple(record["rates"]), record["warmup"], tuple(record["seeds"]), np.array(record["losses"])
    )


def main(argv=None) -> None:
    """``python -m lnlib.book.models.training OUT``: compute the chapter's sweep
    (:data:`WARMUP_SETTINGS`) into OUT."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("out", nargs="?", default=str(WARMUP_RESULTS))
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    sweep = warmup_sweep(**WARMUP_SETTINGS, workers=args.workers, progress=sys.stderr.isatty())
    save_sweep(sweep, args.out)


if __name__ == "__main__":
    main()
