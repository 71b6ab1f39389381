"""Figures for the chapter "Why normalize?": activation and gradient scale, layer by layer, in a deep stack."""

from __future__ import annotations

import numpy as np

from .style import PALETTE, new_figure

__all__ = ["ScalePanels", "stack_style", "scale_figure", "scale_companion"]

#: Fixed vertical range of the explorer's panels: wide enough for a 50-layer stack at weight scales 0.5 to 3.
EXPLORER_YLIM = (1e-25, 1e18)


def stack_style(layer_norm_on: bool, activation: str) -> dict:
    """Line style of a stack: blue with LayerNorm, vermilion without; solid for ReLU, dashed for tanh (chapter "Why normalize?")."""
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
    ax_grad.set_title("backward:\nthe gradient reaching layer ℓ")


class ScalePanels:
    """Two panels redrawn in place: activation scale and gradient scale per layer of one stack (chapter "Why normalize?").

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
    """Activation scale (left) and gradient scale (right) against the layer, one line per stack (chapter "Why normalize?").

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
    """Small multiples: one column per weight scale, activation scale on top and gradient scale below (chapter "Why normalize?").

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
