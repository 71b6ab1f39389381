"""The numbers of the chapter "Check your own LayerNorm": how far two bugs and float16's rounding
move the output, against each dtype's unit roundoff, and what the kernel-check harness finds.
"""

from __future__ import annotations

import numpy as np

from ...harness import CASES, DTYPES, harness_inputs, unit_roundoff
from ...variants import buggy_storage_dtype_dgamma
from ..tools import prose

__all__ = [
    "eager_rms_norm",
    "eager_findings",
    "error_findings",
    "harness_findings",
    "pytorch_findings",
    "storage_sum_findings",
]


def error_findings(errors: dict) -> dict:
    """What chapter "Check your own LayerNorm" says about the errors of its first printout, by glue
    key.

    Parameters
    ----------
    errors : dict
        The largest absolute error of each output against the exact (float64) one, keyed as the
        chapter prints them: ``"buggy_unbiased_variance"`` and ``"buggy_eps_outside_root"``
        (float64), ``"numpy_layer_norm, float16"`` (the correct kernel in float16).

    Returns
    -------
    dict of str to ProseNumber
        ``ex_unbiased``, ``ex_eps``, ``ex_half``: those three errors, to one significant digit;
        ``u64``, ``u16``: the unit roundoff of float64 and float16; ``f16_tiny``: float16's smallest
        positive (subnormal) number; ``f16_tiny_over_eps``: how many times ε = 10⁻⁸ it is.
    """
    tiny = float(np.finfo(np.float16).smallest_subnormal)
    return {
        "ex_unbiased": prose.number(float(errors["buggy_unbiased_variance"]), ".0e"),
        "ex_eps": prose.number(float(errors["buggy_eps_outside_root"]), ".0e"),
        "ex_half": prose.number(float(errors["numpy_layer_norm, float16"]), ".0e"),
        "u64": prose.number(unit_roundoff("float64"), ".1e"),
        "u16": prose.number(unit_roundoff("float16"), ".1e"),
        "f16_tiny": prose.number(tiny, ".2e"),
        "f16_tiny_over_eps": prose.number(tiny / 1e-8, ".0f"),
    }


def harness_findings(bugs: dict, report) -> dict:
    """What chapter "Check your own LayerNorm" says about the harness's runs, by glue key.

    Parameters
    ----------
    bugs : dict
        Each planted bug's :class:`lnlib.harness` report (anything with a ``passed`` attribute).
    report : object
        The correct kernel's report; its ``results`` are the checks the harness ran.

    Returns
    -------
    dict of str to ProseNumber
        ``n_bugs_caught``: how many of the bugs' reports failed; ``n_checks``: how many checks
        one run of the harness makes.
    """
    return {
        "n_bugs_caught": prose.number(sum(not r.passed for r in bugs.values())),
        "n_checks": prose.number(len(report.results)),
    }


def _counting_case():
    """The default case whose dy is 1 everywhere, so dβ counts its rows."""
    return next(case for case in CASES if case.dy == 1)


def storage_sum_findings() -> dict:
    """What chapter "Check your own LayerNorm" says of dγ and dβ summed in the storage dtype, by
    glue key.

    Runs :func:`lnlib.variants.buggy_storage_dtype_dgamma` on the harness's own inputs of its case
    with dy = 1 (dβ counts the rows, as in chapter "Computing it right: numerics").

    Returns
    -------
    dict of str to ProseNumber
        ``count_rows``: the case's rows; ``count_f16``, ``count_bf16``: the largest dβ entry the
        bug returns in float16 and in bfloat16 (where each running sum stalls).
    """
    case = _counting_case()
    found = {"count_rows": prose.number(case.shape[0])}
    for (each, dtype), inputs in harness_inputs(cases=(case,), dtypes=case.dtypes).items():
        dbeta = buggy_storage_dtype_dgamma(inputs["dy"], inputs["x"], inputs["gamma"], 1e-5)[2]
        key = {"float16": "count_f16", "bfloat16": "count_bf16"}[dtype]
        found[key] = prose.number(float(dbeta.astype(np.float64).max()), ".0f")
    return found


def pytorch_findings(report) -> dict:
    """What chapter "Check your own LayerNorm" says of PyTorch's stored run of the harness, by glue
    key.

    Parameters
    ----------
    report : lnlib.harness.CheckReport
        PyTorch's report, as :func:`lnlib.book.tools.pytorch_reference.stored_check_report` rebuilds
        it.

    Returns
    -------
    dict of str to ProseNumber
        ``torch_failed``: its failed checks; ``torch_half_backward``: its backward checks in float16
        and bfloat16 (the only kind it fails: asserted); ``torch_checks``: all its checks;
        ``torch_count_f16``: its error ratio on the float16 backward of the case with dy = 1.
    """
    half = ("float16", "bfloat16")
    backward = [r for r in report.results if r.part == "backward" and r.dtype in half]
    if any(r not in backward for r in report.failures):
        raise ValueError("PyTorch failed a check other than a 16-bit backward one: reword.")
    name = _counting_case().name
    ratio = next(r.ratio for r in backward if r.case == name and r.dtype == "float16")
    return {
        "torch_failed": prose.number(len(report.failures)),
        "torch_half_backward": prose.number(len(backward)),
        "torch_checks": prose.number(len(report.results)),
        "torch_count_f16": prose.number(ratio, ".0f"),
    }


def eager_rms_norm():
    """Hugging Face's LlamaRMSNorm in numpy, op by op as PyTorch's eager mode and autograd run it
    (chapter "Check your own LayerNorm", § "Hugging Face's ordering").

    The module computes ``weight * hidden_states.to(input_dtype)`` after its statistics and x̂ in
    float32: x̂ is cast back to the input's dtype before γ multiplies it. Each operation rounds to
    the dtype PyTorch gives its result (the promotion of its operands'); autograd rounds each
    gradient to its tensor's dtype, so γ·dy is rounded to the input's dtype, and dγ sums the rounded
    products dy·x̂ (in float32, as PyTorch's reductions of 16-bit data accumulate).

    Returns
    -------
    (forward, backward)
        As :func:`lnlib.check_rms_norm` takes them, for a model kept in one dtype (γ in the dtype
        of x).
    """

    def statistics(x, eps):
        wide = x.astype(np.float32)  # hidden_states.to(torch.float32), float64 inputs included
        rstd = 1 / np.sqrt((wide * wide).mean(axis=-1, keepdims=True) + np.float32(eps))
        return wide * rstd, rstd

    def times(a, b):  # one elementwise product, rounded as PyTorch rounds its result
        return (a.astype(np.float64) * b.astype(np.float64)).astype(np.result_type(a, b))

    def forward(x, gamma, eps):
        xhat, _ = statistics(x, eps)
        return times(gamma, xhat.astype(x.dtype))

    def backward(dy, x, gamma, eps):
        xhat, rstd = statistics(x, eps)
        dxhat = times(dy, gamma).astype(x.dtype).astype(np.float32)  # the cast's gradient
        rows = tuple(range(x.ndim - 1))
        dgamma = times(dy, xhat.astype(x.dtype)).astype(np.float32).sum(axis=rows)
        dx = rstd * (dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
        return dx.astype(x.dtype), dgamma.astype(gamma.dtype)

    return forward, backward


def eager_findings(eager: dict, planted: list, rms_bug, three) -> dict:
    """What chapter "Check your own LayerNorm" says of :func:`eager_rms_norm` under
    :func:`lnlib.check_rms_norm`, by glue key (asserts the pattern the chapter describes).

    Parameters
    ----------
    eager : dict
        The eager ordering's reports, keyed by ``cast_before_gamma`` (False and True).
    planted : list
        The planted LayerNorm bugs' reports, run with ``cast_before_gamma=True``.
    rms_bug : lnlib.harness.CheckReport
        The RMSNorm kernel that saves rstd in float16, checked with ``cast_before_gamma=True``.
    three : lnlib.harness.CheckReport
        The eager ordering with ``cast_before_gamma=True`` in float32, float16 and bfloat16 (it
        computes float64 in float32): it must pass.

    Returns
    -------
    dict of str to ProseNumber
        ``eager_half_failed``, ``eager_half_checks``: failed and run 16-bit checks of the default
        budget; ``eager_f16_worst``, ``eager_bf16_worst``, ``eager_f64_worst``: the worst error
        ratio in float16, bfloat16 and float64 (it computes float64 in float32);
        ``eager_cast_half_failed``: its 16-bit failures with ``cast_before_gamma=True``;
        ``planted_cast_caught``: how many planted bugs still fail then (all: asserted);
        ``rms_bug_cast_half``: the 16-bit checks the rstd-in-float16 kernel still fails then;
        ``eager_three``: the first line's count of ``three`` ("84 of 84 checks passed").
    """
    half = ("float16", "bfloat16")
    default = eager[False]
    failed = [r for r in default.failures if r.dtype in half]
    if any(
        r.dtype == "float32" or (r.dtype in half and r.part != "backward") for r in default.failures
    ):
        raise ValueError("the eager ordering failed another kind of check: reword the chapter.")
    if any(r.passed for r in planted):
        raise ValueError("a planted bug passes with cast_before_gamma=True: reword the chapter.")
    if not three.passed:
        raise ValueError("the eager ordering fails in its own dtypes: reword the chapter.")
    worst = {
        d: max((r.ratio for r in default.failures if r.dtype == d), default=0.0) for d in DTYPES
    }
    return {
        "eager_half_failed": prose.number(len(failed)),
        "eager_half_checks": prose.number(sum(r.dtype in half for r in default.results)),
        "eager_f16_worst": prose.number(worst["float16"], ".0f"),
        "eager_bf16_worst": prose.number(worst["bfloat16"], ".0f"),
        "eager_f64_worst": prose.number(worst["float64"], ".1e"),
        "eager_cast_half_failed": prose.number(sum(r.dtype in half for r in eager[True].failures)),
        "planted_cast_caught": prose.number(sum(not r.passed for r in planted)),
        "rms_bug_cast_half": prose.number(sum(r.dtype in half for r in rms_bug.failures)),
        "eager_three": f"{len(three.results)} of {len(three.results)} checks passed",
    }
