r"""Check your own LayerNorm against lnlib's float64 reference (chapter "Check your own LayerNorm").

:func:`check_layer_norm` runs a forward function (and optionally a backward
function) on seeded inputs of several shapes, in several dtypes, including the
edge cases where implementations break: constant rows, large offsets (up to
3·10⁴ in every dtype, 10⁶ in float32 and float64), a wide or tiny spread,
H = 1, odd H and H that is not a multiple of a vector width (7, 33, 100, 200,
1030), H above 1024 (LLaMA's 4096), a second ε (0.1), 4096 rows with dy = 1 in
float16 and bfloat16 (more than a 16-bit running sum of dβ can count),
and memory layouts a
kernel may not expect (transposed, rows sliced out of a wider buffer, every
second element, negative strides; see :data:`LAYOUTS`). It checks that the call
leaves x, γ and β (and dy) unchanged. Each output is compared, entry by entry,
with lnlib's LayerNorm computed in float64 *on the same rounded inputs*,
against an error budget derived in the chapter "Computing it right: numerics":

- the statistics, accumulated with unit roundoff :math:`u_\text{acc}` (float32's
  for 16-bit data, as PyTorch's CPU and CUDA kernels accumulate; the
  data's own otherwise), are off by at most about :math:`H u_\text{acc}` relative
  (the bound of a recursive sum of H terms), and the mean's error
  :math:`u_\text{acc}|\mu|` moves every :math:`\hat x` by :math:`u_\text{acc}\kappa`
  with :math:`\kappa = |\mu| / \sqrt{\sigma^2 + \varepsilon}`; so
  :math:`|\Delta \hat x| \le H u_\text{acc} (1 + \kappa)(1 + |\hat x|)`;
- rounding :math:`\gamma \hat x` and the sum with :math:`\beta` to the output
  dtype adds :math:`2 u_\text{out} (|\gamma \hat x| + |\beta|)`;
- the backward pass's dγ and dβ are sums over the M = B·T rows, accumulated
  with :math:`u_\text{acc}`: :math:`M u_\text{acc}` relative to the sum of the
  terms' magnitudes, then the rounding to the output dtype. Nothing is allowed for
  a sum kept in a 16-bit storage dtype: it stalls (a float16 running sum of ones
  stops at 2048, chapter "Computing it right: numerics"), and PyTorch 2.13's
  CPU kernel, which sums that way, fails the 16-bit backward checks.

A budget of whole ulps admits a rounding that is always off in the same
direction (a bfloat16 cast by truncation stays within it), so the forward
outputs of each dtype are also pooled into one "rounding bias" check of the
mean signed error (see :func:`rounding_bias`).

A correct implementation stays inside the budget everywhere; the bugs the
chapter plants (:mod:`lnlib.variants`' ``buggy_*``: unbiased variance, ε outside
the root, statistics in half precision, a wrong axis, a wrong dγ reduction, dγ and
dβ summed in the storage dtype) and
those of real kernels (a skipped vector tail, statistics over the first 1024
features only, clamped inputs, an ignored ε, a C-contiguity assumption, an input
overwritten in place, a truncating bfloat16 cast, a one-pass variance) leave it,
in the default run.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
import warnings
from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np

from .backward import layer_norm_backward
from .forward import layer_norm
from .norms import rms_norm
from .rms import rms_norm_backward
from .validation import check_count, check_eps, compute_dtype, float_info
from .variance_algorithms import unit_roundoff

__all__ = [
    "CASES",
    "DTYPES",
    "LAYOUTS",
    "Case",
    "CheckResult",
    "CheckReport",
    "check_layer_norm",
    "check_rms_norm",
    "harness_inputs",
    "rounding_bias",
    "unit_roundoff",
    "welford_layer_norm",
    "torch_layer_norm",
    "torch_function",
    "torch_module",
    "torch_rms_norm",
]  # the chapter's planted bugs (buggy_*) are in lnlib.variants

#: The width the report's lines keep to (the book's code column).
REPORT_WIDTH = 80

#: The dtypes :func:`check_layer_norm` tries by default.
DTYPES = ("float64", "float32", "float16", "bfloat16")
#: The parameters `param_dtype` widens (check_layer_norm), and whose gradients it expects in it.
PARAMS = ("gamma", "beta")
_OWNER = {"x": "the input's", "gamma": "gamma's"}  # whose dtype a result must have


#: The memory layouts :class:`Case` can give x and dy, each a view holding the same values:
#: "contiguous" (C order), "transposed" (the axes reversed in memory: Fortran order), "sliced"
#: (each row the start of a wider row, as a slice of a fused QKV buffer), "strided" (every second
#: element) and "reversed" (negative strides on every axis). The gaps of "sliced" and "strided"
#: hold NaN.
LAYOUTS = ("contiguous", "transposed", "sliced", "strided", "reversed")


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
    layout : str, default "contiguous"
        How x and dy lie in memory, one of :data:`LAYOUTS`.
    eps : float, optional
        The ε this case runs with; None (default) takes :func:`check_layer_norm`'s.
    dtypes : tuple of str, optional
        The only dtypes this case runs in (for values another dtype cannot hold); None: all.
    dy : float, optional
        The upstream gradient, this value in every entry: with dy = 1, dβ counts the rows, and a
        sum kept in a 16-bit dtype stalls (float16's at 2048; chapter "Computing it right:
        numerics"). None (default): N(0, 1) entries.
    """

    name: str
    shape: tuple
    offset: float = 0.0
    spread: float = 1.0
    layout: str = "contiguous"
    eps: float | None = None
    dtypes: tuple | None = None
    dy: float | None = None

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}; got {self.layout!r}.")
        if self.eps is not None:
            check_eps(self.eps)

    def make(self, rng: np.random.Generator) -> np.ndarray:
        """The input in float64, before it is rounded to the dtype under test."""
        noise = rng.normal(size=self.shape) if self.spread else np.zeros(self.shape)
        return self.offset + self.spread * noise

    def lay_out(self, array: np.ndarray) -> np.ndarray:
        """A new array with the values of `array` in this case's :attr:`layout` (a view, fresh
        memory)."""
        array = np.asarray(array)
        if self.layout == "contiguous":  # always a copy: the implementation may write to it
            return np.array(array, order="C", copy=True)
        if self.layout == "transposed":
            return np.array(array.T, order="C", copy=True).T
        if self.layout == "reversed":
            flip = (slice(None, None, -1),) * array.ndim
            return np.array(array[flip], order="C", copy=True)[flip]
        size = array.shape[-1]
        wide = array.shape[:-1] + ((size + 3) if self.layout == "sliced" else 2 * size,)
        buffer = np.full(wide, np.nan, dtype=array.dtype)
        view = buffer[..., :size] if self.layout == "sliced" else buffer[..., ::2]
        view[...] = array
        return view


#: The default inputs: ordinary data and the edge cases where implementations break (a few seconds).
CASES = (
    Case("random (4, 3, 64)", (4, 3, 64)),
    Case("offset 1000 (8, 32)", (8, 32), offset=1000.0),
    Case("spread 300 (8, 64)", (8, 64), spread=300.0),
    Case("tiny spread (8, 64)", (8, 64), offset=1.0, spread=0.01),
    Case("constant rows (4, 16)", (4, 16), offset=3.0, spread=0.0),
    Case("H = 1 (6, 1)", (6, 1)),
    Case("H = 7, sliced (257, 7)", (257, 7), offset=-2.0, layout="sliced"),
    Case("H = 100, strided (16, 100)", (16, 100), spread=3.0, layout="strided"),
    Case("H = 4096, transposed (4, 4096)", (4, 4096), offset=0.5, layout="transposed"),
    Case("H = 1030, reversed (3, 1030)", (3, 1030), spread=2.0, layout="reversed"),
    Case("offset 30000, reversed (8, 96)", (8, 96), offset=3e4, spread=10.0, layout="reversed"),
    Case("offset 1e6 (8, 200)", (8, 200), offset=1e6, spread=1e3, dtypes=("float64", "float32")),
    Case("eps 0.1, transposed (6, 33)", (6, 33), spread=0.5, layout="transposed", eps=0.1),
    Case("dy = 1, 4096 rows (4096, 8)", (4096, 8), dy=1.0, dtypes=("float16", "bfloat16")),
)


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
    undefined : str
        Why the check was not run: lnlib's float64 reference is undefined on this input
        (eps = 0 on a constant row, or an all-zero row for RMS norm), so nothing is
        charged to the implementation; empty when it ran.
    """

    part: str
    case: str
    dtype: str
    ratio: float
    detail: str = ""
    undefined: str = ""

    @property
    def passed(self) -> bool:
        return self.ratio <= 1.0


@dataclass(frozen=True)
class CheckReport:
    """Every :class:`CheckResult` of one :func:`check_layer_norm` or :func:`check_rms_norm` run;
    printing it gives the table. `hint`, its lines under the first when not empty, names the known
    causes that account for its failures: a float32 weight's type promotion (under
    ``param_dtype="float32"``), x̂ rounded before γ (``cast_before_gamma=True`` passes all the
    other 16-bit failures), float64 computed in float32."""

    results: tuple
    dtypes: tuple
    eps: float
    norm: str = "LayerNorm"
    hint: str = ""

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> list:
        """The checks that failed, in the order they ran."""
        return [r for r in self.results if not r.passed]

    @property
    def undefined(self) -> list:
        """The checks not run because the reference is undefined there (each says why)."""
        return [r for r in self.results if r.undefined]

    @property
    def summary(self) -> str:
        """The table's first line: how many checks passed ("LayerNorm check, eps=1e-05: 106 of 106
        checks passed")."""
        ran = len(self.results) - len(self.undefined)
        undefined = (
            f", {len(self.undefined)} not run (reference undefined)" if self.undefined else ""
        )
        return (
            f"{self.norm} check, eps={self.eps:g}: {ran - len(self.failures)} of {ran} checks "
            f"passed{undefined}"
        )

    def __str__(self) -> str:
        rows = list(dict.fromkeys((r.part, r.case) for r in self.results))
        cell = {(r.part, r.case, r.dtype): r for r in self.results}
        width = max(len(f"{p:<8} {c}") for p, c in rows)
        lines = [self.summary]
        for hint in self.hint.splitlines():  # first, where a reader looks (learner B)
            lines += textwrap.wrap(hint, REPORT_WIDTH)
        lines.append(f"{'':<{width}}" + "".join(f"{d:>10}" for d in self.dtypes))
        for part, case in rows:
            marks = [_mark(cell.get((part, case, d))) for d in self.dtypes]
            lines.append(f"{f'{part:<8} {case}':<{width}}" + "".join(f"{m:>10}" for m in marks))
        lines += [
            "ok: within the error budget; ×k: k times over it;",
            "-: not run (the case is limited to other dtypes: Case.dtypes);",
            *(["n/a: the reference is undefined (see .undefined);"] if self.undefined else []),
            "NaN, shape, dtype, error, overwrote: see .failures",
        ]
        explained = [r for r in self.failures if r.detail]  # a stored report keeps no details
        for r in explained[:6]:
            lines.append(f"  {r.part} / {r.case} / {r.dtype}:")
            lines += textwrap.wrap(
                r.detail, REPORT_WIDTH, initial_indent="    ", subsequent_indent="      "
            )
        if len(explained) > 6:
            lines.append(f"  ... and {len(explained) - 6} more in .failures")
        for reason in dict.fromkeys(r.undefined for r in self.undefined):
            lines += textwrap.wrap(
                f"undefined: {reason}", REPORT_WIDTH, initial_indent="  ", subsequent_indent="    "
            )
        return "\n".join(lines)

    __repr__ = __str__


def _mark(result: CheckResult | None) -> str:
    if result is None:
        return "-"
    if result.undefined:
        return "n/a"
    if result.passed:
        return "ok"
    if np.isfinite(result.ratio):
        return f"×{result.ratio:#.3g}"  # "×1.02", never a bare "×1" that reads as within budget
    return result.detail.split(":")[0]


def check_layer_norm(
    forward: Callable,
    backward: Callable | None = None,
    *,
    dtypes=DTYPES,
    cases=CASES,
    eps: float = 1e-5,
    normalized_ndim: int = 1,
    seed: int = 0,
    param_dtype: str | None = None,
    cast_before_gamma: bool = False,
) -> CheckReport:
    r"""Run a LayerNorm implementation against lnlib's float64 reference and report, per case and
    dtype (chapter "Check your own LayerNorm").

    Parameters
    ----------
    forward : callable
        ``forward(x, gamma, beta, eps) -> y``: numpy arrays in the dtype under
        test (bfloat16 is ``ml_dtypes.bfloat16``), normalizing the trailing
        `normalized_ndim` axes (gamma and beta have their shape). It must
        return an array of the shape and dtype of `x`.
        A forward that saves statistics for its backward pass returns them after y,
        ``(y, *saved)`` (e.g. ``(y, mean, rstd)``, as PyTorch's ``native_layer_norm``).
    backward : callable, optional
        ``backward(dy, x, gamma, eps, *saved) -> (dx, dgamma, dbeta)``, in the dtype
        of `x`; dgamma and dbeta sum over every other axis (all B·T tokens).
        ``saved`` is what `forward` returned after y on the same inputs (nothing
        when it returns y alone), so a kernel that saves the wrong statistic, or
        rounds it, fails here.
    dtypes : sequence of str, default ("float64", "float32", "float16", "bfloat16")
    cases : sequence of Case, default :data:`CASES`
    eps : float, default 1e-5
    normalized_ndim : int, default 1
        How many trailing axes share one mean and variance (PyTorch's
        ``len(normalized_shape)``).
    seed : int, default 0
        Seeds the inputs, gamma, beta and dy.
    param_dtype : {None, "float32"}, default None
        None: gamma and beta come in the dtype of `x`, and dgamma and dbeta are expected in
        it. "float32": mixed precision as training keeps it (chapter "Computing it right:
        numerics"): for 16-bit `x`, gamma and beta come as float32 and dgamma and dbeta are
        expected as float32, within float32's budget for the sum over the rows; other dtypes
        are unchanged.
    cast_before_gamma : bool, default False
        False: the budget of a kernel that rounds once, at its outputs. True: it also allows
        one rounding to the dtype of `x` of :math:`\hat x` before γ multiplies it, and of
        :math:`\gamma\, dy` and :math:`dy\, \hat x` in the backward pass, as PyTorch's eager
        code does when it casts :math:`\hat x` back before γ (Hugging Face's
        ``weight * hidden_states.to(input_dtype)``); such an ordering fails the default budget
        in 16 bits (chapter "Check your own LayerNorm", § "Hugging Face's ordering"). The
        pooled rounding-bias check is not made then: each output is rounded twice.

    Returns
    -------
    CheckReport
        ``print(report)`` shows the table; ``report.passed`` is True when
        every check passed; ``report.failures`` lists the others;
        ``report.undefined`` the checks not run because the reference itself is
        undefined there (eps = 0 on a constant row, H = 1 included), with the reason.

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
    return _check_all(
        "LayerNorm",
        (forward, _check_forward, "forward(x, gamma, beta, eps)"),
        (backward, _check_backward, "backward(dy, x, gamma, eps)"),
        dtypes=dtypes,
        cases=cases,
        eps=eps,
        normalized_ndim=normalized_ndim,
        seed=seed,
        param_dtype=param_dtype,
        cast_before_gamma=cast_before_gamma,
    )


#: The inputs :func:`check_rms_norm` adds to :data:`CASES`: rows of zeros, RMS norm's edge (the
#: divisor is sqrt(eps) alone; with eps = 0 the reference is undefined and the case is not run).
RMS_CASES = (*CASES, Case("all-zero rows (4, 16)", (4, 16), spread=0.0))


def check_rms_norm(
    forward: Callable,
    backward: Callable | None = None,
    *,
    dtypes=DTYPES,
    cases=RMS_CASES,
    eps: float = 1e-6,
    normalized_ndim: int = 1,
    seed: int = 0,
    param_dtype: str | None = None,
    cast_before_gamma: bool = False,
) -> CheckReport:
    r"""Run an RMSNorm implementation against lnlib's float64 reference, per case and dtype
    (chapters "LayerNorm and its family", "Check your own LayerNorm").

    The reference is :func:`~lnlib.norms.rms_norm` and :func:`~lnlib.rms.rms_norm_backward`
    in float64 on the same rounded inputs; the budget is :func:`check_layer_norm`'s without
    the mean's terms (no mean, so no cancellation): the mean square's relative error of
    about :math:`H u_\text{acc}`, the output's rounding, and dγ's sum over the rows.

    Parameters
    ----------
    forward : callable
        ``forward(x, gamma, eps) -> y``, or ``(y, *saved)`` when it saves statistics for
        its backward pass (e.g. ``(y, rstd)`` with ``rstd = 1 / sqrt(mean(x**2) + eps)``),
        normalizing the trailing `normalized_ndim` axes; y of the shape and dtype of `x`.
    backward : callable, optional
        ``backward(dy, x, gamma, eps, *saved) -> (dx, dgamma)`` in the dtype of `x`, dgamma
        summed over every other axis; ``saved`` is what `forward` returned after y on the
        same inputs (nothing when it returns y alone).
    dtypes, normalized_ndim, seed, param_dtype, cast_before_gamma
        As in :func:`check_layer_norm`.
    cases : sequence of Case, default :data:`RMS_CASES`
    eps : float, default 1e-6
        As :func:`~lnlib.norms.rms_norm`'s default.

    Returns
    -------
    CheckReport
        As from :func:`check_layer_norm`; with ``eps=0`` the all-zero rows are in
        ``report.undefined``.

    Raises
    ------
    TypeError
        If `forward` or `backward` is not callable.
    ValueError
        For an unknown dtype, a bad eps, or a `normalized_ndim` larger than a case's number of axes.

    Examples
    --------
    >>> import numpy as np
    >>> def mine(x, gamma, eps):
    ...     return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * gamma
    >>> check_rms_norm(mine, dtypes=("float64",)).passed
    True
    """
    return _check_all(
        "RMSNorm",
        (forward, _check_rms_forward, "forward(x, gamma, eps)"),
        (backward, _check_rms_backward, "backward(dy, x, gamma, eps)"),
        dtypes=dtypes,
        cases=cases,
        eps=eps,
        normalized_ndim=normalized_ndim,
        seed=seed,
        param_dtype=param_dtype,
        cast_before_gamma=cast_before_gamma,
    )


def _check_all(
    norm: str,
    forward: tuple,
    backward: tuple,
    *,
    dtypes,
    cases,
    eps,
    normalized_ndim,
    seed,
    param_dtype,
    cast_before_gamma,
):
    """The run both checks share: `forward` and `backward` are (function, checker, signature)."""
    for (function, _, signature), name in ((forward, "forward"), (backward, "backward")):
        if function is not None and not callable(function):
            raise TypeError(f"{name} must be a function such as {signature}; got {function!r}.")
    eps = check_eps(eps)
    normalized_ndim = check_count(normalized_ndim, "normalized_ndim")
    dtypes = tuple(compute_dtype(np.float64, d).name for d in dtypes)
    results, samples = [], {d: [] for d in dtypes}
    for (case, dtype), inputs in harness_inputs(
        dtypes=dtypes,
        cases=cases,
        normalized_ndim=normalized_ndim,
        seed=seed,
        param_dtype=param_dtype,
        weight_offset=getattr(forward[0], "weight_offset", 0.0),  # set by torch_module
    ).items():
        args = (case, inputs, eps if case.eps is None else case.eps, normalized_ndim)
        cast = {"cast_before_gamma": bool(cast_before_gamma)}
        saved = []  # what the forward saved for its backward, filled by the forward's check
        results.append(
            _run(
                "forward",
                case,
                dtype,
                lambda: forward[1](forward[0], *args, samples[dtype], saved, **cast),
            )
        )
        if backward[0] is not None:
            results.append(
                _run(
                    "backward",
                    case,
                    dtype,
                    lambda: backward[1](backward[0], *args, tuple(saved), **cast),
                )
            )
    for dtype in dtypes:  # one pooled bias check per dtype, where the final rounding dominates
        pooled = [np.concatenate(parts) for parts in zip(*samples[dtype])]
        if pooled and len(pooled[0]):
            results.append(CheckResult("forward", BIAS, dtype, *rounding_bias(*pooled)))
    report = CheckReport(tuple(results), dtypes, eps, norm)
    options = {
        "eps": eps,
        "normalized_ndim": normalized_ndim,
        "seed": seed,
        "param_dtype": param_dtype,
        "cast_before_gamma": cast_before_gamma,
    }
    half = [r for r in report.failures if r.dtype in HALF and r.case != BIAS]
    promoted = [r for r in half if _promoted(r, param_dtype)]
    values = [r for r in half if r not in promoted]
    hints = [_promotion_hint(promoted)] if promoted else []
    if values and not cast_before_gamma:
        if _pass_again(
            norm, forward, backward, values, cases, options | {"cast_before_gamma": True}
        ):
            hints.append(_cast_hint(values))
    wide = [r for r in report.failures if r.dtype == "float64"]
    if wide and all(_within_float32(r) for r in wide):
        hints.append(_float32_hint(len(wide)))
    narrow = [r for r in report.failures if r.dtype != "float64" and r.case != BIAS]
    offset = getattr(forward[0], "with_offset", None)  # torch_module's, for weight_offset=0 only
    if narrow and offset is not None:
        forward_1, backward_1 = offset(1.0)
        forward_1 = (forward_1, *forward[1:])
        backward_1 = (backward_1 if backward[0] is not None else None, *backward[1:])
        if _pass_again(norm, forward_1, backward_1, narrow, cases, options):
            hints.append(_offset_hint(len(narrow)))
    return dataclasses.replace(report, hint="\n".join(hints)) if hints else report


def _pass_again(norm, forward, backward, failed: list, cases, options: dict) -> bool:
    """Whether every check in `failed` passes when its case and dtype run again with `forward`,
    `backward` and `options` (a hint's test: does this change explain the failures?)."""
    again = _check_all(
        norm,
        forward,
        backward,
        dtypes=tuple(dict.fromkeys(r.dtype for r in failed)),
        cases=tuple(c for c in cases if c.name in {r.case for r in failed}),
        **options,
    )
    passing = {(r.part, r.case, r.dtype) for r in again.results if r.passed}
    return all((r.part, r.case, r.dtype) in passing for r in failed)


def _offset_hint(count: int) -> str:
    """The report's hint when `count` failures in float32 and 16 bits pass with the module's weight
    set to gamma - 1 (a gain of 1 + weight, as Gemma's)."""
    return (
        f"hint: {count} failed checks in float32 and 16 bits pass with the module's weight set "
        "to gamma - 1: if its gain is 1 + weight, as Gemma's RMSNorm's is, run it with "
        "torch_module(make_norm, weight_offset=1.0)."
    )


#: float32's unit roundoff over float64's, 2**29: how far over float64's budget code that computes
#: in float32 can be while within float32's.
FLOAT32_OVER_FLOAT64 = 2.0**29


def _within_float32(result: CheckResult) -> bool:
    """Whether a float64 value failure is no larger than float32's rounding would make it."""
    return (
        bool(result.detail)
        and result.detail.split(":")[0] not in ("dtype", "shape", "NaN")
        and (1.0 < result.ratio <= FLOAT32_OVER_FLOAT64)
    )


def _float32_hint(count: int) -> str:
    """The report's hint when each float64 failure is within :data:`FLOAT32_OVER_FLOAT64`."""
    return (
        f"hint: {count} failed checks in float64 are each within 2^29 times its budget, float32's "
        "rounding over float64's: what code that computes in float32 gives (Hugging Face's "
        "RMSNorm does). If yours does, check it in the dtypes it computes in, "
        'dtypes=("float32", "float16", "bfloat16").'
    )


#: The 16-bit dtypes, where a kernel that casts x̂ before γ rounds what a fused kernel keeps.
HALF = ("float16", "bfloat16")


def _cast_hint(failed: list) -> str:
    """The report's hint when the 16-bit failures `failed`, all but a float32 weight's promotions,
    pass with ``cast_before_gamma=True``."""
    return (
        f"hint: {len(failed)} failed checks in {_dtypes_of(failed)} pass with "
        "cast_before_gamma=True. If your code rounds x-hat to the input's dtype before gamma "
        "(as Hugging Face's weight * hidden_states.to(input_dtype) does), run it so; see chapter "
        '"Check your own LayerNorm", section "Hugging Face\'s ordering".'
    )


def _dtypes_of(failed: list) -> str:
    """The dtypes of the results `failed`, in the order they failed: ``"float16 and bfloat16"``."""
    names = list(dict.fromkeys(r.dtype for r in failed))
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _promoted(result: CheckResult, param_dtype: str | None) -> bool:
    """Whether `result` failed only because a 16-bit result came back float32 under
    ``param_dtype="float32"``: type promotion by a float32 weight, not a wrong number."""
    return (
        param_dtype == "float32"
        and result.detail.startswith("dtype:")
        and " is float32, " in result.detail
    )


def _promotion_hint(failed: list) -> str:
    """The report's hint when the 16-bit failures `failed` are float32 promotion
    (:func:`_promoted`)."""
    return (
        f"hint: {len(failed)} failed checks in {_dtypes_of(failed)} are a result returned in "
        "float32, as type promotion gives a 16-bit tensor times a float32 weight "
        '(param_dtype="float32"; Hugging Face\'s RMSNorm with float32 weights does this). The '
        "check wants the input's dtype, as PyTorch's F.layer_norm and F.rms_norm return it, and "
        "did not judge those values: to judge them, run the check again with param_dtype=None "
        "(the weight in the input's dtype), or, for a PyTorch module, with "
        "torch_module(..., cast_output=True) (the output as the next layer sees it)."
    )


def harness_inputs(
    *,
    dtypes=DTYPES,
    cases=CASES,
    normalized_ndim: int = 1,
    seed: int = 0,
    param_dtype: str | None = None,
    weight_offset: float = 0.0,
) -> dict:
    """The inputs :func:`check_layer_norm` gives an implementation (chapter "Check your own
    LayerNorm").

    `weight_offset`, for a module whose gain is ``weight_offset + weight`` (Gemma's ``1 +
    weight``; :func:`torch_module`), moves each float32 or float64 gamma to the nearest one whose
    ``gamma - weight_offset`` float32 holds exactly (:func:`_offset_gain`): a module that forms
    its gain in float32 then has the reference's gain.

    Returns
    -------
    dict
        ``{(case, dtype): {"x", "gamma", "beta", "dy": array}}`` in the order the checks run, each
        array rounded to `dtype` (gamma and beta to float32 for 16-bit `dtype` when `param_dtype`
        is "float32", as in :func:`check_layer_norm`); the same seed gives bit-identical inputs.

    Raises
    ------
    ValueError
        For an unknown dtype, or a `normalized_ndim` larger than a case's number of axes.
    """
    normalized_ndim = check_count(normalized_ndim, "normalized_ndim")
    dtypes = tuple(compute_dtype(np.float64, d).name for d in dtypes)
    if param_dtype not in (None, "float32"):
        raise ValueError(f'param_dtype must be None or "float32"; got {param_dtype!r}.')
    inputs = {}
    for index, case in enumerate(cases):
        if len(case.shape) < normalized_ndim:
            raise ValueError(
                f"case {case.name!r} has shape {case.shape}, fewer axes than "
                f"normalized_ndim={normalized_ndim}."
            )
        for dtype in dtypes:
            if case.dtypes is None or dtype in case.dtypes:
                rng = np.random.default_rng([seed, index])
                drawn = _inputs(case, dtype, normalized_ndim, rng, param_dtype)
                if weight_offset:
                    drawn["gamma"] = _offset_gain(drawn["gamma"], weight_offset)
                inputs[case, dtype] = drawn
    return inputs


def _offset_gain(gamma: np.ndarray, offset: float) -> np.ndarray:
    """`gamma` moved, in its dtype, to values whose ``gamma - offset`` float32 holds exactly: the
    gains a module that forms ``offset + weight`` in float32 (Gemma's ``1 + weight.float()``)
    holds exactly. A 16-bit gamma never moves (float32 holds each ``gamma - offset``), so a module
    that forms the sum in 16 bits still rounds it, and fails where a gain is near 0."""
    wide = np.float64
    held = (gamma.astype(wide) - offset).astype(np.float32).astype(wide)  # the weight, exact
    moved = (held + offset).astype(gamma.dtype)
    if not np.array_equal(moved.astype(wide) - offset, held):
        raise ValueError(f"weight_offset={offset!r} leaves gains its weight cannot hold exactly.")
    return moved


def _inputs(
    case: Case, dtype: str, k: int, rng: np.random.Generator, param_dtype: str | None = None
) -> dict:
    """x, gamma, beta and dy rounded to `dtype` (gamma and beta to float32 for 16-bit data when
    `param_dtype` is "float32"): what the implementation receives and the reference uses.

    x and dy are laid out as the case says; gamma and beta are contiguous vectors.
    """
    storage = compute_dtype(np.float64, dtype)
    feature = case.shape[-k:]
    raw = {
        "x": case.make(rng),
        "gamma": 1 + 0.5 * rng.normal(size=feature),
        "beta": 0.5 * rng.normal(size=feature),
        "dy": rng.normal(size=case.shape) if case.dy is None else np.full(case.shape, case.dy),
    }
    wide = param_dtype is not None and storage.itemsize < 4
    kept = {name: np.dtype(param_dtype) if wide and name in PARAMS else storage for name in raw}
    with np.errstate(over="ignore"):
        rounded = {name: value.astype(kept[name]) for name, value in raw.items()}
    for name, value in rounded.items():
        if not np.isfinite(value.astype(np.float64)).all():
            raise ValueError(
                f"case {case.name!r} has {name} values that {dtype} cannot hold; "
                f"limit it with Case(..., dtypes=...)."
            )
    return {name: case.lay_out(v) if name in ("x", "dy") else v for name, v in rounded.items()}


#: The inputs a case lays out in memory (:attr:`Case.layout`): the activations and their gradients,
#: and a fused add's stream, sum and the stream's gradient (:mod:`lnlib.harness_add`).
LAID_OUT = ("x", "dy", "residual", "s", "ds")


def _fresh(case: Case, inputs: dict, names) -> dict:
    """New copies of the inputs `names`, in the case's layout: what one call of the implementation
    gets."""
    return {
        name: case.lay_out(inputs[name]) if name in LAID_OUT else inputs[name].copy()
        for name in names
    }


def _overwritten(given: dict, inputs: dict) -> str:
    """Which inputs the implementation changed, as a report detail; empty when it left them
    alone."""
    changed = []
    for name, value in given.items():
        differ = int((value.astype(np.float64) != inputs[name].astype(np.float64)).sum())
        if differ:
            changed.append(f"{name} ({differ} of {value.size} entries)")
    if not changed:
        return ""
    return (
        f"overwrote: the call changed its input {', '.join(changed)}; the check needs its "
        "inputs intact (the residual stream reads x again): wrap a kernel that works in place "
        "to copy its inputs first"
    )


class _Undefined(Exception):
    """lnlib's float64 reference refuses the harness's own input: the check is not run, with the
    reason."""


def _reference(function: Callable, *args, **kwargs):
    """Call lnlib's reference; its ValueError on a valid input (a zero divisor with eps = 0) becomes
    :class:`_Undefined`."""
    try:
        return function(*args, **kwargs)
    except ValueError as exc:
        raise _Undefined(f"the float64 reference is undefined here: {exc}") from None


def _run(part: str, case: Case, dtype: str, compare: Callable) -> CheckResult:
    try:
        ratio, detail = compare()
    except _Undefined as exc:
        return CheckResult(part, case.name, dtype, 0.0, undefined=str(exc))
    except (
        Exception
    ) as exc:  # the implementation under test may raise anything: report it, never crash the table
        ratio, detail = float("inf"), f"error: {type(exc).__name__}: {exc}"
    return CheckResult(part, case.name, dtype, ratio, detail)


def _call(function: Callable, case: Case, inputs: dict, names: tuple, *extra):
    """Call the implementation on fresh copies of the inputs `names` (then `extra`): its result, and
    what it overwrote."""
    given = _fresh(case, inputs, names)
    got = function(*given.values(), *extra)
    return got, _overwritten(given, inputs)


def _compare_forward(
    forward: Callable, case, inputs, names, eps, y_ref, budgets, sample, saved
) -> tuple[float, str]:
    """Run `forward`, keep what it saved (``(y, *saved)``) in `saved`, compare y; `budgets` is
    (whole, arithmetic's part)."""
    got, overwritten = _call(forward, case, inputs, names, eps)
    if overwritten:
        return float("inf"), overwritten
    if isinstance(got, tuple):
        got, *saved[:] = got
    dtype = inputs["x"].dtype
    ratio, detail = _compare("y", got, y_ref, budgets[0], dtype)
    if np.isfinite(ratio):
        values = np.asarray(got).astype(np.float64)
        sample.append(_rounding_sample(values, y_ref, budgets[1], dtype))
    return ratio, detail


def _compare_gradients(
    backward: Callable, case, inputs, args, refs: dict, budgets, names=("dy", "x", "gamma")
) -> tuple[float, str]:
    """Run `backward` on fresh copies of the inputs `names` and `args` (eps, saved statistics)
    and compare each gradient in `refs`."""
    got, overwritten = _call(backward, case, inputs, names, *args)
    if overwritten:
        return float("inf"), overwritten
    if not isinstance(got, (tuple, list)) or len(got) != len(refs):
        names = ", ".join(refs)
        return float("inf"), f"shape: backward must return the {len(refs)} arrays ({names})"
    worst = (0.0, "")
    for (name, ref), g, budget in zip(refs.items(), got, budgets):
        whose = "gamma" if name in ("dgamma", "dbeta") else "x"  # a gradient in its input's dtype
        compared = _compare(name, g, ref, budget, inputs[whose].dtype, whose)
        worst = max(worst, compared, key=lambda r: r[0])
    return worst


def _check_forward(forward, case, inputs, eps, k, sample, saved, *, cast_before_gamma=False):
    axes = tuple(range(inputs["x"].ndim - k, inputs["x"].ndim))
    wide = {name: v.astype(np.float64) for name, v in inputs.items()}
    y_ref, mean, rstd = _reference(
        layer_norm, wide["x"], wide["gamma"], wide["beta"], eps=eps, axis=axes, return_stats=True
    )
    xhat = (wide["x"] - mean) * rstd
    dtype = inputs["x"].dtype
    u_out, u_acc = unit_roundoff(dtype), _accumulation_roundoff(dtype)
    size = int(np.prod(inputs["x"].shape[-k:]))
    dxhat = size * u_acc * (1 + np.abs(mean) * rstd) * (1 + np.abs(xhat))
    u_cast = _cast_roundoff(dtype, cast_before_gamma)
    arithmetic = np.abs(wide["gamma"]) * (dxhat + u_cast * np.abs(xhat))
    budget = arithmetic + 2 * u_out * (np.abs(wide["gamma"] * xhat) + np.abs(wide["beta"]))
    return _compare_forward(
        forward,
        case,
        inputs,
        ("x", "gamma", "beta"),
        eps,
        y_ref,
        (budget, arithmetic),
        sample,
        saved,
    )


def _check_backward(backward, case, inputs, eps, k, saved, *, cast_before_gamma=False):
    axes = tuple(range(inputs["x"].ndim - k, inputs["x"].ndim))
    others = tuple(range(inputs["x"].ndim - k))
    wide = {name: v.astype(np.float64) for name, v in inputs.items()}
    _, mean, rstd = _reference(layer_norm, wide["x"], eps=eps, axis=axes, return_stats=True)
    refs = layer_norm_backward(wide["dy"], wide["x"], wide["gamma"], eps=eps, axis=axes)
    xhat = (wide["x"] - mean) * rstd
    dtype, params = inputs["x"].dtype, inputs["gamma"].dtype
    u_out, u_acc = unit_roundoff(dtype), _accumulation_roundoff(dtype)
    size, rows = int(np.prod(inputs["x"].shape[-k:])), int(np.prod(inputs["x"].shape[:-k]))
    xhat_error = (
        size * u_acc * (2 + np.abs(mean) * rstd) * (1 + np.abs(xhat))
    )  # of x-hat, and relative of the two means
    dxhat = np.abs(wide["dy"] * wide["gamma"])
    terms = rstd * (
        dxhat
        + dxhat.mean(axis=axes, keepdims=True)
        + np.abs(xhat) * (dxhat * np.abs(xhat)).mean(axis=axes, keepdims=True)
    )
    u_cast = _cast_roundoff(dtype, cast_before_gamma)
    budgets = (
        (xhat_error + u_cast) * terms + 2 * u_out * np.abs(refs[0]),
        _dgamma_budget(wide["dy"], xhat, xhat_error, refs[1], rows, params, others, u_cast),
        _sum_budget(np.abs(wide["dy"]), refs[2], rows, params, others),
    )
    return _compare_gradients(
        backward, case, inputs, (eps, *saved), dict(zip(("dx", "dgamma", "dbeta"), refs)), budgets
    )


def _sum_budget(terms, ref, rows: int, dtype, others) -> np.ndarray:
    """A sum over the M rows of terms of size `terms`, accumulated with float32's roundoff for
    16-bit data (M u_acc relative, a recursive sum's bound), then rounded to the storage dtype.

    No M u_out term: a dγ or dβ summed in the 16-bit storage dtype is a bug (chapter "Computing it
    right: numerics"), and the case of 4096 rows with dy = 1 shows it."""
    u_out, u_acc = unit_roundoff(dtype), _accumulation_roundoff(dtype)
    return rows * u_acc * terms.sum(axis=others) + 2 * u_out * np.abs(ref)


def _dgamma_budget(
    dy, xhat, xhat_error, ref, rows: int, dtype, others, u_cast: float = 0.0
) -> np.ndarray:
    """dγ = Σ dy·x̂ over the M rows: x̂'s error in each term (and, with `u_cast`, the roundings of x̂
    and of dy·x̂ to the input's dtype: see :func:`_cast_roundoff`), then :func:`_sum_budget`."""
    error = (np.abs(dy) * (xhat_error + 2 * u_cast * np.abs(xhat))).sum(axis=others)
    return error + _sum_budget(np.abs(dy * xhat), ref, rows, dtype, others)


def _cast_roundoff(dtype, cast_before_gamma: bool) -> float:
    """The unit roundoff of `dtype` when the kernel rounds x̂ (and γ·dy, dy·x̂) to it before γ;
    else 0.

    One rounding of γ·dy moves dx by at most u times the backward's terms; x̂'s rounding and the
    product's move each term of dγ by at most 2u|dy·x̂|, and y by u|γ x̂|."""
    return unit_roundoff(dtype) if cast_before_gamma else 0.0


def _rms_xhat_error(x: np.ndarray, rstd: np.ndarray, k: int) -> np.ndarray:
    """|Δx̂| of RMS norm: the mean square's H squares and sums, eps, the root, the reciprocal and
    the product."""
    size = int(np.prod(x.shape[-k:]))
    return (size + 4) * _accumulation_roundoff(x.dtype) * (1 + np.abs(x.astype(np.float64) * rstd))


def _check_rms_forward(forward, case, inputs, eps, k, sample, saved, *, cast_before_gamma=False):
    axes = tuple(range(inputs["x"].ndim - k, inputs["x"].ndim))
    wide = {name: v.astype(np.float64) for name, v in inputs.items()}
    y_ref, rstd = _reference(
        rms_norm, wide["x"], wide["gamma"], eps=eps, axis=axes, return_stats=True
    )
    u_cast = _cast_roundoff(inputs["x"].dtype, cast_before_gamma)
    arithmetic = np.abs(wide["gamma"]) * _rms_xhat_error(inputs["x"], rstd, k) + u_cast * np.abs(
        y_ref
    )
    budget = arithmetic + 2 * unit_roundoff(inputs["x"].dtype) * np.abs(y_ref)
    return _compare_forward(
        forward, case, inputs, ("x", "gamma"), eps, y_ref, (budget, arithmetic), sample, saved
    )


def _check_rms_backward(backward, case, inputs, eps, k, saved, *, cast_before_gamma=False):
    u_cast = _cast_roundoff(inputs["x"].dtype, cast_before_gamma)
    refs, budgets = _rms_backward_budgets(inputs, eps, k, u_cast)
    return _compare_gradients(
        backward, case, inputs, (eps, *saved), dict(zip(("dx", "dgamma"), refs)), budgets
    )


def _rms_backward_budgets(inputs: dict, eps, k: int, u_cast: float) -> tuple:
    """RMSNorm's float64 (dx, dgamma) on `inputs` and their budgets, with `u_cast` the relative
    error x̂ may carry beyond the arithmetic's (:func:`_cast_roundoff`): :func:`check_rms_norm`'s
    and :mod:`lnlib.harness_add`'s."""
    axes = tuple(range(inputs["x"].ndim - k, inputs["x"].ndim))
    others = tuple(range(inputs["x"].ndim - k))
    wide = {name: v.astype(np.float64) for name, v in inputs.items()}
    _, rstd = _reference(rms_norm, wide["x"], eps=eps, axis=axes, return_stats=True)
    refs = rms_norm_backward(wide["dy"], wide["x"], wide["gamma"], eps=eps, axis=axes, rstd=rstd)
    xhat = wide["x"] * rstd
    u_out = unit_roundoff(inputs["x"].dtype)
    xhat_error = _rms_xhat_error(inputs["x"], rstd, k)  # of x-hat, and relative of rstd
    dxhat = np.abs(wide["dy"] * wide["gamma"])
    terms = rstd * (dxhat + np.abs(xhat) * (dxhat * np.abs(xhat)).mean(axis=axes, keepdims=True))
    rows = int(np.prod(inputs["x"].shape[:-k]))
    budgets = (
        (xhat_error + u_cast) * terms + 2 * u_out * np.abs(refs[0]),
        _dgamma_budget(
            wide["dy"], xhat, xhat_error, refs[1], rows, inputs["gamma"].dtype, others, u_cast
        ),
    )
    return refs, budgets


#: The report's row for the pooled rounding-bias check of each dtype.
BIAS = "rounding bias"
#: The chance that :func:`rounding_bias` flags an unbiased rounding (Hoeffding's bound).
BIAS_FALSE_ALARM = 1e-9


def _ulp(values: np.ndarray, dtype) -> np.ndarray:
    """The spacing of `dtype`'s numbers at each |value| (its binade's ulp; subnormal spacing
    below)."""
    info = float_info(dtype)
    _, exponent = np.frexp(np.abs(values))
    return np.maximum(np.ldexp(float(info.eps), exponent - 1), float(info.smallest_subnormal))


def _rounding_sample(got: np.ndarray, ref: np.ndarray, arithmetic: np.ndarray, dtype) -> tuple:
    """Signed errors in ulps of the entries the final rounding dominates (see
    :func:`rounding_bias`).

    An entry counts when its reference is not a number of `dtype` (else a correct rounding is
    exact there) and the arithmetic's part of the budget is at most a quarter ulp. Returns the
    signed errors, the same turned toward zero's direction (times the sign of the reference) and
    the arithmetic's bound, all in ulps of the larger of |got| and |ref|.
    """
    with np.errstate(over="ignore"):
        exact = ref.astype(dtype).astype(np.float64) == ref
    ulp = _ulp(np.maximum(np.abs(got), np.abs(ref)), dtype)
    counted = ~exact & (arithmetic <= ulp / 4)
    error = (got - ref)[counted] / ulp[counted]
    return error, error * np.sign(ref[counted]), arithmetic[counted] / ulp[counted]


def rounding_bias(
    error, toward_zero, arithmetic, *, false_alarm: float = BIAS_FALSE_ALARM
) -> tuple[float, str]:
    r"""Whether an output's rounding is biased: its mean signed error against a threshold.

    Chapter "Check your own LayerNorm".

    Each counted entry's error, in ulps of the output dtype, is
    :math:`t_i = \rho_i + c_i`: the final rounding's :math:`\rho_i` and the
    arithmetic's :math:`c_i`, with :math:`|c_i| \le b_i`, the budget's
    arithmetic part (entries are counted only where :math:`b_i \le 1/4`, so the
    check applies to 16-bit outputs computed in float32; in float32 and float64
    the arithmetic's error is as large as the rounding's and the check is not made).
    Rounding to nearest gives :math:`|\rho_i| \le 1/2`, and over entries whose
    values are spread over many ulps (the probabilistic model of rounding
    errors, Higham and Mary 2019) the :math:`\rho_i` are independent with mean 0.
    Hoeffding's inequality then bounds the mean of n of them:
    :math:`P(|\bar\rho| \ge a) \le 2 e^{-2 n a^2}`, which shrinks like
    :math:`1/\sqrt n`; applied to the plain mean and to the mean of
    :math:`t_i\,\mathrm{sign}(y_i)` (bias toward zero), the union bound gives
    the threshold

    .. math:: T = \sqrt{\ln(4/p) / (2n)} + \bar b

    with p the false-alarm chance. A biased rounding has a mean that does not
    shrink with n: truncation (round toward zero) gives
    :math:`\overline{t\,\mathrm{sign}(y)} \approx -1/2`, rounding down
    :math:`\bar t \approx -1/2`. Over the default cases' bfloat16 outputs
    (n of several thousand) T is under 0.1 ulp.

    Parameters
    ----------
    error, toward_zero, arithmetic : ndarray
        The counted entries' :math:`t_i`, :math:`t_i\,\mathrm{sign}(y_i)` and :math:`b_i`, in ulps.
    false_alarm : float, default 1e-9
        p, the chance that an unbiased rounding is flagged.

    Returns
    -------
    ratio : float
        ``max(|mean t|, |mean t sign(y)|) / T``: at most 1 passes.
    detail : str
        Empty when it passed; otherwise the bias, for the report.

    Raises
    ------
    ValueError
        If no entry was counted.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rho = rng.uniform(-0.5, 0.5, 10000)       # rounding to nearest
    >>> rounding_bias(rho, rho, np.zeros(10000))[0] < 1
    True
    >>> chopped = rng.uniform(-1.0, 0.0, 10000)   # truncation: always toward zero
    >>> rounding_bias(chopped, chopped, np.zeros(10000))[0] > 1
    True
    """
    n = len(error)
    if n == 0:
        raise ValueError("rounding_bias needs at least one counted entry; got none.")
    threshold = math.sqrt(math.log(4 / false_alarm) / (2 * n)) + float(np.mean(arithmetic))
    means = {"": float(np.mean(error)), " toward zero": float(np.mean(toward_zero))}
    direction, worst = max(means.items(), key=lambda item: abs(item[1]))
    ratio = abs(worst) / threshold
    if ratio <= 1:
        return ratio, ""
    return ratio, (
        f"bias: the mean signed error{direction} is {worst:+.3f} ulp over {n} entries, "
        f"where an unbiased rounding stays within ±{threshold:.3f} ulp (Hoeffding, "
        f"false-alarm chance {false_alarm:g}, plus the arithmetic's bound); the output "
        "is rounded in one direction, as by truncation"
    )


def _accumulation_roundoff(dtype) -> float:
    """The roundoff of the statistics: float32's for 16-bit data (as the frameworks accumulate), the
    data's own otherwise."""
    return unit_roundoff(compute_dtype(dtype))


def _compare(
    name: str, got, ref: np.ndarray, budget: np.ndarray, dtype, whose: str = "x"
) -> tuple[float, str]:
    """Worst ``|got - ref| / budget`` and what failed; a wrong shape, dtype or a NaN is infinitely
    over."""
    got = np.asarray(got)
    if got.shape != ref.shape:
        return float("inf"), f"shape: {name} has shape {got.shape}, expected {ref.shape}"
    if got.dtype != np.dtype(dtype):
        return float(
            "inf"
        ), f"dtype: {name} is {got.dtype}, expected {np.dtype(dtype).name} ({_OWNER[whose]})"
    values = got.astype(np.float64)
    if not np.isfinite(values).all():
        return float(
            "inf"
        ), f"NaN: {name} has {int((~np.isfinite(values)).sum())} NaN or infinite entries"
    tiny = float_info(dtype).smallest_subnormal
    with np.errstate(over="ignore"):
        ratio = np.abs(values - ref) / (budget + tiny)
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratio)), ratio.shape))
    worst = float(ratio[where])
    detail = (
        ""
        if worst <= 1
        else (
            f"{name}[{', '.join(map(str, where))}] = {values[where]:.6g}, reference "
            f"{ref[where]:.6g}, "
            f"error {abs(values[where] - ref[where]):.2g} > allowed {budget[where]:.2g}"
        )
    )
    return worst, detail


# Example implementations for the chapter "Check your own LayerNorm" and the tests: the correct
# numpy versions (lnlib.textbook, and Welford's below) and PyTorch's. The planted bugs live in
# lnlib.variants, beside the variants two of them are.


def welford_layer_norm(x, gamma, beta, eps):
    """A correct LayerNorm over the last axis with Welford's one-sweep mean and variance.

    Float32 statistics for 16-bit data, as the frameworks keep them; one feature at a time, every
    row at once.
    """
    work = compute_dtype(x.dtype).type
    xw = x.astype(work)
    mean, m2 = np.zeros(x.shape[:-1], dtype=work), np.zeros(x.shape[:-1], dtype=work)
    for count in range(1, x.shape[-1] + 1):
        delta = xw[..., count - 1] - mean
        mean = mean + delta / work(count)
        m2 = m2 + delta * (xw[..., count - 1] - mean)
    rstd = 1 / np.sqrt(m2 / work(x.shape[-1]) + work(eps))
    y = (xw - mean[..., None]) * rstd[..., None] * gamma.astype(work) + beta.astype(work)
    return y.astype(x.dtype)


def torch_layer_norm(device: str = "cpu"):
    """PyTorch's LayerNorm wrapped for :func:`check_layer_norm`: ``(forward, backward)``, or None
    without PyTorch.

    16-bit inputs get float32 gamma and beta, as mixed-precision training keeps
    its parameters; then PyTorch's CPU kernel also keeps mean and rstd in float32.
    bfloat16 arrays cross to PyTorch through float32 (exactly). dgamma and dbeta come back in
    gamma's dtype: float32 under ``check_layer_norm(..., param_dtype="float32")``. `device`
    ("cuda" on a GPU) is where PyTorch computes: the book ran the CPU's kernel only.

    Examples
    --------
    On a machine with an NVIDIA GPU and PyTorch, PyTorch's CUDA kernel in mixed precision::

        print(check_layer_norm(*torch_layer_norm("cuda"), param_dtype="float32"))
    """
    bridge = _torch_bridge(device)
    if bridge is None:
        return None
    torch, tensor, array = bridge

    def forward(x, gamma, beta, eps):
        y = torch.nn.functional.layer_norm(
            tensor(x), gamma.shape, tensor(gamma, param=True), tensor(beta, param=True), eps
        )
        return array(y, x.dtype)

    def backward(dy, x, gamma, eps):
        tx, tg = tensor(x).requires_grad_(), tensor(gamma, param=True).requires_grad_()
        tb = torch.zeros_like(tg, requires_grad=True)
        torch.nn.functional.layer_norm(tx, gamma.shape, tg, tb, eps).backward(tensor(dy))
        return array(tx.grad, x.dtype), array(tg.grad, gamma.dtype), array(tb.grad, gamma.dtype)

    return forward, backward


def torch_rms_norm(device: str = "cpu"):
    """PyTorch's ``torch.nn.functional.rms_norm`` wrapped for :func:`check_rms_norm`: ``(forward,
    backward)``, or None without PyTorch.

    The backward pass is PyTorch's autograd. As :func:`torch_layer_norm` (`device` too), 16-bit
    inputs get a float32 gamma (PyTorch then warns that its fused kernel does not take mixed
    dtypes and runs its composite one, which computes in float32; the warning is silenced here).
    """
    bridge = _torch_bridge(device)
    if bridge is None:
        return None
    torch, tensor, array = bridge

    def rms(x, gamma, eps):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Mismatch dtype between input and weight")
            return torch.nn.functional.rms_norm(x, gamma.shape, gamma, eps)

    def forward(x, gamma, eps):
        return array(rms(tensor(x), tensor(gamma, param=True), eps), x.dtype)

    def backward(dy, x, gamma, eps):
        tx, tg = tensor(x).requires_grad_(), tensor(gamma, param=True).requires_grad_()
        rms(tx, tg, eps).backward(tensor(dy))
        return array(tx.grad, x.dtype), array(tg.grad, gamma.dtype)

    return forward, backward


def torch_function(function: Callable, device: str = "cpu") -> Callable:
    """`function`, written for PyTorch tensors (a fused kernel, a Triton or Liger op, an autograd
    Function's forward or backward), in the harness's numpy signature (chapter "Check your own
    LayerNorm").

    Each ndarray argument reaches `function` as a new tensor on `device` in its own dtype, bfloat16
    included (``torch.from_numpy`` refuses ml_dtypes' bfloat16; a learner B review); other
    arguments (eps, a saved statistic already a tensor) pass as they are. Each tensor it returns,
    alone or in a tuple, comes back as an ndarray in the tensor's dtype. The tensors are copies, so
    a kernel that writes into its inputs (vLLM's ``fused_add_rms_norm``) leaves the harness's arrays
    alone: return what it wrote.

    Raises
    ------
    ModuleNotFoundError
        When PyTorch cannot be imported.

    Examples
    --------
    >>> import numpy as np
    >>> def add(x, residual):
    ...     return x + residual
    >>> half = np.ones(2, np.float16)
    >>> torch_function(add)(half, half)  # doctest: +SKIP
    array([2., 2.], dtype=float16)
    """
    bridge = _torch_bridge(device)
    if bridge is None:
        raise ModuleNotFoundError(
            "torch_function needs PyTorch: pip install torch (or lnlib's [reference] extra)."
        )
    torch, tensor, array = bridge

    def back(value):
        return array(value) if isinstance(value, torch.Tensor) else value

    def call(*args):
        given = [tensor(a).clone() if isinstance(a, np.ndarray) else a for a in args]
        got = function(*given)
        return tuple(back(v) for v in got) if isinstance(got, (tuple, list)) else back(got)

    return call


def torch_module(
    factory: Callable, device: str = "cpu", *, weight_offset: float = 0.0, cast_output: bool = False
):
    """Your own PyTorch module (an ``nn.Module`` LayerNorm or RMSNorm) wrapped for
    :func:`check_layer_norm` or :func:`check_rms_norm`: ``(forward, backward)`` (chapter "Check
    your own LayerNorm", § "Hugging Face's ordering").

    Each call builds a module with ``factory(size, eps)`` (``size``: the normalized shape, an int
    for one axis) on `device`, sets its ``weight`` to gamma and, when it has one, its ``bias`` to
    beta, each in the dtype the check hands them (that of x, or float32 under
    ``param_dtype="float32"``), and runs it; the backward pass is PyTorch's autograd, returning dx,
    dgamma (and dbeta for a module with a bias). Results come back in the dtype PyTorch gave them,
    never cast unless `cast_output` asks: a module that returns float32 for bfloat16 input fails
    the check's dtype test (the check's rule: an output in its input's dtype), and the report says
    it is the dtype.

    Parameters
    ----------
    factory : callable
        ``factory(size, eps) -> torch.nn.Module``, e.g. ``lambda size, eps: torch.nn.RMSNorm(size,
        eps=eps)`` or your model's norm class.
    device : str, default "cpu"
        Where PyTorch computes ("cuda" on a GPU).
    weight_offset : float, default 0.0
        For a module whose gain is ``weight_offset + weight``: Gemma's RMSNorm multiplies by
        ``1 + weight``, so pass 1.0. Its ``weight`` is then gamma - weight_offset in float64, and
        its gradient comes back in gamma's dtype; the check hands float32 and float64 gains
        whose gamma - weight_offset float32 holds exactly (:func:`harness_inputs`), so a module
        that forms its gain in float32, as Gemma's does, has the reference's gain, and one that
        forms it in 16 bits does not.
    cast_output : bool, default False
        Cast the module's output to its input's dtype, as the next layer would see it under
        autocast; for a module that promotes a 16-bit input to float32 with a float32 weight
        (``param_dtype="float32"``), so that the check judges its values instead of failing on
        the dtype. Off, nothing is cast.

    Raises
    ------
    TypeError
        If `factory` is not callable.
    ImportError
        If PyTorch cannot be imported.

    Examples
    --------
    With PyTorch installed, a Hugging Face-style RMSNorm, checked in the dtypes it is written for::

        report = check_rms_norm(
            *torch_module(lambda size, eps: LlamaRMSNorm(size, eps=eps)),
            dtypes=("float32", "float16", "bfloat16"),
            cast_before_gamma=True,
        )
    """
    if not callable(factory):
        raise TypeError(
            f"factory must be a function factory(size, eps) -> module; got {factory!r}."
        )
    if isinstance(weight_offset, bool) or not isinstance(weight_offset, int | float):
        raise TypeError(f"weight_offset must be a number such as 1.0; got {weight_offset!r}.")
    if not np.isfinite(weight_offset):
        raise ValueError(f"weight_offset must be finite, such as 1.0; got {weight_offset!r}.")
    bridge = _torch_bridge(device)
    if bridge is None:
        raise ImportError(
            "torch_module checks a PyTorch module, and PyTorch is not installed: "
            "pip install torch (or lnlib's [reference] extra)."
        )
    torch, tensor, array = bridge

    def build(gamma, beta, eps):
        module = factory(gamma.shape[0] if gamma.ndim == 1 else tuple(gamma.shape), eps).to(device)
        weight = np.asarray(gamma, np.float64) - weight_offset  # float32 holds it (harness_inputs)
        module.weight = torch.nn.Parameter(tensor(weight if weight_offset else gamma))
        if getattr(module, "bias", None) is not None:
            module.bias = torch.nn.Parameter(tensor(np.zeros_like(gamma) if beta is None else beta))
        return module

    def forward(x, gamma, *rest):  # (beta, eps) for LayerNorm's check, (eps,) for RMSNorm's
        tx = tensor(x)
        y = build(gamma, rest[0] if len(rest) == 2 else None, rest[-1])(tx)
        return array(y.to(tx.dtype) if cast_output else y)

    forward.weight_offset = weight_offset  # the check then hands gains the module can hold
    if not weight_offset:  # the check's hint tries the 1 + weight form (_offset_hint)
        forward.with_offset = lambda offset: torch_module(
            factory, device, weight_offset=offset, cast_output=cast_output
        )

    def backward(dy, x, gamma, eps):
        module, tx = build(gamma, None, eps), tensor(x).requires_grad_()
        module(tx).backward(tensor(dy))
        weight_grad = module.weight.grad  # float64 under weight_offset: gamma's dtype, as handed
        grads = (tx.grad, weight_grad.to(tensor(gamma).dtype) if weight_offset else weight_grad)
        if getattr(module, "bias", None) is not None:
            grads += (module.bias.grad,)
        return tuple(array(g) for g in grads)

    return forward, backward


def _torch_bridge(device: str = "cpu"):
    """``(torch, tensor, array)``: the module and numpy <-> torch conversions the wrappers share, or
    None without PyTorch; tensors are made on `device`.

    ``tensor(a, param=True)`` gives a 16-bit parameter in float32; bfloat16 crosses through float32
    (exactly); ``array(t)`` keeps the tensor's dtype, ``array(t, dtype)`` casts to `dtype`.
    """
    try:
        import torch
    except ImportError:
        return None

    def tensor(a, *, param=False):
        if param and a.dtype.itemsize == 2:
            made = torch.from_numpy(a.astype(np.float32))
        elif a.dtype == np.dtype("bfloat16"):
            made = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
        else:
            made = torch.from_numpy(np.ascontiguousarray(a))
        return made.to(device)

    def array(t, dtype=None):  # dtype None: the tensor's own, bfloat16 as ml_dtypes'
        t = t.detach().cpu()
        wide = (t.float() if t.dtype == torch.bfloat16 else t).numpy()
        kept = ml_dtypes.bfloat16 if t.dtype == torch.bfloat16 else wide.dtype
        return wide.astype(kept if dtype is None else dtype)

    return torch, tensor, array
