"""The chapter "Why normalize?": the numbers its explorer shows, recomputed independently, and its
fixed chart range."""

import numpy as np
import pytest

from lnlib.book.explorers import why_normalize_explorer
from lnlib.book.explorers.why_normalize import DEPTHS, WEIGHT_SCALES
from lnlib.book.figures.why_normalize import EXPLORER_YLIM
from lnlib.book.models.deep_stack import random_stack, run_stack


@pytest.fixture(scope="module")
def explorer():
    return why_normalize_explorer()


def separate_run(depth, a, layer_norm, activation):
    """The same stack, run on its own with run_stack (not the explorer's batched precomputation)."""
    x, weights, upstream = random_stack(50, 64, 32, seed=0)
    return run_stack(
        x, a * weights[:depth], upstream, layer_norm_on=layer_norm, activation=activation
    )


@pytest.mark.parametrize(
    "depth, a, layer_norm, activation",
    [(20, 2.0, False, "relu"), (50, 0.5, True, "tanh"), (1, np.sqrt(2), False, "tanh")],
)
def test_explorer_shows_the_scales_of_a_separate_run(explorer, depth, a, layer_norm, activation):
    for name, value in (
        ("depth", depth),
        ("weight_scale", a),
        ("layer_norm", layer_norm),
        ("activation", activation),
    ):
        explorer.controls[name].value = value
    run = separate_run(depth, a, layer_norm, activation)
    np.testing.assert_allclose(explorer.result["activation_rms"], run.activation_rms, rtol=1e-10)
    np.testing.assert_allclose(explorer.result["gradient_rms"], run.gradient_rms, rtol=1e-10)
    assert f"<b>{run.activation_rms[-1]:.3g}</b> after the last layer" in explorer.readout.value
    assert f"<b>{run.gradient_rms[0]:.3g}</b> at the input" in explorer.readout.value
    assert f"a = {'√2' if a == np.sqrt(2) else f'{a:g}'}," in explorer.readout.value
    per_layer = (run.gradient_rms[0] / run.gradient_rms[-1]) ** (
        1 / depth
    )  # geometric mean factor over the depth layers
    assert f"× {per_layer:.3f} per layer on the way down" in explorer.readout.value


def test_relu_without_layer_norm_grows_by_a_over_sqrt2_per_layer(explorer):
    """A ReLU halves the mean square of a symmetric input, so each layer multiplies the scale by
    about a / sqrt(2)."""
    for name, value in (
        ("depth", 50),
        ("weight_scale", 3.0),
        ("layer_norm", False),
        ("activation", "relu"),
    ):
        explorer.controls[name].value = value
    act = explorer.result["activation_rms"]
    per_layer = (act[-1] / act[1]) ** (1 / 49)
    assert per_layer == pytest.approx(3.0 / np.sqrt(2), rel=0.05)


def test_every_setting_stays_on_the_chart(explorer):
    low, high = EXPLORER_YLIM
    for act, grads in explorer.profiles.values():
        values = np.concatenate([act, *grads.values()])
        assert low < values.min() and values.max() < high


def test_explorer_offers_the_documented_settings(explorer):
    assert tuple(explorer.controls["depth"].options) == DEPTHS
    assert [v for _, v in explorer.controls["weight_scale"].options] == list(WEIGHT_SCALES.values())
    assert len(explorer.profiles) == len(WEIGHT_SCALES) * 2 * 2


@pytest.mark.parametrize("kwargs", [{"depth": 7}, {"weight_scale": 1.1}, {"activation": "gelu"}])
def test_explorer_refuses_settings_it_has_not_precomputed(kwargs):
    with pytest.raises(ValueError):
        why_normalize_explorer(**kwargs)


@pytest.mark.parametrize(
    "a, layer_norm, expected",
    [(3.0, False, "overflows to inf"), (0.5, False, "round to 0"), (3.0, True, None)],
)
def test_explorer_notes_scales_beyond_half_precision(explorer, a, layer_norm, expected):
    """float16 holds magnitudes from about 6e-8 to 65504; a 50-layer stack without LayerNorm leaves
    that range."""
    for name, value in (
        ("depth", 50),
        ("weight_scale", a),
        ("layer_norm", layer_norm),
        ("activation", "relu"),
    ):
        explorer.controls[name].value = value
    run = separate_run(50, a, layer_norm, "relu")
    scales = np.concatenate([run.activation_rms, run.gradient_rms])
    outside = (
        scales.max() > 65504 or scales.min() < 2.0**-24
    )  # float16: largest finite, smallest subnormal
    assert outside == (expected is not None)
    if expected:
        assert expected in explorer.note.value
    else:
        assert explorer.note.value == ""


def test_scaled_run_is_the_stack_at_that_weight_scale():
    """The chapter's hidden cells run the stack through scaled_run: it must be run_stack on a·W, and
    with LayerNorm the activations must not depend on a (up to ε), the chapter's "LN(a z) ≈
    LN(z)"."""
    from lnlib.book.experiments.why_normalize import scaled_run

    x, weights, upstream = random_stack(6, 16, 8, seed=3)
    plain = scaled_run(x, weights, upstream, 1.5, layer_norm_on=False)
    by_hand = run_stack(x, 1.5 * weights, upstream, layer_norm_on=False, activation="relu")
    np.testing.assert_array_equal(plain.activation_rms, by_hand.activation_rms)
    tanh = scaled_run(x, weights, upstream, 0.5, layer_norm_on=True, activation="tanh")
    tanh_at_3 = scaled_run(x, weights, upstream, 3.0, layer_norm_on=True, activation="tanh")
    np.testing.assert_allclose(tanh.activation_rms, tanh_at_3.activation_rms, rtol=1e-3)
    assert not np.allclose(plain.activation_rms, tanh.activation_rms)


def test_exercise_1s_printed_rms_values_come_from_the_chapters_stack():
    """Chapter 01's exercise 1 prints RMS(h_1) and RMS(h_50) of the chapter's ReLU stack at weight
    scale 1.5 as constants, so that it can be answered on the website: they must be that stack's."""
    x, weights, upstream = random_stack(depth=50, width=64, batch=32, seed=0)
    run = run_stack(x, 1.5 * weights, upstream, activation="relu")
    assert f"{run.activation_rms[1]:.3f}" == "1.036"
    assert f"{run.activation_rms[50]:.3f}" == "5.090"


def test_he_initialization_drifts_down_over_seeds():
    """Chapter 01 says that at a = √2 the scale of one draw drifts down (learner A: it read
    "wanders"): he_drift must be each seed's RMS(h_50) / RMS(h_0), seed 0 the chapter's stack, and
    the product of random factors must pull most draws below their start."""
    from lnlib.book.experiments.why_normalize import he_drift

    ratios = he_drift(seeds=range(20))
    x, weights, upstream = random_stack(depth=50, width=64, batch=32, seed=0)
    run = run_stack(x, np.sqrt(2) * weights, upstream, activation="relu")
    assert ratios[0] == pytest.approx(run.activation_rms[50] / run.activation_rms[0], rel=1e-12)
    assert np.median(ratios) < 1 and np.mean(np.log(ratios)) < 0
    assert np.sum(ratios < 1) >= 15
