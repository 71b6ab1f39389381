"""Chapter 07's exercises (chapters/07_gamma_beta.ipynb): undoing LayerNorm, counting γ and β, one
pair for two samples."""

from __future__ import annotations

import numpy as np

import lnlib
from lnlib.book.exercises.chapter import Exercises, domain, redrawn, rests_on, variant
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.experiments.gamma_beta import gpt2_parameter_counts, identity_parameters

#: GPT-2 medium's width and depth, as exercise 2 gives them.
GPT2_MEDIUM = {"d_model": 1024, "n_layers": 24}


SIGMA_FOR_GAMMA = "γ = σ leaves out ε: LayerNorm divided by sqrt(σ² + ε), so γ must be that"


def _reversible(rng: np.random.Generator) -> dict:
    """Exercise 1's data as a student gets them: four small integers that differ from their
    reverse at every feature (so v and its reverse pin γ and β down, as [1, 3, 5, 7] does)."""
    while True:
        v = rng.integers(-9, 10, size=4).astype(float)
        if np.all(v != v[::-1]):
            return {"v": v}


@rests_on("Undoing the normalization, exactly")
@variant(lambda rng: redrawn(rng, _reversible, identity_scale_and_shift, SIGMA_FOR_GAMMA))
@domain(lambda rng: {"v": rng.normal(rng.normal(), 2, size=rng.integers(2, 9))})
def identity_scale_and_shift(v) -> Exercise:
    """Exercise 1: ``np.stack([gamma, beta])`` for which LayerNorm (default ε) gives back `v`, shape
    ``(2, H)``."""
    v = np.asarray(v, dtype=np.float64)
    gamma, beta = identity_parameters(v)
    steps = lnlib.layer_norm_steps(v)
    mu, var, eps = steps.mean.item(), steps.var.item(), steps.eps
    return Exercise(
        np.stack([gamma, beta]),
        rtol=1e-9,
        hint=(
            "β undoes the centring and γ undoes the division: what exactly did LayerNorm divide by?"
        ),
        mistakes={
            SIGMA_FOR_GAMMA: np.stack([np.full(v.shape, np.sqrt(var)), beta]),
            "γ and β are swapped: the first row is γ": np.stack([beta, gamma]),
            "with β = 0 the mean μ is lost: β adds it back": np.stack([gamma, np.zeros(v.shape)]),
            "γ = σ² + ε is the divisor squared: LayerNorm divided by its square root": np.stack(
                [np.full(v.shape, var + eps), beta]
            ),
            "γ = 1/sqrt(σ² + ε) divides once more; to undo the division γ multiplies by "
            "sqrt(σ² + ε)": np.stack([1 / gamma, beta]),
            "that uses the variance with H - 1 (ddof=1); LayerNorm's σ² divides by H": np.stack(
                [np.full(v.shape, np.sqrt(v.var(ddof=1) + eps)), np.full(v.shape, mu)]
            ),
        },
    )


def gpt2_medium_layer_norm_parameters() -> Exercise:
    """Exercise 2: the number of LayerNorm parameters of GPT-2 medium (1024 wide, 24 blocks)."""
    counts = gpt2_parameter_counts(**GPT2_MEDIUM)
    per_layer_norm, layer_norms = counts["per_layer_norm"], counts["layer_norms"]
    blocks = GPT2_MEDIUM["n_layers"]
    return Exercise(
        counts["layer_norm"],
        hint="Two LayerNorms per block plus one at the end, each with a γ and a β of size H.",
        mistakes={
            "the final LayerNorm, after the last block, is missing": (layer_norms - 1)
            * per_layer_norm,
            "each LayerNorm has a β as well as a γ: 2 × H parameters": layer_norms
            * GPT2_MEDIUM["d_model"],
            "each block has two LayerNorms, one before the attention and one before the MLP": (
                (blocks + 1) * per_layer_norm
            ),
            "that is GPT-2 small's 38,400 doubled for twice the blocks: the width grows too, "
            "from 768 to 1024": 2 * gpt2_parameter_counts(d_model=768, n_layers=12)["layer_norm"],
        },
    )


def _pair(rng: np.random.Generator) -> np.ndarray:
    """Exercise 3's domain: two rows of one width, the second drawn or a permutation of the
    first."""
    first = rng.integers(-5, 6, size=rng.integers(2, 7)).astype(float)
    second = rng.permutation(first) if rng.random() < 0.5 else rng.normal(size=first.size)
    return np.stack([first, second])


@domain(lambda rng: {"pair": _pair(rng)})
def one_pair_gives_back_both_samples(pair) -> Exercise:
    """Exercise 3: whether one per-feature γ, β gives back both rows of `pair`, shape ``(2, H)``.

    Feature i asks γᵢ x̂ᵢ + βᵢ to hit both rows' xᵢ: two equations in γᵢ, βᵢ, solvable unless the
    rows share x̂ᵢ but not xᵢ. (The chapter's folded cell shows the documents' batch, whose rows
    share every x̂ᵢ; the exercise's rows are a permutation of each other, so they share σ and some
    x̂ᵢ, with their xᵢ.)
    """
    pair = np.asarray(pair, dtype=np.float64)
    xhat = lnlib.layer_norm(pair)
    same_xhat = np.isclose(xhat[0], xhat[1], rtol=0.0, atol=1e-12)
    expected = bool(np.all(~same_xhat | (pair[0] == pair[1])))
    return Exercise(
        expected,
        hint="Feature by feature: γᵢ x̂ᵢ + βᵢ must hit both rows' xᵢ. When is that impossible?",
        mistakes={
            (
                "each feature is two equations, γᵢ x̂ᵢ + βᵢ = xᵢ for both rows, in two unknowns: "
                "solvable wherever the rows' x̂ᵢ differ or their xᵢ agree"
                if expected
                else "for some feature the two rows share x̂ᵢ but not xᵢ, and no γᵢ, βᵢ sends one "
                "x̂ᵢ to two values"
            ): not expected,
        },
    )


#: Exercise 4's setting of the explorer: the chapter's γ and β (it opens on them), with γ4 moved
#: from -1 to this value.
PREDICT_GAMMA4 = 2.0


def explorer_output_of_feature_4() -> Exercise:
    """Exercise 4 (predict, then check): y4 of the running token that the explorer shows for the
    chapter's γ and β with γ4 = :data:`PREDICT_GAMMA4`."""
    token = np.array([0.4, -1.1, 0.9, 0.2, -0.6, 1.3, -0.3, 0.0])  # the running token
    gamma = np.array([0.5, 1.0, 2.0, -1.0, 1.5, 1.0, -0.5, 1.0])  # the chapter's γ
    beta = np.array([-2.0, 0.0, 1.0, 3.0, 0.0, -1.0, 0.5, 0.0])  # and β
    chapter_y4, chapter_gamma4 = float(lnlib.layer_norm(token, gamma, beta)[3]), gamma[3]
    gamma[3] = PREDICT_GAMMA4
    xhat4 = float(lnlib.layer_norm(token)[3])
    old_gamma_as_xhat = PREDICT_GAMMA4 * chapter_gamma4 + beta[3]  # as if x̂4 were the old γ4
    return Exercise(
        float(lnlib.layer_norm(token, gamma, beta)[3]),
        hint="y4 = γ4 x̂4 + β4: x̂4 does not change with γ, and β4 stays 3.",
        mistakes={
            "that is y4 with the chapter's γ4 = -1; the prompt moves γ4": chapter_y4,
            "that leaves out β4, the shift": PREDICT_GAMMA4 * xhat4,
            "that scales the input x4, not the normalized x̂4": PREDICT_GAMMA4 * token[3] + beta[3],
            # learner A11 kept the old γ4's sign: 3 - 2 x̂4
            "that keeps the old γ4's sign, γ4 = -2: the slider sets γ4 to +2": beta[3]
            - PREDICT_GAMMA4 * xhat4,
            "that shifts before it scales: β4 is added after the scale γ4": PREDICT_GAMMA4
            * (xhat4 + beta[3]),
            f"that is γ4 · ({chapter_gamma4:g}) + β4: x̂4 is not the chapter's γ4 = "
            f"{chapter_gamma4:g} but the running token's (x4 − μ) / √(σ² + ε)": old_gamma_as_xhat,
        },
    )


exercises = Exercises(
    "07_gamma_beta",
    identity_scale_and_shift,
    gpt2_medium_layer_norm_parameters,
    one_pair_gives_back_both_samples,
    explorer_output_of_feature_4,
)
