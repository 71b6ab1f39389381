"""lnlib.training: the warm-up schedule, the toy task, and that Adam actually trains the tiny transformer."""

import numpy as np
import pytest

from lnlib.training import mean_token_task, train, warmup_rate, warmup_sweep


def test_warmup_rate_by_hand():
    # a 4-step ramp to 0.01: 0.0025, 0.005, 0.0075, then 0.01 for good
    assert [warmup_rate(step, 0.01, 4) for step in (1, 2, 3, 4, 5, 100)] == pytest.approx([0.0025, 0.005, 0.0075, 0.01, 0.01, 0.01])
    assert warmup_rate(1, 0.01, 0) == 0.01


def test_task_target_is_the_normalized_sequence_mean_at_every_token():
    x, target = mean_token_task(np.random.default_rng(0), 2, 5, 6)
    mean = x.mean(axis=1)
    expected = (mean - mean.mean(-1, keepdims=True)) / np.sqrt(mean.var(-1, keepdims=True) + 1e-5)
    for token in range(5):
        np.testing.assert_allclose(target[:, token], expected)


def test_training_is_reproducible_and_learns():
    losses = train("pre", lr=3e-3, steps=60, depth=2, width=16, seed=1)
    np.testing.assert_array_equal(losses, train("pre", lr=3e-3, steps=60, depth=2, width=16, seed=1))
    frozen = train("pre", lr=1e-9, steps=60, depth=2, width=16, seed=1)
    assert losses[-10:].mean() < 0.7 * frozen[-10:].mean(), "60 Adam steps should cut the loss well below an untrained model's"
    assert losses[0] == frozen[0]  # the same weights and data before the first update


@pytest.mark.parametrize("kwargs, message", [({"lr": 0.0}, "lr must be"), ({"lr": "fast"}, "lr must be"), ({"lr": 1e-3, "warmup": -1}, "warmup must be"),
                                             ({"lr": 1e-3, "steps": 0}, "steps must be")])
def test_train_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        train("post", **kwargs)


@pytest.fixture(scope="module")
def sweep_at_chapter_rate():
    """The chapter's runs at its middle learning rate, 1e-2: both placements, with and without warm-up, 4 seeds."""
    return warmup_sweep([1e-2], seeds=(0, 1, 2, 3))


def test_warmup_rescues_post_norm_at_the_chapter_rate(sweep_at_chapter_rate):
    """The chapter's numeric claim: at 1e-2, post-norm without warm-up stays near its starting loss, warm-up
    lowers its final loss in every seed and by more than three standard deviations of that gain, and it
    gains at least three times as much from warm-up as pre-norm does."""
    final = sweep_at_chapter_rate.final()[0]            # (placement, schedule, seed)
    post_gain = final[0, 0] - final[0, 1]
    pre_gain = final[1, 0] - final[1, 1]
    assert (post_gain > 0).all(), f"warm-up should help post-norm in every seed; gains {post_gain}"
    assert post_gain.mean() > 3 * post_gain.std(), f"gain {post_gain.mean():.2f} is within 3 sd ({post_gain.std():.2f}) of 0"
    assert post_gain.mean() > 3 * abs(pre_gain.mean()), f"post-norm gains {post_gain.mean():.2f}, pre-norm {pre_gain.mean():.2f}"
    start = sweep_at_chapter_rate.curves(1e-2, "post", False)[:, 0]
    assert (final[0, 0] > 0.85 * start).all(), "without warm-up post-norm should stay within 15% of its starting loss"
    assert (final[1, 0] < 0.6 * sweep_at_chapter_rate.curves(1e-2, "pre", False)[:, 0]).all(), "pre-norm should learn without warm-up"


def test_sweep_rejects_rates_it_did_not_run(sweep_at_chapter_rate):
    with pytest.raises(ValueError, match="swept rates"):
        sweep_at_chapter_rate.curves(3e-2, "post", True)
    with pytest.raises(ValueError, match="non-empty"):
        warmup_sweep([])
