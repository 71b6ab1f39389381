"""The practitioner's view (_static/path-view.js): a chapter shows only its stops on the path.

Learner B (2026-11-29): the practitioner's path "exists only as a list of links into 65-80-minute
chapters"; a button under the practitioner's line hides everything but the practitioner's line, its
"In practice" boxes (and chapter 12's bottom line), the headings that lead to a stop and each
stop's section but its proofs (cells tagged path-skip, subsections holding a cell tagged
path-skip-section); the chapter's goal and reading time hide too. Checked here in
Chromium on the built website: what shows and what hides, the page contents in the sidebar, the
choice carried to the next chapter, a link into a hidden section turning the view off, and chapters
without a stop offering no button.
"""

from __future__ import annotations

import pytest

from lnlib.book.tools.notebooks import PATH_STOPS, PRACTITIONER_CHAPTERS

from .conftest import ROOT, OfflineContext

# For each element of interest: is it shown (laid out, not display: none)?
FACTS = """() => {
    const HEADING = ':scope > h1, :scope > h2, :scope > h3, :scope > h4';
    const shown = el => !!el && el.getClientRects().length > 0;
    const byId = id => document.getElementById(id);
    const button = document.querySelector('p.lnlib-path-view button');
    const tocHidden = [...document.querySelectorAll('.page-toc li')]
        .filter(li => !shown(li)).map(li => li.querySelector('a').hash);
    return {
        button: button ? {pressed: button.getAttribute('aria-pressed'), shown: shown(button),
                          name: button.textContent, described: !!document.getElementById(
                              button.getAttribute('aria-describedby'))} : null,
        shown: Object.fromEntries([...document.querySelectorAll('article section[id]')]
            .map(s => [s.id, shown(s.querySelector(HEADING))])),
        inPractice: [...document.querySelectorAll('article .admonition-title')]
            .filter(t => t.textContent.trim() === 'In practice').map(t => shown(t)),
        goal: shown([...document.querySelectorAll('article p')]
            .find(p => p.textContent.startsWith('Goal.'))),
        statusSeen: (s => s && s.getBoundingClientRect().width > 1)(
            document.getElementById('lnlib-path-view-status')),
        tocHidden,
    };
}"""


def _open(holder: OfflineContext, url: str):
    page = holder.context.new_page()
    page.goto(url, wait_until="load")
    return page


def test_the_practitioners_view_shows_the_stops_and_hides_the_rest(browser, site_url):
    holder = OfflineContext(browser, 1280)
    try:
        page = _open(holder, f"{site_url}/chapters/09_gradients.html")
        before = page.evaluate(FACTS)
        assert before["button"] == {
            "pressed": "false",
            "shown": True,
            "name": "Practitioner’s view",
            "described": True,
        }
        assert all(before["shown"].values())  # off: the whole chapter, as before
        # off, the button stands alone under the line that says what the view keeps; its sentence
        # is read out, not shown (learner B29: "four preambles before content")
        assert not before["statusSeen"]
        page.click("p.lnlib-path-view button")
        after = page.evaluate(FACTS)
        assert after["button"]["pressed"] == "true"
        assert after["statusSeen"]
        shown = after["shown"]
        # the two stops of chapter 09, whole, and the section leading to the first
        assert shown["simplified-the-closed-form"] and shown["rmsnorm-s-backward-pass"]
        assert shown["what-an-rmsnorm-kernel-saves"]  # inside a stop: kept
        # but not a stop's proofs: a subsection holding a path-skip-section cell, a path-skip cell
        assert not shown["appendix-rmsnorm-s-jacobian-one-direction-removed-not-two"]  # appendix
        assert not shown["appendix-rmsnorm-s-closed-form-checked"]
        assert not shown["appendix-the-closed-form-checked"]  # the checks of its box
        # a link in a stop to a part the view hides says it opens the full chapter (learner B)
        assert page.evaluate(
            "() => [...document.querySelectorAll('article a.lnlib-leaves-view')]"
            ".some(a => a.hash === '#the-jacobian' && getComputedStyle(a, '::after')"
            ".content.includes('full chapter'))"
        )
        assert page.evaluate(
            "() => [...document.querySelectorAll('article .tag_path-skip')]"
            ".every(c => c.getClientRects().length === 0)"
        )
        assert shown["the-idea"] and shown["gradients-through-layernorm"]
        # the footer's "next" follows the path in the view (learner B, 2026-11-30), the book off it
        footer = "() => document.querySelector('.prev-next-area a.right-next').getAttribute('href')"
        assert page.evaluate(footer) == "11_pre_post_norm.html#what-this-means-in-practice"
        # its subtitle reads as a sentence: the theme's capitalize would give "Next On The ..."
        subtitle = page.locator(".prev-next-area a.right-next .prev-next-subtitle")
        assert subtitle.inner_text() == "Next on the practitioner\u2019s path"
        # and "previous" goes to the stop before the chapter's first (learner B, 2026-11-30)
        previous = (
            "() => document.querySelector('.prev-next-area a.left-prev').getAttribute('href')"
        )
        assert page.evaluate(previous) == "what_to_use_today.html"
        back = page.locator(".prev-next-area a.left-prev .prev-next-subtitle")
        assert back.inner_text() == "Previous on the practitioner\u2019s path"
        page.click("p.lnlib-path-view button")
        assert page.evaluate(footer) == "10_family.html"
        assert page.evaluate(previous) == "08_complete_examples.html"
        page.click("p.lnlib-path-view button")
        # off the path: hidden, in the page and in its contents
        for off in ("the-computation-graph", "the-jacobian", "explore", "exercises", "summary"):
            assert not shown[off], off
            assert f"#{off}" in after["tocHidden"], off
        assert after["inPractice"] and all(after["inPractice"])
        assert not after["goal"]  # nor the goal and reading time of the whole chapter
        # the choice is remembered: the next chapter on the path opens in the view
        page.goto(f"{site_url}/chapters/12_after_2020.html", wait_until="load")
        twelve = page.evaluate(FACTS)
        assert twelve["button"]["pressed"] == "true"
        # and says so beside the button (learner B, 2026-11-30: pressing it again turned it off)
        assert "stays on in the next chapters" in page.text_content("#lnlib-path-view-status")
        # and that it was turned on on an earlier page (learner B, 2026-11-30: the remembered view
        # made a chapter's exercises look missing on a later visit)
        assert page.text_content("#lnlib-path-view-status").startswith("On since an earlier page")
        assert twelve["shown"]["qk-norm"] and not twelve["shown"]["dyt-a-tanh-instead-of-a-norm"]
        # a heading with nothing of its own left under it hides: chapter 12's "The idea" leads
        # only to its stops' headings (learner B read it as empty)
        assert not twelve["shown"]["the-idea"]
        # but its stops stay in the page's contents (learner B, 2026-11-30: chapter 12's was empty)
        assert "#qk-norm" not in twelve["tocHidden"], twelve["tocHidden"]
        # an "In practice" box in a section that leads to no stop stays, alone (chapter 11's, in
        # "The idea": learner B, 2026-11-30), and that section leaves the contents
        page.goto(f"{site_url}/chapters/11_pre_post_norm.html", wait_until="load")
        eleven = page.evaluate(FACTS)
        assert eleven["button"]["pressed"] == "true"
        assert eleven["inPractice"] and all(eleven["inPractice"]), eleven["inPractice"]
        assert not eleven["shown"]["the-idea"] and "#the-idea" in eleven["tocHidden"]
        assert eleven["shown"]["what-this-means-in-practice"]
        # code a stop tells its reader to run stays open in the view (learner B, 2026-11-30:
        # chapter 16's last stop discussed "114 of 114 checks" with its check_rms_norm call folded)
        page.goto(f"{site_url}/chapters/16_check_your_own.html", wait_until="load")
        run = (
            "() => [...document.querySelectorAll('article div.cell.tag_path-show')]"
            ".map(c => c.getClientRects().length > 0 && c.textContent.includes('check_rms_norm'))"
        )
        assert page.evaluate(run) == [True]
        # a stop's code and printouts fold, each leaving a marker; figures stay (learner B,
        # 2026-11-30: "the code and printouts are what turn 'about 5 minutes' into 15");
        # chapter 15's stop prints (the other stops' proofs are tagged path-skip and hide: learners
        # B36 and B37, 2026-11-30, read them as noise)
        page.goto(f"{site_url}/chapters/15_gpu.html", wait_until="load")
        printouts = (
            "() => [...document.querySelectorAll('article section div.cell')]"
            ".filter(c => !c.querySelector('.cell_output img, .lnlib-web-explorer')"
            " && c.previousElementSibling?.matches('p.lnlib-evidence-marker'))"
            ".map(c => [c.getClientRects().length > 0,"
            " c.previousElementSibling.getClientRects().length > 0])"
        )
        folded = page.evaluate(printouts)
        assert folded and all(not cell and marker for cell, marker in folded), folded
        page.click("button.lnlib-path-evidence")
        assert all(cell and not marker for cell, marker in page.evaluate(printouts))
        page.click("button.lnlib-path-evidence")
        assert all(not cell and marker for cell, marker in page.evaluate(printouts))
        # a link into a hidden section turns the view off and lands on it
        page.goto(
            f"{site_url}/chapters/12_after_2020.html#trained-not-only-initialized",
            wait_until="load",
        )
        landed = page.evaluate(FACTS)
        assert landed["button"]["pressed"] == "false"
        assert landed["shown"]["trained-not-only-initialized"]
        assert "whole chapter shows" in page.text_content("#lnlib-path-view-status")
        assert landed["statusSeen"]  # shown, not only read out (truth audit 14)
        assert not page.evaluate("() => document.querySelectorAll('a.lnlib-leaves-view').length")
        assert page.evaluate("() => localStorage.getItem('lnlib-path-view')") is None
        # where the view hides the exercises, a line says so and shows the whole chapter
        rest = page.locator("p.lnlib-path-rest")
        assert not rest.is_visible()  # off: no line
        page.click("p.lnlib-path-view button")
        assert rest.is_visible() and "exercises too" in rest.inner_text()
        assert not page.evaluate(FACTS)["shown"]["exercises"]
        rest.locator("button").click()
        whole = page.evaluate(FACTS)
        assert whole["button"]["pressed"] == "false" and whole["shown"]["exercises"]
        assert not rest.is_visible()
        # a chapter the path skips, reached with the view on, says so, names the next stop and
        # turns the view off (learner B, 2026-11-30: "no sign that the view is on")
        page.evaluate("() => localStorage.setItem('lnlib-path-view', '1')")
        page.goto(f"{site_url}/chapters/10_family.html", wait_until="load")
        skipped = page.locator("p.lnlib-path-skipped")
        assert skipped.is_visible() and "view is on" in skipped.inner_text()
        assert page.locator(
            "article p a[href='11_pre_post_norm.html#what-this-means-in-practice']"
        ).count()
        # the view hides the chapter below that line (learner B18: "about 20,000 px on a phone")
        idea = page.locator("section#the-idea")
        assert not idea.is_visible() and not page.locator("section#exercises").is_visible()
        assert not page.locator(".bd-sidebar-secondary").is_visible()  # its contents, cut short
        # a link to a part it hides shows the chapter (the truth audit of 2026-11-30)
        page.evaluate("() => { location.hash = '#rms-norm'; }")
        page.wait_for_function("() => !document.querySelector('p.lnlib-path-skipped')")
        assert page.locator("section#rms-norm").is_visible()
        page.goto(f"{site_url}/chapters/10_family.html", wait_until="load")
        assert not idea.is_visible()
        skipped.locator("button", has_text="Show the whole chapter").click()
        assert idea.is_visible() and not skipped.count()
        assert page.evaluate("() => localStorage.getItem('lnlib-path-view')") == "1"  # still on
        page.reload(wait_until="load")
        skipped.locator("button", has_text="Turn the view off").click()
        assert idea.is_visible() and not skipped.count()
        assert page.evaluate("() => localStorage.getItem('lnlib-path-view')") is None
    finally:
        holder.context.close()


@pytest.mark.parametrize("chapter", ["03_mean", "17_fact_check"])
def test_a_chapter_without_stops_says_the_view_is_on(chapter, browser, site_url):
    """Learner B44: "chapters 01-08 show in full with no banner at all, so the 'view stays on in
    the next chapters' promise is uneven". With the view on, a chapter with no practitioner's line
    says so under its title, links the path's stops and hides the rest, as chapters 10 and 14 do;
    off, nothing changes."""
    holder = OfflineContext(browser, 1280)
    try:
        page = _open(holder, f"{site_url}/chapters/{chapter}.html")
        skipped = page.locator("p.lnlib-path-skipped")
        idea = page.locator("section#the-idea, section#the-verdicts-at-a-glance").first
        assert not skipped.count() and idea.is_visible()  # off: the chapter as it is
        page.evaluate("() => localStorage.setItem('lnlib-path-view', '1')")
        page.reload(wait_until="load")
        assert skipped.is_visible() and "view is on" in skipped.inner_text()
        assert skipped.locator("a[href='what_to_use_today.html']").count() == 1
        above = "() => document.querySelector('p.lnlib-path-skipped').previousElementSibling"
        assert page.evaluate(f"{above}.tagName") == "H1"
        assert not idea.is_visible()
        skipped.locator("button", has_text="Show the whole chapter").click()
        assert idea.is_visible() and not skipped.count()
        # the introduction and What to use today are not chapters the path skips
        for other in ("intro.html", "chapters/what_to_use_today.html"):
            page.goto(f"{site_url}/{other}", wait_until="load")
            assert not page.locator("p.lnlib-path-skipped").count(), other
    finally:
        holder.context.close()


def _follow_into_the_view(holder: OfflineContext, start: str, link_text: str, landing: str):
    """Open `start` with the view off, click its link `link_text` and require the chapter it lands
    on (`landing`, the URL's end) to open in the view; return that page."""
    page = _open(holder, start)
    assert page.evaluate("() => localStorage.getItem('lnlib-path-view')") is None
    page.locator("article a", has_text=link_text).first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith(landing), page.url
    assert page.evaluate(FACTS)["button"]["pressed"] == "true"
    return page


def test_a_stop_link_on_what_to_use_today_opens_the_view(browser, site_url):
    """Learner B (2026-11-30): "turn the practitioner's view on by default for readers who enter at
    What to use today". The checklist's "..., stop N" links and the path box's open their chapter in
    the view; the status says the stops' code is folded only where some is."""
    holder = OfflineContext(browser, 1280)
    try:
        page = _follow_into_the_view(
            holder,
            f"{site_url}/chapters/what_to_use_today.html",
            "pre-norm, stop 4",
            "11_pre_post_norm.html#what-this-means-in-practice",
        )
        # chapter 09's stops keep only a cell the text reads (path-show): nothing is said folded,
        # and no button offers to show what is not folded (the truth audit of 2026-11-30)
        page.goto(f"{site_url}/chapters/09_gradients.html", wait_until="load")
        status = page.text_content("#lnlib-path-view-status")
        assert "folded" not in status, status
        assert not page.locator("button.lnlib-path-evidence").is_visible()
        page.goto(f"{site_url}/chapters/13_numerics.html", wait_until="load")
        assert "code and printouts are folded" in page.text_content("#lnlib-path-view-status")
    finally:
        holder.context.close()


def test_the_introductions_stop_2_link_opens_the_view(browser, site_url):
    """Learner B (2026-11-30): "link straight to stop 2 with the view on" from the front page."""
    holder = OfflineContext(browser, 1280)
    try:
        _follow_into_the_view(
            holder,
            f"{site_url}/intro.html",
            "closed form, stop 2",
            "09_gradients.html#simplified-the-closed-form",
        )
    finally:
        holder.context.close()


@pytest.mark.parametrize("chapter", PRACTITIONER_CHAPTERS)
def test_only_chapters_with_a_stop_offer_the_view(chapter, browser, site_url):
    """Chapters 10 and 14, which the path skips, have no stop and no button; at 390 px the button
    of the others shows."""
    (notebook,) = (ROOT / "chapters").glob(f"{chapter}_*.ipynb")
    has_stop = any(file == notebook.name for file, _, _ in PATH_STOPS)
    holder = OfflineContext(browser, 390)
    try:
        facts = _open(holder, f"{site_url}/chapters/{notebook.stem}.html").evaluate(FACTS)
    finally:
        holder.context.close()
    if has_stop:
        assert facts["button"] and facts["button"]["shown"], chapter
    else:
        assert facts["button"] is None, chapter
