"""The live notebooks, in a real JupyterLab with the MyST renderer (jupyterlab-myst), as a learner meets them.

One JupyterLab server, started on the loopback with a token over a temporary copy of the chapters (so
the test can never modify the committed notebooks), serves every chapter. Windowing is switched off in
a private settings folder so every cell is rendered, not only those in view. For each chapter: open it,
run all cells, and check that the rendered prose shows no raw MyST markup (``{glue``, ``{doc}``,
``{cite}``, ``{ref}``, ```` ```{ ````), that no solution is open or has run ("Correct!") before the reader
asks, and that no cell shows an error; a full-page screenshot of each lands in tests/artifacts/screenshots.
In two chapters the explorer's first slider is then moved with the keyboard and must change readout and figure.
"""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from .conftest import ROOT, require

CHAPTERS = sorted(path.stem for path in (ROOT / "chapters").glob("*.ipynb"))
LIVE_CHAPTERS = ["03_mean", "04_variance"]
EXPLORER_READOUT = ".lnlib-readout .widget-html-content"
RAW_MARKUP = ["{glue", "{doc}", "{cite}", "{ref}", "```{", "<!--", "$\\", "$$"]  # "$\\": TeX left unrendered
ERROR_OUTPUTS = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    require(shutil.which("jupyter-lab", path=str(ROOT / ".venv" / "bin")) is not None or shutil.which("jupyter-lab") is not None,
            "JupyterLab is not installed: run `make test`, which installs it")
    pytest.importorskip("jupyterlab_myst", reason="jupyterlab-myst is not installed: run `make test`, which installs it")
    workdir = tmp_path_factory.mktemp("lab")
    for name in CHAPTERS:
        shutil.copy(ROOT / "chapters" / f"{name}.ipynb", workdir)
    settings = tmp_path_factory.mktemp("lab-settings")
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))
    news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text(json.dumps({"fetchNews": "false"}))  # no "news?" pop-up over the screenshots
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={workdir}", "--ServerApp.open_browser=False", "--ServerApp.allow_root=True",
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    env = {**__import__("os").environ, "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within two minutes")
        yield base, token, workdir
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def open_and_run_all(page, base, token, chapter):
    # A workspace of its own per chapter, so JupyterLab does not reopen the previous chapter beside it.
    page.goto(f"{base}/lab/workspaces/{chapter}/tree/{chapter}.ipynb?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for()  # the kernel has started
    page.wait_for_timeout(300)
    # Opening must not change the notebook (a missing kernelspec made JupyterLab mark chapter 13 modified).
    assert page.locator(".lm-TabBar-tab.jp-mod-dirty").count() == 0, f"{chapter}: JupyterLab marks the notebook modified on open"
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    run_all = page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first
    run_all.wait_for(state="visible")
    run_all.click()
    # Done when no cell is queued or running ("[*]") any more and the kernel is idle again.
    page.wait_for_timeout(500)
    page.wait_for_function("() => ![...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].some(e => e.textContent.includes('*'))",
                           polling=250, timeout=300_000)
    page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_reads_right_in_jupyterlab(chapter, lab, offline, artifacts):
    base, token, workdir = lab
    page = offline.context.new_page()
    page.set_default_timeout(180_000)
    started = time.perf_counter()
    open_and_run_all(page, base, token, chapter)
    prose = page.locator(".jp-MarkdownCell .jp-RenderedHTMLCommon")
    assert page.locator(".jp-MarkdownCell .myst").count() > 0, f"{chapter}: markdown is not rendered by jupyterlab-myst"
    text = "\n".join(prose.all_inner_texts())
    for raw in RAW_MARKUP:
        assert raw not in text, f"{chapter}: the rendered prose shows raw markup {raw!r}"
    unresolved = page.locator(".jp-MarkdownCell .myst [title*='not found'], .jp-MarkdownCell .myst .text-yellow-600").count()
    assert unresolved == 0, f"{chapter}: a cross-reference or citation is unresolved in JupyterLab"
    assert page.locator(".jp-MarkdownCell details[open]").count() == 0, f"{chapter}: a solution is open before the reader asks"
    outputs = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
    assert "Correct!" not in outputs, f"{chapter}: a solution ran with Run All (a check says Correct!)"
    assert page.locator(ERROR_OUTPUTS).count() == 0, f"{chapter}: a cell printed an error or a warning in JupyterLab"
    solution = page.locator(".jp-MarkdownCell details").first
    solution.locator("summary").click()  # a solution opens when the reader asks
    assert "answer_" in solution.inner_text(), f"{chapter}: the first solution dropdown shows no answer when opened"
    solution.locator("summary").click()
    # JupyterLab scrolls the notebook inside its panel: grow the window to the whole chapter for the screenshot.
    height = page.evaluate("""() => {
        const scroller = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
        scroller.scrollTop = 0;
        return scroller.scrollHeight;
    }""")
    page.set_viewport_size({"width": 1280, "height": min(height + 200, 30_000)})
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts / f"lab__{chapter}.png"))
    page.set_viewport_size({"width": 1280, "height": 900})
    print(f"{chapter}: opened and ran in {time.perf_counter() - started:.1f} s")
    if chapter in LIVE_CHAPTERS:  # the explorer answers a slider moved by keyboard
        move_first_slider(page, chapter)
        assert page.locator(ERROR_OUTPUTS).count() == 0, f"{chapter}: the explorer printed an error in JupyterLab"
    assert offline.blocked == [] or all("127.0.0.1" not in url for url in offline.blocked)


def move_first_slider(page, chapter):
    """Move the explorer's first slider with the keyboard: the readout and the figure must both change."""
    handle = page.locator(".widget-slider .noUi-handle").first
    handle.wait_for(state="attached")
    handle.scroll_into_view_if_needed()
    handle.wait_for(state="visible")
    readout = page.locator(EXPLORER_READOUT).first
    image = page.locator("img.lnlib-figure").first
    page.wait_for_function("sel => { const e = document.querySelector(sel); return e && e.textContent.trim().length > 0; }", arg=EXPLORER_READOUT)
    readout_before, image_before = readout.inner_text(), image.get_attribute("src")

    handle.focus()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    # The readout and the image are separate widget messages: wait for each.
    page.wait_for_function("([sel, before]) => document.querySelector(sel).textContent !== before", arg=[EXPLORER_READOUT, readout.text_content()])
    page.wait_for_function("before => document.querySelector('img.lnlib-figure').getAttribute('src') !== before", arg=image_before, timeout=10_000)
    assert readout.inner_text() != readout_before, f"{chapter}: the readout did not change after moving the slider"
    assert image.get_attribute("src") != image_before, f"{chapter}: the figure did not change after moving the slider"
    page.screenshot(path=str(ROOT / "tests" / "artifacts" / "screenshots" / f"lab__{chapter}__explorer.png"), full_page=False)
