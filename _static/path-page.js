// The practitioner's path on one page: What to use today's box lists the twelve stops, each a link into a chapter;
// a button under the list reads those chapters' pages and shows every stop here, in order, as the Practitioner's
// view shows it (path-view.js): the stop's section less its proofs (path-skip, path-skip-section), its code and its
// printouts; its prose, "In practice" boxes and figures kept. Learner B (2026-11-30): "put the 12 stops on one
// continuous, shareable page". Each stop names the chapter it comes from, which stays its one home; opened from
// files rather than a web server, a browser may refuse to read the other pages, and the button then says so.
(() => {
  "use strict";
  const BOX_TITLE = /^A practitioner[’']s path through the book$/;
  const STOP_LINE = /^The practitioner[’']s path, stop \d+ of \d+/;
  const text = (el) => el.textContent.replace(/\s+/g, " ").trim();
  const make = (tag, className, content = "") => Object.assign(document.createElement(tag), { className, textContent: content });

  // The stop itself in a fetched chapter: the section its link names, or, for a link to the page alone, the
  // chapter's "The bottom line" box.
  function stopIn(doc, hash) {
    if (hash) return doc.getElementById(decodeURIComponent(hash.slice(1)));
    return [...doc.querySelectorAll(".admonition")].find((box) => {
      const title = box.querySelector(":scope > .admonition-title");
      return title && text(title) === "The bottom line";
    });
  }

  // The stop as the view shows it, its links and images pointing where they did in its chapter.
  function asShown(stop, page, href = page) {
    const copy = stop.cloneNode(true);
    copy.querySelectorAll(".tag_path-skip-section").forEach((cell) => {
      const section = cell.closest("section");
      if (section && section !== copy) section.remove();
    });
    copy.querySelectorAll(".tag_path-skip").forEach((cell) => cell.remove());
    // the stop's own line ("stop N of 12, after ...; next: ...") repeats this page's "Stop N, from ..." line
    copy.querySelectorAll("p").forEach((line) => STOP_LINE.test(text(line)) && line.remove());
    copy.querySelectorAll("div.cell").forEach((cell) => {
      if (cell.querySelector(".lnlib-web-explorer")) return;
      if (cell.classList.contains("tag_path-show")) return; // code the stop tells its reader to run
      const figure = cell.querySelector(".cell_output img");
      if (!figure) {
        // a printout: one line for a run of them
        const before = cell.previousElementSibling;
        if (before && before.classList.contains("lnlib-path-printout")) cell.remove();
        else cell.replaceWith(printoutStub(href));
      }
      else if (figure.closest("details")) return; // a figure its chapter folds stays folded, as there
      else cell.querySelectorAll(":scope > .cell_input, :scope > details").forEach((el) => el.remove());
    });
    copy.querySelectorAll("a[href^='#']").forEach((a) => a.setAttribute("href", page + a.getAttribute("href")));
    [copy, ...copy.querySelectorAll("[id]")].forEach((el) => el.removeAttribute("id"));
    return copy;
  }

  // Where a printout was, a line that says so and links to it in its chapter (learner B, 2026-11-30: "the folded
  // cell computes the numbers below" pointed at nothing on this page).
  function printoutStub(href) {
    const stub = make("p", "lnlib-path-printout", "⋯ code and printout: in ");
    const link = make("a", "", "the chapter");
    link.href = href;
    stub.append(link);
    return stub;
  }

  // The chapter's "In practice" boxes that no stop holds, as the view keeps them: shown before its first stop.
  function boxesOutside(doc, stops) {
    return [...doc.querySelectorAll(".admonition")].filter((box) => {
      const title = box.querySelector(":scope > .admonition-title");
      return title && text(title) === "In practice" && !stops.some((stop) => stop.contains(box));
    });
  }

  async function read(page) {
    const response = await fetch(page);
    if (!response.ok) throw new Error(`${page}: ${response.status}`);
    return new DOMParser().parseFromString(await response.text(), "text/html");
  }

  async function showStops(links, into, button) {
    button.disabled = true;
    button.textContent = "Reading the chapters…";
    try {
      const pages = new Map();
      for (const link of links) {
        const page = link.getAttribute("href").split("#")[0];
        if (!pages.has(page)) pages.set(page, await read(page));
      }
      const stops = links.map((link) => {
        const page = link.getAttribute("href").split("#")[0];
        return { link, page, doc: pages.get(page), stop: stopIn(pages.get(page), link.hash) };
      });
      const shownBoxes = new Set();
      for (const { link, page, doc, stop } of stops.filter((s) => s.stop)) {
        const block = make("div", "lnlib-path-stop");
        block.id = `path-stop-${link.closest("li").dataset.stop}`;
        const from = make("p", "lnlib-path-from");
        const source = make("a", "", text(doc.querySelector("h1")).replace(/#$/, ""));
        source.href = link.getAttribute("href");
        from.append(`Stop ${link.closest("li").dataset.stop}, from `, source, ":");
        block.append(from);
        if (!shownBoxes.has(page)) {
          shownBoxes.add(page);
          const own = stops.filter((s) => s.page === page && s.stop).map((s) => s.stop);
          boxesOutside(doc, own).forEach((box) => block.append(asShown(box, page)));
        }
        block.append(asShown(stop, page, link.getAttribute("href")));
        into.append(block);
      }
      addToContents(into, links);
      if (window.MathJax && window.MathJax.typesetPromise) await window.MathJax.typesetPromise([into]);
      button.textContent = "The stops are below";
      // the path to hand on, as paper or a PDF (learner B19, 2026-11-30: "a print/PDF this path link")
      const print = Object.assign(make("button", "", "Print the path, or save it as a PDF"), { type: "button" });
      print.addEventListener("click", () => printPath(into));
      button.after(" ", print);
    } catch (error) {
      button.disabled = false;
      button.textContent = "Read every stop on this page";
      into.textContent =
        "This browser would not read the chapters' pages (opened from files rather than a web server?): " +
        "follow the links above, or serve the website (make serve).";
    }
  }

  // The gathered stops in the page's Contents, one link each (learner B27, 2026-11-30: twelve stops make the page
  // some 20,000 px long, and its Contents had no way to jump to stop 8).
  function addToContents(into, links) {
    const contents = document.querySelector("#pst-page-toc-nav > ul");
    const blocks = [...into.querySelectorAll(".lnlib-path-stop")];
    if (!contents || !blocks.length) return;
    const entry = make("li", "toc-h2 nav-item toc-entry lnlib-path-contents");
    const head = make("a", "reference internal nav-link", "The path's stops");
    head.href = "#" + blocks[0].id;
    const stops = make("ul", "nav section-nav flex-column");
    blocks.forEach((block) => {
      const li = links.find((link) => `path-stop-${link.closest("li").dataset.stop}` === block.id).closest("li");
      const item = make("li", "toc-h3 nav-item toc-entry");
      const jump = make("a", "reference internal nav-link", `${li.dataset.stop}. ${text(li).replace(/\.$/, "")}`);
      jump.href = "#" + block.id;
      item.append(jump);
      stops.append(item);
    });
    entry.append(head, stops);
    contents.prepend(entry);
  }

  // Print the page's title, the path's box and the gathered stops, nothing else of the page (the truth audit of
  // 2026-11-30: the button printed the whole page); the rest comes back after the print dialog.
  function printPath(into) {
    const kept = new Set([into, into.previousElementSibling]);
    const rest = [...into.parentElement.children].filter((el) => !kept.has(el) && !/^H1$/.test(el.tagName));
    rest.forEach((el) => el.classList.add("lnlib-not-path"));
    const restore = () => rest.forEach((el) => el.classList.remove("lnlib-not-path"));
    window.addEventListener("afterprint", restore, { once: true });
    window.print();
  }

  function init() {
    const box = [...document.querySelectorAll(".admonition")].find((el) => {
      const title = el.querySelector(":scope > .admonition-title");
      return title && BOX_TITLE.test(text(title));
    });
    const list = box && box.querySelector("ol");
    if (!list) return;
    [...list.children].forEach((li, k) => (li.dataset.stop = String(k + 1)));
    const links = [...list.querySelectorAll("li > p > a[href]")].filter((a) => /\.html/.test(a.getAttribute("href")));
    const line = make("p", "lnlib-path-page");
    const button = Object.assign(make("button", "", "Read every stop on this page"), { type: "button" });
    const into = make("div", "lnlib-path-stops");
    into.setAttribute("aria-live", "polite");
    line.append(button);
    box.append(line);
    box.after(into);
    button.addEventListener("click", () => showStops(links, into, button));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
