"""The chapters' exercises: one module per chapter (``mean`` for chapter 03, ...) builds each
exercise's expected answer and known mistakes with lnlib; ``feedback`` turns them into the rules
that judge an answer, ``judge`` applies them (``lnlib-exercises.js`` on the website)."""

from __future__ import annotations

import importlib
import pkgutil

# the course's hidden tests' helper, imported with the exercises, before any answer cell runs
from lnlib.book.exercises import grading  # noqa: F401

__all__ = ["every_chapter"]


def every_chapter() -> list:
    """The Exercises of every chapter module of this package, by chapter (a new chapter's too)."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        exercises = getattr(importlib.import_module(f"{__name__}.{module.name}"), "exercises", None)
        if exercises is not None and hasattr(exercises, "builders"):
            found.append(exercises)
    return sorted(found, key=lambda e: e.chapter)
