r"""The invariance experiments of Ba, Kiros & Hinton (2016), Table 1, computed (chapter "LayerNorm
and its family").

Setting (the paper's section 5.1). A layer with weight matrix :math:`W` (one row
:math:`w_i` per hidden unit) receives cases :math:`x` (rows of a data matrix
:math:`X`) and forms the summed inputs :math:`a = W x`; a normalization method
turns them into normalized outputs. The learned gain and bias act *after*
normalization and are left out, as is epsilon (the paper has none). The methods:

- batch norm: each unit's summed input standardized over the cases;
- layer norm: each case's summed inputs standardized over the units;
- RMS norm: each case's summed inputs divided by their root mean square (no centring);
- weight norm (Salimans & Kingma, 2016): each unit outputs
  :math:`g_i\, v_i^\top x / \lVert v_i \rVert`; the transformations act on :math:`v_i`.

A method is *invariant* under a transformation when its normalized output is
unchanged (to rounding) for every case. Each transformation is a function
``(W, X, rng) -> (W', X')`` documented below; :func:`invariance_table`
applies each one to random data and reports which outputs stayed put.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...forward import layer_norm
from ...norms import RunningStats, batch_norm, rms_norm
from ...validation import as_float_array
from ..tools import prose

__all__ = [
    "METHODS",
    "PAPER_TABLE_1",
    "ROUNDING_BOUND",
    "TRANSFORMATIONS",
    "InvarianceTable",
    "invariance_table",
    "max_change",
    "BatchEffects",
    "batch_effects",
    "norm_lab_findings",
    "outlier_findings",
    "batch_findings",
    "invariance_findings",
    "rms_shift_findings",
]


def _batch(W, X):
    return batch_norm(X @ W.T, eps=0.0, axis=0)


def _weight(W, X):
    return (X @ W.T) / np.linalg.norm(W, axis=1)


def _layer(W, X):
    return layer_norm(X @ W.T, eps=0.0, axis=1)


def _rms(W, X):
    return rms_norm(X @ W.T, eps=0.0, axis=1)


#: The largest change an invariant output may show: 100 machine epsilons of float64. The chapter
#: states this bound rather than the largest change it measured, a rounding-level number that
#: another CPU changes.
ROUNDING_BOUND = 100 * float(np.finfo(np.float64).eps)


#: Normalized outputs ``f(W, X)`` of shape (cases, units), by the paper's row names (plus RMS norm).
METHODS: dict[str, Callable] = {
    "Batch norm": _batch,
    "Weight norm": _weight,
    "Layer norm": _layer,
    "RMS norm": _rms,
}


def weight_matrix_rescaling(W, X, rng):
    r"""Weight-matrix re-scaling: :math:`W' = \delta W`, one scalar :math:`\delta > 0` for the whole
    matrix."""
    return rng.uniform(2.0, 5.0) * W, X


def weight_matrix_recentering(W, X, rng):
    r"""Weight-matrix re-centering: :math:`W' = W + \mathbf{1}\gamma^\top`.

    The same vector :math:`\gamma` is added to every unit's incoming weights, so
    every unit's summed input of case :math:`x` shifts by the same scalar :math:`\gamma^\top x`.
    """
    return W + rng.normal(size=W.shape[1]), X


def weight_vector_rescaling(W, X, rng):
    r"""Weight-vector re-scaling: one unit's incoming weights :math:`w_i` scaled by its own
    :math:`\delta_i > 0` (unit 0 here)."""
    W = W.copy()
    W[0] *= rng.uniform(2.0, 5.0)
    return W, X


def dataset_rescaling(W, X, rng):
    r"""Dataset re-scaling: every case scaled by the same :math:`\delta > 0`, :math:`x' = \delta
    x`."""
    return W, rng.uniform(2.0, 5.0) * X


def dataset_recentering(W, X, rng):
    r"""Dataset re-centering: the same vector :math:`c` added to every case, :math:`x' = x + c`."""
    return W, X + rng.normal(size=X.shape[1])


def single_case_rescaling(W, X, rng):
    r"""Single-training-case re-scaling: one case scaled by its own :math:`\delta > 0` (case 0
    here), the others unchanged."""
    X = X.copy()
    X[0] *= rng.uniform(2.0, 5.0)
    return W, X


#: The six transformations, by the paper's column names, in the paper's order.
TRANSFORMATIONS: dict[str, Callable] = {
    "weight matrix re-scaling": weight_matrix_rescaling,
    "weight matrix re-centering": weight_matrix_recentering,
    "weight vector re-scaling": weight_vector_rescaling,
    "dataset re-scaling": dataset_rescaling,
    "dataset re-centering": dataset_recentering,
    "single training case re-scaling": single_case_rescaling,
}

#: Table 1 of Ba, Kiros & Hinton (2016) as printed, True for "Invariant", for side-by-side display.
PAPER_TABLE_1: dict[str, tuple[bool, ...]] = {
    "Batch norm": (True, False, True, True, True, False),
    "Weight norm": (True, False, True, False, False, False),
    "Layer norm": (True, True, False, True, False, True),
}


def max_change(method: str, transformation: str, W, X, rng) -> float:
    """Largest change of `method`'s normalized output when `transformation` is applied, relative to
    its largest value.

    One cell of the table computed in the chapter "LayerNorm and its family".

    Raises
    ------
    ValueError
        For an unknown method or transformation name.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}; got {method!r}.")
    if transformation not in TRANSFORMATIONS:
        raise ValueError(
            f"transformation must be one of {list(TRANSFORMATIONS)}; got {transformation!r}."
        )
    f = METHODS[method]
    before = f(W, X)
    after = f(*TRANSFORMATIONS[transformation](W, X, rng))
    return float(np.max(np.abs(after - before)) / np.max(np.abs(before)))


@dataclass(frozen=True)
class InvarianceTable:
    """The computed table: for every method and transformation, the relative change and the verdict.

    Attributes
    ----------
    changes : dict of str to tuple of float
        Per method, the relative change of the output under each transformation, in
        the order of :data:`TRANSFORMATIONS`.
    tol : float
        Changes at or below `tol` count as invariant.
    """

    changes: dict[str, tuple[float, ...]]
    tol: float

    @property
    def invariant(self) -> dict[str, tuple[bool, ...]]:
        """Per method, True ("Invariant") or False ("No") for each transformation."""
        return {m: tuple(c <= self.tol for c in row) for m, row in self.changes.items()}

    def rows(self) -> list[list[str]]:
        """The table as text rows: a header, then one row per method with "Invariant" or "No"."""
        header = ["", *TRANSFORMATIONS]
        return [header] + [
            [m, *("Invariant" if v else "No" for v in row)] for m, row in self.invariant.items()
        ]

    def __str__(self) -> str:
        rows = self.rows()
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return "\n".join(
            " | ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows
        )


def invariance_table(
    *, cases: int = 16, inputs: int = 6, units: int = 5, seed: int = 0, tol: float = 1e-9
) -> InvarianceTable:
    """Compute Table 1 of Ba, Kiros & Hinton (2016), plus an RMS-norm row, on random data.

    Draws `cases` random inputs with a non-zero mean (so re-centering is visible)
    and a random weight matrix, applies every transformation of :data:`TRANSFORMATIONS`
    with fresh random factors, and records the relative change of each method's
    output (chapter "LayerNorm and its family").

    Parameters
    ----------
    cases, inputs, units : int
        The shape of the experiment; at least 2 each.
    seed : int
        Seed of the random data and factors.
    tol : float
        Relative change that still counts as invariant (rounding is about 1e-15).

    Returns
    -------
    InvarianceTable

    Raises
    ------
    ValueError
        If a size is below 2.
    """
    for name, size in (("cases", cases), ("inputs", inputs), ("units", units)):
        if size < 2:
            raise ValueError(
                f"{name} must be at least 2 so that means and variances exist; got {size}."
            )
    rng = np.random.default_rng(seed)
    X = as_float_array(rng.normal(loc=1.0, size=(cases, inputs)), "X")
    W = as_float_array(rng.normal(size=(units, inputs)), "W")
    changes = {m: tuple(max_change(m, t, W, X, rng) for t in TRANSFORMATIONS) for m in METHODS}
    return InvarianceTable(changes=changes, tol=tol)


# --- batch dependence (was batch_dependence.py) ---------------------------------------------------
# How one sample's batch-norm output depends on its batch, and on training versus inference.
#
# Two experiments of the chapter "LayerNorm and its family". A fixed sample is
# normalized inside many random batches drawn from a population: in training
# mode batch norm's output for it changes with its companions (more for small
# batches), while layer norm's never does. After training, batch norm switches
# to running statistics, so the same sample gets yet another output at inference.


@dataclass(frozen=True)
class BatchEffects:
    """One sample's normalized outputs under batch norm and layer norm.

    Attributes
    ----------
    training : dict of int to ndarray
        Per batch size, batch norm's training-mode outputs for the sample, one
        row per random batch, shape (trials, D).
    inference : ndarray
        Batch norm's inference-mode output for the sample, with running
        statistics accumulated over training batches, shape (D,).
    layer : ndarray
        Layer norm's output for the sample, shape (D,): the same in every batch.
    layer_in_batches : dict of int to ndarray
        Per batch size, layer norm's outputs for the sample inside the same
        random batches, shape (trials, D), to show they never move.
    """

    training: dict[int, np.ndarray]
    inference: np.ndarray
    layer: np.ndarray
    layer_in_batches: dict[int, np.ndarray]

    def spread(self, size: int) -> float:
        """Mean over features of the standard deviation of batch norm's output across batches of
        `size`."""
        return float(self.training[size].std(axis=0).mean())


def _draw_batch(population: np.ndarray, index: int, size: int, rng) -> np.ndarray:
    """The sample `index` first, then `size - 1` others drawn without replacement."""
    others = np.delete(np.arange(len(population)), index)
    return population[np.concatenate([[index], rng.choice(others, size=size - 1, replace=False)])]


def batch_effects(
    population,
    sizes=(2, 8, 64),
    *,
    index: int = 0,
    trials: int = 200,
    train_steps: int = 200,
    train_batch: int = 32,
    momentum: float = 0.1,
    seed: int = 0,
) -> BatchEffects:
    """Normalize sample `index` of `population` inside random batches of each size (chapter
    "LayerNorm and its family").

    Parameters
    ----------
    population : array_like, shape (P, D)
        The data the batches are drawn from.
    sizes : sequence of int
        Batch sizes, each from 2 to P.
    index : int
        The sample that is followed.
    trials : int
        Random batches per size.
    train_steps, train_batch, momentum :
        The training run that accumulates batch norm's running statistics.
    seed : int
        Seed of the random batches.

    Returns
    -------
    BatchEffects

    Raises
    ------
    ValueError
        If the population is not 2-D, a size is outside [2, P], or `index` is out of range.
    """
    population = as_float_array(population, "population")
    if population.ndim != 2:
        raise ValueError(
            f"population must have shape (P, D), one sample per row; got shape {population.shape}."
        )
    count = len(population)
    if not 0 <= index < count:
        raise ValueError(f"index must pick a sample, 0 <= index < {count}; got {index}.")
    for size in (*sizes, train_batch):
        if not 2 <= size <= count:
            raise ValueError(
                f"batch sizes must lie in [2, {count}] (the population size); got {size}."
            )
    rng = np.random.default_rng(seed)
    training, layer_in_batches = {}, {}
    for size in sizes:
        batches = [_draw_batch(population, index, size, rng) for _ in range(trials)]
        training[size] = np.array([batch_norm(b)[0] for b in batches])
        layer_in_batches[size] = np.array([layer_norm(b)[0] for b in batches])
    running = RunningStats.start(population.shape[1], momentum=momentum)
    for _ in range(train_steps):
        batch_norm(population[rng.choice(count, size=train_batch, replace=False)], running=running)
    inference = batch_norm(population[index : index + 1], running=running, training=False)[0]
    return BatchEffects(
        training=training,
        inference=inference,
        layer=layer_norm(population[index]),
        layer_in_batches=layer_in_batches,
    )


#: The training batch size whose BatchNorm models the chapter evaluates four ways.
EVAL_BATCH = 128


def norm_lab_findings(record: dict) -> dict:
    """What chapter "LayerNorm and its family" says about the BatchNorm lab, by glue key (chapter
    "LayerNorm and its family").

    `record` is the stored lab (:func:`lnlib.book.models.norm_lab.load_lab`). Accuracies are test
    accuracies in %, as mean ± sd over the seeds (:func:`lnlib.book.tools.prose.mean_sd`).

    Returns
    -------
    dict
        ``lab_steps``, ``lab_seeds``, ``lab_rate``, ``lab_high_rate``, ``lab_lag_batch``,
        ``lab_eval_batch``: the settings. ``lab_{none,bn,ln,rms}_2`` and ``_256``: each norm's
        accuracy trained at batches of 2 and 256 (BatchNorm with its running statistics);
        ``lab_bn_loss_2``, ``lab_ln_loss_2``: their training losses at batch 2;
        ``lab_bn_2_worst``: in how many seeds BatchNorm at batch 2 was below every other norm.
        ``lab_{running,whole,pairs,one_class}``: BatchNorm trained at batches of ``EVAL_BATCH``,
        evaluated with running statistics, and in train mode on the whole test set as one batch, on
        random pairs, on batches of one digit each. ``lab_lag_gap_1``: at the high rate, after one
        step, the accuracy with the test set's own statistics minus that with the running ones
        (points); ``lab_lag_steps``: the last checkpoint up to which that gap is positive at every
        checkpoint in every seed; ``lab_lag_gap_end``: the gap after the last step;
        ``lab_lag_gap_base``: the gap at ``lag_steps`` at the base rate. ``lab_start_weight_1``,
        ``lab_start_weight_lag``: the weight, ``(1 - momentum) ** k``, that the running statistics'
        starting values (mean 0, variance 1) still carry after k = 1 and k = ``lag_steps`` updates.
    """
    s = record["settings"]
    acc = {n: np.array(v) for n, v in record["accuracy"].items()}
    first, last = s["batches"].index(2), s["batches"].index(256)
    lag = {k: np.array(v["whole"]) - np.array(v["running"]) for k, v in record["lag"].items()}
    positive = np.cumprod(np.all(lag["high_rate"] > 0, axis=0))
    until = int(np.sum(positive))
    if until == 0:
        raise ValueError(
            "the running statistics never lag in every seed; the chapter's claim fails."
        )
    row = s["batches"].index(EVAL_BATCH)
    others = np.min([acc[n][first] for n in ("none", "layer", "rms")], axis=0)
    findings = {
        "lab_steps": prose.number(s["steps"]),
        "lab_seeds": prose.number(len(s["seeds"])),
        "lab_rate": prose.number(s["rate"], ".0e"),
        "lab_high_rate": prose.number(s["high_rate"], ".0e"),
        "lab_lag_batch": prose.number(s["lag_batch"]),
        "lab_eval_batch": prose.number(EVAL_BATCH),
        "lab_bn_loss_2": prose.mean_sd(record["loss"]["batch"][first]),
        "lab_ln_loss_2": prose.mean_sd(record["loss"]["layer"][first]),
        "lab_bn_2_worst": prose.number(int(np.sum(acc["batch"][first] < others))),
        "lab_running": prose.mean_sd(acc["batch"][row]),
        "lab_lag_gap_1": prose.mean_sd(lag["high_rate"][:, 0]),
        "lab_lag_steps": prose.number(s["checkpoints"][until - 1]),
        "lab_lag_gap_end": prose.mean_sd(lag["high_rate"][:, -1]),
        "lab_lag_gap_base": prose.mean_sd(lag["rate"][:, until - 1]),
        "lab_start_weight_1": prose.number(1 - s["momentum"], ".2g"),
        "lab_start_weight_lag": prose.number(
            (1 - s["momentum"]) ** s["checkpoints"][until - 1], ".2g"
        ),
    }
    for name, key in (("none", "none"), ("bn", "batch"), ("ln", "layer"), ("rms", "rms")):
        findings[f"lab_{name}_2"] = prose.mean_sd(acc[key][first])
        findings[f"lab_{name}_256"] = prose.mean_sd(acc[key][last])
    for how, values in record["batch_modes"].items():
        findings[f"lab_{how}"] = prose.mean_sd(values[row])
    return findings


def outlier_findings(x) -> dict:
    """What the running example of chapter "LayerNorm and its family" shows, by glue key.

    Parameters
    ----------
    x : array_like, shape (N, 4)
        Tokens (rows) whose last feature is an outlier channel.

    Returns
    -------
    dict of str to ProseNumber
        ``raw_band``: the range of the first three features' raw values; ``ln_band``: their range
        after layer norm (each row); ``ln_outlier_lo``, ``ln_outlier_hi``: the outlier's smallest
        and largest value after layer norm; ``bn_lo``, ``bn_hi``: the smallest and largest value
        after batch norm (each column), rounded as printed.
    """
    x = as_float_array(x)
    by_token, by_feature = layer_norm(x), batch_norm(x)
    return {
        "raw_band": prose.number(float(np.ptp(x[:, :3])), ".2f"),
        "ln_band": prose.number(float(np.ptp(by_token[:, :3])), ".2f"),
        # a range's ends rounded outward, so that "between lo and hi" holds of the exact values
        # (learner B: "between 1.71 and 1.72" for 1.709 to 1.724)
        "ln_outlier_lo": prose.number(np.floor(by_token[:, 3].min() * 100) / 100, ".2f"),
        "ln_outlier_hi": prose.number(np.ceil(by_token[:, 3].max() * 100) / 100, ".2f"),
        # the extremes as the printout rounds them ("runs from lo to hi"; learner B read an outward
        # bound, −1.34 beside a printed −1.33, as a typo)
        "bn_lo": prose.number(float(by_feature.min()), ".2f"),
        "bn_hi": prose.number(float(by_feature.max()), ".2f"),
    }


def batch_findings(effects: BatchEffects) -> dict:
    """What the section "Batch norm depends on the batch" says of :func:`batch_effects` at sizes 2,
    8 and 64, by glue key.

    Returns
    -------
    dict of str to ProseNumber
        ``spread_2``, ``spread_8``, ``spread_64``: :meth:`BatchEffects.spread` at each size;
        ``inference_gap``: the largest difference, over features, between batch norm's inference
        output and its mean training output in batches of 64.
    """
    gap = np.abs(effects.inference - effects.training[64].mean(axis=0)).max()
    findings = {f"spread_{n}": prose.number(effects.spread(n), ".3f") for n in (2, 8, 64)}
    findings["inference_gap"] = prose.number(float(gap), ".3f")
    return findings


def invariance_findings(table: InvarianceTable) -> dict:
    """What the section "The invariance table, computed" says, by glue key.

    Returns
    -------
    dict of str to ProseNumber
        ``rounding_bound``: :data:`ROUNDING_BOUND`, which every change counted as invariant stays
        under; ``smallest_real_change``: the smallest change counted as a real one.

    Raises
    ------
    ValueError
        If a change counted as invariant is not under :data:`ROUNDING_BOUND`: the table's tolerance
        would then let more than rounding through; or if a row of the paper's methods differs from
        :data:`PAPER_TABLE_1`, which the section says its rows reproduce.
    """
    changes = np.array(list(table.changes.values()))
    if changes[changes <= table.tol].max() >= ROUNDING_BOUND:
        raise ValueError("a change counted as invariant is above the rounding bound")
    for method, paper_row in PAPER_TABLE_1.items():
        if method in table.invariant and table.invariant[method] != paper_row:
            raise ValueError(f"the computed row of {method} differs from the paper's Table 1")
    return {
        "rounding_bound": prose.number(ROUNDING_BOUND, ".1e"),
        "smallest_real_change": prose.number(float(changes[changes > table.tol].min()), ".2f"),
    }


def rms_shift_findings(tokens, shift: float = 1.0, eps: float = 1e-5) -> dict:
    """How far RMS norm and layer norm part when mean-zero `tokens` are shifted (chapter "LayerNorm
    and its family").

    Returns
    -------
    dict of str to ProseNumber
        ``rms_shift_diff``: the largest entry of |RMS norm − layer norm| of ``tokens + shift``.
    """
    shifted = as_float_array(tokens) + shift
    gap = np.abs(rms_norm(shifted, eps=eps) - layer_norm(shifted, eps=eps)).max()
    return {"rms_shift_diff": prose.number(float(gap), ".2f")}
