"""Chapter 06's exercises (chapters/06_normalizing.ipynb): x̂ by hand, its length, its place in the
plane."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import Exercises, domain, forbidding
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.experiments.normalizing import plane_coordinates, xhat_radius

#: The ε of exercise 2, as its question gives it.
EPS = 1e-5
H_MINUS_1 = (
    "that uses the variance with H - 1 (ddof=1, the sample variance); LayerNorm's σ² divides by H"
)
DEFAULT_EPS = "that uses ε = 1e-5, lnlib's default; this exercise asks for ε = 0"


def _xhat_ddof1(x, eps: float = 0.0):
    """x̂ as a reader who divides the variance by H - 1 computes it."""
    return (x - x.mean()) / np.sqrt(x.var(ddof=1) + eps)


@forbidding("lnlib", "torch")
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


@forbidding("lnlib.layer_norm", "lnlib.layer_norm_steps")
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


@domain(lambda rng: {"x3": rng.normal(size=3) * 3})
def plane_coordinates_of_xhat(x3) -> Exercise:
    """Exercise 3: the two coordinates of x̂ (ε = 0) of `x3` in the basis ``plane_basis(3)``."""
    x3 = np.asarray(x3, dtype=np.float64)
    xhat = lnlib.layer_norm(x3, eps=0)
    return Exercise(
        plane_coordinates(xhat),
        rtol=1e-9,
        hint=(
            "Normalize x3, then take its dot product with each basis vector: plane_basis(3) @ xhat."
        ),
        mistakes={
            "those are the coordinates of the centred x3, not yet divided by σ = x3.std() "
            "(for this x3 the standard deviation with H - 1 is 1, so dividing by it "
            "leaves them so too)": plane_coordinates(x3),
            "that is x̂ in the three coordinates of space; the exercise asks for its two "
            "coordinates in the plane, its dot products with the two basis vectors": xhat,
            DEFAULT_EPS: plane_coordinates(lnlib.layer_norm(x3)),
        },
    )


exercises = Exercises(
    "06_normalizing", normalized_without_eps, length_of_xhat, plane_coordinates_of_xhat
)
