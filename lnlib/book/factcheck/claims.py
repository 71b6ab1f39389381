"""The source documents' checkable statements, with verdicts: the data behind the chapter "Fact
check".

One :class:`Claim` per statement judged in the book. Every claim's home is the
chapter "Fact check": a section of it, by topic, whose "Check the claim" box
judges it and shows the evidence (the other chapters at most name one common
mistake in a short callout that links there). The summary table of the
chapter "Fact check" is built from :data:`CLAIMS` by :func:`claims_table`;
``tests/book/test_fact_check.py`` has one test per claim (named ``test_<key>``)
that fails if the verdict is wrong, and ``tests/book/test_claims_coherence.py``
fails if a chapter's box judges a claim missing here, or gives a verdict
other than the one recorded here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tools.notebooks import chapter_titles

__all__ = [
    "VERDICTS",
    "VERDICT_MEANINGS",
    "SECTION_TITLES",
    "SOURCES",
    "PAPERS",
    "FACT_CHECK",
    "Claim",
    "CLAIMS",
    "claim",
    "claims_table",
    "verdict_legend",
    "VERDICTS_TAG",
    "verdicts_markdown",
    "home_link",
    "section_anchor",
]

#: The book's one vocabulary of verdicts, and what each means (chapter "Fact check" defines them
#: with this text).
VERDICT_MEANINGS = {
    "true": "holds as written, for every case the statement covers.",
    "true under conditions": (
        "holds only under conditions the source does not state; the correct statement names them."
    ),
    "partly true": (
        "the statement has several parts, and some hold while others do not; the correct statement "
        "says which."
    ),
    "false": "fails as written; the correct statement is shown.",
    "not checkable as stated": (
        "too vague, undefined or ill-typed to test as written, or a claim about trained models "
        "that the book's toys cannot reach; the correct statement gives a checkable version, and "
        "what the toys do show."
    ),
}

#: The verdicts, from the strongest agreement to none.
VERDICTS = tuple(VERDICT_MEANINGS)

#: The chapter that holds the summary table and judges every claim.
FACT_CHECK = "17_fact_check"

#: Section label of the chapter "Fact check" -> its heading (ASCII, so its anchor is stable), by
#: topic.
SECTION_TITLES = {
    "fc-why": "Why normalize",
    "fc-input": "The input",
    "fc-mean": "The mean",
    "fc-variance": "The variance",
    "fc-epsilon": "Epsilon",
    "fc-normalizing": "Normalizing",
    "fc-gamma-beta": "Gamma and beta",
    "fc-examples": "The worked examples",
    "fc-gradients": "Gradients",
    "fc-family": "The normalization family",
    "fc-placement": "Pre-norm and post-norm",
    "fc-papers": "Papers after 2020",
    "fc-numerics": "Numerics",
    "fc-memory": "Memory and speed",
    "fc-kernel": "Checking a kernel",
    "fc-definitions": "Definitions and properties",
    "fc-statistics": "Statistics of the normalized features",
    "fc-optimization": "Optimization",
    "fc-information": "Information theory",
}

#: Source document id -> (its file name as the authors received it, short title); the sources page
#: (chapters/sources.md) introduces and quotes each one.
SOURCES = {
    "000": ("000_f256bee68ed81763.txt", "Module 1.5, the formula explained"),
    "001": ("001_73a6d05787464cbc.txt", "What is normalization? (step by step)"),
    "002": ("002_d7e5cd2650755527.txt", "Note on layer normalization (after Bishop)"),
    "003": ("003_f1b6f3693a4fd52d.txt", "Mathematical foundations"),
    "004": ("004_94969be0e431d6ce.txt", "Computational walkthrough"),
}


#: Papers whose central claims the chapter "LayerNorm after 2020" judges: bibliography key -> (arXiv
#: id, short title).
#: A claim's ``source`` is a key of :data:`SOURCES` or of this map.
PAPERS = {
    "sun2025curse": ("2502.05795", "Sun et al. 2025, The Curse of Depth"),
    "kim2025peri": ("2502.02732", "Kim et al. 2025, Peri-LN"),
    "li2025mixln": ("2412.13795", "Li et al. 2025, Mix-LN"),
    "wang2022deepnet": ("2203.00555", "Wang et al. 2022, DeepNet"),
    "dehghani2023scaling": ("2302.05442", "Dehghani et al. 2023, ViT-22B"),
    "zhu2025transformers": ("2503.10622", "Zhu et al. 2025, Transformers without Normalization"),
}


@dataclass(frozen=True)
class Claim:
    """One statement of a source document and its verdict (chapter "Fact check").

    Attributes
    ----------
    key : str
        Short identifier; the test that backs the verdict is ``test_<key>``, and a
        chapter's "Check the claim" cell lists the keys it judges in its metadata.
    quote : str
        The statement, as the document writes it (shortened, MyST markup allowed).
    source : str
        Document id, a key of :data:`SOURCES`, or a paper, a key of :data:`PAPERS`.
    verdict : str
        One of :data:`VERDICTS`.
    correct : str
        The correct (or a checkable) statement.
    home : str
        The chapter (file stem in ``chapters/``) whose "Check the claim" box judges it:
        :data:`FACT_CHECK`.
    section : str or None
        The label of its section in the chapter "Fact check" (a key of :data:`SECTION_TITLES`).
    chapters : tuple of str
        Other chapters that treat the topic.
    """

    key: str
    quote: str
    source: str
    verdict: str
    correct: str
    home: str
    section: str | None = None
    chapters: tuple[str, ...] = ()

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(
                f"verdict must be one of {VERDICTS}; got {self.verdict!r} for claim {self.key!r}."
            )
        if self.source not in SOURCES and self.source not in PAPERS:
            raise ValueError(
                f"source must be one of {tuple(SOURCES) + tuple(PAPERS)}; got {self.source!r} for "
                f"claim {self.key!r}."
            )
        if self.section is not None and self.section not in SECTION_TITLES:
            raise ValueError(
                f"claim {self.key!r}: section must be one of {tuple(SECTION_TITLES)}; got "
                f"{self.section!r}."
            )
        if (self.home == FACT_CHECK) != (self.section is not None):
            raise ValueError(
                f"claim {self.key!r}: a section label is needed exactly when the home is "
                f"{FACT_CHECK!r}; got home {self.home!r}, section {self.section!r}."
            )


def _c(key, quote, source, verdict, correct, home, section=None, chapters=()):
    return Claim(key, quote, source, verdict, correct, home, section, tuple(chapters))


#: Every statement of the sources judged in the book, in the order of the fact check's table,
#: grouped by home.
#:
#: :meta hide-value:
CLAIMS: tuple[Claim, ...] = (
    # --- chapter "Why normalize?" ---
    _c(
        "exploding_vanishing",
        "stabilizes training by preventing exploding/vanishing gradients",
        "001",
        "true under conditions",
        "at initialization LayerNorm removes the exponential dependence of activation and "
        "gradient scales on the weight scale; it does not keep gradients level across depth",
        FACT_CHECK,
        "fc-why",
    ),
    _c(
        "internal_covariate_shift",
        "helps generalization by reducing internal covariate shift",
        "004",
        "not checkable as stated",
        (
            "LN fixes each sample's mean and variance, not the distribution of a feature across "
            "samples; the mechanism is disputed"
        ),
        FACT_CHECK,
        "fc-why",
    ),
    _c(
        "regularization",
        "normalization acts as a form of regularization",
        "001",
        "not checkable as stated",
        "batch norm's regularizing noise comes from its mini-batch; LayerNorm's output for a "
        "sample is the same in any batch, and no regularizing effect of it is established",
        FACT_CHECK,
        "fc-why",
    ),
    # --- chapter "The input x" ---
    _c(
        "bn_not_in_transformers",
        "Batch Normalization: Normalizes across samples in a batch (not used in transformers)",
        "001",
        "true under conditions",
        "true of the usual text transformers (BN over the tokens would let later tokens change "
        "earlier ones' outputs); Conformer uses BN in its convolution module",
        FACT_CHECK,
        "fc-input",
        chapters=("10_family",),
    ),
    # --- chapter "The mean" ---
    _c(
        "mean_removes_scale",
        "mean centering makes the output independent of absolute scales",
        "003",
        "false",
        "subtracting μ removes the location; dividing by σ removes the scale",
        FACT_CHECK,
        "fc-mean",
    ),
    _c(
        "centring_mean_zero",
        "$\\mathbb{E}[x - \\mu_l] = 0$",
        "003",
        "true",
        (
            "read over the features of one sample $l$, whose mean is $\\mu_l$: an identity, true "
            "for every input"
        ),
        FACT_CHECK,
        "fc-mean",
    ),
    # --- chapter "The variance" ---
    _c(
        "unit_matching",
        (
            "variance is in squared units, so we take the square root to get back to the original "
            "units"
        ),
        "000",
        "true",
        "σ scales like the input (factor a for input a·x), σ² like its square",
        FACT_CHECK,
        "fc-variance",
    ),
    _c(
        "scale_invariance",
        "whether your features range from 0-1 or 0-1000, they'll be normalized to a similar scale",
        "000",
        "true under conditions",
        (
            "for a positive factor and σ² ≫ ε; a negative factor flips the sign, and tiny inputs "
            "meet ε"
        ),
        FACT_CHECK,
        "fc-variance",
    ),
    # --- chapter "Epsilon" ---
    _c(
        "eps_outside_sqrt",
        "x̂₁ = (1.0 − 2.5)/(1.118 + 0.00001) under the formula x̂ = (x − μ)/√(σ² + ε)",
        "001",
        "false",
        "x̂ = (x − μ)/√(σ² + ε), as the document's own formula and every framework",
        FACT_CHECK,
        "fc-epsilon",
        chapters=("06_normalizing",),
    ),
    _c(
        "variance_near_one",
        "$Var(\\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}}) \\approx 1$",
        "003",
        "true under conditions",
        "exactly σ²/(σ²+ε): near 1 only when σ² ≫ ε",
        FACT_CHECK,
        "fc-epsilon",
        chapters=("06_normalizing",),
    ),
    _c(
        "eps_typical",
        "ε (typically set to values like 1e-5 or 1e-8)",
        "000",
        "partly true",
        "1e-5 is PyTorch's LayerNorm default; 1e-8 is not the LayerNorm default of PyTorch, Flax "
        "or Keras (1e-5, 1e-6, 1e-3) but the ε of PyTorch's Adam (only the parenthesis is judged "
        "here; the rest of the sentence, what adding ε does, is judged under Checking a kernel)",
        FACT_CHECK,
        "fc-epsilon",
    ),
    # --- chapter "Normalizing" ---
    _c(
        "different_scales",
        "after normalization both samples ([1, 2, 3, 4] and [5, 6, 7, 8]) have similar "
        "distributions despite having different original scales",
        "000",
        "partly true",
        (
            "their x̂ are identical, more than similar (true); but the two samples have the same "
            "scale (σ² = 1.25) and differ in location (false)"
        ),
        FACT_CHECK,
        "fc-normalizing",
        chapters=("02_the_input",),
    ),
    _c(
        "invariance_affine",
        "$LN(ax + b) = LN(x)$ for any scalar $a$ and vector $b$",
        "003",
        "false",
        "$\\hat x(ax + c\\mathbf{1}) = \\operatorname{sign}(a)\\,\\hat x(x)$ for ε = 0, $a \\ne "
        "0$ (so LN with β = 0 flips sign too; with β ≠ 0 only the γ-part does); with ε > 0 only "
        "approximately",
        FACT_CHECK,
        "fc-normalizing",
        chapters=("10_family",),
    ),
    # --- chapter "Gamma and beta" ---
    _c(
        "gamma_per_sample",
        "$\\tilde a_{n,i} = \\gamma_n \\hat a_{n,i} + \\beta_n$, one pair per example n",
        "002",
        "false",
        "one $\\gamma_i$, $\\beta_i$ per feature $i$, shared by all samples",
        FACT_CHECK,
        "fc-gamma-beta",
        chapters=("02_the_input", "10_family"),
    ),
    _c(
        "undo_normalization",
        (
            "with appropriate values of γ and β, the layer can learn to perform an identity "
            "transformation"
        ),
        "000",
        "true under conditions",
        "only for inputs that all share one mean and one spread ($\\gamma_i = "
        "\\sqrt{\\sigma^2+\\varepsilon}$, $\\beta_i = \\mu$); γ and β are shared by every sample, "
        "so they cannot undo the normalization of samples that differ",
        FACT_CHECK,
        "fc-gamma-beta",
        chapters=("06_normalizing",),
    ),
    # --- chapter "The complete examples" ---
    _c(
        "example_512",
        "σ² ≈ 0.0023, σ ≈ 0.048, x̂₁ = (0.146 − 0.135)/(0.048 + 0.00001) ≈ 0.229, …, x̂₃ ≈ 1.188",
        "001",
        "partly true",
        (
            "the statistics agree at the printed rounding; the normalization divides by σ + ε "
            "instead of √(σ² + ε)"
        ),
        FACT_CHECK,
        "fc-examples",
    ),
    # --- chapter "Gradients" ---
    _c(
        "update_rule_sum",
        (
            "$\\Delta\\gamma = -\\eta\\sum_{i=1}^H \\dfrac{\\partial L}{\\partial y_i}\\hat x_i$ "
            "(and Δβ alike)"
        ),
        "003",
        "false",
        (
            "$\\partial \\mathcal L/\\partial\\gamma_i = \\sum_n (\\partial \\mathcal L/\\partial "
            "y_{n,i})\\,\\hat x_{n,i}$: a sum over samples and tokens, per feature"
        ),
        FACT_CHECK,
        "fc-gradients",
    ),
    _c(
        "gradient_formula",
        (
            "$\\dfrac{\\partial LN(x)}{\\partial x_i} = \\dfrac{\\gamma}{\\sigma}(1 - \\dfrac1H - "
            "\\dfrac{x_i-\\mu}{\\sigma^2}\\dfrac1H\\sum_j (x_j - \\mu))$"
        ),
        "003",
        "false",
        (
            "$J_{ij} = (\\gamma_i/s)\\,(\\delta_{ij} - 1/H - \\hat x_i\\hat x_j/H)$, with $s = "
            "\\sqrt{\\sigma^2 + \\varepsilon}$; the document's last term is 0"
        ),
        FACT_CHECK,
        "fc-gradients",
    ),
    _c(
        "chain_rule_single_path",
        (
            "$\\dfrac{\\partial L}{\\partial x_i} = \\dfrac{\\partial L}{\\partial "
            "y_i}\\dfrac{\\partial y_i}{\\partial \\hat x_i}\\dfrac{\\partial \\hat x_i}{\\partial "
            "x_i}$"
        ),
        "003",
        "false",
        (
            "$\\partial \\mathcal L/\\partial x_i = \\sum_j (\\partial \\mathcal L/\\partial "
            "y_j)(\\partial y_j/\\partial x_i)$: every output depends on every input"
        ),
        FACT_CHECK,
        "fc-gradients",
    ),
    _c(
        "gradient_scale_alpha",
        (
            "$\\dfrac{\\partial L}{\\partial(\\alpha x)} = \\dfrac1\\alpha \\dfrac{\\partial "
            "L}{\\partial x}$"
        ),
        "003",
        "true under conditions",
        "for α > 0 and ε = 0; for α < 0 the output flips sign, so the factor depends on the loss "
        "($1/\\lvert\\alpha\\rvert$ for the same upstream gradient); the factor saturates when "
        "α²σ² ≲ ε",
        FACT_CHECK,
        "fc-gradients",
    ),
    _c(
        "gradient_magnitude_control",
        (
            "Layer Normalization helps control the magnitude of gradients, preventing them from "
            "becoming too large or too small"
        ),
        "000",
        "true under conditions",
        "$\\lVert dx\\rVert \\le \\max_i\\lvert\\gamma_i\\rvert\\,\\lVert dy\\rVert/s$: a cap on "
        "amplification only when the divisor $s = \\sqrt{\\sigma^2 + \\varepsilon}$ is not small; "
        "a small divisor amplifies the gradient up to 1/√ε",
        FACT_CHECK,
        "fc-gradients",
    ),
    _c(
        "smoother_landscape",
        "normalization creates a smoother loss landscape",
        "000",
        "not checkable as stated",
        (
            "no measure of smoothness is given; Santurkar et al. measured one for batch norm, not "
            "for LayerNorm"
        ),
        FACT_CHECK,
        "fc-gradients",
    ),
    _c(
        "smoothed_across_features",
        (
            "the gradient is 'smoothed' across all features, preventing any single feature from "
            "having an outsized impact"
        ),
        "000",
        "partly true",
        (
            "every $dx_j$ depends on every $dy_i$ (true); nothing caps one feature's share: dx is "
            "linear in dy (false)"
        ),
        FACT_CHECK,
        "fc-gradients",
    ),
    # --- chapter "The family" ---
    _c(
        "instance_norm_definition",
        "Instance Normalization: Normalizes each sample independently",
        "001",
        "true",
        (
            "true, but it describes layer, group and RMS norm as well; what defines instance norm "
            "is one mean and variance per channel of each sample"
        ),
        FACT_CHECK,
        "fc-family",
        chapters=("01_why_normalize",),
    ),
    _c(
        "bishop_small_batch",
        "with batch normalization, if the batch size is too small then the estimates of the mean "
        "and variance become too noisy; [...] layer normalization [normalizes] across the "
        "hidden-unit values for each data point",
        "002",
        "true",
        (
            "batch norm's output for one sample spreads more as the batch shrinks; layer norm's "
            "does not depend on the batch"
        ),
        FACT_CHECK,
        "fc-family",
    ),
    # --- chapter "Pre-norm vs post-norm" ---
    _c(
        "constant_gradient_depth",
        "$\\lVert\\partial L/\\partial\\theta\\rVert \\approx$ constant regardless of layer depth",
        "003",
        "false",
        "gradient norms depend on the layer and the depth, differently for pre- and post-norm",
        FACT_CHECK,
        "fc-placement",
    ),
    _c(
        "consistent_scale",
        "our model uses pre-norm! [...] → consistent scale throughout",
        "001",
        "true under conditions",
        (
            "in post-norm the residual stream keeps one scale; in pre-norm only what each branch "
            "reads does, the stream grows with depth"
        ),
        FACT_CHECK,
        "fc-placement",
    ),
    _c(
        "placement_chains",
        (
            "Post-norm: Input → Attention → LayerNorm → Output; pre-norm: Input → LayerNorm → "
            "Attention → Output"
        ),
        "001",
        "false",
        (
            "both placements have a residual connection, which the chains omit; without it the two "
            "stacks differ only at their ends"
        ),
        FACT_CHECK,
        "fc-placement",
    ),
    # --- chapter "LayerNorm after 2020" (the papers' central claims: about trained models, so
    # not checkable in the book's toys; the correct statement keeps what initialization shows) ---
    _c(
        "curse_of_depth",
        "While Pre-LN stabilizes the training of Transformer LLMs, its output variance "
        "exponentially grows with the model depth, which undesirably causes the derivative of the "
        "deep Transformer blocks to be an identity matrix",
        "sun2025curse",
        "not checkable as stated",
        "a claim about trained LLMs: the paper's analysis bounds the variance between $\\Theta(L)$ "
        "and $\\Theta(e^L)$, and its evidence of exponential growth is measured during training, "
        "which a check at initialization cannot reach; at initialization Pre-LN's stream variance "
        "grows linearly with depth, the lower bound, and the deep blocks do come close to the "
        "identity (each turns its input by a much smaller angle than the first blocks)",
        FACT_CHECK,
        "fc-papers",
    ),
    _c(
        "layer_norm_scaling",
        "This simple modification mitigates the output variance explosion of deeper Transformer "
        "layers, improving their contribution",
        "sun2025curse",
        "not checkable as stated",
        "the deep layers' larger contribution is a property of trained models, which only training "
        "could show; at initialization scaling each norm's output by $1/\\sqrt{\\ell}$ keeps the "
        "stream variance an order of magnitude lower, and the deep blocks then change their input "
        "even less than in Pre-LN",
        FACT_CHECK,
        "fc-papers",
    ),
    _c(
        "peri_ln_balanced",
        "Peri-LN consistently achieves more balanced variance growth, steadier gradient flow, and "
        "convergence stability",
        "kim2025peri",
        "not checkable as stated",
        "steadier gradient flow and convergence stability are properties of training runs, which a "
        "check at initialization cannot reach; for any weights, normalizing each branch's output "
        "makes every sub-layer add the same variance whatever the scale of its weights, so the "
        "stream cannot grow faster than linearly when the branches' outputs grow; at Xavier "
        "initialization Peri-LN's stream grows faster than Pre-LN's (2 per layer in expectation, "
        "derived by symmetry, against the slope Pre-LN's weights and depth set)",
        FACT_CHECK,
        "fc-papers",
    ),
    _c(
        "mix_ln_uniform",
        "Pre-LN [...] leads to diminished gradient norms in its deeper layers [...] Post-LN [...] "
        "suffers from vanishing gradients in earlier layers. [...] Mix-LN applies Post-LN to the "
        "earlier layers and Pre-LN to the deeper layers, ensuring more uniform gradients across "
        "layers",
        "li2025mixln",
        "not checkable as stated",
        "the claim is about the gradients in training, which a toy at initialization cannot check; "
        "at initialization Pre-LN's deepest layers do get smaller gradients than its first; "
        "Post-LN's bottom layer mostly gets less than its top, but by a median factor of about 2 "
        "over 48 layers, not a vanishing; and Mix-LN's per-layer gradients are on average more "
        "uneven than Post-LN's and Pre-LN's",
        FACT_CHECK,
        "fc-papers",
    ),
    _c(
        "deepnorm_best_of_both",
        "The proposed method combines the best of two worlds, i.e., good performance of Post-LN "
        "and stable training of Pre-LN",
        "wang2022deepnet",
        "not checkable as stated",
        "performance and stability are properties of training runs; at initialization DeepNorm "
        "keeps Post-LN's unit-variance stream and has the most level per-layer gradients of the "
        "seven placements",
        FACT_CHECK,
        "fc-papers",
    ),
    _c(
        "qk_norm_logits",
        "[The divergence] was caused by extremely large values in attention logits, which lead to "
        "(almost one-hot) attention weights with near-zero entropy",
        "dehghani2023scaling",
        "not checkable as stated",
        "what made the paper's training run diverge is a fact of that run, which no toy can rerun; "
        "the mechanism holds at any weight scale: the logits grow as the square of the query/key "
        "scale and the attention entropy falls towards 0; with LayerNorm on q and k every logit "
        "stays below $\\sqrt d$ at any scale",
        FACT_CHECK,
        "fc-papers",
    ),
    _c(
        "dyt_s_shape",
        (
            "layer normalization in Transformers often produces tanh-like, S-shaped input-output "
            "mappings"
        ),
        "zhu2025transformers",
        "not checkable as stated",
        "how often trained Transformers' norms see tokens of unequal scale is a property of "
        "trained models, which the book's synthetic stand-in cannot show; the mechanism holds for "
        "any input: when the tokens reaching the norm differ in scale (heavy tails, a few very "
        "large entries) the entries fall along an S that $\\gamma\\tanh(\\alpha x)$ fits far "
        "better than a line; for tokens of equal scale the map is a straight line",
        FACT_CHECK,
        "fc-papers",
    ),
    # --- chapter "Numerics" ---
    _c(
        "eps_numerical_stability",
        (
            "even with very small variances, division can lead to extremely large values that "
            "cause instability"
        ),
        "000",
        "true under conditions",
        "with the exact variance $\\lvert\\hat x_i\\rvert \\le \\sqrt{H-1}$ for every "
        "non-constant input; large values come from a wrongly computed (one-pass) variance",
        FACT_CHECK,
        "fc-numerics",
    ),
    # --- chapter "LayerNorm at the speed of memory" ---
    _c(
        "per_example_parallel",
        "For each example $n = 1, \\ldots, K$ (in parallel): compute the sample mean and "
        "variance, normalize, re-scale",
        "002",
        "true",
        "each example's forward statistics and outputs depend on that example alone, so rows can "
        "be computed in any order or split among threads with bit-identical results; the "
        "backward's dγ and dβ are sums over all examples",
        FACT_CHECK,
        "fc-memory",
    ),
    # --- chapter "LayerNorm on a GPU" ---
    _c(
        "batch_split_across_gpus",
        "for very large training sets, the mini-batches may be split across different GPUs, "
        "making global normalization across the mini-batch inefficient",
        "002",
        "true",
        "statistics over a mini-batch split across devices need the devices' per-feature sums "
        "exchanged (an all-reduce in every batch-norm layer, forward and backward); without it "
        "each device normalizes with its own shard's statistics. Layer norm's statistics are per "
        "token, so each device normalizes its own rows with no exchange, exactly as one device "
        "would",
        FACT_CHECK,
        "fc-family",
        chapters=("15_gpu",),
    ),
    # --- chapter "Check your own LayerNorm" ---
    _c(
        "eps_in_half",
        "The small constant ε [...] is added to the variance before taking the square root",
        "000",
        "true under conditions",
        "where the statistics are float32 or wider, as the frameworks keep them for 16-bit data; "
        "in float16 arithmetic an ε as small as the sentence's 1e-8 rounds to 0, so a constant "
        "row becomes 0/0 (the sentence's parenthesis, which values are typical, is the claim "
        "judged under Epsilon)",
        FACT_CHECK,
        "fc-kernel",
    ),
    # --- chapter "Fact check": definitions ---
    _c(
        "standardizes_mean0_var1",
        "normalization standardizes activations to mean 0, variance 1",
        "001",
        "true under conditions",
        (
            "x̂ has mean 0 and variance σ²/(σ²+ε) ≤ 1 over its features; after γ, β the output has "
            "whatever mean and spread they give"
        ),
        FACT_CHECK,
        "fc-definitions",
        ("05_epsilon", "07_gamma_beta"),
    ),
    _c(
        "initial_identity",
        "initially, normalization is identity! (γ = 1, β = 0)",
        "001",
        "true",
        "read where the document writes it, after x̂ is computed: at γ = 1, β = 0 the "
        "scale-and-shift step is the identity, so the layer outputs x̂ (not x)",
        FACT_CHECK,
        "fc-definitions",
        ("07_gamma_beta",),
    ),
    # --- chapter "Fact check": statistics ---
    _c(
        "cov_xhat",
        "$Cov(\\hat x_i, \\hat x_j) = -1/(H-1)$ for i ≠ j",
        "003",
        "true under conditions",
        (
            "exact for exchangeable features (e.g. i.i.d.) and ε = 0; −E[σ²/(σ²+ε)]/(H−1) with ε; "
            "fails for unequal features"
        ),
        FACT_CHECK,
        "fc-statistics",
    ),
    _c(
        "cov_scaling",
        "$Cov(y_i, y_j) =$ $\\gamma_i\\gamma_j Cov(\\hat x_i, \\hat x_j)$",
        "003",
        "true",
        "holds for any input: β is constant and covariance is bilinear",
        FACT_CHECK,
        "fc-statistics",
    ),
    _c(
        "cov_output_formula",
        "$Cov(LN(x)_i, LN(x)_j) =$ $\\frac{\\gamma_i\\gamma_j}{H}(\\delta_{ij} - \\frac1H)$",
        "003",
        "false",
        (
            "$\\gamma_i\\gamma_j\\frac{H}{H-1}(\\delta_{ij} - \\frac1H)$ for exchangeable inputs, "
            "ε = 0: the document's is $H^2/(H-1)$ times too small"
        ),
        FACT_CHECK,
        "fc-statistics",
    ),
    _c(
        "moments_first_two",
        "$E[\\hat x] = 0$, $E[\\hat x^2] = 1$",
        "003",
        "true under conditions",
        "read over one sample's features, as $\\mathbb{E}[x - \\mu_l] = 0$ is: mean 0 exactly, "
        "mean square σ²/(σ²+ε), 1 only for ε = 0; per feature over samples the same only for "
        "exchangeable inputs",
        FACT_CHECK,
        "fc-statistics",
        ("06_normalizing",),
    ),
    _c(
        "moments_three_four",
        "$E[\\hat x^3] \\approx 0$, $E[\\hat x^4] \\approx 3$",
        "003",
        "true under conditions",
        (
            "$E[\\hat x^4] = 3(H-1)/(H+1)$ for normal inputs (1 at H = 2); other inputs give their "
            "own skewness and kurtosis"
        ),
        FACT_CHECK,
        "fc-statistics",
    ),
    _c(
        "output_mean_var",
        "$E[LN(x)] = \\beta$, $Var(LN(x)) = \\gamma^2$",
        "003",
        "true under conditions",
        (
            "over one sample's features only if γ and β are constant (and ε = 0); per feature over "
            "samples for exchangeable inputs and ε = 0"
        ),
        FACT_CHECK,
        "fc-statistics",
        ("07_gamma_beta",),
    ),
    _c(
        "normality",
        "$(LN(x) - \\beta)/\\gamma \\to \\mathcal N(0, 1)$ as H → ∞",
        "003",
        "true under conditions",
        "for i.i.d. normal inputs only: for i.i.d. features x̂_i tends to the standardized input "
        "distribution, normal only when the inputs are (uniform inputs give kurtosis 9/5)",
        FACT_CHECK,
        "fc-statistics",
    ),
    _c(
        "decorrelation",
        "LayerNorm reduces the correlation between features",
        "000",
        "true under conditions",
        "only for features that share a common factor: it removes the factor if all features "
        "share it equally and weakens it otherwise, while independent features become correlated "
        "(−1/(H−1))",
        FACT_CHECK,
        "fc-statistics",
        ("09_gradients",),
    ),
    # --- chapter "Fact check": optimization ---
    _c(
        "natural_gradient",
        (
            "layer normalization approximates natural gradient descent, $\\Delta\\theta \\approx "
            "F^{-1}g$"
        ),
        "003",
        "not checkable as stated",
        (
            "Ba et al. (§5.2) show that growing weights shrink the gradient (an implicit "
            "learning-rate decay); they do not claim this"
        ),
        FACT_CHECK,
        "fc-optimization",
        ("09_gradients",),
    ),
    _c(
        "convergence_gamma",
        (
            "$\\lVert\\gamma_{t+1} - \\gamma_t\\rVert \\le$ $(1-\\alpha)\\lVert\\gamma_t - "
            "\\gamma_{t-1}\\rVert$"
        ),
        "003",
        "not checkable as stated",
        (
            "α is undefined; full-batch gradient descent on a quadratic contracts only for $\\eta "
            "< 2/\\lambda_{\\max}$, and SGD steps do not shrink"
        ),
        FACT_CHECK,
        "fc-optimization",
    ),
    # --- chapter "Fact check": information ---
    _c(
        "entropy_reduction",
        "$H(LN(x)) \\le H(x)$, with equality iff x is already normalized",
        "003",
        "not checkable as stated",
        (
            "differential entropy of LN(x) is −∞ (x̂ lies on an (H−2)-sphere for ε = 0, in a "
            "hyperplane for ε > 0); for discrete x, ≤ holds for any function and the 'iff' is false"
        ),
        FACT_CHECK,
        "fc-information",
    ),
    _c(
        "information_bottleneck",
        "LayerNorm creates an information bottleneck: $I(X;Y) \\le I(X;\\hat X)$",
        "003",
        "false",
        "the inequality holds for any Y computed from X̂ and is an equality when every $\\gamma_i "
        "\\ne 0$: the step it describes (γ, β) creates no bottleneck; what LN drops is each "
        "sample's mean and scale, in x → x̂, which the inequality does not mention",
        FACT_CHECK,
        "fc-information",
    ),
    _c(
        "mi_gradient",
        (
            "$\\dfrac{\\partial I(X;Y)}{\\partial\\gamma} = E[\\hat x \\dfrac{\\partial "
            "L}{\\partial y}]$"
        ),
        "003",
        "not checkable as stated",
        (
            "the right side is $\\partial E[L]/\\partial\\gamma_i$ (true); I(X;Y) has no loss in "
            "it and does not change with γ"
        ),
        FACT_CHECK,
        "fc-information",
    ),
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


def _slug(heading: str) -> str:
    """A heading's anchor as MyST makes it (``heading_anchors``): lower case, letters, digits and
    hyphens (kept)."""
    return "-".join("".join(ch for ch in heading.lower() if ch.isalnum() or ch in " -").split())


def section_anchor(label: str) -> str:
    """The anchor of a section of the chapter "Fact check": its heading's slug, as MyST
    (``heading_anchors``) and the links use."""
    return _slug(SECTION_TITLES[label])


def home_link(item: Claim, *, here: bool = False) -> str:
    """A markdown link to where `item` is judged: a section of the chapter "Fact check" or another
    chapter.

    Plain markdown links to the notebooks, so they work in JupyterLab and on the website alike.
    With ``here=True`` a section of the chapter "Fact check" is linked by its title alone, "“The
    mean”, below" (for its own table).
    """
    if (
        item.home == FACT_CHECK
    ):  # a section is named with its chapter, unless the link is in that chapter
        name = (
            f"“{SECTION_TITLES[item.section]}”, below"
            if here
            else f"{chapter_titles()[FACT_CHECK]}, “{SECTION_TITLES[item.section]}”"
        )
        return f"[{name}]({FACT_CHECK}.ipynb#{section_anchor(item.section)})"
    return f"[{chapter_titles()[item.home]}]({item.home}.ipynb)"


def claims_table(claims=None) -> str:
    """The summary table as markdown, two columns so it fits a page (chapter "Fact check").

    Columns: the verdict; then the claim with its source document (linked to the Sources page), the
    correct statement, and a link to the claim's home: a section of the chapter "Fact check" or the
    chapter whose box judges it. `claims` defaults to :data:`CLAIMS`.
    """
    claims = CLAIMS if claims is None else claims
    lines = ["| verdict | claim (source); correct statement (judged in) |", "|---|---|"]
    for item in claims:
        source = _source_link(item.source)
        cells = [
            f"**{item.verdict}**",
            (
                f"“{item.quote}” ({source}). **Correct:** {item.correct} "
                f"({home_link(item, here=True)})"
            ),
        ]
        if any("|" in cell for cell in cells):
            raise ValueError(
                f"claim {item.key!r}: a '|' would split its table row; write norms as \\lVert ... "
                "\\rVert."
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _source_link(source: str) -> str:
    """A source document links to the Sources page; a paper to its arXiv abstract."""
    if source in PAPERS:
        arxiv, title = PAPERS[source]
        return f"[{title}](https://arxiv.org/abs/{arxiv})"
    title = SOURCES[source][1]
    return f"[{source}: {title}](sources.md#{_slug(f'{source}: {title}')})"


def verdict_legend() -> str:
    """The verdicts and their meanings as a MyST list: the one place the book defines them (chapter
    "Fact check")."""
    return "\n".join(f"- **{verdict}**: {meaning}" for verdict, meaning in VERDICT_MEANINGS.items())


#: The tag of the markdown cell of the chapter "Fact check" that holds :func:`verdicts_markdown`.
VERDICTS_TAG = "lnlib-fact-check-table"


def verdicts_markdown(claims=None) -> str:
    """The verdicts' meanings and the summary table, as the chapter "Fact check" shows them.

    A markdown cell of that chapter (tagged :data:`VERDICTS_TAG`) holds this text, so it reads in
    JupyterLab before any cell runs and sits, with no code cell, among the chapter's verdicts;
    ``make notebooks`` writes it (:func:`lnlib.book.tools.verdicts.fill_verdicts`) and
    ``tests/book/test_claims_coherence.py`` fails if it differs.
    """
    return verdict_legend() + "\n\n" + claims_table(claims)
