"""lnlib.harness: the harness passes correct implementations and catches the planted bugs (chapter
"Check your own LayerNorm")."""

import numpy as np
import pytest

from lnlib import harness, textbook, variants
from lnlib.backward import layer_norm_backward
from lnlib.forward import layer_norm


def test_a_correct_numpy_implementation_passes_everywhere():
    report = harness.check_layer_norm(textbook.numpy_layer_norm, textbook.numpy_layer_norm_backward)
    assert report.passed, str(report)
    pairs = sum(
        len(harness.DTYPES) if case.dtypes is None else len(case.dtypes) for case in harness.CASES
    )
    bias_rows = (
        2  # float16 and bfloat16: the only dtypes whose outputs the final rounding dominates
    )
    assert len(report.results) == 2 * pairs + bias_rows
    assert {r.dtype for r in report.results if r.case == harness.BIAS} == {"float16", "bfloat16"}


def test_lnlib_passes_its_own_harness():
    report = harness.check_layer_norm(
        lambda x, g, b, eps: layer_norm(x, g, b, eps=eps),
        lambda dy, x, g, eps: layer_norm_backward(dy, x, g, eps=eps),
    )
    assert report.passed, str(report)


def test_pytorch_cpu_fails_only_its_16_bit_dgamma_and_dbeta(torch):
    # its CPU kernel sums dgamma and dbeta in the storage dtype (chapter 13 shows dbeta stalling);
    # it splits the rows among its threads, so the stored run and this one use one thread
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        report = harness.check_layer_norm(*harness.torch_layer_norm())
    finally:
        torch.set_num_threads(threads)
    assert report.failures, str(report)
    for r in report.failures:
        assert (r.part, r.dtype in ("float16", "bfloat16")) == ("backward", True), str(report)
        assert r.detail.startswith(("dgamma", "dbeta")), r.detail
    many = [c.name for c in harness.CASES if c.dy is not None and c.shape[0] > 2048]
    assert {(r.case, r.dtype) for r in report.failures} >= {
        (name, dtype) for name in many for dtype in ("float16", "bfloat16")
    }


def test_pytorch_cpu_in_mixed_precision_fails_on_its_sums_not_on_dtypes(torch):
    """Under param_dtype="float32" the wrapper returns PyTorch's float32 dgamma and dbeta as they
    are: what fails is still its 16-bit sums' values (the rows split among threads, so one),
    never a dtype; `device` is where PyTorch computes (the CPU here)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        report = harness.check_layer_norm(
            *harness.torch_layer_norm(device="cpu"), param_dtype="float32"
        )
    finally:
        torch.set_num_threads(threads)
    assert report.failures, str(report)
    for r in report.failures:
        assert (r.part, r.dtype in ("float16", "bfloat16")) == ("backward", True), str(report)
        assert r.detail.startswith(("dgamma", "dbeta")) and "dtype" not in r.detail, r.detail


@pytest.mark.parametrize(
    "bug, where",
    [
        (variants.buggy_unbiased_variance, {"float64", "float32", "float16"}),
        (variants.buggy_eps_outside_root, {"float64", "float32", "float16", "bfloat16"}),
        (variants.buggy_half_statistics, {"float16", "bfloat16"}),
        (variants.buggy_wrong_axis, {"float64", "float32", "float16", "bfloat16"}),
    ],
)
def test_each_planted_forward_bug_is_caught_in_the_dtypes_it_shows_in(bug, where):
    with np.errstate(all="ignore"):  # the bugs themselves overflow or divide by zero
        report = harness.check_layer_norm(bug)
    assert not report.passed
    assert where <= {r.dtype for r in report.failures}
    assert str(report).count("ok") < len(report.results)


def test_statistics_in_half_precision_pass_only_in_float32_and_float64():
    with np.errstate(all="ignore"):
        failed = {
            r.dtype for r in harness.check_layer_norm(variants.buggy_half_statistics).failures
        }
    assert failed == {"float16", "bfloat16"}


def test_a_dgamma_summed_over_the_batch_only_is_caught_by_its_shape():
    report = harness.check_layer_norm(
        textbook.numpy_layer_norm, variants.buggy_dgamma_over_batch_only
    )
    assert {r.part for r in report.failures} == {"backward"}
    assert all("shape: dgamma" in r.detail for r in report.failures)


def test_the_table_reads_at_a_glance():
    report = harness.check_layer_norm(
        variants.buggy_eps_outside_root, dtypes=("float64", "float16")
    )
    lines = str(report).splitlines()
    assert lines[0].startswith("LayerNorm check, eps=1e-05: ") and "checks passed" in lines[0]
    # the first line alone, for a page that states the count and folds the table
    passed = len(report.results) - len(report.failures)
    assert report.summary == lines[0]
    assert report.summary.endswith(f": {passed} of {len(report.results)} checks passed")
    assert lines[1].split() == ["float64", "float16"]
    for line, case in zip(lines[2 : 2 + len(harness.CASES)], harness.CASES, strict=True):
        assert line.startswith(f"forward  {case.name} ")
    assert any("×" in line for line in lines)
    assert max(len(line) for line in lines) <= harness.REPORT_WIDTH


def test_an_implementation_that_raises_is_reported_not_propagated():
    def broken(x, gamma, beta, eps):
        raise RuntimeError("kernel launch failed")

    report = harness.check_layer_norm(broken, dtypes=("float32",))
    assert not report.passed and all("kernel launch failed" in r.detail for r in report.failures)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"forward": "not a function"}, TypeError),
        ({"forward": textbook.numpy_layer_norm, "dtypes": ("int8",)}, ValueError),
        ({"forward": textbook.numpy_layer_norm, "normalized_ndim": 3}, ValueError),
    ],
)
def test_bad_arguments_get_clear_errors(kwargs, error):
    with pytest.raises(error):
        harness.check_layer_norm(**kwargs)


def test_a_report_lists_only_the_failures_it_can_explain():
    # a report rebuilt from stored ratios (chapter 16's PyTorch table) has no details to show
    stored = harness.CheckReport(
        (
            harness.CheckResult("backward", "a", "float16", 3.0),
            harness.CheckResult("backward", "b", "float16", 2.0, "dbeta[0] = 2048, reference 4096"),
        ),
        ("float16",),
        1e-5,
    )
    text = str(stored)
    assert "backward / b / float16:" in text and "dbeta[0] = 2048" in text
    assert "backward / a / float16:" not in text and "×3.00" in text


def _mixed_forward(x, gamma, beta, eps):
    """Mixed precision as training keeps it: float32 statistics for 16-bit x, y in x's dtype."""
    wide = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    mu, var = wide.mean(-1, keepdims=True), wide.var(-1, keepdims=True)
    return ((wide - mu) / np.sqrt(var + eps) * gamma + beta).astype(x.dtype)


def _mixed_backward(dy, x, gamma, eps, *, half_sum=False):
    """dx in x's dtype; dgamma and dbeta summed in float32 and returned in float32 for 16-bit x
    (with `half_sum`, dbeta summed row by row in the 16-bit dtype instead, then widened)."""
    wide = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    grad = dy.astype(wide.dtype)
    rstd = 1 / np.sqrt(wide.var(-1, keepdims=True) + eps)
    xhat = (wide - wide.mean(-1, keepdims=True)) * rstd
    dxhat = grad * gamma
    dx = rstd * (
        dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True)
    )
    rows = tuple(range(x.ndim - 1))
    dgamma, dbeta = (grad * xhat).sum(rows), grad.sum(rows)
    if half_sum and x.dtype.itemsize < 4:
        dbeta = np.zeros(dy.shape[-1], dtype=dy.dtype)
        for row in dy.reshape(-1, dy.shape[-1]):
            dbeta = (dbeta + row).astype(dy.dtype)
    params = np.float32 if x.dtype.itemsize < 4 else x.dtype
    return dx.astype(x.dtype), dgamma.astype(params), dbeta.astype(params)


def test_float32_parameters_for_16_bit_data_are_checked_as_mixed_precision():
    """param_dtype="float32" (learner B: a correct mixed-precision kernel, float32 γ and dγ,
    failed every 16-bit backward on dtype alone): γ and β come as float32 for 16-bit x, dγ and dβ
    are expected in float32, and a dβ summed in the 16-bit dtype still fails."""
    given = harness.harness_inputs(param_dtype="float32")
    for (case, dtype), inputs in given.items():
        wide = dtype in ("float16", "bfloat16")
        assert inputs["gamma"].dtype == (np.float32 if wide else inputs["x"].dtype), (case, dtype)
        assert inputs["x"].dtype.name == dtype
    mixed = harness.check_layer_norm(_mixed_forward, _mixed_backward, param_dtype="float32")
    assert mixed.passed, str(mixed)
    as_before = harness.check_layer_norm(_mixed_forward, _mixed_backward)
    assert as_before.failures and all(
        "expected" in r.detail and "(gamma's)" in r.detail for r in as_before.failures
    ), str(as_before)
    stalled = harness.check_layer_norm(
        _mixed_forward,
        lambda *args: _mixed_backward(*args, half_sum=True),
        param_dtype="float32",
    )
    assert {r.dtype for r in stalled.failures} == {"float16", "bfloat16"}, str(stalled)
    assert all(r.detail.startswith("dbeta") for r in stalled.failures), str(stalled)
    with pytest.raises(ValueError, match="param_dtype"):
        harness.check_layer_norm(_mixed_forward, param_dtype="float16")
