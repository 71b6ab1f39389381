// Figures on a phone: tap (or Enter / Space) to see a figure larger, in its own sideways-scrolling box.
//
// The book's figures are PNGs drawn for the 1280 px column (lnlib.plots.style: 5.4 in at 150 dpi, shown at
// >= 75 %, 10 pt text at about 16 px). A phone's column is about 350 px, which shrinks that text to about
// 7 px; a PNG's text cannot grow with the screen. So on a narrow screen every output figure and every
// explorer's figure is a button: a tap shows it at ZOOM of its natural width (10 pt text at about 14 px)
// inside a box that scrolls sideways, never widening the page; a second tap fits it back. Pinch-zoom,
// which the theme allows, works as well. Wide screens are left alone.
(() => {
  "use strict";
  const ZOOM = 0.66;
  const NARROW = window.matchMedia("(max-width: 720px)");
  const LABEL = "Show this figure larger (it scrolls sideways); again to fit it to the page";

  // The element whose width changes: an explorer's stacked images move together, a plain output image alone.
  const targets = () => [
    ...document.querySelectorAll("article .lnlib-web-figure"),
    ...[...document.querySelectorAll("article div.cell_output img")].filter((img) => !img.closest(".lnlib-web-figure")),
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
    return box;
  }

  function toggle(target) {
    const zoomed = !target.classList.contains("lnlib-zoomed");
    target.classList.toggle("lnlib-zoomed", zoomed);
    target.style.setProperty("--lnlib-zoom-width", `${Math.round(ZOOM * naturalWidth(target))}px`);
    target.setAttribute("aria-pressed", String(zoomed));
  }

  function arm(target) {
    wrap(target);
    target.classList.add("lnlib-zoomable");
    target.setAttribute("role", "button");
    target.setAttribute("tabindex", "0");
    target.setAttribute("aria-pressed", "false");
    target.setAttribute("title", LABEL);
  }

  function disarm(target) {
    target.classList.remove("lnlib-zoomable", "lnlib-zoomed");
    for (const name of ["role", "tabindex", "aria-pressed", "title"]) target.removeAttribute(name);
  }

  function update() {
    for (const target of targets()) (NARROW.matches ? arm : disarm)(target);
  }

  // Delegated: an explorer swaps its <img> elements as the reader moves a control.
  document.addEventListener("click", (event) => {
    const target = event.target.closest && event.target.closest(".lnlib-zoomable");
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
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", update);
  else update();
})();
