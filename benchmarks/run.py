"""What a reader feels, measured: explorer latency, the website's explorers, book build time, test
time.

Run with ``make bench-book`` (``make bench`` runs it too). Prints, for every explorer in
``lnlib.book.explorers``, the median and 95th percentile of the Python time one control change takes
(set ``.value``, recompute, redraw, encode the moving layer) and the image bytes
it sends; for the website's
precomputed explorers (lnlib.book.explorers.web), each one's settings, HTML weight and
build time, then each chapter page's weight and the front-end's frame-swap time
in Chromium; then the time of a clean book build, of a rebuild with the
explorers' state cache, and of ``make test``. Use ``--explorers-only`` for the
first part only, ``--web-only`` for the website part (needs a built book).
Timings are not asserted anywhere: they are printed for a person to read and
recorded in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import itertools
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "book"))

from test_widgets import option_values  # noqa: E402  (the same positions the widget tests use)

import lnlib.book.explorers  # noqa: E402


def explorer_latencies(name: str, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Seconds per control change, and bytes of image it sends to the page, cycling every control
    through its test positions `rounds` times (the moving layer always; the static background only
    when it changed)."""
    explorer = getattr(lnlib.book.explorers, name)()
    timings, sent = [], []
    for _ in range(rounds):
        for control in explorer.controls.values():
            for value in itertools.chain(option_values(control), [control.value]):
                if value == control.value or control.disabled:
                    continue
                background = explorer.background.value
                start = time.perf_counter()
                control.value = value
                timings.append(time.perf_counter() - start)
                sent.append(
                    len(explorer.image.value)
                    + (
                        len(explorer.background.value)
                        if explorer.background.value is not background
                        else 0
                    )
                )
    return np.array(timings), np.array(sent)


def web_costs() -> None:
    """Per explorer: distinct settings computed (a disabled control's positions share one), HTML
    bytes, and the time to compute them (no cache)."""
    from lnlib.book.explorers.web import web_explorer_html  # noqa: PLC0415

    os.environ.pop("LNBOOK_WEB_CACHE", None)
    print(f"{'website explorer':<28} {'settings':>8} {'HTML MB':>8} {'build s':>8}")
    for name in sorted(n for n in lnlib.book.explorers.__all__ if n.endswith("_explorer")):
        explorer = getattr(lnlib.book.explorers, name)()
        start = time.perf_counter()
        page = web_explorer_html(explorer)
        seconds = time.perf_counter() - start
        distinct = int(re.search(r'data-settings="(\d+)"', page).group(1))
        print(f"{name:<28} {distinct:>8} {len(page.encode()) / 1e6:>8.2f} {seconds:>8.1f}")


SWAP = """async (root) => {
    const inputs = [...root.querySelectorAll('input[type=range]')];
    const times = {step: [], jump: []};
    const settle = () => new Promise(done => { const check = () =>
        root.dataset.shown === root.dataset.state ? done() : requestAnimationFrame(check); check();
            });
    for (const input of inputs) {
        for (let round = 0; round < 12; round++) {
            const max = Number(input.max), now = Number(input.value);
            const kind = round % 3 === 2 ? 'jump' : 'step';
            const next = kind === 'jump' ? (now < max / 2 ? max : 0)
                : (now < max ? now + 1 : now - 1);
            input.value = String(next);
            input.dispatchEvent(new Event('input', {bubbles: true}));
            await settle();
            times[kind].push(Number(root.dataset.swapMs));
            await new Promise(r => setTimeout(r, 30));
        }
    }
    return times;
}"""


def web_pages() -> None:
    """Each chapter page's own weight (HTML with states, images, front-end) and the frame-swap time
    in Chromium."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (a test requirement, not the book's)

    sys.path.insert(0, str(ROOT))
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, QuietHandler  # noqa: PLC0415
    from tests.browser.test_web_explorers import PAGE_WEIGHT  # noqa: PLC0415

    site = ROOT / "_build" / "html"
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    shared = None
    print(f"{'chapter page':<26} {'own MB':>7} {'step p50/p95 ms':>16} {'jump p50/p95 ms':>16}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        for path in sorted((site / "chapters").glob("*.html")):
            page = browser.new_page()
            page.goto(
                f"http://127.0.0.1:{server.server_address[1]}/chapters/{path.name}",
                wait_until="load",
            )
            page.wait_for_function(
                "() => document.querySelector('.lnlib-web-explorer').dataset.ready === '1'"
            )
            own = page.evaluate(PAGE_WEIGHT)
            if shared is None:
                shared = (
                    page.evaluate(
                        "() => performance.getEntriesByType('navigation')"
                        ".concat(performance.getEntriesByType('resource'))"
                        ".reduce((sum, e) => sum + (e.encodedBodySize || 0), 0)"
                    )
                    - own
                )
            times = page.locator(".lnlib-web-explorer").element_handle().evaluate(SWAP)
            cells = [
                f"{np.percentile(times[k], 50):.1f} / {np.percentile(times[k], 95):.1f}"
                if times[k]
                else "-"
                for k in ("step", "jump")
            ]
            print(f"{path.stem:<26} {own / 1e6:>7.2f} {cells[0]:>16} {cells[1]:>16}")
            page.close()
        browser.close()
    server.shutdown()
    print(
        "(theme, MathJax and search index shared by every page, cached after the first: "
        f"{shared / 1e6:.2f} MB uncompressed)"
    )


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=5, help="passes over every control position per explorer"
    )
    parser.add_argument(
        "--explorers-only", action="store_true", help="skip the book build and make test timings"
    )
    parser.add_argument(
        "--web-only", action="store_true", help="only the website's explorers (needs a built book)"
    )
    args = parser.parse_args()
    if args.web_only:
        web_costs()
        web_pages()
        return

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.platform()}"
    )
    print(
        f"{'explorer':<28} {'changes':>8} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} "
        f"{'KB sent':>8}"
    )
    for name in sorted(n for n in lnlib.book.explorers.__all__ if n.endswith("_explorer")):
        t, sent = explorer_latencies(name, args.rounds)
        t = t * 1e3
        flag = "" if np.percentile(t, 95) < 50 else "  <-- over the 50 ms budget"
        print(
            f"{name:<28} {t.size:>8} {np.median(t):>10.1f} {np.percentile(t, 95):>8.1f} "
            f"{t.max():>8.1f} {sent.mean() / 1e3:>8.1f}{flag}"
        )
    if args.explorers_only:
        return
    web_costs()
    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    shutil.rmtree(ROOT / ".cache" / "web-explorers", ignore_errors=True)
    print(
        f"clean book build (make book, empty explorer state cache): {timed(['make', 'book']):.0f} s"
    )
    print(
        f"book rebuild (make book, explorer states from the cache): {timed(['make', 'book']):.0f} s"
    )
    web_pages()
    print(f"make test: {timed(['make', 'test']):.0f} s")


if __name__ == "__main__":
    main()
