"""lnlib.harness_add.check_add_rms_norm passes correct fused add + RMSNorm kernels, whichever sum
they normalize, and fails each planted bug (learner B: the checklist's "fused (add +) RMSNorm kernel
checked against lnlib" checked only the norm).

Chapters "LayerNorm on a GPU" and "Check your own LayerNorm". The kernels are numpy models of the
fused kernels the chapter reads: the sum and the statistics in float32 for 16-bit data, s stored in
the input's dtype, rstd saved for the backward pass.
"""

import numpy as np
import pytest

from lnlib.harness import RMS_CASES
from lnlib.harness_add import BRANCH_SHARE, add_inputs, check_add_rms_norm


def _wide(dtype):
    return np.float64 if dtype == np.float64 else np.float32


def fused(*, normalize_stored=False, residual=True, half_statistics=False, branch_only=False):
    """A fused add + RMSNorm forward returning (y, s, rstd); it normalizes its unrounded float32
    sum (vLLM's variance, the book's kernel 5 in bfloat16) or, with `normalize_stored`, the stored
    s (PyTorch's eager ``residual + hidden`` then an RMSNorm); the other keywords plant bugs."""

    def forward(x, res, gamma, eps):
        w = x.dtype if half_statistics else _wide(x.dtype)
        z = x.astype(w) + (res.astype(w) if residual else 0)
        s = z.astype(x.dtype)
        if normalize_stored:
            z = s.astype(w)
        if branch_only:  # stores the sum, normalizes the branch
            z = x.astype(w)
        with np.errstate(over="ignore"):  # 16-bit statistics overflow: a planted bug
            rstd = 1 / np.sqrt((z * z).mean(-1, keepdims=True) + np.asarray(eps, dtype=w))
        return (z * rstd * gamma.astype(w)).astype(x.dtype), s, rstd

    return forward


def fused_backward(*, add_ds=True, storage_dgamma=False):
    """Its backward: (ds_total, dgamma) from dy, the stream's ds, the stored s and the saved rstd;
    the keywords plant bugs."""

    def backward(dy, ds, s, gamma, eps, rstd):
        w = _wide(s.dtype)
        shat = s.astype(w) * rstd
        g = dy.astype(w) * gamma.astype(w)
        dx = rstd * (g - shat * (g * shat).mean(-1, keepdims=True))
        if add_ds:
            dx = dx + ds.astype(w)
        terms = (dy.astype(w) * shat).reshape(-1, s.shape[-1])
        if storage_dgamma:  # a running sum kept in the input's dtype
            dgamma = np.zeros(s.shape[-1], dtype=s.dtype)
            for row in terms.astype(s.dtype):
                dgamma = (dgamma + row).astype(s.dtype)
        else:
            dgamma = terms.sum(axis=0)
        return dx.astype(s.dtype), dgamma.astype(gamma.dtype)

    return backward


@pytest.mark.parametrize("normalize_stored", [False, True], ids=["unrounded sum", "stored s"])
def test_a_correct_fused_kernel_passes_whichever_sum_it_normalizes(normalize_stored):
    report = check_add_rms_norm(fused(normalize_stored=normalize_stored), fused_backward())
    assert report.passed, str(report)
    assert {r.dtype for r in report.results} == {"float64", "float32", "float16", "bfloat16"}
    assert {r.case for r in report.results} >= {c.name for c in RMS_CASES}


def test_the_add_is_checked_and_rounds():
    """The branch and the stream of every case sum to s within one rounding, s stays the case's
    input to a few roundings (rows of zeros exactly), and neither part is parallel to s, so a
    kernel that ignores the residual, or normalizes the branch alone, fails in every dtype (the
    truth audit: with the branch 0.3 s, RMSNorm's scale invariance let it pass)."""
    from lnlib.harness import harness_inputs

    for (case, dtype), inputs in harness_inputs(cases=RMS_CASES).items():
        parts = add_inputs(case, inputs)
        assert parts["x"].dtype == parts["residual"].dtype == parts["s"].dtype == inputs["x"].dtype
        wide = {name: v.astype(np.float64) for name, v in parts.items()}
        np.testing.assert_array_equal(parts["s"], (wide["x"] + wide["residual"]).astype(dtype))
        u = 2.0 ** -{"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}[dtype]
        given = inputs["x"].astype(np.float64)  # two roundings of numbers up to 2x the row's
        row_max = np.abs(given).max(axis=-1, keepdims=True)
        assert np.all(np.abs(wide["s"] - given) <= 4 * u * row_max), (case.name, dtype)
        if not case.spread and not case.offset:  # rows of zeros stay zeros
            assert not wide["s"].any()
        if wide["s"].shape[-1] > 1 and np.abs(wide["s"]).max() > 0:
            cosine = np.sum(wide["x"] * wide["s"], -1) / (
                np.linalg.norm(wide["x"], axis=-1) * np.linalg.norm(wide["s"], axis=-1)
            )
            assert np.all(cosine < 0.99), (case.name, dtype)
    assert BRANCH_SHARE not in (0.25, 0.5)  # no power of two: the add rounds
    for planted in (fused(residual=False), fused(branch_only=True)):
        report = check_add_rms_norm(planted)
        assert {f.dtype for f in report.failures} >= {"float64", "float32", "float16", "bfloat16"}


def test_a_truncated_sum_fails():
    """s stored by dropping bits (a float32 to bfloat16 cast that truncates) is off by up to an
    ulp: more than one rounding allows."""
    import ml_dtypes

    forward = fused()

    def truncating_sum(x, res, gamma, eps):
        y, s, rstd = forward(x, res, gamma, eps)
        if x.dtype == ml_dtypes.bfloat16:
            z = x.astype(np.float32) + res.astype(np.float32)
            s = (z.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
            s = s.astype(ml_dtypes.bfloat16)
        return y, s, rstd

    report = check_add_rms_norm(truncating_sum, dtypes=("bfloat16",))
    assert report.failures and all(f.detail.startswith("s[") for f in report.failures)


def test_a_backward_that_forgets_the_streams_gradient_fails_in_dx_alone():
    report = check_add_rms_norm(fused(), fused_backward(add_ds=False))
    failed = [f for f in report.failures if f.part == "backward"]
    assert failed and all(f.detail.startswith("dx") for f in failed), str(report)
    assert not [f for f in report.failures if f.part == "forward"]


def test_statistics_and_a_dgamma_kept_in_16_bits_fail():
    half = check_add_rms_norm(fused(half_statistics=True))
    assert {f.dtype for f in half.failures} >= {"float16", "bfloat16"}
    storage = check_add_rms_norm(fused(), fused_backward(storage_dgamma=True))
    failed = {(f.dtype, f.detail.split("[")[0]) for f in storage.failures}
    assert ("float16", "dgamma") in failed and ("bfloat16", "dgamma") in failed


def test_an_in_place_kernel_fails_until_wrapped_with_copies():
    """vLLM's fused_add_rms_norm writes s into the residual and y into the input; the harness
    fails a call that changes its inputs, and the wrapper its docstring describes passes."""
    forward = fused()

    def in_place(x, res, gamma, eps):
        y, s, _ = forward(x, res, gamma, eps)
        res[...], x[...] = s, y

    def wrapped(x, res, gamma, eps):
        x, res = x.copy(), res.copy()
        in_place(x, res, gamma, eps)
        return x, res

    report = check_add_rms_norm(lambda *a: (in_place(*a), None), dtypes=("float32",))
    assert not report.passed and "overwrote" in report.failures[0].detail
    assert check_add_rms_norm(wrapped, dtypes=("float32", "float16")).passed


def test_a_bfloat16_truncating_cast_fails_the_pooled_bias_check():
    import ml_dtypes

    forward = fused()

    def truncating(x, res, gamma, eps):
        y, s, rstd = forward(x, res, gamma, eps)
        if x.dtype == ml_dtypes.bfloat16:
            z = x.astype(np.float32) + res.astype(np.float32)
            wide = (z * rstd * gamma.astype(np.float32)).astype(np.float32)
            y = (wide.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
            y = y.astype(ml_dtypes.bfloat16)
        return y, s, rstd

    report = check_add_rms_norm(truncating, dtypes=("bfloat16",))
    assert [f.case for f in report.failures] == ["rounding bias"]


def test_pytorch_eager_add_then_rms_norm_passes():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional extra)")
    from lnlib.harness import _torch_bridge

    _, tensor, array = _torch_bridge()

    def forward(x, res, gamma, eps):
        s = tensor(x) + tensor(res)  # PyTorch's add: computed wide, rounded to the dtype
        y = torch.nn.functional.rms_norm(s, s.shape[-1:], tensor(gamma), eps)
        return array(y), array(s)

    assert check_add_rms_norm(forward).passed


def test_a_pytorch_fused_function_runs_in_bfloat16_through_torch_function():
    """A fused add + RMSNorm written for tensors, in place as vLLM's (s into the residual, y into
    x, x̂ rounded before γ), checked in every dtype with no conversion code of the reader's own
    (learner B: torch.from_numpy refuses ml_dtypes' bfloat16)."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional extra)")
    from lnlib.harness import torch_function

    def vllm_style(x, residual, gamma, eps):
        residual += x  # s, rounded to the dtype
        wide = residual.float()
        rstd = torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + eps)
        x.copy_((wide * rstd).to(x.dtype) * gamma)  # x̂ rounded before γ
        return x, residual

    report = check_add_rms_norm(
        torch_function(vllm_style), dtypes=("float32", "float16", "bfloat16"),
        cast_before_gamma=True,
    )  # fmt: skip
    assert report.passed, str(report)
