"""Whose exercises these are: the course edition draws each student's own data from their id.

In the course edition (``make instructor``, lnlib.book.tools.course) every exercise that declares a
:func:`~lnlib.book.exercises.chapter.variant` hands out data drawn from the student's id, so a
classmate's or the website's number fails, while code that computes the answer from the data passes
for everyone. The id is, in order:

1. nbgrader's ``autograde`` (``NBGRADER_EXECUTION=autograde``): the folder the submission is graded
   in, ``autograded/<id>/<chapter>/``, whatever the notebook says. Both are read when this module is
   first imported, by the course notebook's first cell, which nbgrader locks and restores before
   grading: code a student writes below it cannot change whose data the grade uses;
2. the id written in the notebook's first cell (``exercises.student = "..."``);
3. the first line of ``student_id.txt`` in the notebook's folder or the one above it (the student
   edition's root: written once for every chapter; a student review);
4. ``$LNBOOK_STUDENT``, or ``$JUPYTERHUB_USER`` (a course hub's user name is nbgrader's id there).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

__all__ = ["NoStudent", "student_id", "student_rng"]

#: nbgrader's step and the folder this kernel started in, read once (see the module's docstring).
STARTED = (os.environ.get("NBGRADER_EXECUTION"), Path.cwd())


class NoStudent(RuntimeError):
    """The course edition's data need the student's id, and none was written or found. IPython
    shows its message alone: it says where the id goes, and a traceback through the library would
    hide that (a student review)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


def student_id(written: str | None = None) -> str:
    """The id whose data a course notebook hands out (see the module's docstring for the order).

    Examples
    --------
    >>> student_id("alice") if STARTED[0] != "autograde" else "alice"
    'alice'
    """
    __tracebackhide__ = True  # IPython shows the message, not this module's frames
    step, folder = STARTED
    if step == "autograde":
        return folder.parent.name  # autograded/<id>/<chapter>: the kernel runs in its folder
    candidates = (
        written,
        _id_file(folder),
        os.environ.get("LNBOOK_STUDENT"),
        os.environ.get("JUPYTERHUB_USER"),
    )
    for found in candidates:
        if found and str(found).strip():
            return str(found).strip()
    raise NoStudent(
        "Your exercises' data are drawn from your student id. Write it in the cell under the "
        'first one, exercises.student = "your id" (as your course spells it), or once in '
        "student_id.txt beside the chapters' folders, and run the cells again."
    )


#: The file a student may write their id in once, for every chapter (:func:`student_id`).
ID_FILE = "student_id.txt"


def _id_file(folder: Path) -> str | None:
    """The first line of :data:`ID_FILE` in `folder` or its parent, if either holds one."""
    for place in (folder, folder.parent):
        path = place / ID_FILE
        if path.is_file():
            lines = path.read_text(encoding="utf-8").splitlines()
            return lines[0] if lines else None
    return None


def student_rng(chapter: str, k: int, student: str) -> np.random.Generator:
    """The random generator of exercise `k` of `chapter` for `student`: the same on every machine
    and every run, another for another student, chapter or exercise.

    Examples
    --------
    >>> a = student_rng("03_mean", 1, "alice").integers(1000, size=3)
    >>> b = student_rng("03_mean", 1, "alice").integers(1000, size=3)
    >>> c = student_rng("03_mean", 1, "bob").integers(1000, size=3)
    >>> bool((a == b).all()), bool((a == c).all())
    (True, False)
    """
    digest = hashlib.sha256(f"{chapter}/{k}/{student}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))
