"""Chapter 06's exercises (chapters/06_normalizing.ipynb): x̂ by hand, its length, its place in the
plane."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import Exercises, domain, forbidding, redrawn, rests_on, variant
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.experiments.normalizing import plane_coordinates, xhat_radius

#: The ε of exercise 2, as its question gives it.
EPS = 1e-5
H_MINUS_1 = (
    "that uses the variance with H - 1 (ddof=1, the sample variance); LayerNorm's σ² divides by H"
)
DEFAULT_EPS = "that uses ε = 1e-5, lnlib's default; this exercise asks for ε = 0"


def _five_integers(rng: np.random.Generator) -> dict:
    """Exercise 1's data as a student gets them: five small integers, not all equal."""
    while True:
        v1 = rng.integers(-9, 10, size=5).astype(float)
        if v1.std() > 0:
            return {"v1": v1}


def _three_integers(rng: np.random.Generator) -> dict:
    """Exercise 3's data as a student gets them: three one-decimal numbers, not all equal (small
    integers give too few distinct answers: classmates would share them)."""
    while True:
        x3 = rng.integers(-99, 100, size=3) / 10
        if x3.std() > 0:
            return {"x3": x3}


def _xhat_ddof1(x, eps: float = 0.0):
    """x̂ as a reader who divides the variance by H - 1 computes it."""
    return (x - x.mean()) / np.sqrt(x.var(ddof=1) + eps)


@rests_on("The idea")
@forbidding("lnlib", "torch")
@variant(lambda rng: redrawn(rng, _five_integers, normalized_without_eps, DEFAULT_EPS))
@domain(lambda rng: {"v1": rng.integers(-9, 10, size=5).astype(float) + rng.normal(size=5) / 4})
def normalized_without_eps(v1) -> Exercise:
    """Exercise 1: `v1` normalized with ε = 0, shape ``(5,)``."""
    v1 = np.asarray(v1, dtype=np.float64)
    centred = v1 - v1.mean()
    return Exercise(
        lnlib.layer_norm(v1, eps=0),
        rtol=1e-9,
        hint="Subtract v1.mean(), then divide by the square root of the biased variance v1.var().",
        mistakes={
            H_MINUS_1: _xhat_ddof1(v1),
            "the mean is not subtracted: centre v1 first, then divide": v1 / v1.std(),
            "that divides by the variance; x̂ divides by its square root, the standard deviation": (
                centred / v1.var()
            ),
            DEFAULT_EPS: lnlib.layer_norm(v1),
        },
    )


@rests_on("The geometry: a sphere of radius √H in the hyperplane ⊥ 1")
@forbidding("lnlib.layer_norm", "lnlib.layer_norm_steps")
@variant(lambda rng: {"w": rng.normal(loc=1.0, scale=0.003, size=64)})
@domain(lambda rng: {"w": rng.normal(1.0, rng.uniform(0.001, 0.01), size=64)})
def length_of_xhat(w) -> Exercise:
    """Exercise 2: the length ‖x̂‖ of `w` normalized with ε = 1e-5, a number."""
    w = np.asarray(w, dtype=np.float64)
    size, var = w.size, w.var()
    return Exercise(
        np.linalg.norm(lnlib.layer_norm(w, eps=EPS)),
        digits=4,  # at three, the H - 1 mistake's 5.40 and a rounded right answer meet
        hint="How does ε change the variance of x̂, and so its length, when σ² is this small?",
        mistakes={
            "8 is the length with ε = 0; with σ² this small, ε shrinks it": np.sqrt(size),
            "that is ‖x̂‖², the squared length: take its square root": xhat_radius(w, eps=EPS) ** 2,
            "σ²/(σ² + ε) scales the squared length ‖x̂‖², so the length by its square root": (
                np.sqrt(size) * var / (var + EPS)
            ),
            H_MINUS_1: np.linalg.norm(_xhat_ddof1(w, EPS)),
            "that puts the variance with H - 1 (ddof=1) into ‖x̂‖ = sqrt(H σ²/(σ² + ε)); "
            "LayerNorm's σ² divides by H": np.sqrt(size * w.var(ddof=1) / (w.var(ddof=1) + EPS)),
        },
    )


@rests_on("The geometry: a sphere of radius √H in the hyperplane ⊥ 1")
@variant(lambda rng: redrawn(rng, _three_integers, plane_coordinates_of_xhat, DEFAULT_EPS))
@domain(lambda rng: {"x3": rng.normal(size=3) * 3})
def plane_coordinates_of_xhat(x3) -> Exercise:
    """Exercise 3: the two coordinates of x̂ (ε = 0) of `x3` in the basis ``plane_basis(3)``."""
    x3 = np.asarray(x3, dtype=np.float64)
    xhat = lnlib.layer_norm(x3, eps=0)
    # the website's x3 = (3, 1, 2) has a standard deviation with H - 1 of exactly 1: said only then
    unit_sample_std = (
        " (this x3's standard deviation with H - 1 is 1: dividing by it changes nothing)"
        if np.isclose(x3.std(ddof=1), 1.0)
        else ""
    )
    return Exercise(
        plane_coordinates(xhat),
        rtol=1e-9,
        hint=(
            "Normalize x3, then take its dot product with each basis vector: plane_basis(3) @ xhat."
        ),
        mistakes={
            "those are the coordinates of the centred x3: divide them by σ = x3.std() too"
            + unit_sample_std: plane_coordinates(x3),
            "that is x̂ in the three coordinates of space; the exercise asks for its two "
            "coordinates in the plane, its dot products with the two basis vectors": xhat,
            "those are x̂'s first two entries, not its coordinates along the two basis vectors: "
            "take plane_basis(3) @ xhat": xhat[:2],
            DEFAULT_EPS: plane_coordinates(lnlib.layer_norm(x3)),
        },
    )


#: Exercise 4's setting of the explorer: the three-feature outlier it opens on, and the ε chosen.
PREDICT_X, PREDICT_EPS = (0.5, -0.5, 3.0), 1.0


def explorer_length_of_xhat() -> Exercise:
    """Exercise 4 (predict, then check): the length ‖x̂‖ the explorer shows for x =
    :data:`PREDICT_X` with ε = :data:`PREDICT_EPS`."""
    x = np.array(PREDICT_X)
    size, var = x.size, float(x.var())
    length = float(np.linalg.norm(lnlib.layer_norm(x, eps=PREDICT_EPS)))
    return Exercise(
        length,
        hint="With ε = 0 the length would be √3; σ²/(σ² + ε) scales the squared length.",
        mistakes={
            "√3 is the length with ε = 0; an ε of 1 is not small next to this σ²": np.sqrt(size),
            "that is ‖x̂‖², the squared length": length**2,
            "that scales the length, not the squared length, by σ²/(σ² + ε)": (
                np.sqrt(size) * var / (var + PREDICT_EPS)
            ),
            "that is the share of the circle's radius x̂ reaches, not its length": length
            / np.sqrt(size),
        },
    )


exercises = Exercises(
    "06_normalizing",
    normalized_without_eps,
    length_of_xhat,
    plane_coordinates_of_xhat,
    explorer_length_of_xhat,
)
