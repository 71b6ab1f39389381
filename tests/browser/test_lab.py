"""The live notebooks, in a real JupyterLab: run a chapter, move a slider, see the explorer answer.

JupyterLab is started on the loopback with a token, over a temporary copy of the chapters (so the
test can never modify the committed notebooks). For each chapter below: open it, run all cells,
wait for the explorer, move its first slider with the keyboard, and check that the readout text and
the figure changed, and that no cell shows an error.
"""

from __future__ import annotations

import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from .conftest import ROOT, require

LIVE_CHAPTERS = ["03_mean", "04_variance"]
EXPLORER_READOUT = ".lnlib-readout .widget-html-content"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    require(shutil.which("jupyter-lab", path=str(ROOT / ".venv" / "bin")) is not None or shutil.which("jupyter-lab") is not None,
            "JupyterLab is not installed: run `make test`, which installs it")
    workdir = tmp_path_factory.mktemp("lab")
    for name in LIVE_CHAPTERS:
        if (ROOT / "chapters" / f"{name}.ipynb").exists():
            shutil.copy(ROOT / "chapters" / f"{name}.ipynb", workdir)
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={workdir}", "--ServerApp.open_browser=False", "--ServerApp.allow_root=True",
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir)
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


@pytest.mark.parametrize("chapter", LIVE_CHAPTERS)
def test_explorer_answers_a_slider_in_jupyterlab(chapter, lab, offline):
    base, token, workdir = lab
    require((workdir / f"{chapter}.ipynb").exists(), f"chapter {chapter} is not written yet")
    page = offline.context.new_page()
    page.set_default_timeout(180_000)
    # A workspace of its own per chapter, so JupyterLab does not reopen the previous chapter beside it.
    page.goto(f"{base}/lab/workspaces/{chapter}/tree/{chapter}.ipynb?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for()  # the kernel has started
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    run_all = page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first
    run_all.wait_for(state="visible")
    run_all.click()

    handle = page.locator(".widget-slider .noUi-handle").first
    handle.wait_for(state="attached")
    handle.scroll_into_view_if_needed()  # JupyterLab does not lay out cells outside the viewport
    handle.wait_for(state="visible")
    readout = page.locator(EXPLORER_READOUT).first
    image = page.locator("img.lnlib-figure").first
    page.wait_for_function("sel => { const e = document.querySelector(sel); return e && e.textContent.trim().length > 0; }", arg=EXPLORER_READOUT)
    readout_before, image_before = readout.inner_text(), image.get_attribute("src")

    handle.focus()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.wait_for_function("([sel, before]) => document.querySelector(sel).textContent !== before", arg=[EXPLORER_READOUT, readout.text_content()])
    assert readout.inner_text() != readout_before, "the readout did not change after moving the slider"
    assert image.get_attribute("src") != image_before, "the figure did not change after moving the slider"
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count()
    assert errors == 0, f"{chapter}: a cell printed an error in JupyterLab"
    page.screenshot(path=str(ROOT / "tests" / "artifacts" / "screenshots" / f"lab__{chapter}.png"), full_page=False)
    assert offline.blocked == [] or all("127.0.0.1" not in url for url in offline.blocked)
