r"""Check your own LayerNorm against lnlib's float64 reference (chapter "Check your own LayerNorm").

:func:`check_layer_norm` runs a forward function (and optionally a backward
function) on seeded inputs of several shapes, in several dtypes, including the
edge cases where implementations break: constant rows, a large offset, a wide
or tiny spread, H = 1. Each output is compared, entry by entry, with lnlib's
LayerNorm computed in float64 *on the same rounded inputs*, against an error
budget derived in the chapter "Computing it right: numerics":

- the statistics, accumulated with unit roundoff :math:`u_\text{acc}` (float32's
  for 16-bit data, as PyTorch's CPU and CUDA kernels accumulate; the
  data's own otherwise), are off by at most about :math:`H u_\text{acc}` relative
  (the bound of a recursive sum of H terms), and the mean's error
  :math:`u_\text{acc}|\mu|` moves every :math:`\hat x` by :math:`u_\text{acc}\kappa`
  with :math:`\kappa = |\mu| / \sqrt{\sigma^2 + \varepsilon}`; so
  :math:`|\Delta \hat x| \le H u_\text{acc} (1 + \kappa)(1 + |\hat x|)`;
- rounding :math:`\gamma \hat x` and the sum with :math:`\beta` to the output
  dtype adds :math:`2 u_\text{out} (|\gamma \hat x| + |\beta|)`;
- the backward pass's dγ and dβ are sums over the M = B·T rows, which kernels
  may accumulate in the storage dtype (PyTorch's CPU kernel keeps its partial
  sums in it): :math:`M u_\text{out}` relative.

A correct implementation stays inside the budget everywhere; the bugs the
chapter plants (unbiased variance, ε outside the root, statistics in half
precision, a wrong axis, a wrong dγ reduction) leave it by a wide margin.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .backward import layer_norm_backward
from .forward import layer_norm
from .textbook import numpy_layer_norm_backward
from .validation import HALF_DTYPES, check_count, check_eps, compute_dtype, float_info

__all__ = [
    "CASES", "DTYPES", "Case", "CheckResult", "CheckReport", "check_layer_norm", "harness_inputs", "unit_roundoff",
    "torch_layer_norm",
]  # the buggy_* functions are the chapter's planted bugs, examples rather than API

#: The width the report's lines keep to (the book's code column).
REPORT_WIDTH = 80

#: The dtypes :func:`check_layer_norm` tries by default.
DTYPES = ("float64", "float32", "float16", "bfloat16")


@dataclass(frozen=True)
class Case:
    """One family of test inputs (chapter "Check your own LayerNorm").

    Attributes
    ----------
    name : str
        Shown in the report.
    shape : tuple of int
        The input's shape; the trailing `normalized_ndim` axes are normalized.
    offset, spread : float
        The input is ``offset + spread * N(0, 1)``, or the constant `offset` when `spread` is 0.
    """

    name: str
    shape: tuple
    offset: float = 0.0
    spread: float = 1.0

    def make(self, rng: np.random.Generator) -> np.ndarray:
        """The input in float64, before it is rounded to the dtype under test."""
        noise = rng.normal(size=self.shape) if self.spread else np.zeros(self.shape)
        return self.offset + self.spread * noise


#: The default inputs: ordinary data and the edge cases where implementations break.
CASES = (
    Case("random (4, 3, 64)", (4, 3, 64)),
    Case("offset 1000 (8, 32)", (8, 32), offset=1000.0),
    Case("spread 300 (8, 64)", (8, 64), spread=300.0),
    Case("tiny spread (8, 64)", (8, 64), offset=1.0, spread=0.01),
    Case("constant rows (4, 16)", (4, 16), offset=3.0, spread=0.0),
    Case("H = 1 (6, 1)", (6, 1)),
)


def unit_roundoff(dtype) -> float:
    """Half the distance from 1 to the next number of `dtype` (bfloat16 included): one rounding's relative error."""
    return float(float_info(dtype).eps) / 2


@dataclass(frozen=True)
class CheckResult:
    """One comparison: a part (forward or backward) on one case in one dtype.

    Attributes
    ----------
    part, case, dtype : str
    ratio : float
        The worst ``|error| / allowed error`` over all entries: at most 1 passes;
        ``inf`` for NaN, infinity, a wrong shape or dtype, or an exception.
    detail : str
        Empty when it passed; otherwise what went wrong, for the report.
    """

    part: str
    case: str
    dtype: str
    ratio: float
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.ratio <= 1.0


@dataclass(frozen=True)
class CheckReport:
    """Every :class:`CheckResult` of one :func:`check_layer_norm` run; printing it gives the table."""

    results: tuple
    dtypes: tuple
    eps: float

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> list:
        """The checks that failed, in the order they ran."""
        return [r for r in self.results if not r.passed]

    def __str__(self) -> str:
        rows = list(dict.fromkeys((r.part, r.case) for r in self.results))
        cell = {(r.part, r.case, r.dtype): r for r in self.results}
        width = max(len(f"{p:<8} {c}") for p, c in rows)
        lines = [f"LayerNorm check, eps={self.eps:g}: {len(self.results) - len(self.failures)} of {len(self.results)} checks passed",
                 f"{'':<{width}}" + "".join(f"{d:>10}" for d in self.dtypes)]
        for part, case in rows:
            marks = [_mark(cell.get((part, case, d))) for d in self.dtypes]
            lines.append(f"{f'{part:<8} {case}':<{width}}" + "".join(f"{m:>10}" for m in marks))
        lines += ["ok: within the error budget; ×k: k times over it;", "NaN, shape, dtype, error: see .failures"]
        for r in self.failures[:6]:
            lines.append(f"  {r.part} / {r.case} / {r.dtype}:")
            lines += textwrap.wrap(r.detail, REPORT_WIDTH, initial_indent="    ", subsequent_indent="      ")
        if len(self.failures) > 6:
            lines.append(f"  ... and {len(self.failures) - 6} more in .failures")
        return "\n".join(lines)

    __repr__ = __str__


def _mark(result: CheckResult | None) -> str:
    if result is None:
        return "-"
    if result.passed:
        return "ok"
    if np.isfinite(result.ratio):
        return f"×{result.ratio:.3g}"
    return result.detail.split(":")[0]


def check_layer_norm(forward: Callable, backward: Callable | None = None, *, dtypes=DTYPES, cases=CASES, eps: float = 1e-5,
                     normalized_ndim: int = 1, seed: int = 0) -> CheckReport:
    """Run a LayerNorm implementation against lnlib's float64 reference and report, per case and dtype (chapter "Check your own LayerNorm").

    Parameters
    ----------
    forward : callable
        ``forward(x, gamma, beta, eps) -> y``: numpy arrays in the dtype under
        test (bfloat16 is ``ml_dtypes.bfloat16``), normalizing the trailing
        `normalized_ndim` axes (gamma and beta have their shape). It must
        return an array of the shape and dtype of `x`.
    backward : callable, optional
        ``backward(dy, x, gamma, eps) -> (dx, dgamma, dbeta)``, in the dtype
        of `x`; dgamma and dbeta sum over every other axis (all B·T tokens).
    dtypes : sequence of str, default ("float64", "float32", "float16", "bfloat16")
    cases : sequence of Case, default :data:`CASES`
    eps : float, default 1e-5
    normalized_ndim : int, default 1
        How many trailing axes share one mean and variance (PyTorch's
        ``len(normalized_shape)``).
    seed : int, default 0
        Seeds the inputs, gamma, beta and dy.

    Returns
    -------
    CheckReport
        ``print(report)`` shows the table; ``report.passed`` is True when
        every check passed; ``report.failures`` lists the others.

    Raises
    ------
    TypeError
        If `forward` or `backward` is not callable.
    ValueError
        For an unknown dtype, a bad eps, or a `normalized_ndim` larger than a case's number of axes.

    Examples
    --------
    >>> import numpy as np
    >>> def mine(x, gamma, beta, eps):
    ...     mu = x.mean(-1, keepdims=True)
    ...     var = x.var(-1, keepdims=True)
    ...     return (x - mu) / np.sqrt(var + eps) * gamma + beta
    >>> check_layer_norm(mine, dtypes=("float64",)).passed
    True
    """
    for name, function in (("forward", forward), ("backward", backward)):
        if function is not None and not callable(function):
            raise TypeError(f"{name} must be a function such as {name}(x, gamma, beta, eps); got {function!r}.")
    eps = check_eps(eps)
    normalized_ndim = check_count(normalized_ndim, "normalized_ndim")
    dtypes = tuple(compute_dtype(np.float64, d).name for d in dtypes)
    results = []
    for (case, dtype), inputs in harness_inputs(dtypes=dtypes, cases=cases, normalized_ndim=normalized_ndim, seed=seed).items():
        results.append(_run("forward", case, dtype, lambda: _check_forward(forward, inputs, eps, normalized_ndim)))
        if backward is not None:
            results.append(_run("backward", case, dtype, lambda: _check_backward(backward, inputs, eps, normalized_ndim)))
    return CheckReport(tuple(results), dtypes, eps)


def harness_inputs(*, dtypes=DTYPES, cases=CASES, normalized_ndim: int = 1, seed: int = 0) -> dict:
    """The inputs :func:`check_layer_norm` gives an implementation (chapter "Check your own LayerNorm").

    Returns
    -------
    dict
        ``{(case, dtype): {"x", "gamma", "beta", "dy": array}}`` in the order the checks run, each array
        rounded to `dtype`; the same seed gives bit-identical inputs.

    Raises
    ------
    ValueError
        For an unknown dtype, or a `normalized_ndim` larger than a case's number of axes.
    """
    normalized_ndim = check_count(normalized_ndim, "normalized_ndim")
    dtypes = tuple(compute_dtype(np.float64, d).name for d in dtypes)
    inputs = {}
    for index, case in enumerate(cases):
        if len(case.shape) < normalized_ndim:
            raise ValueError(f"case {case.name!r} has shape {case.shape}, fewer axes than normalized_ndim={normalized_ndim}.")
        for dtype in dtypes:
            inputs[case, dtype] = _inputs(case, dtype, normalized_ndim, np.random.default_rng([seed, index]))
    return inputs


def _inputs(case: Case, dtype: str, k: int, rng: np.random.Generator) -> dict:
    """x, gamma, beta and dy rounded to `dtype`: the values the implementation receives, and the reference uses."""
    storage = compute_dtype(np.float64, dtype)
    feature = case.shape[-k:]
    raw = {"x": case.make(rng), "gamma": 1 + 0.5 * rng.normal(size=feature), "beta": 0.5 * rng.normal(size=feature),
           "dy": rng.normal(size=case.shape)}
    return {name: value.astype(storage) for name, value in raw.items()}


def _run(part: str, case: Case, dtype: str, compare: Callable) -> CheckResult:
    try:
        ratio, detail = compare()
    except Exception as exc:  # the implementation under test may raise anything: report it, never crash the table
        ratio, detail = float("inf"), f"error: {type(exc).__name__}: {exc}"
    return CheckResult(part, case.name, dtype, ratio, detail)


def _check_forward(forward: Callable, inputs: dict, eps: float, k: int) -> tuple[float, str]:
    x, gamma, beta = inputs["x"], inputs["gamma"], inputs["beta"]
    axes = tuple(range(x.ndim - k, x.ndim))
    wide = {name: v.astype(np.float64) for name, v in inputs.items()}
    y_ref, mean, rstd = layer_norm(wide["x"], wide["gamma"], wide["beta"], eps=eps, axis=axes, return_stats=True)
    xhat = (wide["x"] - mean) * rstd
    u_out, u_acc = unit_roundoff(x.dtype), _accumulation_roundoff(x.dtype)
    size = int(np.prod(x.shape[-k:]))
    dxhat = size * u_acc * (1 + np.abs(mean) * rstd) * (1 + np.abs(xhat))
    budget = np.abs(wide["gamma"]) * dxhat + 2 * u_out * (np.abs(wide["gamma"] * xhat) + np.abs(wide["beta"]))
    return _compare("y", forward(x, gamma, beta, eps), y_ref, budget, x.dtype)


def _check_backward(backward: Callable, inputs: dict, eps: float, k: int) -> tuple[float, str]:
    x, gamma, dy = inputs["x"], inputs["gamma"], inputs["dy"]
    axes = tuple(range(x.ndim - k, x.ndim))
    others = tuple(range(x.ndim - k))
    wide = {name: v.astype(np.float64) for name, v in inputs.items()}
    _, mean, rstd = layer_norm(wide["x"], eps=eps, axis=axes, return_stats=True)
    refs = layer_norm_backward(wide["dy"], wide["x"], wide["gamma"], eps=eps, axis=axes)
    xhat = (wide["x"] - mean) * rstd
    u_out, u_acc = unit_roundoff(x.dtype), _accumulation_roundoff(x.dtype)
    size, rows = int(np.prod(x.shape[-k:])), int(np.prod(x.shape[:-k]))
    xhat_error = size * u_acc * (2 + np.abs(mean) * rstd) * (1 + np.abs(xhat))  # of x-hat, and relative of the two means
    dxhat = np.abs(wide["dy"] * wide["gamma"])
    terms = rstd * (dxhat + dxhat.mean(axis=axes, keepdims=True) + np.abs(xhat) * (dxhat * np.abs(xhat)).mean(axis=axes, keepdims=True))
    budgets = (
        xhat_error * terms + 2 * u_out * np.abs(refs[0]),
        (np.abs(wide["dy"]) * xhat_error + rows * u_out * np.abs(wide["dy"] * xhat)).sum(axis=others) + 2 * u_out * np.abs(refs[1]),
        rows * u_out * np.abs(wide["dy"]).sum(axis=others),
    )
    got = backward(dy, x, gamma, eps)
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        return float("inf"), "shape: backward must return the three arrays (dx, dgamma, dbeta)"
    worst = (0.0, "")
    for name, g, ref, budget in zip(("dx", "dgamma", "dbeta"), got, refs, budgets):
        worst = max(worst, _compare(name, g, ref, budget, x.dtype), key=lambda r: r[0])
    return worst


def _accumulation_roundoff(dtype) -> float:
    """The roundoff of the statistics: float32's for 16-bit data (as the frameworks accumulate), the data's own otherwise."""
    return unit_roundoff(np.float32 if np.dtype(dtype) in HALF_DTYPES else dtype)


def _compare(name: str, got, ref: np.ndarray, budget: np.ndarray, dtype) -> tuple[float, str]:
    """Worst ``|got - ref| / budget`` and what failed; a wrong shape, dtype or a NaN is infinitely over."""
    got = np.asarray(got)
    if got.shape != ref.shape:
        return float("inf"), f"shape: {name} has shape {got.shape}, expected {ref.shape}"
    if got.dtype != np.dtype(dtype):
        return float("inf"), f"dtype: {name} is {got.dtype}, expected {np.dtype(dtype).name} (the input's)"
    values = got.astype(np.float64)
    if not np.isfinite(values).all():
        return float("inf"), f"NaN: {name} has {int((~np.isfinite(values)).sum())} NaN or infinite entries"
    tiny = float_info(dtype).smallest_subnormal
    with np.errstate(over="ignore"):
        ratio = np.abs(values - ref) / (budget + tiny)
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratio)), ratio.shape))
    worst = float(ratio[where])
    detail = "" if worst <= 1 else (f"{name}[{', '.join(map(str, where))}] = {values[where]:.6g}, reference {ref[where]:.6g}, "
                                    f"error {abs(values[where] - ref[where]):.2g} > allowed {budget[where]:.2g}")
    return worst, detail



# Example implementations for the chapter "Check your own LayerNorm" and the tests: the correct numpy
# version (lnlib.textbook) with one planted bug each, and PyTorch's.


def buggy_unbiased_variance(x, gamma, beta, eps):
    """Bug: divides the sum of squares by H - 1 (``torch.std``'s default), not by H."""
    work = np.float32 if x.dtype.itemsize == 2 else x.dtype
    xw = x.astype(work)
    mean = xw.mean(axis=-1, keepdims=True)
    var = ((xw - mean) ** 2).sum(axis=-1, keepdims=True) / (x.shape[-1] - 1)
    return ((xw - mean) / np.sqrt(var + eps) * gamma.astype(work) + beta.astype(work)).astype(x.dtype)


def buggy_eps_outside_root(x, gamma, beta, eps):
    """Bug: adds eps to the standard deviation, ``(x - mean) / (std + eps)``."""
    work = np.float32 if x.dtype.itemsize == 2 else x.dtype
    xw = x.astype(work)
    mean = xw.mean(axis=-1, keepdims=True)
    std = np.sqrt(((xw - mean) ** 2).mean(axis=-1, keepdims=True))
    return ((xw - mean) / (std + eps) * gamma.astype(work) + beta.astype(work)).astype(x.dtype)


def buggy_half_statistics(x, gamma, beta, eps):
    """Bug: keeps every operation in the input's dtype, so 16-bit data gets 16-bit statistics."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + x.dtype.type(eps)) * gamma + beta


def buggy_wrong_axis(x, gamma, beta, eps):
    """Bug: takes the statistics over the first axis (the batch, as batch norm does), not the features."""
    work = np.float32 if x.dtype.itemsize == 2 else x.dtype
    xw = x.astype(work)
    mean = xw.mean(axis=0, keepdims=True)
    var = ((xw - mean) ** 2).mean(axis=0, keepdims=True)
    return ((xw - mean) / np.sqrt(var + eps) * gamma.astype(work) + beta.astype(work)).astype(x.dtype)


def buggy_dgamma_over_batch_only(dy, x, gamma, eps):
    """Bug: sums dgamma and dbeta over the batch axis only, forgetting the sequence axis of a (B, T, C) input."""
    dx, _, _ = numpy_layer_norm_backward(dy, x, gamma, eps)
    work = np.float32 if x.dtype.itemsize == 2 else x.dtype
    xw, dyw = x.astype(work), dy.astype(work)
    mean = xw.mean(axis=-1, keepdims=True)
    xhat = (xw - mean) / np.sqrt(((xw - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    return dx, (dyw * xhat).sum(axis=0).astype(x.dtype), dyw.sum(axis=0).astype(x.dtype)


def torch_layer_norm():
    """PyTorch's LayerNorm wrapped for :func:`check_layer_norm`: ``(forward, backward)``, or None without PyTorch.

    16-bit inputs get float32 gamma and beta, as mixed-precision training keeps
    its parameters; then PyTorch's CPU kernel also keeps mean and rstd in float32.
    bfloat16 arrays cross to PyTorch through float32 (exactly).
    """
    try:
        import torch
    except ImportError:
        return None

    def tensor(a, *, param=False):
        if param and a.dtype.itemsize == 2:
            return torch.from_numpy(a.astype(np.float32))
        if a.dtype == np.dtype("bfloat16"):
            return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
        return torch.from_numpy(np.ascontiguousarray(a))

    def array(t, dtype):
        return t.detach().float().numpy().astype(dtype) if t.dtype == torch.bfloat16 else t.detach().numpy().astype(dtype)

    def forward(x, gamma, beta, eps):
        y = torch.nn.functional.layer_norm(tensor(x), gamma.shape, tensor(gamma, param=True), tensor(beta, param=True), eps)
        return array(y, x.dtype)

    def backward(dy, x, gamma, eps):
        tx, tg = tensor(x).requires_grad_(), tensor(gamma, param=True).requires_grad_()
        tb = torch.zeros_like(tg, requires_grad=True)
        torch.nn.functional.layer_norm(tx, gamma.shape, tg, tb, eps).backward(tensor(dy))
        return tuple(array(t.grad, x.dtype) for t in (tx, tg, tb))

    return forward, backward
