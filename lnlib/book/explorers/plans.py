"""What an explorer offers on the website: grids for its float sliders, or presets and one-entry
sweeps.

Each explorer class carries its own plan as the class attribute ``web_plan``
(:class:`lnlib.book.explorers.base.Explorer`), so renaming or moving a class keeps its website
version; :mod:`lnlib.book.explorers.web` reads it. This module holds the plan's types and the grid
helpers the chapters' explorers use (ARCHITECTURE.md, "Explorers").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Sweep", "decades", "entries", "steps", "with_presets"]


@dataclass(frozen=True)
class Sweep:
    """Presets and one-entry sweeps, for an explorer with one slider per vector entry.

    Parameters
    ----------
    presets : dict of str to dict
        A name the reader sees, and the value of every swept control (``x1``, ``x2``, ...), and of
        any other control the preset fixes (the website then offers no control for it).
    grids : dict of str to tuple of float
        The values the website's slider offers for each swept control; every preset's values lie on
        them.
    """

    presets: dict
    grids: dict

    def __post_init__(self):
        for name, values in self.presets.items():
            for entry, value in values.items():
                if entry in self.grids and not np.isclose(self.grids[entry], value).any():
                    raise ValueError(
                        f"preset {name!r}: {entry} = {value} is not on the sweep grid "
                        f"{self.grids[entry]}."
                    )


def steps(low: float, high: float, step: float) -> tuple[float, ...]:
    """Evenly spaced grid values from `low` to `high` inclusive, rounded to 10 decimals."""
    return tuple(float(v) for v in np.round(np.arange(low, high + step / 2, step), 10))


def entries(prefix: str, values) -> dict:
    """One control value per entry of `values`, named ``<prefix>1``, ``<prefix>2``, ..."""
    return {f"{prefix}{i + 1}": float(v) for i, v in enumerate(values)}


def decades(low: int, high: int, per_decade: int) -> tuple[float, ...]:
    """Powers of ten from 10**low to 10**high, `per_decade` steps per decade (a log slider's
    grid)."""
    exponents = np.round(np.linspace(low, high, (high - low) * per_decade + 1), 10)
    return tuple(float(10.0**e) for e in exponents)


def with_presets(grids: dict, vectors) -> dict:
    """Each entry's grid, with the entries of `vectors` (a chapter's running example) added where
    they fall off it."""
    return {
        name: tuple(sorted({*grid, *(float(np.round(v[i], 10)) for v in vectors)}))
        for i, (name, grid) in enumerate(grids.items())
    }
