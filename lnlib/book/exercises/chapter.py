"""A chapter's exercises: each built from the data its cell defines, checked in the same cell.

An exercise in a chapter is one code cell (CONTRIBUTING.md): the data it needs, ``answer_k = None``
for the reader to replace, and the check, ``exercises.check(k, answer_k, data=data)``. The check
builds exercise k from that data in this package (never in a cell of the chapter), so a student's
notebook holds no expected answer, and it judges the answer of the same run of the cell: a stale
answer cannot pass, and an answer that raises stops the cell with its error before the check.

It judges against the data as handed out, not as passed: in IPython it re-runs the cell's own data
lines (:func:`handed_out`) and, when the reader's code changed the passed data in place (``batch -=
batch.mean(...)`` before answering), judges on the re-built data and says so. Where no cell source is
at hand (plain Python, a check run from other code such as ``tests/nbval_exercises.py``) it judges
the data as passed.
"""

from __future__ import annotations

import ast
import copy
import types
from collections.abc import Callable

import numpy as np

from lnlib.book.exercises.feedback import NOT_ANSWERED, Exercise, Feedback
from lnlib.book.exercises.web import WebExercise, answer_form
from lnlib.book.tools.notebooks import website_build

__all__ = ["Exercises", "handed_out"]


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
    >>> demo = Exercises("00_demo", lambda x: Exercise(x.mean(), mistakes={"that is the sum": x.sum()}))
    >>> x = np.array([1.0, 2.0, 3.0])
    >>> demo.check(1, x.sum(), x=x)
    Not quite: that is the sum.
    >>> demo.check(1, x.mean(), x=x)
    Correct!
    """

    def __init__(self, chapter: str, *builders: Callable[..., Exercise]):
        self.chapter = chapter
        self.builders = builders

    def __len__(self) -> int:
        return len(self.builders)

    def exercise(self, k: int, **data) -> Exercise:
        """Exercise `k` built from `data` (its expected answer and the mistakes it names)."""
        if not 1 <= k <= len(self.builders):
            raise ValueError(
                f"chapter {self.chapter} has exercises 1 to {len(self.builders)}, not {k!r}"
            )
        return self.builders[k - 1](**data)

    def check(self, k: int, answer, **data) -> Feedback | WebExercise:
        """The feedback on `answer` to exercise `k`, as a box; unanswered on the website, the answer box.

        The exercise is built from the data as the running cell hands it out (:func:`handed_out`);
        when the passed data differ from it (changed in place by the reader's code), the feedback says so.
        """
        given = handed_out(k, _running_cell(), _user_namespace())
        changed = [name for name in data if name in given and not _same(data[name], given[name])]
        data = {**data, **{name: given[name] for name in changed}}
        if answer is None and website_build():
            return answer_form(self.exercise(k, **data), k, self.chapter)
        if answer is None:
            return Feedback(NOT_ANSWERED)
        verdict = self.exercise(k, **data).check(answer)
        notes = [
            f"`{name}` was changed in place by your code; the answer is judged on the {name} as given."
            for name in changed
        ]
        return Feedback("\n".join([verdict.text, *notes])) if notes else verdict

    def __repr__(self) -> str:
        return f"<the {len(self)} exercises of chapter {self.chapter}>"


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python without IPython
        return None
    return get_ipython()


def _running_cell() -> str | None:
    """The source of the cell IPython is running (None outside IPython)."""
    shell = _shell()
    inputs = shell.user_ns.get("_ih") if shell is not None else None
    return inputs[-1] if inputs else None


def _user_namespace() -> dict:
    shell = _shell()
    return shell.user_ns if shell is not None else {}


def _data_lines(k: int, tree: ast.Module) -> list[ast.stmt] | None:
    """The statements of an exercise cell that hand out its data, or None if `tree` is no cell of exercise k.

    An exercise cell (CONTRIBUTING.md) is its data, ``answer_k = None`` and ``exercises.check(k, ...)``
    as a statement of its own (or assigned: ``feedback = exercises.check(k, ...)``). Its data lines are its leading imports, definitions and assignments to
    names not yet bound in the cell: the first statement of any other kind (``batch -= m``,
    ``batch[0] = 1``, ``batch.sort()``), a second assignment to a name, or ``answer_k = ...`` ends them,
    so code a reader writes under the data is never taken for the data.
    """
    checks = [
        stmt
        for stmt in tree.body
        if isinstance(stmt, (ast.Expr, ast.Assign))
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == "check"
        and stmt.value.args
        and isinstance(stmt.value.args[0], ast.Constant)
        and stmt.value.args[0].value == k
    ]
    if not checks:
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
    >>> cell = "v = np.array([1.0, 2.0])\\nv -= 1\\nanswer_1 = v\\nexercises.check(1, answer_1, v=v)"
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
            and not (callable(namespace[name]) or isinstance(namespace[name], types.ModuleType))
        }
        (bad if read & bad or stateful else good).update(bound)
    return good


def _copy(value):
    try:
        return copy.deepcopy(value)
    except Exception:  # modules and the like: read only
        return value


def _same(passed, given) -> bool:
    """Whether the data passed to a check are the data as handed out (numbers, arrays, or anything with ==)."""
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
