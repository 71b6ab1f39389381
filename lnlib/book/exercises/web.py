"""An exercise answered on the website, with no kernel (CONTRIBUTING.md, "A chapter", step 5).

In the website build (``LNBOOK_WEBSITE=1``) an unanswered exercise's check shows an answer box and a
Check button instead of "Not answered yet". The expected answer, the tolerances, the hint and the
answers of the named mistakes are computed here, by lnlib, when the book is built, and stored in the
page as JSON: the exercise's plan, the rules the notebook judges by
(:mod:`lnlib.book.exercises.judge`); ``_ext/web_explorers_static/lnlib-exercises.js`` reads a typed
answer (numbers, lists, True/False, arithmetic such as ``sqrt(2)/4``, or numpy's printout of an
array, pasted) and applies the plan's rules, so it says what the notebook says, word for word
(``tests/book/test_exercise_checker_node.py`` runs both on every exercise). A Hint button shows the
hint; after a few wrong tries (the plan's ``hintAfter``) it comes unasked. An answer of more than
:data:`TYPEABLE` numbers gets a multi-line box, where a printout can be pasted.

Above the box the form prints the exercise's data, the very values passed to ``exercises.check`` (a
seeded random batch the chapter's code makes but does not print, too), as numpy prints them with the
fewest digits from which the answer computed comes out right (:func:`data_block`), so a website
reader can compute the answer in their own Python, or by hand, and paste it.
"""

from __future__ import annotations

import html
import json
import re
import sys
from collections.abc import Callable

import numpy as np

from lnlib.book.exercises.feedback import (
    CORRECT,
    EDGE,
    ON_THE_WEBSITE,
    Exercise,
    Feedback,
    round_to_digits,
)

__all__ = ["WebExercise", "answer_form", "answer_text", "data_block", "read_printout"]

#: An answer of more numbers than this gets a multi-line box (a textarea), where a printout can be
#: pasted.
TYPEABLE = 8
#: Data of more numbers than this are not printed in the page (chapter 01's 50 layers of 64 × 64
#: weights).
PRINTABLE = 5000
#: The precisions (numpy's ``precision``, digits after the point) tried in turn for the data; the
#: last, None, prints each number with all the digits that give it back exactly
#: (``floatmode="unique"``).
PRECISIONS = (4, 6, 8, None)
#: An answer of more numbers than this is shown in the solution fold by its shape and first entries.
SHOWN = 16
#: What the box says before the reader has checked anything.
WEB_NOT_ANSWERED = "Not answered yet: type your answer in the box and press Check."

#: numpy's repr of an array, ``array([...], dtype=float16)``: what is inside ``array(``, without
#: its dtype (any name, ``np.`` or quoted as well).
_REPR = re.compile(
    r"\s*(?:(?:np|numpy)\.)?array\((?P<inside>.*?)"
    r"(?:,\s*dtype\s*=\s*(?:(?:np|numpy)\.)?(?:\w+|'\w+'|\"\w+\"))?\s*\)\s*",
    re.S,
)
_TOKEN = re.compile(
    r"\s*(\[|\]|,|[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf)|True|False)"
)


def read_printout(text: str) -> np.ndarray:
    """An array printed by numpy (``print(a)``: brackets, no commas; or its repr,
    ``array([...], dtype=float16)``) or written as nested lists, read back.

    The reading of ``lnlib-exercises.js`` for a pasted printout: numbers (``nan``, ``inf``, ``True``
    and ``False`` too) separated by spaces, line breaks or commas, nested in brackets, the whole
    perhaps inside numpy's ``array(...)`` with a ``dtype=`` of any name.

    Raises
    ------
    ValueError
        If `text` is not such a printout, or its rows differ in length.

    Examples
    --------
    >>> read_printout("[[ 0.1 -1.2]\\n [ 3.   4. ]]")
    array([[ 0.1, -1.2],
           [ 3. ,  4. ]])
    >>> read_printout("array([0.1, 0.2], dtype=float16)")
    array([0.1, 0.2])
    """
    wrapped = _REPR.fullmatch(text)
    text = wrapped.group("inside") if wrapped else text
    tokens, at = [], 0
    while text[at:].strip():
        found = _TOKEN.match(text, at)
        if not found:
            raise ValueError(f"cannot read {text[at:].strip()[:12]!r}")
        tokens.append(found.group(1))
        at = found.end()

    def value(i: int):
        if i >= len(tokens):
            raise ValueError("incomplete printout")
        if tokens[i] != "[":
            if tokens[i] in "],":
                raise ValueError(f"unexpected {tokens[i]!r}")
            flags = {"True": 1.0, "False": 0.0}
            return flags[tokens[i]] if tokens[i] in flags else float(tokens[i]), i + 1
        items, i = [], i + 1
        while i < len(tokens) and tokens[i] != "]":
            item, i = value(i)
            items.append(item)
            i += i < len(tokens) and tokens[i] == ","
        if i >= len(tokens):
            raise ValueError("a bracket is not closed")
        return items, i + 1

    nested, end = value(0)
    if end != len(tokens):
        raise ValueError("unexpected text after the array")
    return np.asarray(nested, dtype=np.float64)


def _plain(value):
    """`value` as JSON numbers: nested lists of floats (a bool is 1.0 or 0.0, as numpy reads it)."""
    return np.asarray(value, dtype=np.float64).tolist()


def _shape(shape: tuple) -> str:
    return " × ".join(map(str, shape))


def _describe(exercise: Exercise) -> str:
    """The answer box's placeholder: the form the answer takes."""
    if isinstance(exercise.expected, (bool, np.bool_)):
        return "True or False"
    if exercise.choices is not None:
        return "one of " + ", ".join(map(str, exercise.choices))
    shape = np.shape(exercise.expected)
    flags = np.asarray(exercise.expected)
    kind = "True/False values" if flags.dtype == bool else "numbers"
    example = "True, False" if flags.dtype == bool else "1, 2"
    if shape == ():
        return "a number, e.g. 0.25 or sqrt(2)/4"
    if np.prod(shape) > TYPEABLE:
        whole = " (after np.set_printoptions(threshold=np.inf))" if np.prod(shape) > 1000 else ""
        return (
            f"{_shape(shape)} {kind}: paste numpy's printout of your answer{whole}, nested lists, "
            f"or the {np.prod(shape)} {kind} row by row"
        )
    if len(shape) == 1:
        return f"a list of {shape[0]} {kind}, e.g. [{example}{', ...' if shape[0] > 2 else ''}]"
    return f"nested lists of {_shape(shape)} {kind}, e.g. [[1, 2], [3, 4]]"


def exercise_data(exercise: Exercise, show_answer: bool = True) -> dict:
    """Everything the page needs to judge an answer to `exercise` as the notebook does: the
    exercise's plan (:meth:`~lnlib.book.exercises.feedback.Exercise.plan`), how the form reads
    and shows it, and (`show_answer`) the answer its solution fold shows (:func:`answer_text`)."""
    data = {
        **exercise.plan(),
        "shape": list(np.shape(exercise.expected)),  # bare numbers typed are taken in this shape
        "placeholder": _describe(exercise),
        "unreadable": "Not quite: could not read your answer ({error}). Type {placeholder}.",
        "edges": EDGE,
        "notAnswered": WEB_NOT_ANSWERED,
    }
    if show_answer:
        data["answer"] = answer_text(exercise)
    return data


def answer_text(exercise: Exercise) -> str:
    """`exercise`'s expected answer as the website's solution fold shows it under the solution's
    code (``lnlib-exercises.js``; learner A11: a reader without Python could not see the right
    value after a miss): each number to the significant digits the exercise asks for, trailing zeros
    kept (ten where it asks for all), an entry the check takes as 0 as 0, a count exactly, True or
    False; an answer of more than :data:`SHOWN` numbers by its shape and first entries."""
    want = np.asarray(exercise.expected)
    if want.dtype.kind == "b":
        return _nested(want.tolist(), str)
    if want.dtype.kind in "iu":
        return _nested(want.tolist(), str)
    digits = exercise.asks_digits or 10
    # binary noise off first (15/16 computed as 0.93749999... shows 0.938, learner A12), and an
    # entry the check takes as 0 shown as 0 (2.48e-17 was)
    clean = round_to_digits(want.astype(np.float64), 12)
    clean = np.where(np.abs(clean) <= exercise.atol, 0.0, clean)
    rounded = round_to_digits(clean, digits)

    def entry(x: float) -> str:  # trailing zeros kept (5.50 to three digits); 70000, not 7.00e+04
        if x == 0 or (x.is_integer() and abs(x) >= 10 ** (digits - 1)):
            return f"{int(x)}"
        return f"{x:#.{digits}g}"

    if rounded.size > SHOWN:
        first = ", ".join(entry(x) for x in rounded.ravel()[:4])
        size = f"{rounded.size} numbers" if rounded.ndim == 1 else f"shape {_shape(rounded.shape)}"
        return f"an array of {size}, beginning {first}, …"
    return _nested(rounded.tolist(), entry)


def _nested(values, entry: Callable) -> str:
    """`values` (a number or nested lists) as Python writes a list, each number by `entry`."""
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v, entry) for v in values) + "]"
    return entry(values)


def _given(data: dict) -> list[tuple[str, object]]:
    """The numbers among `data`, each with the name a reader writes for it (``we["w1"]`` in a
    dict)."""
    named = []
    for name, value in data.items():
        if isinstance(value, dict):
            named += _given({f'{name}["{key}"]': item for key, item in value.items()})
        elif np.asarray(value).dtype.kind in "biuf":
            named.append((name, value))
    return named


def _printout(name: str, value, precision: int | None) -> str:
    """``name = np.array([...])`` as numpy prints `value` (commas, so it runs as Python) at
    `precision`."""
    options = {"threshold": sys.maxsize, "precision": 17 if precision is None else precision}
    options["floatmode"] = "unique" if precision is None else "maxprec"
    if np.ndim(value) == 0:
        return f"{name} = {np.array2string(np.asarray(value), **options)}"
    prefix, suffix = f"{name} = np.array(", f"{_dtype_argument(value)})"
    # within the book's 80 columns, the last line's ", dtype=...)" included
    width = min(75, 79 - len(suffix))  # numpy's own 75 where no dtype follows
    array = np.array2string(
        np.asarray(value), separator=", ", prefix=prefix, max_line_width=width, **options
    )
    return f"{prefix}{array}{suffix}"


def _dtype_argument(value) -> str:
    """``, dtype=np.float16`` for an array numpy would not make from the printed numbers alone
    (chapter 16's float16 batch: retyped as float64, its answer changes); empty for float64, int64
    and bool."""
    dtype = np.asarray(value).dtype
    return "" if dtype in (np.float64, np.int64, np.bool_) else f", dtype=np.{dtype.name}"


def _read_back(printout: str, value):
    """The value a reader gets from one line of :func:`_printout`: `value` with the printed
    digits."""
    text = printout.split(" = ", 1)[1].removeprefix("np.array(").removesuffix(")")
    text = text.removesuffix(_dtype_argument(value))
    numbers = read_printout(text).astype(np.asarray(value).dtype)
    if isinstance(value, np.ndarray):
        return numbers.reshape(value.shape)
    return type(value)(numbers.item())


def _with(data: dict, named: dict):
    """`data` with the values of `named` (by the names of :func:`_given`) in place of its own."""
    out = {}
    for name, value in data.items():
        if isinstance(value, dict):
            inner = {
                key[len(name) + 2 : -2]: v for key, v in named.items() if key.startswith(f"{name}[")
            }
            out[name] = _with(value, inner)
        else:
            out[name] = named.get(name, value)
    return out


def _describe_data(name: str, value) -> str:
    """`name` and its shape, for the data block's caption: ``x, shape 4 × 8``."""
    if isinstance(value, dict):
        shapes = {np.shape(v) for v in value.values()}
        if len(shapes) == 1:
            return (
                f"{name}, a dict of {len(value)} arrays ({', '.join(map(str, value))}), "
                f"each of shape {_shape(shapes.pop())}"
            )
        return "; ".join(_describe_data(f'{name}["{key}"]', v) for key, v in value.items())
    return f"{name}, {f'shape {_shape(np.shape(value))}' if np.ndim(value) else 'a number'}"


def data_block(exercise: Exercise, data: dict, rebuild: Callable[..., Exercise]) -> str:
    """The exercise's `data`, printed for a website reader (HTML; empty when there are none).

    Each array is printed as numpy prints it, at the first of :data:`PRECISIONS` from which the
    answer comes out right: `rebuild` (the exercise's builder) is run on the printed numbers, read
    back, and `exercise` must judge its answer "Correct!". More than :data:`PRINTABLE` numbers are
    not printed: the block names them and sends the reader to the chapter's code that makes them.
    """
    named = _given(data)
    words = [(name, value) for name, value in data.items() if isinstance(value, str)]
    if not named and not words:
        return ""
    parts = [f"{name}, a name" for name, _ in words]  # chapter 09's norm = "mad"
    parts += [_describe_data(name, value) for name, value in data.items() if _given({name: value})]
    caption = (
        '<p class="lnlib-exercise-given-caption">The data of this exercise '
        f"({'; '.join(parts)})</p>"
    )
    count = sum(int(np.size(v)) for _, v in named)
    if count > PRINTABLE:
        return (
            f'<div class="lnlib-exercise-given">{caption}<p>{count:,} numbers, too many to print '
            "on this page: the chapter's code above makes them. Run it in your own Python, with "
            "the book's lnlib, to compute the answer and paste it here, or answer as the exercise "
            "says, where it gives a way without the data.</p></div>"
        )
    for precision in PRECISIONS:
        lines = [_printout(name, value, precision) for name, value in named]
        if precision is None:
            break
        printed = {name: _read_back(line, value) for line, (name, value) in zip(lines, named)}
        if exercise.feedback(rebuild(**_with(data, printed)).expected) == CORRECT:
            break
    runnable, started = [f"{name} = {value!r}" for name, value in words], set()
    for (name, _), line in zip(named, lines):  # runs as Python: a dict is made before its entries
        if "[" in name and name.split("[")[0] not in started:
            started.add(name.split("[")[0])
            runnable.append(f"{name.split('[')[0]} = {{}}")
        runnable.append(line)
    text = html.escape("\n".join(runnable))
    block = f'<pre tabindex="0" aria-label="the data of this exercise">{text}</pre>'
    lines = text.count("\n") + 1
    # folded, one tap away: a phone showed screens of numbers (learner B), and most exercises' code
    # cells show the same numbers just above (learner B, 2026-11-30: "every exercise shows its data
    # twice")
    length = f"{lines} line" if lines == 1 else f"{lines} lines"
    block = f"<details><summary>Show the data ({length})</summary>{block}</details>"
    return f'<div class="lnlib-exercise-given">{caption}{block}</div>'


class WebExercise:
    """The answer box of exercise `number` on the website, under the data it is built from; plain
    text elsewhere."""

    def __init__(
        self, exercise: Exercise, number: int, chapter: str, given: str = "", show_answer=True
    ):
        self.exercise, self.number, self.chapter = exercise, number, chapter
        self.given = given  # the data block (data_block), HTML
        self.show_answer = show_answer

    def __repr__(self) -> str:
        return ON_THE_WEBSITE

    def _repr_html_(self) -> str:
        data = exercise_data(self.exercise, self.show_answer)
        name = f"lnlib-answer-{self.chapter}-{self.number}"
        box = (
            Feedback(WEB_NOT_ANSWERED)
            ._repr_html_()
            .replace('role="status"', 'role="status" aria-live="polite"')
        )
        placeholder = html.escape(data["placeholder"])
        size = int(np.size(self.exercise.expected))
        if size > TYPEABLE:
            rows = min(8, max(3, np.shape(self.exercise.expected)[0] + 1))
            field = (
                f'<textarea id="{name}" rows="{rows}" spellcheck="false" '
                f'placeholder="{placeholder}"></textarea>'
            )
        else:
            field = (
                f'<input id="{name}" type="text" spellcheck="false" placeholder="{placeholder}">'
            )
        payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
        hint = (
            ' <button type="button" class="lnlib-exercise-hint-button" '
            f'aria-controls="{name}-hint" aria-expanded="false">Hint</button><p '
            f'class="lnlib-exercise-hint" id="{name}-hint" hidden></p>'
            if data["hint"]
            else ""
        )
        return (
            f'<form class="lnlib-exercise" data-exercise="{self.number}" autocomplete="off">'
            f"{self.given}"
            f'<label for="{name}">Your answer to exercise {self.number}</label> '
            f'{field} <button type="submit">Check</button>{hint}{box}'
            f'<script type="application/json" class="lnlib-exercise-data">{payload}</script></form>'
        )


def answer_form(
    exercise: Exercise,
    number: int,
    chapter: str,
    data: dict | None = None,
    rebuild: Callable[..., Exercise] | None = None,
    show_answer: bool = True,
) -> WebExercise:
    """The website's answer box for `exercise` (see the module's docstring), under its `data`
    printed (:func:`data_block`; `rebuild` builds the exercise again from data, to choose the digits
    printed), and the answer for its solution fold unless `show_answer` is False (a graded exercise
    on a course's website)."""
    given = data_block(exercise, data, rebuild) if data else ""
    return WebExercise(exercise, number, chapter, given, show_answer)
