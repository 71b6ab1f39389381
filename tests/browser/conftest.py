"""Fixtures for the browser tests: Debian's Chromium driven by Playwright, the built site on
loopback.

Without Chromium these tests skip with a message naming the command that installs it; in CI
(``LNBOOK_REQUIRE_BROWSER=1``, set by ``.ci/run``) they fail instead, so they can never silently
vanish. Every request to a host other than the loopback is blocked and recorded: the book must work
offline.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("LNBOOK_SITE", ROOT / "_build" / "html"))  # the built website under test
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = os.environ.get("LNBOOK_CHROMIUM", "/usr/bin/chromium")
INSTALL_HINT = (
    "install Debian's Chromium with `sudo apt-get install -y chromium` (or set LNBOOK_CHROMIUM to "
    "its path)"
)
# Screenshots are for a person to look at (`make screenshots`); `make test` skips encoding them.
SCREENSHOTS = os.environ.get("LNBOOK_SCREENSHOTS") == "1"
LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require(condition: bool, reason: str) -> None:
    """Skip (a reader's machine) or fail (CI) when a browser-test prerequisite is missing."""
    if condition:
        return
    if os.environ.get("LNBOOK_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests are mandatory here (LNBOOK_REQUIRE_BROWSER=1) but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    require(
        Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is not None,
        f"Chromium was not found at {CHROMIUM}: {INSTALL_HINT}",
    )
    playwright_api = pytest.importorskip(
        "playwright.sync_api",
        reason="playwright is not installed: run `make test`, which installs it",
    )
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


class OfflineContext:
    """A browser context that blocks, and records, every request that leaves the loopback."""

    def __init__(self, browser, width: int = 1280):
        self.blocked: list[str] = []
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.context.route("**/*", self._route)

    def _route(self, route):
        url = route.request.url
        host = urlparse(url).hostname or ""
        if url.startswith(("data:", "blob:")) or host in LOOPBACK:
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()


@pytest.fixture()
def offline(browser):
    holder = OfflineContext(browser)
    yield holder
    holder.context.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output readable
        pass


@pytest.fixture(scope="session")
def site_url():
    require(
        (SITE / "index.html").exists(),
        "the website is not built: run `make book` first (make test does)",
    )
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def screenshot(target, path, **options) -> None:
    """Save `target`'s (a page's or an element's) screenshot at `path` when LNBOOK_SCREENSHOTS=1."""
    if SCREENSHOTS:
        target.screenshot(path=str(path), **options)


@pytest.fixture(scope="session")
def artifacts():
    folder = ARTIFACTS / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
