"""The course's hidden tests: one call under each graded test cell (lnlib.book.tools.course),
``_hidden.grade("mean", 1, answer_1, ('batch',), batch=batch)``.

nbgrader's hidden tests run in the student's kernel, after the student's code, and a failed test's
traceback on the feedback page prints the lines of its cell around the failure: the whole hidden
test is this one line, and a verdict that is not Correct! is raised as
:class:`~lnlib.book.exercises.chapter.NotPassed`, which IPython shows as its message alone.

:func:`grade` judges with the checker as shipped: its modules reloaded (a function a cell patched
is gone; numpy's functions come from :mod:`lnlib.book.exercises.shipped`, never reloaded), in graded
mode, on the data handed out to the student (chapter.Exercises.check draws them again from the
student's id), the answer's code read from the kernel's input history. This module is imported
with the exercises (their package's ``__init__``), before any answer cell runs, so it holds
``importlib``'s functions as they were then.
"""

from __future__ import annotations

from importlib import import_module, reload

from lnlib.book.exercises.shipped import replaced

__all__ = ["grade"]

#: The checker's modules, reloaded in this order before each grade (each imports the ones before).
SHIPPED = ("judge", "feedback", "chapter")


def grade(module: str, k: int, answer, handed: tuple[str, ...], **data) -> None:
    """The verdict of the shipped checker of ``lnlib.book.exercises.<module>`` on exercise `k`'s
    `answer`, with the data the test cell passes (the student's: those named `handed`, which the
    exercise's cell hands out, are drawn again from the student's id); raises NotPassed unless it
    is Correct! (and shows nothing: nbgrader would read a value as partial credit)."""
    __tracebackhide__ = True
    loaded = [reload(import_module(f"lnlib.book.exercises.{name}")) for name in SHIPPED]
    chapter = loaded[-1]
    exercises = reload(import_module(f"lnlib.book.exercises.{module}")).exercises
    theirs = chapter._user_namespace().get("exercises")
    exercises.student = getattr(theirs, "student", None)  # before graded mode: said once, not here
    exercises.graded = True  # a verdict names the mistake, never the recipe
    # the chapter's own functions, as the locked first cell names them (an answer cell may not
    # touch the checker's attributes: chapter.checker_uses)
    exercises.chapters_own = tuple(getattr(theirs, "chapters_own", ()))
    exercises.handed[k] = tuple(handed)
    if chapter.answer_code(k, chapter._inputs()) is None:
        raise chapter.NotPassed(f"the answer cell of exercise {k} is not in the input history")
    touched = replaced(exercises)
    if touched:  # numpy's own functions: a reload does not put them back
        raise chapter.NotPassed(
            f"{chapter.NOT_CORRECT}the answer cell replaced what the checker uses "
            f"({', '.join(touched[:3])}): it is set aside."
        )
    verdict = exercises.check(k, answer, **data)
    if verdict.kind != "correct":
        raise chapter.NotPassed(verdict.text)
