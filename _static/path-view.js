// The practitioner's view: a chapter shows only its stops on the practitioner's path.
//
// Chapters 09 to 16 open with one line to the practitioner's path (lnlib.book.tools.notebooks.practitioner_line,
// "Here for today's practice? ..."), and each stop opens with "The practitioner's path, stop N of 12" (PATH_STOPS).
// Learner B's review (2026-11-29): the path "exists only as a list of links into 65-80-minute chapters, and each stop
// is surrounded by derivations I am told I may skip". A button under the line hides everything else: what stays is the
// chapter's title and practitioner's line, its "In practice" boxes and bottom line, each stop's whole section, and
// the headings that lead to a stop, less the proofs a stop's cells tag path-skip (a code cell) or path-skip-section
// (its subsection). A stop's code and printouts fold too, each leaving a marker, until "Show code and printouts"
// is pressed; its figures stay. The choice is remembered across pages (localStorage) until the reader turns it off;
// a link to a hidden section (from the contents, another page or a search) turns it off, so no link lands on nothing,
// and a line where the exercises were shows the whole chapter again. A stop's link on What to use today turns it on.
// Chapters without a stop get no button; nor does the course edition, which drops the practitioner's line.
(() => {
  "use strict";
  const KEY = "lnlib-path-view";
  const STOP = /^The practitioner[’']s path, stop \d+ of \d+/;
  const OPENING = /^Here for today[’']s practice\?/;
  const SAID_ONLY = "lnlib-said-only"; // read out by a screen reader, not shown
  const KEEP_BOXES = new Set(["In practice", "The bottom line"]);
  const OFF = "lnlib-off-path";
  const LEAVES = "lnlib-leaves-view";
  // What to use today's checklist ("stop 4") and the introduction's stop 2 ("the closed form, stop 2"; learner B,
  // 2026-11-30: "link straight to stop 2 with the view on")
  const STOP_LINK = /(?:^|, )stop \d+$/;
  const PATH_BOX = /^A practitioner[’']s path through the book$/;
  // a numbered chapter's page (not What to use today, the introduction or a reference page)
  const CHAPTER_PAGE = /\/chapters\/\d\d_[^/]+\.html$/;

  const article = () => document.querySelector("article.bd-article");
  const text = (el) => el.textContent.replace(/\s+/g, " ").trim();

  const stopLinesIn = (root) => [...root.querySelectorAll("p")].filter((p) => STOP.test(text(p)));

  function stopSections(root) {
    return stopLinesIn(root)
      .map((p) => p.closest("section"))
      .filter(Boolean);
  }

  function isKeptBox(el) {
    const title = el.classList.contains("admonition") && el.querySelector(":scope > .admonition-title");
    return Boolean(title && KEEP_BOXES.has(text(title)));
  }

  // Kept in a section on the way to a stop: its heading, the practitioner's line and the button, a stop's own line,
  // and the "In practice" and "bottom line" boxes.
  function kept(child) {
    if (child.matches("h1, h2, h3, h4, h5, h6, p.lnlib-path-view") || isKeptBox(child)) return true;
    return child.tagName === "P" && (OPENING.test(text(child)) || STOP.test(text(child)));
  }

  // An off-path section that holds an "In practice" box (chapter 11's sits in "The idea", which leads to no stop:
  // learner B, 2026-11-30, read the view without the chapter's recommendation) keeps the box alone: everything
  // else in it hides, its heading too.
  const keptBoxIn = (section) => [...section.querySelectorAll(".admonition")].some(isKeptBox);

  function allButBoxes(section) {
    return [...section.children].flatMap((child) => {
      if (isKeptBox(child)) return [];
      if (child.tagName === "SECTION" && keptBoxIn(child)) return allButBoxes(child);
      return [child];
    });
  }

  // What the view hides: in each section on the way to a stop, every child that is neither kept nor a section
  // leading to a stop (the chapter's goal and reading time too: learner B read "About 80 minutes" in the view).
  function offPath(root, stops) {
    const onWay = new Set();
    for (const stop of stops) {
      for (let s = stop.parentElement.closest("section"); s && root.contains(s); s = s.parentElement.closest("section")) {
        onWay.add(s);
      }
    }
    const hidden = [];
    hidden.boxOnly = []; // the ids of the off-path sections kept for their box alone
    // Inside a stop, a proof the practitioner can take on trust: a code cell tagged path-skip, or the
    // whole subsection of one tagged path-skip-section (learner B's third review: "hide the proof cells").
    for (const stop of stops) {
      stop.querySelectorAll(".tag_path-skip").forEach((cell) => hidden.push(cell));
      stop.querySelectorAll(".tag_path-skip-section").forEach((cell) => {
        const section = cell.closest("section");
        if (section && section !== stop && !stops.includes(section)) hidden.push(section);
      });
    }
    for (const section of onWay) {
      for (const child of section.children) {
        if (kept(child)) continue;
        if (child.tagName === "SECTION" && (onWay.has(child) || stops.includes(child))) continue;
        if (child.tagName === "SECTION" && keptBoxIn(child)) {
          hidden.push(...allButBoxes(child));
          hidden.boxOnly.push(child.id);
        }
        else hidden.push(child);
      }
    }
    // A heading left with nothing of its own under it, only a subsection's heading (chapter 12's "The idea" above
    // its first stop: learner B read it as empty), hides too; the chapter's title stays.
    const gone = new Set(hidden);
    for (const section of onWay) {
      const own = [...section.children].filter((c) => !gone.has(c) && c.tagName !== "SECTION");
      const headings = own.filter((c) => /^H[2-6]$/.test(c.tagName));
      if (headings.length > 0 && headings.length === own.length) hidden.push(...headings);
    }
    return hidden;
  }

  // Inside a stop, the evidence a practitioner can take on trust until they ask for it (learner B, 2026-11-30: "the
  // code and printouts are what turn 'about 5 minutes' into 15"): a code cell's source, and a code cell's printout or
  // table; a figure and an explorer stay.
  // A folded printout leaves a marker in its place, a button that shows every printout of the page and scrolls back
  // to this one (otherwise a sentence ending "...:" would lead to nothing).
  function evidenceIn(stops, hidden) {
    const evidence = [];
    evidence.markers = [];
    for (const stop of stops) {
      stop.querySelectorAll("div.cell").forEach((cell) => {
        if (cell.querySelector(".lnlib-web-explorer")) return;
        // code the stop tells its reader to run stays open (learner B, 2026-11-30: chapter 16's last stop
        // discussed "114 of 114 checks" with the check_rms_norm call folded away)
        if (cell.classList.contains("tag_path-show")) return;
        if (hidden.some((el) => el.contains(cell))) return; // a proof the view hides anyway
        const figure = cell.querySelector(".cell_output img"); // (an svg there is a copy button)
        // a figure the page folds (hide-cell) folds with a marker, as a printout does (the truth audit of
        // 2026-11-30: chapter 11's sweep figure vanished from the view without one)
        if (figure && !figure.closest("details")) {
          evidence.push(...cell.querySelectorAll(":scope > .cell_input, :scope > details"));
          return;
        }
        evidence.push(cell);
        const marker = document.createElement("p");
        marker.className = `lnlib-evidence-marker ${OFF}`;
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = figure ? "⋯ code and figure folded: show" : "⋯ code and printout folded: show";
        marker.append(button);
        cell.before(marker);
        evidence.markers.push([button, cell]);
      });
    }
    return evidence;
  }

  function showEvidence(show, state) {
    const folded = state.on && !show;
    state.evidence.forEach((el) => el.classList.toggle(OFF, folded));
    state.evidence.markers.forEach(([button]) => button.parentElement.classList.toggle(OFF, !folded));
    state.evidenceButton.setAttribute("aria-pressed", String(show));
    state.shown = show;
  }

  // The footer's links follow the path in the view (learner B, 2026-11-30: "next" led to a chapter the path skips,
  // and "previous" to one as well): "next" to where the chapter's last stop line says "next:" (or "back to"),
  // "previous" to the stop its first stop line names ("stop 4 of 12, after [...]"); the book's pages when off.
  function pathFooter(root) {
    const lines = [...root.querySelectorAll("p")].filter((p) => STOP.test(text(p)));
    if (!lines.length) return [];
    const next = [...lines[lines.length - 1].querySelectorAll("a[href]")].pop();
    const after = /, after /.test(text(lines[0])) ? lines[0].querySelector("a[href]") : null;
    return [
      footerLink("a.right-next", next, "Next on the practitioner’s path"),
      footerLink("a.left-prev", after, "Previous on the practitioner’s path"),
    ].filter(Boolean);
  }

  function footerLink(selector, target, subtitleText) {
    const footer = document.querySelector(`.prev-next-area ${selector}`);
    if (!target || !footer) return null;
    const title = footer.querySelector(".prev-next-title");
    const subtitle = footer.querySelector(".prev-next-subtitle");
    return {
      footer, title, subtitle,
      book: [footer.getAttribute("href"), title.textContent, subtitle.textContent],
      path: [target.getAttribute("href"), text(target), subtitleText],
    };
  }

  function setFooter(on, links) {
    for (const link of links) {
      const [href, title, subtitle] = on ? link.path : link.book;
      link.footer.setAttribute("href", href);
      link.title.textContent = title;
      link.subtitle.textContent = subtitle;
      link.subtitle.classList.toggle("lnlib-path-next", on); // a sentence: the theme capitalizes each word
    }
  }

  // Where the view hides a chapter's exercises, a line says so and shows the whole chapter (learner B, 2026-11-30:
  // the view, remembered from an earlier visit, made a chapter's exercises look missing).
  function restLine(root, hidden, state) {
    const exercises = root.querySelector("section#exercises");
    if (!exercises || !hidden.includes(exercises)) return null;
    const words = "The practitioner’s view hides the rest of this chapter, its exercises too. ";
    const line = lineWithButton("lnlib-path-rest", words, "Show the whole chapter", () => {
      setView(false, state);
      exercises.scrollIntoView();
    });
    exercises.before(line);
    return line;
  }

  // A line of text ending in a button that runs `onClick`.
  function lineWithButton(className, words, label, onClick) {
    const line = document.createElement("p");
    line.className = className;
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = label;
    button.addEventListener("click", onClick);
    line.append(words, button);
    return line;
  }

  // Whether the view was left on in an earlier page (false where storage is refused).
  function remembered() {
    try {
      return localStorage.getItem(KEY) === "1";
    } catch (error) {
      return false;
    }
  }

  // What the status says of a stop's code: folded, or nothing where no code is left to fold (the truth audit of
  // 2026-11-30: chapters 09 and 16 said "folded" of stops whose one code cell stays open, path-show).
  function foldedClause(state) {
    if (state.evidence.length === 0) return "";
    return `; ${state.count === "one section" ? "the section’s" : "their"} code and printouts are folded`;
  }

  function setView(on, state) {
    state.hidden.forEach((el) => el.classList.toggle(OFF, on));
    // a stop's own line ("The practitioner's path, stop N of 12, ...") shows in the view only (learner B,
    // 2026-11-30: four layers of navigation before a section's first sentence, for a reader of the whole book)
    state.stopLines.forEach((line) => line.classList.toggle(OFF, !on));
    if (state.rest) state.rest.classList.toggle(OFF, !on);
    state.on = on;
    showEvidence(state.shown, state);
    state.evidenceButton.hidden = !on || state.evidence.length === 0;
    setFooter(on, state.footer);
    const ids = new Set(
      [...document.querySelectorAll(`.${OFF}`)].flatMap((el) =>
        [el, ...el.querySelectorAll("[id]")].map((e) => e.id).filter(Boolean),
      ),
    );
    // a section kept only for its "In practice" box leaves the contents too (its heading hides)
    state.boxOnly.forEach((id) => ids.add(id));
    document.querySelectorAll(".page-toc a[href^='#']").forEach((a) => {
      a.closest("li").classList.toggle(OFF, on && ids.has(decodeURIComponent(a.hash.slice(1))));
    });
    // a link in the text to a hidden part says, in view, that it opens the full chapter (learner B, 2026-11-30:
    // "The Jacobian makes this exact" and "(finding 1)" led a reader in a hurry to text the view hid)
    article()
      .querySelectorAll("a[href^='#']")
      .forEach((a) => {
        const leaves = on && ids.has(decodeURIComponent(a.hash.slice(1)));
        a.classList.toggle(LEAVES, leaves);
        if (leaves) a.title = "Opens the full chapter: this part is off the practitioner's path";
        else if (a.title.startsWith("Opens the full chapter")) a.removeAttribute("title");
      });
    state.button.setAttribute("aria-pressed", String(on));
    // off, the line under the title already says what the view keeps: its sentence is for screen readers only
    // (learner B29, 2026-11-30: "four preambles before content, in every chapter")
    state.status.classList.toggle(SAID_ONLY, !on);
    state.status.textContent = on
      ? `${state.remembered ? "On since an earlier page or a stop’s link. " : ""}Showing only the ${state.count} of this chapter on the practitioner's path, and the boxes that sum them up${foldedClause(state)}. The view stays on in the next chapters; this button turns it off.`
      : `Hide everything but the ${state.count} of this chapter on the practitioner's path.`;
    try {
      if (on) localStorage.setItem(KEY, "1");
      else localStorage.removeItem(KEY);
    } catch (error) {
      // storage refused (private mode): the view still works on this page
    }
  }

  // A link into a hidden part turns the view off, then the browser scrolls to it.
  function revealTarget(state) {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id && document.getElementById(id);
    if (state.on && target && target.closest(`.${OFF}`)) {
      setView(false, state);
      state.status.classList.remove(SAID_ONLY); // this sentence says what just happened: shown (truth audit 14)
      state.status.textContent =
        "The link led off the practitioner's path, so the whole chapter shows; this button hides the rest again.";
      target.scrollIntoView();
    }
  }

  // A chapter the path skips, reached with the view on (from the sidebar, say): its practitioner's line names the
  // next stop, and a line under it says the view is on (learner B, 2026-11-30: "no sign that the view is on"). The
  // view hides the chapter below that line, as it hides a stop chapter's rest (learner B18: "renders all of ch10,
  // about 20,000 px on a phone"); one button shows the chapter, the other turns the view off too.
  function skippedChapter(opening, namesTheNextStop = true) {
    if (!remembered()) return;
    const hidden = [];
    for (let el = opening.nextElementSibling; el; el = el.nextElementSibling) hidden.push(el);
    for (let el = opening.parentElement; el && el !== article(); el = el.parentElement) {
      for (let next = el.nextElementSibling; next; next = next.nextElementSibling) hidden.push(next);
    }
    // the page's contents too, which would list hidden sections in a panel cut to the short page (learner B19)
    hidden.push(...document.querySelectorAll(".bd-sidebar-secondary"));
    const show = () => {
      hidden.forEach((el) => el.classList.remove(OFF));
      line.remove();
    };
    const words = "The Practitioner’s view is on, and the path skips this chapter, so the view hides it. ";
    const line = lineWithButton("lnlib-path-skipped", words, "Show the whole chapter", show);
    if (!namesTheNextStop) {
      // a chapter with no practitioner's line (01 to 08, 17) names no stop of its own: link the path's list
      const list = document.createElement("a");
      list.href = "what_to_use_today.html";
      list.textContent = "The path’s stops";
      line.firstChild.after(list, " are on What to use today. ");
    }
    const off = document.createElement("button");
    off.type = "button";
    off.textContent = "Turn the view off";
    off.addEventListener("click", () => {
      try {
        localStorage.removeItem(KEY);
      } catch (error) {
        // storage refused: nothing was remembered
      }
      show();
    });
    line.append(" ", off);
    hidden.forEach((el) => el.classList.add(OFF));
    opening.after(line);
    // a link to a part it hides (the page's contents, another page) shows the chapter, as revealTarget does
    const reveal = () => {
      const id = decodeURIComponent(window.location.hash.slice(1));
      const target = id && document.getElementById(id);
      if (target && target.closest(`.${OFF}`)) {
        show();
        target.scrollIntoView();
      }
    };
    reveal();
    window.addEventListener("hashchange", reveal);
  }

  // A stop's link on What to use today (its checklist's "…, stop N" links and the path's box) opens the chapter in
  // the view (learner B, 2026-11-30: "turn the practitioner's view on by default for readers who enter at What to
  // use today").
  function stopLinksOpenTheView(root) {
    const inPathBox = (a) => {
      const title = a.closest(".admonition")?.querySelector(":scope > .admonition-title");
      return Boolean(title && PATH_BOX.test(text(title)));
    };
    root.querySelectorAll("a[href*='.html']").forEach((a) => {
      if (!STOP_LINK.test(text(a)) && !inPathBox(a)) return;
      const turnOn = () => {
        try {
          localStorage.setItem(KEY, "1");
        } catch (error) {
          // storage refused: the chapter opens whole
        }
      };
      a.addEventListener("click", turnOn);
      a.addEventListener("auxclick", turnOn); // a middle click, to a new tab
    });
  }

  function init() {
    const root = article();
    if (!root) return;
    stopLinksOpenTheView(root);
    const opening = [...root.querySelectorAll("p")].find((p) => OPENING.test(text(p)));
    const stops = stopSections(root);
    if (opening && stops.length === 0) skippedChapter(opening);
    // chapters 01 to 08 and 17 have no practitioner's line: the view, when on, says so under the title as
    // it does in 10 and 14 (learner B44: "chapters 01-08 show in full with no banner at all")
    const title = root.querySelector("h1");
    if (!opening && title && CHAPTER_PAGE.test(window.location.pathname)) skippedChapter(title, false);
    if (!opening || stops.length === 0) return;
    const box = document.createElement("p");
    box.className = "lnlib-path-view";
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = "Practitioner’s view";
    const status = document.createElement("span");
    status.id = "lnlib-path-view-status";
    button.setAttribute("aria-describedby", status.id);
    const evidenceButton = document.createElement("button");
    evidenceButton.type = "button";
    evidenceButton.className = "lnlib-path-evidence";
    evidenceButton.textContent = "Show code and printouts";
    box.append(button, " ", status, " ", evidenceButton);
    opening.after(box);
    const count = stops.length === 1 ? "one section" : `${stops.length} sections`;
    const hidden = offPath(root, stops);
    const evidence = evidenceIn(stops, hidden);
    const state = { hidden, boxOnly: hidden.boxOnly, button, status, count, on: false, evidence, evidenceButton,
                    shown: false, footer: pathFooter(root), stopLines: stopLinesIn(root) };
    button.addEventListener("click", () => setView(!state.on, state));
    evidenceButton.addEventListener("click", () => showEvidence(!state.shown, state));
    evidence.markers.forEach(([marker, cell]) =>
      marker.addEventListener("click", () => {
        showEvidence(true, state);
        cell.scrollIntoView({ block: "center" });
      }),
    );
    state.rest = restLine(root, hidden, state);
    state.remembered = remembered();
    setView(state.remembered, state);
    state.remembered = false;
    revealTarget(state);
    window.addEventListener("hashchange", () => revealTarget(state));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
