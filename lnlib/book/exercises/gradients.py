"""Chapter 09's exercises (chapters/09_gradients.ipynb): dγ from the data, the atomic backward pass,
what ε leaves over, the backward pass of a norm the chapter does not derive (each student's own),
and dγ from what a kernel saved."""

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
    held_back,
    redrawn,
    rests_on,
    variant,
)
from lnlib.book.exercises.feedback import Exercise
from lnlib.rms import rms_norm_backward

#: The ε of exercises 1 and 2, and of exercise 3, as their questions give them.
EPS = 1e-5
EPS_3 = 1e-3
MISSING_EPS = "ε is missing: x̂ divides by sqrt(σ² + ε), with ε = 1e-5"
H_MINUS_1 = "that uses the variance with H - 1 (ddof=1); LayerNorm's σ² divides by H"
#: Exercise 1's answer with every sign flipped: x̂ centred as mean - x, or a minus sign in the sum.
SIGN_FLIPPED = (
    "every entry has the wrong sign: x̂ centres each row as xe - mean (not mean - xe), and dγ "
    "adds up dye * x̂ with no minus sign"
)


#: The chapter's running example (its first code cell): three tokens of H = 4 features and their
#: upstream gradient, which a reader of exercise 1 may reuse in place of the exercise's own.
RUNNING_X = np.array([[0.4, -0.9, 0.2, 5.1], [-0.3, 0.8, 1.1, -0.6], [1.2, -0.4, 0.3, 0.7]])
RUNNING_DY = np.array([[0.3, -0.2, 0.1, 0.4], [-0.5, 0.2, 0.3, 0.1], [0.1, 0.4, -0.3, -0.1]])


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


#: The ε of exercise 5's kernel: large enough that σ recomputed without it differs from the saved σ
#: in the digits the exercise asks for.
SAVED_EPS = 0.01


def _sigma(xk) -> np.ndarray:
    """What exercise 5's kernel saved: σ = sqrt(mean(x²) + ε) of each row, ε = :data:`SAVED_EPS`."""
    return np.sqrt((np.asarray(xk) ** 2).mean(axis=-1) + SAVED_EPS)


def _saved(rng: np.random.Generator) -> dict:
    """Exercise 5's domain: rows, their upstream gradient, and the σ the kernel saved per row."""
    data = _batch(rng, "xk", "dyk")
    return data | {"saved": _sigma(data["xk"])}


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


def _rows_of_whole_sigma() -> np.ndarray:
    """Every row of four integers from -5 to 5 whose σ = sqrt(mean(x²)) is 1, 2 or 3."""
    values = np.arange(-5, 6)
    rows = np.stack(np.meshgrid(values, values, values, values, indexing="ij"), -1).reshape(-1, 4)
    squares = (rows**2).sum(axis=-1)
    return rows[np.isin(squares, [4, 16, 36])].astype(float)


def _kernel_rows(rng: np.random.Generator) -> dict:
    """Exercise 5's data as a student gets them: three rows of integers whose root mean squares are
    whole numbers (as the website's 1, 2, 2), not all the same, their upstream gradient of halves
    and the σ the kernel saved (:func:`_sigma`)."""
    while True:
        xk = rng.choice(_rows_of_whole_sigma(), size=3)
        if np.ptp((xk**2).mean(axis=-1)) > 0:  # not one σ for every row: it must matter row by row
            return {"xk": xk, "dyk": rng.choice(HALVES, size=(3, 4)), "saved": _sigma(xk)}


@rests_on("dβ and dγ first")
@forbidding("lnlib", "torch", "jax")
@variant(lambda rng: redrawn(rng, _batch_of_integers, dgamma_by_hand, MISSING_EPS))
@domain(lambda rng: _batch(rng, "xe", "dye"))
def dgamma_by_hand(xe, dye) -> Exercise:
    """Exercise 1: dL/dγ for the batch `xe` and upstream gradient `dye` (ε = 1e-5), one value per
    feature."""
    xe, dye = np.asarray(xe, dtype=np.float64), np.asarray(dye, dtype=np.float64)
    xhat = lnlib.layer_norm(xe, eps=EPS)
    per_sample = (dye * xhat).sum(axis=-1)
    dgamma = layer_norm_backward(dye, xe, eps=EPS)[1]
    return Exercise(
        dgamma,
        rtol=1e-9,
        hint=(
            "xhat = (xe - mean) / sqrt(var + 1e-5) row by row; then sum dye * xhat over the "
            "samples, axis=0."
        ),
        mistakes={
            "that sums over the features (axis=-1), one value per sample, a common mistake; "
            "each γ_i collects dye * x̂ from every sample at its own feature: "
            "sum over axis=0": per_sample,
            "that is dye * x̂ for every sample; γ is shared by the samples, so sum it over "
            "them (axis=0)": dye * xhat,
            "that is dβ, the sum of dye alone; dγ weights each dye by its x̂": dye.sum(axis=0),
            "that averages dye * x̂ over the samples; γ's gradient is their sum": (dye * xhat).mean(
                axis=0
            ),
            "that weights dye by the raw input xe; γ multiplies the normalized x̂, so dγ "
            "weights dye by x̂": (dye * xe).sum(axis=0),
            "that weights dye by the centred input xe - mean, not yet divided by the standard "
            "deviation": (dye * (xe - xe.mean(axis=-1, keepdims=True))).sum(axis=0),
            MISSING_EPS: (dye * lnlib.layer_norm(xe, eps=0)).sum(axis=0),
            H_MINUS_1: (dye * _xhat_ddof1(xe, EPS)).sum(axis=0),
            "that normalizes each feature over the samples (axis=0), as BatchNorm does; "
            "LayerNorm's x̂ takes the mean and variance of each row, axis=-1": (
                dye * lnlib.layer_norm(xe.T, eps=EPS).T
            ).sum(axis=0),
            "that is dγ of the chapter's running example, x and dy; this exercise's data are xe "
            "and dye": layer_norm_backward(RUNNING_DY, RUNNING_X, eps=EPS)[1],
            # the whole gradient's sign (a single entry's sign is a slip: the count of wrong
            # entries names that)
            SIGN_FLIPPED: -dgamma,
        },
    )


@rests_on("dx by hand, then node by node")
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
            "that is dxhat = dye * ge, the gradient reaching x̂; go on back through the "
            "division by std and the subtraction of mu": dye * np.asarray(ge, dtype=np.float64),
            "that is the direct path alone, dxhat / std: the paths through mu and through var "
            "are missing": parts.direct,
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


@rests_on("The Jacobian")
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
            "the factor H/s is missing: x̂ᵀdx is (H/s) mean(dx̂ x̂) ε/(σ² + ε)": mean_term * factor,
            "the division by s is missing: dx carries 1/s": size * mean_term * factor,
            "the formula has H times the mean, H mean(dx̂ x̂), that is the sum": (
                mean_term / s * factor
            ),
            "that uses ε = 1e-5, lnlib's default; this exercise's ε is 1e-3": default_eps,
            H_MINUS_1: _leftover(xs, dys, EPS_3, ddof=1),
        },
    )


#: Exercise 4's norms, none derived in the chapter: each divides a row by a statistic of it (ε
#: outside any root) and multiplies by one scalar gain g. The website shows the first; a student
#: draws one of the others (:data:`STUDENT_NORMS`), so the website's solution solves no student's.
OTHER_NORMS = {
    "mad": "g (x - mean) / (mean|x - mean| + ε), the mean absolute deviation",
    "eps_outside": "g (x - mean) / (σ + ε), ε outside the root",
    "rms_eps_outside": "g x / (sqrt(mean(x²)) + ε), ε outside the root",
    "scalenorm": "g x / ||x||, ScaleNorm, no ε",
}
WEBSITE_NORM, STUDENT_NORMS = "mad", ("eps_outside", "rms_eps_outside", "scalenorm")
#: Exercise 4's ε, large enough that where it sits (inside or outside a root) shows in 3 digits.
EPS_4 = 0.1
CENTRED = ("mad", "eps_outside")


def other_norm_forward(
    norm: str, x, g: float, *, eps: float = EPS_4, axis: int = -1, mean_of=None, statistic_of=None
) -> np.ndarray:
    """y of exercise 4's `norm` (:data:`OTHER_NORMS`) for rows `x` and scalar gain `g`, along
    `axis`. `mean_of` and `statistic_of`, rows fixed in place of `x`, take the mean and the
    statistic from them: that path from x to y is cut, as two of the named mistakes cut it."""
    x = np.asarray(x, dtype=np.float64)
    centred = norm in CENTRED
    mean_from = x if mean_of is None else np.asarray(mean_of, dtype=np.float64)
    c = x - mean_from.mean(axis=axis, keepdims=True) if centred else x
    if statistic_of is None:
        s = c
    else:
        fixed = np.asarray(statistic_of, dtype=np.float64)
        s = fixed - fixed.mean(axis=axis, keepdims=True) if centred else fixed
    if norm == "mad":
        d = np.abs(s).mean(axis=axis, keepdims=True)
    elif norm == "scalenorm":
        d, eps = np.sqrt((s**2).sum(axis=axis, keepdims=True)), 0.0
    elif norm in ("eps_outside", "rms_eps_outside"):
        d = np.sqrt((s**2).mean(axis=axis, keepdims=True))
    else:
        raise ValueError(f"no norm {norm!r}: one of {', '.join(OTHER_NORMS)}")
    return g * c / (d + eps)


def other_norm_backward(
    norm: str,
    x,
    dy,
    g: float,
    *,
    eps: float = EPS_4,
    axis: int = -1,
    statistic: bool = True,
    mean_path: bool = True,
) -> np.ndarray:
    """dL/dx of exercise 4's `norm` for rows `x`, upstream gradient `dy` and gain `g`, by
    fourth-order central differences of :func:`other_norm_forward` (step 10⁻³: error near 10⁻¹²
    on the exercise's data); `axis`, `statistic` and `mean_path` (False: that path cut) bend it as
    the named mistakes do.

    The checker ships no closed form: the answer key's, which solves every student's norm, lives in
    the repository (course_keys/09_gradients_4.md), outside the installed package, and
    tests/book/test_gradients.py checks it against these differences and against sympy.
    """
    x = np.asarray(x, dtype=np.float64)
    dy = np.asarray(dy, dtype=np.float64)
    cut = {
        "eps": eps,
        "axis": axis,
        "mean_of": None if mean_path else x.copy(),
        "statistic_of": None if statistic else x.copy(),
    }

    def loss(v):
        return float(np.sum(dy * other_norm_forward(norm, v, g, **cut)))

    step, grad, probe = 1e-3, np.empty_like(x), x.copy()
    for index in np.ndindex(x.shape):
        values = []
        for offset in (2, 1, -1, -2):
            probe[index] = x[index] + offset * step
            values.append(loss(probe))
        probe[index] = x[index]
        grad[index] = (-values[0] + 8 * values[1] - 8 * values[2] + values[3]) / (12 * step)
    return grad


def _other_norm_rows(rng: np.random.Generator, norms=STUDENT_NORMS) -> dict:
    """Exercise 4's data as a student gets them: one of `norms`, three rows of four small integers,
    none constant and none with an entry at its row's mean (|x - mean| has no derivative there), an
    upstream gradient of halves and a gain of halves from 0.5 to 2.5, not 1."""
    norm = str(rng.choice(norms))
    while True:
        xn = rng.integers(-3, 10, size=(3, 4)).astype(float)
        centred = xn - xn.mean(axis=-1, keepdims=True)
        if np.all(np.abs(centred) > 0) and np.all((xn**2).sum(axis=-1) > 0):
            gn = float(rng.choice([0.5, 1.5, 2.0, 2.5]))
            return {"norm": norm, "xn": xn, "dyn": rng.choice(HALVES, size=(3, 4)), "gn": gn}


def _other_norm_domain(rng: np.random.Generator) -> dict:
    """Exercise 4's domain: any of the norms, rows of normal numbers, any gain."""
    data = _batch(rng, "xn", "dyn")
    return {"norm": str(rng.choice(list(OTHER_NORMS)))} | data | {"gn": float(rng.normal())}


@rests_on("dx by hand, then node by node")
@asks_for("derivation")
@held_back("09_gradients_4.md")
@forbidding("lnlib", "torch", "jax", "sympy")
@variant(lambda rng: redrawn(rng, _other_norm_rows, other_norm_dx))
@domain(_other_norm_domain)
def other_norm_dx(norm, xn, dyn, gn) -> Exercise:
    """Exercise 4: dL/dx of the norm `norm` (:data:`OTHER_NORMS`) for the rows `xn`, upstream
    gradient `dyn` and scalar gain `gn`, derived and then computed with numpy only."""
    norm = str(norm)
    xn, dyn = np.asarray(xn, dtype=np.float64), np.asarray(dyn, dtype=np.float64)
    gn = float(gn)
    ones = np.ones(xn.shape[-1])
    mistakes = {
        "that is LayerNorm's dx, (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂)) / sqrt(σ² + ε); this norm "
        "divides by another statistic, or adds ε outside the root, and its own derivative "
        "changes the last term": layer_norm_backward(dyn, xn, gn * ones, eps=EPS_4)[0],
        "the statistic's path is missing: x also moves the number each row is divided by, "
        "which adds a term with the row's sum of g · dy times the row the norm divides (x, "
        "or x minus its mean)": other_norm_backward(norm, xn, dyn, gn, statistic=False),
        "that takes the statistics down the columns (axis=0); this norm normalizes each row, "
        "along axis=-1": other_norm_backward(norm, xn, dyn, gn, axis=0),
        "the gain is missing: the gradient reaching the normalized row is g · dy": (
            other_norm_backward(norm, xn, dyn, 1.0)
        ),
        "that is g · dy alone, as if y were g x: x reaches y through a division by the row's "
        "statistic, and through that statistic too": gn * dyn,
        "the statistic's term has the wrong sign: a larger statistic shrinks y, so its term is "
        "subtracted": 2 * other_norm_backward(norm, xn, dyn, gn, statistic=False)
        - other_norm_backward(norm, xn, dyn, gn),
    }
    if norm in CENTRED:
        mistakes[
            "the mean's path is missing: x also reaches the centred row through its mean, so "
            "subtract the row's mean of the gradient"
        ] = other_norm_backward(norm, xn, dyn, gn, mean_path=False)
    if norm == "scalenorm":
        mistakes[
            "that divides by the root mean square; ScaleNorm divides by the root of the sum of "
            "squares, ‖x‖, √H times larger"
        ] = other_norm_backward("rms_eps_outside", xn, dyn, gn, eps=0.0)
    if norm == "rms_eps_outside":
        mistakes[
            "that is RMSNorm's dx with ε inside the root, sqrt(mean(x²) + ε); this norm adds ε "
            "to the root"
        ] = rms_norm_backward(dyn, xn, gn * ones, eps=EPS_4)[0]
    return Exercise(
        other_norm_backward(norm, xn, dyn, gn),
        rtol=1e-8,  # the differences' error, near 1e-12, far below both
        atol=1e-9,
        hint=(
            "Write y = g c / D with D = d + ε and d the row's statistic; x reaches y directly "
            "and through d (and, for a centred norm, through the mean): one term per path."
        ),
        mistakes=mistakes,
    )


@rests_on("What an RMSNorm kernel saves")
@forbidding("lnlib", "torch", "jax")
@variant(lambda rng: redrawn(rng, _kernel_rows, dgamma_from_saved))
@domain(_saved)
def dgamma_from_saved(xk, dyk, saved) -> Exercise:
    """Exercise 5: RMSNorm's dL/dγ for `xk`, `dyk` from the σ = sqrt(mean(x²) + ε) a kernel saved
    per row (`saved`, one entry per row; ε = :data:`SAVED_EPS`)."""
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
            "that divides by the root of the saved number, as if it were σ²; the kernel saved σ "
            "itself, so x̂ = x / σ": (dyk * xk / np.sqrt(saved)).sum(axis=0),
            "that sums over the features (axis=-1), one value per row; each γ_i collects dyk · x̂ "
            "from every row at its own feature": (dyk * xk / saved).sum(axis=-1),
            "that centres x first, as LayerNorm does; RMSNorm's x̂ is x / σ with no mean "
            "subtracted": (dyk * centred / saved).sum(axis=0),
            "that is the sum of dyk alone, LayerNorm's dβ; RMSNorm has no β, and dγ weights each "
            "dyk by its x̂": dyk.sum(axis=0),
            "x is not normalized: dγ sums dyk · x̂, with x̂ = x / σ": (dyk * xk).sum(axis=0),
            "that recomputes σ from x without the kernel's ε; the backward pass divides by the "
            "number the kernel saved": (
                dyk * xk / np.sqrt((xk**2).mean(axis=-1, keepdims=True))
            ).sum(axis=0),
        },
    )


exercises = Exercises(
    "09_gradients",
    dgamma_by_hand,
    atomic_backward_dx,
    leftover_along_xhat,
    other_norm_dx,
    dgamma_from_saved,
)
