"""The explorer of the chapter "The input x": pick a context, a shape and a normalization; see which
elements share statistics."""

from __future__ import annotations

import ipywidgets as widgets

from ...norms import axis_ids
from ..experiments.the_input import CONTEXTS, NORMALIZATIONS, reduction_axes
from ..figures.render import FastRenderer
from ..figures.style import new_figure
from ..figures.the_input import GroupsPanel
from .base import Explorer, described, int_slider

__all__ = ["input_explorer"]


def _dropdown(description: str, options, value: str, what: str) -> widgets.Dropdown:
    return described(
        widgets.Dropdown(
            options=list(options),
            value=value,
            description=description,
            style={"description_width": "initial"},
            layout=widgets.Layout(width="max-content"),
        ),
        what,
    )


def _pytorch_call(normalization: str, shape: tuple[int, ...]) -> str:
    """The PyTorch module that computes the same statistics."""
    if normalization == "LayerNorm":
        return f"nn.LayerNorm({shape[-1]})"
    if normalization == "BatchNorm":
        return f"nn.BatchNorm1d({shape[-1]})" + (" on x.transpose(1, 2)" if len(shape) == 3 else "")
    return f"nn.LayerNorm({shape[-2:]})"


def _note(normalization: str, shape: tuple[int, ...], group_size: int) -> str:
    if group_size == 1:
        why = (
            "PyTorch's BatchNorm refuses a batch of one in training"
            if normalization == "BatchNorm"
            else "a LayerNorm over one feature outputs beta whatever the input"
        )
        return (
            "Each mean is taken over a single value, so every variance is 0 and the normalized "
            f"output is all zeros ({why})."
        )
    if normalization == "LayerNorm over the last two axes" and len(shape) == 2:
        return (
            "In a 2-D input the last two axes include the batch: every sample shares one mean, so "
            "a sample's output depends on the others. That is not LayerNorm any more."
        )
    return ""


def _layout(axis_names: tuple[str, ...]) -> str:
    """Which axis the figure's rows, columns and blocks show, in words."""
    blocks = f"blocks: {axis_names[0]}, " if len(axis_names) == 3 else ""
    return f"In the figure, {blocks}rows: {axis_names[-2]}, columns: {axis_names[-1]}."


class InputExplorer(Explorer):
    """Choose where x comes from and its shape; the squares that share one mean and variance get one
    colour (chapter "The input x")."""

    readout_lines = 4  # shape, layout and what is averaged: up to four lines at JupyterLab's width

    def __init__(self, context: str, normalization: str, batch: int, length: int, features: int):
        controls = {
            "context": _dropdown(
                "context", CONTEXTS, context, "context, the kind of layer x comes from"
            ),
            "normalization": _dropdown(
                "normalization",
                NORMALIZATIONS,
                normalization,
                "normalization, which axes share one mean and variance",
            ),
            "batch": int_slider(
                "batch B", batch, 1, 4, what="batch B, samples in the batch", unit="sample"
            ),
            "length": int_slider(
                "sequence length T",
                length,
                1,
                5,
                what="sequence length T, tokens per sample",
                unit="token",
            ),
            "features": int_slider(
                "features / hidden H",
                features,
                1,
                8,
                what="features / hidden H, features per vector",
                unit="feature",
            ),
        }
        figure, ax = new_figure(figsize=(5.4, 2.0), managed=False)
        # All text is static (drawn once): only the squares are redrawn, and the readout names the
        # axes.
        ax.set_title(
            "squares of one colour share one mean and one variance\n"
            "columns: last axis; rows: the axis before; blocks: samples"
        )
        self.panel = GroupsPanel(ax, labels=False)
        super().__init__(
            "The input x: which elements share one mean and variance",
            controls,
            FastRenderer(figure, self.panel.artists),
        )

    def inactive(self, values):
        context = values["context"]
        if CONTEXTS[context].ndim == 3:
            return {}
        return {
            "length": (
                f"sequence length T is not used: a {context} layer gives one vector per sample"
            )
        }

    def compute(self, context, normalization, batch, length, features):
        ctx = CONTEXTS[context]
        shape = (batch, length, features) if ctx.ndim == 3 else (batch, features)
        axes = reduction_axes(normalization, len(shape))
        groups = axis_ids(shape, axes)
        count = int(groups.max()) + 1
        size = groups.size // count
        over = ", ".join(ctx.axis_names[a] for a in axes)
        self.panel.update(groups, ctx.axis_names)
        unused = "".join(f" ({reason})" for reason in self.inactive({"context": context}).values())
        readout = (
            f"x = {ctx.source}: shape {shape} = ({', '.join(ctx.axis_names)}){unused}. "
            f"{_layout(ctx.axis_names)}<br>{normalization} averages over <b>{over}</b> "
            f"(axis={axes if len(axes) > 1 else axes[0]}): <b>{count}</b> "
            f"{'means and variances' if count > 1 else 'mean and variance'}, each over "
            f"<b>{size}</b> value{'s' if size > 1 else ''}. PyTorch: "
            f"<code>{_pytorch_call(normalization, shape)}</code>."
        )
        return (
            readout,
            _note(normalization, shape, size),
            {"shape": shape, "axes": axes, "groups": groups, "count": count, "size": size},
        )


def input_explorer(
    context: str = "transformer",
    normalization: str = "LayerNorm",
    *,
    batch: int = 2,
    length: int = 3,
    features: int = 4,
) -> InputExplorer:
    """Explorer for the chapter "The input x": context, normalization and shape; the statistic
    groups in colour.

    Parameters
    ----------
    context : str, default "transformer"
        A key of :data:`lnlib.book.experiments.the_input.CONTEXTS`.
    normalization : str, default "LayerNorm"
        A key of :data:`lnlib.book.experiments.the_input.NORMALIZATIONS`.
    batch : int, default 2
        1 to 4 samples.
    length : int, default 3
        1 to 5 tokens (used by the transformer context).
    features : int, default 4
        1 to 8 features (hidden units).

    Returns
    -------
    InputExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``context``, ``normalization``, ``batch``,
        ``length``, ``features``.

    Raises
    ------
    ValueError
        For an unknown context or normalization, or a size outside its slider's range.
    """
    if context not in CONTEXTS:
        raise ValueError(f"context must be one of {list(CONTEXTS)}; got {context!r}.")
    if normalization not in NORMALIZATIONS:
        raise ValueError(
            f"normalization must be one of {list(NORMALIZATIONS)}; got {normalization!r}."
        )
    for name, value, high in (
        ("batch", batch, 4),
        ("length", length, 5),
        ("features", features, 8),
    ):
        if not (isinstance(value, int) and 1 <= value <= high):
            raise ValueError(f"{name} must be an int from 1 to {high}; got {value!r}.")
    return InputExplorer(context, normalization, batch, length, features)
