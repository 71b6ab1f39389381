// The colour-mode button says which mode it is in: "Color mode: dark" (pydata-sphinx-theme 0.17.1 labels it
// "Color mode" whatever the mode; _ext/accessibility.py, item 1). The theme sets data-mode on <html>.
(() => {
  "use strict";
  const names = { light: "light", dark: "dark", auto: "system settings" };
  const label = () => {
    const mode = names[document.documentElement.dataset.mode] || "light";
    document.querySelectorAll(".theme-switch-button").forEach((button) => {
      button.setAttribute("aria-label", `Color mode: ${mode}`);
    });
  };
  const start = () => {
    label();
    new MutationObserver(label).observe(document.documentElement, { attributes: true, attributeFilter: ["data-mode"] });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
