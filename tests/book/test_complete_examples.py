"""Chapter "The complete examples": the documents' examples as data, and the step-by-step explorer,
checked by hand."""

import numpy as np
import pytest

from lnlib import layer_norm_steps
from lnlib.book.experiments.complete_examples import (
    EMBEDDING_SHOWN,
    describe_step,
    documents_batch,
    documents_embedding,
    documents_token,
    vector_with_moments,
)
from lnlib.book.explorers import complete_examples_explorer


def test_embedding_has_the_documents_entries_and_statistics():
    x = documents_embedding()
    assert x.shape == (512,)
    for index, value in EMBEDDING_SHOWN.items():
        assert x[index] == value
    assert x.mean() == pytest.approx(0.135, abs=1e-15)
    assert np.sqrt(np.sum((x - x.mean()) ** 2) / 512) == pytest.approx(0.048, abs=1e-15)


def test_embedding_is_seeded():
    np.testing.assert_array_equal(documents_embedding(seed=1), documents_embedding(seed=1))
    assert not np.array_equal(documents_embedding(seed=1), documents_embedding(seed=2))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"size": 3, "mean": 0.0, "std": 1.0, "pinned": {0: 1.0, 1: 2.0}}, "at least 4"),
        ({"size": 10, "mean": 0.0, "std": 0.0}, "positive"),
        ({"size": 10, "mean": 0.0, "std": 1.0, "pinned": {10: 1.0}}, r"\[0, 9\]"),
        ({"size": 10, "mean": 0.0, "std": 0.1, "pinned": {0: 5.0}}, "already spread"),
    ],
)
def test_vector_with_moments_refuses_impossible_requests(kwargs, match):
    with pytest.raises(ValueError, match=match):
        vector_with_moments(**kwargs)


def test_batch_and_token_are_the_documents():
    np.testing.assert_array_equal(documents_batch(), [[1, 2, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(documents_token(), [2, 4, 6, 8])


def test_explorer_token_numbers_by_hand():
    # [2, 4, 6, 8]: mean 20 / 4 = 5, variance (9 + 1 + 1 + 9) / 4 = 5, divisor sqrt(5.00001).
    explorer = complete_examples_explorer(example="token [2, 4, 6, 8]", step=0)
    assert "x = [2.0000, 4.0000, 6.0000, 8.0000]" in explorer.readout.value
    explorer.controls["step"].value = 1
    assert "μ = 5.0000" in explorer.readout.value
    explorer.controls["step"].value = 2
    assert "σ² = 5.000000" in explorer.readout.value and "2.23607" in explorer.readout.value
    explorer.controls["step"].value = 3
    np.testing.assert_allclose(
        explorer.result["xhat"][0], np.array([-3, -1, 1, 3]) / np.sqrt(5.00001), rtol=1e-14
    )
    assert "[-1.3416, -0.4472, 0.4472, 1.3416]" in explorer.readout.value


def test_explorer_batch_shows_one_mean_per_sample():
    explorer = complete_examples_explorer(example="2×4 batch", step=1)
    np.testing.assert_allclose(explorer.result["mean"], [2.5, 6.5])
    np.testing.assert_allclose(
        explorer.result["var"], [1.25, 1.25]
    )  # (2.25 + 0.25 + 0.25 + 2.25) / 4
    assert (
        "sample 1: μ = 2.5000" in explorer.readout.value
        and "sample 2: μ = 6.5000" in explorer.readout.value
    )


def test_explorer_embedding_prints_the_documents_entries():
    explorer = complete_examples_explorer(example="512-d embedding", step=3)
    xhat_1 = (0.146 - 0.135) / np.sqrt(0.048**2 + 1e-5)
    assert explorer.result["xhat"][0, 0] == pytest.approx(xhat_1, rel=1e-12)
    assert f"{xhat_1:.4f}" in explorer.readout.value and "…" in explorer.readout.value


def test_explorer_steps_reveal_panels_and_switching_examples_changes_the_picture():
    explorer = complete_examples_explorer(step=4)
    picture = explorer.image.value
    explorer.controls["example"].value = "512-d embedding"
    assert explorer.image.value != picture
    panels = explorer.figures["512-d embedding"][0]
    explorer.controls["step"].value = 1
    visible = [all(a.get_visible() for a in panel) for panel in panels.panels]
    assert visible == [True, True, False, False, False]


@pytest.mark.parametrize("kwargs", [{"example": "3x3"}, {"step": 5}])
def test_explorer_refuses_bad_settings(kwargs):
    with pytest.raises(ValueError):
        complete_examples_explorer(**kwargs)


def test_describe_step_prints_the_documents_rounding():
    steps = layer_norm_steps(documents_embedding())
    # sigma = 0.048 exactly, sqrt(0.048**2 + 1e-5) = sqrt(0.002314) = 0.048104...
    assert describe_step(steps, 2, decimals=3) == ["σ² = 0.00230, σ = 0.04800, √(σ² + ε) = 0.04810"]
    assert describe_step(steps, 0, decimals=3) == ["x = [0.146, 0.108, 0.192, …, 0.110]"]
    with pytest.raises(ValueError, match="step must be"):
        describe_step(steps, 5)


def test_explorer_opens_on_the_running_example_with_its_learned_gamma_and_beta():
    # token 1 = [0.4, -1.1, 0.9, 0.2, -0.6, 1.3, -0.3, 0.0]: mean 0.8 / 8 = 0.1, variance
    # (0.09 + 1.44 + 0.64 + 0.01 + 0.49 + 1.44 + 0.16 + 0.01) / 8 = 4.28 / 8 = 0.535.
    explorer = complete_examples_explorer()
    assert (
        "x = [0.4000, -1.1000, 0.9000, 0.2000, -0.6000, 1.3000, -0.3000, 0.0000]"
        in explorer.readout.value
    )
    explorer.controls["step"].value = 1
    assert "μ = 0.1000" in explorer.readout.value
    explorer.controls["step"].value = 2
    assert "σ² = 0.535000" in explorer.readout.value
    explorer.controls["step"].value = 4
    # chapter 07's γ and β, written out here rather than read from the explorer
    gamma = np.array([0.5, 1.0, 2.0, -1.0, 1.5, 1.0, -0.5, 1.0])
    beta = np.array([-2.0, 0.0, 1.0, 3.0, 0.0, -1.0, 0.5, 0.0])
    centred = np.array([0.3, -1.2, 0.8, 0.1, -0.7, 1.2, -0.4, -0.1])
    by_hand = gamma * centred / np.sqrt(0.535 + 1e-5) + beta
    np.testing.assert_allclose(np.ravel(explorer.result["y"]), by_hand, rtol=1e-12)
    assert "γ = 1 and β = 0" not in explorer.readout.value
