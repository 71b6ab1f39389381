"""lnlib.book.models.deep_stack, the stack of the chapter "Why normalize?": its backward pass
against finite differences and PyTorch, and the two facts the chapter builds on (LayerNorm's
invariance to the weight scale)."""

import numpy as np
import pytest

from lnlib.backward import numerical_gradient, relative_error
from lnlib.book.models.deep_stack import random_stack, rms, run_stack, scale_profiles

SETTINGS = [(ln, act) for ln in (False, True) for act in ("tanh", "relu")]


def tiny(depth=3, width=4, batch=2, scale=1.3):
    x, weights, upstream = random_stack(depth, width, batch, seed=7)
    return x, scale * weights, upstream


@pytest.mark.parametrize("layer_norm_on, activation", SETTINGS)
def test_weight_gradients_match_finite_differences(layer_norm_on, activation):
    x, weights, upstream = tiny()
    run = run_stack(x, weights, upstream, layer_norm_on=layer_norm_on, activation=activation)

    def top(w):
        return run_stack(
            x, w, upstream, layer_norm_on=layer_norm_on, activation=activation
        ).activations[-1]

    numeric = numerical_gradient(top, weights, upstream)
    assert relative_error(np.stack(run.weight_grads), numeric) < 1e-6


@pytest.mark.parametrize("layer_norm_on, activation", SETTINGS)
def test_input_gradient_matches_finite_differences(layer_norm_on, activation):
    x, weights, upstream = tiny()
    run = run_stack(x, weights, upstream, layer_norm_on=layer_norm_on, activation=activation)

    def top(v):
        return run_stack(
            v, weights, upstream, layer_norm_on=layer_norm_on, activation=activation
        ).activations[-1]

    assert relative_error(run.activation_grads[0], numerical_gradient(top, x, upstream)) < 1e-6
    np.testing.assert_array_equal(run.activation_grads[-1], upstream)


@pytest.mark.parametrize("layer_norm_on, activation", SETTINGS)
def test_stack_matches_pytorch_autograd(torch, layer_norm_on, activation):
    x, weights, upstream = random_stack(6, 8, 5, seed=3)
    weights = 1.7 * weights
    run = run_stack(x, weights, upstream, layer_norm_on=layer_norm_on, activation=activation)
    ws = [torch.tensor(w, requires_grad=True) for w in weights]
    h = torch.tensor(x)
    for w in ws:
        z = h @ w
        u = torch.nn.functional.layer_norm(z, (z.shape[-1],), eps=1e-5) if layer_norm_on else z
        h = torch.tanh(u) if activation == "tanh" else torch.relu(u)
    (h * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(run.activations[-1], h.detach().numpy(), rtol=1e-10, atol=1e-12)
    for ours, w in zip(run.weight_grads, ws):
        np.testing.assert_allclose(ours, w.grad.numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_layer_norm_removes_the_weight_scale(activation):
    """LN(a z) = LN(z) for a > 0 when eps = 0, so the forward pass cannot see a; and L(aW) = L(W)
    gives dL/dW at aW = (1/a) dL/dW at W: the weight gradients shrink as the weights grow."""
    x, weights, upstream = random_stack(20, 16, 8, seed=1)
    base = run_stack(x, weights, upstream, layer_norm_on=True, activation=activation, eps=0.0)
    scaled = run_stack(
        x, 3.0 * weights, upstream, layer_norm_on=True, activation=activation, eps=0.0
    )
    np.testing.assert_allclose(scaled.activation_rms, base.activation_rms, rtol=1e-9)
    np.testing.assert_allclose(scaled.gradient_rms, base.gradient_rms, rtol=1e-9)
    np.testing.assert_allclose(
        scaled.weight_gradient_rms, base.weight_gradient_rms / 3.0, rtol=1e-9
    )


def test_without_layer_norm_a_linear_relu_stack_scales_by_a_over_sqrt2_per_layer():
    """Without LN a ReLU layer is positively homogeneous: scaling the weights by c scales h_L by
    c**L exactly."""
    x, weights, upstream = random_stack(10, 16, 8, seed=2)
    base = run_stack(x, weights, upstream, activation="relu")
    doubled = run_stack(x, 2.0 * weights, upstream, activation="relu")
    np.testing.assert_allclose(
        doubled.activation_rms[1:] / base.activation_rms[1:], 2.0 ** np.arange(1, 11), rtol=1e-12
    )


def test_rms_by_hand():
    assert rms([3.0, 4.0]) == pytest.approx(np.sqrt((9 + 16) / 2))


def test_random_stack_is_seeded_and_shaped():
    a, b = random_stack(4, 6, 3, seed=5), random_stack(4, 6, 3, seed=5)
    for left, right in zip(a, b):
        np.testing.assert_array_equal(left, right)
    assert [arr.shape for arr in a] == [(3, 6), (4, 6, 6), (3, 6)]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"activation": "sigmoid"}, "activation must be one of"),
        ({"weights": np.ones((2, 3, 3))}, "weights"),
        ({"upstream": np.ones((2, 2))}, "upstream must have the shape"),
        ({"x": np.full((2, 4), np.nan)}, "NaN"),
    ],
)
def test_run_stack_refuses_bad_input(kwargs, message):
    x, weights, upstream = tiny()
    args = {"x": x, "weights": weights, "upstream": upstream, **kwargs}
    with pytest.raises(ValueError, match=message):
        run_stack(args.pop("x"), args.pop("weights"), args.pop("upstream"), **args)


@pytest.mark.parametrize(
    "depth, error", [(0, ValueError), (-1, ValueError), (2.5, TypeError), (True, TypeError)]
)
def test_random_stack_refuses_bad_sizes(depth, error):
    with pytest.raises(error, match="depth must be a positive integer"):
        random_stack(depth)


@pytest.mark.parametrize("layer_norm_on, activation", SETTINGS)
def test_scale_profiles_equal_separate_runs_of_each_depth(layer_norm_on, activation):
    x, weights, upstream = random_stack(12, 8, 4, seed=4)
    weights = 1.6 * weights
    act, grads = scale_profiles(
        x, weights, upstream, [1, 5, 12], layer_norm_on=layer_norm_on, activation=activation
    )
    assert sorted(grads) == [1, 5, 12]
    for depth, grad in grads.items():
        run = run_stack(
            x, weights[:depth], upstream, layer_norm_on=layer_norm_on, activation=activation
        )
        np.testing.assert_allclose(act[: depth + 1], run.activation_rms, rtol=1e-12)
        np.testing.assert_allclose(grad, run.gradient_rms, rtol=1e-10)


def test_scale_profiles_refuse_a_depth_beyond_the_stack():
    x, weights, upstream = tiny()
    with pytest.raises(ValueError, match="depths must be between 1"):
        scale_profiles(x, weights, upstream, [4])
