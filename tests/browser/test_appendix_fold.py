"""A chapter's appendices fold on screen (_static/appendix-fold.js).

Learner B (2026-11-30) wanted each chapter's appendices on a separate "lab notes" page, so that the
chapter reads to its Summary; they fold instead, one click away. Checked here in Chromium on the
built website: folded on arrival, a button opens and folds one, a link into one opens it (from the
page and from another page), and print shows every appendix whole.
"""

from __future__ import annotations

from .conftest import OfflineContext

# For each appendix of the page: its id, whether its body shows, and its button's state.
FACTS = """() => [...document.querySelectorAll('article section')]
    .filter(s => { const h = s.querySelector(':scope > h2');
                   return h && h.textContent.trim().startsWith('Appendix'); })
    .map(s => ({
        id: s.id,
        body: [...s.children].filter(c => !c.matches('h2, p.lnlib-appendix-toggle'))
            .some(c => c.getClientRects().length > 0),
        expanded: s.querySelector(':scope > p.lnlib-appendix-toggle > button')
            ?.getAttribute('aria-expanded'),
    }))"""


def test_appendices_fold_and_open_by_button_and_by_link(browser, site_url):
    holder = OfflineContext(browser, 1280)
    try:
        page = holder.context.new_page()
        page.goto(f"{site_url}/chapters/09_gradients.html", wait_until="load")
        folded = page.evaluate(FACTS)
        assert len(folded) == 6, folded  # the closed form checked (learner B18) and five more
        assert all(not a["body"] and a["expanded"] == "false" for a in folded), folded
        assert page.evaluate("() => !!document.getElementById('summary').getClientRects().length")
        # the button opens one appendix, and folds it again
        page.click("#appendix-the-gradient-s-leftover-along-x p.lnlib-appendix-toggle button")
        opened = {a["id"]: a for a in page.evaluate(FACTS)}
        assert opened["appendix-the-gradient-s-leftover-along-x"]["body"]
        assert opened["appendix-the-gradient-s-leftover-along-x"]["expanded"] == "true"
        assert not opened["appendix-how-far-the-gradient-grows-as-the-input-shrinks"]["body"]
        page.click("#appendix-the-gradient-s-leftover-along-x p.lnlib-appendix-toggle button")
        assert not any(a["body"] for a in page.evaluate(FACTS))
        # a link in the text into an appendix opens it
        page.click("article p a[href='#appendix-rmsnorm-s-closed-form-checked']")
        page.wait_for_timeout(200)
        linked = {a["id"]: a for a in page.evaluate(FACTS)}
        assert linked["appendix-rmsnorm-s-closed-form-checked"]["body"]
        # print shows every appendix whole, without the buttons
        page.emulate_media(media="print")
        page.reload(wait_until="load")
        printed = page.evaluate(FACTS)
        assert all(a["body"] for a in printed), printed
        assert not page.evaluate(
            "() => [...document.querySelectorAll('p.lnlib-appendix-toggle')]"
            ".some(p => p.getClientRects().length)"
        )
        page.emulate_media(media="screen")
        # a link from another page lands in the appendix, open
        page.goto(
            f"{site_url}/chapters/01_why_normalize.html"
            "#appendix-what-layernorm-sees-in-a-trained-model",
            wait_until="load",
        )
        landed = page.evaluate(FACTS)
        assert landed and landed[0]["body"], landed
    finally:
        holder.context.close()
