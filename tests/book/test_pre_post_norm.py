"""The explorer of the chapter "Pre-norm vs post-norm": the numbers it shows are those of a fresh
measurement."""

import numpy as np
import pytest

from lnlib.book.experiments.pre_post_norm import init_profile
from lnlib.book.explorers import pre_post_norm_explorer
from lnlib.book.explorers.pre_post_norm import SEEDS


@pytest.fixture(scope="module")
def explorer():
    return pre_post_norm_explorer(depth=8, width=32, placement="pre")


def test_explorer_shows_a_fresh_measurement(explorer):
    """The precomputed grid must hold what init_profile measures now, with the same seeds."""
    profile = init_profile(8, 32, "pre", seeds=SEEDS)
    np.testing.assert_allclose(explorer.result["stream"], profile.stream_sq.mean(axis=0))
    np.testing.assert_allclose(explorer.result["grad"], profile.grad_norm["W1"].mean(axis=0))
    grads = profile.grad_norm["W1"].mean(axis=0)
    for shown in (
        f"{profile.stream_sq[:, -1].mean():.2f}",
        f"{grads[-1]:.3g}",
        f"{grads[-1] / grads[0]:.2f}",
    ):
        assert f"<b>{shown}</b>" in explorer.readout.value


def test_explorer_follows_placement_and_depth(explorer):
    explorer.controls["placement"].value = "post"
    explorer.controls["depth"].value = 16
    post = init_profile(16, 32, "post", seeds=SEEDS)
    assert explorer.result["stream_top"] == pytest.approx(post.stream_sq[:, -1].mean())
    assert explorer.result["stream_top"] == pytest.approx(
        1.0, abs=1e-4
    )  # post-norm ends every layer with a LayerNorm
    grads = post.grad_norm["W1"].mean(axis=0)
    assert explorer.result["top_over_bottom"] == pytest.approx(grads[-1] / grads[0])


def test_explorer_pre_norm_stream_lies_in_lemma_2_band(explorer):
    explorer.controls["placement"].value = "pre"
    explorer.controls["depth"].value = 24
    assert 1 + 24 / 2 <= explorer.result["stream_top"] <= 1 + 1.5 * 24


def test_explorer_notes_the_shallow_case(explorer):
    explorer.controls["depth"].value = 2
    assert "two layers" in explorer.note.value


@pytest.mark.parametrize("kwargs", [{"depth": 5}, {"width": 48}, {"placement": "middle"}])
def test_explorer_refuses_settings_it_has_not_measured(kwargs):
    with pytest.raises(ValueError, match="pre_post_norm_explorer offers"):
        pre_post_norm_explorer(**kwargs)


# --- the chapter's prose numbers (experiments.pre_post_norm.*_findings) -------------------------


def _profile(placement, stream_sq, w1, w2, stream_grad, depth):
    """An InitProfile with chosen numbers: one row per seed."""
    from lnlib.book.experiments.pre_post_norm import InitProfile

    grads = {"W1": np.asarray(w1, float), "W2": np.asarray(w2, float)}
    return InitProfile(
        placement,
        depth,
        8,
        8,
        4,
        np.asarray(stream_sq, float),
        grads,
        np.asarray(stream_grad, float),
    )


def test_stream_findings_read_the_profiles():
    from lnlib.book.experiments.pre_post_norm import stream_findings

    depth = 4
    post = _profile(
        "post", [[1.0, 1.0, 1.002, 1.0, 0.999]] * 2, [[1.0] * 4], [[1.0] * 4], [[1.0] * 5], depth
    )
    # pre-norm's stream grows by 0.5 per layer in one seed and 1.5 in the other: mean slope 1
    pre_sq = [1 + 0.5 * np.arange(5), 1 + 1.5 * np.arange(5)]
    pre = _profile("pre", pre_sq, [[1.0] * 4], [[1.0] * 4], [[1.0] * 5], depth)
    found = {k: str(v) for k, v in stream_findings({"post": post, "pre": pre}).items()}
    assert found == {
        "f1_post_dev": "2.0 × 10⁻³",
        "f1_pre_slope": "1.00",
        "f1_pre_top": "5.0",  # 1 + 4 · 1
        "f1_band_low": "3",  # 1 + L/2
        "f1_band_high": "7",  # 1 + 3L/2
    }


def test_depth_findings_fit_a_power_law():
    from lnlib.book.experiments.pre_post_norm import depth_findings

    depths = [2, 8, 32]
    post = np.tile(3.0 * np.array(depths, float) ** -0.5, (2, 1))  # exactly 1/√L
    pre = np.tile(np.array([1.0, 1.0, 1.0]), (2, 1))  # flat
    found = {k: str(v) for k, v in depth_findings(depths, {"post": post, "pre": pre}).items()}
    assert found == {
        "f2_post_slope": "−0.50",
        "f2_pre_slope": "0.00",
        "f2_post_ratio": "0.25",  # √(2/32)
        "f2_pre_ratio": "1.00",
        "f2_theory_ratio": "0.25",
    }


def test_layer_findings_compare_top_and_bottom_layers():
    from lnlib.book.experiments.pre_post_norm import layer_findings

    ones = [[1.0] * 3]
    post = _profile("post", [[1.0] * 4], [[1.0, 2.0, 3.0]], [[1.0, 4.0, 2.0]], [[1.0] * 4], 3)
    pre = _profile(
        "pre", [[1.0] * 4], [[2.0, 1.0, 1.0]], [[4.0, 2.0, 2.0]], [[6.0, 3.0, 2.0, 1.5]], 3
    )
    post_avg = _profile("post", [[1.0] * 4], ones, [[0.5, 0.5, 0.5]], [[1.0] * 4], 3)  # mean 0.5
    pre_avg = _profile("pre", [[1.0] * 4], ones, [[0.2, 0.2, 0.4]], [[1.0] * 4], 3)  # mean 0.8/3
    found = layer_findings({"post": post, "pre": pre}, {"post": post_avg, "pre": pre_avg})
    found = {k: str(v) for k, v in found.items()}
    shrink = (
        (7 / 3) / 0.5 + (8 / 3) / (0.8 / 3)
    ) / 2  # per placement: one batch's mean / averaged mean
    assert found == {
        "f3_post_W1": "3.00",
        "f3_post_W2": "2.00",
        "f3_pre_W1": "0.50",
        "f3_pre_W2": "0.50",
        "f3_avg_post_W2": "1.00",
        "f3_avg_pre_W2": "2.00",
        "f3_post_peak": "4.00",
        "f3_pre_stream_grad": "4.0",  # 6 / 1.5
        "f3_avg_shrink": f"{shrink:.1f}",
        "f3_depth": "3",
    }
