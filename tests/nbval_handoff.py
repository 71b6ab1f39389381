"""Hand nbval's runs of the chapters to the book build, so `make test` executes every chapter once
for both.

Loaded with ``-p tests.nbval_handoff``. With ``--nbval-executed-into DIR``, every notebook whose
code cells all passed nbval is written to DIR with the outputs nbval received from its kernel
(execution counts 1, 2, ...). ``make test-build`` caches them in jupyter-cache
(``jcache cache add``), and Jupyter Book builds from that cache instead of running each chapter
again. ``make test`` runs nbval with ``LNBOOK_WEBSITE=1``, as the book build does, so these are the
website's outputs (the sanitizer equates the one text that differs, an unanswered exercise's check,
tests/nbval_sanitize.cfg). A notebook with a failed or skipped cell is not written: the build then
runs it itself, and stops on its error.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest

_PASSED = pytest.StashKey[dict]()


def pytest_addoption(parser):
    parser.addoption(
        "--nbval-executed-into",
        metavar="DIR",
        default=None,
        help="write each notebook all of whose cells passed nbval, with nbval's outputs, into DIR",
    )


def pytest_configure(config):
    config.stash[_PASSED] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if (
        report.when == "call"
        and hasattr(item, "cell_num")
        and item.config.getoption("nbval_executed_into")
    ):
        cells = item.config.stash[_PASSED].setdefault(item.parent, {})
        cells[item.cell_num] = item.test_outputs if report.passed else None


def pytest_sessionfinish(session):
    folder = session.config.getoption("nbval_executed_into")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    for notebook, outputs in session.config.stash[_PASSED].items():
        executed = executed_notebook(notebook.nb, outputs)
        if executed is not None:
            nbformat.write(executed, Path(folder) / Path(str(notebook.fspath)).name)


def executed_notebook(nb, outputs: dict):
    """`nb` with every code cell's outputs from nbval's run, or None when a cell failed or did not
    run."""
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    if sorted(outputs) != list(range(len(code))) or any(o is None for o in outputs.values()):
        return None
    executed = copy.deepcopy(nb)
    for count, cell in enumerate((c for c in executed.cells if c.cell_type == "code"), start=1):
        cell.execution_count = count
        cell.outputs = [
            nbformat.from_dict(
                {**o, "execution_count": count} if o["output_type"] == "execute_result" else o
            )
            for o in copy.deepcopy(outputs[count - 1])
        ]
    return executed
