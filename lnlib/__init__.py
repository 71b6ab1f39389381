"""lnlib: the library behind the interactive LayerNorm book.

Layers, each importing only the ones above it (see DESIGN.md):
``validation`` and ``core`` (forward pass), ``backward``, ``symbolic``,
``norms``, ``numerics``, ``transformer``, ``plots`` (figures) and
``widgets`` (explorers). Helpers for the book itself: ``compare`` and
``exercises``.
"""

from .compare import compare
from .core import LayerNormSteps, layer_norm, layer_norm_steps

__all__ = ["LayerNormSteps", "compare", "layer_norm", "layer_norm_steps"]
__version__ = "0.1.0"
