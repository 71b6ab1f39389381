// Code, output, display math and tables wider than their box fade out at the right edge until scrolled
// to the end (_static/scroll-hint.css). A phone shows no scroll bar, so without the fade a box that
// scrolls sideways looks cut. Boxes that fit are left alone; wide screens rarely have any that do not.
// A table that scrolls sideways also gets a line above it saying so: the fade alone is faint
// on a table whose last column is blank at its right edge. So does a code cell's printed output
// (a phone cuts a harness table at its third column, and nothing else says it scrolls). The line
// exists only while the box overflows, so a page whose tables and outputs fit (every page at
// 1280 px) is unchanged. A display formula wider than its box gets one too, "Wide formula".
// A table taller than the screen scrolls its line out of view (at 390 px the families table of
// "What to use today" is 1.5 screens tall, and a reader in its middle saw its columns cut with no
// cue), so a wide table also gets a shaded strip down its right edge with an arrow that stays on
// screen while any of the table is: both until the table is scrolled to its right end. The table
// and its line go into a wrapper that positions the strip; the line stays just before the table.
(() => {
  "use strict";
  const BOXES = "article pre, article div.math, article mjx-container, article div.cell_output, article .pst-scrollable-table-container, article .lnlib-readout";
  const TABLES = "pst-scrollable-table-container";
  const CUE = "lnlib-scroll-cue";
  const OUTPUT_CUE = "lnlib-scroll-cue-output"; // also marks the line above an output
  const OUTPUT = "div.cell_output";
  const MATH_CUE = "lnlib-scroll-cue-math"; // marks the line above a display formula
  const CODE_CUE = "lnlib-scroll-cue-code"; // marks the line above a code block of the text
  const FORMULA = "div.math, mjx-container[display='true']";
  const WRAP = "lnlib-wide-table"; // a wide table, its line and its edge strip
  const EDGE = "lnlib-scroll-edge"; // the strip down a wide table's right edge, with its arrow

  function overflows(box) {
    return box.scrollWidth > box.clientWidth + 2;
  }

  function update(box) {
    box.classList.toggle("lnlib-more-right", box.scrollLeft + box.clientWidth < box.scrollWidth - 2);
  }

  // Where the line above an output goes: before the output's own block inside the cell's output
  // (div.output, whose printout is a pre in a highlight box), so it sits outside the grey box.
  function outputAnchor(box) {
    const output = box.closest(OUTPUT);
    if (output === null || output === box) return output;
    let child = box;
    while (child.parentElement !== output) child = child.parentElement;
    return child;
  }

  // The line above a wide table, "Wide table: scroll sideways →", or a wide output, "Wide output:
  // scroll sideways →", before `anchor`; present only while its box overflows (`wide`).
  function cue(wide, anchor, text, kind) {
    const before = anchor.previousElementSibling;
    const has = before !== null && before.classList.contains(CUE);
    if (wide && !has) {
      const line = document.createElement("p");
      line.className = kind ? `${CUE} ${kind}` : CUE;
      // the box itself is reachable by keyboard and screen reader; the line is for the eye
      line.setAttribute("aria-hidden", "true");
      line.textContent = text;
      anchor.before(line);
    } else if (!wide && has) {
      before.remove();
    }
  }

  // The strip down the right edge of the wide table `box`, created (with the wrapper that positions
  // it) the first time the table overflows, and sized to the table's box at every scan. CSS shows it
  // only while the table has more to the right (.lnlib-more-right).
  function edge(wide, box) {
    let wrap = box.parentElement;
    if (!wrap.classList.contains(WRAP)) {
      if (!wide) return;
      wrap = document.createElement("div");
      wrap.className = WRAP;
      const before = box.previousElementSibling;
      const line = before !== null && before.classList.contains(CUE) ? before : null;
      (line || box).before(wrap);
      if (line) wrap.append(line);
      wrap.append(box);
      const strip = document.createElement("div");
      strip.className = EDGE;
      strip.setAttribute("aria-hidden", "true");
      const arrow = document.createElement("span");
      arrow.textContent = "→";
      strip.append(arrow);
      wrap.append(strip);
      // rows can grow after the scan (late fonts, typeset math): keep the strip the table's height
      new ResizeObserver(() => edge(overflows(box), box)).observe(box);
    }
    const strip = wrap.querySelector(`:scope > .${EDGE}`);
    strip.hidden = !wide;
    strip.style.top = `${box.offsetTop}px`;
    strip.style.height = `${box.offsetHeight}px`;
  }

  function scan() {
    const outputs = new Map(); // an output's anchor: whether any box in it overflows
    const formulas = new Map(); // a display formula's block: whether it overflows
    for (const box of document.querySelectorAll(BOXES)) {
      if (!["auto", "scroll"].includes(getComputedStyle(box).overflowX)) continue;
      update(box);
      if (box.classList.contains(TABLES)) {
        cue(overflows(box), box, "Wide table: scroll sideways →", "");
        edge(overflows(box), box);
      } else if (box.closest(OUTPUT) !== null && !box.closest(`.${TABLES}`)) {
        const anchor = outputAnchor(box);
        outputs.set(anchor, outputs.get(anchor) || overflows(box));
      } else if (box.matches("pre")) {
        // a code block, of the text or a notebook cell's input: What to use today's checklist code, the
        // code readers copy, was cut at a phone's edge with no cue (learner B, 2026-11-30), and so were
        // the chapters' code cells, with a fade only (learner A, 2026-11-30)
        const block = box.closest("div[class^='highlight-']") || box;
        cue(overflows(box), block, "Wide code: scroll sideways →", CODE_CUE);
      } else if (box.matches(FORMULA) && !box.closest(`.${TABLES}`)) {
        const anchor = box.closest("div.math") || box;
        formulas.set(anchor, formulas.get(anchor) || overflows(box));
      }
      if (!box.dataset.lnlibScrollHint) {
        box.dataset.lnlibScrollHint = "1";
        box.addEventListener("scroll", () => update(box), { passive: true });
      }
    }
    for (const [anchor, wide] of outputs) {
      cue(wide, anchor, "Wide output: scroll sideways →", OUTPUT_CUE);
    }
    // a formula cut at a phone's edge looked whole (learner B, chapter 09's "In practice" box)
    for (const [anchor, wide] of formulas) {
      cue(wide, anchor, "Wide formula: scroll sideways →", MATH_CUE);
    }
  }

  window.addEventListener("load", scan);
  window.addEventListener("resize", scan);
  // MathJax typesets after the page's load event.
  window.addEventListener("load", () => window.MathJax?.startup?.promise?.then(scan));
})();
