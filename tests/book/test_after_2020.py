"""The placements, QK-norm and DyT of the chapter "LayerNorm after 2020": every backward against
finite differences and PyTorch."""

import numpy as np
import pytest

from lnlib.backward import numerical_gradient, relative_error
from lnlib.book.experiments.after_2020 import branch_scale, scaled_stream, token_similarity
from lnlib.book.models.dyt import dyt, dyt_backward, fit_tanh, heavy_tailed_tokens, s_curve
from lnlib.book.models.placements import (
    PLACEMENTS,
    PlacementProfile,
    deepnorm_constants,
    init_weights,
    logit_statistics,
    mixln_post_layers,
    placement_backward,
    placement_forward,
    placement_profile,
    placement_summary,
    sublayer_gradient_gains,
    sublayer_rules,
    typical,
)
from lnlib.book.models.transformer import MODEL_EPS, attention_forward, ffn_forward, init_layer
from lnlib.forward import layer_norm

WEIGHT_NAMES = ("Wq", "Wk", "Wv", "Wo", "W1", "W2")
TORCH_MISSING = (
    "PyTorch is not installed: run `make test TORCH_SPEC=torch==2.13.0` to compare with autograd"
)


def small_stack(placement, *, depth=4, width=4, seed=0, qk_scale=1.0):
    """Four layers (so Mix-LN has one post-norm layer), 2 sequences of 3 tokens, and an upstream
    gradient."""
    rng = np.random.default_rng(seed)
    weights = init_weights(placement, depth, width, qk_scale=qk_scale, rng=rng)
    return weights, rng.normal(size=(2, 3, width)), rng.normal(size=(2, 3, width))


@pytest.mark.parametrize("qk_norm", [False, True], ids=["plain", "qk-norm"])
@pytest.mark.parametrize("placement", PLACEMENTS)
def test_stack_backward_matches_finite_differences(placement, qk_norm):
    weights, x, dy = small_stack(placement, qk_scale=2.0)
    out, states, caches = placement_forward(x, weights, placement, qk_norm=qk_norm)
    stream_grads, grads = placement_backward(dy, states, caches, weights, placement)
    forward = lambda v, ws=weights: placement_forward(v, ws, placement, qk_norm=qk_norm)[0]  # noqa: E731
    assert relative_error(stream_grads[0], numerical_gradient(forward, x, dy)) < 1e-6
    for layer in (0, len(weights) - 1):
        for name in WEIGHT_NAMES:

            def with_weight(m, layer=layer, name=name):
                ws = [dict(w) for w in weights]
                ws[layer][name] = m
                return forward(x, ws)

            numeric = numerical_gradient(with_weight, weights[layer][name], dy)
            assert relative_error(grads[layer][name], numeric) < 1e-6, (layer, name)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_rmsnorm_stack_backward_matches_finite_differences(placement):
    """norm="rms": every norm of the stack, the final one included, an RMSNorm."""
    weights, x, dy = small_stack(placement, qk_scale=2.0)
    x = x + 0.7  # a mean that LayerNorm would remove and RMSNorm keeps
    _, states, caches = placement_forward(x, weights, placement, norm="rms")
    stream_grads, grads = placement_backward(dy, states, caches, weights, placement, norm="rms")
    forward = lambda v, ws=weights: placement_forward(v, ws, placement, norm="rms")[0]  # noqa: E731
    assert relative_error(stream_grads[0], numerical_gradient(forward, x, dy)) < 1e-6
    for name in WEIGHT_NAMES:

        def with_weight(m, name=name):
            ws = [dict(w) for w in weights]
            ws[0][name] = m
            return forward(x, ws)

        numeric = numerical_gradient(with_weight, weights[0][name], dy)
        assert relative_error(grads[0][name], numeric) < 1e-6, name


def test_norm_layer_is_the_default_and_rms_changes_the_stack():
    """``norm="layer"`` is the stack the chapter always measured; ``norm="rms"`` is another, on
    the same weights and input."""
    weights, x, _ = small_stack("pre")
    ln = placement_forward(x, weights, "pre")[0]
    np.testing.assert_array_equal(ln, placement_forward(x, weights, "pre", norm="layer")[0])
    rms = placement_forward(x, weights, "pre", norm="rms")[0]
    assert not np.allclose(ln, rms)
    # the final RMSNorm leaves every token of mean square 1 (ε aside), LayerNorm of variance 1
    np.testing.assert_allclose(np.mean(rms**2, axis=-1), 1.0, rtol=1e-4)
    with pytest.raises(ValueError, match="norm must be one of"):
        placement_profile("pre", 2, 4, seeds=2, norm="batch")


@pytest.mark.parametrize("seed", range(4))
def test_qk_norm_bounds_every_logit_by_root_width_at_any_scale(seed):
    rng = np.random.default_rng(seed)
    w, x = init_layer(rng, 16), rng.normal(size=(2, 8, 16))
    for scale in (1.0, 10.0, 1000.0):
        scaled = {**w, "Wq": w["Wq"] * scale, "Wk": w["Wk"] * scale}
        normed = logit_statistics(x, scaled, qk_norm=True)
        assert normed["max_logit"] < normed["bound"] == 4.0
    plain_small, plain_large = (
        logit_statistics(x, {**w, "Wq": w["Wq"] * s, "Wk": w["Wk"] * s}) for s in (1.0, 10.0)
    )
    # q and k each grow tenfold, so every logit grows a hundredfold
    assert plain_large["max_logit"] == pytest.approx(100 * plain_small["max_logit"], rel=1e-9)
    assert plain_large["entropy"] < 0.25 * plain_small["entropy"]


def test_dyt_backward_matches_finite_differences():
    rng = np.random.default_rng(2)
    x, dy = rng.normal(size=(3, 5)) * 2, rng.normal(size=(3, 5))
    gamma, beta, alpha = rng.normal(size=5), rng.normal(size=5), 0.7
    dx, dalpha, dgamma, dbeta = dyt_backward(dy, x, alpha, gamma)
    assert (
        relative_error(dx, numerical_gradient(lambda v: dyt(v, alpha, gamma, beta), x, dy)) < 1e-7
    )
    assert (
        relative_error(dgamma, numerical_gradient(lambda g: dyt(x, alpha, g, beta), gamma, dy))
        < 1e-7
    )
    assert (
        relative_error(dbeta, numerical_gradient(lambda b: dyt(x, alpha, gamma, b), beta, dy))
        < 1e-7
    )
    step = 1e-6
    numeric = np.sum(
        dy * (dyt(x, alpha + step, gamma, beta) - dyt(x, alpha - step, gamma, beta))
    ) / (2 * step)
    assert dalpha == pytest.approx(numeric, rel=1e-7)


def test_fit_tanh_recovers_a_known_curve():
    x = np.linspace(-6, 6, 401)
    fit = fit_tanh(x, 3.0 * np.tanh(0.4 * x))
    assert fit["alpha"] == pytest.approx(0.4, rel=1e-6) and fit["gamma"] == pytest.approx(
        3.0, rel=1e-6
    )
    assert fit["rms_tanh"] < 1e-8 < fit["rms_line"]


def test_s_curve_is_layer_norm_entry_by_entry():
    x = heavy_tailed_tokens(4, 8, seed=3)
    inputs, outputs = s_curve(x)
    mean, std = x.mean(axis=1, keepdims=True), np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(inputs, x.ravel())
    np.testing.assert_allclose(outputs, ((x - mean) / std).ravel(), rtol=1e-12)


def test_deepnorm_constants_and_initialization():
    # Wang et al., decoder-only: alpha = (2M)^(1/4), beta = (8M)^(-1/4), M decoder layers; M = 8
    # gives 16^(1/4) = 2 and 64^(-1/4) = 1/(2 sqrt 2)
    alpha, beta = deepnorm_constants(8)
    assert alpha == pytest.approx(2.0) and beta == pytest.approx(1 / (2 * np.sqrt(2)))
    plain, deep = init_weights("pre", 8, 6, seed=4), init_weights("deepnorm", 8, 6, seed=4)
    for name in WEIGHT_NAMES:
        np.testing.assert_allclose(
            deep[3][name], plain[3][name] * (beta if name in ("Wv", "Wo", "W1", "W2") else 1.0)
        )
    assert {rule.residual for rule in sublayer_rules("deepnorm", 8)} == {alpha}


def test_mixln_and_layer_norm_scaling_rules():
    assert mixln_post_layers(4) == 1 and mixln_post_layers(48) == 12 and mixln_post_layers(3) == 0
    kinds = [rule.kind for rule in sublayer_rules("mixln", 8)]
    assert kinds == ["post"] * 2 + ["pre"] * 6
    scales = [rule.norm_scale for rule in sublayer_rules("lns", 4)]
    np.testing.assert_allclose(scales, [1, 1 / np.sqrt(2), 1 / np.sqrt(3), 0.5])


def test_peri_and_olmo2_streams_ignore_the_scale_of_the_branch_outputs():
    for placement in ("peri", "olmo2"):
        base, scaled = (
            placement_profile(placement, 6, 16, seeds=2, out_scale=s).stream_sq for s in (1.0, 5.0)
        )
        np.testing.assert_allclose(
            base, scaled, rtol=1e-3
        )  # equal but for the epsilon inside each norm
    pre, pre_scaled = (
        placement_profile("pre", 6, 16, seeds=2, out_scale=s).stream_sq[:, -1] for s in (1.0, 5.0)
    )
    assert np.all(pre_scaled > 10 * pre)


@pytest.mark.parametrize("placement", ["pre", "peri", "olmo2"])
def test_negating_a_branch_last_matrix_negates_what_its_sub_layer_adds(placement):
    """The step of the chapter's sign argument: one sub-layer at a time (the other branch's last
    matrix is 0, so it adds 0)."""
    rng = np.random.default_rng(12)
    w, x = init_layer(rng, 8), rng.normal(size=(2, 5, 8))
    for silent, last in (("W2", "Wo"), ("Wo", "W2")):
        one = {**w, silent: np.zeros_like(w[silent])}
        added = placement_forward(x, [one], placement)[1][1] - x
        flipped = placement_forward(x, [{**one, last: -one[last]}], placement)[1][1] - x
        assert np.max(np.abs(added)) > 0.1
        np.testing.assert_allclose(flipped, -added, rtol=0, atol=1e-12)


@pytest.mark.parametrize("placement", ["peri", "olmo2"])
def test_peri_and_olmo2_streams_grow_by_two_per_layer_in_expectation(placement):
    """Derived in the chapter: each sub-layer adds a normalized b with |b|^2 = d (eps aside), and
    negating the branch's last matrix negates b and nothing before it, so every cross term has mean
    zero and E |x_L|^2 / d = 1
    + 2L, a slope of 2. The mean over 24 seeds must sit within 3 standard errors of it, and the
      standard error must be
    small enough to tell."""
    depth = 12
    profile = placement_profile(placement, depth, 32, seeds=24)
    slopes = np.polyfit(np.arange(depth + 1), profile.stream_sq.T, 1)[0]
    for values, expected in ((slopes, 2.0), (profile.stream_sq[:, -1], 1.0 + 2.0 * depth)):
        standard_error = values.std(ddof=1) / np.sqrt(values.size)
        assert standard_error < 0.1 * expected
        assert abs(values.mean() - expected) < 3 * standard_error, (values.mean(), standard_error)


@pytest.mark.parametrize("placement", ["pre", "olmo2", "post"])
def test_sublayer_gains_multiply_to_the_streams_gradient_growth(placement):
    """Chapter "LayerNorm after 2020" explains OLMo 2's large bottom-layer gradients by the product
    of the sub-layers' gains: over the whole stack it must equal |dL/dx_0| / |dL/dx_L| of the same
    run (same seed)."""
    depth, width = 6, 16
    gains = sublayer_gradient_gains(placement, depth, width, seeds=1)
    rng = np.random.default_rng(0)
    weights = init_weights(placement, depth, width, rng=rng)
    x, target = rng.normal(size=(2, 8, width)), rng.normal(size=(2, 8, width))
    out, states, caches = placement_forward(x, weights, placement)
    stream = placement_backward(out - target, states, caches, weights, placement)[0]
    growth = np.linalg.norm(stream[0]) / np.linalg.norm(stream[-1])
    assert gains.shape == (1, depth, 2)
    assert np.prod(gains) == pytest.approx(growth, rel=1e-10)


def test_olmo2_attention_grows_the_gradient_and_qk_norm_stops_it():
    """OLMo 2's attention reads the unnormalized stream: its sub-layers multiply the gradient far
    more than the FFN's, and far more than with QK-norm (the chapter's explanation of its
    bottom-layer gradients)."""
    gains = sublayer_gradient_gains("olmo2", 24, 32, seeds=4).prod(axis=1)
    with_qk = sublayer_gradient_gains("olmo2", 24, 32, seeds=4, qk_norm=True).prod(axis=1)
    assert np.median(gains[:, 0]) > 10 * np.median(gains[:, 1])
    assert np.median(gains[:, 0]) > 10 * np.median(with_qk[:, 0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(placement="sandwich", depth=4, width=8), "placement must be one of"),
        (dict(placement="pre", depth=0, width=8), "depth"),
        (dict(placement="pre", depth=4, width=8, qk_scale=-1.0), "qk_scale must be a positive"),
        (
            dict(placement="pre", depth=4, width=8, out_scale=float("nan")),
            "out_scale must be a positive",
        ),
    ],
)
def test_bad_settings_get_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        placement_profile(**kwargs, seeds=1)


def test_dyt_rejects_a_vector_alpha():
    with pytest.raises(ValueError, match="alpha must be one finite number"):
        dyt(np.ones((2, 3)), alpha=np.ones(3))


# --- PyTorch autograd -------------------------------------------------------------------------


def torch_stack(torch, x, weights, placement, qk_norm):
    """The same stack written with torch operations, for autograd to differentiate."""
    ln = lambda v: torch.nn.functional.layer_norm(v, (v.shape[-1],), eps=1e-5)  # noqa: E731

    def attention(v, w):
        q, k = v @ w["Wq"], v @ w["Wk"]
        if qk_norm:
            q, k = ln(q), ln(k)
        return (
            torch.softmax(q @ k.transpose(1, 2) / v.shape[-1] ** 0.5, dim=-1)
            @ (v @ w["Wv"])
            @ w["Wo"]
        )

    def ffn(v, w):
        return torch.relu(v @ w["W1"]) @ w["W2"]

    for w, rule in zip(weights, sublayer_rules(placement, len(weights))):
        for branch in (attention, ffn):
            if rule.kind == "post":
                x = ln(rule.residual * x + branch(x, w))
            elif rule.kind == "pre":
                x = x + branch(rule.norm_scale * ln(x), w)
            elif rule.kind == "peri":
                x = x + ln(branch(ln(x), w))
            else:
                x = x + ln(branch(x, w))
    return x if placement in ("post", "deepnorm") else ln(x)


@pytest.mark.parametrize("qk_norm", [False, True], ids=["plain", "qk-norm"])
@pytest.mark.parametrize("placement", PLACEMENTS)
def test_stack_backward_matches_pytorch_autograd(placement, qk_norm):
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    weights, x, dy = small_stack(placement, depth=5, width=6, seed=7, qk_scale=3.0)
    out, states, caches = placement_forward(x, weights, placement, qk_norm=qk_norm)
    stream_grads, grads = placement_backward(dy, states, caches, weights, placement)
    tx = torch.tensor(x, requires_grad=True)
    tw = [{name: torch.tensor(m, requires_grad=True) for name, m in w.items()} for w in weights]
    t_out = torch_stack(torch, tx, tw, placement, qk_norm)
    t_out.backward(torch.tensor(dy))
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(stream_grads[0], tx.grad.numpy(), rtol=1e-8, atol=1e-12)
    for ours, theirs in zip(grads, tw):
        for name in WEIGHT_NAMES:
            np.testing.assert_allclose(ours[name], theirs[name].grad.numpy(), rtol=1e-8, atol=1e-12)


def test_dyt_backward_matches_pytorch_autograd():
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    rng = np.random.default_rng(8)
    x, dy, gamma, beta = (
        rng.normal(size=(4, 6)) * 3,
        rng.normal(size=(4, 6)),
        rng.normal(size=6),
        rng.normal(size=6),
    )
    tx, ta, tg, tb = (
        torch.tensor(v, requires_grad=True) for v in (x, np.float64(0.5), gamma, beta)
    )
    out = tg * torch.tanh(ta * tx) + tb
    out.backward(torch.tensor(dy))
    dx, dalpha, dgamma, dbeta = dyt_backward(dy, x, 0.5, gamma)
    np.testing.assert_allclose(out.detach().numpy(), dyt(x, 0.5, gamma, beta), rtol=1e-12)
    for ours, theirs in ((dx, tx), (dalpha, ta), (dgamma, tg), (dbeta, tb)):
        np.testing.assert_allclose(ours, theirs.grad.numpy(), rtol=1e-10)


# --- the explorer -----------------------------------------------------------------------------


def test_explorer_shows_the_numbers_of_its_grid():
    import lnlib.book.explorers
    from lnlib.book.explorers.after_2020 import SEEDS, WIDTH

    explorer = lnlib.book.explorers.after_2020_explorer(
        placement="lns", depth=8, qk_scale=8, qk_norm=True
    )
    profile = placement_profile(
        "lns", 8, WIDTH, seeds=SEEDS, qk_scale=8, qk_norm=True
    )  # measured again, by hand
    assert explorer.result["stream_top"] == pytest.approx(profile.stream_sq[:, -1].mean())
    grads = profile.grad_norm.mean(axis=0)
    assert explorer.result["grad_top_over_bottom"] == pytest.approx(grads[-1] / grads[0])
    assert f"<b>{profile.stream_sq[:, -1].mean():.3g}</b>" in explorer.readout.value


def test_explorer_gives_a_small_gradient_ratio_in_significant_digits():
    # Peri-LN at depth 32 and q/k scale 8: the top layer's gradient is under 1e-3 of the
    # bottom's, which two decimals would print as 0.00 (chapter "LayerNorm after 2020", Explore)
    import lnlib.book.explorers
    from lnlib.book.explorers.after_2020 import SEEDS, WIDTH

    explorer = lnlib.book.explorers.after_2020_explorer(
        placement="peri", depth=32, qk_scale=8, qk_norm=False
    )
    grads = placement_profile("peri", 32, WIDTH, seeds=SEEDS, qk_scale=8).grad_norm.mean(axis=0)
    ratio = grads[-1] / grads[0]
    assert 1e-4 < ratio < 0.005  # two significant digits, no power of ten
    assert f"top/bottom gradient = <b>{ratio:.2g}</b>" in explorer.readout.value
    assert "gradient = <b>0.00</b>" not in explorer.readout.value


def test_explorer_refuses_settings_off_its_grid():
    import lnlib.book.explorers

    with pytest.raises(ValueError, match="after_2020_explorer offers"):
        lnlib.book.explorers.after_2020_explorer(depth=48)


def test_placement_summary_reads_each_seed_of_a_profile():
    """The chapter's summary figure and bullets read these: each is one number per seed, computed
    from the profile's rows."""
    depth, seeds = 5, 3
    layers = np.arange(depth + 1)
    stream = 1.0 + np.outer([2.0, 1.5, 0.5], layers)  # straight lines of known slope
    grads = np.tile([4.0, 2.0, 2.0, 2.0, 1.0], (seeds, 1)) * np.array([[1.0], [2.0], [3.0]])
    angle = np.linspace(0.1, 0.5, depth) * np.ones((seeds, 1))
    entropy = np.full((seeds, depth), 1.25)
    summary = placement_summary(PlacementProfile("pre", depth, 8, stream, grads, angle, entropy))
    np.testing.assert_allclose(summary["slope"], [2.0, 1.5, 0.5])
    np.testing.assert_allclose(summary["top"], 1.0 + 5 * np.array([2.0, 1.5, 0.5]))
    np.testing.assert_allclose(summary["grad_ratio"], 0.25)  # scale-free: the same in every seed
    np.testing.assert_allclose(summary["grad_spread"], np.std([4, 2, 2, 2, 1]) / 2.2)
    np.testing.assert_allclose(summary["angle_top"], 0.5)
    np.testing.assert_allclose(summary["entropy"], 1.25)
    post = placement_summary(placement_profile("post", 6, 16, seeds=2))
    np.testing.assert_allclose(post["top"], 1.0, atol=1e-4)  # the stream is renormalized
    np.testing.assert_allclose(post["slope"], 0.0, atol=0.02)  # only the input x_0 is off 1


def test_typical_rounds_a_skewed_median_where_its_spread_stops_supporting_digits():
    tight = typical(1811.0 * np.exp(np.linspace(-0.001, 0.001, 24)))
    assert str(tight["median"]) == "1811"  # a spread of 0.1 %: every digit holds
    wide = typical(1811.0 * np.exp(np.linspace(-2.0, 2.0, 24)))
    assert str(wide["median"]) == "2000"  # a spread of a factor 50: one digit
    # 1811 e^-2 = 245.1 and 1811 e^2 = 13381, at two significant digits
    assert (str(wide["min"]), str(wide["max"])) == ("250", "13000")
    assert str(typical([0.093, 0.12, 0.2])["min"]) == "0.093"
    for bad in ([1.0], [1.0, 0.0], [1.0, np.nan]):
        with pytest.raises(ValueError, match="positive"):
            typical(bad)


# --- around the norm: the depth scalings (lnlib.book.experiments.after_2020) ----------------------


@pytest.mark.parametrize("placement", ["pre", "lns"])
def test_scaled_stream_is_the_placements_stream_seed_by_seed(placement):
    """The experiment's own forward loop gives the placements' stream, bit for bit, for the two
    rules both know."""
    ours = scaled_stream(placement, 5, 8, seeds=3, first_seed=4)
    theirs = placement_profile(placement, 5, 8, seeds=3, first_seed=4).stream_sq
    np.testing.assert_array_equal(ours, theirs)


def test_depth_mup_divides_the_branch_by_root_depth():
    # one layer: 1/sqrt(1) = 1, so it is Pre-LN
    np.testing.assert_array_equal(scaled_stream("depth_mup", 1, 8), scaled_stream("pre", 1, 8))
    # the rule by hand: x + F(LN(x)) / sqrt(L), on the chapter's building blocks
    depth, rng = 3, np.random.default_rng(0)
    weights = init_weights("pre", depth, 8, rng=rng)
    x = rng.normal(size=(2, 8, 8))
    for w in weights:
        for sub in (attention_forward, ffn_forward):
            x = x + sub(layer_norm(x, eps=MODEL_EPS), w)[0] / np.sqrt(depth)
    top = np.mean(np.sum(x * x, axis=-1)) / 8
    assert scaled_stream("depth_mup", depth, 8, seeds=1)[0, -1] == pytest.approx(top, rel=1e-9)
    assert branch_scale("lns", 4, 9) == (0.5, 1.0, True)


def test_rezero_at_zero_keeps_the_input_at_every_layer():
    depth, width, seeds = 6, 8, 3
    stream = scaled_stream("rezero", depth, width, seeds=seeds)
    for s in range(seeds):  # the input, drawn as the experiment draws it
        rng = np.random.default_rng(s)
        init_weights("pre", depth, width, rng=rng)
        x = rng.normal(size=(2, 8, width))
        np.testing.assert_array_equal(stream[s], np.mean(np.sum(x * x, axis=-1)) / width)


def test_root_depth_scaling_keeps_the_stream_size_while_pre_ln_grows_with_depth():
    """The chapter's claim: 16 times the depth multiplies Pre-LN's final variance by about 16, LN
    scaling's by a small factor, and leaves the 1/sqrt(L) stack's unchanged within the scatter over
    seeds."""
    seeds = 6

    def ratio(scaling):
        shallow, deep = (scaled_stream(scaling, L, 16, seeds=seeds)[:, -1].mean() for L in (6, 96))
        return deep / shallow

    pre, lns, mup = ratio("pre"), ratio("lns"), ratio("depth_mup")
    assert pre > 8
    assert 1.2 < lns < pre / 2
    assert 0.8 < mup < 1.25


def test_unknown_depth_scaling_is_refused():
    with pytest.raises(ValueError, match="scaling must be one of"):
        scaled_stream("fixup", 3, 8)


def test_token_similarity_is_the_mean_cosine_of_the_normalized_tokens_by_hand():
    """Independently of the experiment's batched Gram matrix: pair by pair, with lnlib's own
    LayerNorm."""
    depth, width = 3, 8
    alike = token_similarity("pre", depth, width, seeds=1)
    rng = np.random.default_rng(0)
    init_weights("pre", depth, width, rng=rng)
    x = layer_norm(rng.normal(size=(2, 8, width)), eps=MODEL_EPS)
    cosines = [
        x[b, i] @ x[b, j] / np.linalg.norm(x[b, i]) / np.linalg.norm(x[b, j])
        for b in range(2)
        for i in range(8)
        for j in range(8)
        if i != j
    ]
    assert alike[0, 0] == pytest.approx(np.mean(cosines), abs=1e-12)


def test_rezero_at_zero_leaves_the_tokens_as_alike_as_the_input():
    alike = token_similarity("rezero", 6, 8, seeds=3)
    np.testing.assert_array_equal(alike, alike[:, :1] * np.ones_like(alike))


def test_tokens_align_with_depth_in_pre_ln_and_much_less_with_the_branch_over_root_depth():
    """The chapter's claim, seed by seed: after 48 Pre-LN layers the tokens are far more alike than
    after the first, and more alike than with LN scaling, which are more alike than with the
    1/sqrt(L) branch."""
    pre, lns, mup = (token_similarity(s, 48, 32, seeds=24) for s in ("pre", "lns", "depth_mup"))
    assert np.all(pre[:, -1] > pre[:, 1] + 0.3)
    assert np.all(pre[:, -1] > lns[:, -1])
    assert np.mean(lns[:, -1] > mup[:, -1]) > 0.9
    assert np.all(np.abs(pre[:, 0]) < 0.1)  # independent random tokens: about orthogonal


def test_explorer_says_what_peri_ln_and_olmo_2_scatter_around():
    # learner B read OLMo 2's 75.3 at L = 32 (two seeds) against the chapter's "2 per layer in
    # expectation"; the readout names 1 + 2L, and over many seeds the mean is near it
    import lnlib.book.explorers
    from lnlib.book.explorers.after_2020 import WIDTH

    explorer = lnlib.book.explorers.after_2020_explorer(
        placement="olmo2", depth=32, qk_scale=1, qk_norm=False
    )
    assert "in expectation 1 + 2L = 65" in explorer.readout.value
    many = placement_profile("olmo2", 32, WIDTH, seeds=24, qk_scale=1, qk_norm=False)
    spread = many.stream_sq[:, -1]
    assert abs(spread.mean() - 65) < 2 * spread.std(ddof=1) / np.sqrt(len(spread))
    explorer.controls["placement"].value = "pre"
    assert "in expectation" not in explorer.readout.value
