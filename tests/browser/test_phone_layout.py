"""The website on a phone, 390 x 844 CSS px: an explorer's controls and what they change on one
screen, identifiers in tables kept whole, and nothing of the theme's floating over an explorer or an
exercise.

An explorer whose slider and readout are never on the screen together makes the reader scroll after
every move. For each explorer the test shows, in the built page, every readout and note its states
can show, and requires the span from the top of its controls to the bottom of its note to fit the
viewport below any header that stays on screen (``_ext/web_explorers_static/lnlib-explorers.css``
sizes a tall figure for that).
"""

from __future__ import annotations

import pytest

from .conftest import OfflineContext
from .test_website import PAGES, has_explorer

PHONE = {"width": 390, "height": 844}
EXPLORER_PAGES = [page for page in PAGES if has_explorer(page)]

# For each explorer: the tallest span, controls to note, over every readout and note its states
# show.
SPANS = """() => {
    const header = document.querySelector('.bd-header');
    const stays = header && ['sticky', 'fixed'].includes(getComputedStyle(header).position);
    const below = stays ? header.getBoundingClientRect().height : 0;
    return [...document.querySelectorAll('.lnlib-web-explorer')].map(root => {
        const data = JSON.parse(root.querySelector('script.lnlib-web-data').textContent);
        const readout = root.querySelector('.lnlib-readout'),
            note = root.querySelector('.lnlib-note');
        const kept = [readout.innerHTML, note.innerHTML];
        const pairs = new Set(data.states.filter(s => s).map(s => s[2] + ',' + s[3]));
        let tallest = 0, texts = 0;
        for (const pair of pairs) {
            const [r, n] = pair.split(',').map(Number);
            readout.innerHTML = data.texts[r];
            note.innerHTML = data.texts[n];
            const top = root.querySelector('.lnlib-web-controls').getBoundingClientRect().top;
            tallest = Math.max(tallest, note.getBoundingClientRect().bottom - top);
            texts += 1;
        }
        [readout.innerHTML, note.innerHTML] = kept;
        return {explorer: root.dataset.explorer, tallest, texts, room: window.innerHeight - below,
                width: root.getBoundingClientRect().width};
    });
}"""


def phone_page(browser, site_url: str, page: str):
    holder = OfflineContext(browser, PHONE["width"])
    browser_page = holder.context.new_page()
    browser_page.set_viewport_size(PHONE)
    browser_page.goto(f"{site_url}/{page}.html", wait_until="load")
    return holder, browser_page


@pytest.mark.parametrize("page", EXPLORER_PAGES)
def test_an_explorers_controls_and_readout_fit_one_phone_screen(page, browser, site_url):
    holder, browser_page = phone_page(browser, site_url, page)
    try:
        spans = browser_page.evaluate(SPANS)
    finally:
        holder.context.close()
    assert spans, f"{page}: no explorer on the built page"
    for span in spans:
        assert span["texts"] >= 1 and span["width"] <= PHONE["width"], span
        assert span["tallest"] <= span["room"], (
            f"{page}: {span['explorer']} needs {span['tallest']:.0f} px from its controls to its "
            f"note at its tallest readout; a {PHONE['width']} x {PHONE['height']} screen shows "
            f"{span['room']:.0f}"
        )


# Bring each explorer and exercise to the lower part of the screen by an upward scroll (the theme
# shows its "Back to top" pill, at 90 % of the height, while the reader scrolls up) and report what
# it covers.
COVERED = """async () => {
    const pause = ms => new Promise(r => setTimeout(r, ms));
    const button = document.querySelector('#pst-back-to-top');
    const targets = [...document.querySelectorAll('.lnlib-web-explorer, form.lnlib-exercise')];
    const covered = [];
    for (const target of targets) {
        const top = window.scrollY + target.getBoundingClientRect().top;
        const at = Math.max(top - 0.8 * window.innerHeight, 200);
        window.scrollTo(0, at + 300);
        await pause(100);
        window.scrollTo(0, at);
        await pause(200);
        const b = button ? button.getBoundingClientRect() : null;
        const t = target.getBoundingClientRect();
        const shown = button && button.getClientRects().length > 0
            && getComputedStyle(button).visibility !== 'hidden';
        if (shown && b.left < t.right && t.left < b.right && b.top < t.bottom && t.top < b.bottom)
            covered.push(target.className + ' ' + (target.dataset.explorer ||
                target.dataset.exercise));
    }
    return {targets: targets.length, covered};
}"""


@pytest.mark.parametrize("page", EXPLORER_PAGES)
def test_back_to_top_never_covers_an_explorer_or_exercise_on_a_phone(page, browser, site_url):
    holder, browser_page = phone_page(browser, site_url, page)
    try:
        found = browser_page.evaluate(COVERED)
    finally:
        holder.context.close()
    assert found["targets"] >= 1, f"{page}: no explorer or exercise found"
    assert found["covered"] == [], f"{page}: 'Back to top' covers {found['covered']}"


# Every piece of inline code in a table, and on how many lines it is drawn.
TABLE_CODE = """() => [...document.querySelectorAll('article table code.literal')]
    .filter(c => c.getClientRects().length > 0)
    .map(c => ({text: c.textContent, lines: new Set([...c.getClientRects()].map(r =>
        Math.round(r.top))).size}))"""


def test_inline_code_in_tables_is_not_broken_mid_word_on_a_phone(browser, site_url):
    found = {}
    for page in PAGES:
        holder, browser_page = phone_page(browser, site_url, page)
        try:
            found[page] = browser_page.evaluate(TABLE_CODE)
        finally:
            holder.context.close()
    assert sum(len(codes) for codes in found.values()) >= 10, "too few tables with code to judge"
    broken = {page: [c["text"] for c in codes if c["lines"] > 1] for page, codes in found.items()}
    assert {page: texts for page, texts in broken.items() if texts} == {}
