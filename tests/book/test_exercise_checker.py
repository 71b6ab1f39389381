"""The exercise checker on data a reader may choose: every exercise, its digits, its hints, graded
mode.

Every exercise of every chapter module is built on many draws from its domain
(lnlib.book.exercises.chapter.domain): the right answer and the answer rounded to the digits asked
are right, each named mistake is named (typed exactly, or rounded, unless at those digits it is the
right answer too), and no answer a reader may type makes the checker raise. A verdict never holds
the hint (the recipe) nor the expected value; the hint comes when asked, or with the third wrong
try, and never in graded mode (the course edition).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest

from lnlib.book.exercises import every_chapter
from lnlib.book.exercises.feedback import HINT_AFTER, Exercise, Feedback, round_to_digits
from lnlib.book.exercises.judge import _which, judge

EXERCISES = [(ex, k) for ex in every_chapter() for k in range(1, len(ex) + 1)]
IDS = [f"{ex.chapter}-{k}" for ex, k in EXERCISES]
SEEDS = range(6)
ODD_ANSWERS = [
    "two",
    [[1, 2], [3]],
    np.nan,
    [np.inf, 1.0],
    1e308,
    -0.0,
    True,
    [],
    np.zeros((2, 0)),
    1j,
    {"a": 1},
]


def rounding_window(value, digits) -> np.ndarray:
    """Half a unit in the `digits`-th significant digit of each entry (computed here, not by the
    checker)."""
    value = np.abs(np.asarray(value, dtype=np.float64))
    return np.array(
        [0.5 * 10 ** (math_floor_log10(v) - digits + 1) if v else 0 for v in value.ravel()]
    )


def math_floor_log10(v: float) -> int:
    return int(np.floor(np.log10(v)))


def same_at(a, b, digits) -> bool:
    """Whether `a` and `b` are one answer at `digits` significant digits (their rounding windows
    meet)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    window = rounding_window(b, digits).reshape(b.shape) + rounding_window(a, digits).reshape(
        a.shape
    )
    return bool(np.all(np.abs(a - b) <= window * 1.01 + 1e-9))


@pytest.mark.parametrize("exercises, k", EXERCISES, ids=IDS)
def test_every_exercise_takes_data_from_its_domain_and_judges_them(exercises, k):
    builder = exercises.builders[k - 1]
    takes_data = bool(inspect.signature(builder).parameters)
    assert takes_data == hasattr(builder, "domain"), (
        f"{exercises.chapter}, exercise {k}: declare the data a reader may choose, "
        "@domain(lambda rng: {...}) (lnlib.book.exercises.chapter.domain)"
    )
    for seed in SEEDS if takes_data else [0]:
        data = exercises.sample(k, np.random.default_rng(seed))
        exercise = exercises.exercise(k, **data)
        where = f"{exercises.chapter} {k}, seed {seed}"
        assert exercise.feedback(exercise.expected) == "Correct!", where
        digits = exercise.asks_digits
        if digits is not None:
            line = exercise.feedback(round_to_digits(exercise.expected, digits))
            right = [exercise.expected, *exercise.also_right.values()]
            near = [
                s for s, v in exercise.mistakes.items() if same_at(v, exercise.expected, digits)
            ]
            assert line.startswith("Correct!") or any(s in line for s in near), f"{where}: {line}"
        for sentence, value in exercise.mistakes.items():
            if (
                not np.all(np.isfinite(value))
                or exercise.feedback(value) == "Correct!"
                and (
                    np.shape(value) == np.shape(exercise.expected)
                    and np.allclose(
                        value, exercise.expected, rtol=exercise.rtol, atol=exercise.atol
                    )
                )
            ):
                continue  # not finite, or on these data the mistake gives the right answer
            line = exercise.feedback(value)
            assert sentence in line and line.startswith("Not quite: "), f"{where}: {line}"
            if digits is not None:
                line = exercise.feedback(round_to_digits(value, digits))
                indistinct = any(same_at(value, r, digits) for r in right)
                twins = [s for s, v in exercise.mistakes.items() if same_at(value, v, digits)]
                assert (
                    sentence in line
                    or (indistinct and line.startswith("Correct!"))
                    or any(twin in line for twin in twins)
                ), f"{where}, {sentence!r} rounded: {line}"
        for answer in ODD_ANSWERS + [np.asarray(exercise.expected, dtype=float) * 2 + 1]:
            line = exercise.feedback(answer)
            assert line.startswith(("Correct!", "Not quite: ")), f"{where}: {line}"
            assert not exercise.hint or exercise.hint not in line, f"{where}: the recipe in {line}"


def test_a_verdict_never_quotes_the_expected_value():
    exercise = Exercise(2.71828, mistakes={"the sum": 5.0}, hint="add them")
    for answer in (2.6, [2.7, 1.0], 5.0, 9.0, 2.7182):
        line = exercise.feedback(answer)
        assert "2.71" not in line and "add them" not in line, line


@pytest.mark.parametrize(
    "typed, says",
    [
        ([-1.34, -0.267, 0.535, -2.76], "Correct!"),  # three significant digits
        ([-1.3416, -0.2673, 0.5345, -2.7558], "Correct!"),  # four decimals
        ([-1.34, -0.267, 0.535, 2.76], "Not quite: 1 of 4 entries differ"),  # one sign wrong
        (
            [-1.34, -0.27, 0.53, -2.76],
            "Not quite: close, but not right to the three significant digits",
        ),
    ],
)
def test_an_answer_at_the_digits_asked_is_right_and_a_count_of_wrong_entries_is_true(typed, says):
    """A reader's finding (chapter 09): three of four entries right to the digits typed, the
    fourth's sign wrong, was told "4 of 4 entries differ"."""
    exercise = Exercise(np.array([-1.341641, -0.267261, 0.534522, -2.755760]), rtol=1e-9)
    assert exercise.feedback(typed).startswith(says), exercise.feedback(typed)


def test_digits_are_asked_of_numbers_only_and_a_count_is_exact():
    assert Exercise(0.5).asks_digits == 3 and Exercise(0.5, digits=5).asks_digits == 5
    assert Exercise(np.int64(4)).asks_digits is None and Exercise(True).asks_digits is None
    count = Exercise(np.int64(100352))
    assert count.feedback(100300) == "Not quite: that is not the expected count."
    assert Exercise(1000, choices=(10, 100, 1000)).asks_digits is None


def test_chapter_10_exercise_1_with_six_channels_is_judged_not_crashed():
    """A student's finding: 6 channels made a mistake built for 4 groups raise, a traceback showing
    the expected answer."""
    from lnlib.book.exercises.family import exercises

    acts = np.random.default_rng(7).normal(size=(2, 6, 3))
    right = exercises.exercise(1, acts=acts).expected
    assert str(exercises.check(1, right, acts=acts)) == "Correct!"
    odd = np.random.default_rng(7).normal(size=(2, 5, 3))  # 5 channels: no 2 groups
    line = str(exercises.check(1, right, acts=odd))
    assert line.startswith("Not quite: the checker cannot build exercise 1 from these data"), line
    assert "Traceback" not in line and "group_norm" not in line


def test_hints_come_when_asked_or_with_the_third_wrong_try_and_never_when_graded():
    from lnlib.book.exercises.chapter import Exercises, variant

    exercises = Exercises("00_demo", lambda x: Exercise(x.mean(), hint="sum, then divide by H"))
    x = np.array([1.0, 2.0, 6.0])
    lines = [str(exercises.check(1, 0.5, x=x)) for _ in range(HINT_AFTER)]
    assert all("sum, then divide" not in line for line in lines[:-1]), lines
    assert "exercises.hint(1)" in lines[0]
    assert lines[-1].endswith("Hint: sum, then divide by H"), lines[-1]
    assert exercises.check(1, 0.5, x=x).kind == "wrong"
    assert str(exercises.hint(1)) == "Hint: sum, then divide by H"
    graded = Exercises("00_demo", variant(lambda rng: {"x": x})(mean_with_hint))
    graded.graded = True
    lines = [str(graded.check(1, 0.5, x=x)) for _ in range(HINT_AFTER + 1)]
    assert all(re.fullmatch(r"Not correct: [^\n]*\.", line) for line in lines), lines
    assert graded.check(1, 0.5, x=x).kind == "wrong"
    assert str(graded.check(1, 1j, x=x)).startswith("Not correct: ")  # never an error
    assert "divide" not in str(graded.hint(1))
    assert (
        isinstance(graded.check(1, 3.0, x=x), Feedback)
        and graded.check(1, 3.0, x=x).kind == "correct"
    )
    # a practice exercise (no per-student data) keeps its hints in the course edition
    practice = Exercises("00_demo", lambda x: Exercise(x.mean(), hint="sum, then divide by H"))
    practice.graded = True
    assert "exercises.hint(1)" in str(practice.check(1, 0.5, x=x))
    assert str(practice.hint(1)) == "Hint: sum, then divide by H"
    # nor does graded mode show a graded exercise's expected answer and hint (the student review,
    # 2026-11-29: exercises.exercise(1, ...) in a scratch cell printed both); practice keeps them
    with pytest.raises(PermissionError, match=r"exercises\.check\(1"):
        graded.exercise(1, x=x)
    assert practice.exercise(1, x=x).expected == x.mean()


def mean_with_hint(x):
    return Exercise(x.mean(), hint="sum, then divide by H")


def test_a_stuck_graded_student_is_sent_to_the_section_never_given_the_recipe():
    """The student review (2026-11-29, sixth): graded feedback said less than practice feedback; a
    student stuck on a mistake the checker does not name got no direction at all."""
    from lnlib.book.exercises.chapter import Exercises, NotPassed, rests_on, variant

    x = np.array([1.0, 2.0, 6.0])
    builder = rests_on("The idea")(variant(lambda rng: {"x": x})(mean_with_hint))
    graded = Exercises("00_demo", builder)
    graded.graded = True
    lines = [str(graded.check(1, 0.5, x=x)) for _ in range(HINT_AFTER)]
    assert all("§" not in line for line in lines[:-1]), lines
    assert lines[-1].endswith("Stuck? Reread § The idea: this exercise practises it."), lines[-1]
    assert all("divide" not in line for line in lines), lines
    assert "§ The idea" in str(graded.hint(1)) and "divide" not in str(graded.hint(1))
    # the graded test cell checks again the answer its answer cell checked: not a second try
    # (the student review, 2026-11-29: "Stuck?" came at the second wrong answer)
    fresh = Exercises("00_demo", builder)
    fresh.graded = True
    for _ in range(HINT_AFTER - 1):
        assert "§" not in str(fresh.check(1, 0.5, x=x))
        with pytest.raises(NotPassed):
            fresh.test(1, 0.5, x=x)
    assert "§ The idea" in str(fresh.check(1, 0.5, x=x))


def test_a_typed_in_answer_is_no_try(monkeypatch):
    """The student review (2026-11-29, sixteenth session): a typed-in wrong number counted toward
    "Stuck?", which the README promises at the third wrong answer computed from the data."""
    from lnlib.book.exercises import chapter
    from lnlib.book.exercises.chapter import Exercises, rests_on, variant

    x = np.arange(1.0, 9.0)  # more numbers than are worked by hand: a typed answer is refused
    builder = rests_on("The idea")(variant(lambda rng: {"x": x})(mean_with_hint))
    graded = Exercises("00_demo", builder)
    graded.graded = True
    typed = ['x = exercises.data(1, "x")\nanswer_1 = 0.5\nexercises.check(1, answer_1, x=x)']
    monkeypatch.setattr(chapter, "_inputs", lambda: typed)
    for _ in range(HINT_AFTER + 1):
        said = str(graded.check(1, 0.5, x=x))
        assert "typed in is not counted" in said and "§" not in said, said
    computed = ['x = exercises.data(1, "x")\nanswer_1 = x.sum()\nexercises.check(1, answer_1, x=x)']
    monkeypatch.setattr(chapter, "_inputs", lambda: computed)
    lines = [str(graded.check(1, x.sum(), x=x)) for _ in range(HINT_AFTER)]
    assert "§" not in lines[-2] and "§ The idea" in lines[-1], lines


@pytest.mark.parametrize("exercises", every_chapter(), ids=lambda e: e.chapter)
def test_every_graded_exercise_names_a_section_of_its_chapter(exercises):
    from lnlib.book.tools.course import plain_heading
    from tests.book.test_links import HEADING, markdown_of

    notebook = Path(__file__).resolve().parents[2] / "chapters" / f"{exercises.chapter}.ipynb"
    headings = {plain_heading(h) for h in HEADING.findall(markdown_of(notebook))}
    for k in exercises.graded_exercises():
        assert exercises.section(k) in headings, (exercises.chapter, k, exercises.section(k))


def test_no_plan_sentence_holds_markdown_the_website_would_show_raw():
    """A reader's finding: chapter 14's feedback showed raw backticks on the website."""
    for exercises, k in EXERCISES:
        data = exercises.sample(k, np.random.default_rng(0))
        plan = exercises.exercise(k, **data).plan()
        for rule in plan["rules"]:
            assert "`" not in rule["say"], (
                exercises.chapter,
                k,
                rule["say"],
            )


def test_the_interpreter_stops_on_a_rule_it_does_not_know():
    with pytest.raises(ValueError, match="unknown test"):
        judge(
            {
                "kind": "number",
                "rules": [{"test": "looksRight", "say": "Correct!"}],
                "messages": {},
            },
            1,
        )


def test_every_prompt_says_the_digits_its_exercise_asks_for():
    """Readers' finding: a rounded answer was refused with no word of the digits wanted. Each prompt
    of an exercise that takes a number ends by saying how many significant digits, or that it is a
    count."""
    from lnlib.book.exercises.feedback import NUMBER_WORDS
    from lnlib.book.tools.notebooks import read_notebook

    chapters = {ex.chapter: ex for ex in every_chapter()}
    said = 0
    for path in sorted(Path(__file__).resolve().parents[2].glob("chapters/[0-9][0-9]_*.ipynb")):
        for cell in read_notebook(path)["cells"]:
            found = re.search(r"\*\*Exercise (\d+)\b", "".join(cell["source"]))
            if cell["cell_type"] != "markdown" or not found or path.stem not in chapters:
                continue
            exercises, k = chapters[path.stem], int(found.group(1))
            exercise = exercises.exercise(k, **exercises.sample(k, np.random.default_rng(0)))
            last = "".join(cell["source"]).rstrip().splitlines()[-1]
            kind = np.asarray(exercise.expected).dtype.kind
            if exercise.asks_digits is not None:
                words = f"{NUMBER_WORDS[exercise.asks_digits]} significant digits."
                assert words in last, f"{path.stem}, exercise {k}: end its prompt with “{words}”"
                said += 1
            elif exercise.kind == "number" and kind in "iu":
                assert "exact count" in last, (
                    f"{path.stem}, exercise {k}: say it wants the exact count"
                )
    assert said >= 30


UNANSWERED = """
import numpy as np
from lnlib.book.exercises.chapter import Exercises, NotPassed, rests_on, variant
from lnlib.book.exercises.feedback import Exercise
x = np.array([1.0, 2.0, 6.0])
builder = rests_on("The idea")(variant(lambda rng: {"x": x})(lambda x: Exercise(x.mean())))
graded = Exercises("00_demo", builder)
graded.graded = True
try:
    graded.test(1, None, x=x)
    print("no error")
except NotPassed as failed:
    print("failed:", failed)
"""


@pytest.mark.parametrize("step", [None, "validate", "autograde"])
def test_an_unanswered_graded_test_prints_in_the_students_run_and_fails_in_grading(step):
    """The student review (2026-11-29, sixteenth session): after Run All, red "Not answered yet"
    errors under every graded test looked like a broken lab. In the student's own run the test
    cell says so in plain words; under nbgrader (its validate or autograde, read when the locked
    first cell imported the checker, and patching it is refused) it still fails: 0 points."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"}
    if step:
        env["NBGRADER_EXECUTION"] = step
    done = subprocess.run(
        [sys.executable, "-c", UNANSWERED], env=env, capture_output=True, text=True, check=True
    )
    said = done.stdout
    if step is None:
        assert said.startswith("Exercise 1: not answered yet") and "no error" in said, said
    else:
        assert said.startswith("failed: Not answered yet"), said


def test_feedback_names_where_a_few_entries_differ():
    # learner B43: "'1 of 4 entries differ' does not say which entry"
    assert _which(np.array([False, False, False, True])) == " (at index 3)"
    assert _which(np.array([True, False, True, False])) == " (at indices 0 and 2)"
    grid = np.zeros((2, 3), dtype=bool)
    grid[0, 1] = grid[1, 2] = True
    assert _which(grid) == " (at indices (0, 1) and (1, 2))"
    # all wrong, or more than three: the count alone
    assert _which(np.ones(4, dtype=bool)) == ""
    assert _which(np.array([True] * 4 + [False])) == ""
