"""Chapter 09's exercises (chapters/09_gradients.ipynb): dγ by hand, the atomic backward pass, what
ε leaves over, RMSNorm's dx, and dγ from what a kernel saved."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.backward import backward_parts, layer_norm_backward
from lnlib.book.exercises.chapter import (
    BACKWARD_PASSES,
    Exercises,
    asks_for,
    domain,
    forbidding,
    redrawn,
    variant,
)
from lnlib.book.exercises.feedback import Exercise
from lnlib.rms import rms_backward_parts, rms_norm_backward

#: The ε of exercises 1 and 2, and of exercise 3, as their questions give them.
EPS = 1e-5
EPS_3 = 1e-3
MISSING_EPS = "ε is missing: x̂ divides by sqrt(σ² + ε), with ε = 1e-5"
H_MINUS_1 = "that uses the variance with H - 1 (ddof=1); LayerNorm's σ² divides by H"


def _xhat_ddof1(x, eps: float):
    """x̂ row by row as a reader who divides the variance by H - 1 computes it."""
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps)


def _batch(rng: np.random.Generator, *names: str) -> dict:
    """Rows of features under each of `names` (one shape), and ``ge``, a γ for them, when named."""
    shape = (int(rng.integers(2, 5)), int(rng.integers(3, 7)))
    data = {name: rng.normal(size=shape) for name in names if name != "ge"}
    return data | ({"ge": rng.normal(size=shape[1])} if "ge" in names else {})


def _vector(rng: np.random.Generator, *names: str, scale: float = 1.0) -> dict:
    """One vector of features under each of `names`, the first at `scale`."""
    size = int(rng.integers(3, 7))
    return {name: rng.normal(size=size) * (scale if k == 0 else 1) for k, name in enumerate(names)}


def _saved(rng: np.random.Generator) -> dict:
    """Exercise 5's domain: rows, their upstream gradient, and the σ = sqrt(mean(x²)) of each
    row."""
    data = _batch(rng, "xk", "dyk")
    return data | {"saved": np.sqrt((data["xk"] ** 2).mean(axis=-1))}


#: The values the website's upstream gradients take (halves from -1 to 2), and its γ's.
HALVES = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
GAINS = np.array([-1.0, -0.5, 0.5, 1.0, 1.5, 2.0])


def _batch_of_integers(rng: np.random.Generator) -> dict:
    """Exercise 1's data as a student gets them: three rows of four small integers, none
    constant, and an upstream gradient of halves."""
    while True:
        xe = rng.integers(-3, 10, size=(3, 4)).astype(float)
        if np.all(xe.std(axis=-1) > 0):
            return {"xe": xe, "dye": rng.choice(HALVES, size=(3, 4))}


def _with_gamma(rng: np.random.Generator) -> dict:
    """Exercise 2's data as a student gets them: exercise 1's kind of batch and gradient, and a γ
    of nonzero halves from -1 to 2."""
    return _batch_of_integers(rng) | {"ge": rng.choice(GAINS, size=4)}


def _tiny_vector(rng: np.random.Generator) -> dict:
    """Exercise 3's data as a student gets them: four hundredths, not all equal (a variance below
    ε = 1e-3), and an upstream gradient of halves."""
    while True:
        xs = rng.integers(-3, 4, size=4) / 100
        if xs.std() > 0:
            return {"xs": xs, "dys": rng.choice(HALVES, size=4)}


def _rms_vector(rng: np.random.Generator) -> dict:
    """Exercise 4's data as a student gets them: four small integers, not all equal (ε = 0: its
    LayerNorm mistake needs a spread), an upstream gradient of halves and a positive γ of halves."""
    while True:
        x4 = rng.integers(-3, 4, size=4).astype(float)
        if x4.std() > 0:
            dy4 = rng.choice(HALVES, size=4)
            return {"x4": x4, "dy4": dy4, "g4": rng.integers(1, 5, size=4) / 2}


def _rows_of_whole_sigma() -> np.ndarray:
    """Every row of four integers from -5 to 5 whose σ = sqrt(mean(x²)) is 1, 2 or 3."""
    values = np.arange(-5, 6)
    rows = np.stack(np.meshgrid(values, values, values, values, indexing="ij"), -1).reshape(-1, 4)
    squares = (rows**2).sum(axis=-1)
    return rows[np.isin(squares, [4, 16, 36])].astype(float)


def _kernel_rows(rng: np.random.Generator) -> dict:
    """Exercise 5's data as a student gets them: three rows of integers whose σ are whole numbers
    (as the website's 1, 2, 2), not all the same, their upstream gradient of halves and the σ the
    kernel saved."""
    while True:
        xk = rng.choice(_rows_of_whole_sigma(), size=3)
        saved = np.sqrt((xk**2).mean(axis=-1)).round()  # whole numbers, as the website's
        if np.ptp(saved) > 0:  # not one σ for every row: dividing by it must matter row by row
            return {"xk": xk, "dyk": rng.choice(HALVES, size=(3, 4)), "saved": saved}


@forbidding("lnlib", "torch", "jax")
@variant(lambda rng: redrawn(rng, _batch_of_integers, dgamma_by_hand, MISSING_EPS))
@domain(lambda rng: _batch(rng, "xe", "dye"))
def dgamma_by_hand(xe, dye) -> Exercise:
    """Exercise 1: dL/dγ for the batch `xe` and upstream gradient `dye` (ε = 1e-5), one value per
    feature."""
    xe, dye = np.asarray(xe, dtype=np.float64), np.asarray(dye, dtype=np.float64)
    xhat = lnlib.layer_norm(xe, eps=EPS)
    per_sample = (dye * xhat).sum(axis=-1)
    return Exercise(
        layer_norm_backward(dye, xe, eps=EPS)[1],
        rtol=1e-9,
        hint=(
            "xhat = (xe - mean) / sqrt(var + 1e-5) row by row; then sum dye * xhat over the "
            "samples, axis=0."
        ),
        mistakes={
            "that sums over the features (axis=-1), one value per sample, as the documents do; "
            "each γ_i collects dye * x̂ from every sample at its own feature: "
            "sum over axis=0": per_sample,
            "that is dye * x̂ for every sample; γ is shared by the samples, so sum it over "
            "them (axis=0)": dye * xhat,
            "that is dβ, the sum of dye alone; dγ weights each dye by its x̂": dye.sum(axis=0),
            MISSING_EPS: (dye * lnlib.layer_norm(xe, eps=0)).sum(axis=0),
            H_MINUS_1: (dye * _xhat_ddof1(xe, EPS)).sum(axis=0),
        },
    )


@asks_for("derivation")
@forbidding("lnlib", "torch", "jax", "sympy")
@variant(lambda rng: redrawn(rng, _with_gamma, atomic_backward_dx, MISSING_EPS))
@domain(lambda rng: _batch(rng, "xe", "dye", "ge"))
def atomic_backward_dx(xe, dye, ge) -> Exercise:
    """Exercise 2: dL/dx for `xe`, `dye` and γ = `ge` (ε = 1e-5), computed node by node."""
    xe, dye = np.asarray(xe, dtype=np.float64), np.asarray(dye, dtype=np.float64)
    parts = backward_parts(dye, xe, ge, eps=EPS)
    without_gamma = layer_norm_backward(dye, xe, eps=EPS)[0]
    return Exercise(
        layer_norm_backward(dye, xe, ge, eps=EPS)[0],
        rtol=1e-9,
        hint=(
            "Go through the forward pass in reverse, one node at a time; xmu reaches the loss by "
            "two paths (through xhat directly, and through var, then std), and mu through xmu "
            "alone."
        ),
        mistakes={
            "the mean's path is missing: x also reaches x̂ through mu, so dx = dxmu + dmu / H "
            "with dmu = -sum(dxmu)": parts.dx - parts.through_mean,
            "the variance's path is missing: dxmu also gets 2 xmu dvar / H through var": (
                parts.dx - parts.through_var
            ),
            "the variance's path has the wrong sign: a larger std shrinks x̂, so "
            "dstd = -sum(dxhat * xmu) / std**2": parts.dx - 2 * parts.through_var,
            "γ is missing: the gradient reaching x̂ is dxhat = dye * ge": without_gamma,
            MISSING_EPS: layer_norm_backward(dye, xe, ge, eps=0)[0],
        },
    )


def _leftover_terms(x, dy, eps: float, ddof: int = 0):
    """H, mean(dx̂ x̂), s and ε/(σ² + ε): the formula's terms for x̂ᵀdx (γ = 1), σ² with `ddof`."""
    var = x.var(ddof=ddof)
    s = np.sqrt(var + eps)
    return x.size, np.mean(dy * (x - x.mean()) / s), s, eps / (var + eps)


def _leftover(x, dy, eps: float, ddof: int = 0) -> float:
    """x̂ᵀdx by the formula H mean(dx̂ x̂) ε / (s (σ² + ε)), σ² with `ddof`."""
    size, mean_term, s, factor = _leftover_terms(x, dy, eps, ddof)
    return size * mean_term / s * factor


@forbidding(*BACKWARD_PASSES)
@variant(lambda rng: redrawn(rng, _tiny_vector, leftover_along_xhat))
@domain(lambda rng: _vector(rng, "xs", "dys", scale=0.02))
def leftover_along_xhat(xs, dys) -> Exercise:
    """Exercise 3: x̂ᵀdx for the tiny input `xs`, dy = `dys`, γ = 1 and ε = 1e-3, predicted by the
    formula."""
    xs, dys = np.asarray(xs, dtype=np.float64), np.asarray(dys, dtype=np.float64)
    parts = backward_parts(dys, xs, eps=EPS_3)
    size, mean_term, s, factor = _leftover_terms(xs, dys, EPS_3)
    default_eps = _leftover(xs, dys, EPS)
    return Exercise(
        float(parts.dx @ parts.xhat),
        hint=(
            "xhat = (xs - mean) / s with s = sqrt(var + 1e-3); mean(dxhat * xhat) with dxhat = "
            "dys; then the formula."
        ),
        mistakes={
            "0 is x̂ᵀdx for ε = 0; with ε = 1e-3 against a variance this small, a part along x̂ "
            "is left over": 0.0,
            "the factor ε/(σ² + ε) is missing": size * mean_term / s,
            "the formula has H times the mean, H mean(dx̂ x̂), that is the sum": (
                mean_term / s * factor
            ),
            "that uses ε = 1e-5, lnlib's default; this exercise's ε is 1e-3": default_eps,
            H_MINUS_1: _leftover(xs, dys, EPS_3, ddof=1),
        },
    )


@asks_for("derivation")
@forbidding("lnlib", "torch", "jax", "sympy")
@variant(lambda rng: redrawn(rng, _rms_vector, rms_dx_by_hand))
@domain(lambda rng: _vector(rng, "x4", "dy4", "g4"))
def rms_dx_by_hand(x4, dy4, g4) -> Exercise:
    """Exercise 4: RMSNorm's dL/dx for the vector `x4`, dy = `dy4` and γ = `g4`, with ε = 0."""
    x4, dy4 = np.asarray(x4, dtype=np.float64), np.asarray(dy4, dtype=np.float64)
    parts = rms_backward_parts(dy4, x4, g4, eps=0.0)
    return Exercise(
        parts.dx,
        hint=(
            "rstd = 1 / sqrt(mean(x4**2)), xhat = x4 * rstd, dxhat = g4 * dy4; RMSNorm's x "
            "reaches xhat by two paths, not three."
        ),
        mistakes={
            "the mean square's path is missing: rstd · dx̂ alone is the direct term; subtract "
            "x̂ · mean(dx̂ · x̂) before scaling by rstd": parts.direct,
            "that is LayerNorm's dx, with mean(dx̂) subtracted and x̂ centred; RMSNorm never "
            "subtracts a mean, so its dx has no such term": layer_norm_backward(
                dy4, x4, g4, eps=0.0
            )[0],
            "γ is missing: the gradient reaching x̂ is dx̂ = g4 * dy4": rms_norm_backward(
                dy4, x4, eps=0.0
            )[0],
            "the mean square's term has the wrong sign: a larger mean square shrinks x̂, so it is "
            "subtracted": parts.direct - parts.through_ms,
        },
    )


@forbidding("lnlib", "torch", "jax")
@variant(lambda rng: redrawn(rng, _kernel_rows, dgamma_from_saved))
@domain(_saved)
def dgamma_from_saved(xk, dyk, saved) -> Exercise:
    """Exercise 5: RMSNorm's dL/dγ for `xk`, `dyk` from the σ = sqrt(mean(x²) + ε) a kernel saved
    per row (`saved`, one entry per row)."""
    xk, dyk = np.asarray(xk, dtype=np.float64), np.asarray(dyk, dtype=np.float64)
    saved = np.asarray(saved, dtype=np.float64).reshape(-1, 1)  # a column: one σ per row
    centred = xk - xk.mean(axis=-1, keepdims=True)
    return Exercise(
        rms_norm_backward(dyk, xk, rstd=1 / saved)[1],
        hint="The backward pass rebuilds x̂ from x and the saved number of its row; read what that "
        "number is, then sum dyk * x̂ over the right axis.",
        mistakes={
            "that multiplies x by the saved number as if it were rstd; this kernel saved σ, so "
            "x̂ = x / σ": (dyk * xk * saved).sum(axis=0),
            "that sums over the features (axis=-1), one value per row; each γ_i collects dyk · x̂ "
            "from every row at its own feature": (dyk * xk / saved).sum(axis=-1),
            "that centres x first, as LayerNorm does; RMSNorm's x̂ is x / σ with no mean "
            "subtracted": (dyk * centred / saved).sum(axis=0),
            "that is the sum of dyk alone, LayerNorm's dβ; RMSNorm has no β, and dγ weights each "
            "dyk by its x̂": dyk.sum(axis=0),
            "x is not normalized: dγ sums dyk · x̂, with x̂ = x / σ": (dyk * xk).sum(axis=0),
        },
    )


exercises = Exercises(
    "09_gradients",
    dgamma_by_hand,
    atomic_backward_dx,
    leftover_along_xhat,
    rms_dx_by_hand,
    dgamma_from_saved,
)
