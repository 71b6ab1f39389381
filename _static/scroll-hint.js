// Code, output, display math and tables wider than their box fade out at the right edge until scrolled
// to the end (_static/scroll-hint.css). A phone shows no scroll bar, so without the fade a box that
// scrolls sideways looks cut. Boxes that fit are left alone; wide screens rarely have any that do not.
// A table that scrolls sideways also gets a line above it saying so: the fade alone is faint
// on a table whose last column is blank at its right edge. The line exists only while the table
// overflows, so a page whose tables fit (every page at 1280 px) is unchanged.
(() => {
  "use strict";
  const BOXES = "article pre, article div.math, article mjx-container, article div.cell_output, article .pst-scrollable-table-container, article .lnlib-readout";
  const TABLES = "pst-scrollable-table-container";
  const CUE = "lnlib-scroll-cue";

  function overflows(box) {
    return box.scrollWidth > box.clientWidth + 2;
  }

  function update(box) {
    box.classList.toggle("lnlib-more-right", box.scrollLeft + box.clientWidth < box.scrollWidth - 2);
  }

  // The line above a wide table: "Wide table: scroll sideways →", present only while it overflows.
  function cue(box) {
    const before = box.previousElementSibling;
    const has = before !== null && before.classList.contains(CUE);
    if (overflows(box) && !has) {
      const line = document.createElement("p");
      line.className = CUE;
      // the table itself is reachable by keyboard and screen reader; the line is for the eye
      line.setAttribute("aria-hidden", "true");
      line.textContent = "Wide table: scroll sideways →";
      box.before(line);
    } else if (!overflows(box) && has) {
      before.remove();
    }
  }

  function scan() {
    for (const box of document.querySelectorAll(BOXES)) {
      if (!["auto", "scroll"].includes(getComputedStyle(box).overflowX)) continue;
      update(box);
      if (box.classList.contains(TABLES)) cue(box);
      if (!box.dataset.lnlibScrollHint) {
        box.dataset.lnlibScrollHint = "1";
        box.addEventListener("scroll", () => update(box), { passive: true });
      }
    }
  }

  window.addEventListener("load", scan);
  window.addEventListener("resize", scan);
  // MathJax typesets after the page's load event.
  window.addEventListener("load", () => window.MathJax?.startup?.promise?.then(scan));
})();
