"""Latency as a reader feels it in JupyterLab: from the input event to the new figure loaded in the
page.

Run with ``make bench-lab`` (``make bench`` runs it too). Starts a real JupyterLab (with
jupyterlab-myst, as ``make lab``) on the loopback, opens each chapter that has an explorer in
Debian's Chromium through Playwright, runs all its cells, and moves the explorer's controls
``--moves`` times, alternating keyboard (arrows, Page Up/Down, Home/End on a slider's handle; arrows
on a dropdown) and mouse (a click on a slider's track), round-robin over the controls in effect.
Each move is timed in the page, on ``performance.now()``'s clock: from the keydown or pointerdown
event to the last ``load`` event of the explorer's figure images and the last change of its readout,
whichever comes later (the page then shows the new setting). Moves are a reader's pace apart (the
previous one finished, then ``--pause`` ms).

Prints p50/p95/max per explorer with the machine's load average, and writes every move's times to
``benchmarks/results/lab-latency.json``. Timings are for a person to read (BENCHMARKS.md); nothing
asserts them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import jupyterlab as lab  # noqa: E402
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "lab-latency.json"
BUDGET_MS = 50


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure_chapter(
    page, base: str, token: str, chapter: str, moves: int, pause_ms: int
) -> list[dict]:
    """Open and run `chapter`, then time `moves` control moves of its explorer."""
    lab.open_chapter(page, base, token, chapter)
    lab.run_all(page)
    root = page.locator(lab.EXPLORER)
    root.scroll_into_view_if_needed()
    root.element_handle().evaluate(lab.PROBE)
    handle = root.element_handle()
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: PLC0415

    records = []
    for i in range(moves):
        live = [c for c in lab.controls(root) if not lab.control_state(c)["disabled"]]
        control = live[i % len(live)]
        state = lab.control_state(control)
        how, what = lab.plan_move(state, "key" if i % 2 == 0 else "mouse", i // len(live))
        before = handle.evaluate(lab.STATE)
        lab.move(page, control, how, what)
        try:
            page.wait_for_function(lab.CHANGED, arg=[handle, before], timeout=10_000)
        except (
            PlaywrightTimeout
        ):  # a move that changed nothing (the lab test fails on it); not a latency
            print(
                f"  {chapter}: {state['label']} moved by {how} ({what}) changed nothing in 10 s",
                flush=True,
            )
            continue
        page.wait_for_timeout(pause_ms)  # late messages of this move land before its times are read
        times = handle.evaluate(lab.TIMES)
        shown = max(t for t in (times["figure"], times["readout"]) if t is not None)
        records.append(
            {
                "control": state["label"],
                "how": how,
                "what": what,
                "ms": shown,
                "figure_ms": times["figure"],
                "readout_ms": times["readout"],
            }
        )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=40, help="control moves per explorer")
    parser.add_argument(
        "--pause", type=int, default=150, help="ms between one move's end and the next move"
    )
    parser.add_argument(
        "chapters", nargs="*", help="chapters to measure (default: every chapter with an explorer)"
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (a test requirement, not the book's)

    chapters = args.chapters or [c for c in lab.CHAPTERS if lab.has_explorer(c)]
    results = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "moves": args.moves,
        "explorers": {},
    }
    print(f"JupyterLab, input event to new figure loaded; {results['machine']}")
    print(
        f"{'chapter':<22} {'moves':>5} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7}  load average (1, "
        "5, 15 min)"
    )
    with (
        tempfile.TemporaryDirectory() as workdir,
        lab.jupyterlab(Path(workdir), chapters) as (base, token),
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        for chapter in chapters:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(180_000)
            records = measure_chapter(page, base, token, chapter, args.moves, args.pause)
            page.close()
            ms = np.array([r["ms"] for r in records])
            p50, p95 = np.percentile(ms, [50, 95])
            flag = "" if p95 <= BUDGET_MS else f"  <-- over {BUDGET_MS} ms"
            results["explorers"][chapter] = {
                "p50": p50,
                "p95": p95,
                "max": ms.max(),
                "load": load(),
                "moves": records,
            }
            print(
                (
                    f"{chapter:<22} {ms.size:>5} {p50:>7.1f} {p95:>7.1f} {ms.max():>7.1f}  "
                    f"{load()}{flag}"
                ),
                flush=True,
            )
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            RESULTS.write_text(
                json.dumps(results, indent=1) + "\n"
            )  # after each chapter: a stopped run keeps its numbers
        browser.close()
    print(
        "\nFor BENCHMARKS.md:\n\n| chapter | moves | p50 ms | p95 ms | max ms | load average (1, "
        "5, 15 min) |\n|---|---:|---:|---:|---:|---|"
    )
    for chapter, r in results["explorers"].items():
        print(
            f"| {chapter} | {len(r['moves'])} | {r['p50']:.1f} | {r['p95']:.1f} | {r['max']:.1f} | "
            f"{r['load']} |"
        )
    print(f"every move's times: {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
