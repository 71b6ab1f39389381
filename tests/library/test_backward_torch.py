"""lnlib.backward against PyTorch autograd (skipped, with a reason, without PyTorch)."""

import numpy as np
import pytest

from lnlib.backward import layer_norm_backward, relative_error


@pytest.mark.parametrize("seed", range(10))
def test_backward_matches_torch_autograd(torch, seed):
    rng = np.random.default_rng(100 + seed)
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(2, 7, size=ndim))
    n_trailing = int(rng.integers(1, ndim + 1))
    normalized = shape[ndim - n_trailing :]
    eps = float(rng.choice([0.0, 1e-5, 1e-2]))
    x = rng.normal(rng.normal(), rng.uniform(0.5, 3), size=shape)
    gamma = rng.uniform(0.5, 2.0, size=normalized)
    beta = rng.normal(size=normalized)
    dy = rng.normal(size=shape)

    tx, tgamma, tbeta = (torch.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    torch.nn.functional.layer_norm(tx, normalized, tgamma, tbeta, eps=eps).backward(
        torch.from_numpy(dy)
    )

    ours = layer_norm_backward(dy, x, gamma, eps=eps, axis=tuple(range(ndim - n_trailing, ndim)))
    for mine, theirs in zip(ours, (tx.grad, tgamma.grad, tbeta.grad)):
        assert relative_error(mine, theirs.numpy()) < 1e-10


def test_float32_matches_torch_autograd(torch):
    rng = np.random.default_rng(7)
    x, dy = (rng.normal(size=(4, 16)).astype(np.float32) for _ in range(2))
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.layer_norm(tx, (16,)).backward(torch.from_numpy(dy))
    dx, _, _ = layer_norm_backward(dy, x)
    assert dx.dtype == np.float32
    assert relative_error(dx, tx.grad.numpy()) < 1e-5
