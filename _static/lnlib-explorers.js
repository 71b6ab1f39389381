// The book's explorers on the website (lnlib/widgets/web.py wrote each one's controls and states into
// the page at build time). Moving a control picks the stored setting and swaps the figure's moving
// layer, the readout and the note. Loaded only on pages that hold an explorer (_ext/web_explorers.py).
(() => {
  "use strict";

  function setup(root) {
    const data = JSON.parse(root.querySelector("script.lnlib-web-data").textContent);
    const inputs = [...root.querySelectorAll("[data-lnlib-control]")];
    const outputs = inputs.map((input) => root.querySelector(`output[for="${input.id}"]`));
    const background = root.querySelector(".lnlib-web-background");
    let [shown, spare] = root.querySelectorAll(".lnlib-web-overlay");
    const readout = root.querySelector(".lnlib-readout");
    const note = root.querySelector(".lnlib-note");
    const sweep = data.sweep;
    let ticket = 0;

    const position = (input) => (input.type === "checkbox" ? Number(input.checked) : Number(input.value));
    const labelOf = (i, p) => (sweep && i === 2 ? sweep.labels[position(inputs[1])][p] : data.labels[i][p]);

    function resetSweep() {
      // A new preset or entry: the value slider runs over that entry's grid and starts at the preset's value.
      const entry = position(inputs[1]);
      const range = inputs[2];
      range.max = String(sweep.labels[entry].length - 1);
      range.value = String(sweep.reset[position(inputs[0])][entry]);
      root.querySelector(`label[for="${range.id}"]`).textContent = sweep.names[entry];
    }

    function show(started) {
      let k = 0;
      inputs.forEach((input, i) => { k = k * data.sizes[i] + position(input); });
      const state = data.states[k];
      if (!state) return;
      inputs.forEach((input, i) => {
        if (input.type !== "range") return;
        const text = labelOf(i, position(input));
        input.setAttribute("aria-valuetext", text);
        if (outputs[i]) outputs[i].value = text;
      });
      const [back, layer, text, warning] = state;
      root.dataset.state = String(k);
      readout.innerHTML = data.texts[text];
      note.innerHTML = data.texts[warning];
      const mine = ++ticket;
      const loads = [];
      if (background.dataset.image !== String(back)) {
        background.src = data.images[back];
        background.dataset.image = String(back);
        loads.push(background.decode());
      }
      spare.src = data.images[layer];
      loads.push(spare.decode());
      Promise.all(loads).catch(() => {}).then(() => {
        if (mine !== ticket) return;  // a later move already asked for another setting
        spare.hidden = false;
        shown.hidden = true;
        [shown, spare] = [spare, shown];
        root.dataset.shown = String(k);
        root.dataset.swapMs = (performance.now() - started).toFixed(2);
      });
    }

    inputs.forEach((input, i) => {
      input.addEventListener("input", (event) => {
        if (sweep && i < 2) resetSweep();
        show(event.timeStamp || performance.now());
      });
    });
    background.dataset.image = String(data.states[Number(root.dataset.state)][0]);
    root.dataset.ready = "1";
  }

  function start() {
    document.querySelectorAll(".lnlib-web-explorer").forEach(setup);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
