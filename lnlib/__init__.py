"""lnlib: the library behind the interactive LayerNorm book.

The functions with the signatures fixed in DESIGN.md are available at the top level:
:func:`layer_norm`, :func:`layer_norm_steps`, :func:`layer_norm_backward`, :func:`rms_norm`,
:func:`batch_norm` and :func:`variance`, plus :func:`compare` for checking your own code
against them, and :func:`lnlib.check.check_layer_norm`, a harness that runs your LayerNorm over
shapes, dtypes (float64 down to bfloat16) and edge cases against a float64 reference. Everything
else lives in modules named for what they hold (see CONTRIBUTING.md):
math modules (``core``, ``backward``, ``symbolic``, ``norms``, ``numerics``, ``transformer``, ...),
figures in ``lnlib.plots`` and live explorers in ``lnlib.widgets``.
"""

from .backward import layer_norm_backward
from .compare import compare
from .core import LayerNormSteps, layer_norm, layer_norm_steps
from .norms import batch_norm, rms_norm
from .numerics import variance

__all__ = ["LayerNormSteps", "batch_norm", "compare", "layer_norm", "layer_norm_backward", "layer_norm_steps", "rms_norm", "variance"]
__version__ = "0.1.0"
