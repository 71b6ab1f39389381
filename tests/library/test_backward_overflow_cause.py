"""layer_norm_backward refuses an overflowing gradient and names its real cause (chapter "Gradients
through LayerNorm").

gamma and beta are not arguments of the backward pass's overflow: dx grows with rstd = 1 / sqrt(var
+ eps) and with dy * gamma; dgamma and dbeta are sums of dy over rows. Each message must say so.
"""

import warnings

import numpy as np
import pytest

from lnlib.backward import layer_norm_backward


def test_a_subnormal_spread_with_eps_0_blames_rstd_not_gamma_or_beta():
    x = np.array(
        [1e-44, -1e-44, 2e-44, 0.0], dtype=np.float32
    )  # subnormal: 1 / sqrt(var) exceeds float32
    dy = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    var = x.astype(np.float64).var()
    assert (
        1 / np.sqrt(var) > np.finfo(np.float32).max
    )  # the premise: rstd cannot be held in float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused cleanly: no RuntimeWarning on the way
        with pytest.raises(ValueError) as caught:
            layer_norm_backward(dy, x, eps=0)
    message = str(caught.value)
    assert message.startswith("dx contains infinity")
    assert "gamma or beta" not in message
    assert "rstd = 1 / sqrt(var + eps)" in message and "larger eps" in message


def test_the_same_row_in_float64_has_a_finite_gradient():
    x = np.array([1e-44, -1e-44, 2e-44, 0.0], dtype=np.float32).astype(np.float64)
    dx, _, _ = layer_norm_backward(np.array([1.0, 0.0, 0.0, 0.0]), x, eps=0)
    assert (
        np.isfinite(dx).all() and np.abs(dx).max() > 1e40
    )  # far beyond float32's 3.4e38: the refusal was right


def test_dgamma_and_dbeta_that_overflow_float16_blame_dy():
    x = np.tile(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float16), (4, 1))
    dy = np.full((4, 4), 30000.0, dtype=np.float16)  # four rows of 30000 * xhat sum beyond 65504
    with pytest.raises(ValueError, match="^dgamma contains infinity") as caught:  # returned first
        layer_norm_backward(dy, x)
    assert "gamma or beta" not in str(caught.value) and "dy is too large" in str(caught.value)


def test_the_forward_output_still_blames_gamma_or_beta():
    from lnlib.forward import layer_norm

    with pytest.raises(ValueError, match="gamma or beta is too large"):
        layer_norm(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float16), gamma=np.full(4, 60000.0))
