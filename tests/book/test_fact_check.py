"""Every verdict of the chapter "Fact check" as an assertion that fails if the verdict is wrong.

One test per claim of :data:`lnlib.book.factcheck.claims.CLAIMS`, named ``test_<key>``. Expected
values are derived independently of the code under test: hand arithmetic written
out here, sympy, a second formula, finite differences, or PyTorch. Monte Carlo
checks state their sample size and seed and allow 4 standard errors.
"""

import inspect
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import lnlib.book.explorers
from lnlib import layer_norm
from lnlib.backward import layer_norm_backward, layer_norm_jacobian, numerical_gradient
from lnlib.book.experiments.pre_post_norm import depth_sweep, init_profile
from lnlib.book.factcheck.claims import CLAIMS, VERDICTS, Claim, claim, claims_table
from lnlib.book.factcheck.measurements import (
    GRID_SIZES,
    Measurement,
    batch_norm_future_leak,
    draw_inputs,
    entropy_under_layer_norm,
    eps_placement_gap,
    exchangeable_second_moments,
    feature_correlation,
    gamma_gradient_by_source_rule,
    gamma_step_ratios,
    input_scale_gradient_factor,
    jacobian_rank,
    moment_grid,
    normal_fourth_moment,
    normal_fourth_moment_symbolic,
    output_covariances,
    output_feature_moments,
    shift_after_update,
    single_path_gradient,
    weight_scale_gradient_ratio,
    xhat_moment,
    xhat_pair_covariance,
)
from lnlib.book.models.deep_stack import random_stack, run_stack
from lnlib.book.models.dyt import fit_tanh, heavy_tailed_tokens, s_curve
from lnlib.book.models.placements import PLACEMENTS, logit_statistics, placement_profile
from lnlib.book.models.transformer import attention_forward, init_layer
from lnlib.harness import check_layer_norm
from lnlib.norms import batch_norm, instance_norm
from lnlib.symbolic import closed_form_jacobian, jacobian, make_symbols, source_jacobian_diagonal
from lnlib.textbook import numpy_layer_norm
from lnlib.variants import FRAMEWORK_EPS, buggy_half_statistics

ROOT = Path(__file__).resolve().parents[2]
Z = 4.0  # Monte Carlo tolerance, in standard errors


def manual_xhat(x, eps=0.0):
    """x̂ written out with numpy, independent of lnlib."""
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


# --- the registry ---------------------------------------------------------------------------------


def test_every_claim_has_a_test():
    tests = {
        name
        for name, _ in inspect.getmembers(sys.modules[__name__], inspect.isfunction)
        if name.startswith("test_")
    }
    missing = [c.key for c in CLAIMS if f"test_{c.key}" not in tests]
    assert not missing, f"claims without a test backing their verdict: {missing}"


def test_claims_link_existing_chapters_and_valid_verdicts():
    for item in CLAIMS:
        assert item.verdict in VERDICTS
        for chapter in item.chapters:
            assert (ROOT / "chapters" / f"{chapter}.ipynb").exists(), (
                f"{item.key} links {chapter}, which does not exist"
            )
    table = claims_table()
    assert table.count("\n") == len(CLAIMS) + 1
    assert (
        "[“Normalizing”, below](17_fact_check.ipynb#normalizing)" in table
        and "[“Statistics of the normalized features”, below]"
        "(17_fact_check.ipynb#statistics-of-the-normalized-features)"
        in table
        and "[“Pre-norm and post-norm”, below](17_fact_check.ipynb#pre-norm-and-post-norm)" in table
    )


def test_a_claim_with_an_unknown_verdict_or_source_is_refused():
    with pytest.raises(ValueError, match="verdict"):
        Claim("k", "q", "003", "probably", "c", "fc-statistics")
    with pytest.raises(ValueError, match="source"):
        Claim("k", "q", "999", "true", "c", "fc-statistics")
    with pytest.raises(KeyError, match="known"):
        claim("no such claim")


def test_measurement_z_score():
    assert Measurement("m", 1.2, 1.0, 0.1, 10, 0).z == pytest.approx(2.0)
    assert Measurement("m", 1.0, 1.0).z == 0.0
    assert Measurement("m", 0.5, 1.0).z == -np.inf


def test_bad_inputs_get_clear_errors():
    with pytest.raises(ValueError, match="distribution"):
        draw_inputs("cauchy", 4, 10)
    with pytest.raises(ValueError, match="at least 2"):
        draw_inputs("normal", 1, 10)
    with pytest.raises(TypeError, match="integer"):
        draw_inputs("normal", 4.5, 10)
    with pytest.raises(ValueError, match="order"):
        xhat_moment(5, 4)


# --- definitions ----------------------------------------------------------------------------------


def test_mean_removes_scale():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    centred = x - x.mean()
    assert not np.allclose(10 * x - (10 * x).mean(), centred)  # centring keeps the scale (×10)
    np.testing.assert_allclose(
        layer_norm(10 * x, eps=0.0), layer_norm(x, eps=0.0)
    )  # dividing by σ removes it


def test_invariance_affine():
    x = np.random.default_rng(0).normal(size=6)
    b = np.random.default_rng(1).normal(size=6)
    assert (
        np.abs(layer_norm(x + b, eps=0.0) - layer_norm(x, eps=0.0)).max() > 0.1
    )  # a general vector b: false
    np.testing.assert_allclose(
        layer_norm(-2 * x, eps=0.0), -layer_norm(x, eps=0.0)
    )  # a < 0 flips the sign
    np.testing.assert_allclose(
        layer_norm(3 * x + 7.0, eps=0.0), layer_norm(x, eps=0.0)
    )  # a > 0, constant b: true
    a, eps = 1e-3, 1e-5
    np.testing.assert_allclose(
        layer_norm(a * x, eps=eps), layer_norm(x, eps=eps / a**2)
    )  # ε > 0: ε/a² effectively


def test_standardizes_mean0_var1():
    x = np.array([1.0, 1.001, 0.999, 1.0])
    eps = 1e-5
    var = (0 + 1e-6 + 1e-6 + 0) / 4  # by hand: 5e-7
    xhat = layer_norm(x, eps=eps)
    assert abs(xhat.mean()) < 1e-12
    assert xhat.var() == pytest.approx(var / (var + eps))  # 0.0476, far from 1
    y = layer_norm(x, np.full(4, 2.0), np.full(4, 1.0), eps=0.0)
    assert y.mean() == pytest.approx(1.0) and y.var() == pytest.approx(
        4.0
    )  # after γ = 2, β = 1: mean 1, variance 4


def test_eps_outside_sqrt():
    x, eps = [1.0, 1.001, 0.999, 1.0], 1e-5
    sigma = np.sqrt(5e-7)  # hand arithmetic as above
    expected = 0.001 / (sigma + eps) - 0.001 / np.sqrt(sigma**2 + eps)
    assert eps_placement_gap(x, eps=eps) == pytest.approx(expected, rel=1e-6)
    assert expected > 1.0
    assert (
        eps_placement_gap([1.0, 2.0, 3.0, 4.0], eps=eps) < 1e-5
    )  # invisible on the documents' example


def test_gamma_per_sample():
    batch = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 9.0], [0.0, 1.0, 0.0, 2.0]])
    with pytest.raises(ValueError, match="shape of the normalized axes"):
        layer_norm(batch, gamma=np.ones(3))  # one γ per sample is refused
    per_slot = np.array([1.0, 2.0, 3.0])[:, None]  # the document's reading: γ_n by position
    same_example_twice = manual_xhat(np.stack([batch[0], batch[0], batch[0]])) * per_slot
    assert not np.allclose(
        same_example_twice[0], same_example_twice[1]
    )  # the same input, a different output per slot


def test_gamma_per_sample_torch(torch):
    module = torch.nn.LayerNorm(4)
    assert tuple(module.weight.shape) == (4,) and tuple(module.bias.shape) == (4,)


def test_centring_mean_zero():
    x = sp.symbols("x1:6")
    assert (
        sp.simplify(sum(xi - sum(x) / 5 for xi in x)) == 0
    )  # over one sample's features: an identity
    shifted = draw_inputs("unequal", 4, 2000, 3)
    per_feature = (shifted - shifted.mean(axis=1, keepdims=True)).mean(axis=0)
    assert abs(per_feature[0]) > 1.0  # per feature, unequal inputs: mean 0 − 1.5 on average


def test_different_scales():
    x1, x2 = np.array([1.0, 2.0, 3.0, 4.0]), np.array([5.0, 6.0, 7.0, 8.0])
    assert x1.var() == x2.var() == 5 / 4  # (2.25 + 0.25 + 0.25 + 2.25)/4 for both: same scale
    np.testing.assert_array_equal(x2 - x1, 4.0)  # they differ in location only
    np.testing.assert_allclose(
        layer_norm(x2), layer_norm(x1), atol=1e-12
    )  # so their x̂ are identical, not just similar


def test_initial_identity():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    fresh = layer_norm(x, np.ones(4), np.zeros(4))
    np.testing.assert_allclose(fresh, manual_xhat(x, eps=1e-5))  # γ = 1, β = 0: the output is x̂...
    assert np.abs(fresh - x).max() > 1.0  # ...not x


def test_undo_normalization():
    x, eps = np.array([2.0, 4.0, 6.0, 8.0]), 1e-5
    gamma, beta = np.full(4, np.sqrt(5.0 + eps)), np.full(4, 5.0)  # σ² = 5, μ = 5 by hand
    np.testing.assert_allclose(layer_norm(x, gamma, beta, eps=eps), x)  # one vector: undone exactly
    pair = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])  # two inputs with the same x̂
    rng = np.random.default_rng(13)
    for g, b in [(gamma, beta)] + [tuple(rng.normal(size=(2, 4))) for _ in range(3)]:
        y = layer_norm(pair, g, b, eps=eps)
        np.testing.assert_allclose(y[0], y[1])  # any shared γ, β: one output for both
        assert np.abs(y - pair).max() > 1.0  # so no γ, β gives both inputs back


def test_eps_typesetting_slip_is_no_claim():
    """The walkthrough's ε = $1e^{-5}$ is a typesetting slip, not a claim: its own numbers show it
    means 10⁻⁵."""
    x = np.array([2.0, 4.0, 6.0, 8.0])
    e_to_minus_5 = 1 / 2.718281828459045**5  # 1·e⁻⁵ ≈ 0.0067, what $1e^{-5}$ says
    assert round(-3 / np.sqrt(5 + e_to_minus_5), 4) == -1.3407  # σ² = 5, x₁ − μ = −3 by hand
    assert round(layer_norm(x, eps=e_to_minus_5)[0], 4) == -1.3407  # not the document's −1.3416...
    assert round(layer_norm(x, eps=1e-5)[0], 4) == -1.3416  # ...which ε = 10⁻⁵ gives


def test_bn_not_in_transformers():
    bn_change, ln_change = batch_norm_future_leak()
    assert (
        bn_change > 1e-3
    )  # batch norm over (batch, tokens): the last token changes the first token's output
    assert ln_change == 0.0  # layer norm: each token on its own


# --- statistics -----------------------------------------------------------------------------------


def test_cov_xhat():
    moments = exchangeable_second_moments()
    H, r = moments["H"], moments["r"]
    assert sp.simplify(moments["b"].subs(r, 1) + 1 / (H - 1)) == 0  # derived: −1/(H − 1) for ε = 0
    assert sp.simplify(moments["a"] + (H - 1) * moments["b"]) == 0  # Σ x̂ = 0 holds in expectation
    for size in (3, 4, 8):
        m = xhat_pair_covariance(size, samples=20000, seed=size)
        assert abs(m.z) < Z, str(m)
    with_eps = xhat_pair_covariance(4, samples=20000, seed=1, eps=0.5)  # ε > 0: −E[r]/(H − 1)
    x = draw_inputs("normal", 4, 20000, 1)
    var = x.var(axis=1)
    assert with_eps.measured == pytest.approx(
        -np.mean(var / (var + 0.5)) / 3, abs=Z * with_eps.stderr
    )
    unequal = xhat_pair_covariance(4, distribution="unequal", samples=20000, seed=2)
    assert abs(unequal.z) > 20, str(unequal)  # not exchangeable: the claim fails


def test_cov_scaling():
    x = draw_inputs("unequal", 5, 2000, 3)  # any inputs, exchangeable or not
    gamma, beta = np.array([1.0, -2.0, 0.5, 3.0, 1.5]), np.arange(5.0)
    xhat = manual_xhat(x, eps=1e-5)
    np.testing.assert_allclose(
        np.cov(gamma * xhat + beta, rowvar=False),
        np.outer(gamma, gamma) * np.cov(xhat, rowvar=False),
        atol=1e-12,
    )


def test_cov_output_formula():
    gamma = np.array([1.0, 2.0, 0.5, 1.5])
    H = gamma.size
    n = 40000
    c = output_covariances(gamma, samples=n, seed=4)
    centred = manual_xhat(draw_inputs("normal", H, n, 4)) * gamma  # y − β, redone by hand
    products = centred[:, :, None] * centred[:, None, :]
    stderr = products.std(axis=0, ddof=1) / np.sqrt(n)  # s.e. of each covariance estimate
    by_hand = np.outer(gamma, gamma) * np.where(
        np.eye(H, dtype=bool), 1.0, -1.0 / (H - 1)
    )  # γ_i² on the diagonal, −γ_iγ_j/(H−1) off it
    assert np.all(np.abs(c.measured - by_hand) < Z * stderr)
    np.testing.assert_allclose(
        c.exact / c.document, H**2 / (H - 1)
    )  # the document is 16/3 times too small
    assert np.abs(c.measured - c.document).max() > 2.0


def test_moments_first_two():
    m1 = xhat_moment(1, 6, samples=20000, seed=5)
    assert abs(m1.z) < Z or m1.stderr < 1e-12  # Σ x̂ = 0 per sample
    m2 = xhat_moment(2, 6, samples=2000, seed=5)
    assert m2.measured == pytest.approx(1.0, abs=1e-12)  # Σ x̂² = H per sample (ε = 0)
    with_eps = xhat_moment(2, 6, samples=2000, seed=5, eps=0.5)
    var = draw_inputs("normal", 6, 2000, 5).var(axis=1)
    assert with_eps.measured == pytest.approx(np.mean(var / (var + 0.5)))  # E[σ²/(σ²+ε)], below 1
    unequal = xhat_moment(1, 6, distribution="unequal", samples=20000, seed=5)
    assert abs(unequal.z) > 20  # feature 1 of unequal inputs: mean ≠ 0


def test_moments_three_four():
    derived = normal_fourth_moment_symbolic()
    H = derived["H"]
    assert derived["second"] == 1
    assert derived["fourth"].subs(H, 2) == 1 and derived["fourth"].subs(H, 4) == sp.Rational(
        9, 5
    )  # by hand: 3·1/3, 3·3/5
    assert sp.limit(derived["fourth"], H, sp.oo) == 3
    assert xhat_moment(4, 2, samples=500).measured == pytest.approx(1.0)  # H = 2: x̂ = ±1 exactly
    m = xhat_moment(4, 4, samples=20000, seed=6)
    assert abs(m.measured - normal_fourth_moment(4)) < Z * m.stderr and m.measured < 2.0
    assert abs(xhat_moment(3, 64, samples=4000, seed=6).z) < Z  # symmetric inputs: 0
    skewed = xhat_moment(3, 256, distribution="exponential", samples=2000, seed=6)
    assert skewed.measured > 1.5  # exponential inputs: skewness 2


def test_output_mean_var():
    gamma, beta = np.array([1.0, 2.0, 0.5, 1.5]), np.array([0.0, 1.0, 2.0, 3.0])
    n = 40000
    m = output_feature_moments(gamma, beta, samples=n, seed=7)
    assert np.all(
        np.abs(m.feature_mean - beta) < Z * gamma / np.sqrt(n)
    )  # per feature: E[y_i] = β_i
    var_err = gamma**2 * np.sqrt(
        (normal_fourth_moment(4) - 1) / n
    )  # s.e. of a variance: γ²·sd(x̂²)/√n, E[x̂⁴] = 9/5
    assert np.all(np.abs(m.feature_var - gamma**2) < Z * var_err)  # and Var(y_i) = γ_i²
    assert m.sample_mean.std() > 0.1  # per sample: varies unless γ is constant
    constant = output_feature_moments(np.full(4, 2.0), beta, samples=100, seed=7)
    np.testing.assert_allclose(constant.sample_mean, beta.mean())  # constant γ: exactly mean(β)
    with_eps = output_feature_moments(gamma, beta, samples=n, seed=7, eps=1.0)
    assert np.all(with_eps.feature_var < 0.8 * gamma**2)  # ε > 0: smaller than γ²


def test_normality():
    normal = xhat_moment(4, 256, distribution="normal", samples=4000, seed=8)
    assert (
        abs(normal.measured - 3 * 255 / 257) < 0.05
    )  # the condition under which it holds: normal inputs, kurtosis → 3
    uniform = xhat_moment(4, 256, distribution="uniform", samples=4000, seed=8)
    assert (
        abs(uniform.measured - 9 / 5) < 0.05
    )  # the uniform's kurtosis, 9/5, not 3 (0.05 allows the O(1/H) bias at H = 256)
    assert uniform.z < -100
    H = 16
    spike = layer_norm(np.eye(H)[0], eps=0.0)
    assert spike.max() == pytest.approx(np.sqrt(H - 1))  # bounded by √(H−1): never exactly normal


def test_decorrelation():
    size = 8
    before, after = feature_correlation(
        np.full(size, 2.0), samples=20000, seed=9
    )  # a factor shared equally
    assert before.measured == pytest.approx(4 / 5, abs=Z * before.stderr)  # ℓ²/(ℓ² + 1) by hand
    assert after.measured == pytest.approx(
        -1 / (size - 1), abs=Z * after.stderr
    )  # only −1/(H−1) is left
    _, kept = feature_correlation(np.r_[2.0, 2.0, np.zeros(size - 2)], samples=20000, seed=9)
    assert kept.measured > 0.3  # a factor of two features survives
    indep_before, indep_after = feature_correlation(np.zeros(size), samples=20000, seed=9)
    assert (
        abs(indep_after.measured) > abs(indep_before.measured) + 0.1
    )  # independent features become correlated


# --- gradients ------------------------------------------------------------------------------------


def test_gradient_formula():
    sym = make_symbols(3)
    document = source_jacobian_diagonal(sym, 0)
    s = sp.sqrt(sum((xi - sum(sym.x) / 3) ** 2 for xi in sym.x) / 3 + sym.eps)
    assert (
        sp.simplify(document - sym.gamma[0] / s * sp.Rational(2, 3)) == 0
    )  # collapses to γ/s · (1 − 1/H)
    assert sp.simplify(jacobian(sym)[0, 0] - closed_form_jacobian(sym)[0, 0]) == 0
    x, eps = np.array([2.0, 4.0, 6.0, 8.0]), 1e-5
    J = layer_norm_jacobian(x, eps=eps)
    finite = np.array(
        [numerical_gradient(lambda v: layer_norm(v, eps=eps), x, np.eye(4)[i]) for i in range(4)]
    )
    np.testing.assert_allclose(J, finite, atol=1e-6)
    document_value = (1 - 1 / 4) / np.sqrt(5.0 + eps)  # σ² = 5 by hand
    assert np.abs(np.diag(J) - document_value).max() > 0.1


def test_chain_rule_single_path():
    x, dy = np.array([2.0, 4.0, 6.0, 8.0]), np.array([1.0, -0.5, 0.25, 2.0])
    document, true = single_path_gradient(x, dy, eps=1e-5)
    finite = numerical_gradient(lambda v: layer_norm(v, eps=1e-5), x, dy)
    np.testing.assert_allclose(
        true, finite, atol=1e-6
    )  # the full chain rule, by finite differences
    assert (
        abs(true.sum()) < 1e-9 and abs(document.sum()) > 0.1
    )  # one path per feature misses the sum-to-0
    assert np.abs(document - true).max() > 0.1


def test_gradient_scale_alpha():
    x = np.array([2.0, 4.0, 6.0, 8.0])
    assert input_scale_gradient_factor(x, 2.0).measured == pytest.approx(0.5)  # α > 0, ε = 0: 1/α
    negative = input_scale_gradient_factor(x, -2.0)
    assert negative.measured == pytest.approx(0.5) and negative.claimed == pytest.approx(
        -0.5
    )  # 1/|α|: sign wrong
    tiny = input_scale_gradient_factor(x, 1e-3, eps=1e-5)
    assert tiny.measured < 0.7 * tiny.claimed  # saturates when α²σ² ~ ε


def test_update_rule_sum():
    rng = np.random.default_rng(10)
    x, dy = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    document, true = gamma_gradient_by_source_rule(x, dy)
    assert document.shape == (5,) and true.shape == (4,)  # one number per sample, not per feature
    finite = numerical_gradient(lambda g: layer_norm(x, g), np.ones(4), dy)
    np.testing.assert_allclose(true, finite, atol=1e-6)
    assert document.sum() == pytest.approx(true.sum())  # it is the gradient of ONE shared scalar γ
    assert np.ptp(true) > 0.1  # but each feature's γ_i has its own


# --- optimization ---------------------------------------------------------------------------------


def test_constant_gradient_depth():
    grads = depth_sweep([2, 16], 32, "pre", seeds=2).mean(axis=0)
    assert (
        grads[1] / grads[0] < 0.7
    )  # pre-norm: the last layer's gradient shrinks with depth (Xiong et al.: ~ 1/√L)


def test_natural_gradient():
    assert claim("natural_gradient").verdict == "not checkable as stated"
    m = weight_scale_gradient_ratio(3.0)
    assert m.measured == pytest.approx(1 / 3)  # what Ba et al. do show: 1/c


def test_convergence_gamma():
    rng = np.random.default_rng(0)  # the same draws as gamma_step_ratios
    xhat = manual_xhat(rng.normal(size=(64, 4)))
    curvature = (xhat**2).mean(axis=0)
    for lr in (0.5, 3.0):
        ratios = gamma_step_ratios(lr, seed=0)
        factors = np.abs(1 - lr * curvature)
        assert np.all((ratios >= factors.min() - 1e-9) & (ratios <= factors.max() + 1e-9))
    assert np.all(gamma_step_ratios(0.5) < 1)  # small η: a contraction
    unstable = gamma_step_ratios(2.5 / curvature.max())
    assert unstable[-1] == pytest.approx(
        2.5 - 1, abs=1e-3
    )  # η > 2/λ_max: steps grow by |1 − ηλ_max|
    assert np.any(gamma_step_ratios(0.5, batch=4) > 1)  # mini-batches: no contraction


def test_internal_covariate_shift():
    sample_mean, feature_shift = shift_after_update()
    assert sample_mean < 1e-12  # each sample's mean over its features is pinned at 0...
    assert (
        feature_shift > 0.05
    )  # ...but each feature's mean over the samples still moves after a weight update


# --- information ----------------------------------------------------------------------------------


def test_entropy_reduction():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    assert jacobian_rank(x) == x.size - 2  # LN(x) fills only an (H−2)-dim set
    assert (
        np.linalg.matrix_rank(layer_norm_jacobian(x, eps=1e-5)) == x.size - 1
    )  # ε > 0: the (H−1)-dim plane Σ x̂ = 0
    collapse = entropy_under_layer_norm([x, 2 * x + 1, x[::-1]])
    by_hand = -(
        2 / 3 * np.log2(2 / 3) + 1 / 3 * np.log2(1 / 3)
    )  # x and 2x + 1 merge: probabilities 2/3, 1/3
    assert collapse == pytest.approx((np.log2(3), by_hand))
    distinct = entropy_under_layer_norm(
        [x, 5 * x[::-1], x[[1, 0, 2, 3]] + 3]
    )  # none normalized, all images distinct
    assert distinct[0] == pytest.approx(np.log2(3)) and distinct[1] == pytest.approx(
        distinct[0]
    )  # equality: the 'iff' fails


def test_information_bottleneck():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    support = [x, x[[1, 0, 2, 3]]]  # differ only in features 1 and 2
    h_xhat = entropy_under_layer_norm(support)[1]
    assert entropy_under_layer_norm(support, np.array([1.0, -2.0, 0.5, 3.0]))[1] == pytest.approx(
        h_xhat
    )  # all γ ≠ 0: equality
    assert h_xhat == pytest.approx(1.0)
    assert entropy_under_layer_norm([x, 2 * x + 1]) == pytest.approx(
        (1.0, 0.0)
    )  # the loss is in x → x̂: mean and scale are dropped
    assert entropy_under_layer_norm(support, np.array([0.0, 0.0, 1.0, 1.0]))[1] == pytest.approx(
        0.0
    )  # zeros in γ: a real loss


def test_mi_gradient():
    rng = np.random.default_rng(12)
    x, dy = rng.normal(size=(50, 4)), rng.normal(size=(50, 4))
    right_side = (manual_xhat(x, eps=1e-5) * dy).mean(axis=0)  # E[x̂ ∂L/∂y], per feature
    np.testing.assert_allclose(right_side, layer_norm_backward(dy, x)[1] / 50)  # = ∂E[L]/∂γ_i
    support = [x[0], x[1], x[2]]
    assert (
        entropy_under_layer_norm(support, np.full(4, 1.0))[1]
        == entropy_under_layer_norm(support, np.full(4, 2.0))[1]
    )
    assert np.abs(right_side).max() > 0.01  # I(X;Y) does not move, the right side is not 0


# --- claims judged in the chapters 01-12 (their boxes hold the evidence; these tests back the
# verdicts) ---------------


def test_exploding_vanishing():
    x, weights, upstream = random_stack(depth=50, width=64, batch=32, seed=0)

    def bottom(a, ln, activation="relu"):
        return run_stack(
            x, a * weights, upstream, layer_norm_on=ln, activation=activation
        ).gradient_rms[0]

    assert (
        bottom(3.0, False) / bottom(0.5, False) > 1e6
    )  # no LN: the weight scale moves it by orders of magnitude
    assert bottom(3.0, True) / bottom(0.5, True) == pytest.approx(
        1.0, rel=1e-3
    )  # with LN: not at all
    tanh = run_stack(x, weights, upstream, layer_norm_on=True, activation="tanh").gradient_rms
    assert tanh[0] / tanh[50] > 5  # but gradients are not level across depth


def test_regularization():
    rng = np.random.default_rng(0)
    sample, others = rng.normal(size=(1, 8)), rng.normal(size=(2, 3, 8))
    batches = [np.vstack([sample, o]) for o in others]  # one sample in two different batches
    bn = [batch_norm(b)[0] for b in batches]
    ln = [layer_norm(b)[0] for b in batches]
    assert np.abs(bn[0] - bn[1]).max() > 0.1  # batch norm: batch noise, the regularizer
    np.testing.assert_array_equal(ln[0], ln[1])  # layer norm: none


def test_unit_matching():
    x = np.random.default_rng(0).uniform(size=16)
    assert (1000 * x).std() / x.std() == pytest.approx(1000)  # σ scales like the input
    assert (1000 * x).var() / x.var() == pytest.approx(1e6)  # σ² like its square


def test_scale_invariance():
    x = np.random.default_rng(0).uniform(size=16)
    np.testing.assert_allclose(
        layer_norm(1000 * x), manual_xhat(x), atol=1e-4
    )  # 0-1 and 0-1000: the same output
    assert np.abs(layer_norm(x / 1000) - layer_norm(x)).max() > 0.5  # 0-0.001: ε takes over
    np.testing.assert_allclose(layer_norm(-x), -layer_norm(x))  # a negative factor flips the sign


def test_variance_near_one():
    near = np.array([1.0, 1.001, 0.999, 1.0])
    var = 2e-6 / 4  # by hand: 5e-7
    assert layer_norm(near, eps=1e-5).var() == pytest.approx(var / (var + 1e-5))  # 0.048, not ≈ 1
    assert layer_norm(np.array([1.0, 2.0, 3.0, 4.0]), eps=1e-5).var() == pytest.approx(
        1.0, abs=1e-5
    )  # σ² ≫ ε: ≈ 1


def test_eps_typical():
    assert FRAMEWORK_EPS["PyTorch"] == 1e-5  # the first value: PyTorch's default
    assert 1e-8 not in FRAMEWORK_EPS.values()  # the second: no framework's LayerNorm default


def test_eps_typical_torch(torch):
    assert torch.nn.LayerNorm(4).eps == 1e-5
    assert (
        torch.optim.Adam([torch.zeros(1, requires_grad=True)]).defaults["eps"] == 1e-8
    )  # 1e-8 is Adam's ε


def test_per_example_parallel():
    """True: a row's output depends on that row alone; computed together, one by one or in reverse,
    bit for bit the same.

    Checked on lnlib.layer_norm (numpy) and on the fused kernel's source run uncompiled; the
    backward's dγ is a sum over rows: the batch's equals the sum of its two halves' up to rounding,
    and is not per example.
    """
    from lnlib.fused import fused_layer_norm, fused_layer_norm_backward

    rng = np.random.default_rng(0)
    batch = (rng.normal(size=(40, 24)) * 3 + 1).astype(np.float32)
    for run in (lambda x: layer_norm(x), lambda x: fused_layer_norm(x, compiled=False)[0]):
        together = run(batch)
        assert np.array_equal(together, np.stack([run(row[None, :])[0] for row in batch]))
        assert np.array_equal(together, run(batch[::-1])[::-1])
    dy = rng.normal(size=batch.shape).astype(np.float32)
    halves = [
        fused_layer_norm_backward(dy[s], batch[s], compiled=False)[1]
        for s in (slice(0, 20), slice(20, 40))
    ]
    whole = fused_layer_norm_backward(dy, batch, compiled=False)[1]
    xhat = (batch - batch.mean(1, keepdims=True)) / np.sqrt(
        batch.var(1, keepdims=True) + 1e-5
    )  # independent of both
    np.testing.assert_allclose(whole, halves[0] + halves[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(whole, (dy * xhat).sum(axis=0), rtol=1e-4, atol=1e-4)
    assert claim("per_example_parallel").verdict == "true"


def test_batch_split_across_gpus():
    """True: a batch split in two shards gets other batch-norm statistics unless the shards exchange
    their sums; layer norm on each shard is layer norm on the batch, bit for bit."""
    from lnlib.norms import batch_norm

    rng = np.random.default_rng(15)
    batch = rng.normal(size=(16, 8)) * 2 + 1
    shards = (batch[:8], batch[8:])
    whole = batch_norm(batch)
    alone = np.concatenate([batch_norm(s) for s in shards])
    assert np.abs(alone - whole).max() > 0.05  # each device's own statistics differ
    count = sum(len(s) for s in shards)  # the exchange: per-feature counts, sums, sums of squares
    mean = sum(s.sum(axis=0) for s in shards) / count
    var = sum((s**2).sum(axis=0) for s in shards) / count - mean**2
    np.testing.assert_allclose((batch - mean) / np.sqrt(var + 1e-5), whole, rtol=1e-9, atol=1e-9)
    assert np.array_equal(np.concatenate([layer_norm(s) for s in shards]), layer_norm(batch))
    assert claim("batch_split_across_gpus").verdict == "true"


def test_eps_in_half():
    assert np.float16(1e-8) == 0 and np.float32(1e-8) > 0  # 1e-8 vanishes in float16 only
    constant = np.full(4, 3.0, np.float16)
    with np.errstate(invalid="ignore"):
        in_half = (constant - constant.mean()) / np.sqrt(constant.var() + np.float16(1e-8))
    assert np.isnan(in_half).all()  # float16 arithmetic: 0/0
    assert np.all(layer_norm(constant, eps=1e-8) == 0)  # float32 statistics: a defined 0
    assert check_layer_norm(
        numpy_layer_norm, eps=1e-8
    ).passed  # the harness at 1e-8: float32 statistics pass
    assert not check_layer_norm(buggy_half_statistics, eps=1e-8).passed  # float16 statistics fail


def test_example_512():
    assert (
        round(0.048**2, 4) == 0.0023 and round(np.sqrt(0.0023), 3) == 0.048
    )  # the statistics agree at the printed rounding
    document = 0.057 / (np.sqrt(0.0023) + 1e-5)  # x̂₃: (0.192 − 0.135)/(σ + ε), σ unrounded
    frameworks = 0.057 / np.sqrt(0.0023 + 1e-5)
    assert (
        round(document, 3) == 1.188 and round(frameworks, 3) == 1.186
    )  # the printed value needs σ + ε


def test_gradient_magnitude_control():
    rng = np.random.default_rng(3)
    gamma = rng.normal(size=8)
    for spread in (1.0, 1e-3):
        x, dy = spread * rng.normal(size=8), rng.normal(size=8)
        dx = layer_norm_backward(dy, x, gamma, eps=1e-5)[0]
        s = np.sqrt(x.var() + 1e-5)
        assert np.linalg.norm(dx) <= np.abs(gamma).max() * np.linalg.norm(dy) / s * (
            1 + 1e-12
        )  # the bound holds...
    assert np.linalg.norm(dx) / np.linalg.norm(dy) > 10  # ...but a small spread amplifies


def test_smoother_landscape():
    rng = np.random.default_rng(4)
    weights, u, dy, step = (
        rng.normal(size=(8, 8)),
        rng.normal(size=8),
        rng.normal(size=8),
        rng.normal(size=(8, 8)),
    )

    def gradient(w):  # ∂/∂W of dy · LN(W u), ε = 0
        return np.outer(layer_norm_backward(dy, w @ u, eps=0.0)[0], u)

    def lipschitz(c):  # change of the gradient per change of the weights
        return np.linalg.norm(
            gradient(c * (weights + 1e-6 * step)) - gradient(c * weights)
        ) / np.linalg.norm(c * 1e-6 * step)

    assert lipschitz(0.1) / lipschitz(1.0) == pytest.approx(
        100, rel=1e-3
    )  # 1/c²: 'smooth' depends on the weights' scale


def test_smoothed_across_features():
    x = np.random.default_rng(5).normal(size=6)
    assert np.all(
        np.abs(layer_norm_jacobian(x, eps=0.0)) > 1e-6
    )  # dense: every dx_j depends on every dy_i
    dy = np.random.default_rng(6).normal(size=6)
    big = dy.copy()
    big[0] *= 1000
    grad = layer_norm_backward(dy - dy[0] * np.eye(6)[0], x)[
        0
    ]  # without feature 0's upstream gradient
    np.testing.assert_allclose(
        layer_norm_backward(big, x)[0] - grad, 1000 * (layer_norm_backward(dy, x)[0] - grad)
    )  # linear: no cap


def test_instance_norm_definition():
    images = np.random.default_rng(7).normal(size=(2, 3, 4, 4))
    np.testing.assert_allclose(
        instance_norm(images), layer_norm(images, axis=(2, 3))
    )  # per channel of each sample
    assert (
        np.abs(instance_norm(images) - layer_norm(images, axis=(1, 2, 3))).max() > 0.1
    )  # not LN over the whole sample


def test_bishop_small_batch():
    population = np.random.default_rng(8).normal(size=(256, 8))
    spread = {}
    for size in (2, 64):
        outputs = [
            batch_norm(np.vstack([population[:1], population[1 + k * size : k * size + size]]))[0]
            for k in range(3)
        ]
        spread[size] = np.std(outputs, axis=0).mean()
    assert spread[2] > 2 * spread[64]  # small batches: noisy statistics
    np.testing.assert_array_equal(
        layer_norm(population[:2])[0], layer_norm(population[:1])[0]
    )  # LN: no batch at all


def test_constant_gradient_depth_layers():
    """Part of test_constant_gradient_depth's claim judged in chapter 11: per-layer norms differ
    within one stack too."""
    grads = init_profile(8, 32, "pre", seeds=2).grad_norm["W2"].mean(axis=0)
    assert grads.max() / grads.min() > 1.5


def test_consistent_scale():
    post, pre = (init_profile(8, 32, p, seeds=2).stream_sq.mean(axis=0) for p in ("post", "pre"))
    np.testing.assert_allclose(post[1:], 1.0, atol=1e-3)  # post-norm: one scale throughout
    assert pre[-1] > 1 + 8 / 2 - 1  # pre-norm: the stream grows (Lemma 2: ≥ 1 + L/2)


def test_placement_chains():
    rng = np.random.default_rng(9)
    x, layers = rng.normal(size=(1, 5, 8)), [init_layer(rng, 8) for _ in range(4)]

    def chain(v, placement):  # the document's chains: no residual
        for w in layers:
            v = (
                layer_norm(attention_forward(v, w)[0])
                if placement == "post"
                else attention_forward(layer_norm(v), w)[0]
            )
        return v

    np.testing.assert_allclose(
        layer_norm(chain(x, "pre")), chain(layer_norm(x), "post"), atol=1e-10
    )  # equal up to their ends


def test_eps_numerical_stability():
    rng = np.random.default_rng(10)
    H = 16
    for scale in (1e-30, 1.0, 1e30):
        xhat = layer_norm(scale * rng.normal(size=(100, H)), eps=0.0)
        assert np.abs(xhat).max() <= np.sqrt(H - 1) * (
            1 + 1e-12
        )  # exact variance: bounded for any spread
    x = (1e4 + rng.normal(size=(100, H))).astype(np.float32)
    one_pass = (x * x).mean(axis=1, keepdims=True) - x.mean(
        axis=1, keepdims=True
    ) ** 2  # float32 cancellation
    with np.errstate(invalid="ignore"):
        wrong = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(
            np.maximum(one_pass, 0) + np.float32(1e-5)
        )
    assert np.abs(wrong).max() > 10 * np.sqrt(H - 1)  # a wrongly computed variance blows up


# --- the explorer ---------------------------------------------------------------------------------


def test_fact_check_explorer_shows_the_grid_numbers():
    explorer = lnlib.book.explorers.fact_check_explorer(distribution="normal", size=4)
    k = GRID_SIZES.index(4)
    x = np.random.default_rng(0 + k).normal(size=(4000, 4))  # the grid's draw, redone by hand
    xhat = manual_xhat(x)
    cov = np.mean((xhat[:, 0] - xhat[:, 0].mean()) * (xhat[:, 1] - xhat[:, 1].mean()))
    assert explorer.result["cov"] == pytest.approx(cov)
    assert explorer.result["fourth"] == pytest.approx(np.mean(xhat[:, 0] ** 4))
    assert explorer.result["third"] == pytest.approx(np.mean(xhat[:, 0] ** 3))
    assert explorer.result["third_err"] == pytest.approx(
        np.std(xhat[:, 0] ** 3, ddof=1) / np.sqrt(4000)
    )
    assert explorer.result["cov_claimed"] == pytest.approx(-1 / 3)
    assert f"<b>{cov:.3f}</b>" in explorer.readout.value
    explorer.controls["size"].value = 2
    assert explorer.result["cov"] == pytest.approx(-1.0, abs=1e-3) and explorer.result[
        "fourth"
    ] == pytest.approx(1.0)
    assert "exactly" in explorer.note.value
    explorer.controls[
        "distribution"
    ].value = "unequal"  # H = 2, unequal: Cov = −(1 − E[x̂₁]²), not −1
    k2, index = GRID_SIZES.index(2), np.arange(2)
    sign = np.sign(
        np.diff(
            index + (0.5 + index) * np.random.default_rng(0 + k2).normal(size=(4000, 2)), axis=1
        )[:, 0]
    )  # x̂₁ = −sign(x₂ − x₁)
    assert explorer.result["cov"] == pytest.approx(-(1 - sign.mean() ** 2))
    assert (
        explorer.result["cov"] > -0.9
        and "mean 0" in explorer.note.value
        and "not exchangeable" in explorer.note.value
    )
    explorer.controls["size"].value = 64
    assert "not exchangeable" in explorer.note.value and "H = 2" not in explorer.note.value


def test_fact_check_explorer_refuses_settings_off_the_grid():
    with pytest.raises(ValueError, match="fact_check_explorer"):
        lnlib.book.explorers.fact_check_explorer(size=5)
    with pytest.raises(ValueError, match="grid holds"):
        moment_grid(sizes=(2, 4), samples=10).index("normal", 8)


# --- chapter "LayerNorm after 2020": the papers' claims at initialization, over three groups of
# seeds --------------

AFTER_2020_SEEDS = (0, 100, 200)


def _after_2020_profile(placement, depth, **kwargs):
    return [
        placement_profile(placement, depth, 32, seeds=3, first_seed=s, **kwargs)
        for s in AFTER_2020_SEEDS
    ]


def test_curse_of_depth():
    for p in _after_2020_profile("pre", 48):
        var = p.stream_sq.mean(axis=0)
        slope = (var[48] - var[24]) / 24  # linear growth: equal increments
        assert 0.7 < (var[24] - var[0]) / 24 / slope < 1.4  # both halves add about the same
        assert var[48] / var[24] < 2.5  # exponential growth would square the ratio
        angle = p.angle.mean(axis=0)
        assert angle[-1] < angle[0] / 3  # deep blocks: close to the identity


def test_layer_norm_scaling():
    for pre, lns in zip(_after_2020_profile("pre", 48), _after_2020_profile("lns", 48)):
        assert (
            lns.stream_sq.mean(axis=0)[-1] < pre.stream_sq.mean(axis=0)[-1] / 10
        )  # variance growth mitigated
        assert (
            lns.angle.mean(axis=0)[-8:].mean() < pre.angle.mean(axis=0)[-8:].mean()
        )  # deep blocks change their input less


def test_peri_ln_balanced():
    for pre, peri, pre4, peri4 in zip(
        _after_2020_profile("pre", 24),
        _after_2020_profile("peri", 24),
        _after_2020_profile("pre", 24, out_scale=4.0),
        _after_2020_profile("peri", 24, out_scale=4.0),
    ):
        top = lambda p: p.stream_sq.mean(axis=0)[-1]  # noqa: E731
        assert top(pre4) > 10 * top(pre)  # Pre-LN: grows with the branches' scale
        assert top(peri4) == pytest.approx(top(peri), rel=1e-3)  # Peri-LN: does not (ε aside)
        assert top(peri) > top(pre)  # at Xavier init: grows faster than Pre-LN


def test_mix_ln_uniform():
    for depth in (24, 48):
        profiles = {s: _after_2020_profile(s, depth) for s in ("pre", "post", "mixln")}
        for pre in profiles["pre"]:
            g = pre.grad_norm.mean(axis=0)
            assert g[-1] < g[0] / 2  # Pre-LN: deep layers get less
        # Post-LN: the top/bottom gradient ratio of one batch scatters over two orders of magnitude
        # between seeds, but its median over the 9 seeds stays within a factor of a few of 1:
        # uneven, not the bottom's gradient vanishing
        post_ratio = np.concatenate(
            [p.grad_norm[:, -1] / p.grad_norm[:, 0] for p in profiles["post"]]
        )
        assert 0.5 < np.median(post_ratio) < 10
        # spread of the per-layer gradient norms (sd / mean), pooled over the 9 seeds: single-batch
        # norms are noisy
        spread = {
            s: np.mean([p.grad_norm.std(axis=1) / p.grad_norm.mean(axis=1) for p in group])
            for s, group in profiles.items()
        }
        assert spread["mixln"] > 0.9 * min(spread["post"], spread["pre"])  # Mix-LN: no more uniform


def test_deepnorm_best_of_both():
    spreads = {}
    for placement in PLACEMENTS:
        profiles = _after_2020_profile(placement, 48)
        spreads[placement] = np.mean(
            [np.mean(p.grad_norm.std(axis=1) / p.grad_norm.mean(axis=1)) for p in profiles]
        )
        if placement == "deepnorm":
            for p in profiles:
                np.testing.assert_allclose(
                    p.stream_sq[:, 1:], 1.0, atol=1e-3
                )  # Post-LN's unit stream
    assert min(spreads, key=spreads.get) == "deepnorm"  # the most level gradients


def test_qk_norm_logits():
    for seed in range(3):
        rng = np.random.default_rng(seed)
        w, x = init_layer(rng, 32), rng.normal(size=(2, 16, 32))
        scaled = lambda s: {**w, "Wq": w["Wq"] * s, "Wk": w["Wk"] * s}  # noqa: E731
        plain = [logit_statistics(x, scaled(s)) for s in (1.0, 4.0, 16.0)]
        normed = [logit_statistics(x, scaled(s), qk_norm=True) for s in (1.0, 4.0, 16.0)]
        assert plain[1]["max_logit"] == pytest.approx(
            16 * plain[0]["max_logit"]
        )  # logits grow as the scale squared
        assert (
            plain[2]["entropy"] < 0.05 < np.log(16) / 2 < plain[0]["entropy"]
        )  # near-zero entropy (uniform: ln 16)
        assert all(n["max_logit"] < np.sqrt(32) for n in normed)  # QK-norm: bounded by √d
        assert normed[2]["entropy"] == pytest.approx(
            normed[0]["entropy"], rel=1e-3
        )  # and the scale no longer matters


def test_dyt_s_shape():
    for seed in range(3):
        heavy = fit_tanh(*s_curve(heavy_tailed_tokens(256, 64, df=2.0, seed=seed)))
        normal = fit_tanh(*s_curve(heavy_tailed_tokens(256, 64, df=np.inf, seed=seed)))
        assert heavy["rms_tanh"] < 0.7 * heavy["rms_line"]  # unequal tokens: an S, not a line
        assert normal["rms_tanh"] > 0.95 * normal["rms_line"]  # equal tokens: a line is as good
