"""The built website, in a real browser, with every non-loopback request blocked.

For every page in the table of contents: it loads without JavaScript errors and without needing
anything from outside this machine; MathJax has typeset every formula; every image loads and has
alt text; no dead widget is shown and every explorer's static companion is in its place; every
internal link and citation resolves.

Layout, at a desktop width (1280 px) and a phone width (390 px): no display equation, code block,
printed output or table is clipped or needs scrolling at 1280 px; at 390 px figures fit the page,
and math, code and wide tables may scroll only inside their own box, never widening the page (a wide
table says so in a line above it and in a shaded strip with an arrow down its right edge); every
output figure, the website explorers' included, is shown at >= 75 % of its natural width at 1280 px,
so its text stays legible; on a phone every figure's smallest text reads at >= 10 px as shown or,
for a figure that says "Tap the figure to enlarge it" under it, as a tap shows it larger in its own
sideways-scrolling box (_static/figure-zoom.js), without widening the page; every folded code cell's
toggle says what it hides; no page says that something is "not installed" or is "skipping" (the
PyTorch evidence is stored data, lnlib.book.tools.pytorch_reference). With LNBOOK_SCREENSHOTS=1
(`make screenshots`) a full-page screenshot of each page at both widths is saved under
tests/artifacts/screenshots for a person to look at.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest
import yaml

from .conftest import ROOT, SITE, OfflineContext, screenshot


def toc_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [
        entry["file"] for part in toc.get("parts", []) for entry in part["chapters"]
    ]
    return files


def has_explorer(page: str) -> bool:
    notebook = ROOT / f"{page}.ipynb"
    if not notebook.exists():
        return False
    cells = json.loads(notebook.read_text())["cells"]
    return any(
        re.search(r"\b\w+_explorer\(", "".join(c["source"]))
        for c in cells
        if c["cell_type"] == "code"
    )


PAGES = toc_pages()
WAIT_FOR_MATHJAX = """async () => {
    if (!document.querySelector('.math')) return 'no math';
    for (let i = 0; i < 200 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
        await new Promise(r => setTimeout(r, 50));
    if (!(window.MathJax && MathJax.startup)) return 'MathJax never loaded';
    await MathJax.startup.promise;
    return 'typeset';
}"""
PAGE_FACTS = """() => {
    const article = document.querySelector('article') || document.body;
    const maths = [...document.querySelectorAll('.math')];
    return {
        text: article.innerText,
        untypeset: maths.filter(m => !m.querySelector('mjx-container')).map(m =>
            m.textContent.slice(0, 80)),
        images: [...article.querySelectorAll('img')].map(i => ({src: i.getAttribute('src'),
            alt: i.getAttribute('alt') || '', ok: i.complete && i.naturalWidth > 0})),
        widgets: article.querySelectorAll('input[type=range]:not(.lnlib-web-explorer *), ' +
            '.widget-slider, .jupyter-widgets, .widget-area').length,
        exploreImages: document.querySelectorAll('section#explore img').length,
    };
}"""


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_fully_offline(page, offline, site_url, artifacts):
    browser_page = offline.context.new_page()
    errors: list[str] = []
    browser_page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    browser_page.on("pageerror", lambda exc: errors.append(str(exc)))
    response = browser_page.goto(f"{site_url}/{page}.html", wait_until="load")
    assert response is not None and response.ok, (
        f"{page}: HTTP {response.status if response else 'no response'}"
    )
    math_state = browser_page.evaluate(WAIT_FOR_MATHJAX)
    facts = browser_page.evaluate(PAGE_FACTS)

    assert offline.blocked == [], f"{page}: the page asked for outside resources: {offline.blocked}"
    assert errors == [], f"{page}: JavaScript console errors: {errors}"
    assert math_state in ("typeset", "no math"), f"{page}: {math_state}"
    assert facts["untypeset"] == [], (
        f"{page}: formulas MathJax did not typeset: {facts['untypeset']}"
    )
    for raw in ("$$", "{glue", "{cite}", "{doc}"):
        assert raw not in facts["text"], f"{page}: raw markup {raw!r} left in the page text"
    for image in facts["images"]:
        assert image["ok"], f"{page}: image {image['src']} did not load"
        assert len(image["alt"]) >= 10, (
            f"{page}: image {image['src']} has no useful alt text ({image['alt']!r})"
        )
    assert facts["widgets"] == 0, (
        f"{page}: shows {facts['widgets']} ipywidgets element(s) outside a website explorer, which "
        "cannot move without a kernel"
    )
    assert not re.search(r"\b(VBox|HBox|\w+Explorer)\(", facts["text"]), (
        f"{page}: a widget's text repr is shown instead of a figure"
    )
    if has_explorer(page):
        assert facts["exploreImages"] >= 1, (
            f"{page}: the Explore section has no static companion figure"
        )
    folded_cells_say_what_they_hide(page, browser_page)


# Everything measured in CSS pixels; 1 px of slack for sub-pixel rounding.
LAYOUT_FACTS = """() => {
    const article = document.querySelector('article') || document.body;
    const shown = el => el.getClientRects().length > 0 &&
        getComputedStyle(el).visibility !== 'hidden';
    const name = el => el.tagName.toLowerCase() + ': ' + (el.innerText || el.textContent ||
        el.getAttribute('src') || '')
        .replace(/\\s+/g, ' ').trim().slice(0, 70);
    const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    const overflowing = el => el.scrollWidth > el.clientWidth + 1;
    // a box that scrolls sideways fades at its right edge until scrolled to the end
    // (_static/scroll-hint.js)
    const hinted = el => !scrolls(el) || el.classList.contains('lnlib-more-right');
    const pick = selector => [...article.querySelectorAll(selector)].filter(shown);
    const column = article.getBoundingClientRect().width;
    // a code cell's output that scrolls sideways has a line above it saying so: before the
    // output's own block inside div.cell_output (_static/scroll-hint.js)
    const outputCued = el => {
        const out = el.closest('div.cell_output');
        if (!out) return false;
        let anchor = el;
        while (anchor !== out && anchor.parentElement !== out) anchor = anchor.parentElement;
        const before = anchor.previousElementSibling;
        return !!before && before.classList.contains('lnlib-scroll-cue-output');
    };
    return {
        column,
        viewport: window.innerWidth,
        page: document.documentElement.scrollWidth,
        math: pick('div.math, mjx-container[display="true"]').filter(overflowing).map(el =>
            ({what: name(el), scrolls: scrolls(el), hinted: hinted(el),
                // and a line above its block says so (_static/scroll-hint.js), or above the
                // cell output it is printed in
                cued: outputCued(el) || (() => {
                    const block = el.closest('div.math') || el;
                    const before = block.previousElementSibling;
                    return !!before && before.classList.contains('lnlib-scroll-cue-math');
                })()})),
        code: pick('pre, div.cell_output, div.output').filter(overflowing).map(el =>
            ({what: name(el), scrolls: scrolls(el), hinted: hinted(el),
                output: scrolls(el) && !!el.closest('div.cell_output'),
                // a code block, of the text (which readers copy) or a notebook cell's input
                text: el.matches('pre') && !el.closest('div.cell_output'),
                cued: outputCued(el) || (() => {
                    const block = el.closest("div[class^='highlight-']") || el;
                    const before = block.previousElementSibling;
                    return !!before && before.classList.contains('lnlib-scroll-cue-code');
                })()})),
        tables: pick('table').filter(t => t.getBoundingClientRect().width > column + 1 ||
            overflowing(t.parentElement))
            .map(t => {
                let box = t.parentElement;
                while (box && box !== article && !scrolls(box)) box = box.parentElement;
                const ok = box && box !== article &&
                    box.getBoundingClientRect().width <= column + 1;
                return {what: name(t), width: Math.round(t.getBoundingClientRect().width),
                    scrolls: !!ok,
                        hinted: !!ok && box.classList.contains('lnlib-more-right'),
                        // and a line above it says so (the fade alone is faint on a table)
                        cued: !!ok && !!box.previousElementSibling &&
                            box.previousElementSibling.classList.contains('lnlib-scroll-cue'),
                        // and a shaded strip with an arrow down its right edge, for a reader
                        // in the middle of a table taller than the screen
                        edged: !!ok && !!box.parentElement.querySelector(
                            ':scope > .lnlib-scroll-edge:not([hidden])')};
            }),
        images: pick('img').map(i => ({what: i.closest('.lnlib-web-explorer')
                ? `the figure of ${i.closest('.lnlib-web-explorer').dataset.explorer} ` +
                    `(${i.className})`
                : i.getAttribute('src'),
            output: !!i.closest('.cell_output'),
            shown: i.getBoundingClientRect().width, natural: i.naturalWidth,
                right: i.getBoundingClientRect().right})),
        cues: pick('.lnlib-scroll-cue:not(.lnlib-scroll-cue-output):not(.lnlib-scroll-cue-math)' +
            ':not(.lnlib-scroll-cue-code)').length,
        code_cues: pick('.lnlib-scroll-cue-code').length,
        output_cues: pick('.lnlib-scroll-cue-output').map(el => el.textContent),
        math_cues: pick('.lnlib-scroll-cue-math').length,
        text: article.textContent,
    };
}"""
WIDTHS = (1280, 390)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_nothing_clipped_and_figures_legible(page, width, browser, site_url, artifacts):
    holder = OfflineContext(browser, width)
    try:
        browser_page = holder.context.new_page()
        browser_page.goto(f"{site_url}/{page}.html", wait_until="load")
        browser_page.evaluate(WAIT_FOR_MATHJAX)
        # the API page is very tall: a full-page screenshot takes a while on a busy machine
        screenshot(
            browser_page,
            artifacts / f"{page.replace('/', '__')}@{width}.png",
            full_page=True,
            timeout=120_000,
        )
        facts = browser_page.evaluate(LAYOUT_FACTS)
    finally:
        holder.context.close()

    for phrase in ("not installed", "skipping", "skipped"):
        assert phrase not in facts["text"].lower(), (
            f"{page}: says {phrase!r}; show stored evidence instead "
            "(lnlib.book.tools.pytorch_reference)"
        )
    assert facts["page"] <= facts["viewport"] + 1, (
        f"{page} at {width} px: the page is {facts['page']} px wide, wider than the window"
    )
    for image in facts["images"]:
        assert image["right"] <= facts["viewport"] + 1, (
            f"{page} at {width} px: image {image['what']} runs off the page"
        )
    if width == 1280:
        assert facts["tables"] == [], (
            f"{page}: tables wider than the {facts['column']:.0f} px column: {facts['tables']}"
        )
        assert facts["cues"] == 0, (
            f"{page}: a 'scroll sideways' line at 1280 px, where every table fits"
        )
        assert facts["output_cues"] == [], (
            f"{page}: a 'scroll sideways' line above an output at 1280 px, where every output fits"
        )
        assert facts["math_cues"] == 0, f"{page}: a 'Wide formula' line at 1280 px"
        assert facts["code_cues"] == 0, f"{page}: a 'Wide code' line at 1280 px"

        assert facts["math"] == [], (
            f"{page}: display equations clipped or scrolling at 1280 px (break them with aligned): "
            f"{facts['math']}"
        )
        assert facts["code"] == [], (
            f"{page}: code or output wider than its box at 1280 px (keep lines <= 80 columns): "
            f"{facts['code']}"
        )
        small = [
            f"{i['what']} at {i['shown'] / i['natural']:.0%}"
            for i in facts["images"]
            if i["output"] and i["shown"] < 0.75 * i["natural"]
        ]
        assert small == [], (
            f"{page}: figures shrunk below 75 % of their natural width, so their text is too "
            f"small: {small}"
        )
    else:
        clipped = [
            block
            for block in facts["math"] + facts["code"] + facts["tables"]
            if not block["scrolls"]
        ]
        assert clipped == [], (
            f"{page} at {width} px: math, code or a table cut off instead of scrolling in its own "
            f"box: {clipped}"
        )
        silent = [
            block
            for block in facts["math"] + facts["code"] + facts["tables"]
            if not block["hinted"]
        ]
        assert silent == [], (
            f"{page} at {width} px: a box that scrolls sideways without the fade at its right "
            f"edge: {silent}"
        )
        uncued = [table for table in facts["tables"] if not table["cued"]]
        assert uncued == [], (
            f"{page} at {width} px: a table that scrolls sideways without the 'scroll sideways' "
            f"line above it: {uncued}"
        )
        unedged = [table for table in facts["tables"] if not table["edged"]]
        assert unedged == [], (
            f"{page} at {width} px: a table that scrolls sideways without the strip and arrow "
            f"down its right edge: {unedged}"
        )
        assert facts["cues"] == len(facts["tables"]), (
            f"{page} at {width} px: {facts['cues']} 'scroll sideways' lines for "
            f"{len(facts['tables'])} wide tables"
        )
        uncued = [block for block in facts["code"] if block["output"] and not block["cued"]]
        assert uncued == [], (
            f"{page} at {width} px: a code output that scrolls sideways without the 'scroll "
            f"sideways' line above it: {uncued}"
        )
        assert set(facts["output_cues"]) <= {"Wide output: scroll sideways →"}, facts["output_cues"]
        uncued = [block for block in facts["code"] if block["text"] and not block["cued"]]
        assert uncued == [], (
            f"{page} at {width} px: a code block (of the text or a cell's input) that scrolls "
            f"sideways without the 'scroll sideways' line above it (learners B and A, 2026-11-30): "
            f"{uncued}"
        )
        uncued = [block for block in facts["math"] if block["scrolls"] and not block["cued"]]
        assert uncued == [], (
            f"{page} at {width} px: a formula that scrolls sideways without the 'scroll sideways' "
            f"line above it: {uncued}"
        )


# Chapter 16's harness tables print four dtype columns: wider than a phone's column.
WIDE_OUTPUT_PAGE = "chapters/16_check_your_own"


def test_a_wide_output_says_it_scrolls_on_a_phone(browser, site_url):
    """At 390 px a printed output wider than its box has "Wide output: scroll sideways →" above
    it (learner B3's F7: the harness table was cut at its third column, with no hint); at 1280 px,
    where it fits, no such line. The layout test checks every page; this one that the rule is not
    vacuous."""
    found = {}
    for width in WIDTHS:
        holder = OfflineContext(browser, width)
        try:
            browser_page = holder.context.new_page()
            browser_page.goto(f"{site_url}/{WIDE_OUTPUT_PAGE}.html", wait_until="load")
            browser_page.evaluate(WAIT_FOR_MATHJAX)
            found[width] = browser_page.evaluate(LAYOUT_FACTS)
        finally:
            holder.context.close()
    wide = [block for block in found[390]["code"] if block["output"]]
    assert wide and all(block["cued"] for block in wide), wide
    assert found[390]["output_cues"].count("Wide output: scroll sideways →") >= 1
    assert not [block for block in found[1280]["code"] if block["output"]]
    assert found[1280]["output_cues"] == []


# The families table of "What to use today": four columns, at 390 px taller than the screen (the
# checklist's table above it turns into cards on a phone).
WIDE_TABLE_PAGE = "chapters/what_to_use_today"
PHONE = {"width": 390, "height": 844}
# The families table: where it is, whether it and its line, strip and
# arrow show, and where the arrow is on the screen.
TABLE_EDGE_FACTS = """() => {
    const box = [...document.querySelectorAll('article table')]
        .find(t => !t.closest('.lnlib-checklist')).closest('.pst-scrollable-table-container');
    const wrap = box.parentElement;
    const line = box.previousElementSibling;
    const strip = wrap.querySelector(':scope > .lnlib-scroll-edge');
    const shown = el => !!el && el.getClientRects().length > 0 &&
        getComputedStyle(el).visibility !== 'hidden' && getComputedStyle(el).display !== 'none';
    const rect = el => { const r = el.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
    const arrow = strip ? strip.querySelector('span') : null;
    return {
        wide: box.scrollWidth > box.clientWidth + 2,
        faded: box.classList.contains('lnlib-more-right'),
        box: rect(box), viewport: {width: innerWidth, height: innerHeight},
        line: line && line.classList.contains('lnlib-scroll-cue') ? rect(line) : null,
        strip: shown(strip) ? rect(strip) : null,
        arrow: shown(arrow) ? {...rect(arrow), text: arrow.textContent} : null,
        hidden: !!strip && strip.getAttribute('aria-hidden') === 'true',
    };
}"""
SCROLL_TO_THE_TABLES_MIDDLE = """() => {
    const box = [...document.querySelectorAll('article table')]
        .find(t => !t.closest('.lnlib-checklist')).closest('.pst-scrollable-table-container');
    const r = box.getBoundingClientRect();
    window.scrollTo(0, window.scrollY + r.top + r.height / 2 - innerHeight / 2);
}"""
SCROLL_THE_TABLE_TO_ITS_END = """() => {
    const box = [...document.querySelectorAll('article table')]
        .find(t => !t.closest('.lnlib-checklist')).closest('.pst-scrollable-table-container');
    box.scrollLeft = box.scrollWidth;
    box.dispatchEvent(new Event('scroll'));
}"""


RAN_WHERE_FACTS = """() => {
    const table = document.querySelector('table.lnlib-ran-where');
    table.closest('details').open = true;
    const box = table.closest('.pst-scrollable-table-container') || table.parentElement;
    return {
        rows: [...table.querySelectorAll('tbody tr')].map(r => getComputedStyle(r).display),
        head: getComputedStyle(table.querySelector('thead')).display,
        wide: box.scrollWidth > box.clientWidth + 1,
        named: getComputedStyle(table.querySelector('tbody td:nth-child(2)'), '::before').content,
    };
}"""


def test_item_8s_setup_table_turns_into_cards_on_a_phone(browser, site_url):
    """What to use today's item 8 says setup by setup what the book ran (learner B52 asked for
    the table); at 390 px its last column hid behind a sideways scroll, so each row becomes a card
    with its cells named (_static/book-layout.css), as the checklist's rows do."""
    holder = OfflineContext(browser, PHONE["width"])
    try:
        page = holder.context.new_page()
        page.set_viewport_size(PHONE)
        page.goto(f"{site_url}/{WIDE_TABLE_PAGE}.html", wait_until="load")
        facts = page.evaluate(RAN_WHERE_FACTS)
    finally:
        holder.context.close()
    assert len(facts["rows"]) >= 4 and set(facts["rows"]) == {"block"}, facts
    assert facts["head"] == "none" and not facts["wide"], facts
    assert "Activations" in facts["named"], facts


def test_a_wide_table_says_it_scrolls_from_its_middle_on_a_phone(browser, site_url):
    """At 390 x 844 the families table of "What to use today" is wider than the screen and
    taller than it (learner B: in its middle "the ε and Placement columns are clipped at the right
    edge with no visible scroll cue"; the line above it had scrolled away). From the table's middle
    the page shows a shaded strip down the table's right edge with an arrow on screen; scrolled to
    its right end, neither shows; at 1280 px, where it fits, neither exists
    (_static/scroll-hint.js)."""
    holder = OfflineContext(browser, PHONE["width"])
    try:
        page = holder.context.new_page()
        page.set_viewport_size(PHONE)
        page.goto(f"{site_url}/{WIDE_TABLE_PAGE}.html", wait_until="load")
        page.evaluate(WAIT_FOR_MATHJAX)
        page.evaluate(SCROLL_TO_THE_TABLES_MIDDLE)
        page.wait_for_timeout(200)
        middle = page.evaluate(TABLE_EDGE_FACTS)
        page.evaluate(SCROLL_THE_TABLE_TO_ITS_END)
        page.wait_for_timeout(200)
        end = page.evaluate(TABLE_EDGE_FACTS)
    finally:
        holder.context.close()
    assert middle["wide"] and middle["faded"], middle
    assert middle["box"]["top"] < 0 and middle["box"]["bottom"] > PHONE["height"], (
        f"the table should be taller than the screen and the page in its middle: {middle}"
    )
    assert middle["line"] is not None and middle["line"]["bottom"] < 0, (
        f"the 'scroll sideways' line should be above the table, out of view here: {middle}"
    )
    strip, arrow = middle["strip"], middle["arrow"]
    assert strip is not None and arrow is not None, f"no strip or arrow from the middle: {middle}"
    assert middle["hidden"], "the strip is for the eye; the table itself is reachable"
    assert abs(strip["right"] - middle["box"]["right"]) <= 1, middle
    assert strip["top"] <= middle["box"]["top"] + 1, middle
    assert strip["bottom"] >= middle["box"]["bottom"] - 1, middle
    assert arrow["text"] == "→"
    assert 0 <= arrow["top"] and arrow["bottom"] <= PHONE["height"], (
        f"the arrow is off the screen in the table's middle: {arrow}"
    )
    assert middle["box"]["left"] < arrow["left"] and arrow["right"] <= middle["box"]["right"] + 1
    assert not end["faded"] and end["strip"] is None and end["arrow"] is None, end

    holder = OfflineContext(browser, 1280)
    try:
        page = holder.context.new_page()
        page.goto(f"{site_url}/{WIDE_TABLE_PAGE}.html", wait_until="load")
        page.evaluate(WAIT_FOR_MATHJAX)
        wide = page.evaluate(TABLE_EDGE_FACTS)
    finally:
        holder.context.close()
    assert not wide["wide"] and wide["line"] is None and wide["strip"] is None, wide


ZOOM_FACTS = """(selector) => {
    const target = document.querySelector(selector);
    const box = target.closest('.lnlib-zoom-box');
    return {zoomable: target.classList.contains('lnlib-zoomable'),
        pressed: target.getAttribute('aria-pressed'),
            width: target.getBoundingClientRect().width, box: box ? box.clientWidth : null,
            scrolls: box ? box.scrollWidth > box.clientWidth + 1 : false,
            page: document.documentElement.scrollWidth, viewport: window.innerWidth};
}"""


@pytest.mark.parametrize(
    "selector",
    ["article div.cell_output img:not(.lnlib-web-figure img)", "article .lnlib-web-figure"],
)
def test_a_tap_shows_a_figure_larger_on_a_phone(selector, browser, site_url):
    holder = OfflineContext(browser, 390)
    try:
        page = holder.context.new_page()
        page.goto(f"{site_url}/chapters/03_mean.html", wait_until="load")
        fitted = page.evaluate(ZOOM_FACTS, selector)
        assert fitted["zoomable"] and fitted["pressed"] == "false", (
            f"{selector}: not offered for zooming on a phone"
        )
        assert fitted["width"] <= fitted["box"] + 1 and not fitted["scrolls"]
        page.locator(selector).first.click()
        zoomed = page.evaluate(ZOOM_FACTS, selector)
        assert zoomed["pressed"] == "true" and zoomed["width"] > fitted["width"] + 1, (
            f"{selector}: a tap did not enlarge it"
        )
        assert zoomed["scrolls"], f"{selector}: the enlarged figure must scroll inside its own box"
        assert zoomed["page"] <= zoomed["viewport"] + 1, (
            f"{selector}: the enlarged figure widened the page"
        )
        page.locator(selector).first.press("Enter")  # the keyboard does what a tap does
        assert page.evaluate(ZOOM_FACTS, selector)["width"] == pytest.approx(fitted["width"], abs=1)
    finally:
        holder.context.close()


# Pages whose figures a phone reader reported unreadable: the landing page's Fig. 1 diagram,
# chapter 05's explorer and its companion, chapter 08's diagram, explorer and folded Fig. 16,
# chapter 09's and chapter 11's legends; and chapter 03, whose explorer opens the book's forward
# pass.
LEGIBILITY_PAGES = [
    "intro",
    "chapters/03_mean",
    "chapters/05_epsilon",
    "chapters/08_complete_examples",
    "chapters/09_gradients",
    "chapters/11_pre_post_norm",
]
FIGURE_IMAGES = """() => {
    for (const details of document.querySelectorAll('article details')) details.open = true;
        // folded figures too
    const images = [...new Set(document.querySelectorAll(
        'article div.cell_output img, article figure img, article .lnlib-web-figure img'))]
        .filter(i => !i.hidden && i.getBoundingClientRect().width > 0);
    images.forEach((img, k) => { img.dataset.legibility = k; });
    return images.length;
}"""
FIGURE_FACTS = """(k) => {
    const img = document.querySelector(`[data-legibility="${k}"]`);
    const target = img.closest('.lnlib-zoomable');
    const box = img.closest('.lnlib-zoom-box');
    const cue = box && box.nextElementSibling &&
        box.nextElementSibling.classList.contains('lnlib-zoom-cue')
        ? box.nextElementSibling : null;
    const cueBox = cue ? cue.getBoundingClientRect() : null;
    return {what: img.closest('.lnlib-web-explorer')
                ? `the figure of ${img.closest('.lnlib-web-explorer').dataset.explorer}`
                : (img.closest('figure')?.id || img.getAttribute('src').slice(0, 60)),
            natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
            zoomable: !!target, pressed: target ? target.getAttribute('aria-pressed') : null,
            cue: cue && cueBox.height > 0 &&
                getComputedStyle(cue).visibility === 'visible' ? cue.textContent : '',
            cueFont: cue ? parseFloat(getComputedStyle(cue).fontSize) : 0,
            page: document.documentElement.scrollWidth, viewport: window.innerWidth};
}"""


@pytest.mark.parametrize("page", LEGIBILITY_PAGES)
def test_every_figure_reads_on_a_phone_as_shown_or_tapped(page, browser, site_url):
    """The book's standard: a figure's smallest text reads at >= MIN_TEXT_PX as the reader reads it.

    The text's size on the page is its size in the PNG (SMALLEST_FONT_PT, the smallest any figure
    may use, at DPI) times the shown width over the natural width. A figure too small for that at
    the phone's width must say so under it ("Tap the figure to enlarge it") and a tap must show it
    large enough, in its own sideways-scrolling box, without widening the page.
    """
    from lnlib.book.figures.style import MIN_TEXT_PX, SMALLEST_FONT_PT, text_px

    holder = OfflineContext(browser, 390)
    unreadable = []
    try:
        tab = holder.context.new_page()
        tab.goto(f"{site_url}/{page}.html", wait_until="load")
        count = tab.evaluate(FIGURE_IMAGES)
        assert count > 0, f"{page}: no figure found"
        for k in range(count):
            fitted = tab.evaluate(FIGURE_FACTS, k)
            assert fitted["natural"] > 0, f"{page}: {fitted['what']} did not load"
            if text_px(SMALLEST_FONT_PT, fitted["shown"], fitted["natural"]) >= MIN_TEXT_PX:
                continue  # reads as it is shown
            if not (fitted["zoomable"] and fitted["pressed"] == "false"):
                unreadable.append(f"{fitted['what']}: too small and not offered for enlarging")
                continue
            if "tap" not in fitted["cue"].lower() or fitted["cueFont"] < MIN_TEXT_PX:
                unreadable.append(
                    f"{fitted['what']}: nothing readable under it says a tap enlarges it"
                )
            tab.locator(f'[data-legibility="{k}"]').click()
            zoomed = tab.evaluate(FIGURE_FACTS, k)
            size = text_px(SMALLEST_FONT_PT, zoomed["shown"], zoomed["natural"])
            if zoomed["pressed"] != "true" or size < MIN_TEXT_PX:
                unreadable.append(
                    f"{fitted['what']}: tapped, its {SMALLEST_FONT_PT:g} pt text shows at "
                    f"{size:.1f} px"
                )
            if zoomed["page"] > zoomed["viewport"] + 1:
                unreadable.append(f"{fitted['what']}: enlarged, it widens the page")
            tab.locator(f'[data-legibility="{k}"]').click()  # fit it back
    finally:
        holder.context.close()
    assert unreadable == [], f"{page} at 390 px: {unreadable}"


GENERIC_TOGGLE = re.compile(r"(Show|Hide) code cell (content|source|outputs?)")
TOGGLES = """() => [...document.querySelectorAll('article details.hide > summary')].map(s => ({
    text: s.innerText.trim(), label: s.getAttribute('aria-label')}))"""


def folded_cells_say_what_they_hide(page: str, browser_page) -> None:
    """Every folded code cell's toggle names what it hides (_ext/code_toggles.py), not myst-nb's
    generic "Show code cell source"; the generic label is the documented fallback only for a cell
    nothing describes, which no chapter has. The toggle's accessible name is its visible text
    (accessibility.py, item 2). Checked in test_page_renders_fully_offline's page load (one load per
    page, to keep make test short)."""
    toggles = browser_page.evaluate(TOGGLES)
    generic = [t["text"] for t in toggles if not t["text"] or GENERIC_TOGGLE.fullmatch(t["text"])]
    assert generic == [], f"{page}: toggles that do not say what they hide: {generic}"
    mismatched = [t for t in toggles if t["label"] and t["text"] not in t["label"]]
    assert mismatched == [], f"{page}: toggles whose accessible name hides their text: {mismatched}"


FOLDED = re.compile(r'<details class="[^"]*\bhide\b')


def test_the_chapters_fold_code_cells():
    """The check above is not vacuous: the built chapters hold folded code cells (myst-nb's
    ``details.hide``)."""
    folded = sum(
        len(FOLDED.findall(path.read_text(encoding="utf-8")))
        for path in (SITE / "chapters").glob("*.html")
    )
    assert folded > 20, f"the chapters fold code cells; the build has {folded}"


def test_wide_screens_leave_figures_alone(browser, site_url):
    holder = OfflineContext(browser, 1280)
    try:
        page = holder.context.new_page()
        page.goto(f"{site_url}/chapters/03_mean.html", wait_until="load")
        assert page.locator(".lnlib-zoomable").count() == 0
    finally:
        holder.context.close()


@pytest.mark.parametrize("chapter", ["09_gradients", "16_check_your_own"])
def test_the_sidebar_shows_the_books_title_whole(chapter, browser, site_url):
    """The theme scrolls the left sidebar to the open chapter; the book's title stays on top of
    the list, whole, and nothing of the list shows above it (learner B44: only "out" showed)."""
    holder = OfflineContext(browser, 1280)
    try:
        page = holder.context.new_page()
        page.set_viewport_size({"width": 1280, "height": 700})
        page.goto(f"{site_url}/chapters/{chapter}.html", wait_until="load")
        page.wait_for_timeout(500)
        facts = page.evaluate(
            """() => {
            const bar = document.querySelector('.bd-sidebar-primary');
            const title = bar.querySelector('.navbar-brand .logo__title');
            const box = title.getBoundingClientRect(), port = bar.getBoundingClientRect();
            const hit = document.elementFromPoint(box.left + box.width / 2, box.top + 2);
            return {scrolled: bar.scrollTop, top: box.top, bottom: box.bottom,
                    portTop: port.top, onTop: title.contains(hit) || hit === title,
                    above: [...bar.querySelectorAll('nav a')].filter(a => {
                        const r = a.getBoundingClientRect();
                        const y = Math.max(r.top + 1, port.top + 1);
                        const seen = document.elementFromPoint(r.left + 4, y);
                        return y < box.top && r.bottom > port.top && a.contains(seen);
                    }).map(a => a.textContent.trim())};
        }"""
        )
        assert facts["scrolled"] > 0, f"{chapter}: the sidebar did not scroll: this tests nothing"
        assert facts["top"] >= facts["portTop"] and facts["onTop"], (
            f"{chapter}: the book's title is cut or covered at the sidebar's top: {facts}"
        )
        assert not facts["above"], f"{chapter}: chapter links show above the title: {facts}"
    finally:
        holder.context.close()


class LinkCollector(HTMLParser):
    """Collects link targets and element ids from one HTML page."""

    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])


@functools.lru_cache(maxsize=None)
def parse(path: Path) -> LinkCollector:
    """Links and ids of one page, parsed once (the API page links to itself hundreds of times)."""
    collector = LinkCollector()
    collector.feed(path.read_text(encoding="utf-8"))
    return collector


@pytest.mark.parametrize("page", PAGES)
def test_internal_links_and_citations_resolve(page, site_url):
    source = SITE / f"{page}.html"
    base = f"{site_url}/{page}.html"
    broken = []
    for href in parse(source).links:
        absolute = urljoin(base, href)
        if urlparse(absolute).netloc != urlparse(site_url).netloc:
            continue  # an outside link: not ours to check offline
        target, fragment = urldefrag(absolute)
        path = SITE / urlparse(target).path.lstrip("/")
        if path.is_dir():
            path = path / "index.html"
        if not path.exists():
            broken.append(f"{href} (no file {path.relative_to(SITE)})")
        elif fragment and path.suffix == ".html" and fragment not in parse(path).ids:
            broken.append(f"{href} (no element #{fragment})")
    assert broken == [], f"{page}: broken internal links: {broken}"


def test_citations_reach_the_bibliography(site_url):
    intro = parse(SITE / "intro.html")
    citations = [href for href in intro.links if href.startswith("bibliography.html#")]
    assert citations, (
        "the landing page cites the papers it builds on; their links must lead to the bibliography"
    )


def test_the_website_offers_lnlib_as_a_wheel_of_this_version():
    """A reader installs lnlib from the website, without the repository (learner B): the intro and
    the API page link to downloads/<the wheel>, built from this tree (_ext/downloads.py)."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    wheel = SITE / "downloads" / f"lnlib-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as package:
        names = set(package.namelist())
        metadata = package.read(f"lnlib-{version}.dist-info/METADATA").decode()
    assert {"lnlib/__init__.py", "lnlib/harness.py"} <= names and f"Version: {version}" in metadata
    for page in ("intro", "api"):
        assert f'href="downloads/{wheel.name}"' in (SITE / f"{page}.html").read_text(), page


def test_the_website_offers_the_books_source_without_the_held_back_key():
    """downloads/layernorm-book-source.zip: what `make book` and `make lab` need (learner B: the
    notebooks, make lab and the course could not be reached from the website), without
    course_keys/, the key an instructor holds back."""
    with zipfile.ZipFile(SITE / "downloads" / "layernorm-book-source.zip") as source:
        names = set(source.namelist())
    needed = {"Makefile", "pyproject.toml", "_toc.yml", "chapters/09_gradients.ipynb"}
    assert {f"layernorm-book/{name}" for name in needed} <= names
    assert not any(name.startswith("layernorm-book/course_keys/") for name in names)
    assert 'href="downloads/layernorm-book-source.zip"' in (SITE / "intro.html").read_text()
