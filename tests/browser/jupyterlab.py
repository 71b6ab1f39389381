"""A real JupyterLab for the browser tests and ``make bench``: the server, opening and running a
chapter, moving controls.

One server (loopback, a random token, windowing off so every cell is rendered, no news pop-up)
serves a temporary copy of the chapters, so nothing can modify the committed notebooks.
``tests/browser/test_lab.py`` and ``benchmarks/lab.py`` both drive it through the helpers here, so
the test and the benchmark move the controls the same way and time the same events.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(path.stem for path in (ROOT / "chapters").glob("*.ipynb"))
EXPLORER = ".lnlib-explorer"
KERNEL_IDLE = "Python 3 (ipykernel) | Idle"
# The status bar's kernel item says KERNEL_IDLE. Looked for among the status bar's text items, every
# 100 ms: a page-wide text search (``get_by_text``) re-run on every frame cost about a fifth of
# the renderer's time on a long chapter (CPU profile).
STATUS_SAYS = (
    "text => [...document.querySelectorAll('.jp-StatusBar-TextItem')].some(e => "
    "e.textContent.includes(text))"
)


def wait_for_idle(page) -> None:
    """Return when JupyterLab's status bar says the kernel is idle, as a reader sees it there."""
    page.wait_for_function(STATUS_SAYS, arg=KERNEL_IDLE, polling=100)


def has_explorer(chapter: str) -> bool:
    """True if the chapter holds a live explorer (a cell that is one ``*_explorer(...)`` call)."""
    cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
    return any(
        c["cell_type"] == "code" and re.match(r"\w+_explorer\(", "".join(c["source"]).strip())
        for c in cells
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_settings(folder: Path) -> None:
    """JupyterLab user settings: never fetch news; everything else as `make lab` gives a reader.

    The notebook's windowing stays JupyterLab's default (4.6: ``contentVisibility``, every cell in
    the page, the browser skipping the work for cells off screen), so the tests and `make bench-lab`
    see the page a reader sees. (It used to be ``none``, every cell laid out and painted: not what
    `make lab` gives.)
    """
    path = folder / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"fetchNews": "false"}))


@contextlib.contextmanager
def jupyterlab(workdir: Path, chapters=CHAPTERS, timeout: float = 120):
    """Run a JupyterLab server over copies of `chapters` (and the pages beside them, e.g. the
    Sources) in `workdir`, as a student who was handed ``chapters/`` has them; yield
    ``(base_url, token)``."""
    for name in chapters:
        shutil.copy(ROOT / "chapters" / f"{name}.ipynb", workdir)
    for page in (ROOT / "chapters").glob("*.md"):
        shutil.copy(page, workdir)
    settings = workdir / ".lab-settings"
    write_settings(settings)
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={workdir}",
        "--ServerApp.open_browser=False",
        "--ServerApp.allow_root=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        # window.jupyterapp, so a test can run the few cells it needs by their index (run_cells)
        "--LabApp.expose_app_in_browser=True",
    ]
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    server = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir, env=env
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError(f"JupyterLab did not start within {timeout:.0f} s") from None
                time.sleep(0.2)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def open_chapter(page, base: str, token: str, chapter: str) -> None:
    """Open `chapter` in a workspace of its own (JupyterLab would otherwise reopen the previous one)
    and wait for its kernel."""
    page.goto(f"{base}/lab/workspaces/{chapter}/tree/{chapter}.ipynb?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    # jupyterlab-myst renders the markdown after the cells appear: on a loaded machine a check
    # right away found none rendered yet (chapter 15, with another JupyterLab running beside)
    page.wait_for_selector(".jp-MarkdownCell .myst", timeout=120_000)
    wait_for_idle(page)


def run_all(page) -> None:
    """Run All Cells from the menu; return when no cell is queued or running ("[*]") and the kernel
    is idle."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    item = page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first
    item.wait_for(state="visible")
    item.click()
    # The last code cell gets an execution count when everything before it has run.
    page.wait_for_function(
        """() => {
        const prompts = [...document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')];
        const last = prompts[prompts.length - 1];
        return prompts.length > 0 && !prompts.some(e => e.textContent.includes('*')) &&
            /\\[\\d+\\]/.test(last.textContent);
    }""",
        polling=200,
        timeout=300_000,
    )
    wait_for_idle(page)


# JupyterLab's own "run cell" command on each cell in turn (NotebookActions.run resolves when the
# cell has run).
RUN_CELLS = """async indices => {
    const notebook = window.jupyterapp.shell.currentWidget.content;
    for (const index of indices) {
        notebook.activeCellIndex = index;
        await window.jupyterapp.commands.execute('notebook:run-cell');
    }
}"""


def run_cells(page, indices: list[int]) -> None:
    """Run the notebook's cells at `indices` (0-based, markdown included) with JupyterLab's Run
    Cell, in order; return when the kernel is idle. The test runs only the cells its checks need
    (the chapter's imports, its explorer, its exercises): every cell of every chapter already runs
    in nbval's kernel."""
    page.evaluate(RUN_CELLS, indices)
    wait_for_idle(page)


# Timestamps in the page: the input event that starts a move (a key or a pointer pressed on a
# slider, a dropdown's choice), then each load of a figure image and each
# change of the readout or note, all on performance.now()'s clock.
PROBE = """root => {
    const probe = root.__probe = {input: null, loads: [], texts: [], pending: 0};
    const start = () => { probe.input = performance.now(); probe.loads = []; probe.texts = []; };
    root.addEventListener('keydown', start, {capture: true});
    root.addEventListener('pointerdown', start, {capture: true});
    root.addEventListener('input', e => { if (e.target.tagName === 'SELECT') start(); },
        {capture: true});
    root.addEventListener('load', e => {
        if (e.target.tagName === 'IMG') probe.loads.push(performance.now());
    }, {capture: true});
    new MutationObserver(() => probe.texts.push(performance.now()))
        .observe(root.querySelector('.lnlib-readout'), {subtree: true, childList: true,
            characterData: true});
}"""

STATE = """root => ({
    readout: root.querySelector('.lnlib-readout').innerText,
    note: root.querySelector('.lnlib-note').innerText,
    figure: [...root.querySelectorAll('img')].map(i => i.getAttribute('src')).join(' '),
    loaded: [...root.querySelectorAll('img')].every(i => i.complete),
})"""

# After a move: every image whose source changed has loaded and the readout or the figure changed.
CHANGED = """([root, before]) => {
    const imgs = [...root.querySelectorAll('img')];
    const figure = imgs.map(i => i.getAttribute('src')).join(' ');
    const readout = root.querySelector('.lnlib-readout').innerText;
    return (figure !== before.figure || readout !== before.readout) && imgs.every(i => i.complete);
}"""

TIMES = """root => { const p = root.__probe;
    const last = a => a.length ? a[a.length - 1] - p.input : null;
    return {figure: last(p.loads), readout: last(p.texts)}; }"""


def install_probe(page, root) -> None:
    root.element_handle().evaluate(PROBE)


def drag_slider(page, slider, fraction: float) -> None:
    """Drag the slider's handle with the mouse to a fraction of the track's width, in a few
    steps."""
    slider.scroll_into_view_if_needed()
    slider.locator(
        ".noUi-handle"
    ).hover()  # waits until the handle is visible and stable, then points at it
    handle = slider.locator(".noUi-handle").bounding_box()
    track = slider.locator(".noUi-target").bounding_box()
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(
        track["x"] + fraction * track["width"], handle["y"] + handle["height"] / 2, steps=8
    )
    page.mouse.up()


def controls(root) -> list:
    """The explorer's sliders, dropdowns, toggle buttons and checkboxes, as locators, in order."""
    return root.locator(
        ".widget-slider, .widget-dropdown, .widget-toggle-buttons, .widget-checkbox"
    ).all()


def control_state(control) -> dict:
    """A control's kind, label, position (a slider's handle aria values, a dropdown's or toggle's
    index, a checkbox's state) and whether it is disabled."""
    return control.evaluate("""c => {
        const label = (c.querySelector('.widget-label-basic span') ||
            c.querySelector('.widget-label')).innerText;
        const buttons = [...c.querySelectorAll('button')];
        if (buttons.length) return {kind: 'toggle', label, now: buttons.findIndex(b =>
            b.classList.contains('mod-active')),
                                    min: 0, max: buttons.length - 1, disabled: buttons.every(b =>
                                        b.disabled)};
        const box = c.querySelector('input[type=checkbox]');
        if (box) return {kind: 'checkbox', label, now: Number(box.checked), min: 0, max: 1,
            disabled: box.disabled};
        const select = c.querySelector('select');
        if (select) return {kind: 'select', label, now: select.selectedIndex, min: 0,
            max: select.options.length - 1,
                            disabled: select.disabled};
        const h = c.querySelector('.noUi-handle'), target = c.querySelector('.noUi-target');
        return {kind: 'slider', label, now: Number(h.getAttribute('aria-valuenow')),
            min: Number(h.getAttribute('aria-valuemin')),
                max: Number(h.getAttribute('aria-valuemax')),
                    step: target.noUiSlider.options.step || 1,
                disabled: target.hasAttribute('disabled')};
    }""")


KEYS_UP, KEYS_DOWN = ("ArrowRight", "PageUp", "End"), ("ArrowLeft", "PageDown", "Home")


def plan_move(state: dict, how: str, i: int):
    """A move that changes `state`'s position: a key (turned round at an end) or a fraction of the
    track to click."""
    span = state["max"] - state["min"] or 1
    here = (state["now"] - state["min"]) / span
    if state["kind"] in (
        "select",
        "toggle",
        "checkbox",
    ):  # the next option, or the first after the last
        return ("select" if state["kind"] == "select" else "click"), state["now"] + 1 if state[
            "now"
        ] < state["max"] else 0
    if how == "key":
        up = here < 1 and (i % 2 == 0 or here <= 0)
        return "key", (KEYS_UP if up else KEYS_DOWN)[(i // 2) % 3 if i % 4 else 0]
    # A click lands on the nearest step, and a click on the handle itself moves nothing: aim at a
    # step at least a tenth of the track (more than the handle's width) from the handle.
    steps = max(1, round(span / state["step"]))
    target = round([0.85, 0.2, 0.6, 0.05, 0.4][i % 5] * steps)
    if abs(target / steps - here) < 0.1 or target == round(here * steps):
        target = round((here + 0.3 if here < 0.5 else here - 0.3) * steps)
    if target == round(here * steps):  # a track of one or two steps
        target = round(here * steps) + (1 if here < 0.5 else -1)
    return "mouse", target / steps


def move(page, control, how: str, what) -> None:
    """Press a key on a slider's handle, click its track at a fraction of its width, or choose a
    dropdown's option.

    A dropdown's list is the browser's own pop-up, which a page cannot script; JupyterLab takes the
    focus from a focused ``<select>`` (its command mode), so its option is chosen as Playwright
    does, firing input and change.
    """
    # JupyterLab may have scrolled the notebook since the last move
    control.scroll_into_view_if_needed()
    if how == "select":
        control.locator("select").select_option(index=what)
    elif how == "click":  # a toggle's button, or a checkbox
        target = (
            control.locator("button").nth(what)
            if control.locator("button").count()
            else control.locator("input[type=checkbox]")
        )
        target.click()
    elif how == "key":
        control.locator(".noUi-handle").focus()
        page.keyboard.press(what)
    else:
        box = control.locator(".noUi-target").bounding_box()
        inside = min(max(what, 0.01), 0.99)  # the track's very edge is not on the track
        page.mouse.click(box["x"] + inside * box["width"], box["y"] + box["height"] / 2)
