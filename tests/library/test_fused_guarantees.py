"""lnlib.fused keeps api.md's "How lnlib computes, everywhere", compiled and uncompiled alike.

Chapter "LayerNorm at the speed of memory". The fast path checks two numbers per row (mean, rstd)
and hands the rows it cannot trust (huge, tiny, constant, non-finite) to lnlib.forward; gamma and
beta are checked as core checks them; the output is read again only when gamma and beta could make
it overflow. Each expected value here is computed independently, in float64 on inputs scaled by an
exact power of two, or by hand.
"""

import warnings

import ml_dtypes
import numpy as np
import pytest

from lnlib import fused
from lnlib.backward import layer_norm_backward
from lnlib.forward import layer_norm

NUMBA_MISSING = (
    "numba is not installed, so the compiled kernels are not tested; "
    'install it with pip install "lnlib[kernels]"'
)
BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture(params=[True, False], ids=["compiled", "uncompiled"])
def compiled(request):
    if request.param:
        pytest.importorskip("numba", reason=NUMBA_MISSING)
    return request.param


def quietly(function, *args, **kwargs):
    """Call with every warning an error: the guarantees are kept without RuntimeWarnings on the
    way."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return function(*args, **kwargs)


def scaled_reference(x, exponent):
    """LayerNorm (eps negligible) and rstd in float64 of ``x * 2**-exponent``: exact scaling, no
    overflow."""
    u = np.ldexp(x.astype(np.float64), -exponent)
    centred = u - u.mean(axis=-1, keepdims=True)
    std = np.sqrt((centred**2).mean(axis=-1))
    return centred / std[:, None], np.ldexp(1 / std, -exponent)


@pytest.mark.parametrize(
    "dtype, scale, exponent",
    [
        (np.float32, 1e20, 66),
        (np.float64, 1e200, 664),
        (BF16, 1e20, 66),
    ],
)
def test_huge_finite_inputs_are_normalized_not_zeroed(compiled, dtype, scale, exponent):
    x = (np.random.default_rng(0).normal(size=(3, 40)) * scale).astype(dtype)
    with np.errstate(over="ignore"):
        assert not np.isfinite(
            (x.astype(np.float64) ** 2).astype(dtype if dtype != BF16 else np.float32)
        ).all()
    y, mean, rstd = quietly(fused.fused_layer_norm, x, compiled=compiled)
    xhat, expected_rstd = scaled_reference(x, exponent)
    tolerance = 1e-12 if dtype == np.float64 else 1e-5 if dtype == np.float32 else 2**-7
    np.testing.assert_allclose(y.astype(np.float64), xhat, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(rstd.astype(np.float64), expected_rstd, rtol=1e-5)
    assert (rstd > 0).all()
    np.testing.assert_allclose(
        mean.astype(np.float64), x.astype(np.float64).mean(axis=-1), rtol=1e-5
    )


def test_one_huge_row_is_redone_and_the_others_keep_the_fast_path(compiled):
    rng = np.random.default_rng(1)
    ordinary = rng.normal(size=(5, 64)).astype(np.float32)
    batch = np.concatenate(
        [ordinary[:2], (rng.normal(size=(1, 64)) * 1e25).astype(np.float32), ordinary[2:]]
    )
    y, _, rstd = quietly(fused.fused_layer_norm, batch, compiled=compiled)
    alone, _, alone_rstd = fused.fused_layer_norm(ordinary, compiled=compiled)
    np.testing.assert_array_equal(
        np.delete(y, 2, axis=0), alone
    )  # rows are independent: bit-identical
    np.testing.assert_array_equal(np.delete(rstd, 2), alone_rstd)
    np.testing.assert_allclose(y[2], scaled_reference(batch[2:3], 84)[0][0], rtol=1e-5, atol=1e-5)


def test_eps_0_with_a_constant_row_is_a_clear_error(compiled):
    x = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"variance is zero .*first at index \(1, 0\).* and eps=0"):
        quietly(fused.fused_layer_norm, x, eps=0, compiled=compiled)


def test_an_eps_that_rounds_to_0_in_float32_is_named(compiled):
    x = np.full((2, 8), 3.0, dtype=np.float32)
    assert np.float32(1e-50) == 0  # the premise
    with pytest.raises(ValueError, match="eps=1e-50 rounds to 0 in float32"):
        quietly(fused.fused_layer_norm, x, eps=1e-50, compiled=compiled)


def test_eps_0_with_a_tiny_row_is_normalized(compiled):
    x = np.array([[1e-30, -2e-30, 3e-30, 0.5e-30]], dtype=np.float32)  # squares underflow float32
    assert np.float32(1e-30) ** 2 == 0  # the premise
    y, _, rstd = quietly(fused.fused_layer_norm, x, eps=0, compiled=compiled)
    xhat, expected_rstd = scaled_reference(x, -100)
    np.testing.assert_allclose(y, xhat[0:1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(rstd, expected_rstd, rtol=1e-6)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_x_is_refused_with_its_index(compiled, bad):
    x = np.array([[1.0, 2.0, 3.0], [4.0, bad, 6.0]])
    with pytest.raises(ValueError, match=r"x contains (NaN|infinity) at index \(1, 1\)"):
        quietly(fused.fused_layer_norm, x, compiled=compiled)


def test_a_float16_output_overflow_from_beta_is_refused_and_a_near_miss_is_not(compiled):
    x = np.array([[1.0, -1.0]], dtype=np.float16)  # xhat = (1, -1) exactly with eps = 0
    y, _, _ = quietly(
        fused.fused_layer_norm,
        x,
        gamma=[60000.0, 60000.0],
        beta=[0.0, 0.0],
        eps=0,
        compiled=compiled,
    )
    np.testing.assert_array_equal(
        y, np.array([[60000.0, -60000.0]], dtype=np.float16)
    )  # 65504 is float16's max
    with pytest.raises(
        ValueError, match="after rounding it to float16 .*gamma or beta is too large"
    ):
        quietly(
            fused.fused_layer_norm,
            x,
            gamma=[60000.0, 60000.0],
            beta=[6000.0, 6000.0],
            eps=0,
            compiled=compiled,
        )


def test_a_float16_output_overflow_from_gamma_is_refused(compiled):
    x = np.random.default_rng(2).normal(size=(4, 16)).astype(np.float16)
    with pytest.raises(ValueError, match="the output contains infinity"):
        quietly(fused.fused_layer_norm, x, gamma=np.full(16, 6e4), compiled=compiled)


@pytest.mark.parametrize("name", ["gamma", "beta"])
def test_complex_gamma_or_beta_is_refused_without_a_warning(compiled, name):
    x = np.ones((2, 4)) + np.arange(4)
    with pytest.raises(TypeError, match=f"{name} must hold real numbers; got complex"):
        quietly(fused.fused_layer_norm, x, compiled=compiled, **{name: np.ones(4) + 1j})
    with pytest.raises(TypeError, match="gamma must hold real numbers"):
        quietly(
            fused.fused_layer_norm_backward, np.ones((2, 4)), x, np.ones(4) + 0j, compiled=compiled
        )


def test_gamma_that_overflows_the_compute_dtype_is_refused(compiled):
    with pytest.raises(ValueError, match="gamma contains infinity .* after rounding it to float32"):
        quietly(
            fused.fused_layer_norm,
            np.ones((1, 4), np.float32) + np.arange(4, dtype=np.float32),
            gamma=np.full(4, 1e40),
            compiled=compiled,
        )


def test_compiled_and_uncompiled_give_the_same_result_on_every_redone_row():
    pytest.importorskip("numba", reason=NUMBA_MISSING)
    x = (np.random.default_rng(3).normal(size=(4, 33)) * 1e20).astype(BF16)
    fast = fused.fused_layer_norm(x, compiled=True)
    slow = fused.fused_layer_norm(x, compiled=False)
    for a, b in zip(fast, slow):  # every row redone by lnlib.forward, in both modes
        np.testing.assert_array_equal(a.astype(np.float64), b.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16])
def test_compiled_and_uncompiled_agree_to_rounding_on_ordinary_rows(dtype):
    pytest.importorskip("numba", reason=NUMBA_MISSING)
    x = (np.random.default_rng(4).normal(size=(50, 257)) * 3 + 2).astype(dtype)
    gamma, beta = np.linspace(0.5, 1.5, 257), np.linspace(-1, 1, 257)
    fast, slow = (
        fused.fused_layer_norm(x, gamma, beta, compiled=c)[0].astype(np.float64)
        for c in (True, False)
    )
    work = np.float32 if np.dtype(dtype).itemsize == 2 else dtype
    u = float(np.finfo(work).eps) / 2
    larger = np.maximum(np.abs(fast), np.abs(slow))
    storage_ulp = np.ldexp(float(ml_dtypes.finfo(dtype).eps), np.frexp(larger)[1] - 1)
    # only the order of the row's additions differs (SIMD lanes, FMA): the statistics' bound H u of
    # each mode, on xhat (|xhat| < 4 here) and on gamma * xhat + beta; for 16-bit storage that
    # difference can move a result across one rounding boundary of the storage dtype
    allowed = 2 * 257 * u * (1 + larger) * 2
    if np.dtype(dtype).itemsize == 2:
        allowed = np.maximum(allowed, storage_ulp)
    assert (np.abs(fast - slow) <= allowed).all()


def test_backward_recomputes_huge_rows_right(compiled):
    rng = np.random.default_rng(5)
    x = (rng.normal(size=(3, 24)) * 1e20).astype(np.float32)
    dy = rng.normal(size=(3, 24)).astype(np.float32)
    dx, dgamma, dbeta = quietly(fused.fused_layer_norm_backward, dy, x, compiled=compiled)
    ref = layer_norm_backward(dy.astype(np.float64), x.astype(np.float64))
    np.testing.assert_allclose(dx, ref[0], rtol=1e-4, atol=1e-4 * np.abs(ref[0]).max())
    np.testing.assert_allclose(dgamma, ref[1], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dbeta, dy.astype(np.float64).sum(axis=0), rtol=1e-5)
    assert np.abs(dx).max() > 0


def test_backward_refuses_bad_saved_statistics_and_a_non_finite_dy(compiled):
    x = np.arange(8.0).reshape(2, 4)
    _, mean, rstd = layer_norm(x, return_stats=True)
    dy = np.ones((2, 4))
    with pytest.raises(ValueError, match="rstd must be positive"):
        fused.fused_layer_norm_backward(dy, x, None, mean, np.zeros(2), compiled=compiled)
    with pytest.raises(ValueError, match="mean must be finite"):
        fused.fused_layer_norm_backward(dy, x, None, np.full(2, np.nan), rstd, compiled=compiled)
    with pytest.raises(ValueError, match="both saved statistics"):
        fused.fused_layer_norm_backward(dy, x, None, mean, None, compiled=compiled)
    dy[1, 2] = np.nan
    with pytest.raises(ValueError, match="dgamma contains NaN"):
        quietly(fused.fused_layer_norm_backward, dy, x, compiled=compiled)


# --- out=: preallocated outputs (the chapter's large-shape runs) ----------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16], ids=str)
def test_out_receives_the_same_bits_as_a_fresh_output_and_is_returned(compiled, dtype):
    rng = np.random.default_rng(7)
    x = (3 + 2 * rng.normal(size=(3, 4, 96))).astype(dtype)
    x[1, 2] *= (
        2.0**60 if dtype in (np.float64, np.float32) else 1
    )  # a row the fast path hands to lnlib.forward
    dy = rng.normal(size=x.shape).astype(dtype)
    gamma, beta = 1 + 0.1 * rng.normal(size=96), 0.1 * rng.normal(size=96)
    fresh = fused.fused_layer_norm(x, gamma, beta, compiled=compiled)
    stale = np.full_like(x, 5)  # every element must be overwritten
    y, mean, rstd = fused.fused_layer_norm(x, gamma, beta, compiled=compiled, out=stale)
    assert y is stale
    work = fresh[1].dtype
    three = (np.full_like(x, 5), np.full(x.shape[:-1], 5, work), np.full(x.shape[:-1], 5, work))
    returned = fused.fused_layer_norm(x, gamma, beta, compiled=compiled, out=three)
    assert all(a is b for a, b in zip(returned, three))
    for got in ((y, mean, rstd), returned):
        for a, b in zip(got, fresh):
            np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
    backward = fused.fused_layer_norm_backward(dy, x, gamma, fresh[1], fresh[2], compiled=compiled)
    # dgamma and dbeta take gamma's dtype, float64 here
    outs = (np.full_like(x, 5), np.full(96, 5, gamma.dtype), np.full(96, 5, gamma.dtype))
    given = fused.fused_layer_norm_backward(
        dy, x, gamma, fresh[1], fresh[2], compiled=compiled, out=outs
    )
    assert all(a is b for a, b in zip(given, outs))
    for a, b in zip(given, backward):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
    dx_only = np.full_like(x, 5)
    assert (
        fused.fused_layer_norm_backward(
            dy, x, gamma, fresh[1], fresh[2], compiled=compiled, out=dx_only
        )[0]
        is dx_only
    )
    np.testing.assert_array_equal(dx_only.view(np.uint8), backward[0].view(np.uint8))


def test_a_wrong_out_is_refused_naming_the_shape_and_dtype_expected(compiled):
    x = np.ones((2, 3, 8), dtype=np.float32)
    x[..., 0] = 2
    forward = lambda out: fused.fused_layer_norm(x, compiled=compiled, out=out)  # noqa: E731
    expected = r"shape \(2, 3, 8\) and dtype float32"
    with pytest.raises(ValueError, match=expected + r"; got shape \(2, 3, 7\)"):
        forward(np.empty((2, 3, 7), np.float32))
    with pytest.raises(ValueError, match=expected + r"; got shape \(2, 3, 8\) and dtype float64"):
        forward(np.empty((2, 3, 8), np.float64))
    with pytest.raises(ValueError, match=expected + "; got one that is not C-contiguous"):
        forward(np.empty((8, 3, 2), np.float32).T)
    read_only = np.empty_like(x)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        forward(read_only)
    with pytest.raises(TypeError, match=expected + "; got list"):
        forward([0.0] * 48)
    with pytest.raises(ValueError, match="must not overlap an input"):
        forward(x)
    with pytest.raises(
        ValueError, match=r"mean of fused_layer_norm must be .* shape \(2, 3\) and dtype float32"
    ):
        forward((np.empty_like(x), np.empty(6, np.float32), np.empty((2, 3), np.float32)))
    with pytest.raises(ValueError, match="a tuple of 3"):
        forward((np.empty_like(x), np.empty((2, 3), np.float32)))
    shared = np.empty((2, 3), np.float32)
    with pytest.raises(ValueError, match="must not overlap one another"):
        forward((np.empty_like(x), shared, shared))
    _, mean, rstd = fused.fused_layer_norm(x, compiled=compiled)
    with pytest.raises(
        ValueError,
        match=r"dgamma of fused_layer_norm_backward must be .* shape \(8,\) and dtype float32",
    ):
        fused.fused_layer_norm_backward(
            x.copy(),
            x,
            None,
            mean,
            rstd,
            compiled=compiled,
            out=(np.empty_like(x), np.empty(8, np.float64), np.empty(8, np.float32)),
        )
    dy = np.ones_like(x)
    with pytest.raises(ValueError, match="must not overlap an input"):
        fused.fused_layer_norm_backward(dy, x, None, mean, rstd, compiled=compiled, out=dy)


@pytest.mark.parametrize("shape", [(0, 8), (2, 0, 8)])
def test_an_empty_batch_gives_empty_outputs_and_zero_parameter_gradients(compiled, shape):
    # as PyTorch and lnlib.forward: no rows to normalize, and dgamma, dbeta are sums over no rows
    x = np.zeros(shape, np.float16)
    y, mean, rstd = quietly(fused.fused_layer_norm, x, compiled=compiled)
    assert y.shape == shape and y.dtype == np.float16
    assert mean.shape == rstd.shape == shape[:-1] and mean.dtype == np.float32
    for saved in ((), (mean, rstd)):
        dx, dgamma, dbeta = quietly(
            fused.fused_layer_norm_backward, x, x, None, *saved, compiled=compiled
        )
        assert dx.shape == shape and dx.dtype == np.float16
        for grad in (dgamma, dbeta):
            assert grad.dtype == np.float16
            np.testing.assert_array_equal(grad, np.zeros(8))


def test_a_dy_of_another_dtype_is_refused_naming_both_dtypes_not_eps(compiled):
    # the kernel reads dy in x's dtype, the output's (PyTorch requires it too)
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float16)
    dy = np.array([[1e6, 0.0, 0.0, 0.0]], np.float32)
    pattern = (
        r"^dy is float32 and x is float16: .*pass dy in float16 "
        r"\(its largest magnitude, 1e\+06, exceeds float16's 65504"
    )
    with pytest.raises(ValueError, match=pattern) as caught:
        fused.fused_layer_norm_backward(dy, x, compiled=compiled)
    assert "eps" not in str(caught.value)
    with pytest.raises(
        ValueError, match=r"^dy is float32 and x is float16: .*pass dy in float16\.$"
    ):
        fused.fused_layer_norm_backward(np.ones((1, 4), np.float32), x, compiled=compiled)
    with pytest.raises(ValueError, match=r"dy must have the shape of x, \(1, 4\); got \(1, 3\)"):
        fused.fused_layer_norm_backward(np.ones((1, 3), np.float16), x, compiled=compiled)
    with pytest.raises(TypeError, match="dy must be a numpy array of x's dtype, float16; got list"):
        fused.fused_layer_norm_backward([[1.0, 0.0, 0.0, 0.0]], x, compiled=compiled)


# --- the residual add fused with the norm ---------------------------------------------------------


def test_add_layer_norm_is_layer_norm_of_the_sum_in_float64(compiled):
    rng = np.random.default_rng(11)
    x, residual = rng.normal(size=(2, 3, 40)), 5 + 3 * rng.normal(size=(2, 3, 40))
    gamma, beta = 1 + 0.1 * rng.normal(size=40), 0.1 * rng.normal(size=40)
    y, s, mean, rstd = quietly(
        fused.fused_add_layer_norm, x, residual, gamma, beta, compiled=compiled
    )
    np.testing.assert_array_equal(s, x + residual)
    expected, exp_mean, exp_rstd = layer_norm(x + residual, gamma, beta, return_stats=True)
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean, exp_mean[..., 0], rtol=1e-12)
    np.testing.assert_allclose(rstd, exp_rstd[..., 0], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=str)
def test_add_layer_norm_normalizes_the_stored_sum(compiled, dtype):
    # s is rounded to the storage dtype, as a kernel stores the residual stream, and y comes from it
    rng = np.random.default_rng(12)
    x, residual = (
        (rng.normal(size=(5, 3000)) * 40).astype(dtype),
        rng.normal(size=(5, 3000)).astype(dtype),
    )
    y, s, mean, rstd = quietly(fused.fused_add_layer_norm, x, residual, compiled=compiled)
    np.testing.assert_array_equal(s.view(np.uint8), (x + residual).view(np.uint8))
    for got, want in zip((y, mean, rstd), fused.fused_layer_norm(x + residual, compiled=compiled)):
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_add_layer_norm_names_an_overflowing_sum_and_a_bad_input(compiled):
    x = np.array([[60000.0, 1.0, 2.0, 3.0]], np.float16)
    with pytest.raises(
        ValueError, match=r"^x \+ residual contains infinity.*overflows its storage"
    ):
        fused.fused_add_layer_norm(x, x, compiled=compiled)
    residual = np.array([[0.0, np.nan, 0.0, 0.0]], np.float16)
    with pytest.raises(ValueError, match=r"^residual contains NaN at index \(0, 1\)"):
        fused.fused_add_layer_norm(x, residual, compiled=compiled)
    with pytest.raises(
        ValueError, match=r"residual must be a numpy array of the shape and dtype of x"
    ):
        fused.fused_add_layer_norm(x, x.astype(np.float32), compiled=compiled)
