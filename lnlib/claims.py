"""The source documents' checkable statements, with verdicts: the data behind the chapter "Fact check".

One :class:`Claim` per statement. The chapter's summary table is built from
:data:`CLAIMS` by :func:`claims_table`, and ``tests/test_fact_check.py`` has
one test per claim (named ``test_<key>``) that fails if the verdict is wrong,
so the table and the tests cannot drift apart. The measurements live in
:mod:`lnlib.fact_check`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["VERDICTS", "SOURCES", "Claim", "CLAIMS", "claim", "claims_table"]

#: The four verdicts, from the strongest agreement to none.
VERDICTS = ("true", "true under conditions", "false", "not checkable as stated")

#: Source document id -> (file name in ``shared/seeds``, short title).
SOURCES = {
    "000": ("000_f256bee68ed81763.txt", "Module 1.5, the formula explained"),
    "001": ("001_73a6d05787464cbc.txt", "What is normalization? (step by step)"),
    "002": ("002_d7e5cd2650755527.txt", "Note on layer normalization (after Bishop)"),
    "003": ("003_f1b6f3693a4fd52d.txt", "Mathematical foundations"),
    "004": ("004_94969be0e431d6ce.txt", "Computational walkthrough"),
}


@dataclass(frozen=True)
class Claim:
    """One statement of a source document and its verdict (chapter "Fact check").

    Attributes
    ----------
    key : str
        Short identifier; the test that backs the verdict is ``test_<key>``.
    quote : str
        The statement, as the document writes it (shortened, MyST markup allowed).
    source : str
        Document id, a key of :data:`SOURCES`.
    verdict : str
        One of :data:`VERDICTS`.
    correct : str
        The correct (or a checkable) statement.
    section : str
        Label of the section of the chapter "Fact check" that shows the evidence.
    chapters : tuple of str
        Other chapters (file stems in ``chapters/``) that treat the topic.
    """

    key: str
    quote: str
    source: str
    verdict: str
    correct: str
    section: str
    chapters: tuple[str, ...] = ()

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r} for claim {self.key!r}.")
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {tuple(SOURCES)}; got {self.source!r} for claim {self.key!r}.")


CLAIMS: tuple[Claim, ...] = (
    Claim("mean_removes_scale", "mean centering makes the output independent of absolute scales", "003", "false",
          "subtracting μ removes the location; dividing by σ removes the scale", "fc-definitions", ("03_mean",)),
    Claim("invariance_affine", "$LN(ax + b) = LN(x)$ for any scalar $a$ and vector $b$", "003", "false",
          "$LN(ax + c\\mathbf{1}) = \\operatorname{sign}(a)\\,LN(x)$ for ε = 0, $a \\ne 0$; with ε > 0 only approximately", "fc-definitions",
          ("06_normalizing", "10_family")),
    Claim("standardizes_mean0_var1", "normalization standardizes activations to mean 0, variance 1", "001", "true under conditions",
          "x̂ has mean 0 and variance σ²/(σ²+ε) ≤ 1 over its features; after γ, β the output has whatever mean and spread they give",
          "fc-definitions", ("05_epsilon", "07_gamma_beta")),
    Claim("eps_outside_sqrt", "x̂ = (x − μ)/(σ + ε) in the worked examples", "001", "false",
          "x̂ = (x − μ)/√(σ² + ε), as the document's own formula and every framework", "fc-definitions", ("05_epsilon", "08_complete_examples")),
    Claim("gamma_per_sample", "$\\tilde a_{n,i} = \\gamma_n \\hat a_{n,i} + \\beta_n$, one pair per example n", "002", "false",
          "one γ_i, β_i per feature i, shared by all samples", "fc-definitions", ("02_the_input", "07_gamma_beta", "10_family")),
    Claim("centring_mean_zero", "$\\mathbb{E}[x - \\mu_l] = 0$", "003", "true",
          "an identity: the mean over the features of x − μ is 0 for every input (the 'first-order effects' it is said to remove are not defined)",
          "fc-definitions", ("03_mean",)),
    Claim("different_scales", "after normalization both samples ([1, 2, 3, 4] and [5, 6, 7, 8]) have similar distributions "
          "despite having different original scales", "000", "false",
          "the two samples have the same scale (σ² = 1.25) and differ in location; their x̂ are identical", "fc-definitions", ("06_normalizing",)),
    Claim("initial_identity", "initially, normalization is identity! (γ = 1, β = 0)", "001", "false",
          "at γ = 1, β = 0 the scale-and-shift step is the identity; LayerNorm itself maps x to x̂", "fc-definitions", ("07_gamma_beta",)),
    Claim("undo_normalization", "with appropriate values of γ and β, the layer can learn to perform an identity transformation", "000",
          "true under conditions", "only for inputs that all share one mean and one spread (γ_i = √(σ²+ε), β_i = μ); γ and β are shared "
          "by every sample, so they cannot undo the normalization of samples that differ", "fc-definitions", ("07_gamma_beta",)),
    Claim("eps_notation", "ε = $1e^{-5}$", "004", "false",
          "ε = $10^{-5}$ (`1e-5` in code); $1e^{-5}$ typesets 1·e⁻⁵, a far larger ε that would change the walkthrough's x̂ in the fourth decimal",
          "fc-definitions", ("05_epsilon",)),
    Claim("bn_not_in_transformers", "Batch Normalization (not used in transformers)", "001", "true under conditions",
          "true of the usual text transformers (BN would leak later tokens into earlier ones); Conformer uses BN in its convolution module",
          "fc-definitions", ("10_family",)),
    Claim("cov_xhat", "$Cov(\\hat x_i, \\hat x_j) = -1/(H-1)$ for i ≠ j", "003", "true under conditions",
          "exact for exchangeable features (e.g. i.i.d.) and ε = 0; −E[σ²/(σ²+ε)]/(H−1) with ε; fails for unequal features",
          "fc-statistics"),
    Claim("cov_scaling", "$Cov(y_i, y_j) = \\gamma_i\\gamma_j Cov(\\hat x_i, \\hat x_j)$", "003", "true",
          "holds for any input: β is constant and covariance is bilinear", "fc-statistics"),
    Claim("cov_output_formula", "$Cov(LN(x)_i, LN(x)_j) = \\frac{\\gamma_i\\gamma_j}{H}(\\delta_{ij} - \\frac1H)$", "003", "false",
          "$\\gamma_i\\gamma_j\\frac{H}{H-1}(\\delta_{ij} - \\frac1H)$ for exchangeable inputs, ε = 0: the document's is $H^2/(H-1)$ times too small",
          "fc-statistics"),
    Claim("moments_first_two", "$E[\\hat x] = 0$, $E[\\hat x^2] = 1$", "003", "true under conditions",
          "per feature, for exchangeable inputs; $E[\\hat x^2] = E[\\sigma^2/(\\sigma^2+\\varepsilon)]$", "fc-statistics", ("06_normalizing",)),
    Claim("moments_three_four", "$E[\\hat x^3] \\approx 0$, $E[\\hat x^4] \\approx 3$", "003", "true under conditions",
          "$E[\\hat x^4] = 3(H-1)/(H+1)$ for normal inputs (1 at H = 2); other inputs give their own skewness and kurtosis", "fc-statistics"),
    Claim("output_mean_var", "$E[LN(x)] = \\beta$, $Var(LN(x)) = \\gamma^2$", "003", "true under conditions",
          "per feature over samples, for exchangeable inputs and ε = 0; over one sample's features only if γ and β are constant",
          "fc-statistics", ("07_gamma_beta",)),
    Claim("normality", "$(LN(x) - \\beta)/\\gamma \\to \\mathcal N(0, 1)$ as H → ∞", "003", "false",
          "for i.i.d. features x̂_i tends to the standardized input distribution: normal only for normal inputs", "fc-statistics"),
    Claim("decorrelation", "LayerNorm reduces the correlation between features", "000", "false",
          "it removes only a component shared equally by all features, and makes independent features correlated (−1/(H−1))",
          "fc-statistics", ("09_gradients",)),
    Claim("chain_rule_single_path", "$\\frac{\\partial L}{\\partial x_i} = \\frac{\\partial L}{\\partial y_i}\\frac{\\partial y_i}{\\partial \\hat x_i}\\frac{\\partial \\hat x_i}{\\partial x_i}$",
          "003", "false", "$\\frac{\\partial L}{\\partial x_i} = \\sum_j \\frac{\\partial L}{\\partial y_j}\\frac{\\partial y_j}{\\partial x_i}$: every output depends on every input",
          "fc-gradients", ("09_gradients",)),
    Claim("gradient_formula", "$\\frac{\\partial LN(x)}{\\partial x_i} = \\frac{\\gamma}{\\sigma}(1 - \\frac1H - \\frac{x_i-\\mu}{\\sigma^2}\\frac1H\\sum_j (x_j - \\mu))$",
          "003", "false", "$J_{ij} = \\frac{\\gamma_i}{s}(\\delta_{ij} - \\frac1H - \\frac{\\hat x_i\\hat x_j}{H})$; the document's last term is 0",
          "fc-gradients", ("09_gradients",)),
    Claim("gradient_scale_alpha", "$\\frac{\\partial L}{\\partial(\\alpha x)} = \\frac1\\alpha \\frac{\\partial L}{\\partial x}$", "003",
          "true under conditions", "for α > 0 and ε = 0; for α < 0 the same upstream gradient gives $1/\\lvert\\alpha\\rvert$; the factor saturates when α²σ² ≲ ε", "fc-gradients",
          ("09_gradients",)),
    Claim("update_rule_sum", "$\\Delta\\gamma = -\\eta\\sum_{i=1}^H \\frac{\\partial L}{\\partial y_i}\\hat x_i$ (and Δβ alike)", "003", "false",
          "$\\partial L/\\partial\\gamma_i = \\sum_n \\frac{\\partial L}{\\partial y_{n,i}}\\hat x_{n,i}$: a sum over samples and tokens, per feature",
          "fc-gradients", ("09_gradients",)),
    Claim("constant_gradient_depth", "$\\lVert\\partial L/\\partial\\theta\\rVert \\approx$ constant regardless of layer depth", "003", "false",
          "gradient norms depend on the layer and the depth, differently for pre- and post-norm", "fc-optimization", ("11_pre_post_norm",)),
    Claim("natural_gradient", "layer normalization approximates natural gradient descent, $\\Delta\\theta \\approx F^{-1}g$", "003",
          "not checkable as stated", "Ba et al. (§5.2) show that growing weights shrink the gradient (an implicit learning-rate decay); they do not claim this",
          "fc-optimization", ("09_gradients",)),
    Claim("convergence_gamma", "$\\lVert\\gamma_{t+1} - \\gamma_t\\rVert \\le (1-\\alpha)\\lVert\\gamma_t - \\gamma_{t-1}\\rVert$", "003", "not checkable as stated",
          "α is undefined; full-batch gradient descent on a quadratic contracts only for η < 2/λ_max, and SGD steps do not shrink",
          "fc-optimization"),
    Claim("internal_covariate_shift", "helps generalization by reducing internal covariate shift", "004", "not checkable as stated",
          "LN fixes each sample's mean and variance, not the distribution of a feature across samples; the mechanism is disputed",
          "fc-optimization", ("01_why_normalize",)),
    Claim("entropy_reduction", "$H(LN(x)) \\le H(x)$, with equality iff x is already normalized", "003", "not checkable as stated",
          "differential entropy of LN(x) is −∞ (x̂ lies on an (H−2)-sphere for ε = 0, in a hyperplane for ε > 0); for discrete x, ≤ holds for any function and the 'iff' is false",
          "fc-information"),
    Claim("information_bottleneck", "$I(X;Y) \\le I(X;\\hat X)$: LayerNorm creates an information bottleneck", "003", "true",
          "true for any Y computed from X̂ (data processing), and an equality when every γ_i ≠ 0: γ and β create no bottleneck; "
          "what LN drops is each sample's mean and scale (x → x̂)",
          "fc-information"),
    Claim("mi_gradient", "$\\frac{\\partial I(X;Y)}{\\partial\\gamma} = E[\\hat x \\frac{\\partial L}{\\partial y}]$", "003", "not checkable as stated",
          "the right side is $\\partial E[L]/\\partial\\gamma_i$ (true); I(X;Y) has no loss in it and does not change with γ", "fc-information"),
)


def claim(key: str) -> Claim:
    """The claim with this key.

    Raises
    ------
    KeyError
        Naming the known keys.
    """
    for item in CLAIMS:
        if item.key == key:
            return item
    raise KeyError(f"no claim {key!r}; known: {[c.key for c in CLAIMS]}")


def claims_table(claims=CLAIMS, *, chapter_prefix: str = "../chapters/") -> str:
    """The summary table as MyST markdown: claim, source, verdict, correct statement, where it is shown (chapter "Fact check").

    Each row links the section of the chapter "Fact check" with the evidence and the other chapters on
    the topic, as plain markdown links: MyST resolves them on the website, and JupyterLab (where
    MyST's ref and doc roles stay unresolved) opens them.
    """
    lines = ["| claim | source | verdict | correct statement | shown in |", "|---|---|---|---|---|"]
    for item in claims:
        links = [f"[here](#{item.section})"] + [f"[ch. {name[:2]}]({chapter_prefix}{name}.ipynb)" for name in item.chapters]
        cells = [item.quote, f"{item.source} ({SOURCES[item.source][1]})", f"**{item.verdict}**", item.correct, ", ".join(links)]
        if any("|" in cell for cell in cells):
            raise ValueError(f"claim {item.key!r}: a '|' would split its table row; write norms as \\lVert ... \\rVert.")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
