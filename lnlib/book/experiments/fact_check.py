"""Every number the chapter "Fact check" quotes about the sources' statements, computed in one
place.

The chapter's verdicts quote numbers from many steps of LayerNorm (ε, the worked examples, the
gradients, ...). The chapter cannot use the other chapters' variables, so each number is computed
here from its inputs: :func:`findings` returns them by name, :data:`KEYS` says what each one is and
how the prose rounds it, and :func:`glued` formats them for ``prose.glue_all``.
``tests/book/test_fact_check_findings.py`` recomputes every key independently.
"""

from __future__ import annotations

import numpy as np

from ... import layer_norm, layer_norm_steps
from ...backward import layer_norm_jacobian
from ...norms import batch_norm
from ...variance_algorithms import variance
from ...variants import FRAMEWORK_EPS, layer_norm_eps_outside_sqrt
from ..factcheck.claims import CLAIMS, PAPERS, SOURCES, VERDICTS
from ..factcheck.measurements import (
    batch_norm_future_leak,
    feature_correlation,
    moment_grid,
    normal_fourth_moment,
    output_covariances,
    xhat_moment,
    xhat_pair_covariance,
)
from ..models.deep_stack import random_stack, run_stack
from .complete_examples import EMBEDDING_SHOWN, documents_embedding
from .family import batch_effects
from .gamma_beta import best_shared_scale_shift, train_scale_shift

__all__ = ["KEYS", "DOCUMENT_XHAT_512", "NEAR", "findings", "glued"]

#: The step-by-step document's four printed x̂ entries of its 512-d example (entries 1, 2, 3, 512).
DOCUMENT_XHAT_512 = (0.229, -0.562, 1.188, -0.521)

#: The chapter "Epsilon"'s token of small spread, where ε's place matters.
NEAR = (1.0, 1.001, 0.999, 1.0)

#: key -> (format spec for :func:`lnlib.book.tools.prose.number`, what the number is).
KEYS = {
    # the verdict table
    "n_claims": ("", "statements checked in the book"),
    "n_documents": ("", "of them, quoted from the five source documents"),
    "n_papers": ("", "of them, quoted from papers"),
    "n_true": ("", "claims judged true"),
    "n_conditional": ("", "claims judged true under conditions"),
    "n_partly": ("", "claims judged partly true"),
    "n_false": ("", "claims judged false"),
    "n_uncheckable": ("", "claims judged not checkable as stated"),
    # statistics of the normalized features
    "eps_e5": (".4f", "e⁻⁵, what the walkthrough's '1e^{-5}' typesets"),
    "xhat1_e5": (".4f", "x̂₁ of [2, 4, 6, 8] with ε = e⁻⁵"),
    "we_fourth": (".2f", "mean of x̂⁴ over the four features of [2, 4, 6, 8]"),
    "unequal_cov": (
        ".3f",
        "Monte Carlo Cov(x̂₁, x̂₂) for unequal features, H = 4 (20000 samples, seed 2)",
    ),
    "unequal_z": (".0f", "its distance from −1/3 in standard errors"),
    "cov_factor": (
        ".2f",
        "H²/(H − 1) at H = 4: how much too small the document's Cov(y_i, y_j) is",
    ),
    "cov_n": ("", "samples of the Monte Carlo Cov(y_i, y_j)"),
    "k4_normal4": (".2f", "Monte Carlo E[x̂⁴] for 4 normal features (4000 samples, seed 6)"),
    "k4_exact4": (".2f", "exact E[x̂⁴] for 4 normal features, 3(H − 1)/(H + 1)"),
    "k4_uniform": (".2f", "Monte Carlo E[x̂⁴] for 256 uniform features"),
    "k4_laplace": (".2f", "Monte Carlo E[x̂⁴] for 256 Laplace features"),
    "k4_laplace_err": (".3f", "its standard error"),
    "k4_laplace_one": (
        ".2f",
        "the companion figure's E[x̂₁⁴] for 256 Laplace features (feature 1 alone)",
    ),
    "k4_laplace_one_err": (".2f", "its standard error"),
    "skew_exp": (".2f", "Monte Carlo E[x̂³] for 256 exponential features"),
    "bound_256": (".1f", "√(H − 1) at H = 256, the bound on every |x̂_i|"),
    "corr_kept": (
        ".2f",
        "corr(x̂₁, x̂₂) when features 1 and 2 share their own factor (20000 samples, seed 9)",
    ),
    # why normalize
    "relu_orders": (
        ".0f",
        (
            "orders of magnitude by which the ReLU stack's layer-0 gradient changes from a = 0.5 "
            "to a = 3, without LayerNorm"
        ),
    ),
    "tanh_ln_growth": (
        ".0f",
        (
            "factor by which the gradient grows from the top of the tanh stack with LayerNorm to "
            "layer 0"
        ),
    ),
    "shift_plain": (
        ".3f",
        "relative change of layer 10's input when W_1 gets a random 10 % update, without LayerNorm",
    ),
    "shift_ln": (".3f", "the same relative change with LayerNorm"),
    "bn_noise": (
        ".2f",
        (
            "std over 200 random batches of batch norm's output for one fixed sample, mean over "
            "features"
        ),
    ),
    # the input
    "bn_leak": (
        ".3f",
        "largest change of token 0's batch-normed output when the last token changes",
    ),
    "ln_leak": (".3f", "the same change with layer norm"),
    # the mean
    "mean_sample1": ("", "mean of the documents' sample [1, 2, 3, 4]"),
    "mean_sample2": ("", "mean of the documents' sample [5, 6, 7, 8]"),
    "mean_token": ("", "mean of the walkthrough's token [2, 4, 6, 8]"),
    # the variance
    "var_sample1": (".2f", "σ² of [1, 2, 3, 4], dividing by H"),
    "var_sample2": (".2f", "σ² of [5, 6, 7, 8]"),
    "std_sample1": (".6f", "√σ² of [1, 2, 3, 4]"),
    "std_with_eps": (".6f", "√(σ² + 1e-5) of [1, 2, 3, 4]"),
    "std_eps_gap": (".1e", "√(σ² + 1e-5) - √σ² of [1, 2, 3, 4]"),
    "token_var": (".1f", "σ² of the token [2, 4, 6, 8]"),
    "scale_gap": (".0e", "largest |LN(1000 x) - LN(x)| for 16 features in 0-1, ε = 1e-5"),
    "tiny_gap": (".2f", "largest |LN(x / 1000) - LN(x)| for the same features"),
    # epsilon
    "near_inside": (".3f", "x̂₂ of the token NEAR with ε = 1e-5 inside the root"),
    "near_outside": (".3f", "x̂₂ of the token NEAR with ε added to σ"),
    "near_out_var": (".3f", "variance of x̂ of NEAR with ε = 1e-5 inside the root"),
    "eps_PyTorch": (".0e", "PyTorch's default LayerNorm ε"),
    "eps_Flax": (".0e", "Flax's default LayerNorm ε"),
    "eps_Keras": (".0e", "Keras's default LayerNorm ε"),
    "eps_spread": (".0f", "largest over smallest of the three default ε"),
    "doc_x1_printed": (
        ".5f",
        "x̂₁ of [1, 2, 3, 4] by the step-by-step document's arithmetic, (1 - 2.5)/(1.118 + 1e-5)",
    ),
    "doc_x1": (".5f", "x̂₁ of [1, 2, 3, 4] by the formula, ε = 1e-5 inside the root"),
    "doc_x1_3dp": (".3f", "the same, at three decimals"),
    "doc_gap_1234": (
        ".1e",
        "largest change of x̂ of [1, 2, 3, 4] when ε is added to σ instead of σ²",
    ),
    "token_std_eps": (".5f", "√(σ² + 1e-5) of the token [2, 4, 6, 8]"),
    # normalizing
    "doc_var": (".2f", "σ² of the sample [1, 2, 3, 4]"),
    "token_vs_sample": (".1e", "largest |x̂([2, 4, 6, 8]) - x̂([1, 2, 3, 4])| with ε = 1e-5"),
    "flip_diff": (".2f", "largest |LN(-2x) - LN(x)| for x = [1, 2, 3, 4], ε = 0"),
    "shift_diff": (".2f", "largest |LN(x + b) - LN(x)| for b = [0, 0, 0, 3], ε = 0"),
    "small_diff": (".2f", "largest |LN(0.001 x) - LN(x)| with ε = 1e-5"),
    # gamma and beta
    "var_xhat_token": (".6f", "variance of x̂ of the token [2, 4, 6, 8], ε = 1e-5"),
    "slot_gamma_spread": (".2f", "range of the eight per-slot γ learned by per-slot training"),
    "shared_gamma": (".2f", "the least-squares γ shared by every entry"),
    "slot_loss": (".3f", "per-slot training's loss over its last half"),
    "shared_loss": (".3f", "loss of the least-squares shared pair"),
    "slot_mean_loss": (".3f", "loss of the per-slot pairs' average pair over the whole data"),
    "shortfall_token": (
        ".1e",
        "relative shortfall of γ = σ against √(σ² + ε) on the token [2, 4, 6, 8]",
    ),
    "shortfall_embedding": (".1e", "the same on the 512-d embedding"),
    # the worked examples
    "emb_mean": (".3f", "mean of the rebuilt 512-d embedding"),
    "emb_var": (".6f", "variance of the rebuilt 512-d embedding"),
    "emb_divisor": (".5f", "√(σ² + ε) of the embedding"),
    "emb_std": (".3f", "σ of the embedding"),
    "emb_out_std": (".4f", "spread of the embedding after LayerNorm"),
    "doc_sigma_squared": (".6f", "0.048²"),
    "doc_root_of_rounded": (".5f", "√0.0023"),
    "divisor_gap": (".1e", "√(σ² + ε) - (σ + ε) for the embedding"),
    "divisor_gap_in_eps": (".1f", "that gap in units of ε"),
    "match_sigma_eps": (
        "",
        "printed x̂ entries reproduced at 3 decimals by dividing by σ + ε, σ = 0.048",
    ),
    "match_unrounded": ("", "the same by dividing by √0.0023 + ε"),
    "match_frameworks": ("", "the same by dividing by √(σ² + ε)"),
    "emb_xhat_differ": ("", "printed x̂ entries that differ from √(σ² + ε)'s at 3 decimals"),
    # gradients
    "doc_diag": (".4f", "the document's ∂LN/∂x_i at [2, 4, 6, 8], γ = 1: (1 - 1/H)/√(σ² + ε)"),
    "true_diag_1": (".4f", "the true J₁₁ at [2, 4, 6, 8]"),
    "true_diag_2": (".4f", "the true J₂₂ at [2, 4, 6, 8]"),
    "doc_factor": (".1f", "largest ratio of the document's diagonal to the true one"),
    # the family
    "bn_two_value": (".6f", "|batch-normed entry| of a batch of two samples, ε = 1e-5"),
    "spread_64": (
        ".3f",
        "The family's spread of batch norm's output for one sample over 200 batches of 64",
    ),
    "spread_2": (".3f", "the same over batches of 2"),
    # numerics
    "doc_one_pass_0": (".2f", "one-pass float32 σ² of [1, 2, 3, 4] + 10⁴ (lnlib's pairwise sums)"),
    "doc_one_pass_1": (".2f", "the same for [5, 6, 7, 8] + 10⁴"),
    "doc_one_pass_seq_0": (".0f", "one-pass float32 σ² of [1, 2, 3, 4] + 10⁴, summed in sequence"),
    "doc_one_pass_seq_1": (".0f", "the same for [5, 6, 7, 8] + 10⁴"),
    # checking a kernel
    "f16_tiny": (".2e", "float16's smallest positive (subnormal) number"),
    "f16_tiny_over_eps": (".0f", "that number over 1e-8"),
}


def _why_normalize() -> dict:
    """The stack of the chapter "Why normalize?" (50 layers, width 64, batch 32, seed 0); batch
    noise."""
    x, weights, upstream = random_stack(depth=50, width=64, batch=32, seed=0)

    def run(a, ln, activation="relu"):
        return run_stack(x, a * weights, upstream, layer_norm_on=ln, activation=activation)

    low, high = (run(a, False).gradient_rms[0] for a in (0.5, 3.0))
    tanh = run(1.0, True, "tanh")
    shallow = weights[:10] * np.sqrt(2)
    step = np.random.default_rng(5).standard_normal(shallow[0].shape)
    nudged = shallow.copy()
    nudged[0] += 0.1 * np.linalg.norm(shallow[0]) / np.linalg.norm(step) * step
    shift = {}
    for ln in (False, True):
        z = [
            run_stack(x, ws, upstream, layer_norm_on=ln, activation="relu").activations[9] @ ws[9]
            for ws in (shallow, nudged)
        ]
        z = [layer_norm(v) if ln else v for v in z]
        shift[ln] = float(np.linalg.norm(z[1] - z[0]) / np.linalg.norm(z[0]))
    rng = np.random.default_rng(0)
    sample = rng.normal(size=(1, 8))
    batches = [np.concatenate([sample, rng.normal(size=(15, 8))]) for _ in range(200)]
    bn_out = np.array([batch_norm(b)[0] for b in batches])
    return {
        "relu_orders": float(np.log10(high / low)),
        "tanh_ln_growth": float(tanh.gradient_rms[0] / tanh.gradient_rms[50]),
        "shift_plain": shift[False],
        "shift_ln": shift[True],
        "bn_noise": float(bn_out.std(axis=0).mean()),
    }


def _epsilon() -> dict:
    """ε's place, the output variance, the frameworks' defaults; the step-by-step document's
    digits."""
    near = np.array(NEAR)
    inside, outside = layer_norm(near, eps=1e-5), layer_norm_eps_outside_sqrt(near, eps=1e-5)
    x = np.array([1.0, 2.0, 3.0, 4.0])
    formula = layer_norm(x, eps=1e-5)
    return {
        "near_inside": float(inside[1]),
        "near_outside": float(outside[1]),
        "near_out_var": float(inside.var()),
        **{f"eps_{name}": FRAMEWORK_EPS[name] for name in ("PyTorch", "Flax", "Keras")},
        "eps_spread": max(FRAMEWORK_EPS.values()) / min(FRAMEWORK_EPS.values()),
        "doc_x1_printed": (1.0 - 2.5) / (1.118 + 0.00001),
        "doc_x1": float(formula[0]),
        "doc_x1_3dp": float(formula[0]),
        "doc_gap_1234": float(np.max(np.abs(layer_norm_eps_outside_sqrt(x, eps=1e-5) - formula))),
        "token_std_eps": float(np.sqrt(np.var([2.0, 4.0, 6.0, 8.0]) + 1e-5)),
    }


def _normalizing() -> dict:
    """The documents' batch and token; the four ways LN(ax + b) = LN(x) fails."""
    v, token = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0, 8.0])
    gap = lambda a, b: float(np.max(np.abs(a - b)))  # noqa: E731
    return {
        "doc_var": float(v.var()),
        "token_vs_sample": gap(layer_norm(token, eps=1e-5), layer_norm(v, eps=1e-5)),
        "flip_diff": gap(layer_norm(-2 * v, eps=0), layer_norm(v, eps=0)),
        "shift_diff": gap(layer_norm(v + np.array([0, 0, 0, 3.0]), eps=0), layer_norm(v, eps=0)),
        "small_diff": gap(layer_norm(1e-3 * v, eps=1e-5), layer_norm(v, eps=1e-5)),
        "scale_gap": _scale_gaps()[0],
        "tiny_gap": _scale_gaps()[1],
    }


def _scale_gaps() -> tuple[float, float]:
    """LN of 16 features in 0-1 (seed 0) against the same features in 0-1000 and in 0-0.001."""
    features = np.random.default_rng(0).uniform(0.0, 1.0, size=16)
    base = layer_norm(features)
    return tuple(
        float(np.max(np.abs(layer_norm(f) - base))) for f in (1000 * features, features / 1000)
    )


def _shortfall(v) -> float:
    s = layer_norm_steps(v)
    return float(1 - np.sqrt(s.var.item()) / s.sqrt_var_eps.item())


def _gamma_beta() -> dict:
    """Per-slot against per-feature γ and β, trained on 256 tokens (seed 1); γ = σ's shortfall."""
    rng = np.random.default_rng(1)
    raw = rng.normal(size=(256, 4)) * rng.uniform(0.5, 3.0, size=(256, 1)) + rng.normal(
        size=(256, 1)
    )
    xhat = layer_norm(raw)
    target = layer_norm(raw, np.array([0.5, 1.0, 2.0, -1.0]), np.array([-2.0, 0.0, 1.0, 3.0]))
    slot = train_scale_shift(xhat, target, per="slot", batch_size=8)
    g, b = best_shared_scale_shift(xhat, target)
    loss = lambda gg, bb: float(np.mean((gg * xhat + bb - target) ** 2))  # noqa: E731
    return {
        "var_xhat_token": float(layer_norm(np.array([2.0, 4.0, 6.0, 8.0])).var()),
        "slot_gamma_spread": float(np.ptp(slot.gamma)),
        "shared_gamma": float(g),
        "slot_loss": float(slot.final_loss),
        "shared_loss": loss(g, b),
        "slot_mean_loss": loss(slot.gamma.mean(), slot.beta.mean()),
        "shortfall_token": _shortfall(np.array([2.0, 4.0, 6.0, 8.0])),
        "shortfall_embedding": _shortfall(documents_embedding()),
    }


def _worked_examples() -> dict:
    """The step-by-step document's 512-d example: its statistics, and which divisor its digits
    match."""
    emb = documents_embedding(seed=0)
    steps = layer_norm_steps(emb)
    shown = list(EMBEDDING_SHOWN)
    printed = np.array(DOCUMENT_XHAT_512)
    divisors = {
        "match_sigma_eps": 0.048 + 1e-5,
        "match_unrounded": np.sqrt(0.0023) + 1e-5,
    }
    matches = {
        k: int(np.sum(np.round((emb[shown] - 0.135) / d, 3) == printed))
        for k, d in divisors.items()
    }
    matches["match_frameworks"] = int(np.sum(np.round(steps.xhat[shown], 3) == printed))
    gap = steps.sqrt_var_eps.item() - (np.sqrt(steps.var.item()) + steps.eps)
    return {
        "emb_mean": float(steps.mean.item()),
        "emb_var": float(steps.var.item()),
        "emb_divisor": float(steps.sqrt_var_eps.item()),
        "emb_std": float(np.sqrt(steps.var.item())),
        "emb_out_std": float(steps.y.std()),
        "doc_sigma_squared": 0.048**2,
        "doc_root_of_rounded": float(np.sqrt(0.0023)),
        "divisor_gap": float(gap),
        "divisor_gap_in_eps": float(gap / steps.eps),
        **matches,
        "emb_xhat_differ": len(printed) - matches["match_frameworks"],
    }


def _gradients() -> dict:
    """The document's ∂LN/∂x_i, which collapses to (γ/s)(1 - 1/H), against the true diagonal at [2,
    4, 6, 8]."""
    token = np.array([2.0, 4.0, 6.0, 8.0])
    jac = layer_norm_jacobian(token, eps=1e-5)
    document = (1 - 1 / token.size) / layer_norm_steps(token).sqrt_var_eps.item()
    return {
        "doc_diag": float(document),
        "true_diag_1": float(jac[0, 0]),
        "true_diag_2": float(jac[1, 1]),
        "doc_factor": float(np.max(document / np.diag(jac))),
    }


def _statistics() -> dict:
    """The documents' batch's means and variances; the family's batch-size spread (its population,
    seeds 1, 2)."""
    batch = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    var = batch.var(axis=-1)
    with_eps = layer_norm_steps(batch).sqrt_var_eps[0, 0]
    population = np.random.default_rng(1).normal(
        loc=[1.0, -2.0, 0.5, 3.0], scale=[1.0, 2.0, 0.5, 1.5], size=(1000, 4)
    )
    effects = batch_effects(population, sizes=(2, 8, 64), trials=200, seed=2)
    return {
        "mean_sample1": float(batch[0].mean()),
        "mean_sample2": float(batch[1].mean()),
        "mean_token": float(np.mean([2.0, 4.0, 6.0, 8.0])),
        "var_sample1": float(var[0]),
        "var_sample2": float(var[1]),
        "std_sample1": float(np.sqrt(var[0])),
        "std_with_eps": float(with_eps),
        "std_eps_gap": float(with_eps - np.sqrt(var[0])),
        "token_var": float(np.var([2.0, 4.0, 6.0, 8.0])),
        "spread_64": effects.spread(64),
        "spread_2": effects.spread(2),
    }


def _one_pass_in_sequence(rows) -> list[float]:
    """The one-pass variance of each float32 row, its two sums added in sequence."""
    out = []
    for row in np.asarray(rows, np.float32):
        total = squares = np.float32(0)
        for value in row:
            total, squares = total + value, squares + value * value
        n = np.float32(row.size)
        out.append(float(squares / n - (total / n) ** 2))
    return out


def _rest() -> dict:
    """The family's batch of two, the one-pass variance of the shifted batch, float16's tiny
    number."""
    batch = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    shifted = batch + 1e4
    pairwise = variance(shifted, method="one_pass", dtype="float32")
    sequence = _one_pass_in_sequence(shifted)
    tiny = float(np.finfo(np.float16).smallest_subnormal)
    bn_leak, ln_leak = batch_norm_future_leak()
    return {
        "bn_leak": float(bn_leak),
        "ln_leak": float(ln_leak),
        "bn_two_value": float(abs(batch_norm(batch)[0, 0])),
        "doc_one_pass_0": float(pairwise[0]),
        "doc_one_pass_1": float(pairwise[1]),
        "doc_one_pass_seq_0": sequence[0],
        "doc_one_pass_seq_1": sequence[1],
        "f16_tiny": tiny,
        "f16_tiny_over_eps": tiny / 1e-8,
    }


def _statistics_checks() -> dict:
    """The fact check's own evidence on the statistics claims (same calls and seeds as its folded
    cells)."""
    token = np.array([2.0, 4.0, 6.0, 8.0])
    unequal = xhat_pair_covariance(4, distribution="unequal", samples=20000, seed=2)
    cov = output_covariances(np.array([1.0, 2.0, 0.5, 1.5]), samples=40000, seed=4)
    laplace = xhat_moment(4, 256, distribution="laplace", samples=4000, seed=6)
    grid = moment_grid()
    one = grid.index("laplace", 256)  # the companion figure uses feature 1 alone
    kept = feature_correlation(np.r_[2.0, 2.0, np.zeros(6)], samples=20000, seed=9)[1]
    return {
        "eps_e5": float(np.exp(-5)),
        "xhat1_e5": float(layer_norm(token, eps=np.exp(-5))[0]),
        "we_fourth": float(np.mean(layer_norm_steps(token, eps=1e-5).xhat ** 4)),
        "unequal_cov": unequal.measured,
        "unequal_z": abs(unequal.z),
        "cov_factor": 4**2 / (4 - 1),
        "cov_n": cov.samples,
        "k4_normal4": xhat_moment(4, 4, samples=4000, seed=6).measured,
        "k4_exact4": normal_fourth_moment(4),
        "k4_uniform": xhat_moment(4, 256, distribution="uniform", samples=4000, seed=6).measured,
        "k4_laplace": laplace.measured,
        "k4_laplace_err": laplace.stderr,
        "k4_laplace_one": float(grid.fourth[one]),
        "k4_laplace_one_err": float(grid.fourth_err[one]),
        "skew_exp": xhat_moment(3, 256, distribution="exponential", samples=4000, seed=6).measured,
        "bound_256": float(np.sqrt(255)),
        "corr_kept": kept.measured,
    }


def _verdict_counts() -> dict:
    """How many claims the book checks, from where, and with which verdict."""
    counts = {v: sum(c.verdict == v for c in CLAIMS) for v in VERDICTS}
    names = ("n_true", "n_conditional", "n_partly", "n_false", "n_uncheckable")
    return {
        "n_claims": len(CLAIMS),
        "n_documents": sum(c.source in SOURCES for c in CLAIMS),
        "n_papers": sum(c.source in PAPERS for c in CLAIMS),
        **dict(zip(names, (counts[v] for v in VERDICTS))),
    }


def findings() -> dict[str, float]:
    """Every number of :data:`KEYS`, by name (chapter "Fact check"); each key's meaning is in
    :data:`KEYS`."""
    values = {}
    for part in (
        _why_normalize,
        _epsilon,
        _normalizing,
        _gamma_beta,
        _worked_examples,
        _gradients,
        _statistics,
        _rest,
        _statistics_checks,
        _verdict_counts,
    ):
        values.update(part())
    if set(values) != set(KEYS):
        raise RuntimeError(f"findings and KEYS differ: {sorted(set(values) ^ set(KEYS))}")
    return values


def glued(values=None) -> dict:
    """The findings formatted for the prose (``prose.glue_all(glued())``), each with its
    :data:`KEYS` spec."""
    from ..tools.prose import number

    values = findings() if values is None else values
    return {key: number(values[key], KEYS[key][0]) for key in KEYS}
