"""The harness's default run flags every planted kernel bug and passes every correct implementation.

Chapter "Check your own LayerNorm". Each bug is flagged by ``check_layer_norm(bug)`` with no
arguments, and exactly on the cases that can show it: which those are follows from the cases'
definitions (their H, offset, eps, layout), not from a stored run. The correct implementations (the
numpy textbook, Welford, lnlib itself, PyTorch where installed) pass every check, the pooled
rounding-bias check included.
"""

import math
import re

import numpy as np
import pytest

from lnlib import harness as check
from lnlib import textbook, variants
from lnlib.backward import layer_norm_backward
from lnlib.forward import layer_norm
from lnlib.validation import BFLOAT16

FORWARD_CASES = {case.name: case for case in check.CASES}


def run(forward, backward=None):
    with np.errstate(all="ignore"):  # several bugs divide by zero or overflow on the way
        return check.check_layer_norm(forward, backward)


def failed_cases(report):
    return {r.case for r in report.failures}


def cases_where(predicate):
    return {name for name, case in FORWARD_CASES.items() if predicate(case)}


def lnlib_forward(x, gamma, beta, eps):
    return layer_norm(x, gamma, beta, eps=eps)


def lnlib_backward(dy, x, gamma, eps):
    return layer_norm_backward(dy, x, gamma, eps=eps)


@pytest.mark.parametrize(
    "forward, backward",
    [
        (textbook.numpy_layer_norm, textbook.numpy_layer_norm_backward),
        (check.welford_layer_norm, None),
        (lnlib_forward, lnlib_backward),
    ],
    ids=["numpy textbook", "welford", "lnlib"],
)
def test_correct_implementations_pass_the_default_run(forward, backward):
    report = check.check_layer_norm(forward, backward)
    assert report.passed, str(report)
    assert {r.dtype for r in report.results if r.case == check.BIAS} == {"float16", "bfloat16"}


def test_pytorch_passes_every_forward_and_every_float32_and_float64_check(torch):
    # its 16-bit backward sums dgamma and dbeta in the storage dtype: tests/library/test_harness.py
    report = check.check_layer_norm(*check.torch_layer_norm())
    assert {(r.part, r.dtype) for r in report.failures} <= {
        ("backward", "float16"),
        ("backward", "bfloat16"),
    }, str(report)


def test_a_dgamma_and_dbeta_summed_in_the_storage_dtype_fail_in_16_bits_only():
    report = run(textbook.numpy_layer_norm, variants.buggy_storage_dtype_dgamma)
    assert {(r.part, r.dtype) for r in report.failures} == {
        ("backward", "float16"),
        ("backward", "bfloat16"),
    }
    many = cases_where(lambda case: case.dy is not None and case.shape[0] > 2048)
    assert many and many <= failed_cases(report)
    for r in report.failures:
        if r.case in many:  # a 16-bit running sum of 4096 ones stalls (float16's at 2048)
            assert r.ratio > 50 and r.detail.startswith("dbeta"), r.detail


def test_the_defaults_hold_the_shapes_values_eps_and_layouts_kernels_get_wrong():
    sizes = [case.shape[-1] for case in check.CASES]
    assert any(h % 2 for h in sizes if h > 1)  # odd H
    assert all(
        any(h % width for h in sizes if h > 1) for width in (4, 8, 16)
    )  # a vector tail for each width
    assert 4096 in sizes and any(
        h > 1024 and h % 4 for h in sizes
    )  # LLaMA's H, and above 1024 with a tail
    assert any(
        abs(case.offset) >= 3e4 and case.dtypes is None for case in check.CASES
    )  # float16 holds 3e4
    assert any(abs(case.offset) >= 1e6 for case in check.CASES)
    assert {case.eps for case in check.CASES} - {None}  # a second eps
    assert any(  # more rows than a float16 running sum of dy = 1 can count (it stalls at 2048)
        case.shape[0] > 2048 and case.dy == 1 and "float16" in case.dtypes
        for case in check.CASES
        if case.dtypes
    )
    assert set(check.LAYOUTS) - {"contiguous"} <= {case.layout for case in check.CASES}


@pytest.mark.parametrize(
    "bug, shows_on",
    [
        (variants.buggy_vector_tail_skipped, lambda case: case.shape[-1] % 4 != 0),
        (variants.buggy_first_1024_features, lambda case: case.shape[-1] > 1024),
        (variants.buggy_clamped_inputs, lambda case: abs(case.offset) > 1e4),
        (variants.buggy_ignores_eps, lambda case: case.eps is not None),
        (variants.buggy_assumes_c_contiguous, lambda case: case.layout != "contiguous"),
        (variants.buggy_overwrites_input, lambda case: True),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_each_kernel_bug_fails_exactly_the_cases_that_can_show_it(bug, shows_on):
    report = run(bug)
    assert not report.passed
    assert failed_cases(report) - {check.BIAS} == cases_where(shows_on)


def test_an_input_overwritten_in_place_is_named_as_such():
    report = run(variants.buggy_overwrites_input)
    assert all(
        r.detail.startswith("overwrote: the call changed its input x") for r in report.failures
    )
    assert "overwrote" in str(report)


@pytest.mark.parametrize("name", ["gamma", "beta"])
def test_a_forward_that_changes_gamma_or_beta_fails(name):
    def scales_in_place(x, gamma, beta, eps):
        y = textbook.numpy_layer_norm(x, gamma, beta, eps)
        {"gamma": gamma, "beta": beta}[name][...] = (
            0  # e.g. a fused optimizer step in the wrong place
        )
        return y

    report = run(scales_in_place)
    assert {r.case for r in report.failures} == set(FORWARD_CASES)
    assert all(f"changed its input {name}" in r.detail for r in report.failures)


def test_a_backward_that_overwrites_dy_fails():
    def reuses_dy(dy, x, gamma, eps):
        dx, dgamma, dbeta = textbook.numpy_layer_norm_backward(dy, x, gamma, eps)
        dy[...] = dx  # writes dx into dy's buffer
        return dx, dgamma, dbeta

    report = run(textbook.numpy_layer_norm, reuses_dy)
    assert {r.part for r in report.failures} == {"backward"}
    assert all("changed its input dy" in r.detail for r in report.failures)


def test_a_truncating_bfloat16_cast_is_flagged_as_a_bias_and_only_as_one():
    report = run(variants.buggy_truncating_bfloat16)
    assert [(r.case, r.dtype) for r in report.failures] == [(check.BIAS, "bfloat16")]
    detail = report.failures[0].detail
    mean = float(re.search(r"toward zero is ([-+][0-9.]+) ulp", detail).group(1))
    assert mean == pytest.approx(-0.5, abs=0.05)  # chopping: uniform over (-1, 0] ulp, mean -1/2


@pytest.mark.parametrize(
    "bug, shows_in",
    [
        (variants.buggy_one_pass_variance, {"float64", "float32", "float16", "bfloat16"}),
        (variants.buggy_unbiased_variance, {"float64", "float32", "float16", "bfloat16"}),
        (variants.buggy_eps_outside_root, {"float64", "float32", "float16", "bfloat16"}),
        (variants.buggy_half_statistics, {"float16", "bfloat16"}),
        (variants.buggy_wrong_axis, {"float64", "float32", "float16", "bfloat16"}),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_the_common_bugs_are_still_flagged(bug, shows_in):
    report = run(bug)
    assert {r.dtype for r in report.failures} == shows_in


def test_a_dgamma_over_the_batch_only_is_flagged():
    report = run(textbook.numpy_layer_norm, variants.buggy_dgamma_over_batch_only)
    assert {r.part for r in report.failures} == {"backward"}
    assert {r.case for r in report.failures} == cases_where(lambda case: len(case.shape) == 3)


@pytest.mark.parametrize("layout", check.LAYOUTS)
def test_each_layout_holds_the_same_values_in_fresh_memory(layout):
    values = np.random.default_rng(0).normal(size=(3, 5, 7)).astype(BFLOAT16)
    laid_out = check.Case("c", values.shape, layout=layout).lay_out(values)
    again = check.Case("c", values.shape, layout=layout).lay_out(laid_out)
    np.testing.assert_array_equal(laid_out.astype(np.float64), values.astype(np.float64))
    assert laid_out.dtype == values.dtype and not np.shares_memory(laid_out, values)
    assert not np.shares_memory(again, laid_out)  # a copy of a laid-out array is fresh memory too
    strides = laid_out.strides
    expected = {
        "contiguous": laid_out.flags.c_contiguous,
        "transposed": laid_out.flags.f_contiguous and not laid_out.flags.c_contiguous,
        "sliced": strides[-1] == 2 and strides[-2] == 2 * (7 + 3),
        "strided": strides[-1] == 2 * 2,
        "reversed": all(s < 0 for s in strides),
    }
    assert expected[layout], strides


def test_the_harness_hands_over_its_layouts():
    seen = {}

    def records(x, gamma, beta, eps):
        seen.setdefault(x.shape, (x.flags.c_contiguous, min(x.strides)))
        return textbook.numpy_layer_norm(x, gamma, beta, eps)

    check.check_layer_norm(records, dtypes=("float32",))
    for case in check.CASES:
        if case.dtypes is not None and "float32" not in case.dtypes:
            continue
        contiguous, smallest_stride = seen[case.shape]
        assert contiguous == (case.layout == "contiguous") or case.shape[-1] == 1
        assert (smallest_stride < 0) == (case.layout == "reversed")


def test_rounding_bias_threshold_shrinks_like_one_over_root_n():
    p = check.BIAS_FALSE_ALARM
    for n in (100, 10000):
        zeros = np.zeros(n)
        on_the_edge = np.full(
            n, math.sqrt(math.log(4 / p) / (2 * n))
        )  # Hoeffding's a, computed here
        assert check.rounding_bias(on_the_edge, zeros, zeros)[0] == pytest.approx(1.0)
        assert check.rounding_bias(zeros, on_the_edge, zeros)[0] == pytest.approx(1.0)
    arithmetic = np.full(10000, 0.2)  # the arithmetic's bound adds to the threshold
    half = np.full(10000, math.sqrt(math.log(4 / p) / 20000) + 0.2)
    assert check.rounding_bias(half, half, arithmetic)[0] == pytest.approx(1.0)


def test_rounding_bias_tells_unbiased_from_biased_rounding():
    rng = np.random.default_rng(5)
    values = rng.normal(size=20000).astype(np.float32) * 3
    to_nearest = values.astype(BFLOAT16).astype(np.float64)
    truncated = (values.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32).astype(np.float64)
    ulp = np.ldexp(
        2.0**-7, np.frexp(np.abs(values.astype(np.float64)))[1] - 1
    )  # bfloat16's spacing
    for rounded, biased in ((to_nearest, False), (truncated, True)):
        error = (rounded - values) / ulp
        ratio, detail = check.rounding_bias(error, error * np.sign(values), np.zeros_like(error))
        assert (ratio > 1) == biased and bool(detail) == biased
    with pytest.raises(ValueError, match="at least one"):
        check.rounding_bias(np.array([]), np.array([]), np.array([]))


def test_case_arguments_are_checked():
    with pytest.raises(ValueError, match="layout must be one of"):
        check.Case("bad", (2, 3), layout="diagonal")
    with pytest.raises(ValueError, match="eps must be >= 0"):
        check.Case("bad", (2, 3), eps=-1.0)
    with pytest.raises(ValueError, match="float16 cannot hold"):
        check.check_layer_norm(
            textbook.numpy_layer_norm,
            cases=(check.Case("huge", (2, 8), offset=1e6),),
            dtypes=("float16",),
        )
