// A chapter's appendices fold on screen: each "## Appendix: ..." section after the Summary shows its heading and a
// button, and opens when the button is pressed or a link (from the page, another page, the contents or a search)
// leads into it. Learner B (2026-11-30) wanted the appendices on separate "lab notes" pages "so that 09-16 read in
// roughly half the time"; folded, they are one click away and the chapter ends at its Summary. Print and the PDF
// show them whole (appendix-fold.css folds on screen only).
(() => {
  "use strict";
  const FOLDED = "lnlib-appendix-folded";
  const APPENDIX = /^Appendix\b/;

  function appendices(root) {
    return [...root.querySelectorAll("section")].filter((section) => {
      const heading = section.querySelector(":scope > h2");
      return Boolean(heading && APPENDIX.test(heading.textContent.trim()));
    });
  }

  function setOpen(section, open) {
    section.classList.toggle(FOLDED, !open);
    const button = section.querySelector(":scope > p.lnlib-appendix-toggle > button");
    button.setAttribute("aria-expanded", String(open));
    button.textContent = open ? "Fold this appendix" : "Show this appendix";
  }

  // A link into a folded appendix opens it, then the browser scrolls to its target.
  function reveal(list) {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id && document.getElementById(id);
    const section = target && list.find((s) => s === target || s.contains(target));
    if (section && section.classList.contains(FOLDED)) {
      setOpen(section, true);
      target.scrollIntoView();
    }
  }

  function init() {
    const root = document.querySelector("article.bd-article");
    if (!root) return;
    const list = appendices(root);
    for (const section of list) {
      const line = document.createElement("p");
      line.className = "lnlib-appendix-toggle";
      const button = document.createElement("button");
      button.type = "button";
      button.addEventListener("click", () => setOpen(section, section.classList.contains(FOLDED)));
      line.append(button);
      section.querySelector(":scope > h2").after(line);
      setOpen(section, false);
    }
    reveal(list);
    window.addEventListener("hashchange", () => reveal(list));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
