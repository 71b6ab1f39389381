"""A chapter's exercises: each built from the data its cell defines, checked in the same cell.

An exercise in a chapter is one code cell (CONTRIBUTING.md): the data it needs, ``answer_k = None``
for the reader to replace, and the check, ``exercises.check(k, answer_k, data=data)``. The check
builds exercise k from that data in this package (never in a cell of the chapter), so a student's
notebook holds no expected answer, and it judges the answer of the same run of the cell: a stale
answer cannot pass, and an answer that raises stops the cell with its error before the check.

It judges against the data as handed out, not as passed: in IPython it re-runs the cell's own data
lines (:func:`handed_out`) and, when the reader's code changed the passed data in place (``batch -=
batch.mean(...)`` before answering), judges on the re-built data and says so. Where no cell source
is at hand (plain Python, a check run from other code such as ``tests/nbval_exercises.py``) it
judges the data as passed.

A wrong answer is told what is wrong, never how to compute the answer: the hint (the recipe) comes
when the reader asks, ``exercises.hint(k)``, or with the
:data:`~lnlib.book.exercises.feedback.HINT_AFTER`-th wrong try. In graded mode
(``exercises.graded = True``: the course edition, lnlib.book.tools.course) no hint comes at all:
a graded exercise names, with that wrong try, the section it practises instead (:func:`rests_on`).
Data a reader changes beyond what the exercise allows get a sentence, never a traceback through the
checker (which would show how it computes the answer).

An exercise may also forbid names its answer must not use (:func:`forbidding`): "compute dγ with
numpy only" forbids ``lnlib``; and no answer may read the checker's own answer
(``exercises.exercise(...)``, ``exercises.builders``, ``.expected``, ``.mistakes``) or the input
history the check reads. In
IPython the check reads the answer's code (:func:`answer_code`) and, when it uses a forbidden name
(:func:`forbidden_uses`), says so instead of judging the value. The same check, run by the course's
graded test cell (lnlib.book.tools.course), reads the answer cell from IPython's input history. It
reads names, not intent: code in a cell above the answer cell, or a name built at run time
(``getattr(lnlib, "layer_" + "norm_backward")``), escapes it.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import functools
import io
import re
import sys
import types
import warnings
from collections.abc import Callable
from pathlib import Path

from lnlib.book.exercises.feedback import (
    HINT_AFTER,
    NOT_ANSWERED,
    NOT_CORRECT,
    WRONG,
    Exercise,
    Feedback,
    round_to_digits,
)
from lnlib.book.exercises.shipped import numpy as np  # as first imported (shipped.py)
from lnlib.book.exercises.shipped import record, replaced
from lnlib.book.exercises.students import STARTED, NoStudent, student_id, student_rng
from lnlib.book.exercises.web import WebExercise, answer_form
from lnlib.book.tools.notebooks import course_website_build, website_build

__all__ = [
    "ALWAYS_FORBIDDEN",
    "BACKWARD_PASSES",
    "CHECKER_NAMES",
    "NotPassed",
    "SET_ASIDE",
    "rebinds",
    "RUN_TIME_NAMES",
    "Exercises",
    "answer_code",
    "asks_for",
    "rests_on",
    "domain",
    "variant",
    "forbidden_uses",
    "forbidding",
    "handed_out",
    "held_back",
    "key_solution",
    "integer_rows",
]

#: Names no answer may use: the checker itself and what loads it (an answer that patches them could
#: pass any test), the checker's own answer (an exercise built, its builders, its plan for the
#: website), and the input history the check reads the answer from.
ALWAYS_FORBIDDEN = (
    ".check",
    "importlib",
    "builtins",
    "setattr",
    "sys.modules",
    ".exercise",
    ".builders",
    ".plan",
    "._built",
    ".expected",
    ".mistakes",
    ".get_ipython",
    "In",
    "_ih",
    "delattr",
    "vars",
    ".__dict__",
    ".__setattr__",
    ".__delattr__",
)

#: Names an answer cell may not bind: the checker the notebook's first cell imports, and the
#: course's hidden tests' helper (lnlib.book.tools.course).
CHECKER_NAMES = ("exercises", "_hidden")

#: The checker's own package: its builders compute every expected answer, so an answer cell may not
#: import from it, name it in a string, or call what an earlier cell took from it (the fourth
#: student review: ``from lnlib.book.exercises.gradients import _leftover``).
CHECKER_PACKAGE = "lnlib.book.exercises"

#: The line ``course sanitize`` puts on top of an answer cell it sets aside
#: (lnlib.book.tools.course), followed by what the cell touched, in brackets; the check reads it
#: back and says so.
SET_ASIDE = "# This answer cell was set aside before grading: it touches the checker"


#: What builds a name at run time, which an answer to an exercise that forbids names may not use:
#: the check reads names, and ``eval("lnlib.layer" + "_norm(v)")`` would hide one.
RUN_TIME_NAMES = (
    "eval",
    "exec",
    "compile",
    "getattr",
    "globals",
    "locals",  # the student review (2026-11-29): locals()["layer_norm_backward"] passed
    "vars",
    "__import__",
    "importlib",
    "attrgetter",
    "methodcaller",
    "__getattribute__",
)

#: What an answer cell may ask of the checker, ``exercises.<name>``: its data, the check, the test
#: cell's call, a hint. Any other use of the name (passed to a function, aliased, another
#: attribute) could reach the answer it computes (:func:`checker_uses`).
CHECKER_API = ("data", "check", "test", "hint")


#: What an exercise that asks for a backward pass by hand forbids: every backward lnlib has, and the
#: frameworks' autograd.
BACKWARD_PASSES = (
    "lnlib.layer_norm_backward",
    "lnlib.backward",
    "lnlib.textbook",
    "lnlib.fused",
    "lnlib.symbolic",
    "torch",
    "jax",
)


def forbidding(*names: str) -> Callable:
    """Declare, on an exercise's builder, the names its answer must not use (beside
    :data:`ALWAYS_FORBIDDEN`).

    Each name is dotted: ``"lnlib"`` (the library and all in it), ``"lnlib.layer_norm_backward"``
    (that function), ``"lnlib.backward"`` (that module and all in it), ``"torch"``; a name that
    starts with a dot (``".expected"``) is an attribute, whatever it is read from. See
    :func:`forbidden_uses`.

    Examples
    --------
    >>> @forbidding("lnlib.layer_norm_backward")
    ... def dgamma(x, dy):
    ...     return Exercise((dy * x).sum(axis=0))
    >>> dgamma.forbidden
    ('lnlib.layer_norm_backward',)
    """

    def declare(builder: Callable[..., Exercise]) -> Callable[..., Exercise]:
        builder.forbidden = names
        return builder

    return declare


def domain(sample: Callable[[np.random.Generator], dict]) -> Callable:
    """Declare, on an exercise's builder, the data a reader may choose: `sample` draws one such set.

    The data its prompt allows (chapter 10's exercise 1: any number of samples and positions, an
    even number of channels), drawn from a random generator; tests/book/test_exercise_checker.py
    builds every exercise on many draws, and the checker must judge each without an error.

    Examples
    --------
    >>> @domain(lambda rng: {"x": rng.normal(size=rng.integers(2, 9))})
    ... def mean_of(x):
    ...     return Exercise(x.mean())
    >>> sorted(mean_of.domain(np.random.default_rng(0)))
    ['x']
    """

    def declare(builder: Callable[..., Exercise]) -> Callable[..., Exercise]:
        builder.domain = sample
        return builder

    return declare


def asks_for(kind: str) -> Callable:
    """Declare, on an exercise's builder, what it asks for where :meth:`Exercises.kind` would guess
    wrong: ``"derivation"`` (a backward pass by hand, a moment worked out on paper), ``"code"``
    (a function to write, with no data handed out) or ``"line"`` (one line of numpy on the data
    handed out). The time estimates count by kind (lnlib.book.tools.course.EXERCISE_MINUTES)."""

    def declare(builder: Callable[..., Exercise]) -> Callable[..., Exercise]:
        builder.kind = kind
        return builder

    return declare


def rests_on(section: str) -> Callable:
    """Declare, on a graded exercise's builder, the section of its chapter it practises, by its
    heading as the page shows it (formulas in plain text: "dβ and dγ first"). In the course
    edition, where a graded exercise gives no hint, a student stuck after :data:`HINT_AFTER` wrong
    tries is sent back to it (a student review: graded feedback said less than practice)."""

    def declare(builder: Callable[..., Exercise]) -> Callable[..., Exercise]:
        builder.rests_on = section
        return builder

    return declare


def reread(section: str | None) -> str:
    """What a stuck student of a graded exercise is told: the section to reread ("" for none)."""
    return f"Reread § {section}: this exercise practises it." if section else ""


#: Where the answer key's held-back solutions live (:func:`held_back`): in the repository, outside
#: the lnlib package, so the wheel students install does not carry them.
COURSE_KEYS = Path(__file__).resolve().parents[3] / "course_keys"


def held_back(name: str) -> Callable:
    """Declare, on an exercise's builder, the file of the answer key's solution (code that sets
    ``answer_k``, the first python block of ``course_keys/<name>``) where the website's would not
    solve every student's: an exercise whose task, not only its data, varies per student (chapter
    09's exercise 4: each student's own norm) shows the website's task solved, and the course
    edition's key holds this one instead (lnlib.book.tools.course; :func:`key_solution`).

    Examples
    --------
    >>> @held_back("09_gradients_4.md")
    ... def mean_of(x):
    ...     return Exercise(x.mean())
    >>> mean_of.key_file
    '09_gradients_4.md'
    """

    def declare(builder: Callable[..., Exercise]) -> Callable[..., Exercise]:
        builder.key_file = name
        return builder

    return declare


def key_solution(builder: Callable) -> str | None:
    """The answer key's held-back solution of `builder`'s exercise (:func:`held_back`), read from
    the repository; None for an exercise without one.

    Raises
    ------
    FileNotFoundError
        Outside a clone of the book's repository (an installed wheel): the key is built from one.
    """
    name = getattr(builder, "key_file", None)
    if name is None:
        return None
    path = COURSE_KEYS / name
    if not path.is_file():
        raise FileNotFoundError(
            f"the answer key's solution {name} lives in the book's repository (course_keys/), "
            "not in the installed library: build the course from a clone (make instructor)."
        )
    return re.search(r"```python\n(.*?)\n```", path.read_text(encoding="utf-8"), re.S).group(1)


def variant(sample: Callable[[np.random.Generator], dict]) -> Callable:
    """Declare, on an exercise's builder, how the course edition draws each student's own data.

    `sample` draws data the exercise's prompt describes as truly as the website's data (the same
    names, shapes and kind of values; every statement of the prompt still true), from the student's
    generator (:func:`~lnlib.book.exercises.students.student_rng`). An exercise with a variant is
    graded in the course edition; one without (True/False, a choice, a fixed number) stays practice.

    Examples
    --------
    >>> @variant(lambda rng: {"x": rng.integers(-9, 10, size=4).astype(float)})
    ... def mean_of(x):
    ...     return Exercise(x.mean())
    >>> sorted(mean_of.variant(np.random.default_rng(0)))
    ['x']
    """

    def declare(builder: Callable[..., Exercise]) -> Callable[..., Exercise]:
        builder.variant = sample
        return builder

    return declare


def redrawn(rng: np.random.Generator, draw: Callable, builder: Callable, *close: str) -> dict:
    """`draw`'s data for `builder`'s exercise (a student's own: :func:`variant`), drawn again until
    no named mistake but those in `close` (ε's, a hair off by nature) passes for the answer, typed
    in full or rounded to the digits asked: a student's mistake is always named; and until the
    answer rounded to the digits asked is judged right (the truth audit, 2026-11-29: a student's
    right 5.50 was told "γ = σ leaves out ε", whose answer was exactly 5.5)."""
    while True:
        data = draw(rng)
        built = builder(**data)
        bare = Exercise(built.expected, rtol=built.rtol, atol=built.atol, digits=built.digits)
        rounded = round_to_digits(built.expected, built.asks_digits) if built.asks_digits else None
        if rounded is not None and built.check(rounded).kind != "correct":
            continue
        if not any(
            bare.check(typed).kind == "correct"
            for said, value in built.mistakes.items()
            if said not in close
            for typed in (value, round_to_digits(value, built.digits))
        ):
            return data


def integer_rows(rng: np.random.Generator, rows: int, size: int) -> np.ndarray:
    """`rows` rows of `size` integers from -9 to 9 as floats, none constant: a student's own batch
    (:func:`variant`) where the website's cell writes small integers."""
    while True:
        batch = rng.integers(-9, 10, size=(rows, size)).astype(float)
        if np.all(batch.std(axis=-1) > 0):
            return batch


#: Added, in graded mode, to "Not answered yet": an answer cell that raised left its answer None (an
#: instructor review: a student whose cell raised read "Not answered yet" after answering).
GRADED_NOT_ANSWERED = (
    " If your answer cell raised an error, its answer is still None: fix the error."
)
#: Added, in graded mode, to a test cell's "is not defined": grading removes the cells a student
#: added (lnlib.book.tools.course sanitize), so an answer that used a name defined in one fails
#: there (the instructor review, 2026-11-30: the reason reached only the instructor's terminal).
ADDED_CELLS_REMOVED = (
    " When your notebook is graded, the cells you added are removed: an answer may use only what "
    "its own cell and the chapter's cells define."
)
#: What a graded answer is told when it is right for the student's data but its cell's code is not
#: (:meth:`Exercises._on_other_data`).
NOT_FROM_THE_DATA = (
    f"{WRONG}your answer is right for your data, but your answer cell's code, run again on a "
    "second draw of data of the same kind, does not give that draw's answer: compute the answer in "
    "the answer cell from the data handed out (numbers typed in, or a variable set in another "
    "cell, are not counted)."
)
#: The most numbers in one array of an exercise's data that a graded answer may work out by hand
#: and type in (:meth:`Exercises.check`); with more, the answer cell must use the data.
BY_HAND = 4


class Exercises:
    """The exercises of one chapter, numbered from 1 in the order given.

    Parameters
    ----------
    chapter : str
        The chapter's notebook, e.g. ``"03_mean"`` (named in messages).
    *builders : callable
        Exercise k is ``builders[k - 1](**data)``: a function of the data its cell defines that
        returns an :class:`~lnlib.book.exercises.feedback.Exercise`.

    Examples
    --------
    >>> import numpy as np
    >>> from lnlib.book.exercises.feedback import Exercise
    >>> demo = Exercises(
    ...     "00_demo", lambda x: Exercise(x.mean(), mistakes={"that is the sum": x.sum()})
    ... )
    >>> x = np.array([1.0, 2.0, 3.0])
    >>> demo.check(1, x.sum(), x=x)
    Not quite: that is the sum.
    >>> demo.check(1, x.mean(), x=x)
    Correct!
    """

    def __init__(self, chapter: str, *builders: Callable[..., Exercise]):
        self.chapter = chapter
        self.builders = builders
        self._graded_mode = False  # the graded property
        self._student: str | None = None  # the student property
        #: The functions the chapter's own cells define (set by the course edition's first cell,
        #: lnlib.book.tools.course): an answer may use them; any other function defined outside
        #: the answer cells is in a cell grading removes.
        self.chapters_own: tuple[str, ...] = ()
        self._wrong_tries: dict[int, int] = {}
        self._counting = True  # off while the graded test cell checks again what was checked
        # the history index of each exercise's answer cell's latest run that reached its check
        self._checked_at: dict[int, int] = {}
        # the data of each exercise's last check, for its hint
        self._last_data: dict[int, dict] = {}
        # each exercise's data as handed out to a student, drawn once (_handed_to_student)
        self._handed: dict[tuple[int, str], dict] = {}
        #: The names of each exercise's data this notebook hands out (:meth:`data`; the course's
        #: hidden test names them): in graded mode, the check judges on those as handed out.
        self.handed: dict[int, tuple[str, ...]] = {}

    @property
    def graded(self) -> bool:
        """Graded mode (the course edition, lnlib.book.tools.course): a graded exercise's verdict
        names the mistake, and no hint is given, asked for or not; practice keeps its hints. Once
        on, it stays on in this kernel: a line that turns it off would bring the hints back."""
        return self._graded_mode

    @graded.setter
    def graded(self, on: bool) -> None:
        if self._graded_mode and not on:
            raise ValueError(
                "graded mode stays on in the course edition: your instructor grades these "
                "exercises, and their hints stay off. Restart the kernel to leave this line out."
            )
        self._graded_mode = bool(on)

    @property
    def student(self) -> str | None:
        """The student whose data the course edition hands out (:meth:`data`,
        lnlib.book.exercises.students.student_id). Set in graded mode, it says whose data they are,
        or where the id goes: at the id cell, not at exercise 1 (a student review)."""
        return self._student

    @student.setter
    def student(self, name: str | None) -> None:
        self._student = name
        if self._graded_mode:
            try:
                print(f"Your exercises' data are drawn for {student_id(name)!r}.")
            except NoStudent as missing:
                print(missing)

    def __len__(self) -> int:
        return len(self.builders)

    def exercise(self, k: int, **data) -> Exercise:
        """Exercise `k` built from `data` (its expected answer and the mistakes it names).

        Refused for a graded exercise in graded mode: its expected answer and hint are the
        checker's, which the course edition does not show (a student review, 2026-11-29, printed
        them in a scratch cell; the library's source stays readable, and the README says copying
        from it is not the student's work).
        """
        self._number(k)
        if self._graded(k):
            raise PermissionError(
                f"exercises.exercise({k}) is the checker's own answer, which the course edition "
                f"does not show for a graded exercise: check your answer with exercises.check({k}, "
                "...), as the exercise's cell does."
            )
        return self._build(k, **data)

    def _build(self, k: int, **data) -> Exercise:
        """Exercise `k` built from `data`, for the checker itself (graded or not)."""
        return self.builders[k - 1](**data)

    def sample(self, k: int, rng: np.random.Generator) -> dict:
        """Data for exercise `k` drawn from its domain (:func:`domain`); none for an exercise
        without data."""
        self._number(k)
        draw = getattr(self.builders[k - 1], "domain", None)
        return {} if draw is None else draw(rng)

    def kind(self, k: int) -> str:
        """What exercise `k` asks for, for the time it takes: as declared (:func:`asks_for`), else
        ``"choice"`` (True/False, a choice, or a list of True/False), ``"code"`` (computed from the
        data its cell hands out) or ``"number"`` (a number to work out)."""
        builder = self.builders[k - 1]
        if getattr(builder, "kind", None):
            return builder.kind
        built = self._build(k, **self.sample(k, np.random.default_rng(0)))
        if built.choices or np.asarray(built.expected).dtype == bool:
            return "choice"
        return "code" if hasattr(builder, "domain") else "number"

    def graded_exercises(self) -> list[int]:
        """The exercises the course edition grades: those with a per-student :func:`variant`."""
        return [k for k, b in enumerate(self.builders, 1) if hasattr(b, "variant")]

    def data(self, k: int, *names: str):
        """Exercise `k`'s data for this student (the course edition): the values of `names`, one
        value for one name, else a tuple, drawn by its :func:`variant` from the student's id
        (:func:`~lnlib.book.exercises.students.student_id`)."""
        __tracebackhide__ = True  # a missing student id is told in one message (students.NoStudent)
        self._number(k)
        draw = getattr(self.builders[k - 1], "variant", None)
        if draw is None:
            raise ValueError(f"exercise {k} of chapter {self.chapter} has no per-student data")
        drawn = draw(student_rng(self.chapter, k, student_id(self.student)))
        self.handed[k] = self.handed.get(k, ()) + tuple(
            n for n in names if n not in self.handed.get(k, ())
        )
        values = tuple(drawn[name] for name in names)
        return values[0] if len(values) == 1 else values

    def hint(self, k: int, **data) -> Feedback:
        """Exercise `k`'s hint, the recipe, as a box: asked for (self-study), or refused in graded
        mode.

        Built from `data`, or else from the data of the exercise's last check (its cell, run).
        """
        self._number(k)
        if self._graded(k):
            return Feedback(
                " ".join(
                    filter(
                        None,
                        (
                            "No hints in the course edition: your instructor grades this exercise.",
                            reread(self.section(k)),
                        ),
                    )
                )
            )
        built = self._built(k, data or self._last_data.get(k, {}))
        if isinstance(built, Feedback):
            return built
        return Feedback(f"Hint: {built.hint}" if built.hint else "This exercise has no hint.")

    def _built(self, k: int, data: dict) -> Exercise | Feedback:
        """Exercise `k` built from `data`, or a box saying the data are outside what it allows.

        Never an error: a traceback through the checker would show how it computes the answer.
        """
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # the checker's own arithmetic on the reader's data
                return self._build(k, **data)
        except Exception as error:  # noqa: BLE001 (any data a reader may write)
            return Feedback(
                f"{WRONG}the checker cannot build exercise {k} from these data "
                f"({type(error).__name__}): change the data only as the exercise allows, or run "
                "the cell as handed out."
            )

    def _graded(self, k: int) -> bool:
        """Whether exercise `k` is graded here: graded mode, and an exercise with a per-student
        :func:`variant`; a practice exercise keeps its hints in the course edition too."""
        return self.graded and k in self.graded_exercises()

    def _judged(self, k: int, built: Exercise, answer) -> Feedback:
        """The verdict on `answer`, never an error; graded, a wrong one says "Not correct"."""
        try:
            verdict = built.check(answer)
        except Exception as error:  # noqa: BLE001 (any object a reader may answer with)
            verdict = Feedback(
                f"{WRONG}the checker cannot read this answer ({type(error).__name__})."
            )
        if self._graded(k) and verdict.kind == "wrong":
            return Feedback(NOT_CORRECT + _diagnosis(verdict.text.removeprefix(WRONG)))
        return verdict

    def section(self, k: int) -> str | None:
        """The section exercise `k` practises (:func:`rests_on`), or None where it names none."""
        self._number(k)
        return getattr(self.builders[k - 1], "rests_on", None)

    def _with_hint(self, k: int, built: Exercise, verdict: Feedback) -> Feedback:
        """`verdict`, counted: after :data:`HINT_AFTER` wrong tries, the hint comes with it
        (self-study), or, graded, the section to reread (:func:`rests_on`)."""
        if verdict.kind != "wrong" or not (built.hint or self._graded(k)):
            return verdict
        self._wrong_tries[k] = self._wrong_tries.get(k, 0) + self._counting
        if self._graded(k):
            stuck = self._wrong_tries[k] >= HINT_AFTER and reread(self.section(k))
            more = f"{verdict.text}\nStuck? {stuck}"
            return Feedback(more, verdict=verdict.text) if stuck else verdict
        if self._wrong_tries[k] >= HINT_AFTER:
            more = f"Hint: {built.hint}"
        else:
            more = f"For a hint, run exercises.hint({k}) in a cell of its own."
        return Feedback(f"{verdict.text}\n{more}", verdict=verdict.text)

    def forbidden(self, k: int) -> tuple[str, ...]:
        """The names exercise `k`'s answer must not use: :data:`ALWAYS_FORBIDDEN` and its own
        (:func:`forbidding`)."""
        self._number(k)
        return ALWAYS_FORBIDDEN + tuple(getattr(self.builders[k - 1], "forbidden", ()))

    def _number(self, k: int) -> None:
        if not 1 <= k <= len(self.builders):
            raise ValueError(
                f"chapter {self.chapter} has exercises 1 to {len(self.builders)}, not {k!r}"
            )

    def check(self, k: int, answer, **data) -> Feedback | WebExercise:
        """The feedback on `answer` to exercise `k`, as a box; unanswered on the website, the answer
        box under the data, printed (:func:`~lnlib.book.exercises.web.answer_form`).

        The exercise is built from the data as the running cell hands it out (:func:`handed_out`);
        when the passed data differ from it (changed in place by the reader's code), the feedback
        says so. When the answer's code (:func:`answer_code`, read from IPython's input history)
        uses a name the exercise forbids, the feedback says which, and the answer is not counted,
        right or wrong.
        """
        given = handed_out(k, _running_cell(), _user_namespace())
        changed = [name for name in data if name in given and not _same(data[name], given[name])]
        data = {**data, **{name: given[name] for name in changed}}
        # graded: judged on the data handed out to this student, whatever the cell's data lines say
        theirs, handed = data, self._handed_to_student(k)
        other = [name for name in data if name in handed and not _same(data[name], handed[name])]
        data = {**data, **{name: handed[name] for name in other}}
        self._last_data[k] = data
        if answer is None and website_build():
            built = self._build(k, **data)
            graded = course_website_build() and k in self.graded_exercises()
            if graded:
                # as graded in the notebook: no hint, the section to reread instead
                built = dataclasses.replace(built, hint=reread(self.section(k)))
            rebuild = functools.partial(self._build, k)
            return answer_form(built, k, self.chapter, data, rebuild, show_answer=not graded)
        inputs = _inputs()
        if inputs and _is_answer_cell(k, inputs[-1]):
            self._checked_at[k] = len(inputs) - 1  # this run reached its check
        broken = _broken_answer_cell(k, inputs)
        if broken:
            return self._worded(k, Feedback(broken))
        if answer is None:
            aside = _set_aside(k, _inputs())
            unanswered = NOT_ANSWERED + (GRADED_NOT_ANSWERED if self._graded_mode else "")
            return self._worded(k, Feedback(f"{WRONG}{aside}" if aside else unanswered))
        self._number(k)
        built = self._built(k, data)
        if isinstance(built, Feedback):
            return self._worded(k, built)
        code = answer_code(k, _inputs())
        own = self.forbidden(k)[len(ALWAYS_FORBIDDEN) :]
        refused = _not_counted(code, own, _user_namespace()) if code is not None else None
        if refused:
            return self._worded(k, Feedback(refused))
        typed = self._typed_in(k, code, data)
        if typed:
            return self._worded(k, Feedback(typed))
        graded = code is not None and self._graded(k)
        added = _from_other_cells(code, self.chapters_own) if graded else []
        if added:
            names, cell = ", ".join(f"`{name}`" for name, _ in added), added[0][1]
            return self._worded(
                k,
                Feedback(
                    f"{WRONG}your answer uses {names}, defined in a cell that is not this answer "
                    f"cell (In [{cell}]). Grading removes the cells you add, so there it would be "
                    "undefined: define it in this answer cell. (If that cell is one of the "
                    "chapter's own, run the notebook again from the top.)"
                ),
            )
        # counted only now: an answer refused above is no try (a student review)
        verdict = self._with_hint(k, built, self._judged(k, built, answer))
        failed = self._on_other_data(k, code, data) if verdict.kind == "correct" else None
        if failed:
            return self._worded(k, Feedback(failed))
        if other and verdict.kind != "correct" and self._right_for(k, theirs, answer):
            return Feedback(
                f"{NOT_CORRECT}your answer is right for data other than those handed out to you "
                f"({', '.join(other)} changed): the grade judges it on your data as handed out."
            )
        notes = [
            (
                f"`{name}` was changed in place by your code; the answer is judged on the {name} "
                "as given."
            )
            for name in changed
        ]
        # the note first: a generic hint above it would send the reader after the wrong fix
        line = verdict.text if verdict.verdict is None else verdict.verdict
        return Feedback("\n".join([*notes, verdict.text]), verdict=line) if notes else verdict

    def _typed_in(self, k: int, code: ast.AST | None, data: dict) -> str | None:
        """Graded, an exercise whose data are more than a few numbers (more than
        :data:`BY_HAND` in one array, past working by hand): what an answer cell that names none of
        the data is told, an answer computed elsewhere and typed in; None otherwise. A name is a
        low bar, and the instructors' page says so: it stops a pasted answer, not one disguised."""
        if code is None or not self._graded(k):
            return None
        if not any(np.size(value) > BY_HAND for value in data.values()):
            return None
        answer = [stmt for stmt in code.body if not _hands_out(stmt)]
        used = {node.id for stmt in answer for node in ast.walk(stmt) if isinstance(node, ast.Name)}
        if used & set(data):
            return None
        return (
            f"{WRONG}your answer cell does not use the data handed out ({', '.join(data)}): an "
            "answer typed in is not counted, right or wrong. Compute it from the data in the "
            "answer cell."
        )

    def _stopped_answer_cell(self, k: int, inputs: list[str]) -> str | None:
        """What to say when the answer cell's latest run, before the running cell, stopped before
        its check: it raised, so ``answer_k`` is an earlier run's (the student review, 2026-11-29:
        a typo raising after a right run still passed the test cell, which grading's fresh run then
        scores 0)."""
        latest = next(
            (i for i in range(len(inputs) - 2, -1, -1) if _is_answer_cell(k, inputs[i])), None
        )
        if latest is None or latest <= self._checked_at.get(k, -1):
            return None
        return (
            f"{WRONG}your answer cell's latest run stopped with an error before its check, so "
            f"answer_{k} is left from an earlier run: fix the cell and run it again."
        )

    def _on_other_data(self, k: int, code: ast.AST | None, data: dict) -> str | None:
        """Graded, with data past working by hand (:data:`BY_HAND`): what to say when the answer
        cell's code, run again (its data lines and prints left out) on a second draw of the
        exercise's data for this student, fails to give that draw's answer (None when it gives it).
        Numbers computed elsewhere and pasted in, dressed up to name the data, fail; code that
        computes the answer passes, as the key's does on any student's data
        (tests/book/test_exercise_variants.py). Code that raises is told so: its ``answer_k`` is an
        earlier run's (the student review, 2026-11-29: a typo raising AttributeError was told "right
        for your data, but ..."). Names that are not arrays (chapter 09's `norm`) keep their first
        draw."""
        if (
            code is None
            or not self._graded(k)
            or not any(np.size(v) > BY_HAND for v in data.values())
        ):
            return None
        first = self._handed_to_student(k)
        if not first:
            return None
        drawn = self.builders[k - 1].variant(
            student_rng(self.chapter, k, f"{student_id(self.student)}, a second draw")
        )
        second = {
            name: copy.deepcopy(drawn[name]) if isinstance(value, np.ndarray) else value
            for name, value in first.items()
        }
        built = self._built(k, {**data, **second})
        if isinstance(built, Feedback):
            return None  # not judged on data the checker cannot build
        namespace = {**_user_namespace(), **copy.deepcopy(second)}
        body = ast.Module(body=[s for s in code.body if not _hands_out(s)], type_ignores=[])
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with np.errstate(all="ignore"):
                    exec(compile(body, "<the answer cell, on a second draw>", "exec"), namespace)
        except Exception as error:  # noqa: BLE001 (any code a student may write)
            return (
                f"{WRONG}your answer cell raises {type(error).__name__} ({error}), so "
                f"answer_{k} is left from an earlier run: fix the cell and run it again."
            )
        if self._judged(k, built, namespace.get(f"answer_{k}")).kind != "correct":
            return NOT_FROM_THE_DATA
        return None

    def test(self, k: int, answer, **data) -> None:
        """The course's graded test cell (lnlib.book.tools.course): nothing when :meth:`check` says
        Correct! (nbgrader would read a value the cell shows as partial credit), else its verdict
        raised as :class:`NotPassed`, its message alone.

        When code in this kernel has replaced the checker or the numpy functions it uses
        (:func:`~lnlib.book.exercises.shipped.replaced`: ``exercises.check = ...``, a function of
        the checker's modules patched, ``np.all = ...``), the check it would call is not the one
        shipped: it says so, and that grading sets such an answer cell aside, instead of a pass
        that grading would not give.
        """
        __tracebackhide__ = True
        self._refuse_a_replaced_checker()
        # the notebook's own checker saw the answer cell's runs; grading's reloaded one, in a fresh
        # run of every cell in order, has none to see
        stopped = self._stopped_answer_cell(k, _inputs())
        if stopped:
            raise NotPassed(stopped)
        self._counting = False  # the answer cell's check counted this try (a student review)
        try:
            verdict = self.check(k, answer, **data)
        finally:
            self._counting = True
        if answer is None and STARTED[0] is None and verdict.text.startswith("Not answered yet"):
            # the student's own run: plain words, not a red error after Run All (a student
            # review); nbgrader's validate and autograde, read when the locked first cell
            # imported this, still fail it
            print(f"Exercise {k}: not answered yet; until you answer, grading counts it wrong.")
            return
        if verdict.kind != "correct":
            raise NotPassed(verdict.text)
        # printed, not returned: nbgrader reads a graded cell's returned value as partial credit
        print(f"Exercise {k}: correct here; the grade comes from your instructor's run.")

    def _refuse_a_replaced_checker(self) -> None:
        """Raise :class:`NotPassed` when code in this kernel has replaced the checker or numpy."""
        __tracebackhide__ = True
        touched = replaced(self)
        if touched:
            raise NotPassed(
                f"{NOT_CORRECT}your code replaced the checker ({', '.join(touched[:3])}), so this "
                "cell cannot tell whether your answer is right. Grading sets aside an answer cell "
                "that replaces the checker: the exercise counts as not answered. Restart the "
                "kernel, and answer without changing the checker or numpy."
            )

    @contextlib.contextmanager
    def answer_defined(self, k: int):
        """The frame of the course's graded test cell, around :meth:`test`: when the answer cell
        left `answer_k` or its data undefined (not run yet, or stopped at a missing student id), the
        cell says so in one message instead of a NameError traceback (a student review), and
        still fails, so grading scores it 0. It also refuses a pass when :meth:`test` itself was
        replaced (``type(exercises).test = ...`` printed "Correct!", a student review)."""
        __tracebackhide__ = True
        try:
            yield
            self._refuse_a_replaced_checker()
        except NameError as error:
            try:
                student_id(self.student)
            except NoStudent as missing:
                raise NotPassed(f"Not answered yet. {missing}") from None
            added = ADDED_CELLS_REMOVED if self.graded else ""
            raise NotPassed(
                f"Not answered yet: {error.name} is not defined. Run exercise {k}'s answer cell, "
                f"the cell above this one, first.{added}"
            ) from None

    def _handed_to_student(self, k: int) -> dict:
        """Exercise `k`'s data as handed out to this student (its :func:`variant`; the names the
        notebook hands out, :attr:`handed`), in graded mode; empty for practice, or where no student
        id is known (the check then judges the data passed)."""
        draw = getattr(self.builders[k - 1], "variant", None) if self._graded(k) else None
        if draw is None:
            return {}
        try:
            key = (k, student_id(self.student))
        except NoStudent:
            return {}
        if key not in self._handed:
            self._handed[key] = draw(student_rng(self.chapter, k, key[1]))
        drawn = self._handed[key]
        return {
            name: copy.deepcopy(drawn[name]) for name in self.handed.get(k, ()) if name in drawn
        }

    def _right_for(self, k: int, data: dict, answer) -> bool:
        """Whether `answer` is right for `data` (the data the reader's cell passed, not those handed
        out); never an error."""
        built = self._built(k, data)
        return not isinstance(built, Feedback) and self._judged(k, built, answer).kind == "correct"

    def _worded(self, k: int, feedback: Feedback) -> Feedback:
        """`feedback` with one prefix for every wrong answer and refusal of a graded exercise in
        graded mode: "Not correct: "."""
        if not self._graded(k):
            return feedback

        def word(line):
            return NOT_CORRECT + line.removeprefix(WRONG) if line.startswith(WRONG) else line

        if feedback.verdict is None:
            return Feedback(word(feedback.text))
        text = feedback.text.replace(feedback.verdict, word(feedback.verdict))
        return Feedback(text, verdict=word(feedback.verdict))

    def __repr__(self) -> str:
        return f"<the {len(self)} exercises of chapter {self.chapter}>"


def _hands_out(stmt: ast.stmt) -> bool:
    """Whether `stmt` hands out or prints an exercise's data, as the course edition's answer cell
    does above the answer (``x = exercises.data(1, "x")``, ``print("x =", repr(x))``): not part of
    the answer, so it does not count as the answer using the data."""
    value = getattr(stmt, "value", None)
    if not isinstance(value, ast.Call):
        return False
    called = value.func
    if isinstance(stmt, ast.Expr):
        return isinstance(called, ast.Name) and called.id == "print"
    return (
        isinstance(stmt, ast.Assign)
        and isinstance(called, ast.Attribute)
        and called.attr == "data"
        and isinstance(called.value, ast.Name)
        and called.value.id == "exercises"
    )


class NotPassed(AssertionError):
    """A graded test cell's verdict, when it is not Correct! (:meth:`Exercises.test`).

    IPython shows its message alone, without a traceback: a traceback would print the test cell's
    lines, its hidden part too, on the student's feedback page."""

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


def _set_aside(k: int, inputs: list[str]) -> str | None:
    """What ``course sanitize`` wrote on top of exercise `k`'s answer cell when it set the cell
    aside (:data:`SET_ASIDE`), from the latest cell run that binds ``answer_k``; None if it did
    not."""
    bind = re.compile(rf"^answer_{k}\s*=", re.M)
    for source in reversed(inputs):
        if bind.search(source):
            line = next((x for x in source.splitlines() if x.startswith(SET_ASIDE)), None)
            if line is None:
                return None
            said = line.removeprefix("# ").rstrip(".") + "."
            return said[0].lower() + said[1:]
    return None


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python without IPython
        return None
    return get_ipython()


def _inputs() -> list[str]:
    """The sources of the cells IPython has run, in order, the running one last (none outside
    IPython).

    Read from IPython's history manager, whose list the reader's ``In`` and ``_ih`` only name:
    re-binding them does not change what the check reads.
    """
    shell = _shell()
    history = getattr(shell, "history_manager", None)
    return list(history.input_hist_parsed) if history is not None else []


def _diagnosis(named: str) -> str:
    """A named mistake as graded mode says it: the diagnosis, without the fix that follows its
    first colon or semicolon ("the paths through mu and through var are missing: so dx = ..." ->
    "the paths through mu and through var are missing."; a student review: trying the named
    mistakes in turn spelled out the answer).

    >>> _diagnosis("that is the dot product itself, H: divide by the square root of H.")
    'that is the dot product itself, H.'
    >>> _diagnosis("close, but not right to the three significant digits asked.")
    'close, but not right to the three significant digits asked.'
    """
    cut = min((i for i in (named.find(": "), named.find("; ")) if i > 0), default=-1)
    if cut < 0 or len(named[:cut].split()) < 3:
        return named
    return named[:cut].rstrip(".") + "."


def _from_other_cells(code: ast.Module, chapters_own: tuple[str, ...]) -> list[tuple[str, int]]:
    """(name, the cell's number) for each function the answer `code` uses but does not define,
    defined in this kernel by a cell that is not an answer cell and is not one of the chapter's
    own functions (`chapters_own`): a cell the student added, which grading removes
    (lnlib.book.tools.course.sanitize; a student review: a helper in an added cell passed here and
    would score 0 there)."""
    inputs, namespace = _inputs(), _user_namespace()
    numbers = getattr(getattr(_shell(), "compile", None), "_filename_map", {})
    used = {n.id for n in ast.walk(code) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    found = []
    for name in sorted(used - _bound(code) - set(chapters_own)):
        value = namespace.get(name)
        if not isinstance(value, types.FunctionType) or value.__module__ != "__main__":
            continue
        cell = numbers.get(value.__code__.co_filename)
        if cell is None or cell >= len(inputs):
            continue
        if not re.search(r"^answer_\d+\s*=", inputs[cell], re.M):
            found.append((name, cell))
    return found


def _user_namespace() -> dict:
    shell = _shell()
    return shell.user_ns if shell is not None else {}


def _running_cell() -> str | None:
    """The source of the cell IPython is running (None outside IPython)."""
    inputs = _inputs()
    return inputs[-1] if inputs else None


def _is_answer_cell(k: int, source: str) -> bool:
    """Whether `source` is exercise `k`'s answer cell, by its text: it binds ``answer_k`` and
    checks exercise k (a cell that cannot be parsed included)."""
    binds = re.search(rf"^[ \t]*answer_{k}\s*=", source, re.M)
    return bool(binds) and bool(re.search(rf"exercises\.check\(\s*{k}\b", source))


def _broken_answer_cell(k: int, inputs: list[str]) -> str | None:
    """What to say when the latest cell run before the running one that binds ``answer_k`` (by its
    text) could not be parsed: it never ran, so any ``answer_k`` is an earlier run's (the student
    review, 2026-11-29: an unclosed bracket was answered "your answer uses
    exercises.answer_defined", as if the student had tampered with the checker)."""
    binds = re.compile(rf"^[ \t]*answer_{k}\s*=", re.M)
    if not inputs or binds.search(inputs[-1]):
        return None  # the running cell is the answer cell: it parsed
    for source in reversed(inputs[:-1]):
        if not binds.search(source):
            continue
        try:
            ast.parse(source)
        except SyntaxError as error:
            where = f", line {error.lineno}" if error.lineno else ""
            return (
                f"{WRONG}your answer cell did not run: {type(error).__name__}{where}: {error.msg}. "
                "Fix it and run it again; until then its answer is not counted."
            )
        return None
    return None


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _checks(k: int | None, tree: ast.Module) -> list[ast.stmt]:
    """The statements of `tree` that check exercise `k` (any exercise for None):
    ``exercises.check(k, ...)``, alone or assigned (``feedback = exercises.check(k, ...)``), and the
    course's graded test, ``exercises.test(k, ...)``."""
    return [
        stmt
        for stmt in tree.body
        if isinstance(stmt, (ast.Expr, ast.Assign))
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr in ("check", "test")
        and stmt.value.args
        and isinstance(stmt.value.args[0], ast.Constant)
        and isinstance(stmt.value.args[0].value, int)
        and (k is None or stmt.value.args[0].value == k)
    ]


def _binds(name: str, tree: ast.Module) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        for n in ast.walk(tree)
    )


def answer_code(k: int, inputs: list[str]) -> ast.Module | None:
    r"""The code of exercise `k`'s answer, from the cells IPython ran (`inputs`, the running cell
    last).

    When the running cell is the exercise's cell (it checks exercise k and binds ``answer_k``), the
    answer is that cell without its check. Otherwise (the course's graded test cell, run after the
    answer cell) it is every cell run since the latest run of the exercise's cell (the one that
    binds ``answer_k`` and checks exercise k; failing one, the first that does either), up to the
    running cell: the exercise's cell and any cell a student added under it, without their
    checks. The data lines are read too: as
    handed out they use no forbidden name (tests/book/test_exercises.py), and a student may write
    anything among them. None when no cell holds exercise k's answer (plain Python; a check called
    from other code).

    Examples
    --------
    >>> cell = "x = np.ones(3)\nanswer_1 = lnlib.layer_norm(x)\nexercises.check(1, answer_1, x=x)"
    >>> ast.unparse(answer_code(1, [cell]))
    'x = np.ones(3)\nanswer_1 = lnlib.layer_norm(x)'
    >>> test = "feedback = exercises.check(1, answer_1, x=x)"
    >>> earlier = "answer_0 = 1\nexercises.check(0, answer_0)"
    >>> ast.unparse(answer_code(1, [earlier, cell, "y = 2", test]))
    'x = np.ones(3)\nanswer_1 = lnlib.layer_norm(x)\ny = 2'
    """
    if not inputs:
        return None
    # parsed from the running cell back, as far as needed: a long session's history costs nothing
    trees = (_parse(source) or ast.Module(body=[], type_ignores=[]) for source in reversed(inputs))
    running = next(trees)
    own = f"answer_{k}"
    if _checks(k, running) and _binds(own, running):
        cells = [running]
    else:
        cells = []
        for tree in trees:
            if any(stmt.value.args[0].value != k for stmt in _checks(None, tree)):
                break  # the previous exercise's cell, or its graded test
            cells.insert(0, tree)
        # from the latest run of the exercise's cell (it binds answer_k and checks it): a cell run
        # twice (Run All again, an explorer moved between tries) counts as it last ran
        starts = [i for i, t in enumerate(cells) if _checks(k, t) and _binds(own, t)]
        starts = starts or [i for i, t in enumerate(cells) if _binds(own, t) or _checks(k, t)][:1]
        if not starts:
            return None
        cells = cells[starts[-1] :]
    body = [stmt for tree in cells for stmt in tree.body if stmt not in _checks(k, tree)]
    return ast.Module(body=body, type_ignores=[])


def _chain(node: ast.AST, parents: dict) -> ast.AST:
    """The whole chain of attributes `node` starts: ``lnlib.layer_norm_backward`` for its
    ``lnlib``."""
    while isinstance(parents.get(node), ast.Attribute) and parents[node].value is node:
        node = parents[node]
    return node


def _bound(tree: ast.AST) -> set[str]:
    """The names `tree` binds itself: assigned, defined, or parameters."""
    names = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    names |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    return names | {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}


def forbidden_uses(code: str | ast.AST, forbidden, namespace: dict | None = None) -> list[str]:
    r"""The uses of forbidden names in `code`, each as written (``lnlib.layer_norm_backward``), in
    order.

    A name ``a.b.c`` of `forbidden` is used when `code` reads ``c`` as an attribute (``lnlib.c``,
    ``L.c`` after ``import lnlib as L``), reads ``c`` as a name it does not bind itself (``c(...)``
    after an earlier cell's ``from a.b import c``), imports ``a.b.c`` or anything in it
    (``from a.b import c as f``, ``import a.b.c.d``), or writes ``"c"`` or ``"a.b.c"`` as a string
    (``getattr(lnlib, "c")``); and, given the reader's `namespace`, when it reads a name an earlier
    cell bound to a module, function or class of ``a.b.c`` (``sp`` after ``import sympy as sp``, for
    ``"sympy"``). A name that starts with a dot (``".expected"``) counts as an attribute or a string
    only. A use is reported as its whole chain of attributes: reading ``lnlib`` in
    ``lnlib.layer_norm_backward(dy, x)`` reports ``lnlib.layer_norm_backward``.

    Examples
    --------
    >>> forbidden_uses("from lnlib import layer_norm_backward as f\nanswer_1 = f(dy, x)[0]",
    ...                ["lnlib.layer_norm_backward"])
    ['from lnlib import layer_norm_backward as f']
    >>> forbidden_uses("answer_1 = lnlib.layer_norm_backward(dy, x)[1]", ["lnlib"])
    ['lnlib.layer_norm_backward']
    >>> forbidden_uses("answer_3 = exercises.exercise(3, xs=xs).expected", [".expected"])
    ['exercises.exercise(3, xs=xs).expected']
    >>> own = "def layer_norm_backward(dy, x):\n    return dy\nanswer_1 = layer_norm_backward(1, 2)"
    >>> forbidden_uses(own, ["lnlib.layer_norm_backward"])  # the reader's own function of that name
    []
    """
    tree = _parse(code) if isinstance(code, str) else code
    if tree is None:
        return []
    leaves = {name.rsplit(".", 1)[-1] for name in forbidden}
    paths = [name for name in forbidden if not name.startswith(".")]
    own = _bound(tree)
    names = {name.rsplit(".", 1)[-1] for name in paths} - own
    names |= {
        name
        for name, value in (namespace or {}).items()
        if name not in own and _origin(value, paths)
    }
    strings = leaves | {name.lstrip(".") for name in forbidden}
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    used = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            base = node.module if isinstance(node, ast.ImportFrom) else None
            imported = [f"{base}.{alias.name}" if base else alias.name for alias in node.names]
            imported += [base] if base else []
            if any(
                path == name or path.startswith(f"{name}.") for path in imported for name in paths
            ):
                used.append(ast.unparse(node))
        elif (isinstance(node, ast.Attribute) and node.attr in leaves) or (
            isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names
        ):
            used.append(ast.unparse(_chain(node, parents)))
        elif isinstance(node, ast.Constant) and node.value in strings:
            used.append(repr(node.value))
    return list(dict.fromkeys(used))


def _origin(value, paths) -> bool:
    """Whether `value` is a module, function or class that comes from one of the dotted `paths`."""
    if isinstance(value, types.ModuleType):
        where = value.__name__
    elif callable(value) and isinstance(getattr(value, "__module__", None), str):
        where = f"{value.__module__}.{getattr(value, '__qualname__', '')}"
    else:
        return False
    return any(where == path or where.startswith(f"{path}.") for path in paths)


def _not_counted(code: ast.AST, own: tuple[str, ...], namespace: dict) -> str | None:
    """What an answer whose `code` uses forbidden names is told (None if it uses none).

    The use comes first: ``nbgrader validate`` cuts an error line at its width (``Validator.width``,
    90 characters in nbgrader 0.9.6).
    """
    reasons, used = [], []
    mine = forbidden_uses(code, own, namespace)
    if mine:
        named = " or ".join(", ".join(own).rsplit(", ", 1))
        reasons.append(f"this exercise asks you to compute it without {named}")
        used += mine
    hidden = [use for use in forbidden_uses(code, RUN_TIME_NAMES) if use not in used] if own else []
    if hidden:
        reasons.append("a name built at run time cannot be checked against what it forbids")
        used += hidden
    reaches = [use for use in checker_imports(code, namespace) if use not in used]
    if reaches:
        reasons.append(f"{CHECKER_PACKAGE} computes the expected answers: no answer may use it")
        used += reaches
    found = forbidden_uses(code, ALWAYS_FORBIDDEN) + rebinds(code) + checker_uses(code)
    peeks = [use for use in found if use not in used]
    if peeks:
        reasons.append(
            "no answer may change the checker, or read the checker's own answer or the input "
            "history it reads"
        )
        used += peeks
    if not used:
        return None
    used = list(dict.fromkeys(used))
    return (
        f"{WRONG}your answer uses {', '.join(used)}, and {'; and '.join(reasons)}. "
        "It is not counted, right or wrong."
    )


def _data_lines(k: int, tree: ast.Module) -> list[ast.stmt] | None:
    """The statements of an exercise cell that hand out its data, or None if `tree` is no cell of
    exercise k.

    An exercise cell (CONTRIBUTING.md) is its data, ``answer_k = None`` and
    ``exercises.check(k, ...)`` as a statement of its own (or assigned:
    ``feedback = exercises.check(k, ...)``). Its data lines are its leading imports, definitions and
    assignments to names not yet bound in the cell: the first statement of any other kind
    (``batch -= m``, ``batch[0] = 1``, ``batch.sort()``), a second assignment to a name, or
    ``answer_k = ...`` ends them, so code a reader writes under the data is never taken for the
    data.
    """
    if not _checks(k, tree):
        return None
    lines, bound = [], set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
            names = {stmt.name} if isinstance(stmt, ast.FunctionDef) else set()
        elif isinstance(stmt, ast.Assign) and all(_plain(target) for target in stmt.targets):
            names = {
                n.id for target in stmt.targets for n in ast.walk(target) if isinstance(n, ast.Name)
            }
        else:
            break
        if f"answer_{k}" in names or names & bound:
            break
        bound |= names
        lines.append(stmt)
    return lines


def _plain(target: ast.expr) -> bool:
    """A name, or a tuple or list of names (``xv, gv = ...``): never an item or an attribute."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_plain(element) for element in target.elts)
    return isinstance(target, ast.Name)


def handed_out(k: int, source: str | None, namespace: dict) -> dict:
    """The data exercise `k`'s cell defines, re-built from its source as handed out.

    Parameters
    ----------
    k : int
        The exercise's number.
    source : str or None
        The running cell's source (IPython's ``_ih[-1]``); None where there is none.
    namespace : dict
        The reader's namespace (for names the data lines use, such as ``np`` or an earlier cell's
        ``rng``). It is not changed: the data lines run in a copy, on deep copies of what they read,
        so a random generator they draw from is not advanced.

    Returns
    -------
    dict
        Each name the data lines bind, with its value, when re-running them gives it as first given
        (:func:`_rebuilt`: not data drawn from an earlier cell's generator or array); empty when
        `source` is no cell of exercise k (plain Python, a check called from other code) or its data
        lines fail to run. Data defined by an earlier cell (``token=token``) are judged as passed.

    Examples
    --------
    >>> import numpy as np
    >>> cell = (
    ...     "v = np.array([1.0, 2.0])\\nv -= 1\\nanswer_1 = v\\nexercises.check(1, answer_1, v=v)"
    ... )
    >>> handed_out(1, cell, {"np": np})
    {'v': array([1., 2.])}
    """
    try:
        lines = _data_lines(k, ast.parse(source)) if source else None
    except SyntaxError:
        return {}
    if not lines:
        return {}
    module = ast.Module(body=lines, type_ignores=[])
    read = {
        n.id for n in ast.walk(module) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    scratch = dict(namespace)
    for name in read & scratch.keys():
        scratch[name] = _copy(scratch[name])
    try:
        exec(compile(module, "<exercise data>", "exec"), scratch)  # noqa: S102 (the cell's own lines)
    except Exception:  # the reader's namespace lacks what the data needs: judge the data as passed
        return {}
    return {name: scratch[name] for name in _rebuilt(lines, namespace) if name in scratch}


def _rebuilt(lines: list[ast.stmt], namespace: dict) -> set[str]:
    """The names the data lines bind that re-running them gives as the cell first gave them.

    A line that reads the reader's state from an earlier cell (an array, a random generator that
    has drawn since) is not re-built, nor is any line that reads what it binds: only lines that read
    modules, functions, classes and names the data lines bound themselves.
    """
    good, bad = set(), set()
    for stmt in lines:
        read = {
            n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        bound = {
            n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        stateful = {
            name
            for name in read - good - bad
            if name in namespace
            and not (
                callable(namespace[name])
                or isinstance(namespace[name], (types.ModuleType, Exercises))
            )
        }
        (bad if read & bad or stateful else good).update(bound)
    return good


def _copy(value):
    try:
        return copy.deepcopy(value)
    except Exception:  # modules and the like: read only
        return value


def _same(passed, given) -> bool:
    """Whether the data passed to a check are the data as handed out (numbers, arrays, or anything
    with ==)."""
    if passed is given:
        return True
    try:
        if isinstance(passed, np.ndarray) or isinstance(given, np.ndarray):
            passed, given = np.asarray(passed), np.asarray(given)
            return passed.shape == given.shape and bool(
                np.array_equal(passed, given, equal_nan=True)
            )
        return bool(passed == given)
    except Exception:  # values that cannot be compared: trust what was passed
        return True


def checker_imports(code: str | ast.AST, namespace: dict | None = None) -> list[str]:
    r"""Each reach into the checker's package (:data:`CHECKER_PACKAGE`) in `code`, as written: an
    import from it, a string that names it, or a name an earlier cell bound to one of its functions,
    classes or modules (given the reader's `namespace`).

    Examples
    --------
    >>> checker_imports("from lnlib.book.exercises.gradients import _leftover\nanswer_3 = 1")
    ['from lnlib.book.exercises.gradients import _leftover']
    >>> checker_imports("answer_1 = x.mean()\nexercises.check(1, answer_1)")
    []
    """
    tree = _parse(code) if isinstance(code, str) else code
    if tree is None:
        return []
    package, found = CHECKER_PACKAGE, []
    taken = {
        name
        for name, value in (namespace or {}).items()
        if _origin(value, (package,)) and name not in _bound(tree)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            hit = (node.module or "").startswith(package)
        elif isinstance(node, ast.Import):
            hit = any(alias.name.startswith(package) for alias in node.names)
        elif isinstance(node, ast.Constant):
            hit = isinstance(node.value, str) and package in node.value
        else:
            hit = isinstance(node, ast.Name) and node.id in taken
        if hit:
            found.append(ast.unparse(node)[:60])
    return list(dict.fromkeys(found))


def checker_uses(code: str | ast.AST) -> list[str]:
    r"""Each use of the checker's name in `code` other than ``exercises.<one of CHECKER_API>``, as
    written: passed to a function (``operator.attrgetter("build" + "ers")(exercises)``), aliased,
    or another attribute.

    Examples
    --------
    >>> checker_uses("b = operator.attrgetter('x')(exercises)\ny = exercises.data(1, 'x')")
    ["operator.attrgetter('x')(exercises)"]
    """
    tree = _parse(code) if isinstance(code, str) else code
    if tree is None:
        return []
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == "exercises"):
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.attr in CHECKER_API:
            continue
        found.append(ast.unparse(parent if parent is not None else node)[:60])
    return found


def rebinds(code: str | ast.AST) -> list[str]:
    r"""What `code` rebinds that it did not create, each as written: an attribute of anything but an
    object it made itself (``np.all = ...``, ``np.abs += ...``, ``del np.x``, ``exercises.check =
    ...``, ``type(exercises).check = ...``), and the names of :data:`CHECKER_NAMES`.

    An object the code made itself is a name it binds once, to a call of a class it defines (``obj
    = Box(); obj.value = 1``).

    Examples
    --------
    >>> rebinds("import numpy as np\nnp.all = lambda *a, **k: True\ndel np.x\nnp.pi += 1")
    ['np.all = ...', 'del np.x', 'np.pi += ...']
    >>> rebinds("class Box:\n    pass\nbox = Box()\nbox.value = 1\nanswer_1 = box.value")
    []
    """
    tree = _parse(code) if isinstance(code, str) else code
    if tree is None:
        return []
    classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    made = {}  # each name bound, and whether every binding makes an object of the code's classes
    for node in ast.walk(tree):
        for target in getattr(node, "targets", [getattr(node, "target", None)]):
            stored = (n for n in ast.walk(target or ast.Pass()) if isinstance(n, ast.Name))
            for name in (n for n in stored if isinstance(n.ctx, ast.Store)):
                mine = (
                    isinstance(node, ast.Assign)
                    and target is name
                    and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name)
                    and node.value.func.id in classes
                )
                made[name.id] = made.get(name.id, True) and mine
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if not (isinstance(root, ast.Name) and made.get(root.id)):
                found.append(node)
    named = [
        n
        for n in ast.walk(tree)
        if (isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)))
        or isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.alias))
    ]
    found += [n for n in named if _bound_name(n) in CHECKER_NAMES]
    found.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    return list(dict.fromkeys(_written(n, tree) for n in found))


def _bound_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.alias):
        return node.asname or node.name.split(".")[0]
    return node.name


def _written(node: ast.AST, tree: ast.AST) -> str:
    """How a rebinding reads: ``np.all = ...``, ``del np.x``, ``np.pi += ...``."""
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return f"{'class' if isinstance(node, ast.ClassDef) else 'def'} {node.name}"
    if isinstance(node, ast.alias):
        return f"import ... as {_bound_name(node)}"
    target = ast.unparse(node)
    if isinstance(node.ctx, ast.Del):
        return f"del {target}"
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    parent = parents.get(node)
    operator = ""
    if isinstance(parent, ast.AugAssign) and parent.target is node:
        operator = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}.get(
            type(parent.op), "op"
        )
    return f"{target} {operator}= ..."


# the checker as shipped: what a cell changes in it since, the graded test cell names (test)
record(sys.modules[__name__], Exercises)
