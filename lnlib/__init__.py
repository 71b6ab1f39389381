"""lnlib: the library behind the interactive LayerNorm book.

The functions whose signatures api.md documents are available at the top level: :func:`layer_norm`,
:func:`layer_norm_steps`, :func:`layer_norm_backward`, :func:`rms_norm`, :func:`rms_norm_backward`,
:func:`batch_norm`, :func:`batch_norm_backward` and :func:`variance`, plus :func:`compare` for
checking your own code against them, and :func:`check_layer_norm` and :func:`check_rms_norm`
(:mod:`lnlib.harness`), a harness that runs your LayerNorm or RMSNorm over shapes, dtypes (float64
down to bfloat16) and edge cases against a float64 reference, with :func:`check_add_rms_norm`
(:mod:`lnlib.harness_add`) for a residual add fused with RMSNorm.

The top-level modules are the library, named for what they hold: ``textbook`` (the short numpy
forward and backward, read first), ``forward``, ``backward``, ``norms``, ``rms`` (RMS norm's
backward pass), ``variance_algorithms`` (whose :func:`variance` is exported here), ``variants``,
``fused``, ``symbolic``, ``harness``, ``harness_add``, ``compare`` and ``validation``; the
sub-package :mod:`lnlib.gpu` (CUDA kernels with numba-cuda, chapter "LayerNorm on a GPU") is
imported on its own. Everything that exists for the
chapters (models, experiments, the fact check, figures, explorers, notebook tools) lives in
:mod:`lnlib.book`, which the library never imports (CONTRIBUTING.md, "Layout").
"""

from .backward import layer_norm_backward
from .compare import compare
from .forward import LayerNormSteps, layer_norm, layer_norm_steps
from .harness import check_layer_norm, check_rms_norm
from .harness_add import check_add_rms_norm
from .norms import batch_norm, batch_norm_backward, rms_norm
from .rms import rms_norm_backward
from .variance_algorithms import variance

__all__ = [
    "LayerNormSteps",
    "batch_norm",
    "batch_norm_backward",
    "check_add_rms_norm",
    "check_layer_norm",
    "check_rms_norm",
    "compare",
    "layer_norm",
    "layer_norm_backward",
    "layer_norm_steps",
    "rms_norm",
    "rms_norm_backward",
    "variance",
]
__version__ = "0.2.0"
