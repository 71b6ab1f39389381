"""lnlib.norms: batch, instance, group and RMS norm, by hand, against each other, against PyTorch,
and their errors."""

import numpy as np
import pytest

from lnlib import layer_norm
from lnlib.book.experiments.family import batch_effects
from lnlib.norms import (
    RunningStats,
    axis_ids,
    batch_norm,
    group_norm,
    instance_norm,
    normalize,
    rms_norm,
    statistic_ids,
)


def standardize_by_loops(x, ids, eps):
    """Standardize every set of entries carrying the same id, with Python floats: an independent
    reference."""
    flat, labels = np.asarray(x, dtype=float).ravel(), ids.ravel()
    out = np.empty_like(flat)
    for label in set(labels.tolist()):
        members = [i for i in range(flat.size) if labels[i] == label]
        values = [float(flat[i]) for i in members]
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / len(values)
        for i, v in zip(members, values):
            out[i] = (v - mean) / (var + eps) ** 0.5
    return out.reshape(np.shape(x))


X = np.random.default_rng(0).normal(loc=2.0, scale=3.0, size=(3, 6, 2, 2))


# --- by hand ------------------------------------------------------------------------------


def test_batch_norm_by_hand():
    # feature 1: values 1 and 3, mean 2, biased variance 1 -> -1, +1; feature 2: 10 and 30, mean 20,
    # variance 100 -> -1, +1
    np.testing.assert_allclose(
        batch_norm([[1.0, 10.0], [3.0, 30.0]], eps=0.0), [[-1.0, -1.0], [1.0, 1.0]]
    )


def test_rms_norm_by_hand():
    # mean square of [3, -4, 0, 0] = (9 + 16) / 4 = 6.25, RMS = 2.5
    np.testing.assert_allclose(
        rms_norm([3.0, -4.0, 0.0, 0.0], [1.0, 2.0, 1.0, 1.0], eps=0.0), [1.2, -3.2, 0.0, 0.0]
    )


def test_group_norm_by_hand():
    # two groups of two channels: [1, 3] -> mean 2, var 1 -> [-1, 1]; [0, 10] -> mean 5, var 25 ->
    # [-1, 1]
    np.testing.assert_allclose(
        group_norm([[1.0, 3.0, 0.0, 10.0]], 2, eps=0.0), [[-1.0, 1.0, -1.0, 1.0]]
    )


# --- every member standardizes exactly the sets statistic_ids names ------------------------


@pytest.mark.parametrize(
    "method,groups", [("batch", 1), ("layer", 1), ("instance", 1), ("group", 2), ("group", 3)]
)
def test_each_method_standardizes_its_statistic_sets(method, groups):
    ids = statistic_ids(X.shape, method, groups=groups)
    np.testing.assert_allclose(
        normalize(X, method, groups=groups, eps=1e-3),
        standardize_by_loops(X, ids, 1e-3),
        rtol=1e-12,
        atol=1e-12,
    )


def test_group_norm_extremes_are_layer_and_instance_norm():
    np.testing.assert_allclose(group_norm(X, 1), layer_norm(X, axis=(1, 2, 3)), atol=1e-12)
    np.testing.assert_allclose(group_norm(X, 6), instance_norm(X), atol=1e-12)


def test_batch_norm_of_one_sample_image_is_instance_norm():
    np.testing.assert_allclose(batch_norm(X[:1], axis=(0, 2, 3)), instance_norm(X[:1]), atol=1e-12)


def test_rms_norm_equals_layer_norm_without_beta_for_zero_mean_input():
    gamma = np.linspace(0.5, 2.0, 8)
    x = np.random.default_rng(1).normal(size=(5, 8))
    x -= x.mean(axis=-1, keepdims=True)
    np.testing.assert_allclose(
        rms_norm(x, gamma, eps=1e-6), layer_norm(x, gamma, eps=1e-6), rtol=1e-12
    )
    assert not np.allclose(rms_norm(x + 1.0, gamma), layer_norm(x + 1.0, gamma))


def test_batch_norm_gamma_beta_are_per_feature():
    x = np.random.default_rng(2).normal(size=(4, 3))
    gamma, beta = np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, -1.0])
    np.testing.assert_allclose(batch_norm(x, gamma, beta), batch_norm(x) * gamma + beta)


def test_running_statistics_follow_the_momentum_rule():
    # two batches of one feature: [0, 2] (mean 1, unbiased var 2), then [4, 4, 4, 8] (mean 5,
    # unbiased var 4)
    running = RunningStats.start(1, momentum=0.5)
    batch_norm(np.array([[0.0], [2.0]]), running=running)
    np.testing.assert_allclose(
        [running.mean[0], running.var[0]], [0.5 * 0 + 0.5 * 1, 0.5 * 1 + 0.5 * 2]
    )
    batch_norm(np.array([[4.0], [4.0], [4.0], [8.0]]), running=running)
    np.testing.assert_allclose(
        [running.mean[0], running.var[0]], [0.5 * 0.5 + 0.5 * 5, 0.5 * 1.5 + 0.5 * 4]
    )
    assert running.updates == 2
    # inference uses them: (x - 2.75) / sqrt(2.75 + 0)
    np.testing.assert_allclose(
        batch_norm([[5.5]], running=running, training=False, eps=0.0), [[(5.5 - 2.75) / 2.75**0.5]]
    )


def test_batch_effects_layer_norm_ignores_the_batch_and_batch_norm_does_not():
    population = np.random.default_rng(3).normal(
        loc=[1.0, -2.0, 0.5], scale=[1.0, 2.0, 0.5], size=(100, 3)
    )
    effects = batch_effects(population, sizes=(2, 8, 64), trials=50, train_steps=50)
    for size in (2, 8, 64):
        np.testing.assert_allclose(
            effects.layer_in_batches[size], np.broadcast_to(effects.layer, (50, 3))
        )
    # two values a, b standardize to +-|a - b| / sqrt((a - b)**2 + 4 eps): +-1 up to eps's small
    # pull towards 0
    np.testing.assert_allclose(np.abs(effects.training[2]), 1.0, atol=1e-2)
    assert effects.spread(2) > effects.spread(8) > effects.spread(64) > 0


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: batch_norm([[1.0, 2.0]]), ValueError, "more than one value per feature"),
        (
            lambda: batch_norm([[1.0, 2.0], [3.0, 4.0]], training=False),
            ValueError,
            "needs running statistics",
        ),
        (
            lambda: batch_norm([[1.0, 2.0], [3.0, 4.0]], running=RunningStats.start(3)),
            ValueError,
            r"shape \(2,\)",
        ),
        (
            lambda: batch_norm([[1.0, 2.0], [3.0, 4.0]], gamma=[1.0, 2.0, 3.0]),
            ValueError,
            "gamma must have the shape",
        ),
        (lambda: batch_norm([[1.0, 2.0], [1.0, 4.0]], eps=0.0), ValueError, "variance is zero"),
        (lambda: batch_norm([[1.0, np.nan], [3.0, 4.0]]), ValueError, "NaN"),
        (lambda: instance_norm(np.ones((2, 3))), ValueError, "at least one spatial axis"),
        (lambda: group_norm(X, 4), ValueError, r"one of \[1, 2, 3, 6\]"),
        (lambda: group_norm(X, 2.0), TypeError, "groups must be an int"),
        (lambda: rms_norm(np.zeros(4), eps=0.0), ValueError, "mean square is zero"),
        (lambda: rms_norm([1.0 + 2j]), TypeError, "complex"),
        (lambda: rms_norm([1.0, 2.0], eps=-1.0), ValueError, "eps must be >= 0"),
        (lambda: normalize(X, "weight"), ValueError, "method must be one of"),
        (lambda: RunningStats.start(3, momentum=0.0), ValueError, "momentum"),
    ],
)
def test_bad_inputs_get_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_float32_stays_float32():
    x = X.astype(np.float32)
    for method in ("batch", "instance", "group", "rms"):
        assert normalize(x, method, groups=2).dtype == np.float32


# --- PyTorch, an independent implementation -----------------------------------------------


def test_batch_norm_matches_torch_in_training_and_inference(torch):
    rng = np.random.default_rng(4)
    gamma, beta = rng.uniform(0.5, 2.0, 6), rng.normal(size=6)
    running = RunningStats.start(6)
    torch_mean, torch_var = torch.zeros(6, dtype=torch.float64), torch.ones(6, dtype=torch.float64)
    for _ in range(3):
        x = rng.normal(2.0, 3.0, size=(4, 6, 3, 2))
        ours = batch_norm(x, gamma, beta, axis=(0, 2, 3), running=running)
        theirs = torch.nn.functional.batch_norm(
            torch.from_numpy(x),
            torch_mean,
            torch_var,
            torch.from_numpy(gamma),
            torch.from_numpy(beta),
            training=True,
            momentum=0.1,
        )
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(running.mean, torch_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(running.var, torch_var.numpy(), rtol=1e-12)
    x = rng.normal(size=(2, 6, 3, 2))
    theirs = torch.nn.functional.batch_norm(
        torch.from_numpy(x),
        torch_mean,
        torch_var,
        torch.from_numpy(gamma),
        torch.from_numpy(beta),
        training=False,
    )
    np.testing.assert_allclose(
        batch_norm(x, gamma, beta, axis=(0, 2, 3), running=running, training=False),
        theirs.numpy(),
        rtol=1e-10,
        atol=1e-10,
    )


def test_instance_norm_matches_torch(torch):
    gamma, beta = np.linspace(0.5, 2.0, 6), np.linspace(-1.0, 1.0, 6)
    theirs = torch.nn.functional.instance_norm(
        torch.from_numpy(X), weight=torch.from_numpy(gamma), bias=torch.from_numpy(beta)
    )
    np.testing.assert_allclose(
        instance_norm(X, gamma, beta), theirs.numpy(), rtol=1e-10, atol=1e-10
    )


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_group_norm_matches_torch(torch, groups):
    gamma, beta = np.linspace(0.5, 2.0, 6), np.linspace(-1.0, 1.0, 6)
    theirs = torch.nn.functional.group_norm(
        torch.from_numpy(X), groups, torch.from_numpy(gamma), torch.from_numpy(beta)
    )
    np.testing.assert_allclose(
        group_norm(X, groups, gamma, beta), theirs.numpy(), rtol=1e-10, atol=1e-10
    )


def test_rms_norm_matches_torch(torch):
    x = np.random.default_rng(5).normal(size=(3, 4, 8))
    gamma = np.linspace(0.5, 2.0, 8)
    module = torch.nn.RMSNorm(8, eps=1e-6, dtype=torch.float64)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(gamma))
        theirs = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(rms_norm(x, gamma), theirs, rtol=1e-10, atol=1e-10)


def test_axis_ids_for_a_sequence_tensor():
    # (batch, sequence, hidden): layer norm's sets are tokens, batch norm's are hidden features
    x = np.random.default_rng(6).normal(size=(2, 3, 4))
    np.testing.assert_allclose(
        layer_norm(x), standardize_by_loops(x, axis_ids(x.shape, -1), 1e-5), rtol=1e-12
    )
    np.testing.assert_allclose(
        batch_norm(x, axis=(0, 1)),
        standardize_by_loops(x, axis_ids(x.shape, (0, 1)), 1e-5),
        rtol=1e-12,
    )
    assert (
        len(np.unique(axis_ids(x.shape, -1))) == 2 * 3
        and len(np.unique(axis_ids(x.shape, (0, 1)))) == 4
    )
