"""The website's checker says what the notebook's says, on every exercise of every chapter (Node, no
browser).

Each exercise's plan (lnlib.book.exercises.feedback.Exercise.plan) is the page's data; the page's
interpreter, ``_ext/web_explorers_static/lnlib-exercises.js``, runs in Node on typed answers: the
right answer, each named mistake, both rounded to the digits asked, numpy's printout, a sign flip, a
near miss, a wrong shape, a transpose, arithmetic, True/False, and text it cannot read. Python's
interpreter (lnlib.book.exercises.judge) judges the same answers, read as Python reads them; the two
must agree word for word. Every exercises module is covered, a new chapter's too: its exercises are
found, and built on data drawn from each exercise's domain (lnlib.book.exercises.chapter.domain).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from lnlib.book.exercises import every_chapter
from lnlib.book.exercises.feedback import round_to_digits
from lnlib.book.exercises.judge import judge
from lnlib.book.exercises.web import exercise_data, read_printout

NODE = shutil.which("node")
RUNNER = Path(__file__).with_name("judge_in_node.js")
MALFORMED = ("[1, 2", "two", "1 +")


def literal(value) -> str:
    """`value` as a reader types it with every digit (Python's repr of each float)."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    return repr(np.asarray(value, dtype=np.float64).tolist())


def typed_answers(exercise) -> list[tuple[str, object]]:
    """Answers a reader types (text), each with the value Python reads from it (None:
    unreadable)."""
    plan = exercise.plan()
    if plan["kind"] == "bool":
        return [("True", True), ("False", False), ("0", 0), ("1.5", 1.5), ("true", True)]
    if plan["kind"] == "choice":
        values = [*exercise.choices, 7, *exercise.mistakes.values()]
        return [(literal(v), float(np.asarray(v))) for v in values]
    want = np.asarray(exercise.expected, dtype=np.float64)
    values = [want, *map(np.asarray, exercise.mistakes.values()), *exercise.also_right.values()]
    digits = exercise.asks_digits
    if digits is not None:
        values += [round_to_digits(v, digits) for v in values]
        values += [round_to_digits(want, digits - 1), round_to_digits(want, digits + 2)]
        # a loose mistake (a unit slip) typed with fewer digits than asked
        values += [round_to_digits(exercise.mistakes[s], 2) for s in exercise.loose]
    values += [-want, want * (1 + 3e-3), want + 1.0, np.zeros(want.shape + (2,)), np.round(want, 2)]
    if want.ndim == 2:
        values.append(want.T)
    if want.size > 1:
        values.append(want.ravel()[:-1])
        flat = want.ravel().copy()
        flat[-1] = -flat[-1] + 1.0
        values.append(flat.reshape(want.shape))  # one entry wrong, the others right
        flat[0] = -flat[0] + 1.0
        values.append(flat.reshape(want.shape))  # two wrong: "(at indices 0 and 3)"
    texts = [
        (literal(v), np.asarray(v, dtype=np.float64)) for v in values if np.all(np.isfinite(v))
    ]
    with np.printoptions(threshold=np.inf):
        printed = str(want)
    texts += [(printed, read_printout(printed)), ("sqrt(2)/4", math.sqrt(2) / 4)]
    # numpy's repr, pasted: float16's (chapter 16's answer) carries its dtype
    with np.errstate(over="ignore"):  # beyond float16's range: inf, read as inf
        shown = [repr(want), repr(want.astype(np.float16))]
    texts += [(text, read_printout(text)) for text in shown]
    texts.append(("[1, 2], [3]", [[1, 2], [3]]))  # a ragged pair: no array of numbers
    return texts + [(text, None) for text in MALFORMED]


def cases(seed: int) -> list[tuple[str, int, dict, list[tuple[str, object]]]]:
    """(chapter, k, page data, typed answers) for every exercise, on data drawn with `seed`."""
    found = []
    for exercises in every_chapter():
        for k in range(1, len(exercises) + 1):
            exercise = exercises.exercise(k, **exercises.sample(k, np.random.default_rng(seed)))
            found.append((exercises.chapter, k, exercise_data(exercise), typed_answers(exercise)))
    return found


def in_node(batch: list) -> list[list[str]]:
    if NODE is None:  # CI (.ci/run) installs Debian's nodejs and sets LNBOOK_REQUIRE_BROWSER=1
        if os.environ.get("LNBOOK_REQUIRE_BROWSER") == "1":
            pytest.fail("Node is required here (LNBOOK_REQUIRE_BROWSER=1) but absent")
        pytest.skip("Node is absent: the website's checker is compared where it is (CI)")
    payload = json.dumps(
        [{"plan": data, "texts": [t for t, _ in typed]} for _, _, data, typed in batch]
    )
    done = subprocess.run(
        [NODE, str(RUNNER)], input=payload, capture_output=True, text=True, timeout=300, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_website_judges_every_answer_as_the_notebook_does(seed):
    batch = cases(seed)
    verdicts = in_node(batch)
    assert len(verdicts) == len(batch) >= 40
    for (chapter, k, data, typed), page in zip(batch, verdicts):
        for (text, value), says in zip(typed, page):
            where = f"{chapter}, exercise {k}, typed {text[:60]!r}"
            if value is None:
                assert says.startswith("Not quite: could not read your answer"), (
                    f"{where}: {says!r}"
                )
                continue
            assert says == judge(data, value), (
                f"{where}: page {says!r}, notebook {judge(data, value)!r}"
            )
        assert page[0].startswith(("Correct!", "Not quite")), chapter


def test_the_page_reads_a_right_answer_as_right_and_an_unknown_rule_fails_loudly():
    """The comparison can fail: a plan the page does not know stops it, and a right answer is
    right."""
    exercises = every_chapter()[0]
    exercise = exercises.exercise(1, **exercises.sample(1, np.random.default_rng(0)))
    data = exercise_data(exercise)
    broken = {**data, "rules": [{"test": "looksRight", "say": "Correct!"}]}
    assert in_node([("", 1, data, [(literal(exercise.expected), None)])]) == [["Correct!"]]
    with pytest.raises(subprocess.CalledProcessError):
        in_node([("", 1, broken, [("1", None)])])
