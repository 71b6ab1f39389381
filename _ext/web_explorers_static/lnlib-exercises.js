/* The exercises on the website: a typed answer judged in the page, offline, by the exercise's plan.
 *
 * Each form (lnlib/book/exercises/web.py) carries its exercise's plan as JSON, computed by lnlib when the
 * book was built: an ordered list of rules (a test, its value and tolerance, the line it says) and a few
 * messages. judge() below is lnlib.book.exercises.judge.judge written in JavaScript, test for test: it
 * knows no exercise and no rule of its own; every rule, tolerance and sentence lives in the plan, built
 * once, in Python. tests/book/test_exercise_checker_node.py runs both on every exercise (Node, no browser).
 * An answer is typed (numbers, lists, True/False, arithmetic) or pasted: numpy's printout of an array
 * (brackets, no commas: read as lnlib.book.exercises.web.read_printout reads it), or bare numbers
 * separated by spaces, commas or line breaks, taken in the expected shape when there are as many.
 * A Hint button shows the plan's hint; after the plan's hintAfter wrong tries it comes unasked.
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

  // numpy's repr, array([...], dtype=float16): read what is inside array( ), its dtype (any name) dropped,
  // as lnlib.book.exercises.web.read_printout does
  const REPR = /^\s*(?:(?:np|numpy)\.)?array\(([\s\S]*?)(?:,\s*dtype\s*=\s*(?:(?:np|numpy)\.)?(?:\w+|'\w+'|"\w+"))?\s*\)\s*$/;
  function readAnswer(typed, d) {
    const wrapped = REPR.exec(typed);
    const text = wrapped ? wrapped[1] : typed;
    if (text.includes("[") && !text.includes(",")) return readPrintout(text);
    const bracketed = /[[\]()]/.test(text);
    // the answer's shape, d.shape (numbers only): bare numbers are taken in it when there are as many
    const want = d.kind === "number" ? { shape: d.shape, size: d.shape.reduce((p, q) => p * q, 1) } : null;
    const fits = (v) => !bracketed && want !== null && want.shape.length > 0 && Array.isArray(v) &&
      v.every((x) => typeof x === "number") && v.length === want.size;
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

  const pyShape = (shape) => (shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`);

  // --- the plan's tests, as lnlib.book.exercises.judge runs them ------------------------------------------
  function within(got, rule, transposed) {  // the rule's value's shape, each entry within its tolerance
    if (got === null) return false;
    if (transposed) {
      if (got.shape.length < 2) return false;
      got = transpose(got);
    }
    const value = asArray(rule.value);
    const tol = asArray(rule.tol);
    if (!sameShape(got, value)) return false;
    return got.flat.every((x, k) => Math.abs(x - value.flat[k]) <= tol.flat[k]);
  }
  const equalArrays = (a, b) => sameShape(a, b) && a.flat.every((x, k) => x === b.flat[k]);
  const TESTS = {
    always: () => true,
    notBool: (rule, answer) => typeof answer !== "boolean",
    equal: (rule, answer) => typeof answer === "boolean" && answer === rule.value,
    notOneOf: (rule, answer, got) => got === null || !rule.values.some((v) => equalArrays(got, asArray(v))),
    within: (rule, answer, got) => within(got, rule, false),
    withinTransposed: (rule, answer, got) =>
      got !== null && String(asArray(rule.value).shape) !== String(got.shape) && within(got, rule, true),
    shapeNot: (rule, answer, got) => got !== null && String(got.shape) !== String(rule.shape),
    notFinite: (rule, answer, got) => got !== null && !got.flat.every(Number.isFinite),
  };
  function fill(line, rule, answer, got, text) {
    const typed = typeof answer === "boolean" ? (answer ? "True" : "False") : text;
    let out = line.replaceAll("{typed}", typed);
    if (got !== null) out = out.replaceAll("{got_shape}", pyShape(got.shape));
    if (out.includes("{differ}")) {
      const value = asArray(rule.value);
      const tol = asArray(rule.tol);
      const off = got.flat.map((x, k) => !(Math.abs(x - value.flat[k]) <= tol.flat[k]));
      const differ = off.filter(Boolean).length;
      out = out.replaceAll("{differ}", String(differ)).replaceAll("{size}", String(got.flat.length));
      out = out.replaceAll("{which}", which(off, got.shape));
    }
    return out;
  }
  // judge.py's _which: where one to three of several entries differ, as numpy indexes them
  function which(off, shape) {
    const spots = off.flatMap((o, k) => (o ? [k] : []));
    if (!(spots.length > 0 && spots.length <= 3) || spots.length === off.length) return "";
    const name = (i) => {
      if (shape.length === 1) return String(i);
      const index = [];
      for (let d = shape.length - 1; d >= 0; d--) {
        index.unshift(i % shape[d]);
        i = Math.floor(i / shape[d]);
      }
      return `(${index.join(", ")})`;
    };
    const names = spots.map(name);
    const listed = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
    return ` (at ${names.length === 1 ? "index" : "indices"} ${listed})`;
  }
  function judge(plan, answer, text) {  // the line of the first rule that holds
    const got = plan.kind === "bool" ? null : asArray(answer);
    if (plan.kind === "number" && got === null) return plan.messages.notNumbers;
    for (const rule of plan.rules) {
      if (!(rule.test in TESTS)) throw new Error(`unknown test ${rule.test}`);
      if (TESTS[rule.test](rule, answer, got)) return fill(rule.say, rule, answer, got, text);
    }
    throw new Error("a plan ends with a rule that always holds");
  }

  // the page's verdict on a typed answer: not answered, not readable, or the plan's
  function feedback(typed, d) {
    const text = typed.trim();
    if (text === "" || text === "None") return d.notAnswered;
    let answer;
    try {
      answer = readAnswer(text, d);
    } catch (error) {
      return d.unreadable.replace("{error}", error.message).replace("{placeholder}", d.placeholder);
    }
    return judge(d, answer, text);
  }

  // --- the forms ------------------------------------------------------------------------------------------
  function kindOf(message) {
    if (message.startsWith("Correct!")) return "correct";
    return message.startsWith("Not quite: ") ? "wrong" : "unanswered";
  }

  // The expected answer, under the solution's code in the fold "Solution to exercise N" after the form (learner
  // A11: a reader without Python could not see the right value after a miss); shown when the fold is opened.
  function showAnswer(form, data) {
    const number = Number(form.dataset.exercise);
    const folds = [...document.querySelectorAll("details")].filter(
      (fold) => form.compareDocumentPosition(fold) & Node.DOCUMENT_POSITION_FOLLOWING);
    const fold = folds.find((candidate) => {
      const title = candidate.querySelector("summary");
      const found = title && /^\s*Solution to exercise (\d+)\b/.exec(title.textContent);
      return found && Number(found[1]) === number;
    });
    if (!fold || !data.answer || fold.querySelector(".lnlib-solution-answer")) return;
    const line = document.createElement("p");
    line.className = "lnlib-solution-answer";
    line.textContent = `The answer, as the check takes it: ${data.answer}.`;
    (fold.querySelector(".sd-summary-content") || fold).appendChild(line);
  }

  function setUp(form) {
    const data = JSON.parse(form.querySelector("script.lnlib-exercise-data").textContent);
    const input = form.querySelector("input, textarea");
    const box = form.querySelector(".lnlib-feedback");
    const hintButton = form.querySelector(".lnlib-exercise-hint-button");
    const hint = form.querySelector(".lnlib-exercise-hint");
    let wrongTries = 0;
    const showHint = () => {
      if (!hint) return;
      hint.textContent = `Hint: ${data.hint}`;
      hint.hidden = false;
      hintButton.setAttribute("aria-expanded", "true");
    };
    if (hintButton) hintButton.addEventListener("click", showHint);
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
      if (kind === "wrong" && ++wrongTries >= data.hintAfter) showHint();
    });
    showAnswer(form, data);
    form.dataset.ready = "1";
  }

  const api = { feedback, judge, readAnswer };
  if (typeof module !== "undefined" && module.exports) module.exports = api;  // Node: the checker's test
  if (typeof document === "undefined") return;
  window.lnlibExerciseFeedback = feedback;  // for the browser tests
  const start = () => document.querySelectorAll("form.lnlib-exercise").forEach(setUp);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
