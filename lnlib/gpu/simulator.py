"""A lock for numba-cuda's CUDA simulator (chapter "LayerNorm on a GPU", section "Checked on any
machine").

The simulator runs one Python thread per CUDA thread and creates a block's shared array the first
time a thread reaches ``cuda.shared.array``: it looks the array up by the caller's file and line
and, when absent, makes one with ``np.empty`` and stores it, without a lock
(``numba_cuda/numba/cuda/simulator/kernelapi.py``, ``FakeCUDAShared.array``, numba-cuda 0.30).
Two threads that reach the line together each get their own array, so a block-wide sum reads
uninitialized memory. With :func:`lnlib.gpu.launch`'s fast thread switching it happened under load:
``math domain error`` in kernel 5's forward, a square root of garbage (CI, 2026-11-30).
:func:`serialize_shared_arrays` makes the look-up and creation one step under a lock.
"""

from __future__ import annotations

import sys
import threading
import traceback

import numpy as np

_LOCK = threading.Lock()


def serialize_shared_arrays(shared_class) -> bool:
    """Replace ``shared_class.array`` (numba-cuda's ``FakeCUDAShared``) by the same look-up under
    a lock; False, changing nothing, for a class without the ``_allocations`` it keeps them in."""
    original = shared_class.array
    if getattr(original, "serialized", False):
        return True
    if "_allocations" not in shared_class.__init__.__code__.co_names:
        return False

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:  # dynamic shared memory, or the simulator's error
            return original(self, shape, dtype, alignment)
        dtype = _numpy_dtype(dtype, sys.modules[shared_class.__module__])
        caller = tuple(traceback.extract_stack(sys._getframe())[-2][0:2])  # its file and line
        with _LOCK:
            found = self._allocations.get(caller)
            if found is None:
                found = self._allocations[caller] = np.empty(shape, dtype)
        return found

    array.serialized = True
    shared_class.array = array
    return True


def _numpy_dtype(dtype, simulator):
    """A numba type as numpy's dtype, with the simulator's own modules (as it converts it)."""
    if isinstance(dtype, simulator.types.Type):
        return simulator.numpy_support.as_dtype(dtype)
    return dtype
