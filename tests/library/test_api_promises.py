"""api.md's "How lnlib computes, everywhere", checked on every documented function that computes.

Every public function the API page documents (its ``autofunction`` directives, and the ``__all__``
of the modules it documents with ``automodule``) is either run here or named in ``NOT_COMPUTING``
with what it does instead. Each one that normalizes, or computes a variance or a gradient, gets the
same inputs: rows at the edges of each dtype's range (float32 at 1e20 and 1e-20, float64 at 1e200
and 1e-200, bfloat16 at 1e20, float16 near its largest value), a constant row with eps = 0, NaN and
infinity, and a complex gamma. It must then return what float64 computes on the input divided by an
exact power of two (to a tolerance for the output's dtype), or raise TypeError or ValueError naming
the problem; it may raise only where a result does not fit its dtype or the input is bad. Nothing
else: no silent inf, NaN, zero or rounding error.

The page's list "Where these rules do not hold" names the functions that drop a rule by design, and
which rule (the textbook kernel, for one, is the readable version and keeps only rule 1). The tests
read that list, so the page and the tests cannot disagree: a listed case that fails is reported as
xfail (one that passes, passes: some listed functions get some of those inputs right), and every
listed name must be a covered function.
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from lnlib import backward, forward, fused, harness, norms, rms, symbolic, textbook, variants
from lnlib import variance_algorithms as variance
from lnlib.validation import as_float_array, check_eps

API = Path(__file__).resolve().parents[2] / "api.md"
BF16 = np.dtype(ml_dtypes.bfloat16)
H = 4  # the symbolic gradient is derived for H from 2 to 6; every other function gets the same rows
ROWS = 3

# --------------------------------------------------------------------------------------------------
# What the page documents, and what it says does not hold


def documented_functions() -> set[str]:
    """Dotted names of the public functions api.md documents (autofunction, automodule
    :members:)."""
    text = API.read_text()
    names = set(re.findall(r"^\.\. autofunction:: (lnlib\.[\w.]+)$", text, re.M))
    for module_name in re.findall(r"^\.\. automodule:: (lnlib\.[\w.]+)\n\s+:members:", text, re.M):
        module = importlib.import_module(module_name)
        for name in module.__all__:
            if callable(getattr(module, name)) and not isinstance(getattr(module, name), type):
                names.add(f"{module_name}.{name}")
    return names


def exemptions() -> dict[str, dict]:
    """api.md's list "Where these rules do not hold": name -> {"rules": {2, 3}, "only": {"var"} or
    None}.

    Each item names functions in backticks (``lnlib.x.y``), the rules they drop ("rules 2 and 3"),
    and, when the exception concerns some of their results only, those results in backticks (`var`).
    """
    text = API.read_text()
    if "Where these rules do not hold" not in text:
        return {}
    start = text.index("Where these rules do not hold")
    block = text[start:].split("\n\n")[1]
    table = {}
    for item in re.split(r"^- ", block, flags=re.M)[1:]:
        head = item.split(":", 1)[0]
        names = re.findall(r"`(lnlib\.[\w.]+)`", head)
        rules_text = re.search(r"\brules? ([\d, and]+)", item).group(1)
        rules = {int(r) for r in re.findall(r"\d", rules_text)}
        only = set(re.findall(r"(?:their|its) `(\w+)` only", item)) or None
        for name in names:
            table[name] = {"rules": rules, "only": only}
    return table


# --------------------------------------------------------------------------------------------------
# The inputs


@dataclass(repr=False)
class Case:
    """One input: x = u * 2**k exactly, so float64 on u is a reference that cannot overflow or
    underflow."""

    name: str
    rules: set  # the rules of "How lnlib computes, everywhere" this input tests
    x: np.ndarray
    eps: float
    gamma: (
        np.ndarray
    )  # as passed (float32 for 16-bit storage, else the storage dtype; complex for one case)
    beta: np.ndarray
    dy: np.ndarray
    error: str | None = None  # the input is bad: the error's pattern

    def __repr__(self) -> str:
        return f"Case({self.name!r})"

    @property
    def dtype(self) -> np.dtype:
        return self.x.dtype

    @property
    def k(self) -> int:
        finite = np.abs(self.x.astype(np.float64))
        largest = np.max(np.where(np.isfinite(finite), finite, 0))
        return int(np.frexp(largest)[1]) if largest > 0 else 0

    @property
    def u(self) -> np.ndarray:
        return np.ldexp(self.x.astype(np.float64), -self.k)


def make_case(name, rules, dtype, scale, *, eps=1e-5, edit=None, gamma_dtype=None, error=None):
    rng = np.random.default_rng(len(name))
    dtype = np.dtype(dtype)
    values = rng.normal(size=(ROWS, H))
    values = values / np.max(np.abs(values)) * scale
    if edit:
        values = edit(values)
    x = values.astype(dtype)
    param = np.float32 if dtype.itemsize == 2 else dtype
    gamma = (1 + 0.25 * rng.normal(size=H)).astype(gamma_dtype or param)
    beta = (0.25 * rng.normal(size=H)).astype(param)
    dy = rng.normal(size=(ROWS, H)).astype(dtype)
    return Case(name, set(rules), x, eps, gamma, beta, dy, error)


def constant_row(values):
    values[1] = 3.0
    return values


def with_value(value):
    def edit(values):
        values[2, 1] = value
        return values

    return edit


OVERFLOW = r"overflow|underflow|too large|largest value|does not fit|fit in|range"
CASES = [
    make_case("float32 at 1e20", {2}, np.float32, 1e20),
    make_case("float32 at 1e-20", {2}, np.float32, 1e-20, eps=0.0),
    make_case("float64 at 1e200", {2}, np.float64, 1e200),
    make_case("float64 at 1e-200", {2}, np.float64, 1e-200, eps=0.0),
    make_case("bfloat16 at 1e20", {1, 2}, BF16, 1e20),
    make_case("float16 at 6e4", {1, 2}, np.float16, 6e4),
    make_case(
        "constant row, eps=0",
        {3},
        np.float32,
        2.0,
        eps=0.0,
        edit=constant_row,
        error=r"variance|constant|spread|mean square|all (?:values )?equal",
    ),
    make_case(
        "NaN", {3}, np.float32, 2.0, edit=with_value(np.nan), error=r"NaN|nan|infinit|finite"
    ),
    make_case(
        "infinity", {3}, np.float32, 2.0, edit=with_value(np.inf), error=r"NaN|nan|infinit|finite"
    ),
    make_case("complex gamma", {3}, np.float32, 2.0, gamma_dtype=np.complex128, error=r"complex"),
]

# --------------------------------------------------------------------------------------------------
# float64 references in the units of u; each result is (value in u's units, power p): value *
# 2**(p*k)


def layer_reference(case, *, centre=True, unbiased=False, eps_outside=False):
    u, k = case.u, case.k
    gamma, beta = case.gamma.astype(np.float64), case.beta.astype(np.float64)
    with np.errstate(all="ignore"):
        mean = u.mean(axis=-1, keepdims=True) if centre else np.zeros((ROWS, 1))
        centred = u - mean
        var = (centred * centred).mean(axis=-1, keepdims=True)
        if eps_outside:
            std = np.sqrt(var * H / (H - 1)) if unbiased else np.sqrt(var)
            divisor = std + np.ldexp(case.eps, -k)
        else:
            divisor = np.sqrt(var + np.ldexp(case.eps, -2 * k))
        xhat = centred / divisor
        dxhat = case.dy.astype(np.float64) * gamma
        dx = (
            dxhat
            - dxhat.mean(axis=-1, keepdims=True)
            - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)
        ) / divisor
        jacobian = (
            gamma[:, None]
            * (np.eye(H) - 1 / H - xhat[:, :, None] * xhat[:, None, :] / H)
            / divisor[:, :, None]
        )
        return {
            "y": (gamma * xhat + beta, 0),
            "y_plain": (xhat, 0),
            "xhat": (xhat, 0),
            "mean": (mean, 1),
            "var": (var, 2),
            "rstd": (1 / divisor, -1),
            "dx": (dx, -1),
            "dx_without_mean_term": (
                (dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)) / divisor,
                -1,
            ),  # RMS norm's, with centre=False
            "dgamma": ((case.dy.astype(np.float64) * xhat).sum(axis=0), 0),
            "dbeta": (case.dy.astype(np.float64).sum(axis=0), 0),
            "jacobian": (jacobian, -1),
        }


def representable(value_u, power, k, dtype) -> bool:
    """value_u * 2**(power*k) is finite and, unless 0, its largest entry neither overflows dtype nor
    rounds to 0."""
    if not np.all(np.isfinite(value_u)):
        return False
    largest = float(np.max(np.abs(value_u)))
    if largest == 0:
        return True
    exponent = int(np.frexp(largest)[1]) + power * k  # largest = m * 2**exponent, 0.5 <= m < 1
    info = ml_dtypes.finfo(dtype) if dtype == BF16 else np.finfo(dtype)
    return (
        info.minexp - info.nmant + 1 <= exponent <= info.maxexp
    )  # subnormals: compared to their spacing


def tolerance(dtype) -> float:
    return {"float64": 1e-12, "float32": 1e-5, "float16": 4e-3, "bfloat16": 2e-2}[
        np.dtype(dtype).name
    ]


# --------------------------------------------------------------------------------------------------
# The functions, each called on a case: a dict of named results, and the names of their references


def work(case):
    return np.dtype(np.float32) if case.dtype.itemsize == 2 else case.dtype


def _layer_norm(c):
    y, mean, rstd = forward.layer_norm(c.x, c.gamma, c.beta, eps=c.eps, return_stats=True)
    return {"y": y, "mean": mean, "rstd": rstd}


def _layer_norm_steps(c):
    s = forward.layer_norm_steps(c.x, c.gamma, c.beta, eps=c.eps)
    return {"y": s.y, "mean": s.mean, "var": s.var, "rstd": s.rstd, "xhat": s.xhat}


def _standardize(c):
    s = forward.standardize(as_float_array(c.x), (1,), check_eps(c.eps))
    return {"xhat": s.xhat, "mean": s.mean, "var": s.var, "rstd": s.rstd}


def _scaled_moments(c):
    m = forward.scaled_moments(as_float_array(c.x), (1,))
    # its own scale is a power of two too: compare its moments in the units of u (exactly)
    ratio = (m.scale.astype(np.float64) / np.ldexp(1.0, c.k)).astype(m.dtype)
    return {"mean_u": m.mean * ratio, "var_u": m.spread * ratio * ratio}


def _backward(c, **kwargs):
    return dict(
        zip(
            ("dx", "dgamma", "dbeta"),
            backward.layer_norm_backward(c.dy, c.x, c.gamma, eps=c.eps, **kwargs),
        )
    )


def _backward_saved(c):
    _, mean, rstd = forward.layer_norm(c.x, c.gamma, c.beta, eps=c.eps, return_stats=True)
    return _backward(c, mean=mean, rstd=rstd)


def _backward_parts(c):
    p = backward.backward_parts(c.dy, c.x, c.gamma, eps=c.eps)
    return {"dx": p.dx, "dgamma": p.dgamma, "dbeta": p.dbeta, "xhat": p.xhat, "rstd": p.rstd}


def _jacobian(c):
    return {
        "jacobian": np.stack([backward.layer_norm_jacobian(row, c.gamma, eps=c.eps) for row in c.x])
    }


def _numerical_gradient(c):
    def f(v):
        return forward.layer_norm(
            v, c.gamma.astype(np.float64), c.beta.astype(np.float64), eps=c.eps
        )

    with np.errstate(all="ignore"):
        return {"dx": backward.numerical_gradient(f, c.x, c.dy)}


def _textbook(c):
    with np.errstate(all="ignore"):
        return {"y": textbook.numpy_layer_norm(c.x, c.gamma, c.beta, c.eps)}


def _textbook_backward(c):
    with np.errstate(all="ignore"):
        return dict(
            zip(
                ("dx", "dgamma", "dbeta"),
                textbook.numpy_layer_norm_backward(c.dy, c.x, c.gamma, c.eps),
            )
        )


def _welford(c):
    with np.errstate(all="ignore"):
        return {"y": harness.welford_layer_norm(c.x, c.gamma, c.beta, c.eps)}


def _torch(c):
    pair = harness.torch_layer_norm()
    if pair is None:
        pytest.skip("PyTorch is not installed")
    return {"y": pair[0](c.x, c.gamma, c.beta, c.eps)}


def _torch_backward(c):
    pair = harness.torch_layer_norm()
    if pair is None:
        pytest.skip("PyTorch is not installed")
    return dict(zip(("dx", "dgamma", "dbeta"), pair[1](c.dy, c.x, c.gamma, c.eps)))


def _group_norm(c):
    return {"y": norms.group_norm(c.x, 1, c.gamma, c.beta, eps=c.eps)}


def _batch_norm(c):
    # statistics over axis 0 of x.T (one feature per row of x); gamma and beta per feature, as
    # broadcast below
    gamma, beta = c.gamma[0], c.beta[0]
    y = norms.batch_norm(c.x.T, np.full(ROWS, gamma), np.full(ROWS, beta), eps=c.eps, axis=0)
    return {"y_batch": y.T}


def _batch_norm_backward(c):
    # as _batch_norm: x.T, one feature per row of x, so the sums run along each row of x
    gamma = np.full(ROWS, c.gamma[0])
    dx, dgamma, dbeta = norms.batch_norm_backward(c.dy.T, c.x.T, gamma, eps=c.eps, axis=0)
    return {"dx_batch": dx.T, "dgamma_batch": dgamma, "dbeta_batch": dbeta}


def _instance_norm(c):
    return {
        "y_batch": norms.instance_norm(c.x[:, None, :], c.gamma[:1], c.beta[:1], eps=c.eps)[:, 0, :]
    }


def _rms_norm(c):
    return {"y_rms": norms.rms_norm(c.x, c.gamma, eps=c.eps)}


def _textbook_rms(c):
    with np.errstate(all="ignore"):
        return {"y_rms": textbook.numpy_rms_norm(c.x, c.gamma, c.eps)}


def _textbook_rms_backward(c):
    with np.errstate(all="ignore"):
        return dict(
            zip(
                ("dx_rms", "dgamma_rms"),
                textbook.numpy_rms_norm_backward(c.dy, c.x, c.gamma, c.eps),
            )
        )


def _rms_backward(c, **kwargs):
    return dict(
        zip(
            ("dx_rms", "dgamma_rms"), rms.rms_norm_backward(c.dy, c.x, c.gamma, eps=c.eps, **kwargs)
        )
    )


def _rms_backward_saved(c):
    _, rstd = norms.rms_norm(c.x, c.gamma, eps=c.eps, return_stats=True)
    return _rms_backward(c, rstd=rstd)


def _rms_backward_parts(c):
    p = rms.rms_backward_parts(c.dy, c.x, c.gamma, eps=c.eps)
    return {"dx_rms": p.dx, "dgamma_rms": p.dgamma, "y_rms_plain": p.xhat}


def _torch_rms(c):
    pair = harness.torch_rms_norm()
    if pair is None:
        pytest.skip("PyTorch is not installed")
    return {"y_rms": pair[0](c.x, c.gamma, c.eps)}


def _torch_rms_backward(c):
    pair = harness.torch_rms_norm()
    if pair is None:
        pytest.skip("PyTorch is not installed")
    return dict(zip(("dx_rms", "dgamma_rms"), pair[1](c.dy, c.x, c.gamma, c.eps)))


def _normalize(method):
    def call(c):
        if method == "batch":
            return {"y_plain": norms.normalize(c.x.T, "batch", eps=c.eps).T}
        if method == "instance":
            return {"y_plain": norms.normalize(c.x[:, None, :], "instance", eps=c.eps)[:, 0, :]}
        return {
            "y_rms_plain" if method == "rms" else "y_plain": norms.normalize(c.x, method, eps=c.eps)
        }

    return call


def _sample_variance(unbiased):
    def call(c):
        return {
            "var_unbiased" if unbiased else "var": variants.sample_variance(
                c.x, unbiased=unbiased, keepdims=True
            )
        }

    return call


def _eps_outside(c):
    return {"y_outside": variants.layer_norm_eps_outside_sqrt(c.x, c.gamma, c.beta, eps=c.eps)}


def _annotated(c):
    return {
        "y_annotated": variants.annotated_transformer_layer_norm(c.x, c.gamma, c.beta, eps=c.eps)
    }


def _variance(method):
    def call(c):
        return {"var": variance.variance(c.x, method=method)[:, None]}

    return call


def _welford_state(c):
    state = variance.welford(c.x)
    return {"mean": state.mean[:, None], "var": state.variance[:, None]}


def _chan_merge(c):
    left, right = variance.welford(c.x[:, : H // 2]), variance.welford(c.x[:, H // 2 :])
    return {"var": variance.chan_merge(left, right).variance[:, None]}


def _exact_variance(c):
    return {"var": variance.exact_variance(c.x)[:, None]}


_SYMBOLS = symbolic.make_symbols(H)
_NUMERIC = {}


def _numeric_backward(c):
    if not _NUMERIC:
        _NUMERIC["f"] = symbolic.numeric_backward(_SYMBOLS, symbolic.closed_form_gradient(_SYMBOLS))
    eps = c.eps if c.eps > 0 else 1e-300  # the symbol eps is positive
    with np.errstate(all="ignore"):
        rows = [_NUMERIC["f"](dy, x, c.gamma, eps) for dy, x in zip(c.dy, c.x)]
    return {"dx": np.stack(rows).astype(c.dtype)}


def _fused(compiled, statistics="two_pass"):
    def call(c):
        if compiled:
            pytest.importorskip("numba")
        y, mean, rstd = fused.fused_layer_norm(
            c.x, c.gamma, c.beta, c.eps, statistics=statistics, compiled=compiled
        )
        return {"y": y, "mean": mean[:, None], "rstd": rstd[:, None]}

    return call


def _fused_backward(compiled):
    def call(c):
        if compiled:
            pytest.importorskip("numba")
        _, mean, rstd = fused.fused_layer_norm(c.x, c.gamma, c.beta, c.eps, compiled=compiled)
        grads = fused.fused_layer_norm_backward(
            c.dy, c.x, c.gamma, mean, rstd, c.eps, compiled=compiled
        )
        return dict(zip(("dx", "dgamma", "dbeta"), grads))

    return call


def _fused_add(c):
    # a zero residual: s = x exactly, so the references are those of x
    y, s, mean, rstd = fused.fused_add_layer_norm(
        c.x, np.zeros_like(c.x), c.gamma, c.beta, c.eps, compiled=False
    )
    return {"y": y, "mean": mean[:, None], "rstd": rstd[:, None]}


#: documented name -> [(label, call, takes gamma)]
FUNCTIONS = {
    "lnlib.textbook.numpy_layer_norm": [("", _textbook, True)],
    "lnlib.textbook.numpy_layer_norm_backward": [("", _textbook_backward, True)],
    "lnlib.forward.layer_norm": [("", _layer_norm, True)],
    "lnlib.forward.layer_norm_steps": [("", _layer_norm_steps, True)],
    "lnlib.forward.scaled_moments": [("", _scaled_moments, False)],
    "lnlib.forward.standardize": [("", _standardize, False)],
    "lnlib.backward.layer_norm_backward": [
        ("", _backward, True),
        ("saved mean, rstd", _backward_saved, True),
    ],
    "lnlib.backward.backward_parts": [("", _backward_parts, True)],
    "lnlib.backward.layer_norm_jacobian": [("", _jacobian, True)],
    "lnlib.backward.numerical_gradient": [("", _numerical_gradient, False)],
    "lnlib.harness.welford_layer_norm": [("", _welford, True)],
    "lnlib.harness.torch_layer_norm": [
        ("forward", _torch, True),
        ("backward", _torch_backward, True),
    ],
    "lnlib.norms.batch_norm": [("", _batch_norm, True)],
    "lnlib.norms.batch_norm_backward": [("", _batch_norm_backward, True)],
    "lnlib.norms.group_norm": [("", _group_norm, True)],
    "lnlib.norms.instance_norm": [("", _instance_norm, True)],
    "lnlib.norms.rms_norm": [("", _rms_norm, True)],
    "lnlib.rms.rms_norm_backward": [
        ("", _rms_backward, True),
        ("saved rstd", _rms_backward_saved, True),
    ],
    "lnlib.rms.rms_backward_parts": [("", _rms_backward_parts, True)],
    "lnlib.textbook.numpy_rms_norm": [("", _textbook_rms, True)],
    "lnlib.textbook.numpy_rms_norm_backward": [("", _textbook_rms_backward, True)],
    "lnlib.harness.torch_rms_norm": [
        ("forward", _torch_rms, True),
        ("backward", _torch_rms_backward, True),
    ],
    "lnlib.norms.normalize": [(m, _normalize(m), False) for m in norms.METHODS],
    "lnlib.variants.sample_variance": [
        ("", _sample_variance(False), False),
        ("unbiased", _sample_variance(True), False),
    ],
    "lnlib.variants.layer_norm_eps_outside_sqrt": [("", _eps_outside, True)],
    "lnlib.variants.annotated_transformer_layer_norm": [("", _annotated, True)],
    "lnlib.variance_algorithms.variance": [(m, _variance(m), False) for m in variance.METHODS],
    "lnlib.variance_algorithms.welford": [("", _welford_state, False)],
    "lnlib.variance_algorithms.chan_merge": [("", _chan_merge, False)],
    "lnlib.variance_algorithms.exact_variance": [("", _exact_variance, False)],
    "lnlib.symbolic.numeric_backward": [("", _numeric_backward, True)],
    # uncompiled only: numba's compilation takes seconds per dtype, and test_fused_guarantees.py
    # runs these inputs through both modes (which api.md says agree)
    "lnlib.fused.fused_layer_norm": [
        (stats, _fused(False, stats), True) for stats in fused.STATISTICS
    ],
    "lnlib.fused.fused_layer_norm_backward": [("", _fused_backward(False), True)],
    "lnlib.fused.fused_add_layer_norm": [("", _fused_add, True)],
}

#: where a constant row is an ordinary input: a mean square that is not 0, or a variance of 0
CONSTANT_ROW_IS_VALID = {
    "lnlib.forward.scaled_moments",
    "lnlib.norms.rms_norm",
    "lnlib.norms.normalize[rms]",
    "lnlib.rms.rms_norm_backward",
    "lnlib.rms.rms_norm_backward[saved rstd]",
    "lnlib.rms.rms_backward_parts",
    "lnlib.textbook.numpy_rms_norm",
    "lnlib.textbook.numpy_rms_norm_backward",
    "lnlib.harness.torch_rms_norm[forward]",
    "lnlib.harness.torch_rms_norm[backward]",
    "lnlib.variants.sample_variance",
    "lnlib.variants.sample_variance[unbiased]",
    "lnlib.variance_algorithms.welford",
    "lnlib.variance_algorithms.chan_merge",
    "lnlib.variance_algorithms.exact_variance",
    *(f"lnlib.variance_algorithms.variance[{m}]" for m in variance.METHODS),
}

#: documented functions that normalize no input and compute no variance or gradient of one
NOT_COMPUTING = {
    "lnlib.forward.to_storage": (
        "rounds a result to its storage dtype (checked through every function here)"
    ),
    "lnlib.backward.relative_error": "compares two arrays",
    "lnlib.harness.check_layer_norm": (
        "checks another implementation (tests/library/test_harness*.py)"
    ),
    "lnlib.harness.check_rms_norm": (
        "checks another implementation (tests/library/test_harness_rms.py)"
    ),
    "lnlib.harness.harness_inputs": "makes the harness's inputs",
    "lnlib.harness_add.check_add_rms_norm": (
        "checks another implementation (tests/library/test_harness_add.py)"
    ),
    "lnlib.harness_add.add_inputs": "makes the fused add's inputs",
    "lnlib.harness.torch_function": "converts another implementation's arrays and tensors",
    "lnlib.harness.rounding_bias": "measures a rounding bias",
    "lnlib.harness.torch_module": (
        "wraps the reader's own module, whatever it computes (tests/library/"
        "test_harness_torch_module.py)"
    ),
    "lnlib.compare.compare": "compares two arrays",
    "lnlib.norms.axis_ids": "labels entries, no arithmetic",
    "lnlib.norms.statistic_ids": "labels entries, no arithmetic",
    "lnlib.variants.std_inside": "a formula of a given variance and eps, for the chapter's plots",
    "lnlib.variants.std_outside": "a formula of a given variance and eps, for the chapter's plots",
    "lnlib.variance_algorithms.variance_relative_error": "compares two variances",
    "lnlib.variance_algorithms.unit_roundoff": "a dtype's constant",
    "lnlib.fused.numba_available": "reports an installation",
    "lnlib.fused.set_threads": "sets a thread count",
    "lnlib.fused.threads": "reports a thread count",
    **{
        f"lnlib.validation.{name}": "an input check (exercised through every function here)"
        for name in (
            "as_float_array",
            "float_info",
            "compute_dtype",
            "gradient_dtype",
            "check_finite",
            "normalized_axes",
            "normalized_shape",
            "check_eps",
            "as_parameter",
            "check_nonzero_spread",
            "check_count",
        )
    },
    **{
        f"lnlib.symbolic.{name}": "symbolic, not numeric"
        for name in (
            "make_symbols",
            "forward",
            "direct_gradient",
            "chain_rule",
            "in_normalized_variables",
            "to_latex",
            "substitute_statistics",
            "closed_form_gradient",
            "jacobian",
            "closed_form_jacobian",
            "source_jacobian_diagonal",
            "equal",
            "rms_forward",
            "rms_direct_gradient",
            "rms_chain_rule",
            "rms_closed_form_gradient",
            "batch_forward",
            "batch_direct_gradient",
            "batch_chain_rule",
            "batch_closed_form_gradient",
        )
    },
}


def references(case) -> dict:
    ref = layer_reference(case)
    rms = layer_reference(case, centre=False)
    batch_ref = layer_reference(case)
    g0, b0 = float(case.gamma[0].real), float(case.beta[0])
    xhat = batch_ref["xhat"][0]
    unbiased = (ref["var"][0] * H / (H - 1), 2)
    dy = case.dy.astype(np.float64)
    dxhat = dy * g0
    dx_batch = (
        dxhat
        - dxhat.mean(axis=-1, keepdims=True)
        - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)
    ) * ref["rstd"][0]
    return {
        "dx_batch": (dx_batch, -1),
        "dgamma_batch": ((dy * xhat).sum(axis=-1), 0),
        "dbeta_batch": (dy.sum(axis=-1), 0),
        **ref,
        "mean_u": (ref["mean"][0], 0),
        "var_u": (ref["var"][0], 0),
        "var_unbiased": unbiased,
        "y_batch": (g0 * xhat + b0, 0),
        "y_rms": (rms["y"][0] - case.beta.astype(np.float64), 0),  # no beta
        "y_rms_plain": rms["xhat"],
        "dx_rms": rms["dx_without_mean_term"],
        "dgamma_rms": rms["dgamma"],
        "y_outside": layer_reference(case, eps_outside=True)["y"],
        "y_annotated": layer_reference(case, eps_outside=True, unbiased=True)["y"],
    }


PARAMS = [
    pytest.param(
        name,
        label,
        call,
        case,
        id=f"{name.removeprefix('lnlib.')}{f'[{label}]' if label else ''}-{case.name}",
    )
    for name, calls in FUNCTIONS.items()
    for label, call, takes_gamma in calls
    for case in CASES
    if takes_gamma or case.name != "complex gamma"
]


def exempt(name, case, table=None):
    """The page's exception for this function and input, or None."""
    entry = (table or exemptions()).get(name)
    return entry if entry and case.rules & entry["rules"] else None


@pytest.mark.parametrize(("name", "label", "call", "case"), PARAMS)
def test_promises(name, label, call, case):
    listed = exempt(name, case)
    if not listed or listed["only"]:
        check(name, label, call, case, skip=listed["only"] if listed else ())
        return
    try:  # the page says this function drops a rule this input tests: it may fail it, or not
        check(name, label, call, case)
    except AssertionError as exc:
        rules = " and ".join(str(r) for r in sorted(case.rules & listed["rules"]))
        pytest.xfail(f"api.md: {name} drops rule {rules} ({str(exc).splitlines()[0]})")


def check(name, label, call, case, skip=()):
    """The right result (results named in `skip` aside), or the right error; AssertionError
    otherwise."""
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # a warning is no answer: the result or the error is checked
        try:
            results, error = call(case), None
        except (TypeError, ValueError) as exc:
            results, error = None, exc
        except Exception as exc:  # noqa: BLE001 - anything else is the wrong kind of error
            raise AssertionError(f"{type(exc).__name__} instead of TypeError or ValueError: {exc}")
    if "constant" in case.name and f"{name}[{label}]".removesuffix("[]") in CONSTANT_ROW_IS_VALID:
        case = Case(case.name, case.rules, case.x, case.eps, case.gamma, case.beta, case.dy)
    if case.error:
        assert results is None, f"bad input ({case.name}) returned {results}"
        assert re.search(case.error, str(error)), f"the error does not name the problem: {error}"
        return
    refs = references(case)
    if results is None:
        # an error is a kept promise only where some result does not fit its dtype
        misfits = [k for k in refs if not representable(*refs[k], case.k, case.dtype)]
        assert misfits and re.search(OVERFLOW, str(error)), f"refused a valid input: {error}"
        return
    for key, got in results.items():
        if key in skip:
            continue
        value_u, power = refs[key]
        got = np.asarray(got)
        assert representable(value_u, power, case.k, got.dtype), (
            f"{key} does not fit {got.dtype.name}, and {name} returned it instead of raising: "
            f"{got.ravel()[:4]}"
        )
        expected = np.ldexp(value_u, power * case.k)
        actual = got.astype(np.float64)
        scale = float(np.max(np.abs(expected)))
        info = ml_dtypes.finfo(got.dtype) if got.dtype == BF16 else np.finfo(got.dtype)
        worst = float(np.max(np.abs(actual - expected))) if np.all(np.isfinite(actual)) else np.inf
        allowed = tolerance(got.dtype) * scale + 2 * float(info.smallest_subnormal)
        assert worst <= allowed, (
            f"{key}: max error {worst:.3g} against a scale of {scale:.3g} ({got.dtype.name})"
        )


def test_every_documented_function_is_covered():
    documented = documented_functions()
    assert documented == set(FUNCTIONS) | set(NOT_COMPUTING), (
        f"not covered: {sorted(documented - set(FUNCTIONS) - set(NOT_COMPUTING))}; "
        f"not documented: {sorted((set(FUNCTIONS) | set(NOT_COMPUTING)) - documented)}"
    )


def test_the_list_of_exceptions_names_covered_functions():
    table = exemptions()
    assert table, "api.md lists no exceptions to its rules"
    assert set(table) <= set(FUNCTIONS), sorted(set(table) - set(FUNCTIONS))
    assert all(entry["rules"] <= {1, 2, 3} for entry in table.values()), table


def test_the_page_says_the_textbook_kernel_is_the_readable_version():
    table = exemptions()
    for name in ("lnlib.textbook.numpy_layer_norm", "lnlib.textbook.numpy_layer_norm_backward"):
        assert table[name]["rules"] == {2, 3}, table.get(name)
    assert "readable" in API.read_text().split("Where these rules do not hold")[1].split("\n\n")[1]


def _first_line_of_example(path, capsys) -> tuple[str, str]:
    """The first line a page's first python block prints, run as a reader pastes it, and the
    page's text."""
    text = path.read_text()
    example = re.search(r"```python\n(.*?)\n```", text, re.S).group(1)
    exec(compile(example, path.name, "exec"), {})  # noqa: S102 (the page's own example)
    return capsys.readouterr().out.splitlines()[0], text


def test_the_pages_first_example_prints_what_the_page_says(capsys):
    """api.md's first code block, run as a reader pastes it: its printed first line is the one
    the page quotes (learner B: the example printed 28 of 53 with no word of why)."""
    first, text = _first_line_of_example(API, capsys)
    assert re.fullmatch(r"LayerNorm check, eps=1e-05: (\d+) of \1 checks passed", first), first
    assert f"It prints `{first}`" in text


def test_the_wheels_readme_example_prints_what_it_says(capsys):
    """lnlib/README.md, the wheel's own description (learner B: the wheel described itself with
    the repository's make targets), runs as a reader pastes it and prints its quoted first line."""
    first, text = _first_line_of_example(API.parent / "lnlib" / "README.md", capsys)
    assert re.fullmatch(r"RMSNorm check, eps=1e-06: (\d+) of \1 checks passed", first), first
    assert f"It prints `{first}`" in text
    assert 'readme = "lnlib/README.md"' in (API.parent / "pyproject.toml").read_text()


def test_the_pages_summary_of_check_rms_norm_names_every_parameter():
    """Learner B (2026-11-29, sixth): the summary line left out param_dtype and cast_before_gamma,
    and a skimmer took them not to exist."""
    from lnlib.harness import check_rms_norm

    line = re.search(r"^`check_rms_norm\((.*)\)`$", API.read_text(), re.M).group(1)
    named = [part.split("=")[0].strip() for part in line.split(",") if part.strip() != "*"]
    assert named == list(inspect.signature(check_rms_norm).parameters), named
