"""Every number chapter "LayerNorm after 2020" quotes (lnlib.book.experiments.after_2020.findings),
each key checked.

The chapter calls ``findings(24, 48, 32)``; here a small stack (3 seeds, 8 layers of width 16) keeps
the test fast. Each key is recomputed by another route: the placements' profiles measured again, the
formulas evaluated by hand, or a bound the number must respect.
"""

import math
import re

import numpy as np
import pytest

from lnlib.book.experiments.after_2020 import (
    FINDINGS,
    QK_SCALES,
    scaled_stream,
    turn_angles,
)
from lnlib.book.experiments.after_2020 import findings as chapter_findings
from lnlib.book.models.placements import placement_profile, sublayer_gradient_gains, typical
from lnlib.book.tools import prose

SEEDS, DEPTH, WIDTH = 3, 8, 16


@pytest.fixture(scope="module")
def found():
    return chapter_findings(SEEDS, DEPTH, WIDTH)


@pytest.fixture(scope="module")
def profile():
    """The placements at the test's size, measured again outside findings."""
    cache = {}

    def get(scheme, **kwargs):
        key = (scheme, tuple(sorted(kwargs.items())))
        if key not in cache:
            cache[key] = placement_profile(scheme, DEPTH, WIDTH, seeds=SEEDS, **kwargs)
        return cache[key]

    return get


def text(found, key):
    return str(found.numbers[key])


def test_every_key_is_documented_and_formatted_for_prose(found):
    assert set(found.numbers) == set(FINDINGS)
    for key, value in found.numbers.items():
        assert FINDINGS[key].strip(), key
        assert isinstance(value, prose.ProseNumber), key
        assert str(value) and not re.search(r"\de[+-]?\d", str(value)), key  # 10⁻⁵, not 1e-05


def test_the_formulas(found):
    expected = {
        "seeds": "3",
        "rms_share_formula": "0.141",  # sqrt(2 / (32 pi)) = 0.14105
        "rms_share_4096": "0.0125",  # sqrt(2 / (4096 pi)) = 0.012466
        "uniform_entropy": "2.08",  # ln 8 = 2.0794
        "qk_uniform": "2.77",  # ln 16 = 2.7726
        "qk_bound": "8",  # sqrt(64)
        "dyt_ceiling": "7.94",  # sqrt(63) = 7.9373
        "mixln_posts": "2",  # floor(8 / 4)
        "qk_logit_ratio": "1024",  # every logit is a product of a query and a key: 32**2
        "peri_growth": "1.000",  # the output norm: each sub-layer adds variance 1
    }
    assert {k: text(found, k) for k in expected} == expected
    # exponential growth from 1 would square the half-depth variance: one significant digit
    half = float(str(found.numbers["pre_var_half"]).split("\u00a0")[0])
    squared = float(found.numbers["pre_var_half_squared"])
    assert squared == pytest.approx(float(f"{half**2:.1g}"), rel=0.5)


def test_the_final_variances_and_their_ratio(found, profile):
    for scheme in ("pre", "lns", "peri", "olmo2"):
        top = profile(scheme).stream_sq[:, -1]
        assert text(found, f"top_{scheme}") == str(prose.mean_sd(top))
    pre, lns = profile("pre").stream_sq, profile("lns").stream_sq
    assert text(found, "lns_over_pre") == str(prose.mean_sd(lns[:, -1] / pre[:, -1]))
    assert text(found, "pre_var_half") == str(prose.mean_sd(pre[:, DEPTH // 2]))
    assert text(found, "pre_var_ratio") == str(prose.mean_sd(pre[:, -1] / pre[:, DEPTH // 2]))


def test_the_slopes_are_least_squares_lines_through_each_seed(found, profile):
    layers = np.arange(DEPTH + 1)

    def slopes(stream):
        return [np.polyfit(layers[: len(row)], row, 1)[0] for row in stream]

    for scheme in ("pre", "peri", "olmo2"):
        assert text(found, f"{scheme}_slope") == str(
            prose.mean_sd(slopes(profile(scheme).stream_sq))
        )
    peri = np.array(slopes(profile("peri").stream_sq))
    se = peri.std(ddof=1) / math.sqrt(SEEDS)
    assert float(found.numbers["peri_slope_se"]) == pytest.approx(se, rel=1e-3)
    pre = np.array(slopes(profile("pre").stream_sq))
    assert text(found, "peri_over_pre") == str(int(np.sum(peri > pre)))
    half = placement_profile("pre", DEPTH // 2, WIDTH, seeds=SEEDS).stream_sq
    wide = placement_profile("pre", DEPTH // 2, 2 * WIDTH, seeds=SEEDS).stream_sq
    assert text(found, "pre_slope_24") == str(prose.mean_sd(slopes(half)))
    assert text(found, "pre_slope_24_wide") == str(prose.mean_sd(slopes(wide)))


def test_the_gradients(found, profile):
    def ratio(scheme):
        g = profile(scheme).grad_norm
        return g[:, -1] / g[:, 0]

    def spread(scheme):
        g = profile(scheme).grad_norm
        return g.std(axis=1) / g.mean(axis=1)

    assert text(found, "ratio_pre") == str(prose.mean_sd(ratio("pre")))
    assert float(found.numbers["ratio_pre_max"]) == pytest.approx(ratio("pre").max(), rel=1e-3)
    post = typical(ratio("post"))
    for k in ("median", "min", "max"):
        assert text(found, f"ratio_post_{k}") == str(post[k])
    assert text(found, "ratio_post_above_1") == str(int(np.sum(ratio("post") > 1)))
    for scheme in ("pre", "post", "mixln", "deepnorm"):
        assert text(found, f"spread_{scheme}") == str(prose.mean_sd(spread(scheme)))
    for other in ("post", "pre"):
        count = int(np.sum(spread("mixln") > spread(other)))
        assert text(found, f"mixln_over_{other}") == str(count)


def test_the_angles_and_entropies(found, profile):
    pre, lns = profile("pre").angle, profile("lns").angle
    assert text(found, "pre_angle_first") == str(prose.mean_sd(pre[:, 0]))
    assert text(found, "pre_angle_last") == str(prose.mean_sd(pre[:, -1]))
    assert text(found, "pre_angle_deep") == str(prose.mean_sd(pre[:, -8:].mean(axis=1)))
    assert text(found, "lns_angle_deep") == str(prose.mean_sd(lns[:, -8:].mean(axis=1)))
    deepnorm = profile("deepnorm").angle[:, -1]
    assert text(found, "deepnorm_angle_last") == str(prose.mean_sd(deepnorm))
    for scheme in ("olmo2", "pre"):
        entropy = profile(scheme).entropy.mean(axis=1)
        assert text(found, f"{scheme}_entropy") == str(prose.mean_sd(entropy))
        assert 0 <= entropy.max() <= math.log(8)


def test_olmo2s_bottom_gradients(found, profile):
    bottom = typical(profile("olmo2").grad_norm[:, 0])
    for k in ("median", "min", "max"):
        assert text(found, f"olmo2_bottom_{'grad' if k == 'median' else k}") == str(bottom[k])
    assert text(found, "peri_bottom_grad") == str(
        typical(profile("peri").grad_norm[:, 0])["median"]
    )
    with_qk = profile("olmo2", qk_norm=True).grad_norm[:, 0]
    assert text(found, "olmo2_qk_bottom_grad") == str(typical(with_qk)["median"])
    gains = sublayer_gradient_gains("olmo2", DEPTH, WIDTH, seeds=SEEDS)[:, :, 0]
    assert text(found, "olmo2_attn_growth") == str(typical(gains.prod(axis=1))["median"])


def test_the_output_norm_makes_the_branch_scale_irrelevant(found, profile):
    grown = profile("pre", out_scale=4.0).stream_sq[:, -1] / profile("pre").stream_sq[:, -1]
    assert text(found, "peri_pre_growth") == str(prose.mean_sd(grown))
    # the norm's ε makes a 4 times larger branch output a little closer to unit variance
    np.testing.assert_allclose(found.growth["peri"], 1.0, rtol=1e-3)


def test_rmsnorm_against_layernorm_by_hand(found):
    """The mean share and the gap from numpy formulas, not lnlib's norms."""
    from lnlib.book.models.placements import init_weights, placement_forward

    shares, gaps = [], []
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        weights = init_weights("pre", 16, 32, rng=rng)
        stream = placement_forward(rng.normal(size=(2, 8, 32)), weights, "pre")[1][1:]
        x = np.concatenate([s.reshape(-1, 32) for s in stream])
        rms = np.sqrt(np.mean(x**2, axis=1, keepdims=True))
        mean, var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
        gap = x / np.sqrt(rms**2 + 1e-5) - (x - mean) / np.sqrt(var + 1e-5)
        shares.append(np.mean(np.abs(mean[:, 0]) / rms[:, 0]))
        gaps.append(np.mean(np.sqrt(np.mean(gap**2, axis=1))))
    assert text(found, "rms_mean_share") == str(prose.mean_sd(shares))
    assert prose.mean_sd(gaps).agrees_with(found.numbers["rms_gap"], z=0.01)


def test_the_rmsnorm_stacks_are_the_same_runs_with_every_norm_an_rmsnorm(found, profile):
    """The comparison of the two norms recomputed from profiles measured again, by hand."""
    assert set(found.rms_profiles) == set(found.profiles)
    for scheme, rms in found.rms_profiles.items():
        assert rms.norm == "rms" and found.profiles[scheme].norm == "layer"
        # the same weights and inputs: the input row x_0 is the same draw
        np.testing.assert_array_equal(rms.stream_sq[:, 0], found.profiles[scheme].stream_sq[:, 0])
        np.testing.assert_array_equal(rms.stream_sq, profile(scheme, norm="rms").stream_sq)
    layers = np.arange(DEPTH + 1)

    def summary(scheme, norm):
        p = profile(scheme, norm=norm)
        g = p.grad_norm
        return {
            "top": p.stream_sq[:, -1],
            "slope": np.array([np.polyfit(layers, row, 1)[0] for row in p.stream_sq]),
            "grad_spread": g.std(axis=1) / g.mean(axis=1),
        }

    gaps = {}
    for scheme in found.profiles:
        ln, rms = summary(scheme, "layer"), summary(scheme, "rms")
        for key in ("top", "slope", "grad_spread"):
            scatter = max(ln[key].std(ddof=1), rms[key].std(ddof=1))
            gaps[scheme, key] = abs(ln[key].mean() - rms[key].mean()) / scatter
    assert text(found, "norm_pairs") == str(len(gaps)) == "21"
    assert text(found, "norm_apart") == str(sum(g > 1 for g in gaps.values()))
    assert float(found.numbers["norm_largest_gap"]) == pytest.approx(max(gaps.values()), rel=0.05)
    pre, peri = summary("pre", "rms"), summary("peri", "rms")
    assert text(found, "rms_top_pre") == str(prose.mean_sd(pre["top"]))
    assert text(found, "rms_slope_pre") == str(prose.mean_sd(pre["slope"]))
    assert text(found, "rms_slope_peri") == str(prose.mean_sd(peri["slope"]))
    olmo2 = summary("olmo2", "rms")["grad_spread"]
    assert text(found, "rms_spread_olmo2") == str(prose.mean_sd(olmo2))
    ratio = pre["top"] / profile("pre").stream_sq[:, -1]
    assert text(found, "rms_over_ln_pre") == str(prose.mean_sd(ratio))
    assert text(found, "norm_largest_what").endswith(
        ("final variance", "growth per layer", "gradient spread")
    )


def test_qk_norm_numbers_respect_their_bounds(found):
    plain, normed = found.qk_shown
    assert [len(plain), len(normed)] == [len(QK_SCALES)] * 2
    np.testing.assert_allclose(found.qk_ratio, 32.0**2, rtol=1e-9)
    largest = [max(n["max_logit"] for n in normed)]
    assert largest[0] <= 8.0  # sqrt(H) with unit gains
    assert found.numbers["qk_norm_max"].value <= 8.0
    assert found.numbers["qk_logit_32"].value == pytest.approx(
        1024 * found.numbers["qk_logit_1"].value, rel=1e-9
    )
    for key in ("qk_entropy_1", "qk_entropy_8", "qk_norm_entropy"):
        assert 0 <= found.numbers[key].value <= math.log(16), key
    assert found.numbers["qk_entropy_8"].value < found.numbers["qk_entropy_1"].value / 4
    # QK-norm: the entropy at scale 32 is the one at scale 1, up to ε
    assert normed[-1]["entropy"] == pytest.approx(normed[0]["entropy"], rel=1e-4)  # ε aside


def test_dyt_numbers(found):
    n = found.numbers
    assert 0 < n["dyt_gamma"].value < n["dyt_ceiling"].value
    assert n["dyt_rms_tanh"].value < n["dyt_rms_line"].value
    assert 0.9 < n["dyt_normal_ratio"].value <= 1.0
    assert set(found.dyt_shown) == {"heavy", "heavy_fit", "normal", "normal_fit"}


# --- scaled init and LN scaling, at initialization ------------------------------------------------


def test_scaled_init_is_the_last_matrices_times_one_over_root_2l():
    """GPT-2/Megatron's init scales Wo and W2 by 1/sqrt(2L): the same stream as the output
    multiplier."""
    depth = 5
    ours = scaled_stream("scaled", depth, 8, seeds=3)
    theirs = placement_profile("pre", depth, 8, seeds=3, out_scale=1 / np.sqrt(2 * depth)).stream_sq
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_turn_angles_are_the_placements_angles_seed_by_seed():
    for scheme in ("pre", "lns"):
        ours = turn_angles(scheme, 5, 8, seeds=3, first_seed=2)
        theirs = placement_profile(scheme, 5, 8, seeds=3, first_seed=2).angle
        np.testing.assert_array_equal(ours, theirs)


def test_ln_scaling_and_scaled_init_together_quiet_the_deep_layers_most():
    """The chapter's toy reading of Sun et al.'s footnote: both shrink the same branch."""
    deep = {
        s: turn_angles(s, 24, 16, seeds=4)[:, -6:].mean(axis=1)
        for s in ("pre", "scaled", "lns", "lns_scaled")
    }
    assert np.all(deep["lns_scaled"] < deep["lns"] / 2)
    assert np.all(deep["lns_scaled"] < deep["scaled"] / 2)
    first = turn_angles("scaled", 24, 16, seeds=4)[:, 0]
    np.testing.assert_array_less(0.5 * first, deep["scaled"])  # scaled init: every layer alike
