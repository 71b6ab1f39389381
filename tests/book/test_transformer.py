"""lnlib.book.models.transformer: the backward pass against finite differences and PyTorch, and the
chapter's findings at initialization."""

import numpy as np
import pytest

from lnlib import layer_norm
from lnlib.backward import layer_norm_backward, numerical_gradient, relative_error
from lnlib.book.experiments.pre_post_norm import depth_sweep, init_profile
from lnlib.book.models.transformer import (
    MODEL_EPS,
    PLACEMENTS,
    attention_backward,
    attention_forward,
    block_backward,
    block_forward,
    check_norm,
    ffn_backward,
    ffn_forward,
    init_layer,
    init_stack,
    loss_gradient_norm,
    model_norm,
    model_norm_backward,
    model_rms_norm,
    model_rms_norm_backward,
    mse_loss,
    norm_backward,
    norm_forward,
    softmax,
    softmax_backward,
    stack_backward,
    stack_forward,
)
from lnlib.norms import rms_norm
from lnlib.rms import rms_norm_backward

WEIGHT_NAMES = ("Wq", "Wk", "Wv", "Wo", "W1", "W2")


def small_case(seed=0, width=4, ffn_width=5):
    """A batch of 2 sequences of 3 tokens, width 4, an FFN of width 5 (so W1 and W2 are not square),
    and an upstream gradient."""
    rng = np.random.default_rng(seed)
    w = init_layer(rng, width, ffn_width)
    x = rng.normal(size=(2, 3, width))
    dy = rng.normal(size=(2, 3, width))
    return x, w, dy


def assert_gradients_match(forward, backward, x, w, dy, names):
    """Compare the hand-written backward with central differences, for the input and each named
    weight."""
    dx, grads = backward(dy)
    assert relative_error(dx, numerical_gradient(lambda v: forward(v, w), x, dy)) < 1e-6
    for name in names:
        numeric = numerical_gradient(lambda m: forward(x, {**w, name: m}), w[name], dy)
        assert relative_error(grads[name], numeric) < 1e-6, name


# --- the pieces, against finite differences -----------------------------------------------


def test_softmax_rows_sum_to_one_and_survive_large_scores():
    s = np.array([[1000.0, 1000.0, -1000.0], [0.0, np.log(3.0), 0.0]])
    a = softmax(s)
    np.testing.assert_allclose(
        a, [[0.5, 0.5, 0.0], [0.2, 0.6, 0.2]], atol=1e-15
    )  # exp(log 3) = 3, 3 / (1 + 3 + 1) = 0.6


def test_softmax_backward_matches_finite_differences():
    rng = np.random.default_rng(1)
    s, da = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    assert (
        relative_error(softmax_backward(da, softmax(s)), numerical_gradient(softmax, s, da)) < 1e-7
    )


def test_layer_norm_backward_on_transformer_activations_matches_finite_differences():
    """The LayerNorm backward the blocks call (lnlib.backward), on a (batch, tokens, width)
    activation, normalized per token."""
    x, _, dy = small_case(seed=9)
    assert (
        relative_error(layer_norm_backward(dy, x)[0], numerical_gradient(layer_norm, x, dy)) < 1e-6
    )


def test_attention_backward_matches_finite_differences():
    x, w, dy = small_case()
    _, cache = attention_forward(x, w)
    assert_gradients_match(
        lambda v, m: attention_forward(v, m)[0],
        lambda d: attention_backward(d, cache, w),
        x,
        w,
        dy,
        ("Wq", "Wk", "Wv", "Wo"),
    )


def test_attention_with_qk_norm_backward_matches_finite_differences():
    """QK-norm (chapter "LayerNorm after 2020"): the same attention with LayerNorm on q and k."""
    x, w, dy = small_case(seed=2)
    _, cache = attention_forward(x, w, qk_norm=True)
    assert_gradients_match(
        lambda v, m: attention_forward(v, m, qk_norm=True)[0],
        lambda d: attention_backward(d, cache, w),
        x,
        w,
        dy,
        ("Wq", "Wk", "Wv", "Wo"),
    )


def test_ffn_backward_matches_finite_differences():
    x, w, dy = small_case(seed=2)
    _, cache = ffn_forward(x, w)
    assert_gradients_match(
        lambda v, m: ffn_forward(v, m)[0],
        lambda d: ffn_backward(d, cache, w),
        x,
        w,
        dy,
        ("W1", "W2"),
    )


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_block_backward_matches_finite_differences(placement):
    x, w, dy = small_case(seed=3)
    _, cache = block_forward(x, w, placement)
    assert_gradients_match(
        lambda v, m: block_forward(v, m, placement)[0],
        lambda d: block_backward(d, cache, w, placement),
        x,
        w,
        dy,
        WEIGHT_NAMES,
    )


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_stack_backward_matches_finite_differences_through_three_layers_and_the_loss(placement):
    rng = np.random.default_rng(4)
    weights = init_stack(3, 4, ffn_width=5, seed=4)
    x, target = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))

    def loss_of(inputs, layers):
        return np.array([mse_loss(stack_forward(inputs, layers, placement)[0], target)[0]])

    out, states, caches = stack_forward(x, weights, placement)
    _, dout = mse_loss(out, target)
    stream_grads, grads = stack_backward(dout, states, caches, weights, placement)
    assert len(stream_grads) == 4
    assert (
        relative_error(
            stream_grads[0], numerical_gradient(lambda v: loss_of(v, weights), x, np.ones(1))
        )
        < 1e-6
    )
    for layer in (0, 2):
        for name in ("Wq", "W2"):

            def with_weight(m, layer=layer, name=name):
                return loss_of(
                    x, [{**w, name: m} if i == layer else w for i, w in enumerate(weights)]
                )

            assert (
                relative_error(
                    grads[layer][name],
                    numerical_gradient(with_weight, weights[layer][name], np.ones(1)),
                )
                < 1e-6
            )


def test_mse_loss_by_hand():
    y = np.zeros((1, 2, 2))
    target = np.array([[[1.0, 2.0], [0.0, 2.0]]])
    loss, dy = mse_loss(y, target)
    assert loss == pytest.approx(
        0.5 * (1 + 4 + 0 + 4) / 2
    )  # half the squared error, per token (2 tokens)
    np.testing.assert_allclose(dy, -target / 2)


def test_mse_loss_rejects_a_target_of_another_shape():
    with pytest.raises(ValueError, match="target must have the shape of the output"):
        mse_loss(np.zeros((1, 2, 2)), np.zeros((1, 1, 2)))


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_loss_gradient_norm_is_the_norm_of_every_weight_gradient(placement):
    """Against the stack's own gradients, with the squares summed weight by weight in a different
    order."""
    rng = np.random.default_rng(12)
    weights = init_stack(2, 4, ffn_width=5, seed=12)
    x, target = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    out, states, caches = stack_forward(x, weights, placement)
    grads = stack_backward(mse_loss(out, target)[1], states, caches, weights, placement)[1]
    squares = [np.linalg.norm(layer[name]) ** 2 for name in WEIGHT_NAMES for layer in grads]
    assert loss_gradient_norm(x, target, weights, placement) == pytest.approx(np.sqrt(sum(squares)))


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_gradient_for_a_zero_target_vanishes_because_the_output_has_a_fixed_norm(placement):
    """The chapter's claim that, with random targets, the gradient at initialization is pure noise.

    The gradient is linear in the target, so its mean over N(0, 1) targets is the gradient for
    target 0, that of 1/2 ||y||^2 per token. Both placements end in a LayerNorm with gamma = 1, so
    ||y||^2 = d var / (var + eps) for every token: nearly constant, and its gradient is of order
    eps / var, where one random target's gradient is of order 1. (A pre-norm stack without its final
    LayerNorm would fail this.)"""
    weights = init_stack(4, 16, seed=10)
    x, target = np.random.default_rng(11).normal(size=(2, 2, 8, 16))
    noise = loss_gradient_norm(x, target, weights, placement)
    assert loss_gradient_norm(x, np.zeros_like(target), weights, placement) < 1e-3 * noise
    # linear in t: g(-t) = 2 g(0) - g(t), so with g(0) ~ 0 the targets t and -t give gradients of
    # the same size
    assert loss_gradient_norm(x, -target, weights, placement) == pytest.approx(noise, rel=1e-3)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_block_agrees_with_pytorch(torch, placement):
    """The same layer written with torch autograd and torch's own layer_norm: outputs and every
    gradient agree."""
    x, w, dy = small_case(seed=5)
    tw = {name: torch.tensor(m, requires_grad=True) for name, m in w.items()}
    tx = torch.tensor(x, requires_grad=True)

    def ln(v):
        return torch.nn.functional.layer_norm(v, (v.shape[-1],), eps=1e-5)

    def attn(v):
        scores = (v @ tw["Wq"]) @ (v @ tw["Wk"]).transpose(1, 2) / v.shape[-1] ** 0.5
        return torch.softmax(scores, dim=-1) @ (v @ tw["Wv"]) @ tw["Wo"]

    def ffn(v):
        return torch.relu(v @ tw["W1"]) @ tw["W2"]

    def sub(v, f):
        return ln(v + f(v)) if placement == "post" else v + f(ln(v))

    out_t = sub(sub(tx, attn), ffn)
    out_t.backward(torch.tensor(dy))
    out, cache = block_forward(x, w, placement)
    dx, grads = block_backward(dy, cache, w, placement)
    np.testing.assert_allclose(out, out_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    for name in WEIGHT_NAMES:
        np.testing.assert_allclose(
            grads[name], tw[name].grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name
        )


# --- initialization ---------------------------------------------------------------------


def test_xavier_variance_and_shapes():
    w = init_layer(np.random.default_rng(6), 200, 300)
    assert (
        w["Wq"].shape == (200, 200) and w["W1"].shape == (200, 300) and w["W2"].shape == (300, 200)
    )
    assert w["W1"].var() == pytest.approx(
        2 / (200 + 300), rel=0.02
    )  # Glorot: 2 / (fan_in + fan_out), 60 000 draws
    assert w["Wq"].var() == pytest.approx(1 / 200, rel=0.02)


def test_init_stack_is_reproducible():
    a, b = init_stack(2, 8, seed=7), init_stack(2, 8, seed=7)
    assert all(np.array_equal(a[i][n], b[i][n]) for i in range(2) for n in WEIGHT_NAMES)


# --- finding 1: the residual stream's norm across depth (Xiong et al., Lemma 2) -----------


def test_pre_norm_ffn_adds_half_the_width_in_expectation():
    """By hand: u = LN(x) has ||u||^2 = d; with W1 entries N(0, 1/d), each h_j = (u W1)_j is N(0,
    1), so E[relu(h_j)^2] = 1/2 and E||relu(h)||^2 = d/2; W2 (N(0, 1/d) entries) keeps the squared
    norm in expectation, so E||FFN(LN(x))||^2 = d/2."""
    width, draws = 64, 400
    rng = np.random.default_rng(8)
    added = []
    for _ in range(draws):
        w = init_layer(rng, width)
        x = rng.normal(size=(1, 4, width))
        out, _ = ffn_forward((x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True), w)
        added.append(np.mean(np.sum(out * out, axis=-1)) / width)
    assert np.mean(added) == pytest.approx(0.5, abs=0.03)


def test_finding_1_post_norm_keeps_the_norm_and_pre_norm_grows_linearly():
    depth = 16
    post = init_profile(depth, 64, "post", seeds=6)
    pre = init_profile(depth, 64, "pre", seeds=6)
    # post-norm: every layer ends in a LayerNorm with gamma = 1, so ||x||^2 / d = var / (var + eps),
    # a hair under 1
    np.testing.assert_allclose(post.stream_sq[:, 1:], 1.0, atol=1e-4)
    # pre-norm: each layer adds d/2 (FFN) plus 0 to d (attention), so E||x_l||^2 / d lies between 1
    # + l/2 and 1 + 3l/2
    layers = np.arange(depth + 1)
    mean = pre.stream_sq.mean(axis=0)
    assert np.all(mean[1:] >= 0.9 * (1 + layers[1:] / 2)) and np.all(
        mean <= 1.1 * (1 + 1.5 * layers)
    )
    slope, _ = np.polyfit(layers, mean, 1)
    assert 0.5 <= slope <= 1.5
    residual = mean - np.polyval(np.polyfit(layers, mean, 1), layers)
    assert np.max(np.abs(residual)) < 0.1 * mean[-1], "growth should be close to linear"


# --- finding 2: the last layer's FFN gradient against depth (Theorem 1) --------------------


def last_layer_slope(placement, depths=(2, 4, 8, 16, 32), seeds=6):
    """Log-log slope of the mean (over seeds) of one batch's ||dL/dW2|| in the last layer, against
    depth L."""
    norms = [
        init_profile(depth, 32, placement, seeds=seeds).grad_norm["W2"][:, -1].mean()
        for depth in depths
    ]
    return np.polyfit(np.log(depths), np.log(norms), 1)[0]


def test_depth_sweep_takes_the_top_layer_of_each_stack():
    sweep = depth_sweep([1, 3], 8, "post", seeds=2, weight="W1")
    for column, depth in enumerate([1, 3]):
        np.testing.assert_array_equal(
            sweep[:, column], init_profile(depth, 8, "post", seeds=2).grad_norm["W1"][:, depth - 1]
        )


def test_finding_2_last_layer_gradient_is_depth_independent_for_post_norm():
    assert abs(last_layer_slope("post")) < 0.15


def test_finding_2_last_layer_gradient_shrinks_like_one_over_sqrt_depth_for_pre_norm():
    """Theorem 1 gives ~ 1/sqrt(L): slope -1/2 on log-log axes."""
    assert -0.65 < last_layer_slope("pre") < -0.35


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"depth": 0}, ValueError, "depth must be a positive integer"),
        ({"width": 2.5}, TypeError, "width must be a positive integer"),
        ({"placement": "sandwich"}, ValueError, "placement must be 'post' or 'pre'"),
        ({"seeds": True}, TypeError, "seeds must be a positive integer"),
    ],
)
def test_init_profile_rejects_bad_settings(kwargs, error, message):
    settings = {"depth": 2, "width": 4, "placement": "pre", **kwargs}
    with pytest.raises(error, match=message):
        init_profile(**settings)


def test_forward_rejects_wrong_shapes():
    x, w, _ = small_case()
    with pytest.raises(ValueError, match=r"shape \(batch, tokens, width\)"):
        block_forward(x[0], w, "pre")
    with pytest.raises(ValueError, match="weights expect width 4"):
        ffn_forward(np.ones((1, 2, 3)), w)
    with pytest.raises(ValueError, match="NaN"):
        attention_forward(np.full((1, 2, 4), np.nan), w)


def test_init_profile_averages_gradients_over_batches_before_the_norm():
    """batches=2 must equal averaging two hand-drawn batches' gradients (same rng order: weights,
    then x, target per batch)."""
    profile = init_profile(2, 4, "pre", seeds=1, batches=2, tokens=3, batch=2)
    rng = np.random.default_rng(0)
    weights = [init_layer(rng, 4) for _ in range(2)]
    total = np.zeros_like(weights[1]["W2"])
    for _ in range(2):
        x, target = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
        out, states, caches = stack_forward(x, weights, "pre")
        total += (
            stack_backward(mse_loss(out, target)[1], states, caches, weights, "pre")[1][1]["W2"] / 2
        )
    assert profile.grad_norm["W2"][0, 1] == pytest.approx(np.linalg.norm(total))


def test_the_models_norm_is_lnlib_layer_norm():
    """model_norm, the textbook LayerNorm the models use for speed, against the hardened layer_norm
    and its backward."""
    rng = np.random.default_rng(11)
    x, dy = rng.normal(size=(2, 3, 7)) * 3 + 1, rng.normal(size=(2, 3, 7))
    y, saved = model_norm(x)
    np.testing.assert_allclose(y, layer_norm(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        model_norm_backward(dy, saved), layer_norm_backward(dy, x)[0], rtol=1e-10, atol=1e-13
    )


def test_the_models_rms_norm_is_lnlib_rms_norm():
    """model_rms_norm, RMSNorm at every place of chapter 12's RMSNorm stacks, against lnlib's
    rms_norm and its backward at the models' ε."""
    rng = np.random.default_rng(12)
    x, dy = rng.normal(size=(2, 3, 7)) * 3 + 1, rng.normal(size=(2, 3, 7))
    y, saved = model_rms_norm(x)
    np.testing.assert_allclose(y, rms_norm(x, eps=MODEL_EPS), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        model_rms_norm_backward(dy, saved),
        rms_norm_backward(dy, x, eps=MODEL_EPS)[0],
        rtol=1e-10,
        atol=1e-13,
    )
    # learned γ and β through norm_forward / norm_backward, RMSNorm's way
    params = {"k_gamma": rng.normal(size=7), "k_beta": rng.normal(size=7)}
    out, saved = norm_forward(x, params, "k", norm="rms")
    np.testing.assert_allclose(out, params["k_gamma"] * y + params["k_beta"], rtol=1e-12)
    dx, grads = norm_backward(dy, saved, params, "k", norm="rms")
    np.testing.assert_allclose(
        dx, rms_norm_backward(dy, x, params["k_gamma"], eps=MODEL_EPS)[0], rtol=1e-10, atol=1e-13
    )
    np.testing.assert_allclose(grads["k_gamma"], np.sum(dy * y, axis=(0, 1)), rtol=1e-12)
    with pytest.raises(ValueError, match="norm must be one of"):
        check_norm("batch")
