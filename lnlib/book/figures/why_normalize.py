"""Figures for the chapter "Why normalize?": activation and gradient scale, layer by layer, in a
deep stack."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

from .style import PALETTE, PHONE_WIDTH, new_figure

__all__ = [
    "ScalePanels",
    "TRAINED_STYLES",
    "norm_axis",
    "stack_style",
    "scale_figure",
    "scale_companion",
    "trained_scale_figure",
]

#: Fixed vertical range of the explorer's panels: wide enough for a 50-layer stack at weight scales
#: 0.5 to 3.
EXPLORER_YLIM = (1e-25, 1e18)


def stack_style(layer_norm_on: bool, activation: str) -> dict:
    """Line style of a stack: blue with LayerNorm, vermilion without; solid for ReLU, dashed for
    tanh (chapter "Why normalize?")."""
    return {
        "color": PALETTE["input"] if layer_norm_on else PALETTE["mean"],
        "ls": "-" if activation == "relu" else "--",
        "lw": 2,
    }


def _setup(ax_act, ax_grad, depth: int) -> None:
    for ax, label in (
        (ax_act, "activation scale, RMS of $h_\\ell$"),
        (ax_grad, r"gradient scale, RMS of $\partial\mathcal{L}/\partial h_\ell$"),
    ):
        ax.set_yscale("log")
        ax.axhline(1.0, color=PALETTE["neutral"], lw=0.8, alpha=0.5)
        ax.set(xlabel="layer ℓ (0 = input)", ylabel=label, xlim=(0, depth))
    ax_act.set_title("forward:\nhow big the activations are")
    ax_grad.set_title("backward:\nthe gradient at layer ℓ")  # (learner A6: a longer title was cut)


class ScalePanels:
    """Two panels redrawn in place: activation scale and gradient scale per layer of one stack
    (chapter "Why normalize?").

    Parameters
    ----------
    ax_act, ax_grad : matplotlib Axes
    max_depth : int
        The x range, fixed so the axes never move.
    ylim : (float, float)
        The fixed log-scale y range of both panels; values outside it are clipped by the axes.
    """

    def __init__(self, ax_act, ax_grad, max_depth: int, ylim=EXPLORER_YLIM):
        _setup(ax_act, ax_grad, max_depth)
        for ax in (ax_act, ax_grad):
            ax.set_ylim(*ylim)
        (self.act_line,) = ax_act.plot([], [], marker="o", ms=3)
        (self.grad_line,) = ax_grad.plot([], [], marker="o", ms=3)

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.act_line, self.grad_line]

    def update(self, activation_rms, gradient_rms, layer_norm_on: bool, activation: str) -> None:
        """Show the per-layer scales of one stack: RMS of h_0..h_L and of dL/dh_0..dL/dh_L."""
        layers = np.arange(len(activation_rms))
        style = stack_style(layer_norm_on, activation)
        for line, values in ((self.act_line, activation_rms), (self.grad_line, gradient_rms)):
            line.set_data(layers, values)
            line.set_color(style["color"])
            line.set_linestyle(style["ls"])


def _draw(ax_act, ax_grad, run, **style) -> None:
    layers = np.arange(len(run.activations))
    ax_act.plot(layers, run.activation_rms, **style)
    ax_grad.plot(layers, run.gradient_rms, **style)


def scale_figure(curves: dict):
    """Activation scale (left) and gradient scale (right) against the layer, one line per stack
    (chapter "Why normalize?").

    Parameters
    ----------
    curves : dict of str to (StackRun, dict)
        Legend label to the run and its matplotlib line style.
    """
    fig, (ax_act, ax_grad) = new_figure(1, 2, figsize=(5.4, 3.4))
    depth = max(len(run.activations) for run, _ in curves.values()) - 1
    _setup(ax_act, ax_grad, depth)
    for label, (run, style) in curves.items():
        _draw(ax_act, ax_grad, run, label=label, **style)
    fig.legend(
        *ax_act.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=9
    )  # inside, it would cover a curve
    return fig


def scale_companion(runs: dict):
    """Small multiples: one column per weight scale, activation scale on top and gradient scale
    below (chapter "Why normalize?").

    The static stand-in for :func:`lnlib.book.explorers.why_normalize_explorer` on the website.

    Parameters
    ----------
    runs : dict of str to dict of (bool, str) to StackRun
        Column title to the runs of that column, keyed by (LayerNorm on, activation).
    """
    fig, axes = new_figure(2, len(runs), figsize=(5.4, 5.0), sharey="row")
    axes = np.asarray(axes).reshape(2, -1)
    for (title, column), ax_act, ax_grad in zip(runs.items(), axes[0], axes[1]):
        depth = max(len(run.activations) for run in column.values()) - 1
        _setup(ax_act, ax_grad, depth)
        for (layer_norm_on, activation), run in column.items():
            label = f"{activation}, {'with' if layer_norm_on else 'no'} LayerNorm"
            _draw(ax_act, ax_grad, run, label=label, **stack_style(layer_norm_on, activation))
        ax_act.set_title(title)
        ax_grad.set_title("")
    for ax in axes[:, 1:].ravel():
        ax.set_ylabel("")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    return fig


#: How the trained-model figures draw the model before and after training.
TRAINED_STYLES = {
    "untrained": {"color": PALETTE["reference"], "ls": "--", "label": "untrained"},
    "trained": {"color": PALETTE["mean"], "ls": "-", "label": "trained"},
}


def norm_axis(ax, norms: list) -> None:
    """Label an x-axis of norm inputs (two per layer, then the final norm) by layer (chapters "Why
    normalize?", "Scale γ and shift β")."""
    starts = [i for i, n in enumerate(norms) if n.endswith("attn") or n == "final"]
    ax.set_xticks(starts, [norms[i].split()[0] for i in starts])
    ax.set_xlabel("input of each norm, bottom to top\n(two per layer ℓ, then the final one)")


def trained_scale_figure(sees: dict):
    """Each token's standard deviation and mean as every LayerNorm of a Pre-LN model receives it,
    untrained and trained (chapter "Why normalize?").

    Parameters
    ----------
    sees : dict
        ``sees`` of :func:`lnlib.book.models.language.load_results`: per norm, the 5th, 50th and
        95th percentiles over held-out tokens of each token's σ and mean. Lines are the medians,
        bands the 5th to 95th percentiles.
    """
    fig, (ax_sd, ax_mean) = new_figure(2, 1, figsize=(PHONE_WIDTH, 5.0), sharex=True)
    for label, style in TRAINED_STYLES.items():
        stats = sees[label]
        x = np.arange(len(stats["norms"]))
        for ax, key in ((ax_sd, "sd_quantiles"), (ax_mean, "mean_quantiles")):
            q = np.array(stats[key])
            ax.plot(x, q[:, 1], marker="o", ms=3, lw=1.6, **style)
            ax.fill_between(x, q[:, 0], q[:, 2], color=style["color"], alpha=0.18, lw=0)
    ax_sd.set_yscale("log")
    ax_sd.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax_sd.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax_sd.yaxis.set_minor_formatter(NullFormatter())
    ax_sd.set_ylabel("each token's σ\n(over its features)")
    ax_mean.axhline(0.0, color=PALETTE["neutral"], lw=0.8, alpha=0.5)
    ax_mean.set_ylabel("each token's mean\n(over its features)")
    norm_axis(ax_mean, sees["trained"]["norms"])
    ax_sd.legend(loc="upper left", fontsize=9)
    return fig
