"""The practitioner's path on one page (_static/path-page.js).

Learner B (2026-11-30): "put the 12 stops on one continuous, shareable page". What to use today's
box lists the stops; its button reads the chapters' pages and shows each stop below the box, as the
Practitioner's view shows it. Checked here in Chromium, over HTTP as the website is served.
"""

from __future__ import annotations

from .conftest import OfflineContext

FACTS = """() => {
    const into = document.querySelector('div.lnlib-path-stops');
    const stops = [...into.querySelectorAll(':scope > div.lnlib-path-stop')];
    return {
        count: stops.length,
        from: stops.map(s => s.querySelector('p.lnlib-path-from').textContent),
        proofs: into.querySelectorAll('.tag_path-skip, .tag_path-skip-section').length,
        printouts: [...into.querySelectorAll('div.cell:not(.tag_path-show)')]
            .filter(c => !c.querySelector('.cell_output img')).length,
        toRun: [...into.querySelectorAll('div.cell.tag_path-show')]
            .filter(c => c.textContent.includes('check_rms_norm')).length,
        figures: into.querySelectorAll('div.cell .cell_output img').length,
        math: into.querySelectorAll('mjx-container').length,
        rawMath: [...into.querySelectorAll('span.math')]
            .filter(s => !s.querySelector('mjx-container')).length,
        ids: into.querySelectorAll('[id]:not(div.lnlib-path-stop)').length,
        contents: [...document.querySelectorAll('#pst-page-toc-nav li.lnlib-path-contents li a')]
            .map(a => [a.textContent,
                       into.contains(document.querySelector(a.getAttribute('href')))]),
        stubs: into.querySelectorAll('p.lnlib-path-printout a[href*=".html"]').length,
        stopLines: [...into.querySelectorAll('p')]
            .filter(p => /^The practitioner.s path, stop \\d+/.test(p.textContent.trim())).length,
        localLinks: into.querySelectorAll("a[href^='#']").length,
        inPractice: [...into.querySelectorAll('.admonition-title')]
            .filter(t => t.textContent.trim() === 'In practice').length,
    };
}"""


def test_every_stop_reads_on_the_paths_page(browser, site_url):
    holder = OfflineContext(browser, 1280)
    try:
        page = holder.context.new_page()
        page.goto(f"{site_url}/chapters/what_to_use_today.html", wait_until="load")
        button = page.locator("p.lnlib-path-page button")
        assert button.text_content() == "Read every stop on this page"
        button.click()
        done = "document.querySelector('p.lnlib-path-page button')"
        page.wait_for_function(
            f"() => {done}.disabled && {done}.textContent.startsWith('The stops')", timeout=30000
        )
        facts = page.evaluate(FACTS)
        assert facts["count"] == 11, facts  # stops 2 to 12; stop 1 is this page
        assert facts["from"][0].startswith("Stop 2, from Gradients through LayerNorm")
        assert facts["from"][-1].startswith("Stop 12, from Check your own LayerNorm")
        assert facts["proofs"] == 0 and facts["printouts"] == 0, facts
        # where a printout was, a line links to it in its chapter (learner B, 2026-11-30)
        assert facts["stubs"] >= 1, facts
        # each stop says "Stop N, from ..." once, not again in its chapter's own stop line (B27)
        assert facts["stopLines"] == 0, facts
        assert facts["toRun"] == 1, facts  # chapter 16's check_rms_norm call, kept (learner B)
        assert facts["figures"] >= 1 and facts["inPractice"] >= 1, facts
        assert facts["math"] > 20 and facts["rawMath"] == 0, facts
        assert facts["ids"] == 0 and facts["localLinks"] == 0, facts
        # the page's Contents lists each gathered stop, linking to it (learner B27, 2026-11-30)
        assert [shown for _, shown in facts["contents"]] == [True] * 11, facts["contents"]
        assert facts["contents"][6][0] == "8. Numerics: half precision as the frameworks do it"
        # and the path, gathered, prints or saves as a PDF (learner B19, 2026-11-30)
        page.evaluate("() => { window.print = () => { window.printed = true; }; }")
        page.locator("p.lnlib-path-page button", has_text="Print the path").click()
        assert page.evaluate("() => window.printed") is True
        # and prints the path alone: the page's other sections stay on screen, not on paper
        section = page.locator("section#what-ten-open-models-use")
        assert section.is_visible()
        page.emulate_media(media="print")
        assert not section.is_visible() and page.locator("div.lnlib-path-stops").is_visible()
        page.emulate_media(media="screen")
    finally:
        holder.context.close()
