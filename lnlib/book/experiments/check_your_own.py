"""The numbers of the chapter "Check your own LayerNorm": how far two bugs and float16's rounding
move the output, against each dtype's unit roundoff, and what the kernel-check harness finds.
"""

from __future__ import annotations

import numpy as np

from ...harness import unit_roundoff
from ..tools import prose

__all__ = ["error_findings", "harness_findings"]


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
