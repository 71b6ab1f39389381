"""Chapter "Scale γ and shift β": lnlib.book.experiments.gamma_beta and the gamma_beta explorer,
checked by hand, by sympy and against PyTorch."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from lnlib import layer_norm
from lnlib.book.experiments.complete_examples import documents_embedding
from lnlib.book.experiments.gamma_beta import (
    best_shared_scale_shift,
    gpt2_parameter_counts,
    identity_parameters,
    train_scale_shift,
)
from lnlib.book.explorers import gamma_beta_explorer

# --- undoing the normalization ---------------------------------------------------------------


def test_identity_parameters_give_back_the_input_by_hand():
    # [2, 4, 6, 8]: mean 5, variance (9 + 1 + 1 + 9) / 4 = 5, so gamma = sqrt(5 + eps), beta = 5.
    gamma, beta = identity_parameters([2.0, 4.0, 6.0, 8.0], eps=1e-5)
    np.testing.assert_allclose(gamma, np.full(4, np.sqrt(5.00001)), rtol=1e-15)
    np.testing.assert_allclose(beta, np.full(4, 5.0), rtol=1e-15)
    np.testing.assert_allclose(
        layer_norm([2.0, 4.0, 6.0, 8.0], gamma, beta), [2.0, 4.0, 6.0, 8.0], rtol=1e-14
    )


def test_identity_needs_the_epsilon_inside_the_root_sympy():
    x, mu, var, eps = sp.symbols("x mu sigma2 epsilon", positive=True)
    xhat = (x - mu) / sp.sqrt(var + eps)
    assert sp.simplify(sp.sqrt(var + eps) * xhat + mu - x) == 0
    miss = sp.simplify(sp.sqrt(var) * xhat + mu - x)
    assert miss != 0 and sp.simplify(miss.subs(eps, 0)) == 0


def test_gamma_equal_sigma_misses_by_the_factor_sigma_over_root():
    x = np.array([2.0, 4.0, 6.0, 8.0])
    y = layer_norm(x, np.full(4, np.sqrt(5.0)), np.full(4, 5.0), eps=1e-5)
    np.testing.assert_allclose(y - 5.0, (x - 5.0) * np.sqrt(5.0) / np.sqrt(5.00001), rtol=1e-14)


def test_identity_parameters_refuse_a_batch():
    with pytest.raises(ValueError, match="one vector"):
        identity_parameters([[1.0, 2.0], [3.0, 5.0]])


# --- per-slot parameters cannot learn anything per sample -------------------------------------


def _data(seed=0, n=256):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)) * rng.uniform(0.5, 3, size=(n, 1)) + rng.normal(size=(n, 1))
    xhat = layer_norm(x)
    gamma, beta = np.array([2.0, 0.5, 1.0, -1.0]), np.array([1.0, -1.0, 0.0, 0.5])
    return xhat, xhat * gamma + beta, gamma, beta


def test_per_feature_parameters_learn_the_target():
    xhat, target, gamma, beta = _data()
    fit = train_scale_shift(xhat, target, per="feature")
    np.testing.assert_allclose(fit.gamma, gamma, atol=1e-6)
    np.testing.assert_allclose(fit.beta, beta, atol=1e-6)
    assert fit.final_loss < 1e-10


def test_per_slot_parameters_all_drift_to_the_best_shared_pair():
    xhat, target, _, _ = _data()
    fit = train_scale_shift(xhat, target, per="slot", batch_size=8)
    g, b = best_shared_scale_shift(xhat, target)
    assert fit.gamma.shape == (8,)
    np.testing.assert_allclose(fit.gamma, g, atol=0.08)
    np.testing.assert_allclose(fit.beta, b, atol=0.08)
    best_loss = np.mean((g * xhat + b - target) ** 2)
    assert fit.final_loss > 0.9 * best_loss > 0.5


def test_best_shared_pair_is_numpy_polyfit():
    xhat, target, _, _ = _data(seed=3)
    slope, intercept = np.polyfit(xhat.ravel(), target.ravel(), 1)
    np.testing.assert_allclose(
        best_shared_scale_shift(xhat, target), (slope, intercept), rtol=1e-10
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"per": "sample"}, "per must be"),
        ({"batch_size": 0}, "positive integer"),
        ({"batch_size": 300}, "at most"),
    ],
)
def test_train_scale_shift_refuses_bad_settings(kwargs, match):
    xhat, target, _, _ = _data()
    with pytest.raises(ValueError, match=match):
        train_scale_shift(xhat, target, **kwargs)


# --- how many parameters -----------------------------------------------------------------------


def test_gpt2_small_layer_norm_count_by_hand():
    counts = gpt2_parameter_counts()
    # 12 blocks with ln_1 and ln_2, plus ln_f: 25 LayerNorms of 768 weights and 768 biases.
    assert counts["layer_norms"] == 25
    assert counts["layer_norm"] == 25 * (768 + 768) == 38_400


def test_gpt2_small_total_matches_torch_modules(torch):
    nn, meta = torch.nn, {"device": "meta"}  # shapes only: no memory for 124M numbers
    d, layers = 768, 12

    def block():
        return nn.Sequential(
            nn.LayerNorm(d, **meta),
            nn.Linear(d, 3 * d, **meta),
            nn.Linear(d, d, **meta),
            nn.LayerNorm(d, **meta),
            nn.Linear(d, 4 * d, **meta),
            nn.Linear(4 * d, d, **meta),
        )

    model = nn.ModuleList(
        [nn.Embedding(50257, d, **meta), nn.Embedding(1024, d, **meta), nn.LayerNorm(d, **meta)]
        + [block() for _ in range(layers)]
    )
    total = sum(p.numel() for p in model.parameters())
    norms = sum(
        p.numel() for m in model.modules() if isinstance(m, nn.LayerNorm) for p in m.parameters()
    )
    counts = gpt2_parameter_counts()
    assert counts["total"] == total
    assert counts["layer_norm"] == norms


def test_gpt2_counts_refuse_bad_sizes():
    with pytest.raises(ValueError, match="d_model must be a positive integer"):
        gpt2_parameter_counts(d_model=0)


# --- the explorer shows the right numbers ------------------------------------------------------


#: The running token (chapter 03), centred by hand: its mean is 0.8 / 8 = 0.1 and its variance
#: (0.09 + 1.44 + 0.64 + 0.01 + 0.49 + 1.44 + 0.16 + 0.01) / 8 = 0.535.
TOKEN_1_CENTRED = np.array([0.3, -1.2, 0.8, 0.1, -0.7, 1.2, -0.4, -0.1])


def test_explorer_starts_as_pure_normalization():
    explorer = gamma_beta_explorer()
    np.testing.assert_allclose(
        explorer.result["y_small"], TOKEN_1_CENTRED / np.sqrt(0.535 + 1e-5), rtol=1e-12
    )
    # features 2 and 6: ∓1.2 / 0.73144...
    assert "-1.641" in explorer.readout.value and "1.641" in explorer.readout.value
    assert explorer.note.value == ""


def test_explorer_group_means_and_spreads_follow_beta_and_gamma():
    gamma = (2.0, -1.0, 0.5, 1.0, 1.5, -0.5, 0.0, 1.0)
    beta = (1.0, -2.0, 0.0, 3.0, -1.0, 2.0, 0.5, -3.0)
    explorer = gamma_beta_explorer(gamma=gamma, beta=beta)
    x = documents_embedding()
    xhat_groups = np.split((x - x.mean()) / np.sqrt(x.var() + 1e-5), 8)
    for k, (g, b) in enumerate(zip(gamma, beta)):
        assert explorer.result["group_means"][k] == pytest.approx(
            b + g * xhat_groups[k].mean(), abs=1e-4
        )
        assert explorer.result["group_stds"][k] == pytest.approx(
            abs(g) * xhat_groups[k].std(), rel=1e-4
        )
    np.testing.assert_allclose(
        explorer.result["y_small"][0], 2.0 * (0.3 / np.sqrt(0.535 + 1e-5)) + 1.0, rtol=1e-12
    )
    # the list of group means is printed once (learner A: it was printed twice, a second time as
    # βᵢ + γᵢ·mean x̂, which is the same numbers)
    means = ", ".join(f"{round(float(m), 3) + 0.0:.3f}" for m in explorer.result["group_means"])
    assert explorer.readout.value.count(means) == 1


def test_explorer_notes_a_zero_gamma():
    explorer = gamma_beta_explorer()
    explorer.controls["gamma3"].value = 0.0
    assert "γ = 0 for feature 3" in explorer.note.value
    assert explorer.result["y_small"][2] == 0.0


@pytest.mark.parametrize(
    "kwargs", [{"gamma": (1.0, 1.0)}, {"gamma": (1.0,) * 4}, {"beta": (0.0,) * 7 + (9.0,)}]
)
def test_explorer_refuses_bad_starting_values(kwargs):
    with pytest.raises(ValueError, match="gamma_beta_explorer|starting values"):
        gamma_beta_explorer(**kwargs)


# --- the flat-topped histograms of the chapter's four-feature tokens ---------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.integers(2, 32).flatmap(lambda h: hnp.arrays(np.float64, h, elements=st.floats(-1e3, 1e3))),
    st.sampled_from([0.0, 1e-5, 1.0]),
)
def test_no_normalized_entry_exceeds_root_h_minus_one(x, eps):
    # x̂_i = -(sum of the other H-1 entries), so by Cauchy-Schwarz x̂_i² <= (H-1)(sum x̂² - x̂_i²)
    # <= (H-1)(H - x̂_i²), i.e. x̂_i² <= H - 1 (sum x̂² = H σ²/(σ² + ε) <= H).
    assume(np.std(x) > 1e-3)
    assert np.abs(layer_norm(x, eps=eps)).max() <= np.sqrt(x.size - 1) * (1 + 1e-12)


def test_four_gaussian_features_normalize_to_a_uniform_entry_and_five_do_not():
    # For H = 4 the squared standardized residual x̂_i²/3 is Beta(1/2, 1), i.e. |x̂_i|/√3 is uniform
    # on [0, 1].
    rng = np.random.default_rng(0)
    four = layer_norm(rng.normal(size=(20000, 4)), eps=0)[:, 0]
    five = layer_norm(rng.normal(size=(20000, 5)), eps=0)[:, 0]
    assert stats.kstest(four, stats.uniform(-np.sqrt(3), 2 * np.sqrt(3)).cdf).pvalue > 0.01
    assert stats.kstest(five, stats.uniform(-2, 4).cdf).pvalue < 1e-6
