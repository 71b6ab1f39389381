"""The explorer of the chapter "The complete examples"."""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np

from ..experiments.complete_examples import (
    describe_step,
    documents_batch,
    documents_embedding,
    documents_token,
)
from ..figures.complete_examples import STEP_TITLES, steps_figure
from ..figures.render import FastRenderer
from .base import Explorer, described
from .gamma_beta import CHAPTER_BETA, CHAPTER_GAMMA, TOKEN

__all__ = ["complete_examples_explorer"]

#: The chapter's running example: the book's running token, from chapter 03 (H = 8), with
#: chapter 07's learned γ and β.
RUNNING = (
    np.array(TOKEN),
    np.array(CHAPTER_GAMMA),
    np.array(CHAPTER_BETA),
)

#: The chapter's running example, then the documents' three walk-throughs (γ = 1, β = 0), by the
#: name the dropdown shows: the input, γ and β.
EXAMPLES = {
    "the running token": lambda: RUNNING,
    "2×4 batch": documents_batch,
    "token [2, 4, 6, 8]": documents_token,
    "512-d embedding": documents_embedding,
}


def step_readout(steps, step: int, learned: bool = False) -> str:
    """The numbers of one step of a worked example, one line per sample (HTML); `learned`: γ and β
    are not 1 and 0."""
    lines = describe_step(steps, step)
    if step == 4 and not learned:
        lines.append("(γ = 1 and β = 0, their initial values: y = x̂)")
    return f"<b>{html.escape(STEP_TITLES[step])}</b><br>" + "<br>".join(
        html.escape(line) for line in lines
    )


def _step_text(step: int, _label=None) -> str:
    """The step slider's value as read out: "2 of 4: (x − μ)², mean σ²" (its title without the
    figure's number)."""
    title = STEP_TITLES[step].split(". ", 1)[-1]
    return f"{step} of {len(STEP_TITLES) - 1}: {title}"


class CompleteExamplesExplorer(Explorer):
    """Choose a worked example and step through LayerNorm; every intermediate is drawn and
    printed."""

    #: The running token's eight values take three lines of readout at JupyterLab's width: room for
    #: them from the start, so the page below does not move when the example changes.
    readout_lines = 3

    def __init__(self, example: str, step: int):
        self.figures = {}
        for name, make in EXAMPLES.items():
            example_data = make()
            if not isinstance(example_data, tuple):
                example_data = (example_data,)
            figure, panels = steps_figure(*example_data, managed=False)
            renderer = FastRenderer(figure, panels.artists)
            renderer.png()  # draw the static parts now, so switching examples costs no full redraw
            self.figures[name] = (panels, renderer)
        controls = {
            "example": described(
                widgets.Dropdown(options=list(EXAMPLES), value=example, description="example"),
                "example, the input LayerNorm's steps are applied to",
            ),
            "step": described(
                widgets.IntSlider(
                    value=step,
                    min=0,
                    max=len(STEP_TITLES) - 1,
                    description="step",
                    continuous_update=True,
                ),
                "step, how far through LayerNorm's four steps",
                format=_step_text,
            ),
        }
        super().__init__("The complete examples, step by step", controls, self.figures[example][1])

    def compute(self, example, step):
        panels, self.renderer = self.figures[example]
        panels.show(step)
        s = panels.steps
        return (
            step_readout(s, step, learned=example == next(iter(EXAMPLES))),
            "",
            {
                "mean": s.mean[:, 0],
                "var": s.var[:, 0],
                "std": s.sqrt_var_eps[:, 0],
                "xhat": s.xhat,
                "y": s.y,
            },
        )


def complete_examples_explorer(
    example: str = "the running token", step: int = 0
) -> CompleteExamplesExplorer:
    """Explorer for the chapter "The complete examples": pick the chapter's example or one of the
    documents', and step through it.

    Parameters
    ----------
    example : str, default "the running token"
        One of ``"the running token"`` (the chapter's, with learned γ and β),
        ``"2×4 batch"``, ``"token [2, 4, 6, 8]"``, ``"512-d embedding"``.
    step : int, default 0
        0 shows the input; 1 to 4 add the documents' steps (mean, variance, normalize, scale and
        shift).

    Returns
    -------
    CompleteExamplesExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``example`` (a dropdown) and ``step`` (a
        slider).

    Raises
    ------
    ValueError
        For an unknown example or a step outside 0-4.
    """
    if example not in EXAMPLES:
        raise ValueError(f"example must be one of {list(EXAMPLES)}; got {example!r}.")
    if not 0 <= step < len(STEP_TITLES) or int(step) != step:
        raise ValueError(f"step must be an integer from 0 to {len(STEP_TITLES) - 1}; got {step!r}.")
    return CompleteExamplesExplorer(example, int(step))
