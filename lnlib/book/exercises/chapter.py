"""A chapter's exercises: each built from the data its cell defines, checked in the same cell.

An exercise in a chapter is one code cell (CONTRIBUTING.md): the data it needs, ``answer_k = None``
for the reader to replace, and the check, ``exercises.check(k, answer_k, data=data)``. The check
builds exercise k from that data in this package (never in a cell of the chapter), so a student's
notebook holds no expected answer, and it judges the answer of the same run of the cell: a stale
answer cannot pass, and an answer that raises stops the cell with its error before the check.
"""

from __future__ import annotations

from collections.abc import Callable

from lnlib.book.exercises.feedback import NOT_ANSWERED, Exercise, Feedback
from lnlib.book.exercises.web import WebExercise, answer_form
from lnlib.book.tools.notebooks import website_build

__all__ = ["Exercises"]


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
        """The feedback on `answer` to exercise `k`, as a box; unanswered on the website, the answer box."""
        if answer is None and website_build():
            return answer_form(self.exercise(k, **data), k, self.chapter)
        if answer is None:
            return Feedback(NOT_ANSWERED)
        return self.exercise(k, **data).check(answer)

    def __repr__(self) -> str:
        return f"<the {len(self)} exercises of chapter {self.chapter}>"
