"""lnlib.book.exercises.web: every exercise answerable on the website page itself (CONTRIBUTING.md,
"A chapter", step 5).

The form prints the exercise's data (those passed to the check) with digits enough for the answer,
and an answer of many numbers gets a multi-line box that reads numpy's printout, pasted.
"""

import ast
import html
import re

import numpy as np
import pytest

from lnlib.book.exercises.chapter import Exercises
from lnlib.book.exercises.feedback import Exercise
from lnlib.book.exercises.web import PRINTABLE, TYPEABLE, answer_text, read_printout


@pytest.fixture
def website(monkeypatch):
    monkeypatch.setenv("LNBOOK_WEBSITE", "1")


def printed(page: str) -> str:
    return html.unescape(re.search(r"<pre[^>]*>(.*?)</pre>", page, re.S).group(1))


def run_printed(text: str) -> dict:
    """The data block run as Python, as a reader pastes it into their own session."""
    namespace = {"np": np}
    exec(text, namespace)  # noqa: S102 (the block this test just built)
    return {name: value for name, value in namespace.items() if name not in ("np", "__builtins__")}


@pytest.mark.parametrize(
    "array",
    [
        np.random.default_rng(0).normal(size=(2, 3, 4)),
        np.random.default_rng(1).normal(scale=1e-4, size=(5, 7)),
        np.array([True, False, True]),
        np.array([[-np.inf, np.nan], [1e-12, 3.0]]),
        np.arange(12).reshape(3, 4),
        np.random.default_rng(2).normal(size=40),
    ],
)
def test_numpys_printout_and_nested_lists_read_back(array):
    for text in (str(array), repr(array.tolist())):
        back = read_printout(text)
        assert back.shape == array.shape
        assert np.allclose(back, np.asarray(array, dtype=float), rtol=1e-7, equal_nan=True), text
    with np.printoptions(floatmode="unique", threshold=np.inf):
        exact = read_printout(str(array))
    np.testing.assert_array_equal(exact, np.asarray(array, dtype=float))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.bool_])
def test_numpys_repr_reads_back_whatever_its_dtype(dtype):
    """Chapter 16's box asks for numpy's printout of a float16 result: its repr,
    ``array([...], dtype=float16)``, was refused ('cannot read "=float16)"')."""
    array = (np.arange(12).reshape(2, 6) / 7 + 0.5).astype(dtype)
    with np.printoptions(floatmode="unique"):  # every digit: the dtype's own value back
        texts = [repr(array), repr(array[0])]
    for text, part in zip(texts, (array, array[0])):
        np.testing.assert_array_equal(read_printout(text).astype(dtype), part)
    spelled = ("np.array([0.5, 1.5], dtype=np.float16)", "array([0.5, 1.5], dtype='float16')")
    for text in spelled:
        np.testing.assert_array_equal(read_printout(text), [0.5, 1.5])


@pytest.mark.parametrize("text", ["[1 2", "[[1 2] [3]]", "[1 2]]", "[1 two]", ""])
def test_a_printout_that_is_not_one_is_refused(text):
    with pytest.raises(ValueError):
        read_printout(text)


def test_the_form_prints_the_checks_own_data_and_the_answer_from_them_is_right(website):
    """Random data the chapter's code does not print: the form prints them, and the answer a reader
    computes from the printout is judged right (the digits are chosen for it, not typed)."""
    x = np.random.default_rng(3).normal(size=(4, 8))
    exercises = Exercises("00_demo", lambda x: Exercise(x.mean(axis=-1), rtol=1e-9))
    page = exercises.check(1, None, x=x)._repr_html_()
    assert "The data of this exercise (x, shape 4 × 8)" in page
    assert "answer it in the notebook" not in page
    given = run_printed(printed(page))["x"]
    # numpy's digits, not all of them
    assert given.shape == x.shape and not np.array_equal(given, x)
    assert exercises.exercise(1, x=x).feedback(given.mean(axis=-1)) == "Correct!"


def test_the_data_get_more_digits_when_the_answer_needs_them(website):
    """A known mistake as near as four digits' rounding: the data are printed with more digits."""
    x = np.random.default_rng(4).normal(size=6)

    def build(x):
        return Exercise(x.sum(), rtol=1e-9, mistakes={"a near miss": x.sum() + 1e-4}, digits=None)

    exercises = Exercises("00_demo", build)
    with np.printoptions(precision=4):
        four = np.array(eval(np.array2string(x, separator=", ")))  # noqa: S307 (numpy's printout)
    assert build(x).feedback(four.sum()) != "Correct!"  # four digits are not enough here
    given = run_printed(printed(exercises.check(1, None, x=x)._repr_html_()))["x"]
    assert build(x).feedback(given.sum()) == "Correct!"


def test_numbers_and_a_dict_of_arrays_are_printed_by_the_names_a_reader_writes(website):
    weights = {"W1": np.eye(2), "W2": 2 * np.eye(2)}
    exercises = Exercises(
        "00_demo", lambda we, depth: Exercise(depth * np.trace(we["W1"] + we["W2"]))
    )
    page = exercises.check(1, None, we=weights, depth=3)._repr_html_()
    caption = "we, a dict of 2 arrays (W1, W2), each of shape 2 × 2; depth, a number"
    assert caption in html.unescape(page)
    text = printed(page)
    assert "depth = 3" in text.splitlines()
    assert 'we["W2"] = np.array([[2., 0.],' in text
    given = run_printed(text)
    assert given["depth"] == 3 and np.array_equal(given["we"]["W2"], weights["W2"])


@pytest.mark.parametrize("rows", [2, 16])
def test_the_data_are_folded_under_their_caption(website, rows):
    """Screens of numbers on a phone (learner B, chapters 11 and 12), and numbers the exercise's
    code cell already shows (learner B, 2026-11-30): every block is folded, its caption and its
    line count shown."""
    x = np.arange(rows * 3.0).reshape(rows, 3)
    page = Exercises("00_demo", lambda x: Exercise(x.sum())).check(1, None, x=x)._repr_html_()
    lines = printed(page).count("\n") + 1
    folded = f"<details><summary>Show the data ({lines} lines)</summary><pre" in page
    assert folded and "The data of this exercise (x, shape" in page
    assert np.array_equal(run_printed(printed(page))["x"], x)


def test_data_too_many_to_print_are_named_not_printed(website):
    x = np.zeros(PRINTABLE + 1)
    page = Exercises("00_demo", lambda x: Exercise(x.sum())).check(1, None, x=x)._repr_html_()
    assert "<pre" not in page and f"{x.size:,} numbers, too many to print" in page
    assert '<form class="lnlib-exercise"' in page


def test_an_answer_of_many_numbers_gets_a_box_for_a_pasted_printout(website):
    few = Exercises("00_demo", lambda: Exercise(np.ones(TYPEABLE)))
    many = Exercises("00_demo", lambda: Exercise(np.ones((3, TYPEABLE))))
    assert '<input id="lnlib-answer-00_demo-1"' in few.check(1, None)._repr_html_()
    page = html.unescape(many.check(1, None)._repr_html_())
    assert '<textarea id="lnlib-answer-00_demo-1"' in page and "<input" not in page
    assert f"3 × {TYPEABLE} numbers: paste numpy's printout" in page
    assert "<pre" not in page  # no data passed, none printed


def test_the_page_carries_the_plan_the_notebook_judges_by():
    """lnlib-exercises.js has no rule of its own: the page carries the exercise's plan, other right
    answers and the ε suggestion's choice included, and the shape bare numbers are read in."""
    from lnlib.book.exercises.judge import judge
    from lnlib.book.exercises.web import exercise_data

    exercise = Exercise(0.50001, also_right={"1/2 with ε = 0": 0.5}, digits=None, epsilon=True)
    data = exercise_data(exercise)
    assert {k: data[k] for k in exercise.plan()} == exercise.plan()
    assert judge(data, 0.5) == "Correct! 1/2 with ε = 0." and "(an ε?)" in judge(data, 0.503)
    assert data["shape"] == [] and exercise_data(Exercise(np.ones((2, 3))))["shape"] == [2, 3]


def test_the_solution_folds_answer_is_the_expected_value_at_the_digits_asked():
    """Learner A11: a reader without Python could not see the right value after a miss. The page
    carries the answer its solution fold shows, rounded as the exercise asks, and a reader who types
    it is told "Correct!"."""
    from lnlib.book.exercises.judge import judge
    from lnlib.book.exercises.web import exercise_data

    cases = [
        (Exercise(np.sqrt(32.0), digits=3), "5.66"),
        (
            Exercise([-np.sqrt(2 / 3), -np.sqrt(2 / 3), 0.0, np.sqrt(8 / 3)]),
            "[-0.816, -0.816, 0, 1.63]",
        ),
        (
            Exercise(np.array([[1.23456, 2e-7], [3.0, 4.5]]), digits=2),
            "[[1.2, 2.0e-07], [3.0, 4.5]]",
        ),
        # learner A12: 15/16 computed as 0.93749999... showed 0.937, 5.5 showed without its zero,
        # float noise showed as 2.48e-17
        (Exercise(15 / 16 - 1e-15, digits=3), "0.938"),
        (Exercise(5.5, digits=3), "5.50"),
        (Exercise([np.sqrt(3.0), 2.48e-17], digits=3), "[1.73, 0]"),
        (Exercise(70000.0, digits=3), "70000"),
        (Exercise(False), "False"),
        (Exercise(np.array([40, 16])), "[40, 16]"),
    ]
    for exercise, shown in cases:
        data = exercise_data(exercise)
        assert answer_text(exercise) == data["answer"] == shown
        typed = False if shown == "False" else np.asarray(ast.literal_eval(shown))
        assert judge(data, typed) == "Correct!", shown
    many = Exercise(np.arange(640) / 7, digits=3)
    assert answer_text(many) == "an array of 640 numbers, beginning 0, 0.143, 0.286, 0.429, …"
    assert "answer" not in exercise_data(many, show_answer=False)


def test_the_course_website_gives_a_graded_exercise_no_hint(website, monkeypatch):
    """The student review: the course's website handed out the recipe its notebooks hold back.
    With LNBOOK_COURSE_SITE=1 (make website-course) a graded exercise (one with a per-student
    variant) gets no Hint button and no hint in its plan; practice keeps both."""
    from lnlib.book.exercises.chapter import variant

    def graded(batch):
        return Exercise(batch.mean(axis=-1), hint="average each row")

    exercises = Exercises(
        "00_demo",
        variant(lambda rng: {"batch": rng.normal(size=(2, 3))})(graded),
        lambda x: Exercise(x.sum(), hint="add them"),
    )
    batch, x = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    for course, button in (("0", True), ("1", False)):
        monkeypatch.setenv("LNBOOK_COURSE_SITE", course)
        page = exercises.check(1, None, batch=batch)._repr_html_()
        assert ("lnlib-exercise-hint-button" in page) == button
        assert ("average each row" in page) == button
        assert ('"answer":' in page) == button  # nor the answer its solution fold would show
        assert "add them" in exercises.check(2, None, x=x)._repr_html_()
    # one that names its section (rests_on) gets, on the course's website, that section to reread
    from lnlib.book.exercises.chapter import rests_on

    sent_back = Exercises("00_demo", rests_on("The idea")(exercises.builders[0]))
    page = sent_back.check(1, None, batch=batch)._repr_html_()
    assert "Reread § The idea" in page and "average each row" not in page
