// Default to the light theme on a first visit instead of the empty mode that makes
// pydata-sphinx-theme log "Got invalid theme mode" (see _ext/book_html_fixes.py).
if (!document.documentElement.dataset.mode) {
  document.documentElement.dataset.mode = localStorage.getItem("mode") || "light";
}
