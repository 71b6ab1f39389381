"""The explorer of the chapter "Pre-norm vs post-norm": the numbers it shows are those of a fresh measurement."""

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
    np.testing.assert_allclose(explorer.result["grad"], profile.grad_norm["W2"].mean(axis=0))
    grads = profile.grad_norm["W2"].mean(axis=0)
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
    grads = post.grad_norm["W2"].mean(axis=0)
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
