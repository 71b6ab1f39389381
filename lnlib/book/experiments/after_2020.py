r"""The depth scalings of the chapter "LayerNorm after 2020": how large the residual stream grows
with depth when the branch is scaled.

Each layer of :mod:`lnlib.book.models.transformer` (attention, then the ReLU FFN), each sub-layer
:math:`F` in a residual connection, at initialization; ℓ = 1, ..., L is the layer:

==============  ===================================================  ===============================
scaling         one residual sub-layer                               source
==============  ===================================================  ===============================
``pre``         :math:`x + F(\mathrm{LN}(x))`                        Pre-LN (Xiong et al., 2020)
``lns``         :math:`x + F(\mathrm{LN}(x)/\sqrt{\ell})`            LayerNorm scaling (Sun et al.,
                                                                     2025)
``depth_mup``   :math:`x + F(\mathrm{LN}(x))/\sqrt{L}`               depth-μP's branch multiplier
                                                                     (Yang et al., 2023; Bordelon et
                                                                     al., 2023)
``rezero``      :math:`x + \alpha F(x)`, :math:`\alpha = 0`, no LN   ReZero at initialization
                                                                     (Bachlechner et al., 2020)
``scaled``      :math:`x + F(\mathrm{LN}(x))/\sqrt{2L}`              GPT-2's and Megatron's scaled
                                                                     init (Radford et al., 2019;
                                                                     Shoeybi et al., 2019), at
                                                                     initialization
``lns_scaled``  :math:`x + F(\mathrm{LN}(x)/\sqrt{\ell})/\sqrt{2L}`  both, the pairing Sun et al.
                                                                     (2025) advise against
==============  ===================================================  ===============================

At initialization a scaled init of a branch's last matrix (``Wo`` or ``W2``) scales what the
branch adds by the same factor, since both sub-layers are linear in that matrix; so the two
``scaled`` rows are an output multiplier :math:`b = 1/\sqrt{2L}` (``tests/book/test_after_2020.py``
checks them against :func:`lnlib.book.models.placements.placement_profile` with ``out_scale``).

Only the forward pass is needed: the chapter measures the hidden-state variance
:math:`\lVert x_\ell \rVert^2 / H` after each layer (:func:`scaled_stream`) and how alike the tokens
of a sequence have become, the mean cosine between their normalized states
(:func:`token_similarity`, the toy's view of rank collapse, Dong et al., 2021; Noci et al., 2022).
Seeds and weights are drawn as :func:`lnlib.book.models.placements.placement_profile` draws them, so
the ``pre`` and ``lns`` rows equal that function's ``stream_sq`` seed by seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...forward import layer_norm
from ...norms import rms_norm
from ...validation import check_count
from ..models.dyt import fit_tanh, heavy_tailed_tokens, s_curve
from ..models.placements import (
    PLACEMENT_LABELS,
    _angular_distance,
    init_weights,
    logit_statistics,
    mixln_post_layers,
    placement_forward,
    placement_profile,
    placement_summary,
    profile_table,
    sublayer_gradient_gains,
    typical,
)
from ..models.transformer import attention_forward, ffn_forward, init_layer, model_norm
from ..tools import prose

__all__ = [
    "DEPTH_SCALINGS",
    "FINDINGS",
    "Findings",
    "NORM_MEASURES",
    "branch_scale",
    "findings",
    "scaled_stream",
    "token_similarity",
    "norm_gaps",
    "turn_angles",
]

#: The scalings :func:`scaled_stream` knows, in the order the chapter's table lists them.
DEPTH_SCALINGS = ("pre", "lns", "depth_mup", "rezero", "scaled", "lns_scaled")


def branch_scale(scaling: str, ell: int, depth: int) -> tuple[float, float, bool]:
    r"""How layer `ell` of `depth` scales its sub-layers:
    ``(input scale, output scale, normalize input)`` (chapter "LayerNorm after 2020").

    The sub-layer is :math:`x + b\,F(a\,N(x))` with :math:`N` the LayerNorm when the
    third entry is true and the identity otherwise; :math:`a` and :math:`b` are the first two
    entries.
    """
    if scaling not in DEPTH_SCALINGS:
        raise ValueError(f"scaling must be one of {DEPTH_SCALINGS}; got {scaling!r}.")
    if scaling == "lns":
        return 1.0 / np.sqrt(ell), 1.0, True
    if scaling == "depth_mup":
        return 1.0, 1.0 / np.sqrt(depth), True
    if scaling == "rezero":
        return 1.0, 0.0, False  # ReZero's alpha starts at 0
    if scaling == "scaled":
        return 1.0, 1.0 / np.sqrt(2 * depth), True
    if scaling == "lns_scaled":
        return 1.0 / np.sqrt(ell), 1.0 / np.sqrt(2 * depth), True
    return 1.0, 1.0, True


def _states(scaling, depth, width, seeds, tokens, batch, first_seed):
    """Seed by seed, the stream entering the stack and after each layer: ``(seed, states)`` with
    ``states[ell]`` of shape (batch, tokens, width), ell = 0 (the input) to L."""
    depth, width, seeds = (
        check_count(depth, "depth"),
        check_count(width, "width"),
        check_count(seeds, "seeds"),
    )
    tokens, batch = check_count(tokens, "tokens"), check_count(batch, "batch")
    branch_scale(scaling, 1, depth)  # checks the name
    for s in range(seeds):
        rng = np.random.default_rng(first_seed + s)
        weights = init_weights("pre", depth, width, rng=rng)
        x = rng.normal(size=(batch, tokens, width))
        states = [x]
        for ell, w in enumerate(weights, start=1):
            a, b, normalize = branch_scale(scaling, ell, depth)
            for sub in (attention_forward, ffn_forward):
                read = model_norm(x)[0] if normalize else x
                x = x + b * sub(a * read, w)[0]
            states.append(x)
        yield s, states


def scaled_stream(
    scaling: str,
    depth: int,
    width: int = 32,
    *,
    seeds: int = 3,
    tokens: int = 8,
    batch: int = 2,
    first_seed: int = 0,
) -> np.ndarray:
    r"""The hidden-state variance after each layer of a stack scaled by `scaling`, at initialization
    (chapter "LayerNorm after 2020").

    Parameters
    ----------
    scaling : str
        One of :data:`DEPTH_SCALINGS`.
    depth : int
        L, the number of layers.
    width : int, default 32
        H, the width of the residual stream.
    seeds : int, default 3
        Independent repetitions: seed s draws Xavier weights and then a batch of
        N(0, 1) inputs from ``np.random.default_rng(first_seed + s)``.
    tokens, batch : int
        Sequence length and number of sequences.
    first_seed : int
        The first seed.

    Returns
    -------
    ndarray, shape (seeds, depth + 1)
        Mean over tokens of :math:`\lVert x_\ell \rVert^2 / H`, for ℓ = 0 (the input) to L.
    """
    depth, seeds = check_count(depth, "depth"), check_count(seeds, "seeds")
    out = np.empty((seeds, depth + 1))
    for s, states in _states(scaling, depth, width, seeds, tokens, batch, first_seed):
        out[s] = [np.mean(np.sum(x * x, axis=-1)) / width for x in states]
    return out


def token_similarity(
    scaling: str,
    depth: int,
    width: int = 32,
    *,
    seeds: int = 3,
    tokens: int = 8,
    batch: int = 2,
    first_seed: int = 0,
) -> np.ndarray:
    r"""How alike the tokens of a sequence are after each layer of a stack scaled by `scaling`, at
    initialization (chapter "LayerNorm after 2020").

    The mean, over the sequences and over every pair of distinct tokens :math:`i \ne j`, of the
    cosine between their normalized states :math:`\mathrm{LN}(x_\ell)`: 0 for independent random
    tokens, 1 when every token points the same way (rank collapse). The arguments, seeds and weights
    are those of :func:`scaled_stream`, so the two describe the same stacks.

    Returns
    -------
    ndarray, shape (seeds, depth + 1)
        The mean cosine for ℓ = 0 (the input) to L.
    """
    depth, seeds = check_count(depth, "depth"), check_count(seeds, "seeds")
    out = np.empty((seeds, depth + 1))
    for s, states in _states(scaling, depth, width, seeds, tokens, batch, first_seed):
        out[s] = [_mean_cosine(model_norm(x)[0]) for x in states]
    return out


def turn_angles(
    scaling: str,
    depth: int,
    width: int = 32,
    *,
    seeds: int = 3,
    tokens: int = 8,
    batch: int = 2,
    first_seed: int = 0,
) -> np.ndarray:
    r"""The angle each layer turns the stream by, over π, in a stack scaled by `scaling` (chapter
    "LayerNorm after 2020").

    The mean over tokens of :math:`\arccos\cos(x_{\ell-1}, x_\ell)/\pi`, as
    :func:`lnlib.book.models.placements.placement_profile` measures it (0 when a layer adds nothing
    or only rescales). The arguments, seeds and weights are those of :func:`scaled_stream`.

    Returns
    -------
    ndarray, shape (seeds, depth)
        The angle of layer ℓ = 1 to L.
    """
    depth, seeds = check_count(depth, "depth"), check_count(seeds, "seeds")
    out = np.empty((seeds, depth))
    for s, states in _states(scaling, depth, width, seeds, tokens, batch, first_seed):
        out[s] = [_angular_distance(a, b) for a, b in zip(states[:-1], states[1:])]
    return out


def _mean_cosine(x: np.ndarray) -> float:
    """The mean cosine between distinct tokens of each sequence of `x`, shape (batch, tokens,
    width)."""
    unit = x / np.linalg.norm(x, axis=-1, keepdims=True)
    gram = unit @ np.swapaxes(unit, -1, -2)
    n = x.shape[-2]
    return float(
        np.mean((gram.sum(axis=(-1, -2)) - np.trace(gram, axis1=-2, axis2=-1)) / (n * (n - 1)))
    )


# --- The numbers the chapter's prose quotes -------------------------------------------------------

#: Every key of :attr:`Findings.numbers`, with what it states. "±" keys are a mean ± sd over the
#: seeds (:func:`lnlib.book.tools.prose.mean_sd`); "median" keys a median of a skewed quantity
#: (:func:`lnlib.book.models.placements.typical`); "seeds where" keys a count of seeds.
FINDINGS = {
    "seeds": "the number of seeds every measurement is repeated over",
    # RMSNorm (16-layer Pre-LN stack, the stream after each layer)
    "rms_mean_share": "± the mean share |mean(x)|/rms(x) of the stream's tokens",
    "rms_gap": "± rms(RMSNorm(x) - LN(x)) over the tokens, relative to the output's size",
    "rms_share_formula": "√(2/(πH)) at H = 32, the mean share of iid tokens",
    "rms_share_4096": "√(2/(πH)) at H = 4096",
    # the placements at depth L (profiles of lnlib.book.models.placements)
    "top_pre": "± Pre-LN's variance after the last layer",
    "top_lns": "± LN scaling's variance after the last layer",
    "top_peri": "± Peri-LN's variance after the last layer",
    "top_olmo2": "± OLMo 2's variance after the last layer",
    "ratio_pre": "± Pre-LN's top-layer gradient over its bottom layer's",
    "ratio_pre_max": "the largest of those ratios over the seeds",
    "ratio_post_median": "median of Post-LN's top-over-bottom gradient ratio",
    "ratio_post_min": "the smallest of those ratios",
    "ratio_post_max": "the largest of those ratios",
    "ratio_post_above_1": "seeds where Post-LN's top layer gets the larger gradient",
    "spread_pre": "± Pre-LN's per-layer gradient sd over mean",
    "spread_post": "± Post-LN's per-layer gradient sd over mean",
    "spread_mixln": "± Mix-LN's per-layer gradient sd over mean",
    "spread_deepnorm": "± DeepNorm's per-layer gradient sd over mean",
    "mixln_over_post": "seeds where Mix-LN's spread exceeds Post-LN's",
    "mixln_over_pre": "seeds where Mix-LN's spread exceeds Pre-LN's",
    "pre_var_half": "± Pre-LN's variance after layer L/2",
    "pre_var_ratio": "± per seed, Pre-LN's variance after layer L over that after L/2",
    "pre_var_half_squared": "(mean variance after L/2)², one significant digit: exponential growth",
    "pre_slope": "± Pre-LN's variance growth per layer (least-squares slope)",
    "pre_slope_24": "± the same slope in a stack of L/2 layers",
    "pre_slope_24_wide": "± the same slope in a stack of L/2 layers of width 2H",
    "peri_slope": "± Peri-LN's variance growth per layer",
    "olmo2_slope": "± OLMo 2's variance growth per layer",
    "peri_slope_se": "the standard error of Peri-LN's mean slope",
    "peri_over_pre": "seeds where Peri-LN's slope exceeds Pre-LN's",
    "pre_angle_first": "± the angle Pre-LN's layer 1 turns the stream by, over π",
    "pre_angle_last": "± the angle Pre-LN's top layer turns the stream by, over π",
    "pre_angle_deep": "± Pre-LN's mean angle over its top 8 layers",
    "lns_angle_deep": "± LN scaling's mean angle over its top 8 layers",
    "deepnorm_angle_last": "± the angle DeepNorm's top layer turns the stream by",
    "olmo2_entropy": "± OLMo 2's mean attention entropy, nats",
    "pre_entropy": "± Pre-LN's mean attention entropy, nats",
    "uniform_entropy": "ln 8, the entropy of uniform attention over 8 tokens",
    "lns_over_pre": "± per seed, LN scaling's final variance over Pre-LN's",
    "mixln_posts": "the number of Post-LN layers of Mix-LN at depth L",
    # the same placements with every norm an RMSNorm (same weights, inputs and seeds)
    "norm_pairs": "the placement-and-summary pairs compared, LayerNorm against RMSNorm",
    "norm_apart": "pairs whose two means differ by more than the larger sd over the seeds",
    "norm_largest_gap": "the largest |difference of the means| over the larger sd, of the pairs",
    "norm_largest_what": "the placement and summary of that largest gap, in words",
    "rms_top_pre": "± Pre-LN's variance after the last layer, RMSNorm everywhere",
    "rms_slope_pre": "± Pre-LN's variance growth per layer, RMSNorm everywhere",
    "rms_slope_peri": "± Peri-LN's variance growth per layer, RMSNorm everywhere",
    "rms_spread_olmo2": "± OLMo 2's per-layer gradient sd over mean, RMSNorm everywhere",
    "rms_over_ln_pre": "± per seed, Pre-LN's final variance with RMSNorm over with LayerNorm",
    # OLMo 2's gradients
    "olmo2_bottom_grad": "median of OLMo 2's bottom-layer weight gradient",
    "olmo2_bottom_min": "the smallest of those gradients",
    "olmo2_bottom_max": "the largest of those gradients",
    "peri_bottom_grad": "median of Peri-LN's bottom-layer weight gradient",
    "olmo2_attn_growth": "median product of OLMo 2's attention sub-layers' gradient gains",
    "olmo2_qk_bottom_grad": "median of OLMo 2's bottom-layer gradient with QK-norm",
    "olmo2_qk_entropy": "± OLMo 2's mean attention entropy with QK-norm, nats",
    # the branches' last matrices times 4
    "peri_growth": "mean factor by which Peri-LN's final variance grows (1.000: unchanged)",
    "peri_pre_growth": "± the factor by which Pre-LN's final variance grows",
    # QK-norm (one attention layer of width 64, 16 tokens)
    "qk_logit_1": "± the largest logit at q/k scale 1",
    "qk_logit_32": "± the largest logit at q/k scale 32",
    "qk_logit_ratio": "median over seeds of largest logit at scale 32 over scale 1",
    "qk_entropy_1": "± the mean attention entropy at scale 1, nats",
    "qk_entropy_8": "± the mean attention entropy at scale 8, nats",
    "qk_norm_max": "± with QK-norm, the largest logit over all scales",
    "qk_bound": "√d at a head width d = 64, QK-norm's bound with unit gains",
    "qk_norm_entropy": "± with QK-norm, the mean entropy at scale 32",
    "qk_uniform": "ln 16, the entropy of uniform attention over 16 tokens",
    # DyT (256 tokens of width 64 per draw)
    "dyt_alpha": "± α of the best γ tanh(α x) through heavy-tailed tokens' S-curve",
    "dyt_gamma": "± γ of that fit",
    "dyt_rms_tanh": "± that fit's root-mean-square error",
    "dyt_rms_line": "± the best line's root-mean-square error",
    "dyt_normal_tanh": "± the tanh fit's error for normal tokens",
    "dyt_normal_line": "± the line's error for normal tokens",
    "dyt_normal_ratio": "± per draw, the tanh's error over the line's for normal tokens",
    "dyt_ceiling": "√63, the largest LayerNorm output entry at width 64",
}

#: The summaries of :func:`lnlib.book.models.placements.placement_summary` compared between
#: LayerNorm and RMSNorm stacks, with how the prose names each.
NORM_MEASURES = {
    "top": "final variance",
    "slope": "growth per layer",
    "grad_spread": "gradient spread",
}

#: The q/k scales λ of the QK-norm section.
QK_SCALES = (1, 2, 4, 8, 16, 32)


@dataclass
class Findings:
    """What chapter "LayerNorm after 2020" measures at initialization (:func:`findings`).

    Attributes
    ----------
    numbers : dict
        Each key of :data:`FINDINGS`, formatted for the prose.
    profiles : dict
        :func:`lnlib.book.models.placements.profile_table` at the chapter's depth and width.
    qk_shown : tuple
        Seed 0's :func:`lnlib.book.models.placements.logit_statistics` at each of
        :data:`QK_SCALES`, without and with QK-norm (the QK figure).
    qk_ratio : ndarray
        Per seed, the largest logit at λ = 32 over that at λ = 1.
    dyt_shown : dict
        Draw 0's S-curves and fits: ``heavy``, ``heavy_fit``, ``normal``, ``normal_fit``.
    growth : dict
        Per seed, the factor by which ``"pre"`` and ``"peri"``'s final variance grows when each
        branch's last matrix is multiplied by 4.
    rms_profiles : dict
        :attr:`profiles` again with every norm an RMSNorm (``norm="rms"``): the same weights,
        inputs and seeds.
    """

    numbers: dict
    profiles: dict
    qk_shown: tuple
    qk_ratio: np.ndarray
    dyt_shown: dict
    growth: dict
    rms_profiles: dict


def findings(seeds: int = 24, depth: int = 48, width: int = 32, *, progress: bool = False):
    """Every number chapter "LayerNorm after 2020" quotes from its stacks at initialization.

    Parameters
    ----------
    seeds : int, default 24
        Seed s draws weights and inputs from ``np.random.default_rng(s)``.
    depth, width : int, default 48 and 32
        L and H of the placements' stacks (the RMSNorm stack has 16 layers of width 32, the
        QK-norm layer width 64, the DyT tokens width 64, whatever these are).
    progress : bool
        Show a progress bar while the placements are measured.

    Returns
    -------
    Findings
    """
    seeds = check_count(seeds, "seeds")
    profiles = profile_table(depth, width, seeds=seeds, progress=progress)
    rms_profiles = profile_table(depth, width, seeds=seeds, progress=progress, norm="rms")
    numbers = {"seeds": prose.number(seeds)}
    numbers.update(_rms_numbers(seeds))
    numbers.update(_profile_numbers(profiles, seeds, depth, width))
    numbers.update(_olmo2_numbers(profiles, seeds, depth, width))
    numbers.update(_norm_numbers(profiles, rms_profiles))
    growth_numbers, growth = _growth(profiles, seeds, depth, width)
    numbers.update(growth_numbers)
    qk_numbers, qk_shown, qk_ratio = _qk(seeds)
    numbers.update(qk_numbers)
    dyt_numbers, dyt_shown = _dyt(seeds)
    numbers.update(dyt_numbers)
    return Findings(numbers, profiles, qk_shown, qk_ratio, dyt_shown, growth, rms_profiles)


def _rms_numbers(seeds, depth=16, width=32):
    """The mean share and RMSNorm's gap in a Pre-LN stack, every layer's tokens pooled."""
    shares, gaps = [], []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        weights = init_weights("pre", depth, width, rng=rng)
        stream = placement_forward(rng.normal(size=(2, 8, width)), weights, "pre")[1][1:]
        tokens = np.concatenate([s.reshape(-1, width) for s in stream])
        rms = np.sqrt(np.mean(tokens**2, axis=1))
        shares.append(np.mean(np.abs(tokens.mean(axis=1)) / rms))
        diff = rms_norm(tokens, eps=1e-5) - layer_norm(tokens)
        gaps.append(np.mean(np.linalg.norm(diff, axis=1) / np.sqrt(width)))
    return {
        "rms_mean_share": prose.mean_sd(shares),
        "rms_share_formula": _sig(np.sqrt(2 / (np.pi * 32)), ".3f"),
        "rms_share_4096": _sig(np.sqrt(2 / (np.pi * 4096)), ".4f"),
        "rms_gap": prose.mean_sd(gaps),
    }


def _sig(value, spec):
    return prose.number(prose.significant(float(value)), spec)


def _profile_numbers(profiles, seeds, depth, width):
    """The placements' profiles in numbers (the two placement figures' reading)."""
    summary = {placement: placement_summary(p) for placement, p in profiles.items()}
    ms = prose.mean_sd

    def of(placement, key):
        return summary[placement][key]

    def count(condition):
        return prose.number(int(np.sum(condition)))

    def slope(d, w):
        return ms(placement_summary(placement_profile("pre", d, w, seeds=seeds))["slope"])

    pre_var, half = profiles["pre"].stream_sq, depth // 2
    peri_slope = of("peri", "slope")
    post_ratio = typical(of("post", "grad_ratio"))
    spread = {s: of(s, "grad_spread") for s in ("pre", "post", "mixln", "deepnorm")}
    return {
        **{f"top_{s}": ms(of(s, "top")) for s in ("pre", "lns", "peri", "olmo2")},
        "ratio_pre": ms(of("pre", "grad_ratio")),
        "ratio_pre_max": _sig(of("pre", "grad_ratio").max(), ".2f"),
        **{f"ratio_post_{k}": post_ratio[k] for k in ("median", "min", "max")},
        "ratio_post_above_1": count(of("post", "grad_ratio") > 1),
        **{f"spread_{s}": ms(v) for s, v in spread.items()},
        "mixln_over_post": count(spread["mixln"] > spread["post"]),
        "mixln_over_pre": count(spread["mixln"] > spread["pre"]),
        "pre_var_half": ms(pre_var[:, half]),
        "pre_var_ratio": ms(pre_var[:, depth] / pre_var[:, half]),
        "pre_var_half_squared": prose.number(float(f"{pre_var[:, half].mean() ** 2:.1g}"), ".0f"),
        "pre_slope": ms(of("pre", "slope")),
        "pre_slope_24": slope(half, width),
        "pre_slope_24_wide": slope(half, 2 * width),
        "peri_slope": ms(peri_slope),
        "olmo2_slope": ms(of("olmo2", "slope")),
        "peri_slope_se": _sig(peri_slope.std(ddof=1) / np.sqrt(seeds), ".2f"),
        "peri_over_pre": count(peri_slope > of("pre", "slope")),
        "pre_angle_first": ms(profiles["pre"].angle[:, 0]),
        "pre_angle_last": ms(of("pre", "angle_top")),
        "pre_angle_deep": ms(profiles["pre"].angle[:, -8:].mean(axis=1)),
        "lns_angle_deep": ms(profiles["lns"].angle[:, -8:].mean(axis=1)),
        "deepnorm_angle_last": ms(of("deepnorm", "angle_top")),
        "olmo2_entropy": ms(of("olmo2", "entropy")),
        "pre_entropy": ms(of("pre", "entropy")),
        "uniform_entropy": _sig(np.log(8), ".2f"),
        "lns_over_pre": ms(of("lns", "top") / of("pre", "top")),
        "mixln_posts": prose.number(mixln_post_layers(depth)),
    }


def norm_gaps(profiles: dict, rms_profiles: dict) -> dict[tuple[str, str], float]:
    """How far apart LayerNorm's and RMSNorm's stacks are, per placement and summary, in units of
    the scatter between seeds (chapter "LayerNorm after 2020").

    For each placement and each of :data:`NORM_MEASURES`: the absolute difference of the two
    means over the seeds, divided by the larger of the two standard deviations (``ddof=1``).
    Below 1, the norms differ by less than one seed differs from another.

    Returns
    -------
    dict of (placement, measure) to float
    """
    gaps = {}
    for placement in profiles:
        ln, rms = placement_summary(profiles[placement]), placement_summary(rms_profiles[placement])
        for measure in NORM_MEASURES:
            a, b = ln[measure], rms[measure]
            scatter = max(a.std(ddof=1), b.std(ddof=1))
            gap = abs(a.mean() - b.mean())
            gaps[placement, measure] = gap / scatter if scatter > 0 else (np.inf if gap else 0.0)
    return gaps


def _norm_numbers(profiles, rms_profiles):
    """LayerNorm against RMSNorm at every place of the seven stacks."""
    gaps = norm_gaps(profiles, rms_profiles)
    (placement, measure), largest = max(gaps.items(), key=lambda item: item[1])
    spreads = {p: placement_summary(rms_profiles[p])["grad_spread"].mean() for p in rms_profiles}
    if largest > 1 or max(spreads, key=spreads.get) != "olmo2":
        raise ValueError("the chapter says LayerNorm's readings carry over to RMSNorm: reword it.")
    rms = {p: placement_summary(rms_profiles[p]) for p in ("pre", "peri", "olmo2")}
    ms = prose.mean_sd
    return {
        "norm_pairs": prose.number(len(gaps)),
        "norm_apart": prose.number(sum(gap > 1 for gap in gaps.values())),
        "norm_largest_gap": _sig(largest, ".1f"),
        "norm_largest_what": prose.ProseNumber(
            f"{PLACEMENT_LABELS[placement]}'s {NORM_MEASURES[measure]}", largest
        ),
        "rms_top_pre": ms(rms["pre"]["top"]),
        "rms_slope_pre": ms(rms["pre"]["slope"]),
        "rms_slope_peri": ms(rms["peri"]["slope"]),
        "rms_spread_olmo2": ms(rms["olmo2"]["grad_spread"]),
        "rms_over_ln_pre": ms(
            rms_profiles["pre"].stream_sq[:, -1] / profiles["pre"].stream_sq[:, -1]
        ),
    }


def _olmo2_numbers(profiles, seeds, depth, width):
    """Why OLMo 2's bottom layers get the largest gradients; medians, the gradients being skewed."""
    gains = sublayer_gradient_gains("olmo2", depth, width, seeds=seeds)
    with_qk = placement_profile("olmo2", depth, width, seeds=seeds, qk_norm=True)
    bottom = typical(profiles["olmo2"].grad_norm[:, 0])
    return {
        "olmo2_bottom_grad": bottom["median"],
        "olmo2_bottom_min": bottom["min"],
        "olmo2_bottom_max": bottom["max"],
        "peri_bottom_grad": typical(profiles["peri"].grad_norm[:, 0])["median"],
        "olmo2_attn_growth": typical(gains[:, :, 0].prod(axis=1))["median"],
        "olmo2_qk_bottom_grad": typical(with_qk.grad_norm[:, 0])["median"],
        "olmo2_qk_entropy": prose.mean_sd(placement_summary(with_qk)["entropy"]),
    }


def _growth(profiles, seeds, depth, width):
    """What the output norm buys: each branch's last matrix times 4, as training might grow it."""
    growth = {
        s: placement_profile(s, depth, width, seeds=seeds, out_scale=4.0).stream_sq[:, -1]
        / profiles[s].stream_sq[:, -1]
        for s in ("pre", "peri")
    }
    numbers = {
        "peri_growth": _sig(growth["peri"].mean(), ".3f"),
        "peri_pre_growth": prose.mean_sd(growth["pre"]),
    }
    return numbers, growth


def _qk(seeds, width=64, tokens=16):
    """One attention layer's largest logit and entropy as its q/k weights grow, without and with
    QK-norm."""
    runs = []  # per seed: the statistics at each scale, plain and with QK-norm
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        w, x = init_layer(rng, width), rng.normal(size=(2, tokens, width))
        grown = [{**w, "Wq": w["Wq"] * s, "Wk": w["Wk"] * s} for s in QK_SCALES]
        runs.append(
            (
                [logit_statistics(x, g) for g in grown],
                [logit_statistics(x, g, qk_norm=True) for g in grown],
            )
        )

    def stat(which, k, key):
        return [run[which][k][key] for run in runs]

    ratio = np.divide(stat(0, -1, "max_logit"), stat(0, 0, "max_logit"))
    ms, eight = prose.mean_sd, QK_SCALES.index(8)
    numbers = {
        "qk_logit_1": ms(stat(0, 0, "max_logit")),
        "qk_logit_32": ms(stat(0, -1, "max_logit")),
        "qk_logit_ratio": _sig(np.median(ratio), ".0f"),
        "qk_entropy_1": ms(stat(0, 0, "entropy")),
        "qk_entropy_8": ms(stat(0, eight, "entropy")),
        "qk_norm_max": ms([max(n["max_logit"] for n in run[1]) for run in runs]),
        "qk_bound": _sig(np.sqrt(width), ".0f"),
        "qk_norm_entropy": ms(stat(1, -1, "entropy")),
        "qk_uniform": _sig(np.log(tokens), ".2f"),
    }
    return numbers, runs[0], ratio


def _dyt(seeds, tokens=256, width=64):
    """γ tanh(α x) fitted to LayerNorm's S-curve over heavy-tailed and over normal tokens."""
    curves = {
        name: [s_curve(heavy_tailed_tokens(tokens, width, df=df, seed=s)) for s in range(seeds)]
        for name, df in (("heavy", 2.0), ("normal", np.inf))
    }
    fits = {name: [fit_tanh(*c) for c in cs] for name, cs in curves.items()}

    def over(name, key):
        return prose.mean_sd([f[key] for f in fits[name]])

    normal_ratio = [f["rms_tanh"] / f["rms_line"] for f in fits["normal"]]
    numbers = {
        "dyt_alpha": over("heavy", "alpha"),
        "dyt_gamma": over("heavy", "gamma"),
        "dyt_rms_tanh": over("heavy", "rms_tanh"),
        "dyt_rms_line": over("heavy", "rms_line"),
        "dyt_normal_tanh": over("normal", "rms_tanh"),
        "dyt_normal_line": over("normal", "rms_line"),
        "dyt_normal_ratio": prose.mean_sd(normal_ratio),
        "dyt_ceiling": _sig(np.sqrt(width - 1), ".2f"),
    }
    shown = {
        "heavy": curves["heavy"][0],
        "heavy_fit": fits["heavy"][0],
        "normal": curves["normal"][0],
        "normal_fit": fits["normal"][0],
    }
    return numbers, shown
