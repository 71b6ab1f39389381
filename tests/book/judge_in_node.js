// The website's checker run by Node on the cases tests/book/test_exercise_checker_node.py writes:
// reads [{plan, texts}] as JSON on stdin, writes each text's verdict, in order, as JSON on stdout.
"use strict";
const path = require("path");
const checker = require(path.join(__dirname, "..", "..", "_ext", "web_explorers_static", "lnlib-exercises.js"));

let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const cases = JSON.parse(input);
  const verdicts = cases.map(({ plan, texts }) => texts.map((text) => checker.feedback(text, plan)));
  process.stdout.write(JSON.stringify(verdicts));
});
