"""The explorer of the chapter "Computing it right: numerics": shift the data, pick a precision,
watch the three variance algorithms."""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import numpy as np

from ...variance_algorithms import DTYPES, METHODS
from ..experiments.numerics import error_sweep, shift_errors
from ..figures.numerics import METHOD_STYLE, ErrorPanels
from ..figures.render import FastRenderer
from ..figures.style import new_figure
from .base import Explorer, described, log_slider
from .plans import decades

__all__ = ["numerics_explorer"]

#: The shifts the explorer's curves are precomputed at: 10^0 to 10^5, four per decade.
SWEEP_SHIFTS = np.logspace(0, 5, 21)


@lru_cache(maxsize=None)
def sweep_for(dtype: str):
    """The precomputed :class:`lnlib.book.experiments.numerics.ErrorSweep` of one dtype (computed
    once per session)."""
    return error_sweep(SWEEP_SHIFTS, dtype)


def _error_text(error: float) -> str:
    return "inf / NaN" if np.isinf(error) else f"{error:.1e}"


def _readout(errors) -> str:
    rows = "".join(
        f"<tr><td>{METHOD_STYLE[m]['label']}</td><td>{_error_text(errors.variance_error[m])}</td>"
        f"<td>{errors.negative[m]} of {errors.rows}</td><td>{_error_text(errors.output_error[m])}"
        "</td></tr>"
        for m in METHODS
    )
    # Short headers, the figure's own words: the table stays within a phone's column and the
    # explorer within a laptop screen.
    header = (
        "<tr><th>method</th><th>variance: relative error</th><th>variance &lt; 0</th><th>output: "
        "max |y − y_exact|</th></tr>"
    )
    return (
        f"shift = {errors.shift:.4g}, {errors.dtype}:<table style='line-height:1.2; "
        "border-collapse:separate; border-spacing:0.8em 0; "
        f"margin-left:-0.8em'>{header}{rows}</table>"
    )


def _note(errors) -> str:
    notes = []
    if errors.negative["one_pass"]:
        notes.append(
            f"The one-pass variance is negative in {errors.negative['one_pass']} of {errors.rows} "
            "rows: sqrt(var + eps) is NaN there unless the variance is clamped at 0 first (as "
            "Flax does)."
        )
    overflowed = [METHOD_STYLE[m]["label"] for m in METHODS if np.isinf(errors.variance_error[m])]
    if overflowed:
        notes.append(
            f"Overflow or NaN in {' and '.join(overflowed)}: a sum left {errors.dtype}'s range "
            "(float16 stops at 65504)."
        )
    return " ".join(notes)


class NumericsExplorer(Explorer):
    """Move the shift (mean / spread) and the precision; the markers show each algorithm's error
    there."""

    web_plan = {"shift": decades(0, 5, 4)}

    def __init__(self, shift: float, dtype: str):
        controls = {
            "shift": log_slider(
                "shift",
                shift,
                0,
                5,
                what="shift, the constant added to every entry of the data",
                step=0.05,
                readout_format=".3g",
                width="320px",
                digits=3,
            ),
            "dtype": described(
                widgets.Dropdown(options=list(DTYPES), value=dtype, description="dtype"),
                "dtype, the floating-point precision of the computation",
            ),
        }
        for name in DTYPES:  # precompute every curve, so a dtype change only redraws
            sweep_for(name)
        figure, (left, right) = new_figure(
            1, 2, figsize=(5.4, 2.4), managed=False, sharex=True, sharey=True
        )
        self.panels = ErrorPanels(left, right)
        self.panels.legend(figure)
        self.shown_dtype = None
        super().__init__(
            "Catastrophic cancellation: shift the data, pick a precision",
            controls,
            FastRenderer(figure, self.panels.artists),
        )

    def compute(self, shift, dtype):
        if dtype != self.shown_dtype:
            self.panels.show_sweep(sweep_for(dtype))
            self.shown_dtype = dtype
        try:
            errors = shift_errors(shift, dtype)
        except ValueError as exc:
            self.panels.show_point(shift, None)
            return f"shift = {shift:.4g}, {dtype}: no measurement.", str(exc), {}
        self.panels.show_point(shift, errors)
        return _readout(errors), _note(errors), {"errors": errors}


def numerics_explorer(shift: float = 1e4, dtype: str = "float32") -> NumericsExplorer:
    """Explorer for the chapter "Computing it right: numerics": errors of the three variance
    algorithms.

    Parameters
    ----------
    shift : float, default 1e4
        The starting shift, between 1 and 1e5: unit-variance rows are moved
        this far from zero, so it is also the ratio mean / standard deviation.
    dtype : {"float16", "float32", "float64"}, default "float32"
        The starting precision.

    Returns
    -------
    NumericsExplorer
        An ``ipywidgets.VBox``; its ``controls`` are ``shift`` and ``dtype``.

    Raises
    ------
    ValueError
        If `shift` is outside [1, 1e5] or `dtype` is not one of the three.
    """
    if not 1 <= shift <= 1e5:
        raise ValueError(f"shift must lie in [1, 1e5]; got {shift}.")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; got {dtype!r}.")
    return NumericsExplorer(float(shift), dtype)
