"""The checker as shipped, kept out of reach of a reader's cells.

Code a reader runs in the kernel can rebind a function of numpy for every module there
(``np.all = lambda *a, **k: True``), or replace the checker's own code (``exercises.check =
...``, ``Feedback.kind = ...``). Two defences live here, in a module no check reloads (the course's
hidden tests reload the checker's other modules; :mod:`lnlib.book.exercises.grading`):

- :data:`numpy`, a copy of numpy's namespace taken when this module is first imported (by the
  exercises' import cell, before any answer cell runs). The checker's modules (judge, feedback,
  chapter) call numpy through it, so a later rebinding of ``np.all`` or ``np.abs`` cannot reach
  their comparisons, nor can a reload of those modules, which would bind the rebound function
  again.
- :func:`record` keeps, for the checker's modules and classes, what they held when their code ran;
  :func:`replaced` names what a cell has changed since (``Exercises.check``, ``numpy.all``), for the
  graded test cell to say so rather than show a pass it cannot give (chapter.Exercises.test).
"""

from __future__ import annotations

import types

import numpy as _numpy

__all__ = ["numpy", "record", "replaced"]

#: numpy's namespace as first imported: ``from lnlib.book.exercises.shipped import numpy as np``.
numpy = types.ModuleType(_numpy.__name__, _numpy.__doc__)
numpy.__dict__.update(vars(_numpy))

_GONE = object()
#: What each recorded owner (a module or a class) held when its code ran, by the name it is reported
#: under; numpy's own namespace among them.
_RECORDED: dict[str, tuple[object, dict]] = {}


def record(*owners) -> None:
    """Keep what each of `owners` (modules or classes of the checker) holds now, its dunders
    aside.

    Called at the end of each checker module: a reload runs it again, and the reloaded code is then
    the code as shipped."""
    for owner in owners:
        name = getattr(owner, "__qualname__", None) or owner.__name__
        held = {key: value for key, value in vars(owner).items() if not key.startswith("__")}
        _RECORDED[name] = (owner, held)


def replaced(*objects) -> list[str]:
    """What a cell rebound or deleted, since it was recorded, in numpy's namespace or the checker's
    recorded modules and classes (``numpy.all``, ``Exercises.check``), and the methods of
    `objects` (instances of recorded classes) it shadowed with an attribute of its own
    (``exercises.check``)."""
    found = []
    for name, (owner, held) in _RECORDED.items():
        now = vars(owner)
        found += [f"{name}.{key}" for key, kept in held.items() if now.get(key, _GONE) is not kept]
    for obj in objects:
        methods = {key for key in dir(type(obj)) if callable(getattr(type(obj), key, None))}
        found += [f"exercises.{key}" for key in vars(obj) if key in methods]
    return found


record(_numpy)
