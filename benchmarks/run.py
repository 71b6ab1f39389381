"""What a reader feels, measured: explorer latency, book build time, test time.

Run with ``make bench``. Prints, for every explorer in ``lnlib.widgets``, the
median and 95th percentile of the Python time one control change takes
(set ``.value``, recompute, redraw, encode the PNG), then the time of a clean
book build and of ``make test``. Use ``--explorers-only`` for the quick part.
Timings are not asserted anywhere: they are printed for a person to read and
recorded in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import lnlib.widgets  # noqa: E402
from test_widgets import option_values  # noqa: E402  (the same positions the widget tests use)


def explorer_latencies(name: str, rounds: int) -> np.ndarray:
    """Seconds per control change, cycling every control through its test positions `rounds` times."""
    explorer = getattr(lnlib.widgets, name)()
    timings = []
    for _ in range(rounds):
        for control in explorer.controls.values():
            for value in itertools.chain(option_values(control), [control.value]):
                if value == control.value:
                    continue
                start = time.perf_counter()
                control.value = value
                timings.append(time.perf_counter() - start)
    return np.array(timings)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="passes over every control position per explorer")
    parser.add_argument("--explorers-only", action="store_true", help="skip the book build and make test timings")
    args = parser.parse_args()

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()}")
    print(f"{'explorer':<28} {'changes':>8} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
    for name in sorted(n for n in lnlib.widgets.__all__ if n.endswith("_explorer")):
        t = explorer_latencies(name, args.rounds) * 1e3
        flag = "" if np.percentile(t, 95) < 50 else "  <-- over the 50 ms budget"
        print(f"{name:<28} {t.size:>8} {np.median(t):>10.1f} {np.percentile(t, 95):>8.1f} {t.max():>8.1f}{flag}")
    if args.explorers_only:
        return
    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    print(f"clean book build (make book): {timed(['make', 'book']):.0f} s")
    print(f"make test: {timed(['make', 'test']):.0f} s")


if __name__ == "__main__":
    main()
