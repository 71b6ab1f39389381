"""The computations of the chapter "Gradients through LayerNorm" for RMSNorm's backward pass.

What the Jacobian of RMS norm removes, next to LayerNorm's (:func:`jacobian_geometry`), and what
:func:`lnlib.check_rms_norm` says of kernels that save the wrong statistic for their backward pass
(:func:`saved_statistic_checks`).
"""

from __future__ import annotations

import numpy as np

from ...backward import layer_norm_jacobian
from ...harness import check_rms_norm
from ...rms import rms_norm_backward

__all__ = [
    "rms_jacobian",
    "jacobian_geometry",
    "rms_kernel",
    "saved_statistic_checks",
    "float16_rstd_error",
]


def rms_jacobian(x, gamma=None, *, eps: float) -> np.ndarray:
    r"""The Jacobian :math:`J_{ij} = \partial y_i / \partial x_j` of RMS norm at one vector (chapter "Gradients through LayerNorm").

    Row i is the backward pass of the upstream gradient :math:`e_i`, since :math:`dx = J^\top dy`.

    Parameters
    ----------
    x : array_like
        One vector of H entries.
    gamma : array_like, optional
        The gain, H entries. Default: 1.
    eps : float
        Inside the square root, as in :func:`lnlib.rms_norm`.

    Returns
    -------
    ndarray of shape (H, H)
    """
    x = np.asarray(x, dtype=np.float64)
    rows = np.broadcast_to(x, (x.size, x.size))
    return rms_norm_backward(np.eye(x.size), rows, gamma, eps=eps)[0]


def jacobian_geometry(x, *, ratios=(1e-4, 1e-2, 1.0)) -> dict:
    r"""Which directions the Jacobians of RMS norm and LayerNorm remove at the vector `x` (γ = 1) (chapter "Gradients through LayerNorm").

    Parameters
    ----------
    x : array_like
        One vector of H entries, not all equal.
    ratios : sequence of float
        Values of :math:`\varepsilon / \operatorname{mean}(x^2)` at which to measure what ε leaves of
        :math:`Jx` for RMS norm.

    Returns
    -------
    dict
        ``rms_eigenvalues``: the eigenvalues of :math:`J / \mathrm{rstd}` of RMS norm at ε = 0, in
        increasing order (one 0 and H - 1 ones: a projection that removes one direction);
        ``ln_eigenvalues``: those of :math:`sJ` of LayerNorm at ε = 0 (two 0s);
        ``rms_idempotent``: the largest entry of :math:`P^2 - P` for :math:`P = J / \mathrm{rstd}`;
        ``rms_Jx``, ``rms_J1``: :math:`\lVert Jx\rVert / \lVert \hat x\rVert` (the radial direction;
        rounding) and :math:`\lVert J\mathbf 1\rVert / (\mathrm{rstd}\,\lVert\mathbf 1\rVert)` (a shift:
        not 0) for RMS norm at ε = 0; ``rms_J1_formula``: its prediction
        :math:`\sqrt{1 - \operatorname{mean}(x)^2 / \operatorname{mean}(x^2)}`; ``ln_Jx``, ``ln_J1``: the same for LayerNorm (:math:`s` in place
        of rstd; both rounding);
        ``leftover``: for each ratio :math:`t`, :math:`\lVert Jx\rVert / \lVert \hat x\rVert` of RMS norm at
        :math:`\varepsilon = t\,\operatorname{mean}(x^2)`, measured; ``leftover_formula``: :math:`t/(1 + t)`
        for each, the prediction :math:`Jx = \hat x\,\varepsilon / (\operatorname{mean}(x^2) + \varepsilon)`.
    """
    x = np.asarray(x, dtype=np.float64)
    ones = np.ones_like(x)
    rstd = 1 / np.sqrt(np.mean(x**2))
    projection = rms_jacobian(x, eps=0.0) / rstd
    ln_projection = layer_norm_jacobian(x, eps=0.0) * x.std()
    xhat_norm = np.linalg.norm(x * rstd)

    def rms_leftover(ratio):
        eps = ratio * np.mean(x**2)
        xhat = x / np.sqrt(np.mean(x**2) + eps)
        return np.linalg.norm(rms_jacobian(x, eps=eps) @ x) / np.linalg.norm(xhat)

    return {
        "rms_eigenvalues": np.linalg.eigvalsh((projection + projection.T) / 2),
        "ln_eigenvalues": np.linalg.eigvalsh((ln_projection + ln_projection.T) / 2),
        "rms_idempotent": float(np.abs(projection @ projection - projection).max()),
        "rms_Jx": float(np.linalg.norm(projection @ x) * rstd / xhat_norm),
        "rms_J1": float(np.linalg.norm(projection @ ones) / np.linalg.norm(ones)),
        "rms_J1_formula": float(np.sqrt(1 - np.mean(x) ** 2 / np.mean(x**2))),
        "ln_Jx": float(np.linalg.norm(ln_projection @ x) / np.linalg.norm(x)),
        "ln_J1": float(np.linalg.norm(ln_projection @ ones) / np.linalg.norm(ones)),
        "leftover": {t: float(rms_leftover(t)) for t in ratios},
        "leftover_formula": {t: t / (1 + t) for t in ratios},
    }


def rms_kernel(save=lambda rstd: rstd):
    """A float32-statistics RMSNorm kernel that saves one number per row for its backward pass (chapter "Gradients through LayerNorm").

    Parameters
    ----------
    save : callable
        What the forward pass keeps of ``rstd = 1 / sqrt(mean(x**2) + eps)``: the identity for a
        correct kernel; ``lambda r: 1 / r`` saves σ instead, ``lambda r: r.astype(np.float16)``
        rounds it to 16 bits. The backward pass uses what was saved as rstd, as a kernel does.

    Returns
    -------
    (forward, backward)
        As :func:`lnlib.check_rms_norm` takes them: ``forward(x, gamma, eps) -> (y, saved)`` and
        ``backward(dy, x, gamma, eps, saved) -> (dx, dgamma)``.
    """

    def forward(x, gamma, eps):
        xw = x.astype(np.float32 if x.dtype.itemsize == 2 else x.dtype)
        rstd = 1 / np.sqrt((xw * xw).mean(axis=-1, keepdims=True) + eps)
        return (xw * rstd * gamma.astype(xw.dtype)).astype(x.dtype), save(rstd)

    def backward(dy, x, gamma, eps, saved):
        xw = x.astype(np.float32 if x.dtype.itemsize == 2 else x.dtype)
        xhat, dyw = xw * saved, dy.astype(xw.dtype)
        dxhat = dyw * gamma.astype(xw.dtype)
        dx = (dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)) * saved
        dgamma = (dyw * xhat).sum(axis=tuple(range(x.ndim - 1)))
        return dx.astype(x.dtype), dgamma.astype(x.dtype)

    return forward, backward


#: The kernels :func:`saved_statistic_checks` runs, by what their forward pass saves.
SAVES = {
    "rstd": lambda rstd: rstd,
    "sigma = 1/rstd": lambda rstd: 1 / rstd,
    "rstd in float16": lambda rstd: rstd.astype(np.float16),
}


def saved_statistic_checks(dtypes=("float64", "float32")) -> dict:
    """Run :func:`lnlib.check_rms_norm` on :func:`rms_kernel` with each of :data:`SAVES` (chapter "Gradients through LayerNorm").

    Returns
    -------
    dict
        For each name of :data:`SAVES`: ``passed`` (bool), ``failed`` (the sorted (part, dtype) pairs
        that failed) and ``worst`` (for each dtype with a failure, the largest error over its budget,
        a ratio; empty when none failed: each dtype has its own budget).
    """
    found = {}
    for name, save in SAVES.items():
        with np.errstate(all="ignore"):  # sigma saved: x * sigma can overflow float16 rows
            report = check_rms_norm(*rms_kernel(save), dtypes=dtypes)
        failures = report.failures
        found[name] = {
            "passed": report.passed,
            "failed": sorted({(r.part, r.dtype) for r in failures}),
            "worst": {
                dtype: max(r.ratio for r in failures if r.dtype == dtype)
                for dtype in sorted({r.dtype for r in failures})
            },
        }
    return found


def float16_rstd_error(rows: int = 10_000, width: int = 64, seed: int = 0) -> dict:
    """The relative error of rstd rounded to float16, as the kernel of :data:`SAVES` that keeps 16 bits makes it (chapter "Gradients through LayerNorm").

    rstd is computed in float32, as :func:`rms_kernel` does, for `rows` random rows of `width` normal
    entries whose scales spread over four decades (so rstd's significand takes every value).

    Returns
    -------
    dict
        ``max``, ``mean``: the largest and the mean of ``|float16(rstd) - rstd| / rstd`` over the rows;
        ``bound``: 2⁻¹¹, half a unit in the last of float16's 11 significant bits, which rounding to
        nearest never exceeds.
    """
    rng = np.random.default_rng(seed)
    scales = 10.0 ** rng.uniform(-2, 2, size=(rows, 1))
    x = (rng.normal(size=(rows, width)) * scales).astype(np.float32)
    rstd = 1 / np.sqrt((x * x).mean(axis=-1) + np.float32(1e-6))
    error = np.abs(rstd.astype(np.float16).astype(np.float64) - rstd) / rstd
    return {"max": float(error.max()), "mean": float(error.mean()), "bound": 2.0**-11}
