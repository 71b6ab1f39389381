"""`cast_before_gamma=True` widens the harness budget by exactly the roundings of an eager ordering
that casts x̂ back to the input's dtype before γ (Hugging Face's LlamaRMSNorm), and no more.

Chapter "Check your own LayerNorm", § "Hugging Face's ordering". The numpy model of that ordering
(lnlib.book.experiments.check_your_own.eager_rms_norm) is compared with the module itself run by
PyTorch where PyTorch is installed.
"""

import numpy as np
import pytest

from lnlib import harness, textbook, variants
from lnlib.book.experiments.check_your_own import eager_rms_norm
from lnlib.book.experiments.gradients import SAVES, rms_kernel

HALF = ("float16", "bfloat16")


def half_failures(report):
    return [r for r in report.failures if r.dtype in HALF]


@pytest.fixture(scope="module")
def eager_reports():
    return {
        cast: harness.check_rms_norm(*eager_rms_norm(), cast_before_gamma=cast) for cast in (0, 1)
    }


def test_eager_ordering_fails_only_its_16_bit_backward_and_float64_by_default(eager_reports):
    report = eager_reports[0]
    failed = {(r.part, r.dtype) for r in report.failures}
    assert {("backward", d) for d in HALF} <= failed  # the roundings of x̂, γ·dy and dy·x̂
    assert not {("forward", d) for d in HALF} & failed
    assert not any(r.dtype == "float32" for r in report.failures)
    assert all(r.ratio > 1e4 for r in report.failures if r.dtype == "float64")  # float32 inside


def test_cast_before_gamma_admits_the_eager_ordering_in_16_bits(eager_reports):
    assert half_failures(eager_reports[1]) == []
    float64 = [r for r in eager_reports[1].failures if r.dtype == "float64"]
    assert float64 and all(r.ratio > 1e4 for r in float64)  # the option widens 16 bits only


def test_cast_before_gamma_still_fails_each_planted_layer_norm_bug():
    forward_bugs = (
        variants.buggy_unbiased_variance,
        variants.buggy_eps_outside_root,
        variants.buggy_half_statistics,
        variants.buggy_wrong_axis,
    )
    backward_bugs = (variants.buggy_dgamma_over_batch_only, variants.buggy_storage_dtype_dgamma)
    with np.errstate(all="ignore"):
        reports = [harness.check_layer_norm(bug, cast_before_gamma=True) for bug in forward_bugs]
        reports += [
            harness.check_layer_norm(textbook.numpy_layer_norm, bug, cast_before_gamma=True)
            for bug in backward_bugs
        ]
    assert not any(r.passed for r in reports)
    # the two bugs that only 16-bit arithmetic shows are still seen there
    for report in (reports[2], reports[5]):
        assert half_failures(report), str(report)


def test_cast_before_gamma_leaves_float32_budgets_alone():
    """float32's roundoff is what the option adds in float32: a float16 rstd still fails there."""
    report = harness.check_rms_norm(*rms_kernel(SAVES["rstd in float16"]), cast_before_gamma=True)
    assert any(r.dtype == "float32" for r in report.failures)


def test_cast_before_gamma_leaves_out_only_the_rounding_bias_rows(eager_reports):
    """Each output is rounded twice, so the pooled one-rounding bias check is not made."""
    dropped = {(r.part, r.case, r.dtype) for r in eager_reports[0].results} - {
        (r.part, r.case, r.dtype) for r in eager_reports[1].results
    }
    assert dropped == {("forward", harness.BIAS, d) for d in HALF}


def test_numpy_model_matches_pytorch_running_the_module(torch, llama_rms_norm, eager_reports):
    torch.set_num_threads(1)
    module = llama_rms_norm
    for cast, model in eager_reports.items():
        real = harness.check_rms_norm(
            *harness.torch_module(lambda size, eps: module(size, eps=eps)), cast_before_gamma=cast
        )
        assert [r.passed for r in real.results] == [r.passed for r in model.results]
        assert [r.case for r in real.results] == [r.case for r in model.results]


def test_the_report_suggests_the_option_when_it_explains_every_16_bit_failure(eager_reports):
    report = eager_reports[0]
    count = len(half_failures(report))
    assert report.hint.startswith(f"hint: {count} failed checks in float16 and bfloat16 pass with")
    assert (
        'see chapter "Check your own LayerNorm", section "Hugging Face\'s ordering".'
        in " ".join(str(report).split())
    )
    assert "cast_before_gamma" not in eager_reports[1].hint  # run with the option: not suggested


def test_no_suggestion_where_the_option_would_not_explain_the_failures():
    """dγ and dβ summed in 16 bits fail whatever the rounding of x̂: no hint."""
    report = harness.check_layer_norm(
        textbook.numpy_layer_norm, variants.buggy_storage_dtype_dgamma
    )
    assert half_failures(report) and report.hint == ""


def promoting_rms_norm(x, gamma, eps):
    """Right values, returned in the dtype numpy's promotion gives x̂ times a float32 gamma."""
    wide = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    return (wide / np.sqrt((wide * wide).mean(-1, keepdims=True) + eps)).astype(x.dtype) * gamma


def test_a_report_whose_failures_are_all_float32_promotion_says_so():
    """Learner B (2026-11-29, third): Hugging Face's module with float32 weights failed 28 checks
    on their dtype alone, with no hint."""
    report = harness.check_rms_norm(promoting_rms_norm, param_dtype="float32")
    assert report.failures and all(r.detail.startswith("dtype:") for r in report.failures)
    assert report.hint.startswith(f"hint: {len(report.failures)} failed checks in float16 and")
    assert "param_dtype=None" in str(report).replace("\n", " ")
    assert harness.check_rms_norm(promoting_rms_norm).passed  # the values, judged, are right


def test_a_real_dtype_bug_gets_no_promotion_hint():
    def widening(x, gamma, eps):  # float64 out for every input: not a weight's promotion
        return promoting_rms_norm(x.astype(np.float64), gamma.astype(np.float64), eps)

    report = harness.check_rms_norm(widening, param_dtype="float32")
    assert report.failures and report.hint == ""
