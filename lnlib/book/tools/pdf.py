"""The printable edition: the whole book as one PDF, offline (``make pdf``).

Jupyter Book's single-page HTML build (the chapters as the website shows them, from the same
execution cache) is opened in Chromium through Playwright, MathJax typesets every formula, a title
page goes in front of the book's own table of contents, and Chromium prints it: A4, numbered pages,
numbered figures with their captions, the explorers at their default setting, links that work inside
the PDF. Nothing is fetched from outside the machine. Needs Debian's Chromium
(``apt-get install chromium``) and Playwright (``make test`` installs it).
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
from pathlib import Path

__all__ = ["print_book"]

CHROMIUM = os.environ.get("LNBOOK_CHROMIUM", "/usr/bin/chromium")
TYPESET = """async () => {
    for (let i = 0; i < 200 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
        await new Promise(r => setTimeout(r, 50));
    if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
    await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
}"""
# A title page, and what a page cannot do on paper: closed dropdowns (solutions, folded code) and
# the exercises' answer boxes go, as do the live explorers' controls and the page's navigation;
# every chapter starts on a new page.
PREPARE = """([title, subtitle, notice]) => {
    const page = document.createElement('section');
    page.className = 'lnlib-title-page';
    page.innerHTML = `<h1>${title}</h1><p class="lnlib-subtitle">${subtitle}</p>` +
        `<p class="lnlib-notice">${notice}</p>`;
    const main = document.querySelector('main') || document.body;
    main.prepend(page);
    const style = document.createElement('style');
    style.textContent = `
      .lnlib-title-page { break-after: page; padding-top: 30vh; text-align: center; }
      .lnlib-title-page h1 { font-size: 2.4rem; }
      .lnlib-web-controls, .lnlib-web-grid, .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary,
      .header-article, .prev-next-area, .bd-footer-content, button.toggle-button, .headerlink {
          display: none !important; }
      figure, img, table, .cell_output { break-inside: avoid; }
      /* The theme keeps each code block whole (break-inside: avoid on div.highlight), but a code
         cell's frame is the box around it: a block that did not fit moved to the next sheet alone
         and left its cell's empty frame at the foot of the page (an instructor's page 115). The
         frame is kept whole instead, and a cell longer than a page splits line by line, never one
         line alone; on paper code does not scroll: a long line wraps rather than being cut off */
      .cell_input, div[class^="highlight-"]:not(.cell_input *) { break-inside: avoid; }
      .cell_input div.highlight, .cell_input div[class^="highlight-"] {
          break-inside: auto !important; }
      pre { overflow: visible !important; white-space: pre-wrap !important; orphans: 3; widows: 3; }
      /* a handout: no answer boxes to type into, and no folded bar (code, solution, forensics)
         whose content paper cannot unfold (an instructor counted 40 boxes and about 150 closed
         bars) */
      form.lnlib-exercise, details:not([open]) { display: none !important; }
      .bd-main .bd-content .bd-article-container { max-width: 100% !important; }
    `;
    document.head.append(style);
    // every page of the contents (a chapter, the Sources, the API...) starts on a new sheet:
    // Sphinx's single-page build marks where each page begins with a span id="document-<page>"
    for (const start of document.querySelectorAll('span[id^="document-"]')) {
        if (start.nextElementSibling) start.nextElementSibling.style.breakBefore = 'page';
    }
}"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(folder: Path):
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def print_book(site: Path, out: Path, title: str, subtitle: str, notice: str) -> Path:
    """Print the single-page build in `site` (its ``intro.html``) to the PDF `out`."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (a test and maintainer tool)

    server = _serve(site)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            context = browser.new_context()
            # offline: anything that is not this machine's server is refused
            context.route(
                "**/*",
                lambda r: (
                    r.continue_()
                    if r.request.url.startswith(("http://127.0.0.1", "data:", "blob:"))
                    else r.abort()
                ),
            )
            page = context.new_page()
            response = page.goto(
                f"http://127.0.0.1:{server.server_address[1]}/intro.html",
                wait_until="load",
                timeout=300_000,
            )
            if response is None or not response.ok:
                raise FileNotFoundError(
                    f"{site}/intro.html: not built (jupyter-book build . --builder singlehtml)"
                )
            page.evaluate(TYPESET)
            page.evaluate(PREPARE, [title, subtitle, notice])
            page.emulate_media(media="print")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.pdf(
                path=str(out),
                format="A4",
                print_background=True,
                margin={"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
                display_header_footer=True,
                header_template="<span></span>",
                footer_template='<div style="font-size:9px;width:100%;text-align:center;">'
                '<span class="pageNumber"></span> / <span class="totalPages"></span></div>',
            )
            browser.close()
    finally:
        server.shutdown()
    return out


if __name__ == "__main__":  # python -m lnlib.book.tools.pdf _build/singlehtml _build/pdf/book.pdf
    site, out = Path(sys.argv[1]), Path(sys.argv[2])
    print_book(
        site,
        out,
        "LayerNorm, worked out",
        "The LayerNorm book team, version 0.1.0, 2026",
        (
            "Text and figures CC BY 4.0; code MIT. The live explorers are shown at their default "
            "setting."
        ),
    )
    print(f"{out}: written")
