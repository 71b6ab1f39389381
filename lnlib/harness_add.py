r"""The harness for a fused residual add + RMSNorm, the kernel at every block boundary of today's
pre-norm models (chapters "LayerNorm on a GPU", "Check your own LayerNorm").

Such a kernel (vLLM's ``fused_add_rms_norm``, Liger Kernel's ``LigerFusedAddRMSNormFunction``,
the book's kernel 5) adds a sub-layer's output ``x`` to the residual stream ``residual``, stores the
sum ``s`` in the stream's dtype, and normalizes it: ``y = RMSNorm(s) * gamma``. Its backward pass
returns one gradient for ``x`` and ``residual`` alike: the norm's share of ``dL/ds`` plus ``ds``,
the gradient the stream carries past the norm.

:func:`check_add_rms_norm` runs :func:`lnlib.harness.check_rms_norm`'s cases and budgets on it, and
checks the add too. Each case's input, the norm's ``s``, is split into a branch output
``x = 0.3 s + 0.5 rms(s) (+1, -1, +1, ...)`` along each row and a stream ``residual = s - x``, each
rounded to the dtype under test: neither part is parallel to ``s`` (a kernel that normalizes one of
them alone fails), the add must round, and the cases' edges (rows of zeros, an offset of 30000 in
float16) still reach the norm. The budgets add to :func:`~lnlib.harness.check_rms_norm`'s:

- ``s``: within one rounding of the exact sum (a unit of roundoff of it: a truncating cast leaves
  it);
- ``y``: the reference normalizes the correctly rounded ``s``; a kernel may normalize its
  unrounded float32 sum instead (exact for 16-bit inputs), so the budget also allows the
  difference between the float64 RMSNorms of the two sums, entry by entry;
- the gradient: the norm's share plus ``ds``, with one more rounding for the add, and the
  difference a saved rstd of the unrounded sum makes, computed the same way. Nothing more: a
  dγ summed in the storage dtype still fails.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .harness import (
    DTYPES,
    RMS_CASES,
    CheckReport,
    _call,
    _check_all,
    _compare,
    _compare_gradients,
    _reference,
    _rms_backward_budgets,
    _rms_xhat_error,
    _rounding_sample,
    unit_roundoff,
)
from .norms import rms_norm
from .rms import rms_norm_backward

__all__ = ["check_add_rms_norm", "BRANCH_SHARE"]

#: The share of each case's input that :func:`check_add_rms_norm` hands over as the branch output
#: x, beside an alternating pattern (:func:`add_inputs`); the rest is the residual stream. Not a
#: power of two, so the add rounds.
BRANCH_SHARE = 0.3


def check_add_rms_norm(
    forward: Callable,
    backward: Callable | None = None,
    *,
    dtypes=DTYPES,
    cases=RMS_CASES,
    eps: float = 1e-6,
    normalized_ndim: int = 1,
    seed: int = 0,
    param_dtype: str | None = None,
    cast_before_gamma: bool = False,
) -> CheckReport:
    r"""Run a fused residual add + RMSNorm against lnlib's float64 reference, per case and dtype
    (chapters "LayerNorm on a GPU", "Check your own LayerNorm"; the module's docstring gives the
    budgets).

    Parameters
    ----------
    forward : callable
        ``forward(x, residual, gamma, eps) -> (y, s)``, or ``(y, s, *saved)`` when it saves
        statistics for its backward pass (e.g. rstd): ``s = x + residual`` and
        ``y = RMSNorm(s) * gamma``, both of the shape and dtype of `x`. A kernel that writes its
        results into its inputs (vLLM's writes s into ``residual`` and y into ``x``) must be
        wrapped: copy the inputs, call it, return ``(y, s)``: the harness fails a call that
        changes its inputs.
    backward : callable, optional
        ``backward(dy, ds, s, gamma, eps, *saved) -> (dx, dgamma)``: ``dx`` is the gradient of
        ``s``, and so of ``x`` and of ``residual`` both: the norm's share plus ``ds``, the
        gradient the stream carries past the norm; ``s`` is the stored sum, ``saved`` what
        `forward` returned after y and s on the same inputs.
    dtypes, cases, eps, normalized_ndim, seed, param_dtype, cast_before_gamma
        As in :func:`lnlib.harness.check_rms_norm`.

    Returns
    -------
    CheckReport
        As from :func:`lnlib.harness.check_rms_norm`; a forward row fails on ``s`` or ``y``,
        whichever is further out of its budget.

    Examples
    --------
    >>> import numpy as np
    >>> def fused(x, residual, gamma, eps):
    ...     s = x + residual
    ...     return s / np.sqrt((s * s).mean(-1, keepdims=True) + eps) * gamma, s
    >>> check_add_rms_norm(fused, dtypes=("float64",)).passed
    True
    """
    return _check_all(
        "add + RMSNorm",
        (forward, _check_add_forward, "forward(x, residual, gamma, eps)"),
        (backward, _check_add_backward, "backward(dy, ds, s, gamma, eps)"),
        dtypes=dtypes,
        cases=cases,
        eps=eps,
        normalized_ndim=normalized_ndim,
        seed=seed,
        param_dtype=param_dtype,
        cast_before_gamma=cast_before_gamma,
    )


def add_inputs(case, inputs: dict) -> dict:
    """The case's inputs for a fused add: `inputs` (:func:`lnlib.harness.harness_inputs`) with x
    split into the branch output ``x`` (:data:`BRANCH_SHARE` of it plus half its row's RMS times
    +1, -1, +1, ... along the last axis) and the stream ``residual`` (the rest), their correctly
    rounded sum ``s`` and the stream's gradient past the norm ``ds`` (dy reversed along the last
    axis, halved), each in the dtype and layout of x."""
    values, dtype = inputs["x"].astype(np.float64), inputs["x"].dtype
    rms = np.sqrt(np.mean(values * values, axis=-1, keepdims=True))
    pattern = 1.0 - 2.0 * (np.arange(values.shape[-1]) % 2)
    branch = (BRANCH_SHARE * values + 0.5 * rms * pattern).astype(dtype)
    residual = (values - branch.astype(np.float64)).astype(dtype)
    with np.errstate(over="ignore"):
        total = (branch.astype(np.float64) + residual.astype(np.float64)).astype(dtype)
    ds = (0.5 * np.flip(inputs["dy"].astype(np.float64), -1)).astype(dtype)
    fresh = {"x": branch, "residual": residual, "s": total, "ds": ds}
    return {**inputs, **{name: case.lay_out(v) for name, v in fresh.items()}}


def _check_add_forward(forward, case, inputs, eps, k, sample, saved, *, cast_before_gamma=False):
    inputs = add_inputs(case, inputs)
    axes = tuple(range(inputs["x"].ndim - k, inputs["x"].ndim))
    dtype, gamma = inputs["x"].dtype, inputs["gamma"].astype(np.float64)
    s, exact = _sums(inputs)
    y_ref, rstd = _reference(rms_norm, s, gamma, eps=eps, axis=axes, return_stats=True)
    unrounded = np.abs(_reference(rms_norm, exact, gamma, eps=eps, axis=axes) - y_ref)
    u_out = unit_roundoff(dtype)
    u_cast = u_out if cast_before_gamma else 0.0
    arithmetic = np.abs(gamma) * _rms_xhat_error(inputs["s"], rstd, k) + u_cast * np.abs(y_ref)
    budget = arithmetic + unrounded + 2 * u_out * np.abs(y_ref)
    got, overwritten = _call(forward, case, inputs, ("x", "residual", "gamma"), eps)
    if overwritten:
        return float("inf"), overwritten
    if not isinstance(got, tuple) or len(got) < 2:
        return float("inf"), "shape: forward must return (y, s), or (y, s, *saved)"
    y, s_got, *saved[:] = got
    worst = max(
        _compare("s", s_got, exact, u_out * np.abs(exact), dtype),
        _compare("y", y, y_ref, budget, dtype),
        key=lambda r: r[0],
    )
    if np.isfinite(worst[0]):  # the unrounded sum's move is unbiased: not in the bias's bound
        sample.append(_rounding_sample(np.asarray(y).astype(np.float64), y_ref, arithmetic, dtype))
    return worst


def _sums(inputs: dict) -> tuple[np.ndarray, np.ndarray]:
    """The stored sum s (correctly rounded) and the exact x + residual, in float64."""
    exact = inputs["x"].astype(np.float64) + inputs["residual"].astype(np.float64)
    return inputs["s"].astype(np.float64), exact


def _check_add_backward(backward, case, inputs, eps, k, saved, *, cast_before_gamma=False):
    inputs = add_inputs(case, inputs)
    axes = tuple(range(inputs["x"].ndim - k, inputs["x"].ndim))
    u_out = unit_roundoff(inputs["x"].dtype)
    u_cast = u_out if cast_before_gamma else 0.0
    # the norm's input is the stored sum; a kernel may have saved the unrounded sum's rstd
    refs, budgets = _rms_backward_budgets({**inputs, "x": inputs["s"]}, eps, k, u_cast)
    s, exact = _sums(inputs)
    _, rstd = _reference(rms_norm, exact, eps=eps, axis=axes, return_stats=True)
    dy, gamma = inputs["dy"].astype(np.float64), inputs["gamma"].astype(np.float64)
    moved = rms_norm_backward(dy, s, gamma, axis=axes, rstd=rstd)
    ds = inputs["ds"].astype(np.float64)
    dx = refs[0] + ds
    budgets = (
        budgets[0] + np.abs(moved[0] - refs[0]) + 2 * u_out * (np.abs(ds) + np.abs(dx)),
        budgets[1] + np.abs(moved[1] - refs[1]),
    )
    return _compare_gradients(
        backward,
        case,
        inputs,
        (eps, *saved),
        {"dx": dx, "dgamma": refs[1]},
        budgets,
        names=("dy", "ds", "s", "gamma"),
    )
