"""Check every exercise's collapsed solution inside nbval's run of its chapter (CONTRIBUTING.md, "A
chapter", step 5).

Loaded with ``-p tests.nbval_exercises`` (``make test-notebooks``). Solutions are markdown (a
collapsed dropdown, CONTRIBUTING.md), so Run All never executes them and nbval never sees them. This
plugin adds, right after exercise k's cell (its data, ``answer_k = None`` and
``exercises.check(k, answer_k, ...)``), an item that runs in the chapter's own kernel, at that point
of the chapter: the solution's code (which sets ``answer_k``), then the cell's check on it, which
must say "Correct!", and the check of every mistake the exercise names, which must name it ("Not
quite: ...", never "Correct!" nor a mere "close"). It then puts ``answer_k = None`` back, so every
later cell runs as the reader's Run All runs it and nbval still compares it with its stored output.

Running in nbval's kernel, the check costs no execution of its own: each chapter runs once for
nbval, the solutions and the book build together (tests/nbval_handoff.py).
"""

from __future__ import annotations

import json
import re
from queue import Empty

import pytest

# The last line of an exercise's cell: exercises.check(k, answer_k) or exercises.check(k, answer_k,
# data=data)
CHECK = re.compile(r"^exercises\.check\((\d+), answer_\1(?:, (.*))?\)\Z", re.M)
SOLUTION = re.compile(
    r"^:::\{dropdown\} Solution to exercise (\d+)\n```python\n(.*?)\n```\n:::$", re.S
)
# Printed by the kernel as one JSON line, after the solution has set answer_k (which may print too).
MARK = "exercise report: "
REPORT = """
import json as _json
_exercise = exercises.exercise({k}, {data})
_mistakes = _exercise.mistakes.items()
print("exercise report: " + _json.dumps({{"solution": exercises.check({k}, answer_{k}, {data}).text,
    "mistakes": {{name: _exercise.feedback(value) for name, value in _mistakes}}}}))
answer_{k} = None
del _exercise, _mistakes
"""


def solutions(nb) -> dict[str, str]:
    """Each exercise's solution code, by number, from its collapsed dropdown."""
    found = {}
    for cell in nb.cells:
        match = SOLUTION.match(cell.source.strip()) if cell.cell_type == "markdown" else None
        if match:
            found[match.group(1)] = match.group(2)
    return found


class ExerciseSolution(pytest.Item):
    """Exercise k's solution and named mistakes, checked in the chapter's kernel after its check
    cell."""

    def __init__(self, *, number: str, code: str, data: str, **kwargs):
        super().__init__(**kwargs)
        self.number, self.code, self.data = number, code, data

    def runtest(self):
        kernel = self.parent.kernel
        report_code = REPORT.format(k=self.number, data=self.data)
        text, error = run(kernel, self.code + "\n" + report_code)
        where = f"{self.parent.name}, exercise {self.number}"
        assert error is None, f"{where}: the solution raises {error}"
        lines = [line for line in text.splitlines() if line.startswith(MARK)]
        assert len(lines) == 1, f"{where}: no report from the kernel; it printed {text!r}"
        report = json.loads(lines[0].removeprefix(MARK))
        assert report["solution"].startswith("Correct!"), (
            f"{where}: the solution gets {report['solution']!r}"
        )
        for name, line in report["mistakes"].items():
            assert line.startswith("Not quite: ") and not line.startswith("Not quite: close"), (
                f"{where}: the mistake {name!r} is not named: {line!r}"
            )

    def reportinfo(self):
        return self.path, None, f"{self.parent.name}: solution of exercise {self.number}"


def run(kernel, code: str, timeout: float = 600) -> tuple[str, str | None]:
    """Execute `code` in nbval's kernel; its printed text and its error (``"Name: value"``) or
    None."""
    msg_id = kernel.execute_cell_input(code, allow_stdin=False)
    kernel.await_reply(msg_id, timeout=timeout)
    text, error = [], None
    while True:
        try:
            msg = kernel.get_message(stream="iopub", timeout=timeout)
        except Empty:
            return "".join(text), error or "no reply from the kernel"
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream" and content["name"] == "stdout":
            text.append(content["text"])
        elif kind == "error":
            error = f"{content['ename']}: {content['evalue']}"
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(text), error


def pytest_collection_modifyitems(session, config, items):
    """Put each exercise's solution item right after its cell's item, in the same notebook."""
    out = []
    for item in items:
        out.append(item)
        cell = getattr(item, "cell", None)
        match = CHECK.search(cell.source.strip()) if cell is not None else None
        if match:
            code = solutions(item.parent.nb).get(match.group(1))
            if code is None:
                raise pytest.UsageError(
                    f"{item.parent.name}: exercise {match.group(1)} has no solution"
                )
            out.append(
                ExerciseSolution.from_parent(
                    item.parent,
                    name=f"exercise {match.group(1)} solution",
                    number=match.group(1),
                    code=code,
                    data=match.group(2) or "",
                )
            )
    items[:] = out
