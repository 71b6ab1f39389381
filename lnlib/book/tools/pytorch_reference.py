"""What PyTorch computed on the chapters' own inputs, stored so every reader sees it, with or
without PyTorch.

The website is built without PyTorch, yet its chapters say that PyTorch agrees with lnlib. The
evidence is a small versioned data file: ``make references`` (PyTorch installed) runs every
:data:`CASES` entry on the inputs the chapter uses and writes

- ``lnlib/book/data/pytorch_reference.npz``: PyTorch's outputs, one array per call, and
- ``lnlib/book/data/pytorch_reference.json``: provenance (torch and numpy versions, date, command)
  and, per case, the chapter, the date its outputs were computed (kept while they stay
  bit-identical: :func:`case_dates`), the SHA-256 digest of every input and the calls made.

A chapter loads its case with :func:`pytorch_reference`, passing its own inputs: if they differ from
the ones PyTorch was given, it stops with an error that says to run ``make references``. It then
compares lnlib with the stored outputs through :func:`lnlib.compare`.
``tests/book/test_pytorch_reference.py`` re-runs every case when PyTorch is installed (CI installs
it) and fails if the stored file drifted.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Callable

import numpy as np

from ...harness import CheckReport, CheckResult, harness_inputs
from ..experiments.complete_examples import documents_batch, documents_embedding, documents_token
from ..experiments.numerics import mixed_precision_inputs, shifted_data
from ..factcheck.measurements import draw_inputs

__all__ = [
    "DATA",
    "PROVENANCE",
    "CASES",
    "Reference",
    "pytorch_reference",
    "stored_check_report",
    "run_cases",
    "digest",
    "case_dates",
    "write",
]

DATA = Path(__file__).parents[1] / "data" / "pytorch_reference.npz"
PROVENANCE = DATA.with_suffix(".json")
COMMAND = "make references"


def digest(array) -> str:
    """SHA-256 of an array's dtype, shape and bytes: equal only for bit-identical inputs."""
    array = np.ascontiguousarray(array)
    header = f"{array.dtype.str}{array.shape}".encode()
    return hashlib.sha256(header + array.tobytes()).hexdigest()


@dataclass(frozen=True)
class Case:
    """One chapter's PyTorch calls: the chapter's inputs, built as the chapter builds them, and the
    calls."""

    chapter: str
    inputs: Callable[[], dict]
    run: Callable  # (torch, **inputs) -> {label: array}


def _numpy(tensor) -> np.ndarray:
    return tensor.detach().numpy()


def _the_input(torch, acts):
    t = torch.tensor(acts)
    batch_norm = torch.nn.functional.batch_norm(
        t.transpose(1, 2), None, None, training=True, eps=1e-5
    )
    return {
        "nn.LayerNorm(4)": _numpy(torch.nn.LayerNorm(4, dtype=torch.float64)(t)),
        "nn.LayerNorm((3, 4))": _numpy(torch.nn.LayerNorm((3, 4), dtype=torch.float64)(t)),
        "F.batch_norm, (B, H, T)": _numpy(batch_norm.transpose(1, 2)),
    }


def _variance(torch, one_hot):
    t = torch.tensor(one_hot)
    annotated = (t - t.mean(-1, keepdim=True)) / (
        t.std(-1, keepdim=True) + 1e-6
    )  # as in the blog post
    return {
        "nn.LayerNorm(4)": _numpy(torch.nn.LayerNorm(4, dtype=torch.float64)(t)),
        "Annotated Transformer": _numpy(annotated),
        "torch.var (default)": _numpy(t.var()),
    }


def _epsilon(torch, near):
    adam = torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    return {
        "nn.LayerNorm(4).eps": np.float64(torch.nn.LayerNorm(4).eps),
        "optim.Adam eps": np.float64(adam.defaults["eps"]),
        "F.layer_norm, eps=1e-5": _numpy(
            torch.nn.functional.layer_norm(torch.tensor(near), (4,), eps=1e-5)
        ),
    }


def _normalizing(torch, x, eps):
    def ln(values, eps):
        return _numpy(
            torch.nn.functional.layer_norm(
                torch.from_numpy(values), values.shape[-1:], eps=float(eps)
            )
        )

    return {
        "F.layer_norm(x)": ln(x, eps),
        "F.layer_norm(x), eps=0": ln(x, 0.0),
        "F.layer_norm(-2x), eps=0": ln(-2 * x, 0.0),
    }


def _gamma_beta(torch):
    fresh = torch.nn.LayerNorm(8)  # the running token's H = 8
    return {
        "nn.LayerNorm(8).weight": _numpy(fresh.weight),
        "nn.LayerNorm(8).bias": _numpy(fresh.bias),
    }


def _complete_examples_inputs():
    rng = np.random.default_rng(0)  # the chapter draws gamma, beta for the examples in this order
    inputs = {}
    for name, x in (
        ("batch", documents_batch()),
        ("token", documents_token()),
        ("embedding", documents_embedding(seed=0)),
    ):
        size = x.shape[-1]
        inputs.update(
            {
                name: x,
                f"{name}_gamma": rng.normal(1, 0.5, size=size),
                f"{name}_beta": rng.normal(0, 0.5, size=size),
            }
        )
    return inputs


def _complete_examples(torch, **inputs):
    outputs = {}
    for name in ("batch", "token", "embedding"):
        x = inputs[name]
        module = torch.nn.LayerNorm(x.shape[-1], eps=1e-5, dtype=torch.float64)
        with torch.no_grad():
            module.weight.copy_(torch.from_numpy(inputs[f"{name}_gamma"]))
            module.bias.copy_(torch.from_numpy(inputs[f"{name}_beta"]))
            outputs[f"nn.LayerNorm: {name}"] = _numpy(module(torch.from_numpy(x)))
    return outputs


def _gradients_inputs():
    rng = np.random.default_rng(1)  # the chapter's order of draws
    x = rng.normal(2.0, 3.0, size=(5, 4))
    gamma = rng.uniform(0.5, 2.0, size=4) * np.array([1, -1, 1, 1])
    beta = rng.normal(size=4)
    return {
        "x": x,
        "gamma": gamma,
        "beta": beta,
        "dy": rng.normal(size=(5, 4)),
        "eps": np.float64(1e-3),
    }


def _gradients(torch, x, gamma, beta, dy, eps):
    tx, tg, tb = (torch.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    torch.nn.functional.layer_norm(tx, (4,), tg, tb, eps=float(eps)).backward(torch.from_numpy(dy))
    return {
        "dx: autograd": _numpy(tx.grad),
        "dgamma: autograd": _numpy(tg.grad),
        "dbeta: autograd": _numpy(tb.grad),
    }


def _family(torch, images, tokens):
    F, t = torch.nn.functional, torch.from_numpy
    return {
        "F.batch_norm": _numpy(F.batch_norm(t(images), None, None, training=True)),
        "F.instance_norm": _numpy(F.instance_norm(t(images))),
        "F.group_norm, 2 groups": _numpy(F.group_norm(t(images), 2)),
        "nn.RMSNorm(16)": _numpy(torch.nn.RMSNorm(16, eps=1e-6, dtype=torch.float64)(t(tokens))),
        "nn.LayerNorm(4).weight.shape": np.array(torch.nn.LayerNorm(4).weight.shape),
    }


def _numerics(torch, data, half):
    def ln(values):
        return _numpy(torch.nn.functional.layer_norm(torch.from_numpy(values), values.shape[-1:]))

    return {"F.layer_norm, float32": ln(data), "F.layer_norm, float16": ln(half)}


def _half_precision_inputs():
    rng = np.random.default_rng(0)  # the chapter's two float16 data sets, drawn in its order
    spread_300, shift_20 = rng.normal(size=(8, 256)) * 300, rng.normal(size=(8, 256)) + 20
    return {"spread_300": spread_300.astype(np.float16), "shift_20": shift_20.astype(np.float16)}


def _half_precision(torch, spread_300, shift_20):
    def ln(half):
        return _numpy(torch.nn.functional.layer_norm(torch.from_numpy(half), half.shape[-1:]))

    return {
        "F.layer_norm, float16: spread 300": ln(spread_300),
        "F.layer_norm, float16: shift 20": ln(shift_20),
    }


#: CPU thread counts the mixed-precision backward runs at: PyTorch's dbeta depends on them
MIXED_PRECISION_THREADS = (1, 2, 4)


def _mixed_precision(torch, x, dy, gamma):
    """F.layer_norm's dbeta for float16 and bfloat16 x, float32 gamma and beta, per thread count;
    what autocast keeps in float32; LayerNorm's bias.grad under CPU autocast's default dtype
    (bfloat16: the truth audit, 2026-12-01, found the float16 runs alone left it out)."""
    F, before, outputs = torch.nn.functional, torch.get_num_threads(), {}
    try:
        for threads in MIXED_PRECISION_THREADS:
            torch.set_num_threads(threads)
            for name, dtype in (("", torch.float16), ("bfloat16 x, ", torch.bfloat16)):
                tx = torch.from_numpy(x.astype(np.float32)).to(dtype).requires_grad_()
                tg = torch.from_numpy(gamma).requires_grad_()
                tb = torch.zeros_like(tg, requires_grad=True)
                grad = torch.from_numpy(dy.astype(np.float32)).to(dtype)
                F.layer_norm(tx, x.shape[-1:], tg, tb).backward(grad)
                label = f"F.layer_norm backward, {name}{threads} CPU thread(s): dbeta"
                outputs[label] = _numpy(tb.grad)
        torch.set_num_threads(1)
        # every row, under autocast with no dtype named: a CPU's default, bfloat16
        outputs["autocast(), 1 CPU thread: LayerNorm bias.grad"] = _autocast_bias_grad(torch, x)
    finally:
        torch.set_num_threads(before)
    return outputs | _autocast_float16(torch, x[:4])


def _identity_then_norm(torch, size: int):
    """An identity Linear, so the norm's input is x as autocast casts it, and a LayerNorm."""
    linear, norm = torch.nn.Linear(size, size), torch.nn.LayerNorm(size)
    with torch.no_grad():
        linear.weight.copy_(torch.eye(size)), linear.bias.zero_()
    return linear, norm


def _autocast_bias_grad(torch, x):
    linear, norm = _identity_then_norm(torch, x.shape[-1])
    with torch.autocast("cpu"):
        norm(linear(torch.from_numpy(x.astype(np.float32)))).float().sum().backward()
    return _numpy(norm.bias.grad)


def _autocast_float16(torch, x):
    """The dtypes under CPU autocast(float16): the norm's input, its weight, its bias.grad."""
    linear, norm = _identity_then_norm(torch, x.shape[-1])
    with torch.autocast("cpu", dtype=torch.float16):
        h = linear(torch.from_numpy(x.astype(np.float32)))
        norm(h).float().sum().backward()
    return {
        "autocast(float16): LayerNorm input": _numpy(h),
        "autocast(float16): LayerNorm weight": _numpy(norm.weight),
        "autocast(float16): LayerNorm bias.grad": _numpy(norm.bias.grad),
    }


def _check_inputs():
    """lnlib.harness's default inputs, all in one float64 vector: its digest changes when any of
    them does."""
    arrays = [
        a.astype(np.float64).ravel()
        for inputs in harness_inputs().values()
        for a in inputs.values()
    ]
    return {"harness_inputs": np.concatenate(arrays)}


#: The CPU threads PyTorch's run of the harness uses (chapter "Check your own LayerNorm").
CHECK_THREADS = 1

#: The stored check report's two arrays: each check's "part / case / dtype" (UTF-8, one a line), its
#: ratio.
CHECK_LABELS, CHECK_RATIOS = "labels, utf-8, one per line", "ratios"


def _check(torch, harness_inputs):
    from ...harness import (  # runs PyTorch on exactly the inputs digested above
        check_layer_norm,
        torch_layer_norm,
    )

    # one CPU thread: the 16-bit dgamma and dbeta depend on how PyTorch splits the rows among its
    # threads (chapter "Computing it right: numerics"), and the stored ratios must not
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(CHECK_THREADS)
        report = check_layer_norm(*torch_layer_norm())
    finally:
        torch.set_num_threads(before)
    labels = "\n".join(f"{r.part} / {r.case} / {r.dtype}" for r in report.results)
    # two arrays, not one per check: a hundred small entries would make the file mostly zip headers
    return {
        CHECK_LABELS: np.frombuffer(labels.encode("utf-8"), dtype=np.uint8).copy(),
        CHECK_RATIOS: np.array([r.ratio for r in report.results], dtype=np.float64),
    }


def _fact_check(torch, samples):
    module = torch.nn.LayerNorm(4)
    xhat = _numpy(torch.nn.functional.layer_norm(torch.from_numpy(samples), (4,), eps=0.0))
    return {  # the samples are 20000 x 4: store their covariance, not the 640 kB of x-hat
        "nn.LayerNorm(4).weight.shape": np.array(module.weight.shape),
        "nn.LayerNorm(4).bias.shape": np.array(module.bias.shape),
        "Cov of F.layer_norm, eps=0": np.cov(xhat, rowvar=False),
    }


#: Case name -> the chapter it serves, its inputs (built exactly as the chapter builds them) and its
#: PyTorch calls.
CASES = MappingProxyType(
    {
        "the_input": Case(
            "02_the_input",
            lambda: {"acts": np.random.default_rng(2).normal(size=(2, 3, 4))},
            _the_input,
        ),
        "variance": Case(
            "04_variance", lambda: {"one_hot": np.array([1.0, 0.0, 0.0, 0.0])}, _variance
        ),
        "epsilon": Case(
            "05_epsilon", lambda: {"near": np.array([1.0, 1.001, 0.999, 1.0])}, _epsilon
        ),
        "normalizing": Case(
            "06_normalizing",
            lambda: {"x": documents_batch(), "eps": np.float64(1e-5)},
            _normalizing,
        ),
        "gamma_beta": Case("07_gamma_beta", dict, _gamma_beta),
        "complete_examples": Case(
            "08_complete_examples", _complete_examples_inputs, _complete_examples
        ),
        "gradients": Case("09_gradients", _gradients_inputs, _gradients),
        "family": Case(
            "10_family",
            lambda: {
                "images": np.random.default_rng(0).normal(loc=1.0, scale=2.0, size=(4, 6, 2, 2)),
                "tokens": np.random.default_rng(4).normal(size=(64, 16)),
            },
            _family,
        ),
        "numerics": Case(
            "13_numerics",
            lambda: {
                "data": shifted_data(1e4, "float32", rows=8, size=256, seed=0),
                "half": shifted_data(500.0, "float16", rows=8, size=256, seed=0),
            },
            _numerics,
        ),
        "half_precision": Case("13_numerics", _half_precision_inputs, _half_precision),
        "mixed_precision": Case(
            "13_numerics",
            lambda: dict(zip(("x", "dy", "gamma"), mixed_precision_inputs())),
            _mixed_precision,
        ),
        "check_your_own": Case(
            "16_check_your_own", _check_inputs, _check
        ),  # a summary: the harness's error ratios
        "fact_check": Case(
            "17_fact_check", lambda: {"samples": draw_inputs("normal", 4, 20000, 3)}, _fact_check
        ),
    }
)


def run_cases(torch) -> tuple[dict, dict]:
    """Run every case with the given torch module:
    ``({case: {label: array}}, {case: {input: digest}})``."""
    outputs, digests = {}, {}
    for name, case in CASES.items():
        inputs = case.inputs()
        outputs[name] = {
            label: np.asarray(value) for label, value in case.run(torch, **inputs).items()
        }
        digests[name] = {key: digest(value) for key, value in inputs.items()}
    return outputs, digests


def case_dates(outputs: dict, digests: dict, previous: dict, stored, today: str) -> dict:
    """Per case, the date PyTorch computed its stored outputs: the previous date where inputs, calls
    and outputs are unchanged, else `today`.

    So re-running ``make references`` to add a case does not re-date the others' evidence (every
    chapter prints its case's date). `previous` is the provenance written before (``{}`` if none),
    `stored` the data written before (a mapping of ``"case::label"`` to array).
    """
    dates = {}
    for case, results in outputs.items():
        before = previous.get("cases", {}).get(case)
        same = (
            before is not None
            and before["inputs"] == digests[case]
            and before["outputs"] == list(results)
            and all(
                f"{case}::{label}" in stored and digest(stored[f"{case}::{label}"]) == digest(value)
                for label, value in results.items()
            )
        )
        dates[case] = before.get("date", previous.get("date")) if same else today
    return dates


def write(torch, command: str = COMMAND) -> None:
    """Run every case and write the data file and its provenance (what ``make references`` does)."""
    outputs, digests = run_cases(torch)
    today = datetime.date.today().isoformat()
    previous = _load_provenance() if PROVENANCE.exists() else {}
    with np.load(DATA) if DATA.exists() else contextlib.nullcontext({}) as stored:
        dates = case_dates(outputs, digests, previous, stored, today)
    arrays = {
        f"{case}::{label}": value
        for case, results in outputs.items()
        for label, value in results.items()
    }
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **arrays)
    provenance = {
        "torch": torch.__version__.split("+")[0],
        "numpy": np.__version__,
        "date": today,
        "command": command,
        "cases": {
            case: {
                "chapter": CASES[case].chapter,
                "date": dates[case],
                "inputs": digests[case],
                "outputs": list(outputs[case]),
            }
            for case in CASES
        },
    }
    PROVENANCE.write_text(
        json.dumps(provenance, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


@dataclass(frozen=True)
class Reference:
    """PyTorch's stored outputs for one case: ``ref[label]`` is an array; ``str(ref)`` says who
    computed them."""

    case: str
    torch_version: str
    date: str
    command: str
    outputs: MappingProxyType

    def __getitem__(self, label: str) -> np.ndarray:
        if label not in self.outputs:
            raise KeyError(
                f"no PyTorch output {label!r} stored for case {self.case!r}; stored: "
                f"{list(self.outputs)}."
            )
        return self.outputs[label]

    def __str__(self) -> str:
        return f"PyTorch {self.torch_version} computed (on {self.date}, by `{self.command}`):"

    def agreement(self, *comparisons) -> str:
        """One line for `comparisons` with this case's outputs (chapters 04 to 08, after chapter
        02's full table).

        The book shows PyTorch's comparison table in full once, in chapter "The input x"; later
        chapters print this line and link there.

        Parameters
        ----------
        *comparisons : lnlib.compare.Comparison
            The results of ``lnlib.compare(..., show=False)`` against this reference's outputs.

        Returns
        -------
        str
            For example ``"PyTorch 2.13.0: 3 of 3 allclose, 1 exact, max |diff| 2.2e-16"``.
        """
        if not comparisons:
            raise ValueError("agreement needs at least one comparison.")
        close = sum(c.close for c in comparisons)
        exact = sum(c.exact for c in comparisons)
        worst = max(c.max_abs_diff for c in comparisons)
        return (
            f"PyTorch {self.torch_version}: {close} of {len(comparisons)} allclose,"
            f" {exact} exact, max |diff| {worst:.1e}"
        )


def _load_provenance() -> dict:
    return json.loads(PROVENANCE.read_text(encoding="utf-8"))


def pytorch_reference(case: str, **inputs) -> Reference:
    """PyTorch's outputs for `case`, after checking that `inputs` are the ones PyTorch was given.

    Parameters
    ----------
    case : str
        A key of :data:`CASES` (e.g. ``"the_input"`` for the chapter "The input").
    **inputs : array_like
        The chapter's inputs, by the names of the case.

    Returns
    -------
    Reference

    Raises
    ------
    ValueError
        For an unknown case, missing or extra inputs, or an input that is not bit-identical to the
        one PyTorch was given (then the chapter changed: run ``make references``).
    """
    provenance = _load_provenance()
    if case not in provenance["cases"]:
        raise ValueError(f"case must be one of {list(provenance['cases'])}; got {case!r}.")
    stored = provenance["cases"][case]
    if set(inputs) != set(stored["inputs"]):
        raise ValueError(
            f"case {case!r} takes the inputs {sorted(stored['inputs'])}; got {sorted(inputs)}."
        )
    changed = [key for key, value in inputs.items() if digest(value) != stored["inputs"][key]]
    if changed:
        raise ValueError(
            f"the inputs {changed} of case {case!r} differ from the ones PyTorch was given: if "
            "the chapter changed them on purpose, change lnlib.book.tools.pytorch_reference.CASES "
            f"to match and run `{COMMAND}`."
        )
    with np.load(DATA) as data:
        outputs = {label: data[f"{case}::{label}"] for label in stored["outputs"]}
    return Reference(
        case,
        provenance["torch"],
        stored.get("date", provenance["date"]),
        provenance["command"],
        MappingProxyType(outputs),
    )


def stored_check_report(harness_inputs) -> tuple[Reference, CheckReport]:
    """PyTorch's :func:`lnlib.harness.check_layer_norm` report, rebuilt from the stored error ratios
    (chapter "Check your own LayerNorm").

    Parameters
    ----------
    harness_inputs : ndarray
        lnlib.harness's default inputs as one float64 vector (what the case ``"check_your_own"`` was
        given).

    Returns
    -------
    (Reference, CheckReport)
        Who computed the ratios, and the report they make: each check's worst error over its budget
        (the details of a failure are not stored; run ``check_layer_norm(*torch_layer_norm())`` for
        them).
    """
    stored = pytorch_reference("check_your_own", harness_inputs=harness_inputs)
    labels = bytes(stored[CHECK_LABELS]).decode("utf-8").split("\n")
    ratios = stored[CHECK_RATIOS]
    results = tuple(
        CheckResult(*label.split(" / "), float(ratio))
        for label, ratio in zip(labels, ratios, strict=True)
    )
    dtypes = tuple(dict.fromkeys(r.dtype for r in results))
    return stored, CheckReport(results, dtypes, 1e-5)


if __name__ == "__main__":  # make references
    import torch

    torch.use_deterministic_algorithms(True)
    write(torch, command=" ".join(sys.argv[1:]) or COMMAND)
    print(
        f"wrote {DATA.name} ({DATA.stat().st_size / 1024:.1f} kB) and {PROVENANCE.name} with torch "
        f"{torch.__version__}"
    )
