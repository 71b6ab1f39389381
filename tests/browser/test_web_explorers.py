"""The explorers on the built website, driven in Chromium offline as a reader would.

For every chapter: every control of its explorer is moved by mouse and by keyboard; each move must
show the stored setting within one animation frame, and the readout and note must equal what
``lnlib.book.explorers.<name>_explorer`` computes at that grid point (computed here, in Python); the
moved control's aria-label and aria-valuetext must say what it moves and its new value with its
unit. No console error, no outside request, no missing image, and the page with its states weighs at
most 2.5 MB. A static check reads every built chapter page: no explorer cell without its explorer
under it, no Explore prose that asks for a control the page does not have.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from lnlib.book.explorers.web import web_states
from lnlib.book.tools.cells import evaluate

from .conftest import ROOT, SITE, screenshot

EXPLORER_CALL = re.compile(r"^\w+_explorer\(.*\)\s*$", re.S)
PAGE_BUDGET = (
    2.5e6  # bytes: the page's own HTML (states included), its images and the explorers' front-end
)
# The theme, MathJax and the search index (about 3.8 MB uncompressed) are shared by every page of
# the book and come from the browser's cache after the first; BENCHMARKS.md lists them apart.
PAGE_WEIGHT = """() => performance.getEntriesByType('navigation')
    .concat(performance.getEntriesByType('resource'))
    .filter(e => { const path = new URL(e.name).pathname;
                   return !(path.includes('/_static/') && !path.includes('lnlib-explorers')) &&
                       !path.endsWith('searchindex.js'); })
    .reduce((sum, e) => sum + (e.encodedBodySize || 0), 0)"""
STALE_PHRASES = (
    "is replaced by the figure below",
    "run this chapter in JupyterLab (`make lab`)",
    "static companion",
)


def chapter_explorers() -> dict[str, str]:
    """Chapter page -> the source of its explorer cell (one expression, e.g.
    ``mean_explorer(values=[...])``)."""
    found = {}
    for notebook in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            text = "".join(cell["source"]).strip()
            if cell["cell_type"] == "code" and EXPLORER_CALL.match(text):
                found[f"chapters/{notebook.stem}"] = text
    return found


EXPLORERS = chapter_explorers()

# Install a probe that counts animation frames from the reader's input to the new setting on screen.
PROBE = """root => {
    root.__probe = {frames: null, fired: false};
    root.addEventListener('input', () => {
        const probe = root.__probe;
        probe.fired = true;
        let frames = 0;
        const tick = () => {
            if (root.dataset.shown === root.dataset.state) { probe.frames = frames; return; }
            frames += 1;
            if (frames < 120) requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
    }, {capture: true});
}"""
ARM = "root => { root.__probe = {frames: null, fired: false}; }"
SETTLED = (
    "root => root.dataset.shown === root.dataset.state && (!root.__probe.fired || "
    "root.__probe.frames !== null)"
)
SHOWN = """root => {
    const data = JSON.parse(root.querySelector('script.lnlib-web-data').textContent);
    const state = data.states[Number(root.dataset.state)];
    const overlay = root.querySelector('.lnlib-web-overlay');
    const norm = html => { const d = document.createElement('div'); d.innerHTML = html;
        return d.innerHTML; };
    return {
        state: Number(root.dataset.state), shown: Number(root.dataset.shown),
            frames: root.__probe ? root.__probe.frames : null,
        overlayOk: overlay.src === data.images[state[1]] && overlay.complete &&
            overlay.naturalWidth > 0,
        backgroundOk: root.querySelector('.lnlib-web-background').src === data.images[state[0]],
        readout: root.querySelector('.lnlib-readout').innerHTML,
            note: root.querySelector('.lnlib-note').innerHTML,
        figure: state[0] + ':' + state[1],
        disabled: [...root.querySelectorAll('[data-lnlib-control]')].filter(e =>
            e.disabled).map(e => Number(e.dataset.lnlibControl)),
    };
}"""
NORMALIZE = """html => {
    const d = document.createElement('div'); d.innerHTML = html; return d.innerHTML; }"""


# The positions of the controls (a list's index, a slider's step, a checkbox's 0 or 1).
POSITIONS = (
    "r => [...r.querySelectorAll('[data-lnlib-control]')].map(c => c.type === 'checkbox' ? "
    "Number(c.checked) : Number(c.value))"
)


def expected_name(states, index: int, positions: list[int]) -> tuple[str, str]:
    """The accessible name and spoken value the explorer's Meaning gives control `index` at
    `positions`."""
    sweep, control = states.sweep, states.controls[index]
    if sweep and control.name == "value":  # the sweep's slider moves the entry chosen in "move"
        entry = positions[1]
        return sweep["whats"][entry], sweep["spoken"][entry][positions[index]]
    return control.what, control.spoken[positions[index]]


def build(page_name: str):
    """The explorer of chapter page `page_name`, as its Explore cell makes it (with the chapter's
    running example, which earlier cells define)."""
    cells = json.loads((ROOT / f"{page_name}.ipynb").read_text())["cells"]
    index = next(
        i for i, cell in enumerate(cells) if "".join(cell["source"]).strip() == EXPLORERS[page_name]
    )
    return evaluate(cells, index, EXPLORERS[page_name])


def frame(explorer, values):
    explorer.texts(values)
    return explorer.renderer.layers()[1]


def moves(control_kind: str):
    """(how, what) pairs: one mouse move and keyboard moves a reader would make with this kind of
    control."""
    if control_kind == "range":
        return [
            ("mouse", 0.8),
            ("key", "Home"),
            ("key", "ArrowRight"),
            ("key", "End"),
            ("mouse", 0.3),
        ]
    if control_kind == "select":
        return [("mouse", -1), ("key", "ArrowUp"), ("mouse", 0)]
    return [("mouse", None), ("key", "Space")]


def move(page, element, kind: str, how: str, what) -> None:
    if how == "key":
        element.focus()
        page.keyboard.press(what)
    elif kind == "range":
        box = element.bounding_box()
        page.mouse.click(box["x"] + what * box["width"], box["y"] + box["height"] / 2)
    elif kind == "select":
        count = element.evaluate("e => e.options.length")
        element.select_option(
            index=what % count
        )  # a native <select>'s list is the browser's own popup
    else:
        element.click()


def enable(root, element) -> None:
    """A control with no effect at this setting is disabled; pick options of the dropdowns until it
    is in effect."""
    for select in root.locator("select").all():
        for index in range(select.evaluate("e => e.options.length")):
            select.select_option(index=index)
            if not element.is_disabled():
                return
    pytest.fail(
        f"control {element.get_attribute('id')} is disabled at every choice of the dropdowns"
    )


@pytest.mark.parametrize("page_name", sorted(EXPLORERS))
def test_every_control_moves_the_figure_and_readout(page_name, offline, site_url, artifacts):
    explorer = build(page_name)
    states = web_states(explorer)
    page = offline.context.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    response = page.goto(f"{site_url}/{page_name}.html", wait_until="load")
    assert response is not None and response.ok
    root = page.locator(".lnlib-web-explorer")
    assert root.count() == 1, (
        f"{page_name}: expected one explorer on the page, found {root.count()}"
    )
    root.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => document.querySelector('.lnlib-web-explorer').dataset.ready === '1'"
    )
    handle = root.element_handle()
    handle.evaluate(PROBE)
    controls = root.locator("[data-lnlib-control]")
    assert controls.count() == len(states.controls), (
        f"{page_name}: the page shows {controls.count()} controls, the grid has "
        f"{len(states.controls)}"
    )
    checked = 0
    for i, control in enumerate(states.controls):
        element = controls.nth(i)
        label = root.locator(f"label[for='{element.get_attribute('id')}']").inner_text()
        assert label.strip(), f"{page_name}: control {control.name} has no label"
        if element.is_disabled():
            enable(root, element)
        for how, what in moves(control.kind):
            page.wait_for_function(
                "r => (r.dataset.decoding || '0') === '0'", arg=handle, timeout=10000
            )  # a reader's pause
            before = handle.evaluate(SHOWN)
            handle.evaluate(ARM)
            move(page, element, control.kind, how, what)
            page.wait_for_function(SETTLED, arg=handle, timeout=5000)
            after = handle.evaluate(SHOWN)
            if after["state"] == before["state"]:
                continue  # e.g. Home at the first position: nothing to show
            values = states.settings[after["state"]]
            assert values is not None, f"{page_name}: {control.name} reached a hole in the grid"
            readout, note = explorer.texts(values)
            where = f"{page_name}: {control.name} moved by {how} ({what}) to {values}"
            # Every setting one move away was decoded ahead: on screen by the next animation frame.
            assert after["frames"] == 0, f"{where}: shown {after['frames']} animation frames late"
            assert after["overlayOk"] and after["backgroundOk"], (
                f"{where}: the figure shown is not the setting's"
            )
            assert after["readout"] == page.evaluate(NORMALIZE, readout), (
                f"{where}: readout differs from the explorer's"
            )
            assert after["note"] == page.evaluate(NORMALIZE, note), (
                f"{where}: note differs from the explorer's"
            )
            # The moved control's accessible name says what it moves; a slider's value text, the
            # value with its unit.
            what, spoken = expected_name(states, i, root.evaluate(POSITIONS))
            assert element.get_attribute("aria-label") == what, (
                f"{where}: aria-label {element.get_attribute('aria-label')!r}, not {what!r}"
            )
            if control.kind == "range":
                assert element.get_attribute("aria-valuetext") == spoken, (
                    f"{where}: aria-valuetext {element.get_attribute('aria-valuetext')!r}, not "
                    f"{spoken!r}"
                )
            inactive = explorer.inactive(values)
            expected = sorted(j for j, c in enumerate(states.controls) if c.name in inactive)
            assert after["disabled"] == expected, (
                f"{where}: disabled controls {after['disabled']}, expected {expected}"
            )
            assert all(reason in readout for reason in inactive.values()), (
                f"{where}: a disabled control without its reason"
            )
            before_values = states.settings[before["state"]]
            if before_values == values:
                continue  # a sweep's "move" control picks another entry at the same setting
            if not np.array_equal(frame(explorer, before_values), frame(explorer, values)):
                assert after["figure"] != before["figure"], (
                    f"{where}: the explorer's figure changed, the page's did not"
                )
            assert after["readout"] != before["readout"] or after["figure"] != before["figure"], (
                f"{where}: nothing changed on the page"
            )
            checked += 1
    assert checked >= len(states.controls), f"{page_name}: only {checked} moves changed the setting"
    images = page.evaluate(
        "() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => "
        "i.src.slice(0, 60))"
    )
    weight = page.evaluate(PAGE_WEIGHT)
    screenshot(handle, artifacts / f"web-explorer-{page_name.split('/')[-1]}.png")
    assert errors == [], f"{page_name}: console errors {errors}"
    assert offline.blocked == [], f"{page_name}: outside requests {offline.blocked}"
    assert images == [], f"{page_name}: images that did not load: {images}"
    assert weight <= PAGE_BUDGET, (
        f"{page_name}: the page weighs {weight / 1e6:.2f} MB, over the {PAGE_BUDGET / 1e6} MB "
        "budget"
    )


def test_a_sweep_says_when_picking_another_entry_undoes_a_move(offline, site_url):
    """Learner A13: in chapter 07, beta3 moved, then gamma3: "the readout shows y3 = -2.187, which
    means beta3 has quietly gone back to 0". A line under the readout says so; picking another entry
    without a move says nothing."""
    page = offline.context.new_page()
    page.goto(f"{site_url}/chapters/07_gamma_beta.html", wait_until="load")
    root = page.locator(".lnlib-web-explorer")
    root.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => document.querySelector('.lnlib-web-explorer').dataset.ready === '1'"
    )
    names = json.loads(root.locator("script.lnlib-web-data").text_content())["sweep"]["names"]
    controls = root.locator("[data-lnlib-control]")
    entry, value = controls.nth(1), controls.nth(2)
    line = root.locator(".lnlib-web-reset")
    entry.select_option(index=names.index("β3"))
    entry.select_option(index=names.index("γ3"))
    assert line.count() == 0  # nothing was moved
    entry.select_option(index=names.index("β3"))
    value.focus()
    value.press("ArrowRight")
    # while β3 is off its value, the preset's name no longer describes the input (learner B52)
    assert line.is_visible() and line.inner_text().startswith("β3 is off the preset's value")
    value.press("ArrowLeft")
    assert line.count() == 0  # back on the preset's value
    value.press("ArrowRight")
    entry.select_option(index=names.index("γ3"))
    assert line.is_visible() and line.inner_text().startswith("β3 is back at the preset's value")
    entry.select_option(index=names.index("γ4"))  # γ3 was not moved
    assert line.count() == 0


def test_pages_without_explorers_load_no_explorer_code(site_url):
    for page in ("intro", "api", "bibliography"):
        text = (SITE / f"{page}.html").read_text(encoding="utf-8")
        assert "lnlib-explorers.js" not in text and "lnlib-explorers.css" not in text, (
            f"{page}: loads the explorers' front-end"
        )


class ExploreSection(HTMLParser):
    """The text of a chapter page's Explore section outside its explorer, and the labels of its
    controls."""

    def __init__(self):
        super().__init__()
        self.depth = 0  # >0 inside section#explore
        self.inside_explorer = 0
        self.prose: list[str] = []
        self.codes: list[str] = []
        self.labels: list[str] = []
        self._code = self._label = None
        self.explorer_cells = self.explorers = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "section" and attrs.get("id") == "explore":
            self.depth = 1
        elif self.depth and tag == "section":
            self.depth += 1
        if "lnlib-web-explorer" in classes:
            self.explorers += 1
            self.inside_explorer = 1
        elif self.inside_explorer and tag == "div":
            self.inside_explorer += 1
        if tag == "code" and self.depth and not self.inside_explorer:
            self._code = []
        if tag in ("label", "option") and self.inside_explorer:
            self._label = []

    def handle_endtag(self, tag):
        if tag == "section" and self.depth:
            self.depth -= 1
        if tag == "div" and self.inside_explorer:
            self.inside_explorer -= 1
        if tag == "code" and self._code is not None:
            self.codes.append("".join(self._code))
            self._code = None
        if tag in ("label", "option") and self._label is not None:
            self.labels.append("".join(self._label).strip())
            self._label = None

    def handle_data(self, data):
        if self._code is not None:
            self._code.append(data)
        if self._label is not None:
            self._label.append(data)
        if self.depth and not self.inside_explorer:
            self.prose.append(data)


@pytest.mark.parametrize("page_name", sorted(EXPLORERS))
def test_explore_prose_asks_only_for_controls_the_page_has(page_name):
    html_text = (SITE / f"{page_name}.html").read_text(encoding="utf-8")
    section = ExploreSection()
    section.feed(html_text)
    prose = " ".join(" ".join(section.prose).split())
    assert section.explorers == 1, (
        f"{page_name}: the Explore section holds {section.explorers} explorers, not one"
    )
    call = EXPLORERS[page_name].split("(")[0]
    assert call in prose, (
        f"{page_name}: the explorer cell {call}(...) is not in the Explore section"
    )
    explore = html_text[
        html_text.index('<section id="explore"') :
    ]  # an import cell above may name the call too
    after_call = explore.split(call, 1)[1]
    assert after_call.find('class="lnlib-web-explorer"') < after_call.find("</section>"), (
        f"{page_name}: the explorer cell has no explorer under it"
    )
    for phrase in STALE_PHRASES:
        assert phrase not in prose, f"{page_name}: the Explore prose still says {phrase!r}"
    asked = [
        code
        for code in section.codes
        if not re.search(r"[()\[\]=._]", code) and not code.startswith("make")
    ]
    missing = [code for code in asked if code not in section.labels]
    assert missing == [], (
        f"{page_name}: the Explore prose names controls the page does not have: {missing}"
    )
