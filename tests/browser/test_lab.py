"""The live notebooks, in a real JupyterLab with the MyST renderer (jupyterlab-myst), as a learner
meets them.

One JupyterLab server per test worker (``tests/browser/jupyterlab.py``: loopback, a token, a
temporary copy of the chapters so the test can never modify the committed notebooks, windowing off
so every cell is rendered) serves every chapter. For each chapter: open it and check what a student
sees before running anything: the prose rendered with no raw MyST markup (``{glue``, ``{doc}``,
``{cite}``, ``{ref}``, ```` ```{ ````) and no unresolved reference, no stored output with an error,
no solution open or run ("Correct!"), a solution that opens when asked; with LNBOOK_SCREENSHOTS=1
(`make screenshots`) a full-page screenshot of each lands in tests/artifacts/screenshots.

The test then runs only the cells its checks need, with JupyterLab's own Run Cell: the explorer's
cell and the cells that define what it uses (``lnlib.book.tools.cells.cells_needed``), later each
exercise's. Every cell of every chapter already runs, top to bottom, in nbval's kernel
(``make test-notebooks``), so a Run All here would run each chapter a fourth time in make test.

Every control of the chapter's explorer is moved: each slider by keyboard (arrows, Page Up/Down,
Home or End on its handle), by a mouse click on its track and by dragging its handle; each dropdown
to its next option. Every move must change the figure or the readout, and must not move the cell
below the explorer by a pixel. A slider disabled at the chapter's settings must be one the explorer
declares inactive there, with its reason in the readout; the dropdowns are then turned until it is
in effect, and it is moved like the rest.

Then every exercise is answered as a student types it into its one cell (answer and check run
together): the first mistake it names, whose box must say what lnlib says, word for word (nbval's
kernel checks every named mistake's message: tests/nbval_exercises.py); the solution ("Correct!");
the cell as handed out again ("Not answered yet": a stale answer is never judged); for exercise 1
also code that raises (the error shown, nothing judged). Last, a link to the Sources page and one to
another chapter are followed: each opens in the served folder, which holds only what a student
handed ``chapters/`` has.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import time

import ipywidgets as widgets
import numpy as np
import pytest

from lnlib.book.tools.cells import cells_needed, code, evaluate

from . import jupyterlab as lab
from .conftest import ROOT, SCREENSHOTS, OfflineContext, require, screenshot
from .test_web_explorers import EXPLORERS, build

RAW_MARKUP = [
    "{glue",
    "{doc}",
    "{cite}",
    "{ref}",
    "```{",
    "<!--",
    "$\\",
    "$$",
]  # "$\\": TeX left unrendered
ERROR_OUTPUTS = (
    ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
    ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']"
)
# Where the cell after the explorer's cell starts, relative to the explorer's cell: a change means a
# layout shift.
BELOW = """root => {
    const cell = root.closest('.jp-Cell');
    const next = cell.nextElementSibling;
    return next ? next.getBoundingClientRect().top - cell.getBoundingClientRect().top : null;
}"""
# The heights of the explorer's parts (title, controls, figure, readout, note), to say which one
# grew.
PARTS = "root => [...root.children].map(e => Math.round(e.getBoundingClientRect().height))"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require(
        shutil.which("jupyter-lab", path=str(ROOT / ".venv" / "bin")) is not None
        or shutil.which("jupyter-lab") is not None,
        "JupyterLab is not installed: run `make test`, which installs it",
    )
    pytest.importorskip(
        "jupyterlab_myst",
        reason="jupyterlab-myst is not installed: run `make test`, which installs it",
    )
    with lab.jupyterlab(tmp_path_factory.mktemp("lab")) as (base, token):
        yield base, token


@pytest.fixture(scope="module")
def lab_context(browser):
    """One browser context per worker: its HTTP cache keeps JupyterLab's scripts between
    chapters."""
    holder = OfflineContext(browser)
    yield holder
    holder.context.close()


@pytest.fixture()
def lab_page(lab_context):
    """A fresh page per chapter: JupyterLab loaded anew, as when a reader opens the chapter's link.

    (Keeping one JupyterLab page loaded and opening chapter after chapter in it was faster still,
    but measured a layout shift under an explorer and a Run All that never finished on a loaded
    machine: flaky.) The pages share one context, so JupyterLab's scripts come from the browser's
    cache, as they do for a reader who opens a second chapter.
    """
    lab_context.blocked.clear()
    page = lab_context.context.new_page()
    page.set_default_timeout(180_000)
    yield lab_context, page
    page.close()


@pytest.mark.parametrize("chapter", lab.CHAPTERS)
def test_chapter_reads_right_in_jupyterlab(chapter, server, lab_page, artifacts):
    base, token = server
    offline, page = lab_page
    started = time.perf_counter()
    lab.open_chapter(page, base, token, chapter)
    # Opening must not change the notebook (a missing kernelspec made JupyterLab mark chapter 13
    # modified).
    assert page.locator(".lm-TabBar-tab.jp-mod-dirty").count() == 0, (
        f"{chapter}: JupyterLab marks the notebook modified on open"
    )
    reads_right_before_anything_runs(page, chapter)
    screenshot_whole_chapter(page, artifacts / f"lab__{chapter}.png")
    cells = notebook_cells(chapter)
    times = {"opened": time.perf_counter() - started}
    ran: set[int] = set()  # the cells run so far: the chapter's imports, its running example
    if f"chapters/{chapter}" in EXPLORERS:
        explorer = explorer_cell(cells)
        run_once(page, cells_needed(cells, explorer, code(cells[explorer])) + [explorer], ran)
        lab.run_cells(page, [explorer_cell(cells)])
        move_every_control(page, chapter)
        assert page.locator(ERROR_OUTPUTS).count() == 0, (
            f"{chapter}: the explorer printed an error in JupyterLab"
        )
    times["explorer"] = time.perf_counter() - started - sum(times.values())
    answer_in_jupyterlab(page, chapter, ran)
    times["exercises"] = time.perf_counter() - started - sum(times.values())
    follow_a_link_of_each_kind(page, chapter)
    times["links"] = time.perf_counter() - started - sum(times.values())
    print(f"{chapter}: " + ", ".join(f"{part} {seconds:.1f} s" for part, seconds in times.items()))
    assert offline.blocked == [] or all("127.0.0.1" not in url for url in offline.blocked)


def reads_right_before_anything_runs(page, chapter) -> None:
    """What a student sees on opening the chapter, before running a cell: prose rendered by
    jupyterlab-myst (no raw markup, no unresolved reference), the stored outputs without an error,
    no solution open or run, and a solution that opens when asked."""
    prose = page.locator(".jp-MarkdownCell .jp-RenderedHTMLCommon")
    assert page.locator(".jp-MarkdownCell .myst").count() > 0, (
        f"{chapter}: markdown is not rendered by jupyterlab-myst"
    )
    text = "\n".join(prose.all_inner_texts())
    for raw in RAW_MARKUP:
        assert raw not in text, f"{chapter}: the rendered prose shows raw markup {raw!r}"
    unresolved = page.locator(
        ".jp-MarkdownCell .myst [title*='not found'], .jp-MarkdownCell .myst .text-yellow-600"
    )
    assert unresolved.count() == 0, (
        f"{chapter}: a cross-reference or citation is unresolved in JupyterLab: "
        f"{unresolved.first.evaluate('e => e.outerHTML.slice(0, 300)')}"
    )
    assert page.locator(".jp-MarkdownCell details[open]").count() == 0, (
        f"{chapter}: a solution is open before the reader asks"
    )
    outputs = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
    assert "Correct!" not in outputs, f"{chapter}: a stored output shows a solution's check"
    assert page.locator(ERROR_OUTPUTS).count() == 0, (
        f"{chapter}: a stored output shows an error or a warning in JupyterLab"
    )
    # innerText counts only laid-out text, and JupyterLab lays out a cell a frame or two after it
    # comes on screen (content-visibility: auto); and jupyterlab-myst may render a cell's markdown
    # again after the click (seen under load: the dropdown closed again). So the page is queried
    # afresh at each poll, and the reader clicks again if the dropdown shut, as a reader would.
    opened = """() => [...document.querySelectorAll('.jp-MarkdownCell details')].some(d => d.open
        && d.innerText.includes('Solution to exercise') && d.innerText.includes('answer_'))"""
    for _ in range(3):
        solution = page.locator(".jp-MarkdownCell details", has_text="Solution to exercise").first
        solution.locator("summary").click()  # a solution opens when the reader asks
        try:
            page.wait_for_function(opened, timeout=15_000)
            break
        except Exception:  # noqa: BLE001, S112 (Playwright's TimeoutError: click again)
            continue
    else:
        seen = page.evaluate(
            """() => [...document.querySelectorAll('.jp-MarkdownCell details')]
                .filter(d => d.innerText.includes('Solution to exercise'))
                .map(d => (d.open ? 'open: ' : 'closed: ') + d.innerText.slice(0, 80))"""
        )
        pytest.fail(
            f"{chapter}: the first solution dropdown shows no answer when opened: {seen[:2]}"
        )
    # Close it again without a click: jupyterlab-myst may be re-rendering the cell under load (seen
    # in CI: the summary detached from the DOM at every retry for 180 s); what the reader sees is
    # checked above.
    page.evaluate(
        "() => document.querySelectorAll('.jp-MarkdownCell details[open]').forEach(d => { d.open = "
        "false; })"
    )


def notebook_cells(chapter: str) -> list[dict]:
    return json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]


def first_code_cell(cells: list[dict]) -> int:
    return next(i for i, cell in enumerate(cells) if cell["cell_type"] == "code")


def explorer_cell(cells: list[dict]) -> int:
    """The index of the cell that shows the chapter's explorer (CONTRIBUTING: one expression, tagged
    nbval-ignore-output)."""
    return next(
        i
        for i, cell in enumerate(cells)
        if "nbval-ignore-output" in cell["metadata"].get("tags", [])
        and "_explorer(" in "".join(cell["source"])
    )


def typed_value(value) -> str:
    """`value` as a student would type it: a Python number or ``np.array([...])`` with every
    digit."""
    value = np.asarray(value)
    return repr(value.item()) if value.ndim == 0 else f"np.array({value.tolist()!r})"


def run_once(page, indices: list[int], ran: set[int]) -> None:
    """Run the cells at `indices` that have not run yet, in order (the page's kernel keeps what they
    made)."""
    lab.run_cells(page, [index for index in indices if index not in ran])
    ran.update(indices)


def answer_in_jupyterlab(page, chapter, ran: set[int]) -> None:
    """Answer every exercise as a student types it, each attempt run in the exercise's one cell: the
    first mistake the exercise names (its named message, word for word as lnlib words it; nbval's
    kernel checks the others), then the solution ("Correct!"),
    then the cell as handed out ("Not answered yet": the check judges the answer of that run, never
    a stale one). Exercise 1 is also answered with code that raises: the error is shown and nothing
    is judged."""
    cells = notebook_cells(chapter)
    module = EXERCISES_IMPORT.search("".join(cells[first_code_cell(cells)]["source"])).group(1)
    exercises = importlib.import_module(f"lnlib.book.exercises.{module}").exercises
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        found = CHECK_LINE.search(source) if cell["cell_type"] == "code" else None
        if found is None:
            continue
        k, data = found.group(1), (found.group(2) or "")
        solution = SOLUTION.search("".join(cells[index + 1]["source"])).group(1)
        # what the exercise's data, and its solution, need from the chapter's example
        run_once(page, cells_needed(cells, index, source + "\n" + solution), ran)
        handed_out = source.split(f"answer_{k} = None")[0]
        exercise = exercises.exercise(
            int(k), **evaluate(cells, index, f"dict({data})", own=handed_out)
        )
        marker = f"exercises.check({k}, answer_{k}"
        # the first mistake's answer typed as numbers (an answer may not reach into the checker);
        # nbval's kernel checks every named mistake of every exercise (tests/nbval_exercises.py)
        attempts = [
            (f"answer_{k} = {typed_value(value)}", exercise.feedback(value))
            for value in list(exercise.mistakes.values())[:1]
        ]
        attempts += [(f"answer_{k} = an_undefined_name", None)] if k == "1" else []
        attempts += [(solution, "Correct!"), (None, "Not answered yet")]
        for attempt, (answer, expected) in enumerate(attempts):
            typed = (
                source
                if answer is None
                else re.sub(
                    rf"^answer_{k} = None.*$", lambda _: answer, source, count=1, flags=re.M
                )
            )
            # the first attempt at each exercise is typed with the keyboard, as a student does; the
            # rest are set through JupyterLab's own cell model and run with its Run Cell (the same
            # run and output, a third of the time)
            shown = run_cell_with(page, marker, typed, keyboard=attempt == 0)
            where = f"{chapter}, exercise {k} answered with {(answer or 'None').splitlines()[0]!r}"
            if expected is None:
                assert shown.locator(ERROR_OUTPUTS).count() == 1, f"{where}: no error shown"
                assert shown.locator(".lnlib-feedback").count() == 0, f"{where}: judged anyway"
                continue
            box = shown.locator(".lnlib-feedback")
            assert box.count() == 1, f"{where}: no feedback box"
            text = " ".join(box.inner_text().split())
            assert text.startswith(" ".join(expected.split())), (
                f"{where}: the box says {text!r}, lnlib says {expected!r}"
            )


CHECK_LINE = re.compile(r"^exercises\.check\((\d+), answer_\1(?:, (.*))?\)$", re.M)
SOLUTION = re.compile(r"```python\n(.*?)\n```", re.S)
EXERCISES_IMPORT = re.compile(r"^from lnlib\.book\.exercises\.(\w+) import exercises$", re.M)


def run_cell_with(page, marker: str, text: str, keyboard: bool = True):
    """Replace the source of the code cell holding `marker` by `text`, run it, wait for the kernel;
    the cell.

    With `keyboard`, as a student does it: click into the editor, select all, type, Shift+Enter.
    Otherwise through JupyterLab's cell model (``sharedModel.setSource``) and its
    ``notebook:run-cell`` command."""
    if not keyboard:
        index = page.evaluate(SET_AND_RUN, [marker, text])
        cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").nth(index)
        settle(page)
        return cell
    cell = page.locator(".jp-CodeCell").filter(has_text=marker).first
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(
        "c => !c.querySelector('.jp-InputPrompt').textContent.includes('*')",
        arg=cell.element_handle(),
        polling=100,
    )
    settle(page)
    return cell


# The code cell whose source holds the marker: its source set, the cell run (the command resolves
# when the kernel has replied); its index among the notebook's cells.
SET_AND_RUN = """async ([marker, text]) => {
    const notebook = window.jupyterapp.shell.currentWidget.content;
    const index = notebook.widgets.findIndex(c => c.model.type === 'code' &&
        c.model.sharedModel.getSource().includes(marker));
    notebook.widgets[index].model.sharedModel.setSource(text);
    notebook.activeCellIndex = index;
    await window.jupyterapp.commands.execute('notebook:run-cell');
    return index;
}"""


def follow_a_link_of_each_kind(page, chapter) -> None:
    """Click the chapter's first link to the Sources page and to another chapter: each opens in a
    tab."""
    for kind in ("sources.md", ".ipynb"):
        links = page.locator(f".jp-MarkdownCell a[href*='{kind}']")
        # the first one in view (a link inside a closed dropdown cannot be clicked)
        shown = [links.nth(i) for i in range(min(links.count(), 40)) if links.nth(i).is_visible()]
        if not shown:
            continue
        link = shown[0]
        name = link.get_attribute("href").split("?")[0].split("#")[0].rsplit("/", 1)[-1]
        link.scroll_into_view_if_needed()
        link.click()
        try:
            page.locator(
                ".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel", has_text=name
            ).first.wait_for(timeout=20_000)
        except Exception:  # noqa: BLE001 (Playwright's TimeoutError: say what the reader saw)
            pytest.fail(f"{chapter}: the link to {name} opened no tab in JupyterLab")
        page.locator(
            ".lm-TabBar-tab .lm-TabBar-tabLabel", has_text=f"{chapter}.ipynb"
        ).first.click()


def screenshot_whole_chapter(page, path) -> None:
    """JupyterLab scrolls the notebook inside its panel: grow the window to the whole chapter for
    the screenshot."""
    if not SCREENSHOTS:
        return
    height = page.evaluate("""() => {
        const scroller = document.querySelector(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
        scroller.scrollTop = 0;
        return scroller.scrollHeight;
    }""")
    page.set_viewport_size({"width": 1280, "height": min(height + 200, 30_000)})
    page.evaluate(
        "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": 1280, "height": 900})


def settle(page) -> None:
    """Wait until the kernel is idle again (every message of the last move has arrived) and the page
    has painted."""
    lab.wait_for_idle(page)
    page.evaluate(
        "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )


def readout_text(html_text: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", "", html_text).split())


def move_every_control(page, chapter) -> None:
    explorer = build(f"chapters/{chapter}")
    names = {control.description: name for name, control in explorer.controls.items()}
    root = page.locator(lab.EXPLORER)
    root.scroll_into_view_if_needed()
    handle = root.element_handle()
    controls = lab.controls(root)
    assert controls, f"{chapter}: the explorer shows no slider or dropdown"
    # JupyterLab lays out only the cells on screen (content-visibility: auto): until the frames
    # after the scroll, the explorer's cell may still have its estimated height (seen: 76 px, then
    # 618 px after the first move, every part of the explorer unchanged). Measure once it is laid
    # out.
    settle(page)
    below, parts = handle.evaluate(BELOW), handle.evaluate(PARTS)
    moved = 0
    for control in controls:
        state = lab.control_state(control)
        where = f"{chapter}: {state['label']}"
        if state["disabled"]:
            inactive = explorer_at_page_choices(explorer, root)
            assert names.get(state["label"]) in inactive, (
                f"{where} is disabled but the explorer says it is in effect"
            )
            reason = inactive[names[state["label"]]]
            assert readout_text(reason) in " ".join(
                root.locator(".lnlib-readout").inner_text().split()
            ), f"{where} is disabled without its reason ({reason!r}) in the readout"
            enable(page, handle, control, where)
        for kind in moves(state):
            how, what = lab.plan_move(
                lab.control_state(control), "mouse" if kind == "drag" else kind, moved
            )
            before = handle.evaluate(lab.STATE)
            if kind == "drag":
                how = kind
                lab.drag_slider(page, control, what)
            else:
                lab.move(page, control, how, what)
            try:
                page.wait_for_function(lab.CHANGED, arg=[handle, before], timeout=10_000)
            except Exception:  # noqa: BLE001 (Playwright's TimeoutError: say what the reader saw)
                pytest.fail(
                    f"{where} moved by {how} ({what}): neither the figure nor the readout changed "
                    "in 10 s"
                )
            settle(page)
            after = handle.evaluate(BELOW)
            assert abs(after - below) < 0.5, (
                f"{where} moved by {how} ({what}): the cell below the explorer moved "
                f"{after - below:+.1f} px (heights of title, controls, figure, readout, note: "
                f"{parts} -> {handle.evaluate(PARTS)})"
            )
            moved += 1
    screenshot(page, ROOT / "tests" / "artifacts" / "screenshots" / f"lab__{chapter}__explorer.png")
    assert moved >= len(controls), f"{chapter}: only {moved} moves were made"


def moves(state: dict) -> list[str]:
    """A key, a click on the track and a drag of the handle for a slider; the next option for a
    dropdown; a click on a toggle's next button or a checkbox, then another (and back)."""
    if state["kind"] in ("toggle", "checkbox"):
        return ["click", "click"]
    return ["select"] if state["kind"] == "select" else ["key", "mouse", "drag"]


def explorer_at_page_choices(explorer, root) -> dict:
    """The controls `explorer` declares inactive with its dropdowns set to the page's choices."""
    for name, control in explorer.controls.items():
        if isinstance(control, (widgets.Dropdown, widgets.ToggleButtons)):
            control.index = (
                root.locator(".widget-dropdown, .widget-toggle-buttons")
                .filter(has_text=control.description)
                .evaluate(
                    "e => { const s = e.querySelector('select'); return s ? s.selectedIndex : "
                    "[...e.querySelectorAll('button')].findIndex(b => "
                    "b.classList.contains('mod-active')); }"
                )
            )
    return explorer.inactive(explorer.values())


def enable(page, handle, control, where: str) -> None:
    """Turn the explorer's dropdowns until `control` is in effect (it is disabled at the page's
    choices)."""
    for select in handle.query_selector_all("select"):
        for index in range(select.evaluate("e => e.options.length")):
            if index == select.evaluate("e => e.selectedIndex"):
                continue
            before = handle.evaluate(lab.STATE)
            select.select_option(index=index)
            page.wait_for_function(lab.CHANGED, arg=[handle, before], timeout=10_000)
            settle(page)
            if not lab.control_state(control)["disabled"]:
                return
    pytest.fail(f"{where} is disabled at every choice of the dropdowns")
