"""The checker's interpreter: an answer judged by an exercise's plan, a list of rules computed by
lnlib.

An exercise's plan (:meth:`lnlib.book.exercises.feedback.Exercise.plan`) is plain data, JSON: its
kind, an ordered list of rules and a few fixed messages. Each rule is a test and the line said when
it holds; the first rule that holds gives the verdict. The tests know nothing of any exercise:
whether the answer is True or False, one of some values, within a tolerance of a value (entry by
entry, the tolerance computed by lnlib: a relative tolerance, a number's rounding to the digits
asked, or "close"), of a shape, finite. ``_ext/web_explorers_static/lnlib-exercises.js`` is this
module written in JavaScript for the website, test for test
(``tests/book/test_exercise_checker_node.py`` runs both on every exercise); every rule lives in the
plan, built once, in Python.

A line may name the answer's shape, ``{got_shape}``, how many entries differ, ``{differ}`` of
``{size}``, where a few of several differ, ``{which}`` (" (at index 3)", as numpy indexes them), or
the answer as typed, ``{typed}``; never the expected value.
"""

from __future__ import annotations

import sys

# numpy as first imported: a cell's np.all = ... cannot reach the checker (shipped.py)
from lnlib.book.exercises.shipped import numpy as np
from lnlib.book.exercises.shipped import record

__all__ = ["judge", "numbers"]


def numbers(value):
    """`value` as float64 numbers, or None (text is never a number, nor a ragged list)."""
    if isinstance(value, (str, bytes)):
        return None
    try:
        as_objects = np.asarray(value, dtype=object)
    except ValueError:  # a ragged nest of lists
        return None
    if any(isinstance(v, (str, bytes)) for v in np.ravel(as_objects)):
        return None
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _within(got, rule: dict, transposed: bool = False) -> bool:
    """Whether `got` (or its transpose) has the rule's value's shape and each entry within its
    tolerance."""
    if got is None:
        return False
    if transposed:
        if got.ndim < 2:
            return False
        got = got.T
    value = np.asarray(rule["value"], dtype=np.float64)
    if got.shape != value.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(got - value) <= np.asarray(rule["tol"], dtype=np.float64)))


def _holds(rule: dict, answer, got) -> bool:
    test = rule["test"]
    if test == "always":
        return True
    if test == "notBool":
        return not isinstance(answer, (bool, np.bool_))
    if test == "equal":
        return isinstance(answer, (bool, np.bool_)) and bool(answer) == rule["value"]
    if test == "notOneOf":
        return got is None or not any(
            got.shape == np.shape(v) and bool(np.all(got == np.asarray(v))) for v in rule["values"]
        )
    if test == "within":
        return _within(got, rule)
    if test == "withinTransposed":
        return got is not None and np.shape(rule["value"]) != got.shape and _within(got, rule, True)
    if test == "shapeNot":
        return got is not None and list(got.shape) != rule["shape"]
    if test == "notFinite":
        return got is not None and not bool(np.all(np.isfinite(got)))
    raise ValueError(f"unknown test {test!r}")


def _shape(shape) -> str:
    """A shape as Python writes a tuple: ``(4,)``, ``(2, 3)``, ``()``."""
    return f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(map(str, shape))})"


def _fill(line: str, rule: dict, answer, got) -> str:
    if "{typed}" in line:
        line = line.replace(
            "{typed}", repr(bool(answer)) if isinstance(answer, (bool, np.bool_)) else repr(answer)
        )
    if got is not None and "{got_shape}" in line:
        line = line.replace("{got_shape}", _shape(got.shape))
    if "{differ}" in line:
        with np.errstate(invalid="ignore"):
            off = np.abs(got - np.asarray(rule["value"], dtype=np.float64)) > np.asarray(
                rule["tol"]
            )
        line = line.replace("{differ}", str(int(np.sum(off)))).replace("{size}", str(got.size))
        line = line.replace("{which}", _which(off))
    return line


def _which(off) -> str:
    """Where the differing entries are, as numpy indexes them, when one to three of several differ:
    " (at index 3)", " (at indices (0, 1) and (2, 0))"; else "" (learner B43: "1 of 4 entries
    differ" did not say which)."""
    spots = np.flatnonzero(off)
    if not 0 < spots.size <= 3 or spots.size == off.size:
        return ""
    names = [
        str(int(i))
        if off.ndim == 1
        else f"({', '.join(str(int(k)) for k in np.unravel_index(i, off.shape))})"
        for i in spots
    ]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f" (at {'index' if len(names) == 1 else 'indices'} {listed})"


def judge(plan: dict, answer) -> str:
    """The verdict of `plan` on `answer`: the line of the first rule that holds.

    Parameters
    ----------
    plan : dict
        An exercise's plan (:meth:`lnlib.book.exercises.feedback.Exercise.plan`).
    answer : object
        The reader's answer: None (not answered yet), True or False, a number, or an array_like.

    Returns
    -------
    str
        Starts with "Correct!" exactly when the answer is right, "Not quite: " when it is wrong.
    """
    if answer is None:
        return plan["messages"]["notAnswered"]
    got = None if plan["kind"] == "bool" else numbers(answer)
    if plan["kind"] == "number" and got is None:
        return plan["messages"]["notNumbers"]
    for rule in plan["rules"]:
        if _holds(rule, answer, got):
            return _fill(rule["say"], rule, answer, got)
    raise ValueError("a plan ends with a rule that always holds")


# the checker as shipped (lnlib.book.exercises.shipped.replaced)
record(sys.modules[__name__])
