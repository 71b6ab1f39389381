"""Live explorers, one per chapter: ``<name>_explorer(**initial_values)`` returns an ipywidgets
container.

See :class:`lnlib.book.explorers.base.Explorer` for the convention every explorer follows.
"""

from .after_2020 import after_2020_explorer
from .base import Explorer
from .complete_examples import complete_examples_explorer
from .epsilon import epsilon_explorer
from .fact_check import fact_check_explorer
from .family import family_explorer
from .gamma_beta import gamma_beta_explorer
from .gradients import gradients_explorer
from .mean import mean_explorer
from .memory_speed import memory_speed_explorer
from .normalizing import normalizing_explorer
from .numerics import numerics_explorer
from .pre_post_norm import pre_post_norm_explorer
from .the_input import input_explorer
from .variance import variance_explorer
from .why_normalize import why_normalize_explorer

__all__ = [
    "Explorer",
    "after_2020_explorer",
    "complete_examples_explorer",
    "gamma_beta_explorer",
    "gradients_explorer",
    "input_explorer",
    "epsilon_explorer",
    "fact_check_explorer",
    "family_explorer",
    "mean_explorer",
    "memory_speed_explorer",
    "normalizing_explorer",
    "numerics_explorer",
    "pre_post_norm_explorer",
    "variance_explorer",
    "why_normalize_explorer",
]
