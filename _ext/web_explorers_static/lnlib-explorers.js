// The book's explorers on the website (lnlib/book/explorers/web.py wrote each one's controls and states into
// the page at build time). Moving a control picks the stored setting and swaps the figure's moving
// layer, the readout and the note. Images of the settings one control move away from the current
// one are decoded ahead, so a move by keyboard or mouse swaps them within the same frame.
// Loaded only on pages that hold an explorer (_ext/web_explorers.py).
(() => {
  "use strict";
  const CACHE = 128;  // decoded images kept per explorer

  function setup(root) {
    const data = JSON.parse(root.querySelector("script.lnlib-web-data").textContent);
    const inputs = [...root.querySelectorAll("[data-lnlib-control]")];
    const outputs = inputs.map((input) => root.querySelector(`output[for="${input.id}"]`));
    const shown = { background: root.querySelector(".lnlib-web-background"), overlay: root.querySelector(".lnlib-web-overlay") };
    const readout = root.querySelector(".lnlib-readout");
    const note = root.querySelector(".lnlib-note");
    const announce = root.querySelector(".lnlib-announce");
    const labels = inputs.map((input) => root.querySelector(`label[for="${input.id}"]`));
    let pause = 0;  // the timer that reads the readout out once the reader pauses
    const sweep = data.sweep;
    const decoded = new Map();  // image index -> {img, done}
    let ticket = 0;
    let pending = 0;  // images being decoded (data-decoding, for tests and benchmarks)

    const position = (input) => (input.type === "checkbox" ? Number(input.checked) : Number(input.value));
    const labelOf = (i, p) => (sweep && i === 2 ? sweep.labels[position(inputs[1])][p] : data.labels[i][p]);
    // a value as read out, with its unit ("12 layers", "1 × 10⁻⁵"): the slider's aria-valuetext
    const spokenOf = (i, p) => (sweep && i === 2 ? sweep.spoken[position(inputs[1])][p] : data.spoken[i][p]);
    const indexOf = (positions) => positions.reduce((k, p, i) => k * data.sizes[i] + p, 0);

    function prepare(id, template) {
      let entry = decoded.get(id);
      if (!entry) {
        const img = template.cloneNode(false);
        img.removeAttribute("data-image");
        img.src = data.images[id];
        entry = { img, done: false };
        pending += 1;
        root.dataset.decoding = String(pending);
        entry.ready = img.decode().then(() => { entry.done = true; }, () => {}).then(() => {
          pending -= 1;
          root.dataset.decoding = String(pending);
        });
        decoded.set(id, entry);
        if (decoded.size > CACHE) decoded.delete(decoded.keys().next().value);
      }
      return entry;
    }

    function place(kind, id, entry) {
      if (shown[kind].dataset.image === String(id)) return;
      entry.img.dataset.image = String(id);
      shown[kind].replaceWith(entry.img);
      shown[kind] = entry.img;
    }

    function prefetch(positions) {
      // Every setting one control away from here, nearest first: any single move, by key or by mouse,
      // then finds its images decoded.
      const order = [];
      positions.forEach((p, i) => {
        const size = sweep && i === 2 ? sweep.labels[positions[1]].length : data.sizes[i];
        for (let q = 0; q < size; q++) if (q !== p) order.push([Math.abs(q - p), i, q]);
      });
      order.sort((a, b) => a[0] - b[0]);
      for (const [, i, q] of order.slice(0, CACHE / 2)) {
        const next = positions.map((r, j) => (j === i ? q : r));
        if (sweep && i < 2) next[2] = sweep.reset[next[0]][next[1]];  // a new preset or entry starts at its value
        const state = data.states[indexOf(next)];
        if (state) { prepare(state[0], shown.background); prepare(state[1], shown.overlay); }
      }
    }

    function resetSweep() {
      // A new preset or entry: the value slider runs over that entry's grid and starts at the preset's value.
      const entry = position(inputs[1]);
      const range = inputs[2];
      range.max = String(sweep.labels[entry].length - 1);
      range.value = String(sweep.reset[position(inputs[0])][entry]);
      root.querySelector(`label[for="${range.id}"]`).textContent = sweep.names[entry];
      range.setAttribute("aria-label", sweep.whats[entry]);  // its accessible name: what it now moves
    }

    function setting() {  // "ε = 1 × 10⁻⁵, spread s = 1 × 10⁻²": what the controls say now, with units
      return inputs.map((input, i) => {
        const value = input.type === "checkbox" ? (input.checked ? "on" : "off")
          : input.tagName === "SELECT" ? input.options[input.selectedIndex].text : spokenOf(i, position(input));
        return `${labels[i].textContent} = ${value}`;
      }).join(", ");
    }

    function describe() {
      // The figure's alt text says which setting it shows; the live region reads the new readout out,
      // once, after the reader pauses (a slider's every step would otherwise be announced).
      const now = setting();
      shown.background.alt = `${root.dataset.title}: the figure at ${now}; the numbers are in the readout below.`;
      clearTimeout(pause);
      pause = setTimeout(() => { announce.textContent = `${now}. ${readout.textContent.trim()}`; }, 400);
    }

    function show(started) {
      const positions = inputs.map(position);
      const k = indexOf(positions);
      const state = data.states[k];
      if (!state) return;
      inputs.forEach((input, i) => {
        if (input.type !== "range") return;
        input.setAttribute("aria-valuetext", spokenOf(i, positions[i]));
        if (outputs[i]) outputs[i].value = labelOf(i, positions[i]);
      });
      const [back, layer, text, warning, inactive] = state;
      root.dataset.state = String(k);
      inputs.forEach((input, i) => { input.disabled = inactive.includes(i); });  // no effect here: the readout says why
      readout.innerHTML = data.texts[text];
      note.innerHTML = data.texts[warning];
      const mine = ++ticket;
      const parts = [["background", back, prepare(back, shown.background)], ["overlay", layer, prepare(layer, shown.overlay)]];
      const finish = () => {
        if (mine !== ticket) return;  // a later move already asked for another setting
        parts.forEach(([kind, id, entry]) => place(kind, id, entry));
        root.dataset.shown = String(k);
        root.dataset.swapMs = (performance.now() - started).toFixed(2);
        describe();
      };
      if (parts.every(([, , entry]) => entry.done)) finish();
      else Promise.all(parts.map(([, , entry]) => entry.ready)).then(finish);
      prefetch(positions);
    }

    // A sweep moves one entry at a time from a preset: picking another entry puts the one moved back at
    // the preset's value, and a line under the readout says so (learner A13: "a second move silently
    // undoes the first"). While an entry is off its preset's value, the line says the preset's name no
    // longer describes the input (learner B52: "dy ∝ x̂" still showed after x4 moved).
    let entryShown = sweep ? position(inputs[1]) : null;
    let presetShown = sweep ? position(inputs[0]) : null;
    const presetName = () => inputs[0].options[inputs[0].selectedIndex].text;
    function sayReset(i) {
      let line = root.querySelector(".lnlib-web-reset");
      const before = entryShown;
      const moved = i === 1 && position(inputs[2]) !== sweep.reset[presetShown][before];
      entryShown = position(inputs[1]);
      presetShown = position(inputs[0]);
      const off = i === 2 && position(inputs[2]) !== sweep.reset[presetShown][entryShown];
      if (!moved && !off) {
        if (line) line.remove();
        return;
      }
      if (!line) {
        line = document.createElement("p");
        line.className = "lnlib-web-reset";
        line.setAttribute("role", "status");
        readout.after(line);
      }
      line.textContent = moved
        ? `${sweep.names[before]} is back at the preset's value: on this page each entry ` +
          "moves alone from a preset (in the notebook, moves add up)."
        : `${sweep.names[entryShown]} is off the preset's value: “${presetName()}” names the preset, ` +
          "not this input.";
    }

    inputs.forEach((input, i) => {
      input.addEventListener("input", () => {
        const started = performance.now();
        if (sweep) sayReset(i);
        if (sweep && i < 2) resetSweep();
        show(started);
      });
    });
    const first = data.states[Number(root.dataset.state)];
    shown.background.dataset.image = String(first[0]);
    shown.overlay.dataset.image = String(first[1]);
    decoded.set(first[0], { img: shown.background, done: true, ready: Promise.resolve() });
    decoded.set(first[1], { img: shown.overlay, done: true, ready: Promise.resolve() });
    prefetch(inputs.map(position));
    root.dataset.ready = "1";
  }

  function start() {
    document.querySelectorAll(".lnlib-web-explorer").forEach(setup);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
