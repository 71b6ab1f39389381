"""Live explorers, one per chapter: ``<name>_explorer(**initial_values)`` returns an ipywidgets container.

See :class:`lnlib.widgets.base.Explorer` for the convention every explorer follows.
"""

from .base import Explorer
from .mean import mean_explorer

__all__ = ["Explorer", "mean_explorer"]
