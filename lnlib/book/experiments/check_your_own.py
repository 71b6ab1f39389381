"""The numbers of the chapter "Check your own LayerNorm": how far two bugs and float16's rounding
move the output, against each dtype's unit roundoff, and what the kernel-check harness finds.
"""

from __future__ import annotations

import numpy as np

from ...harness import CASES, harness_inputs, unit_roundoff
from ...variants import buggy_storage_dtype_dgamma
from ..tools import prose

__all__ = ["error_findings", "harness_findings", "storage_sum_findings", "pytorch_findings"]


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
