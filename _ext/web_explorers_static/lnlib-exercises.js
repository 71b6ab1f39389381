/* The exercises on the website: a typed answer judged in the page, offline, as the notebook judges it.
 *
 * Each form (lnlib/book/exercises/web.py) carries its exercise as JSON, computed by lnlib when the book
 * was built: the expected answer, the tolerances, the hint and the answers of the named mistakes.
 * feedback() below is lnlib.book.exercises.feedback.feedback written again in JavaScript, message for
 * message; tests/browser/test_web_exercises.py compares the two on every exercise of the book.
 * An answer is typed (numbers, lists, True/False, arithmetic) or pasted: numpy's printout of an array
 * (brackets, no commas: read as lnlib.book.exercises.web.read_printout reads it), or bare numbers
 * separated by spaces, commas or line breaks, taken in the expected shape when there are as many.
 */
(() => {
  "use strict";

  // --- reading an answer: numbers, lists, True/False, and arithmetic such as sqrt(7/8) or 1/3 ---------
  const FUNCTIONS = { sqrt: Math.sqrt, exp: Math.exp, log: Math.log, abs: Math.abs };
  // true and false as well as Python's True and False: a reader on a page types either
  const CONSTANTS = { pi: Math.PI, e: Math.E, nan: NaN, inf: Infinity, True: true, False: false, true: true, false: false };
  const NUMBER = /\s*(?:(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([A-Za-z_][A-Za-z_0-9.]*)|(\*\*|[-+*/^(),[\]]))/y;

  function tokenize(text) {
    const tokens = [];
    let at = 0;
    while (at < text.length) {
      NUMBER.lastIndex = at;
      const m = NUMBER.exec(text);
      if (!m) throw new Error(`cannot read "${text.slice(at).trim().slice(0, 12)}"`);
      tokens.push(m[1] !== undefined ? { number: Number(m[1]) } : m[2] !== undefined ? { name: m[2] } : { op: m[3] });
      at = NUMBER.lastIndex;
      if (text.slice(at).trim() === "") break;
    }
    return tokens;
  }

  const num = (v) => (typeof v === "boolean" ? Number(v) : v);
  function apply(f, v) { return Array.isArray(v) ? v.map((x) => apply(f, x)) : f(num(v)); }
  function combine(a, b, f) {
    if (Array.isArray(a) || Array.isArray(b)) throw new Error("arithmetic on lists is not read here: type the numbers");
    return f(num(a), num(b));
  }

  function parse(text) {
    const tokens = tokenize(text.trim());
    let i = 0;
    const peek = () => tokens[i] || {};
    const take = (op) => { if (peek().op !== op) throw new Error(`expected "${op}"`); i += 1; };
    function list(close) {  // [a, b, ...] or (a, b, ...): a trailing comma is allowed, as in Python
      const items = [];
      while (peek().op !== close) {
        items.push(sum());
        if (peek().op === ",") i += 1; else break;
      }
      take(close);
      return items;
    }
    function atom() {
      const t = tokens[i++] || {};
      if (t.number !== undefined) return t.number;
      if (t.op === "[") return list("]");
      if (t.op === "(") {
        const start = i;
        const items = list(")");
        const tuple = items.length !== 1 || tokens[i - 2].op === ",";
        return tuple || i - start === 1 ? items : items[0];
      }
      if (t.name !== undefined) {
        const name = t.name.replace(/^(np|numpy|math)\./, "");
        if (name === "array" || name === "asarray") { take("("); const v = sum(); take(")"); return v; }
        if (name in FUNCTIONS) { take("("); const v = sum(); take(")"); return apply(FUNCTIONS[name], v); }
        if (name in CONSTANTS) return CONSTANTS[name];
        throw new Error(`unknown name "${t.name}"`);
      }
      throw new Error("incomplete answer");
    }
    function power() {
      const base = atom();
      if (peek().op === "**" || peek().op === "^") { i += 1; return combine(base, unary(), (a, b) => a ** b); }
      return base;
    }
    function unary() {
      if (peek().op === "-") { i += 1; return apply((a) => -a, unary()); }
      if (peek().op === "+") { i += 1; return unary(); }
      return power();
    }
    function product() {
      let value = unary();
      while (peek().op === "*" || peek().op === "/") {
        const op = tokens[i++].op;
        value = combine(value, unary(), op === "*" ? (a, b) => a * b : (a, b) => a / b);
      }
      return value;
    }
    function sum() {
      let value = product();
      while (peek().op === "+" || peek().op === "-") {
        const op = tokens[i++].op;
        value = combine(value, product(), op === "+" ? (a, b) => a + b : (a, b) => a - b);
      }
      return value;
    }
    const items = [sum()];  // a, b at the top level is a tuple in Python: read it as a list
    while (peek().op === "," && i + 1 < tokens.length) { i += 1; items.push(sum()); }
    if (peek().op === ",") i += 1;
    if (i !== tokens.length) throw new Error("unexpected text after the answer");
    return items.length === 1 ? items[0] : items;
  }

  // numpy's printout, print(a): numbers separated by spaces and line breaks, nested in brackets, no commas
  const PRINTED = /\s*(\[|\]|[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf)|True|False)/y;
  function readPrintout(text) {
    const tokens = [];
    let at = 0;
    while (text.slice(at).trim() !== "") {
      PRINTED.lastIndex = at;
      const m = PRINTED.exec(text);
      if (!m) throw new Error(`cannot read "${text.slice(at).trim().slice(0, 12)}"`);
      tokens.push(m[1]);
      at = PRINTED.lastIndex;
    }
    let i = 0;
    function value() {
      if (i >= tokens.length) throw new Error("incomplete answer");
      const t = tokens[i++];
      if (t === "]") throw new Error('unexpected "]"');
      if (t !== "[") return t === "True" ? true : t === "False" ? false : Number(t.replace("inf", "Infinity").replace("nan", "NaN"));
      const items = [];
      while (i < tokens.length && tokens[i] !== "]") items.push(value());
      if (i >= tokens.length) throw new Error('expected "]"');
      i += 1;
      return items;
    }
    const v = value();
    if (i !== tokens.length) throw new Error("unexpected text after the answer");
    return v;
  }

  // bare numbers, "1 2 3" or "1, 2, 3" or row by row: taken in the expected shape when there are as many
  const BARE = /^[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf)$/;
  function readBare(text) {
    const items = text.split(/[\s,]+/).filter((t) => t !== "");
    if (items.length < 2 || !items.every((t) => BARE.test(t))) return null;
    return items.map((t) => Number(t.replace("inf", "Infinity").replace("nan", "NaN")));
  }
  function inShape(flat, shape) {  // numpy's reshape: the last axis fastest
    if (shape.length === 0) return flat[0];
    const step = flat.length / shape[0];
    return Array.from({ length: shape[0] }, (_, k) => inShape(flat.slice(k * step, (k + 1) * step), shape.slice(1)));
  }

  function readAnswer(text, d) {
    if (text.includes("[") && !text.includes(",")) return readPrintout(text);
    const bracketed = /[[\]()]/.test(text);
    const want = d.kind === "number" ? asArray(d.expected) : null;
    const fits = (v) => !bracketed && want !== null && want.shape.length > 0 && Array.isArray(v) &&
      v.every((x) => typeof x === "number") && v.length === want.flat.length;
    const bare = bracketed ? null : readBare(text);
    if (fits(bare)) return inShape(bare, want.shape);  // "0.5 -0.3" for two numbers: two numbers, not 0.2
    let answer;
    try {
      answer = parse(text);
    } catch (error) {
      answer = bare;
      if (answer === null) throw error;
    }
    return fits(answer) ? inShape(answer, want.shape) : answer;
  }

  // --- arrays as numpy sees them: a shape and the values in order -------------------------------------
  function asArray(value) {  // null unless a rectangular nest of numbers (np.asarray(..., float64))
    if (!Array.isArray(value)) {
      return typeof value === "number" || typeof value === "boolean" ? { shape: [], flat: [num(value)] } : null;
    }
    if (value.length === 0) return { shape: [0], flat: [] };
    const parts = value.map(asArray);
    if (parts.some((p) => p === null || String(p.shape) !== String(parts[0].shape))) return null;
    return { shape: [value.length, ...parts[0].shape], flat: parts.flatMap((p) => p.flat) };
  }
  const sameShape = (a, b) => String(a.shape) === String(b.shape);
  const close = (a, b, rtol, atol) =>
    sameShape(a, b) && a.flat.every((x, k) => Math.abs(x - b.flat[k]) <= atol + rtol * Math.abs(b.flat[k]));
  function transpose(a) {  // numpy's .T: the axes reversed
    const n = a.shape.length;
    if (n < 2) return a;
    const shape = [...a.shape].reverse();
    const strides = a.shape.map((_, k) => a.shape.slice(k + 1).reduce((p, q) => p * q, 1));
    const flat = [];
    const index = new Array(n).fill(0);  // an index into the transposed array, last axis fastest
    for (let count = 0; count < a.flat.length; count += 1) {
      flat.push(a.flat[index.reduce((s, v, k) => s + v * strides[n - 1 - k], 0)]);
      for (let k = n - 1; k >= 0; k -= 1) { index[k] += 1; if (index[k] < shape[k]) break; index[k] = 0; }
    }
    return { shape, flat };
  }

  // --- Python's formatting of numbers and shapes ---------------------------------------------------------
  const pyShape = (shape) => (shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`);
  function pyExp(x, digits) {  // format(x, ".{digits}e")
    const [mantissa, exponent] = x.toExponential(digits).split("e");
    const e = Number(exponent);
    return `${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  const trimZeros = (s) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  function pyG(x, precision) {  // format(x, ".{precision}g")
    if (x === 0) return "0";
    if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
    const exponent = Number(x.toExponential(precision - 1).split("e")[1]);
    if (exponent < -4 || exponent >= precision) {
      const [m, e] = pyExp(x, precision - 1).split("e");
      return `${trimZeros(m)}e${e}`;
    }
    return trimZeros(x.toFixed(Math.max(0, precision - 1 - exponent)));
  }

  // --- the feedback, as lnlib.book.exercises.feedback.feedback words it -------------------------------
  function feedback(typed, d) {
    const text = typed.trim();
    if (text === "" || text === "None") return d.notAnswered;
    const wrong = (reason) => `Not quite: ${reason}. ${d.hint}`.trimEnd();
    let answer;
    try {
      answer = readAnswer(text, d);
    } catch (error) {
      return `Not quite: could not read your answer (${error.message}). Type ${d.placeholder}.`;
    }
    if (d.kind === "bool") {
      if (typeof answer !== "boolean") return `Not quite: answer with True or False; got ${text}.`;
      return answer === d.expected ? "Correct!" : wrong(`${answer ? "True" : "False"} is not right`);
    }
    const got = asArray(answer);
    if (d.kind === "choice") {
      const equal = (a, b) => a !== null && sameShape(a, b) && a.flat.every((x, k) => x === b.flat[k]);
      if (!d.choices.some((c) => equal(got, asArray(c)))) {
        return `Not quite: answer with one of ${d.choiceLabels.join(", ")}; got ${text}.`;
      }
      if (!equal(got, asArray(d.expected))) {
        return wrong(namedMistake(got, d) || `${text} is one of the choices, but not the right one`);
      }
      return "Correct!";
    }
    if (got === null) return "Not quite: expected a number or an array of numbers, got list.";
    const want = asArray(d.expected);
    const right = (d.alsoRight || []).find(([, value]) => close(got, asArray(value), d.rtol, d.atol));
    if (right) return `Correct! ${right[0]}.`;
    const named = namedMistake(got, d);
    if (named !== null && !close(got, want, d.rtol, d.atol)) return wrong(named);
    if (!sameShape(got, want)) {
      const flipped = transpose(got);
      if (got.flat.length === want.flat.length && sameShape(flipped, want) && close(flipped, want, d.rtol, d.atol)) {
        return wrong(`the values are right but transposed: expected shape ${pyShape(want.shape)}, got ${pyShape(got.shape)}`);
      }
      return wrong(`expected shape ${pyShape(want.shape)}, got shape ${pyShape(got.shape)}`);
    }
    if (!got.flat.every(Number.isFinite)) {
      return wrong("your answer contains nan or inf: a division by zero, or a square root of a negative number?");
    }
    if (close(got, want, d.rtol, d.atol)) return "Correct!";
    const negated = { shape: got.shape, flat: got.flat.map((x) => -x) };
    if (want.flat.some((x) => x !== 0) && close(negated, want, d.rtol, d.atol)) return wrong("the sign is flipped");
    if (typedAnswer(got, want, d)) return "Correct!";
    // typed with a few digits: "give more digits" when they fit the answer and a known mistake alike; a
    // mistake is named only when the answer is d.nearer times nearer to it than to the expected value
    const unsure = d.bools || d.integer ? null : tooCoarse(got, want, d);
    if (unsure !== null) return wrong(unsure);
    const rounded = nearerMistake(got, want, d);
    if (rounded !== null) return wrong(rounded);
    if (d.bools) return wrong(`${got.flat.filter((x, k) => x !== want.flat[k]).length} of ${want.flat.length} answers are not right`);
    if (d.integer && got.flat.length === 1) return wrong(`${pyG(got.flat[0], 6)} is not the expected count`);
    return wrong(howFar(got, want, d.epsilon));
  }

  // the answer typed with fewer digits: within d.rounded of it, every known mistake d.nearer times farther away
  function typedAnswer(got, want, d) {
    if (d.bools || d.integer || !close(got, want, d.rounded, d.atol)) return false;
    const gap = Math.max(...got.flat.map((x, k) => Math.abs(x - want.flat[k])));
    return d.mistakes.every(([, value]) => {
      const mistaken = asArray(value);
      if (mistaken === null || !sameShape(mistaken, got)) return true;
      return Math.max(...got.flat.map((x, k) => Math.abs(x - mistaken.flat[k]))) > d.nearer * gap;
    });
  }

  // half a unit in the last digit of x as typed (5.4: 0.05), from its shortest form, as Python's repr
  function halfDigit(x) {
    if (x === 0 || !Number.isFinite(x)) return 0;
    const [mantissa, exponent] = Math.abs(x).toExponential().split("e");
    const last = Number(exponent) - (mantissa.split(".")[1] || "").length;
    return Number(`5e${last - 1}`);
  }
  // whether target rounds to got at the digits got was typed with, entry by entry
  function roundingFits(got, target) {
    if (target === null || !sameShape(got, target)) return false;
    return got.flat.every((x, k) => Math.abs(x - target.flat[k]) <= halfDigit(x) * (1 + 1e-9));
  }
  function tooCoarse(got, want, d) {
    if (!roundingFits(got, want)) return null;
    const fitting = d.mistakes.filter(([, value]) => roundingFits(got, asArray(value))).map(([sentence]) => sentence);
    if (!fitting.length) return null;
    return "close, but give more digits or the exact expression: at the digits you typed, your answer " +
      `also fits a known mistake, “${fitting.join("; or ")}”`;
  }
  const largestGap = (a, b) => Math.max(...a.flat.map((x, k) => Math.abs(x - b.flat[k])));
  // a mistake within d.rounded of the answer typed, and d.nearer times nearer to it than to the expected value
  function nearerMistake(got, want, d) {
    const gap = largestGap(got, want);
    const named = d.mistakes.filter(([, value]) => {
      const mistaken = asArray(value);
      return close(got, mistaken, d.rounded, d.atol) && d.nearer * largestGap(got, mistaken) <= gap;
    }).map(([sentence]) => sentence);
    return named.length ? named.join("; or ") : null;
  }

  function namedMistake(got, d) {
    if (got === null) return null;
    const named = d.mistakes.filter(([, value]) => close(got, asArray(value), d.rtol, d.atol)).map(([sentence]) => sentence);
    return named.length ? named.join("; or ") : null;  // two mistakes can give one number: name both
  }

  function howFar(got, want, epsilon) {
    const gaps = got.flat.map((x, k) => Math.abs(x - want.flat[k]));
    const worst = Math.max(...gaps);
    const scale = Math.max(...want.flat.map(Math.abs));
    if (scale > 0 && worst / scale < 1e-2) {
      return `close, but not within the tolerance: off by ${pyExp(worst / scale, 1)} of the answer's size. ` +
        (epsilon ? "Give more digits or the exact expression (e.g. sqrt(5 + 1e-5)), or look for a small term missing or extra (an ε?)"
          : "Give more digits or the exact expression (e.g. sqrt(2)/4)");
    }
    if (want.flat.length === 1) return `${pyG(got.flat[0], 6)} is not the expected value`;
    const differ = gaps.filter((g, k) => !(g <= 1e-8 + 1e-5 * Math.abs(want.flat[k]))).length;
    return `${differ} of ${want.flat.length} entries differ from the expected answer (the largest by ${pyG(worst, 3)})`;
  }

  // --- the forms ------------------------------------------------------------------------------------------
  function kindOf(message) {
    if (message.startsWith("Correct!")) return "correct";
    return message.startsWith("Not quite: ") ? "wrong" : "unanswered";
  }

  function setUp(form) {
    const data = JSON.parse(form.querySelector("script.lnlib-exercise-data").textContent);
    const input = form.querySelector("input, textarea");
    const box = form.querySelector(".lnlib-feedback");
    input.addEventListener("keydown", (event) => {  // in the multi-line box Enter breaks the line: Ctrl+Enter checks
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); form.requestSubmit(); }
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const message = feedback(input.value, data);
      const kind = kindOf(message);
      box.className = `lnlib-feedback lnlib-feedback-${kind}`;
      box.style.borderLeftColor = data.edges[kind];
      box.textContent = message;
    });
    form.dataset.ready = "1";
  }

  window.lnlibExerciseFeedback = feedback;  // for the browser tests, which compare it with Python's
  const start = () => document.querySelectorAll("form.lnlib-exercise").forEach(setUp);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
