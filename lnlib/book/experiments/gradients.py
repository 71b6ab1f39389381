"""The computations of the chapter "Gradients through LayerNorm", and the numbers its prose quotes.

What the Jacobian of RMS norm removes, next to LayerNorm's (:func:`jacobian_geometry`), and what
:func:`lnlib.check_rms_norm` says of kernels that save the wrong statistic for their backward pass
(:func:`saved_statistic_checks`). Each ``*_findings`` function returns one section's numbers by glue
key, already written for the prose (:func:`lnlib.book.tools.prose.number`).
"""

from __future__ import annotations

import numpy as np

from ...backward import backward_parts, layer_norm_backward, layer_norm_jacobian
from ...forward import layer_norm_steps
from ...harness import check_rms_norm
from ...rms import rms_norm_backward
from ..tools import prose

__all__ = [
    "rms_jacobian",
    "jacobian_geometry",
    "kernel_batch",
    "rms_kernel",
    "saved_statistic_checks",
    "float16_rstd_error",
    "outlier_findings",
    "leftover_findings",
    "scale_ratios",
    "scaling_findings",
    "rms_findings",
    "kernel_findings",
]


def rms_jacobian(x, gamma=None, *, eps: float) -> np.ndarray:
    r"""The Jacobian :math:`J_{ij} = \partial y_i / \partial x_j` of RMS norm at one vector (chapter
    "Gradients through LayerNorm").

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
    r"""Which directions the Jacobians of RMS norm and LayerNorm remove at the vector `x` (γ = 1)
    (chapter "Gradients through LayerNorm").

    Parameters
    ----------
    x : array_like
        One vector of H entries, not all equal.
    ratios : sequence of float
        Values of :math:`\varepsilon / \operatorname{mean}(x^2)` at which to measure what ε leaves
        of :math:`Jx` for RMS norm.

    Returns
    -------
    dict
        ``rms_eigenvalues``: the eigenvalues of :math:`J / \mathrm{rstd}` of RMS norm at ε = 0, in
        increasing order (one 0 and H - 1 ones: a projection that removes one direction);
        ``ln_eigenvalues``: those of :math:`sJ` of LayerNorm at ε = 0 (two 0s);
        ``rms_idempotent``: the largest entry of :math:`P^2 - P` for :math:`P = J / \mathrm{rstd}`;
        ``rms_Jx``, ``rms_J1``: :math:`\lVert Jx\rVert / \lVert \hat x\rVert` (the radial direction;
        rounding) and :math:`\lVert J\mathbf 1\rVert / (\mathrm{rstd}\,\lVert\mathbf 1\rVert)` (a
        shift: not 0) for RMS norm at ε = 0; ``rms_J1_formula``: its prediction
        :math:`\sqrt{1 - \operatorname{mean}(x)^2 / \operatorname{mean}(x^2)}`; ``ln_Jx``,
        ``ln_J1``: the same for LayerNorm (:math:`s` in place of rstd; both rounding);
        ``leftover``: for each ratio :math:`t`, :math:`\lVert Jx\rVert / \lVert \hat x\rVert` of RMS
        norm at :math:`\varepsilon = t\,\operatorname{mean}(x^2)`, measured; ``leftover_formula``:
        :math:`t/(1 + t)` for each, the prediction :math:`Jx = \hat x\,\varepsilon /
        (\operatorname{mean}(x^2) + \varepsilon)`.
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


def kernel_batch(shape=(2, 3, 8), seed: int = 3) -> tuple[np.ndarray, ...]:
    """The seeded batch a kernel runs on in chapter "Gradients through LayerNorm" (sections "What a
    kernel keeps" and "What an RMSNorm kernel saves", each run on its own): an activation of
    `shape` (B, T, H) with mean 1 and sd 2, γ between 0.5 and 1.5, β and the upstream gradient dy.

    Returns
    -------
    act, gamma, beta, dy : ndarray
        Of shapes `shape`, (H,), (H,) and `shape`.
    """
    rng = np.random.default_rng(seed)
    act = rng.normal(1.0, 2.0, size=shape)
    size = shape[-1]
    gamma, beta = rng.uniform(0.5, 1.5, size=size), rng.normal(size=size)
    return act, gamma, beta, rng.normal(size=shape)


def rms_kernel(save=lambda rstd: rstd):
    """A float32-statistics RMSNorm kernel that saves one number per row for its backward pass
    (chapter "Gradients through LayerNorm").

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
    """Run :func:`lnlib.check_rms_norm` on :func:`rms_kernel` with each of :data:`SAVES` (chapter
    "Gradients through LayerNorm").

    Returns
    -------
    dict
        For each name of :data:`SAVES`: ``passed`` (bool), ``failed`` (the sorted (part, dtype)
        pairs that failed) and ``worst`` (for each dtype with a failure, the largest error over its
        budget, a ratio; empty when none failed: each dtype has its own budget).
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
    """The relative error of rstd rounded to float16, as the kernel of :data:`SAVES` that keeps 16
    bits makes it (chapter "Gradients through LayerNorm").

    rstd is computed in float32, as :func:`rms_kernel` does, for `rows` random rows of `width`
    normal entries whose scales spread over four decades (so rstd's significand takes every value).

    Returns
    -------
    dict
        ``max``, ``mean``: the largest and the mean of ``|float16(rstd) - rstd| / rstd`` over the
        rows; ``bound``: 2⁻¹¹, half a unit in the last of float16's 11 significant bits, which
        rounding to nearest never exceeds.
    """
    rng = np.random.default_rng(seed)
    scales = 10.0 ** rng.uniform(-2, 2, size=(rows, 1))
    x = (rng.normal(size=(rows, width)) * scales).astype(np.float32)
    rstd = 1 / np.sqrt((x * x).mean(axis=-1) + np.float32(1e-6))
    error = np.abs(rstd.astype(np.float16).astype(np.float64) - rstd) / rstd
    return {"max": float(error.max()), "mean": float(error.mean()), "bound": 2.0**-11}


def outlier_findings(x, dy, gamma) -> dict:
    r"""What the section "The Jacobian" of chapter "Gradients through LayerNorm" says of a token
    with an outlier, by glue key.

    Parameters
    ----------
    x, dy, gamma : array_like
        One token of H features, whose last feature is the outlier, its upstream gradient and the
        gain.

    Returns
    -------
    dict of str to ProseNumber
        ``outlier_xhat``: :math:`\hat x_H`; ``outlier_diag``: :math:`(sJ)_{HH}` at ε = 0;
        ``outlier_col`` (2 decimals), ``outlier_col3`` (3): the length of column H of :math:`sJ`;
        ``others_col_min``, ``others_col_max``: the shortest and longest of the other columns;
        ``outlier_col_ratio``: the shortest other column over column H; ``dx_token1_j``, j = 1 .. H:
        the token's :math:`dx` (ε = 10⁻⁵, as :func:`lnlib.layer_norm_backward`).
    """
    x = np.asarray(x, dtype=np.float64)
    scaled = layer_norm_jacobian(x, eps=0.0) * x.std()
    columns = np.linalg.norm(scaled, axis=0)
    others = columns[:-1]
    dx = layer_norm_backward(np.asarray(dy, dtype=np.float64), x, gamma)[0]
    findings = {
        "outlier_xhat": prose.number(float(layer_norm_steps(x).xhat[-1]), ".2f"),
        "outlier_diag": prose.number(float(scaled[-1, -1]), ".3f"),
        "outlier_col": prose.number(float(columns[-1]), ".2f"),
        "outlier_col3": prose.number(float(columns[-1]), ".3f"),
        "others_col_min": prose.number(float(others.min()), ".2f"),
        "others_col_max": prose.number(float(others.max()), ".2f"),
        "outlier_col_ratio": prose.number(float(others.min() / columns[-1]), ".0f"),
    }
    for j, value in enumerate(dx, start=1):
        findings[f"dx_token1_{j}"] = prose.number(float(value), ".3f")
    return findings


def leftover_findings(dy, x, gamma) -> dict:
    r"""What ε leaves of :math:`dx` along :math:`\hat x` (chapter "Gradients through LayerNorm"), by
    glue key.

    Returns
    -------
    dict of str to ProseNumber
        ``var_v``: the variance of `x`; ``leftover_eps1``, ``leftover_eps5``: :math:`\hat x^\top dx`
        at ε = 1 and ε = 10⁻⁵; ``dx_norm_eps5``: :math:`\lVert dx\rVert` at ε = 10⁻⁵.
    """
    at_one, at_small = (backward_parts(dy, x, gamma, eps=eps) for eps in (1.0, 1e-5))
    return {
        "leftover_eps1": prose.number(float(at_one.dx @ at_one.xhat), ".3f"),
        "leftover_eps5": prose.number(float(at_small.dx @ at_small.xhat), ".1e"),
        "dx_norm_eps5": prose.number(float(np.linalg.norm(at_small.dx)), ".2f"),
        "var_v": prose.number(float(np.var(x)), ".2f"),
    }


def scale_ratios(dy, x, alphas, eps: float, gamma=None) -> np.ndarray:
    r""":math:`\alpha\,\lVert dx(\alpha u)\rVert / \lVert dx(u)\rVert` for each α, u the
    standardized `x` (chapter "Gradients through LayerNorm").

    1 exactly where the gradient goes as 1/α; α is the standard deviation of the scaled input.
    """
    x = np.asarray(x, dtype=np.float64)
    unit = (x - x.mean()) / x.std()
    base = np.linalg.norm(layer_norm_backward(dy, unit, gamma, eps=eps)[0])
    return np.array(
        [
            alpha * np.linalg.norm(layer_norm_backward(dy, alpha * unit, gamma, eps=eps)[0]) / base
            for alpha in alphas
        ]
    )


def scaling_findings(dy, x, gamma, *, alpha: float = 1e-3, eps: float = 1e-5) -> dict:
    r"""What the section "Scale" of chapter "Gradients through LayerNorm" says, by glue key.

    Returns
    -------
    dict of str to ProseNumber
        ``ratio_small_alpha``: :func:`scale_ratios` at `alpha` and `eps` with γ = 1 (the figure's);
        ``ratio_small_alpha_gamma``: the same with the given `gamma` (the ratio depends on γ and
        dy); ``saturation``: :math:`1/\sqrt\varepsilon`, the scale where the gradient stops growing.
    """
    return {
        "ratio_small_alpha": prose.number(float(scale_ratios(dy, x, [alpha], eps)[0]), ".3f"),
        "ratio_small_alpha_gamma": prose.number(
            float(scale_ratios(dy, x, [alpha], eps, gamma)[0]), ".3f"
        ),
        "saturation": prose.number(float(1 / np.sqrt(eps)), ".0f"),
    }


def rms_findings(x, geometry: dict) -> dict:
    r"""What the section "RMSNorm's backward pass" says of RMS norm's Jacobian at the vector `x`, by
    glue key.

    Parameters
    ----------
    x : array_like
        The vector :func:`jacobian_geometry` measured.
    geometry : dict
        Its result, with the ratios 10⁻⁴, 10⁻² and 1 among its ``leftover`` keys.

    Returns
    -------
    dict of str to ProseNumber
        ``rms_J1``: :math:`\lVert J\mathbf 1\rVert / (\mathrm{rstd}\,\lVert\mathbf 1\rVert)`;
        ``token1_mean``, ``token1_ms``: mean(x) and mean(x²); ``rms_leftover_t4``, ``_t2``, ``_t0``:
        :math:`\lVert Jx\rVert / \lVert\hat x\rVert` at t = ε/mean(x²) = 10⁻⁴, 10⁻², 1;
        ``rms_leftover_1e6``: t/(1 + t) at t = 10⁻⁶ (mean square 1, ε = 10⁻⁶).
    """
    x = np.asarray(x, dtype=np.float64)
    findings = {
        "rms_J1": prose.number(geometry["rms_J1"], ".2f"),
        "token1_mean": prose.number(float(x.mean()), ".2f"),
        "token1_ms": prose.number(float(np.mean(x**2)), ".3f"),
    }
    for t, name in ((1e-4, "t4"), (1e-2, "t2"), (1.0, "t0")):
        findings[f"rms_leftover_{name}"] = prose.number(geometry["leftover"][t], ".2g")
    findings["rms_leftover_1e6"] = prose.number(1e-6 / (1 + 1e-6), ".0e")
    return findings


def kernel_findings(checks: dict, rounding: dict) -> dict:
    r"""What the section "What an RMSNorm kernel saves" says, by glue key.

    Parameters
    ----------
    checks : dict
        :func:`saved_statistic_checks`' result.
    rounding : dict
        :func:`float16_rstd_error`'s result.

    Returns
    -------
    dict of str to ProseNumber
        ``rms16_miss_float32``, ``rms16_miss_float64``: the power of ten just below how many times
        the kernel that rounds rstd to float16 misses each dtype's error budget (its worst input);
        ``rms_sigma_miss``: the same for the kernel that saves σ, the smaller of its two dtypes';
        ``rstd16_max``, ``rstd16_mean``: float16 rounding's largest and mean relative error on rstd;
        ``float32_eps``: float32's machine epsilon (PyTorch's ``nn.RMSNorm`` default ε in float32).
    """
    misses = {
        "rms16_miss_float32": checks["rstd in float16"]["worst"]["float32"],
        "rms16_miss_float64": checks["rstd in float16"]["worst"]["float64"],
        "rms_sigma_miss": min(checks["sigma = 1/rstd"]["worst"].values()),
    }
    findings = {
        name: prose.number(10.0 ** np.floor(np.log10(miss)), ".0e") for name, miss in misses.items()
    }
    findings["rstd16_max"] = prose.number(rounding["max"], ".1e")
    findings["rstd16_mean"] = prose.number(rounding["mean"], ".1e")
    findings["float32_eps"] = prose.number(float(np.finfo(np.float32).eps), ".1e")
    return findings
