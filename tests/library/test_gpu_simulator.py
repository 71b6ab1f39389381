"""numba-cuda's simulator, patched by lnlib.gpu: a block's threads that reach one
``cuda.shared.array`` line together get one array (lnlib/gpu/simulator.py; CI, 2026-11-30: a
kernel read another thread's uninitialized copy and took the square root of garbage)."""

import sys
import threading

import numpy as np
import pytest

from lnlib import gpu
from lnlib.gpu.simulator import serialize_shared_arrays

pytestmark = pytest.mark.skipif(not gpu.SIMULATED, reason="a GPU runs the kernels: no simulator")


def shared_arrays_made_together(shared, threads: int = 32) -> list:
    """The arrays `threads` threads get from one line of ``shared.array``, started together and
    switching every microsecond, as the simulator's threads of one block do."""
    start, got = threading.Barrier(threads), []

    def thread():
        start.wait()
        got.append(shared.array(32, np.float32))  # one line: one array for the block

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        workers = [threading.Thread(target=thread) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(interval)
    return got


def test_threads_of_a_block_share_one_array():
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    assert getattr(FakeCUDAShared.array, "serialized", False)  # importing lnlib.gpu patched it
    for _ in range(60):  # unpatched, about 1 round in 20 made two arrays or more
        arrays = shared_arrays_made_together(FakeCUDAShared(0))
        assert len({id(a) for a in arrays}) == 1


def test_two_lines_still_make_two_arrays_and_one_line_one():
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    shared = FakeCUDAShared(0)

    def one_line():
        return shared.array(4, np.float32)

    first = shared.array(4, np.float32)
    second = shared.array(4, np.float32)
    assert first is not second  # two lines of source: two arrays
    assert one_line() is one_line()  # the same line, reached twice: the same array
    assert serialize_shared_arrays(FakeCUDAShared)  # a second call changes nothing
