"""lnlib.book.models.training: the warm-up schedule, the toy task, and that Adam actually trains the
tiny transformer."""

import numpy as np
import pytest

from lnlib.book.models.training import (
    load_sweep,
    mean_token_task,
    save_sweep,
    train,
    warmup_rate,
    warmup_sweep,
)


def test_warmup_rate_by_hand():
    # a 4-step ramp to 0.01: 0.0025, 0.005, 0.0075, then 0.01 for good
    assert [warmup_rate(step, 0.01, 4) for step in (1, 2, 3, 4, 5, 100)] == pytest.approx(
        [0.0025, 0.005, 0.0075, 0.01, 0.01, 0.01]
    )
    assert warmup_rate(1, 0.01, 0) == 0.01


def test_task_target_is_the_normalized_sequence_mean_at_every_token():
    x, target = mean_token_task(np.random.default_rng(0), 2, 5, 6)
    mean = x.mean(axis=1)
    expected = (mean - mean.mean(-1, keepdims=True)) / np.sqrt(mean.var(-1, keepdims=True) + 1e-5)
    for token in range(5):
        np.testing.assert_allclose(target[:, token], expected)


def test_training_is_reproducible_and_learns():
    losses = train("pre", lr=3e-3, steps=60, depth=2, width=16, seed=1)
    np.testing.assert_array_equal(
        losses, train("pre", lr=3e-3, steps=60, depth=2, width=16, seed=1)
    )
    frozen = train("pre", lr=1e-9, steps=60, depth=2, width=16, seed=1)
    assert losses[-10:].mean() < 0.7 * frozen[-10:].mean(), (
        "60 Adam steps should cut the loss well below an untrained model's"
    )
    assert losses[0] == frozen[0]  # the same weights and data before the first update


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"lr": 0.0}, "lr must be"),
        ({"lr": "fast"}, "lr must be"),
        ({"lr": 1e-3, "warmup": -1}, "warmup must be"),
        ({"lr": 1e-3, "steps": 0}, "steps must be"),
    ],
)
def test_train_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        train("post", **kwargs)


def test_sweep_rejects_rates_it_did_not_run():
    with pytest.raises(ValueError, match="swept rates"):
        load_sweep().curves(5e-2, "post", True)
    with pytest.raises(ValueError, match="non-empty"):
        warmup_sweep([])


def test_a_sweep_is_the_same_in_one_process_or_two_and_after_a_round_trip(tmp_path):
    settings = {"rates": (1e-2,), "seeds": (0, 1), "steps": 5, "depth": 2, "width": 8}
    one, two = warmup_sweep(**settings), warmup_sweep(**settings, workers=2)
    np.testing.assert_array_equal(one.losses, two.losses)
    assert one.losses.shape == (1, 2, 2, 2, 5)
    save_sweep(one, tmp_path / "sweep.json")
    again = load_sweep(tmp_path / "sweep.json")
    np.testing.assert_array_equal(again.losses, one.losses)
    assert (again.rates, again.seeds, again.warmup) == (one.rates, one.seeds, one.warmup)
