"""lnlib.layer_norm against torch.nn.functional.layer_norm (skipped, with a reason, without
PyTorch)."""

import numpy as np
import pytest

from lnlib import layer_norm


@pytest.mark.parametrize("seed", range(12))
def test_matches_torch_layer_norm(torch, seed):
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(2, 7, size=ndim))
    n_trailing = int(rng.integers(1, ndim + 1))
    normalized = shape[ndim - n_trailing :]
    eps = float(rng.choice([0.0, 1e-6, 1e-5, 1e-2]))
    x = rng.normal(rng.normal(), rng.uniform(0.5, 3), size=shape)
    gamma = rng.uniform(0.5, 2.0, size=normalized)
    beta = rng.normal(size=normalized)
    ours = layer_norm(x, gamma, beta, eps=eps, axis=tuple(range(ndim - n_trailing, ndim)))
    theirs = torch.nn.functional.layer_norm(
        torch.from_numpy(x), normalized, torch.from_numpy(gamma), torch.from_numpy(beta), eps=eps
    ).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


def test_matches_torch_in_float32(torch):
    x = np.random.default_rng(7).normal(size=(4, 16)).astype(np.float32)
    ours = layer_norm(x)
    theirs = torch.nn.functional.layer_norm(torch.from_numpy(x), (16,)).numpy()
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
