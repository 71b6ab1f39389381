"""lnlib.gpu (chapter "LayerNorm on a GPU"): every CUDA kernel through the harness, on the simulator
here.

Without a GPU driver, ``import lnlib.gpu`` switches numba to its CUDA simulator, so these tests run
the very kernels a GPU runs, one Python thread per CUDA thread, on lnlib.gpu.CASES' small shapes
(H below, at and above a warp, H = 1, one row, 16-bit storage with float32 statistics). The planted
GPU bugs of lnlib.gpu.bugs must fail the same checks. Kernel 5 (add + RMSNorm) and RMSNorm's
backward pass check_rms_norm on the same shapes plus all-zero rows. No test times anything (make
bench-gpu does).
"""

import ml_dtypes
import numpy as np
import pytest

from lnlib import gpu
from lnlib.forward import layer_norm as reference
from lnlib.gpu import bugs
from lnlib.harness import check_layer_norm, check_rms_norm, torch_rms_norm
from lnlib.norms import rms_norm
from lnlib.rms import rms_norm_backward

DTYPES = ("float32", "float16", "bfloat16")


def forward_of(kernel):
    return lambda x, g, b, eps: gpu.layer_norm(x, g, b, eps, kernel=kernel)


@pytest.mark.parametrize("kernel", list(gpu.FORWARD_KERNELS))
def test_each_forward_kernel_passes_the_harness(kernel):
    report = check_layer_norm(forward_of(kernel), dtypes=DTYPES, cases=gpu.CASES)
    assert report.passed, str(report)


def test_the_two_stage_backward_passes_the_harness():
    report = check_layer_norm(
        forward_of("warp per row"), gpu.layer_norm_backward, dtypes=DTYPES, cases=gpu.CASES
    )
    assert report.passed, str(report)


def test_the_backward_splits_rows_over_fewer_blocks_than_rows():
    # Stage 2 has something to add only when a block's partial row holds several rows.
    assert gpu.launch.partial_blocks(40) == 10 and gpu.launch.partial_blocks(3) == 1


def test_stage_1_writes_each_partial_sum_once_without_zeroing():
    # NaN in the partials' buffer survives any read-modify-write; stage 1 must overwrite all of
    # it, each block with the plain sums of its own rows (rows b, b + blocks, ...).
    from numba import cuda

    rng = np.random.default_rng(1)
    x, dy = rng.normal(size=(12, 37)).astype(np.float32), rng.normal(size=(12, 37))
    _, mean, rstd = gpu.layer_norm(x)
    xhat = (x - mean[:, None]) * rstd[:, None]
    blocks = gpu.launch.partial_blocks(12)
    d_part = cuda.to_device(np.full((2, blocks, 37), np.nan, np.float32))
    d_dgamma, d_dbeta = cuda.device_array(37, np.float32), cuda.device_array(37, np.float32)
    d_dx = cuda.device_array(x.shape, np.float32)
    args = [cuda.to_device(np.asarray(a, np.float32)) for a in (dy, x, np.ones(37), mean, rstd)]
    gpu.launch.launch_backward(*args, d_dx, d_part, d_dgamma, d_dbeta)
    part = d_part.copy_to_host()
    for b in range(blocks):
        np.testing.assert_allclose(part[0, b], (dy * xhat)[b::blocks].sum(0), atol=1e-5)
        np.testing.assert_allclose(part[1, b], dy[b::blocks].sum(0), atol=1e-5)
    np.testing.assert_allclose(d_dbeta.copy_to_host(), dy.sum(0), atol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_fused_residual_kernel_stores_the_sum_and_normalizes_it(dtype):
    storage = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(4)
    x, res = (rng.normal(size=(6, 45)).astype(storage) for _ in range(2))
    gamma, beta = 1 + 0.5 * rng.normal(size=45), 0.5 * rng.normal(size=45)
    s, y, mean, rstd = gpu.add_layer_norm(x, res, gamma, beta)
    exact = x.astype(np.float64) + res.astype(np.float64)
    assert s.dtype == storage and np.array_equal(s, exact.astype(storage))  # one rounding
    # bfloat16 is widened on the host: the kernel normalizes the float32 sum (exact here) and
    # the host rounds s only when it copies it back; float32 and float16 read the stored s.
    wide = exact if dtype == "bfloat16" else s.astype(np.float64)
    expected = reference(wide, gamma.astype(np.float32), beta.astype(np.float32))
    u = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}[dtype]
    assert np.abs(y.astype(np.float64) - expected).max() <= 4 * u * np.abs(expected).max()
    assert np.allclose(mean, wide.mean(-1), atol=1e-5) and rstd.dtype == np.float32


def test_the_fused_residual_kernel_passes_the_harness_with_a_zero_residual():
    report = check_layer_norm(
        lambda x, g, b, eps: gpu.add_layer_norm(x, np.zeros_like(x), g, b, eps)[1:],
        dtypes=DTYPES,
        cases=gpu.CASES,
    )
    assert report.passed, str(report)


@pytest.mark.parametrize(
    "planted", ["no_barrier_forward", "whole_blocks_forward", "half_statistics_forward"]
)
def test_each_planted_forward_bug_fails_the_harness(planted):
    report = check_layer_norm(getattr(bugs, planted), dtypes=DTYPES, cases=gpu.CASES)
    assert not report.passed


def test_the_racy_dgamma_fails_the_harness_on_dgamma_alone():
    report = check_layer_norm(
        forward_of("thread per row"), bugs.racy_backward, dtypes=DTYPES, cases=gpu.CASES
    )
    assert not report.passed
    assert all(f.detail.startswith(("dgamma", "dbeta")) for f in report.failures), str(report)


def test_the_racy_backward_gets_dx_right_and_loses_dgamma_updates():
    rng = np.random.default_rng(9)
    x, dy = rng.normal(size=(2, 40, 24)).astype(np.float32)
    gamma = (1 + 0.5 * rng.normal(size=24)).astype(np.float32)
    _, mean, rstd = gpu.layer_norm(x, gamma)
    right = gpu.layer_norm_backward(dy, x, gamma, 1e-5, mean, rstd)
    racy = bugs.racy_backward(dy, x, gamma, 1e-5, mean, rstd)
    np.testing.assert_allclose(racy[0], right[0], rtol=1e-5, atol=1e-5)
    assert np.abs(racy[1] - right[1]).max() > 1.0  # 40 rows, 32 a warp: most updates lost


def test_the_half_statistics_bug_fails_in_float16_only():
    for dtypes, passes in ((("float32",), True), (("float16",), False)):
        report = check_layer_norm(bugs.half_statistics_forward, dtypes=dtypes, cases=gpu.CASES)
        assert report.passed == passes


def test_float64_is_refused_with_the_reason():
    with pytest.raises(TypeError, match="float32, float16 or bfloat16"):
        gpu.layer_norm(np.zeros((2, 3)))


def test_without_a_driver_the_package_runs_on_the_simulator():
    assert gpu.SIMULATED or __import__("ctypes.util").util.find_library("cuda") is not None


def rms_forward(x, g, eps):
    """Kernel 5 with a zero residual, as check_rms_norm calls an RMSNorm: (y, rstd)."""
    return gpu.add_rms_norm(x, np.zeros_like(x), g, eps)[1:]


def test_the_add_rms_kernel_and_its_backward_pass_the_rms_harness():
    # forward and backward in one run: the same shapes, layouts and dtypes as the LayerNorm
    # kernels' checks, plus rows of zeros (the divisor sqrt(eps) alone)
    report = check_rms_norm(rms_forward, gpu.rms_norm_backward, dtypes=DTYPES, cases=gpu.RMS_CASES)
    assert report.passed, str(report)
    assert {r.case for r in report.results} >= {c.name for c in gpu.RMS_CASES}


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_add_rms_kernel_matches_lnlib_with_a_residual(dtype):
    storage = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(5)
    x, res, dy = (rng.normal(size=(9, 45)).astype(storage) for _ in range(3))
    gamma = (1 + 0.5 * rng.normal(size=45)).astype(np.float32)
    s, y, rstd = gpu.add_rms_norm(x, res, gamma)
    exact = x.astype(np.float64) + res.astype(np.float64)
    assert s.dtype == storage and np.array_equal(s, exact.astype(storage))  # one rounding
    assert rstd.dtype == np.float32 and rstd.shape == (9,)
    wide = exact if dtype == "bfloat16" else s.astype(np.float64)  # as in the LayerNorm test
    expected, r64 = rms_norm(wide, gamma, eps=1e-6, return_stats=True)
    u = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}[dtype]
    assert np.abs(y.astype(np.float64) - expected).max() <= 4 * u * np.abs(expected).max()
    np.testing.assert_allclose(rstd, r64.ravel(), rtol=1e-5)
    ds, dgamma = gpu.rms_norm_backward(dy, s, gamma, 1e-6, rstd)
    ref_ds, ref_dgamma = rms_norm_backward(dy.astype(np.float64), wide, gamma, eps=1e-6)
    tol = 8 * max(u, 2.0**-24)
    assert np.abs(ds - ref_ds).max() <= tol * np.abs(ref_ds).max()
    assert np.abs(dgamma - ref_dgamma).max() <= tol * np.abs(ref_dgamma).max()


def test_the_rms_kernels_pass_the_harness_where_torch_does():
    torch_pair = torch_rms_norm()
    if torch_pair is None:
        pytest.skip("PyTorch is not installed: no torch.nn.functional.rms_norm to compare with")
    # PyTorch's rms_norm and autograd on the same harness inputs (one case per H the launch
    # path treats differently: below, at and above a warp), then kernel 5 against them directly
    cases = [c for c in gpu.RMS_CASES if c.shape[-1] in (7, 32, 40)]
    assert check_rms_norm(*torch_pair, dtypes=DTYPES, cases=cases).passed
    rng = np.random.default_rng(6)
    x, dy = rng.normal(size=(2, 5, 40)).astype(np.float32)
    gamma = (1 + 0.5 * rng.normal(size=40)).astype(np.float32)
    _, y, rstd = gpu.add_rms_norm(x, np.zeros_like(x), gamma)
    np.testing.assert_allclose(y, torch_pair[0](x, gamma, 1e-6), rtol=1e-5, atol=1e-6)
    got = gpu.rms_norm_backward(dy, x, gamma, 1e-6, rstd)
    for mine, theirs in zip(got, torch_pair[1](dy, x, gamma, 1e-6)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5)


def test_the_centred_rms_backward_fails_the_harness_in_dx_alone():
    # LayerNorm's dx in an RMSNorm backward: the extra mean of γ·dy is wrong in every dtype
    cases = [c for c in gpu.RMS_CASES if c.shape[-1] in (1, 40)]
    report = check_rms_norm(rms_forward, bugs.centred_rms_backward, dtypes=DTYPES, cases=cases)
    assert not report.passed
    assert {f.dtype for f in report.failures} == set(DTYPES)
    assert all(f.detail.startswith("dx") for f in report.failures), str(report)


def add_rms_forward(x, res, g, eps):
    """Kernel 5 as check_add_rms_norm calls a fused add + RMSNorm: (y, s, rstd)."""
    s, y, rstd = gpu.add_rms_norm(x, res, g, eps)
    return y, s, rstd


def test_the_add_rms_kernel_passes_the_fused_add_harness_with_a_residual():
    from lnlib.harness_add import check_add_rms_norm

    report = check_add_rms_norm(
        add_rms_forward, gpu.add_rms_norm_backward, dtypes=DTYPES, cases=gpu.RMS_CASES
    )
    assert report.passed, str(report)
