"""The printable edition: the whole book as one PDF, offline (``make pdf``).

Jupyter Book's single-page HTML build (the chapters as the website shows them, from the same
execution cache) is opened in Chromium through Playwright, MathJax typesets every formula, a title
page goes in front of the book's own table of contents, and Chromium prints it: A4, numbered pages,
numbered figures with their captions, the explorers at their default setting, links that work inside
the PDF. Nothing is fetched from outside the machine. Needs Debian's Chromium
(``apt-get install chromium``), Playwright and pypdf (``make test`` installs them).

Chromium cannot number the contents itself (no CSS ``target-counter()``), so the book is printed
twice: the first print says, through the PDF's named destinations (where each internal link lands),
on which page every entry of the contents starts; those numbers go into the contents, whose layout
keeps a fixed room for them, and the second print is the book. The second print's destinations are
read again: a number that moved stops the build.
"""

from __future__ import annotations

import functools
import http.server
import io
import os
import sys
import threading
from pathlib import Path

__all__ = ["print_book", "start_pages"]

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
      /* the contents: the title page already names the book; each entry with its page number */
      #jb-print-docs-body > h1 { display: none !important; }
      #jb-print-toc h2 { margin-top: 0; }
      #jb-print-toc p.caption { margin: 0.5em 0 0.1em; }
      #jb-print-toc ul { margin-top: 0 !important; margin-bottom: 0 !important; }
      #jb-print-toc .section-nav li { margin: 0 !important; padding: 0 !important;
          list-style: none !important; }
      #jb-print-toc a.nav-link { display: flex !important; align-items: baseline; gap: 0.4em;
          padding: 0.1em 0 !important; }
      #jb-print-toc .lnlib-leader { flex: 1 1 auto; border-bottom: 1px dotted #999; }
      #jb-print-toc .lnlib-page { flex: none; min-width: 2.2em; text-align: right;
          font-variant-numeric: tabular-nums; color: #000; }
      /* the introduction starts on its own page, under its title (the theme hides it in print) */
      .bd-main .bd-content .bd-article { break-before: page; }
      .bd-main .bd-content .bd-article h1:first-of-type { display: block !important; }
      /* a handout: no answer boxes to type into, and no folded bar (code, solution, forensics)
         whose content paper cannot unfold (an instructor counted 40 boxes and about 150 closed
         bars) */
      form.lnlib-exercise, details:not([open]) { display: none !important; }
      .bd-main .bd-content .bd-article-container { max-width: 100% !important; }
    `;
    document.head.append(style);
    // every page of the contents (a chapter, the Sources, the API...) starts on a new sheet:
    // Sphinx's single-page build marks where each page begins with a span id="document-<page>"
    // That span stays at the foot of the sheet before, so every link to it, the contents' first,
    // is sent to the element that starts the page.
    const starts = new Map();
    for (const [i, span] of document.querySelectorAll('span[id^="document-"]').entries()) {
        const start = span.nextElementSibling;
        if (!start) continue;
        start.style.breakBefore = 'page';
        if (!start.id) start.id = `lnlib-start-${i}`;
        starts.set('#' + span.id, '#' + start.id);
    }
    for (const link of document.querySelectorAll('a[href^="#document-"]')) {
        const target = starts.get(decodeURIComponent(link.getAttribute('href')));
        if (target) link.setAttribute('href', target);
    }
    // the contents: an entry for the introduction, then every entry gets a leader and a fixed room
    // for its page number, filled in after the first print (NUMBER)
    const nav = document.querySelector('#jb-print-toc nav');
    const intro = document.querySelector('.bd-article section[id]');
    if (nav && intro) {
        nav.insertAdjacentHTML('afterbegin', '<ul class="nav section-nav flex-column">' +
            `<li class="toctree-l1 nav-item toc-entry"><a class="reference internal nav-link" ` +
            `href="#${intro.id}">Introduction</a></li></ul>`);
    }
    for (const link of document.querySelectorAll('#jb-print-toc a.nav-link[href^="#"]')) {
        link.innerHTML = `<span class="lnlib-entry">${link.innerHTML}</span>` +
            '<span class="lnlib-leader"></span><span class="lnlib-page"></span>';
    }
}"""
# The contents' entries, as [anchor, ...] (the page each anchor is on is read from the PDF), and
# then each entry's page number written in.
ENTRIES = """() => [...document.querySelectorAll('#jb-print-toc a.nav-link[href^="#"]')]
    .map(a => decodeURIComponent(a.getAttribute('href').slice(1)))"""
NUMBER = """(numbers) => {
    const pages = document.querySelectorAll('#jb-print-toc a.nav-link[href^="#"] .lnlib-page');
    pages.forEach((page, i) => { page.textContent = String(numbers[i]); });
}"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(folder: Path):
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_pages(pdf: bytes, anchors: list[str]) -> list[int]:
    """The page (1 for the first) on which each of `anchors` (an element's id) lands in `pdf`."""
    import pypdf  # noqa: PLC0415 (a test and maintainer tool)

    reader = pypdf.PdfReader(io.BytesIO(pdf))
    destinations = {name.lstrip("/"): dest for name, dest in reader.named_destinations.items()}
    missing = [anchor for anchor in anchors if anchor not in destinations]
    if missing:
        raise LookupError(f"no destination in the printed book for {missing}")
    return [reader.get_destination_page_number(destinations[a]) + 1 for a in anchors]


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
            options = {
                "format": "A4",
                "print_background": True,
                "margin": {"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
                "display_header_footer": True,
                "header_template": "<span></span>",
                "footer_template": '<div style="font-size:9px;width:100%;text-align:center;">'
                '<span class="pageNumber"></span> / <span class="totalPages"></span></div>',
            }
            anchors = page.evaluate(ENTRIES)
            numbers = start_pages(page.pdf(**options), anchors)
            page.evaluate(NUMBER, numbers)
            book = page.pdf(**options)
            moved = [
                (anchor, before, after)
                for anchor, before, after in zip(anchors, numbers, start_pages(book, anchors))
                if before != after
            ]
            if moved:
                raise RuntimeError(f"the contents' page numbers moved in the second print: {moved}")
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(book)
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
        "The LayerNorm book team, version 0.2.0, 2026",
        (
            "Text and figures CC BY 4.0; code MIT. The live explorers are shown at their default "
            "setting."
        ),
    )
    print(f"{out}: written")
