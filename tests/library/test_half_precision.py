"""float16 and bfloat16: lnlib keeps statistics in float32, as the frameworks do (chapter "Computing
it right: numerics").

Against PyTorch where it is installed (lnlib's error no worse than PyTorch's, against a float64
truth on the same rounded input), and against float64 lnlib always.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lnlib import fused, layer_norm, rms_norm
from lnlib.backward import backward_parts, layer_norm_backward
from lnlib.harness import unit_roundoff
from lnlib.validation import BFLOAT16

HALVES = {"float16": np.float16, "bfloat16": BFLOAT16}


@st.composite
def half_rows(draw):
    """A (rows, H) float64 array: a random offset and spread (up to 300, past float16's square
    limit), seeded."""
    rows, size = draw(st.integers(1, 4)), draw(st.integers(1, 96))
    offset, log_spread = draw(st.floats(-500, 500)), draw(st.floats(-2, 2.5))
    seed = draw(st.integers(0, 2**16))
    return offset + 10**log_spread * np.random.default_rng(seed).normal(size=(rows, size))


def _error(got, truth):
    return float(np.abs(np.asarray(got, dtype=np.float64) - truth).max())


@pytest.mark.parametrize("name", sorted(HALVES))
@settings(max_examples=40, deadline=None)
@given(data=half_rows())
def test_half_precision_is_within_one_output_rounding_of_float64(name, data):
    x = data.astype(HALVES[name])
    truth = layer_norm(x.astype(np.float64))
    u = unit_roundoff(x.dtype)
    # float32 statistics are exact to ~1e-5 here; what remains is rounding y to the 16-bit output
    assert _error(layer_norm(x), truth) <= 2 * u * np.abs(truth).max() + 1e-6
    rms_truth = rms_norm(x.astype(np.float64))
    assert _error(rms_norm(x), rms_truth) <= 2 * u * np.abs(rms_truth).max() + 1e-6


@pytest.mark.parametrize("name", sorted(HALVES))
@settings(max_examples=40, deadline=None)
@given(data=half_rows())
def test_half_precision_error_is_no_worse_than_pytorch(torch, name, data):
    x = data.astype(HALVES[name])
    truth = layer_norm(x.astype(np.float64))
    tensor = torch.from_numpy(x.astype(np.float32)).to(
        torch.float16 if name == "float16" else torch.bfloat16
    )
    theirs = torch.nn.functional.layer_norm(tensor, (x.shape[-1],)).float().numpy()
    # no worse, up to one rounding of the output (the two round from slightly different float32
    # values)
    assert (
        _error(layer_norm(x), truth)
        <= _error(theirs, truth) + unit_roundoff(x.dtype) * np.abs(truth).max()
    )


@pytest.mark.parametrize("name", sorted(HALVES))
def test_half_precision_backward_matches_pytorch_with_float32_statistics(torch, name):
    rng = np.random.default_rng(5)
    x = (rng.normal(size=(6, 48)) * 50 + 200).astype(HALVES[name])
    dy = rng.normal(size=x.shape).astype(HALVES[name])
    gamma = rng.uniform(0.5, 1.5, size=48).astype(np.float32)
    half = torch.float16 if name == "float16" else torch.bfloat16
    tx = torch.from_numpy(x.astype(np.float32)).to(half).requires_grad_()
    tg = torch.from_numpy(
        gamma
    ).requires_grad_()  # float32 parameters: PyTorch keeps mean and rstd in float32
    torch.nn.functional.layer_norm(tx, (48,), tg, None).backward(
        torch.from_numpy(dy.astype(np.float32)).to(half)
    )
    truth = layer_norm_backward(
        dy.astype(np.float64), x.astype(np.float64), gamma.astype(np.float64)
    )
    ours = layer_norm_backward(dy, x, gamma)
    for mine, theirs, exact in zip(ours, (tx.grad, tg.grad), truth):
        assert (
            _error(mine, exact)
            <= _error(theirs.float().numpy(), exact)
            + 2 * unit_roundoff(x.dtype) * np.abs(exact).max()
        )


def test_saved_statistics_match_pytorch_native_layer_norm(torch):
    x = np.random.default_rng(2).normal(size=(3, 4, 16)) * 3 + 1
    _, mean, rstd = layer_norm(x, axis=(-2, -1), return_stats=True)
    _, t_mean, t_rstd = torch.native_layer_norm(torch.from_numpy(x), (4, 16), None, None, 1e-5)
    np.testing.assert_allclose(mean, t_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rstd, t_rstd.numpy(), rtol=1e-12)


# --- mixed precision: float32 parameters beside 16-bit activations, as autocast keeps them ---

#: More rows than float16 holds (65504), and far past where a float16 running sum of ones stalls
#: (2048)
MANY_ROWS = 70_000


def _ones_problem(half, rows=MANY_ROWS, size=8):
    x = np.random.default_rng(3).normal(size=(rows, size)).astype(half)
    return np.ones_like(x), x, np.ones(size, np.float32)


def _mixed_backwards(compiled_fused=True):
    """Each backward function, returning (dx, dgamma, dbeta)."""
    parts = lambda dy, x, g: (lambda p: (p.dx, p.dgamma, p.dbeta))(backward_parts(dy, x, g))  # noqa: E731
    calls = {"layer_norm_backward": layer_norm_backward, "backward_parts": parts}
    if compiled_fused and fused.numba_available():
        calls["fused_layer_norm_backward"] = fused.fused_layer_norm_backward
    return calls


@pytest.mark.parametrize("name", sorted(HALVES))
def test_float32_gamma_gets_float32_dgamma_dbeta_summed_in_float32(name):
    # a float16 running sum of 70 000 ones stalls at 2048 (2048 + 1 rounds to 2048); float32 holds
    # it exactly
    dy, x, gamma = _ones_problem(HALVES[name])
    exact_dgamma = layer_norm_backward(dy.astype(np.float64), x.astype(np.float64))[1]
    for function, backward in _mixed_backwards().items():
        dx, dgamma, dbeta = backward(dy, x, gamma)
        assert dgamma.dtype == dbeta.dtype == np.float32, function
        assert dx.dtype == (np.float32 if function == "backward_parts" else x.dtype), function
        np.testing.assert_array_equal(dbeta, np.full(8, MANY_ROWS, np.float32), err_msg=function)
        np.testing.assert_allclose(dgamma, exact_dgamma, rtol=0, atol=1e-5 * MANY_ROWS)


def test_uncompiled_fused_backward_keeps_the_same_dtype_rule():
    dy, x, gamma = _ones_problem(np.float16, rows=5)
    for g, expected in ((gamma, np.float32), (None, np.float16), (gamma.tolist(), np.float16)):
        _, dgamma, dbeta = fused.fused_layer_norm_backward(dy, x, g, compiled=False)
        assert dgamma.dtype == dbeta.dtype == expected
        np.testing.assert_array_equal(dbeta, np.full(8, 5.0))


@pytest.mark.parametrize("gamma", [None, "list"], ids=["gamma None", "gamma a list"])
def test_without_a_float_gamma_array_the_float16_sum_is_refused_not_inf(gamma):
    dy, x, g = _ones_problem(np.float16)
    gamma = None if gamma is None else g.tolist()
    for function, backward in _mixed_backwards().items():
        if (
            function == "backward_parts"
        ):  # its sums are before rounding, in float32: nothing to refuse
            assert backward(dy, x, gamma)[2].dtype == np.float32
            continue
        with pytest.raises(ValueError, match=r"^dbeta contains infinity.*float16") as caught:
            backward(dy, x, gamma)
        assert "70000 rows" in str(caught.value) and "as a float32 array" in str(caught.value)


def test_pytorch_stalls_at_2048_a_thread_over_70000_float16_rows_and_lnlib_sums_70000(torch):
    # PyTorch 2.13.0's CPU backward sums dbeta in 16-bit partial sums, one per thread: each stalls
    # at 2048 (2048 + 1 rounds to 2048), so it returns 2048 times the thread count (measured at 1, 2
    # and 4 threads)
    dy, x, gamma = _ones_problem(np.float16)
    threads = torch.get_num_threads()
    try:
        for count in (1, 2):
            torch.set_num_threads(count)
            tx = torch.from_numpy(x).requires_grad_()
            tg, tb = torch.from_numpy(gamma).requires_grad_(), torch.zeros(8, requires_grad=True)
            torch.nn.functional.layer_norm(tx, (8,), tg, tb).backward(torch.from_numpy(dy))
            assert tb.grad.dtype == torch.float32
            if torch.__version__.split("+")[0] == "2.13.0":
                np.testing.assert_array_equal(
                    tb.grad.numpy(), np.full(8, 2048.0 * count, np.float32)
                )
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_array_equal(layer_norm_backward(dy, x, gamma)[2], np.full(8, MANY_ROWS))
