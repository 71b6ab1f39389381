"""How long a reader waits for Run All, chapter by chapter, and which cells make them wait.

Run with ``make bench-run-all`` (``make bench`` runs it too); ``CHAPTERS="11_pre_post_norm"`` limits
it. Each chapter runs top to bottom in a fresh kernel, as a reader's Run All does in JupyterLab (not
in the website's mode: the reader's kernel shows progress bars), with nbclient timing every cell.
Prints, per chapter, the Run All time, the kernel's start-up and every cell over 3 s with what it
shows while it runs (a progress bar, or nothing), and the machine and load average at both ends: a
reader's wait is only comparable on a quiet machine. Timings are not asserted anywhere;
BENCHMARKS.md records them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
SLOW = 3.0  # seconds: a cell this slow must show progress (lnlib.book.tools.progress)


def cell_seconds(cell) -> float:
    """The wall time nbclient recorded for `cell` (execution request to reply)."""
    timing = cell["metadata"]["execution"]
    start = dt.datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
    end = dt.datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def shows_progress(cell) -> bool:
    """True if the cell's run displayed a progress bar (tqdm's notebook widget,
    lnlib.book.tools.progress)."""
    return any(
        "application/vnd.jupyter.widget-view+json" in output.get("data", {})
        for output in cell.get("outputs", [])
    )


def run_all(chapter: str) -> None:
    path = ROOT / "chapters" / f"{chapter}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=600, record_timing=True, resources={"metadata": {"path": path.parent}}
    )
    env = {key: value for key, value in os.environ.items() if key != "LNBOOK_WEBSITE"}
    started = time.perf_counter()
    with client.setup_kernel(env=env):
        kernel_ready = time.perf_counter() - started
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
    total = time.perf_counter() - started
    slow = [
        (index, cell_seconds(cell), shows_progress(cell))
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and cell_seconds(cell) > SLOW
    ]
    listed = (
        ", ".join(
            f"cell {i} {s:.1f} s ({'progress bar' if bar else 'NO progress shown'})"
            for i, s, bar in slow
        )
        or "none"
    )
    print(
        f"| {chapter} | {total:.1f} | {kernel_ready:.1f} | {listed} |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "chapters",
        nargs="*",
        default=sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb")),
        help="chapter names, e.g. 11_pre_post_norm (default: all)",
    )
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; load average at start {os.getloadavg()[0]:.1f}"
    )
    print(f"| chapter | Run All (s) | kernel start (s) | cells over {SLOW:.0f} s |")
    print("|---|---:|---:|---|")
    for chapter in args.chapters:
        run_all(chapter)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
