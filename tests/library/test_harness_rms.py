"""lnlib.harness.check_rms_norm passes correct RMSNorms and fails each planted bug; both checks use
a kernel's saved statistics.

Chapters "LayerNorm and its family" and "Check your own LayerNorm". Every planted bug is one change
to the correct kernel written here (a two-pass or Welford-style float32 RMSNorm that saves rstd for
its backward).
"""

import numpy as np
import pytest

from lnlib import harness, textbook
from lnlib.backward import layer_norm_backward
from lnlib.forward import layer_norm


def two_pass_mean_square(xw):
    return (xw * xw).mean(axis=-1, keepdims=True)


def welford_mean_square(xw):
    """The running mean of x**2, one feature at a time over every row at once."""
    ms = np.zeros(xw.shape[:-1] + (1,), dtype=xw.dtype)
    for count in range(1, xw.shape[-1] + 1):
        ms = ms + (xw[..., count - 1 : count] ** 2 - ms) / xw.dtype.type(count)
    return ms


def kernel(
    mean_square=two_pass_mean_square,
    *,
    centre=False,
    eps_outside=False,
    save=lambda rstd: rstd,
    ms_term=True,
):
    """A float32-statistics RMSNorm whose forward returns (y, saved rstd); each keyword plants one
    bug."""

    def statistics(x, eps):
        xw = x.astype(np.float32 if x.dtype.itemsize == 2 else x.dtype)
        if centre:  # LayerNorm's mean, which RMS norm never subtracts
            xw = xw - xw.mean(axis=-1, keepdims=True)
        ms = mean_square(xw)
        return xw, 1 / (np.sqrt(ms) + eps) if eps_outside else 1 / np.sqrt(ms + eps)

    def forward(x, gamma, eps):
        xw, rstd = statistics(x, eps)
        return (xw * rstd * gamma.astype(xw.dtype)).astype(x.dtype), save(rstd)

    def backward(dy, x, gamma, eps, rstd):
        xw, _ = statistics(x, eps)
        xhat, dyw = xw * rstd, dy.astype(xw.dtype)
        dxhat = dyw * gamma.astype(xw.dtype)
        through_ms = xhat * (dxhat * xhat).mean(axis=-1, keepdims=True) if ms_term else 0
        dgamma = (dyw * xhat).sum(axis=tuple(range(x.ndim - 1)))
        return ((dxhat - through_ms) * rstd).astype(x.dtype), dgamma.astype(x.dtype)

    return forward, backward


def run(forward, backward=None, **kwargs):
    with np.errstate(all="ignore"):  # some bugs divide by zero on the all-zero rows
        return harness.check_rms_norm(forward, backward, **kwargs)


@pytest.mark.parametrize(
    "pair",
    [
        (textbook.numpy_rms_norm, textbook.numpy_rms_norm_backward),
        kernel(two_pass_mean_square),
        kernel(welford_mean_square),
    ],
    ids=["numpy textbook", "two-pass, saved rstd", "welford, saved rstd"],
)
def test_correct_rms_norms_pass_every_case_and_dtype(pair):
    report = run(*pair)
    assert report.passed, str(report)
    runs = sum(
        len(harness.DTYPES) if c.dtypes is None else len(c.dtypes) for c in harness.RMS_CASES
    )
    assert len(report.results) == 2 * runs + 2  # forward and backward, and two rounding-bias rows
    assert not report.undefined


def test_pytorch_rms_norm_with_autograd_passes(torch):
    report = run(*harness.torch_rms_norm())
    assert report.passed, str(report)


@pytest.mark.parametrize(
    "bug, part, dtypes",
    [
        ({"ms_term": False}, "backward", set(harness.DTYPES)),
        ({"eps_outside": True}, "forward", set(harness.DTYPES)),
        ({"save": lambda rstd: rstd.astype(np.float16)}, "backward", {"float64", "float32"}),
        ({"centre": True}, "forward", set(harness.DTYPES)),
        ({"save": lambda rstd: 1 / rstd}, "backward", set(harness.DTYPES)),
    ],
    ids=[
        "dx without the mean-square term",
        "eps outside the root",
        "rstd saved in 16 bits",
        "mean subtracted (LayerNorm)",
        "sigma saved instead of rstd",
    ],
)
def test_each_planted_bug_fails(bug, part, dtypes):
    report = run(*kernel(**bug))
    assert not report.passed
    assert part in {r.part for r in report.failures}
    assert dtypes <= {r.dtype for r in report.failures if r.part == part}


def test_eps_zero_skips_only_the_all_zero_rows_and_says_why():
    report = run(textbook.numpy_rms_norm, textbook.numpy_rms_norm_backward, eps=0.0)
    assert report.passed, str(report)
    assert {r.case for r in report.undefined} == {"all-zero rows (4, 16)"}
    assert all("mean square is zero" in r.undefined for r in report.undefined)
    text = str(report)
    assert "n/a" in text and "undefined:" in text
    assert max(len(line) for line in text.splitlines()) <= harness.REPORT_WIDTH


def test_the_backward_gets_the_kernels_own_saved_statistic():
    seen = []

    def forward(x, gamma, eps):
        return textbook.numpy_rms_norm(x, gamma, eps), np.full(x.shape[:-1] + (1,), 7.0)

    def backward(dy, x, gamma, eps, *saved):
        seen.append(saved)
        return textbook.numpy_rms_norm_backward(dy, x, gamma, eps)

    run(forward, backward, dtypes=("float32",))
    assert seen and all(len(s) == 1 and np.all(s[0] == 7.0) for s in seen)


# check_layer_norm takes a kernel's saved (mean, rstd) the same way


def lnlib_with_stats(save=lambda rstd: rstd):
    def forward(x, gamma, beta, eps):
        y, mean, rstd = layer_norm(x, gamma, beta, eps=eps, return_stats=True)
        return y, mean, save(rstd)

    def backward(dy, x, gamma, eps, mean, rstd):
        return layer_norm_backward(dy, x, gamma, eps=eps, mean=mean, rstd=rstd)

    return forward, backward


def test_layer_norm_with_saved_statistics_passes():
    report = harness.check_layer_norm(*lnlib_with_stats())
    assert report.passed, str(report)


@pytest.mark.parametrize(
    "save, dtypes",
    [
        (lambda rstd: 1 / rstd, set(harness.DTYPES)),
        (lambda rstd: rstd.astype(np.float16), {"float64", "float32"}),
    ],
    ids=["sigma instead of rstd", "rstd in 16 bits"],
)
def test_layer_norm_backward_with_a_wrong_saved_rstd_fails(save, dtypes):
    report = harness.check_layer_norm(*lnlib_with_stats(save))
    assert {r.part for r in report.failures} == {"backward"}
    assert dtypes <= {r.dtype for r in report.failures}


def test_layer_norm_at_eps_zero_skips_the_undefined_cases_instead_of_blaming_the_kernel():
    report = harness.check_layer_norm(
        textbook.numpy_layer_norm, textbook.numpy_layer_norm_backward, eps=0.0
    )
    assert report.passed, str(report)
    undefined = {r.case for r in report.undefined}
    assert {"constant rows (4, 16)", "H = 1 (6, 1)"} <= undefined
    assert all(
        "variance is zero" in r.undefined and "eps=0" in r.undefined for r in report.undefined
    )


def test_pytorch_layer_norm_passes_at_eps_zero(torch):
    report = harness.check_layer_norm(*harness.torch_layer_norm(), eps=0.0)
    # but for its 16-bit dgamma and dbeta, summed in the storage dtype (see test_harness.py)
    assert all(
        r.part == "backward" and r.dtype in ("float16", "bfloat16") for r in report.failures
    ), str(report)
    assert report.undefined
