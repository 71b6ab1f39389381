// Code, output, display math and tables wider than their box fade out at the right edge until scrolled
// to the end (_static/scroll-hint.css). A phone shows no scroll bar, so without the fade a box that
// scrolls sideways looks cut. Boxes that fit are left alone; wide screens rarely have any that do not.
(() => {
  "use strict";
  const BOXES = "article pre, article div.math, article mjx-container, article div.cell_output, article .pst-scrollable-table-container, article .lnlib-readout";

  function update(box) {
    box.classList.toggle("lnlib-more-right", box.scrollLeft + box.clientWidth < box.scrollWidth - 2);
  }

  function scan() {
    for (const box of document.querySelectorAll(BOXES)) {
      if (!["auto", "scroll"].includes(getComputedStyle(box).overflowX)) continue;
      update(box);
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
