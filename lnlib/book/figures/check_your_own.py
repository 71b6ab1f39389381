"""Figures for the chapter "Check your own LayerNorm": whether an error is a bug depends on the
dtype.

An implementation's relative error, entry by entry, against the unit roundoff u of each dtype: an
error far above float64's u is a bug in float64, and the same error can sit below float16's u, where
the output's own rounding costs more.
"""

from __future__ import annotations

import numpy as np

from .style import PALETTE, new_figure

__all__ = ["relative_errors_figure"]

#: A colour per column of :func:`relative_errors_figure`, in order.
COLUMN_COLOURS = (PALETTE["negative"], PALETTE["mean"], PALETTE["input"], PALETTE["positive"])
#: A line style per unit roundoff, in order.
ROUNDOFF_STYLES = ("--", ":")


def relative_errors_figure(columns: dict, roundoffs: dict, *, seed: int = 0):
    """One column of dots per implementation: the relative error of each entry, on a log axis, with
    each dtype's unit roundoff as a horizontal line (chapter "Check your own LayerNorm").

    Parameters
    ----------
    columns : dict
        Column label -> (an implementation's output, any float dtype; the exact output for the same
        inputs, float64). At most four columns; entries with no error (nothing to draw on a log
        axis) are left out.
    roundoffs : dict
        Dtype name -> its unit roundoff u, drawn as a horizontal line labelled with it.
    seed : int
        Seeds the dots' sideways jitter, which only keeps them apart.

    Returns
    -------
    matplotlib Figure
    """
    if len(columns) > len(COLUMN_COLOURS):
        raise ValueError(f"at most {len(COLUMN_COLOURS)} columns; got {len(columns)}")
    rng = np.random.default_rng(seed)
    fig, ax = new_figure(1, 1, figsize=(5.4, 3.6))
    for k, (label, (output, exact)) in enumerate(columns.items()):
        exact = np.asarray(exact, dtype=np.float64)
        error = np.abs(np.asarray(output, dtype=np.float64) - exact) / np.abs(exact)
        error = error[np.isfinite(error) & (error > 0)]
        ax.plot(
            k + rng.uniform(-0.18, 0.18, error.size),
            error,
            "o",
            ms=3,
            alpha=0.6,
            color=COLUMN_COLOURS[k],
        )
    for (dtype, u), style in zip(roundoffs.items(), ROUNDOFF_STYLES):
        ax.axhline(u, color=PALETTE["neutral"], lw=1.2, ls=style)
        ax.annotate(
            f"{dtype}'s u",
            (1.0, u),
            xycoords=("axes fraction", "data"),
            xytext=(-4, 3),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=8,
        )
    ax.set_yscale("log")
    ax.set_xticks(range(len(columns)), list(columns), fontsize=8)
    ax.set_xlim(-0.5, len(columns) - 0.5)
    ax.set_ylabel("relative error of each entry")
    return fig
