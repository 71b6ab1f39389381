"""Side-by-side comparison of two computations, in the style of Karpathy's backprop-ninja notebook.

Every chapter that checks one computation against another (a formula against
``lnlib``, a closed form against finite differences, numpy against PyTorch)
prints one line per check with :func:`compare`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Comparison", "compare", "LINE_WIDTH", "NAME_WIDTH"]

#: Printed lines fit the book's 80 columns (the website's content column holds about 85 at 1280 px).
LINE_WIDTH = 80
#: Width of the name column; the statistics take the other 56 characters.
NAME_WIDTH = 24


@dataclass(frozen=True)
class Comparison:
    """The outcome of :func:`compare`: its fields, and its one-line summary as ``str()``."""

    name: str
    exact: bool
    close: bool
    max_abs_diff: float

    def _ipython_display_(self) -> None:
        """Show nothing: :func:`compare` has printed the line already, so a cell ending in
        compare(...) prints it once."""

    def __str__(self) -> str:
        """At most :data:`LINE_WIDTH` characters a line: a name longer than :data:`NAME_WIDTH` gets
        a line of its own."""
        # The verdict that matters first (a phone shows the start of the line): allclose, then
        # bit-exactness.
        stats = (
            f" | allclose: {str(self.close):5} | exact: {str(self.exact):5}"
            f" | max |diff|: {self.max_abs_diff:.2e}"
        )
        if len(self.name) <= NAME_WIDTH:
            return f"{self.name:<{NAME_WIDTH}}{stats}"
        return f"{self.name}\n{'':<{NAME_WIDTH}}{stats}"


def compare(
    name: str, ours, reference, *, rtol: float = 1e-5, atol: float = 1e-8, show: bool = True
) -> Comparison:
    """Compare `ours` with `reference` and print one line: allclose, exact, max abs difference
    (chapter "The input x" first shows it, against PyTorch's stored outputs).

    Parameters
    ----------
    name : str
        What is compared, e.g. ``"dx"``.
    ours : array_like
        The result to check.
    reference : array_like
        What it should equal, of the same shape.
    rtol : float, default 1e-5
        Relative tolerance for :func:`numpy.allclose`.
    atol : float, default 1e-8
        Absolute tolerance for :func:`numpy.allclose`.
    show : bool, default True
        Print the line.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        If the shapes differ (a silent broadcast would hide a bug).
    """
    ours = np.asarray(ours)
    reference = np.asarray(reference)
    if ours.shape != reference.shape:
        raise ValueError(
            f"{name}: shapes differ, {ours.shape} (ours) against {reference.shape} (reference); "
            "compare arrays of the same shape."
        )
    diff = np.abs(ours.astype(np.float64) - reference.astype(np.float64))
    result = Comparison(
        name=name,
        exact=bool(np.array_equal(ours, reference)),
        close=bool(np.allclose(ours, reference, rtol=rtol, atol=atol)),
        max_abs_diff=float(diff.max()) if diff.size else 0.0,
    )
    if show:
        print(result)
    return result
