// Figures on a phone: tap (or Enter / Space) to see a figure larger, in its own sideways-scrolling box.
//
// The book's figures are PNGs drawn for the 1280 px column (lnlib.book.figures.style: 5.4 in at 150 dpi,
// shown at >= 75 %, 10 pt text at about 16 px). A phone's column is about 350 px, which shrinks a wide
// figure's smallest text (style.SMALLEST_FONT_PT, 7 pt) to about 6 px; a PNG's text cannot grow with the
// screen. So on a narrow screen a figure whose smallest text would show below style.MIN_TEXT_PX (10 px) is a
// button, and a line under it says so ("Tap the figure to enlarge it"): a tap shows it at ZOOM of its natural
// width (style.PHONE_ZOOM: 7 pt text at about 11 px, 10 pt at about 16 px) inside a box that scrolls
// sideways, with a fade at the right edge while there is more to see, never widening the page; a second tap
// fits it back. Figures that already read at the phone's width (those drawn narrow for it) are left as they
// are. Pinch-zoom, which the theme allows, works as well. Wide screens are left alone.
// Why not always show figures wider, in a scrolling frame? The fitted figure gives the whole picture at a
// glance (shapes, trends, colours); only reading its labels needs the larger size, on the reader's demand.
(() => {
  "use strict";
  const ZOOM = 0.75; // lnlib.book.figures.style.PHONE_ZOOM
  const NEEDS_ZOOM = 0.69; // shown / natural width below which the smallest text reads under 10 px
  const NARROW = window.matchMedia("(max-width: 720px)");
  const LABEL = "Show this figure larger (it scrolls sideways); again to fit it to the page";
  const CUE = { fitted: "Tap the figure to enlarge it", zoomed: "Scroll sideways to read it; tap to fit it back" };

  // The element whose width changes: an explorer's stacked images move together, a plain output image alone.
  const targets = () => [
    ...document.querySelectorAll("article .lnlib-web-figure"),
    ...[...document.querySelectorAll("article div.cell_output img, article figure img")].filter(
      (img) => !img.closest(".lnlib-web-figure"),
    ),
  ];

  function naturalWidth(target) {
    const img = target.tagName === "IMG" ? target : target.querySelector("img");
    return img ? img.naturalWidth || Number(img.getAttribute("width")) || 0 : 0;
  }

  function wrap(target) {
    if (target.parentElement.classList.contains("lnlib-zoom-box")) return target.parentElement;
    const box = document.createElement("div");
    box.className = "lnlib-zoom-box";
    target.replaceWith(box);
    box.appendChild(target);
    box.addEventListener("scroll", () => hint(box), { passive: true });
    return box;
  }

  function cueOf(box) {
    let cue = box.nextElementSibling;
    if (!cue || !cue.classList.contains("lnlib-zoom-cue")) {
      cue = document.createElement("p");
      cue.className = "lnlib-zoom-cue";
      cue.setAttribute("aria-hidden", "true"); // the figure itself is the labelled button
      box.after(cue);
    }
    return cue;
  }

  // The fade at the right edge while the enlarged figure has more to show (as _static/scroll-hint.js does).
  function hint(box) {
    box.classList.toggle("lnlib-more-right", box.scrollLeft + box.clientWidth < box.scrollWidth - 2);
  }

  function toggle(target) {
    const zoomed = !target.classList.contains("lnlib-zoomed");
    target.classList.toggle("lnlib-zoomed", zoomed);
    target.style.setProperty("--lnlib-zoom-width", `${Math.round(ZOOM * naturalWidth(target))}px`);
    target.setAttribute("aria-pressed", String(zoomed));
    const box = target.parentElement;
    cueOf(box).textContent = zoomed ? CUE.zoomed : CUE.fitted;
    hint(box);
  }

  // Would the figure, fitted to its box, show its smallest text below 10 px? (Unknown size: assume so.)
  function needsZoom(target, box) {
    const natural = naturalWidth(target);
    return !natural || Math.min(natural, box.clientWidth) < NEEDS_ZOOM * natural;
  }

  function arm(target) {
    const box = wrap(target);
    if (target.classList.contains("lnlib-zoomed")) return;
    if (!needsZoom(target, box)) return disarm(target);
    target.classList.add("lnlib-zoomable");
    target.setAttribute("role", "button");
    target.setAttribute("tabindex", "0");
    target.setAttribute("aria-pressed", "false");
    target.setAttribute("title", LABEL);
    cueOf(box).textContent = CUE.fitted;
  }

  function disarm(target) {
    target.classList.remove("lnlib-zoomable", "lnlib-zoomed");
    for (const name of ["role", "tabindex", "aria-pressed", "title"]) target.removeAttribute(name);
    const box = target.parentElement;
    if (box.classList.contains("lnlib-zoom-box")) {
      box.classList.remove("lnlib-more-right");
      const cue = box.nextElementSibling;
      if (cue && cue.classList.contains("lnlib-zoom-cue")) cue.remove();
    }
  }

  function update() {
    for (const target of targets()) (NARROW.matches ? arm : disarm)(target);
  }

  // Delegated: an explorer swaps its <img> elements as the reader moves a control. The cue under a figure
  // works as the figure does.
  document.addEventListener("click", (event) => {
    if (!event.target.closest) return;
    const cue = event.target.closest(".lnlib-zoom-cue");
    const target = cue
      ? cue.previousElementSibling && cue.previousElementSibling.querySelector(".lnlib-zoomable")
      : event.target.closest(".lnlib-zoomable");
    if (target) toggle(target);
  });
  document.addEventListener("keydown", (event) => {
    const target = event.target.classList && event.target.classList.contains("lnlib-zoomable") ? event.target : null;
    if (target && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      toggle(target);
    }
  });
  NARROW.addEventListener("change", update);
  window.addEventListener("load", update); // the images' natural widths are known by then
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", update);
  else update();
})();
