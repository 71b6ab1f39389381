"""What a Linux screen reader hears of each explorer slider: its value text in the platform
accessibility tree.

Chromium 156's DevTools accessibility tree no longer reports a slider's ``aria-valuetext`` (it
reports the slider's number; ``test_accessibility.test_chromium_reports_a_slider_s_value_text``
reproduces it on a bare page). Its platform tree, the one Orca reads through AT-SPI, still does:
probed on 2026-11-28 with Chromium 156.0.8078.108 and 150.0.7871.100 on the same bare page, both put
``valuetext`` among the slider's attributes. So the explorers keep the ARIA way (aria-valuetext, no
second copy of the value for a screen reader to read twice), and this test reads what a screen
reader is told where it is told it.

Chromium runs with a window on a virtual X display (Xvfb), its accessibility bridge on a private
D-Bus session that carries the AT-SPI bus; Debian's own Python reads the tree (``atspi_sliders.py``,
with gi's Atspi). For a sample of explorers (the same path serves every slider:
``test_web_explorers.py`` checks each slider's aria-valuetext on every move of every explorer,
``test_accessibility.py`` its name in the DevTools tree) each slider must be named by what it moves
and read with its unit, at the chapter's settings and after a key press moves one; with the value
text taken out of the page, it must not be.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from lnlib.book.explorers.web import web_states

from .conftest import CHROMIUM, CHROMIUM_ARGS, require
from .test_web_explorers import POSITIONS, build, expected_name

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-gi: the venv's Python cannot import gi
AT_SPI_BUS = "/usr/libexec/at-spi-bus-launcher"
READER = Path(__file__).with_name("atspi_sliders.py")
APT = "sudo apt-get install -y xvfb dbus at-spi2-core gir1.2-atspi-2.0 python3-gi"
# ε on a log scale (powers of ten), a count with its unit (layers), and the sweep whose slider
# changes meaning
SAMPLE = ("chapters/01_why_normalize", "chapters/05_epsilon", "chapters/13_numerics")


def _has_atspi_reader() -> bool:
    probe = "import gi; gi.require_version('Atspi', '2.0'); from gi.repository import Atspi"
    return (
        Path(SYSTEM_PYTHON).exists()
        and subprocess.run([SYSTEM_PYTHON, "-c", probe], capture_output=True).returncode == 0
    )


def _started(stack: contextlib.ExitStack, command: list[str], **options) -> subprocess.Popen:
    process = subprocess.Popen(command, **options)
    stack.callback(process.wait, 10)
    stack.callback(process.terminate)
    return process


@pytest.fixture(scope="module")
def platform(browser):
    """A headed Chromium on a virtual display with AT-SPI on: (browser, environment for the reader).

    Launched by the session's own Playwright (``browser.browser_type``): a second Playwright in the
    same worker would fail inside the first one's event loop."""
    for program in ("Xvfb", "dbus-daemon"):
        require(shutil.which(program) is not None, f"{program} is missing: {APT}")
    require(Path(AT_SPI_BUS).exists(), f"the AT-SPI bus is missing: {APT}")
    require(_has_atspi_reader(), f"Debian's Python cannot read AT-SPI: {APT}")
    with contextlib.ExitStack() as stack:
        xvfb = _started(
            stack,
            ["Xvfb", "-displayfd", "1", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        display = ":" + xvfb.stdout.readline().strip()
        bus = _started(
            stack,
            ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        env = {
            **os.environ,
            "DISPLAY": display,
            "DBUS_SESSION_BUS_ADDRESS": bus.stdout.readline().strip(),
            "NO_AT_BRIDGE": "0",
            "ACCESSIBILITY_ENABLED": "1",
        }
        _started(stack, [AT_SPI_BUS, "--launch-immediately"], env=env, stderr=subprocess.DEVNULL)
        arguments = [a for a in CHROMIUM_ARGS if a != "--headless"] + [
            "--force-renderer-accessibility"
        ]
        headed = browser.browser_type.launch(
            executable_path=CHROMIUM, args=arguments, headless=False, env=env
        )
        stack.callback(headed.close)
        yield headed, env


def platform_sliders(env) -> dict[str, dict]:
    """Every slider of the open web documents, by its element id, as the platform tree tells it."""
    run = subprocess.run(
        [SYSTEM_PYTHON, "-W", "ignore", str(READER)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, f"reading the AT-SPI tree failed:\n{run.stderr[-2000:]}"
    return {slider["id"]: slider for slider in json.loads(run.stdout)}


def mismatches(root, states, env) -> list[str]:
    """Each slider whose platform name or value text differs from the explorer's Meaning, in
    words."""
    positions = root.evaluate(POSITIONS)
    ids = root.evaluate("r => [...r.querySelectorAll('[data-lnlib-control]')].map(c => c.id)")
    heard = platform_sliders(env)
    wrong = []
    for index, control in enumerate(states.controls):
        if control.kind != "range":
            continue
        told = expected_name(states, index, positions)
        slider = heard.get(ids[index], {})
        if (slider.get("name"), slider.get("valuetext")) != told:
            wrong.append(
                f"control {index} ({control.name}) at {positions}: told "
                f"{(slider.get('name'), slider.get('valuetext'))!r}, not {told!r}"
            )
    return wrong


def settled(root, states, env, want_empty: bool = True, seconds: float = 5.0) -> list[str]:
    """:func:`mismatches` once the platform tree has caught up with the page (it follows
    asynchronously)."""
    deadline = time.monotonic() + seconds
    while True:
        wrong = mismatches(root, states, env)
        if (wrong == []) == want_empty or time.monotonic() > deadline:
            return wrong
        time.sleep(0.2)


@contextlib.contextmanager
def explorer_page(browser, site_url, page):
    """Chapter `page` with its explorer ready, in the headed Chromium: its explorer's root."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        browser_page = context.new_page()
        browser_page.goto(f"{site_url}/{page}.html", wait_until="load")
        browser_page.wait_for_function(
            "() => document.querySelector('.lnlib-web-explorer').dataset.ready === '1'"
        )
        yield browser_page.locator(".lnlib-web-explorer").first
    finally:
        context.close()


@pytest.mark.parametrize("page", SAMPLE)
def test_a_screen_reader_hears_each_slider_with_its_unit(page, platform, site_url):
    browser, env = platform
    states = web_states(build(page))
    with explorer_page(browser, site_url, page) as root:
        assert settled(root, states, env) == []
        slider = root.locator("input[type=range]:not([disabled])").first
        before = root.evaluate(POSITIONS)
        for key in ("ArrowUp", "ArrowDown", "ArrowDown"):
            slider.press(key)
            if root.evaluate(POSITIONS) != before:
                break
        assert root.evaluate(POSITIONS) != before, f"{page}: no arrow key moved the first slider"
        assert settled(root, states, env) == [], "after a key press"


def test_the_platform_check_fails_without_the_value_text(platform, site_url):
    """The mutation check: with aria-valuetext taken out of the built page, the platform tree reads
    the sliders' bare numbers and :func:`mismatches` names every slider."""
    browser, env = platform
    page = "chapters/05_epsilon"
    states = web_states(build(page))
    with explorer_page(browser, site_url, page) as root:
        root.evaluate(
            "r => r.querySelectorAll('input[type=range]').forEach(c => "
            "c.removeAttribute('aria-valuetext'))"
        )
        wrong = settled(root, states, env, want_empty=False)
        sliders = sum(control.kind == "range" for control in states.controls)
        assert len(wrong) == sliders, wrong
