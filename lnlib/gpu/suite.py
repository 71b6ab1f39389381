"""The chapter's kernels and planted bugs run through lnlib's harness (chapter "LayerNorm on a
GPU", § "Checked on any machine"): one list, which the chapter runs on numba's simulator and
``benchmarks/gpu_checks.py`` on a GPU.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..harness import CheckReport, check_layer_norm, check_rms_norm
from ..harness_add import check_add_rms_norm
from . import bugs, launch

#: The dtypes every kernel is checked in (bfloat16 widened to float32 on the host).
DTYPES = ("float32", "float16", "bfloat16")


def _forward(kernel: str):
    return lambda x, g, b, eps: launch.layer_norm(x, g, b, eps, kernel=kernel)


def _kernel_4(x, g, b, eps):  # a zero residual, so the harness's inputs are its s
    return launch.add_layer_norm(x, 0 * x, g, b, eps)[1:]


def _kernel_5(x, residual, g, eps):  # (y, s, rstd): check_add_rms_norm's order
    s, y, rstd = launch.add_rms_norm(x, residual, g, eps)
    return y, s, rstd


def rms_forward(x, g, eps):
    """Kernel 5 with a zero residual, as RMSNorm's forward: ``(y, rstd)``."""
    return launch.add_rms_norm(x, 0 * x, g, eps)[1:]


def kernel_reports(
    cases=launch.CASES, rms_cases=launch.RMS_CASES, dtypes=DTYPES
) -> dict[str, CheckReport]:
    """Each kernel's report from the harness, by the name the chapter gives it.

    Parameters
    ----------
    cases, rms_cases : sequence of lnlib.harness.Case
        LayerNorm's cases, and RMSNorm's (with its all-zero rows); the simulator's small ones by
        default, the harness's own (:data:`lnlib.harness.CASES`) on a GPU.
    dtypes : sequence of str
    """
    reports = {
        name: check_layer_norm(_forward(name), dtypes=dtypes, cases=cases)
        for name in launch.FORWARD_KERNELS
    }
    reports["kernel 4"] = check_layer_norm(_kernel_4, dtypes=dtypes, cases=cases)
    reports["backward"] = check_layer_norm(
        launch.layer_norm, launch.layer_norm_backward, dtypes=dtypes, cases=cases
    )
    reports["kernel 5, bwd"] = check_add_rms_norm(
        _kernel_5, launch.add_rms_norm_backward, dtypes=dtypes, cases=rms_cases
    )
    reports["RMSNorm bwd"] = check_rms_norm(
        rms_forward, launch.rms_norm_backward, dtypes=dtypes, cases=rms_cases
    )
    return reports


def planted_reports(
    cases=launch.CASES, rms_cases=launch.RMS_CASES, dtypes=DTYPES
) -> dict[str, CheckReport]:
    """The harness's reports on three of :mod:`lnlib.gpu.bugs`' planted bugs: each must fail.

    "no barrier" (the tree sum without its barrier), "racy dγ" (every thread adding into one
    dγ; kernel 1's forward saves its statistics) and "LayerNorm's dx in RMSNorm". A race reads
    what no thread wrote yet, and numpy may warn of what the harness then computes from it
    (an overflow, a NaN), from one run to the next; the warnings are silenced here, where
    garbage is planted, and the reports say what failed.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _planted(cases, rms_cases, dtypes)


def _planted(cases, rms_cases, dtypes) -> dict[str, CheckReport]:
    return {
        "no barrier": check_layer_norm(bugs.no_barrier_forward, dtypes=dtypes, cases=cases),
        "racy dγ": check_layer_norm(
            _forward("thread per row"), bugs.racy_backward, dtypes=dtypes, cases=cases
        ),
        "LayerNorm's dx in RMSNorm": check_rms_norm(
            rms_forward, bugs.centred_rms_backward, dtypes=dtypes, cases=rms_cases
        ),
    }
