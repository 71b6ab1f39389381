"""tests/nbval_kernel.py: a kernel that dies while starting is started again, with its stderr
reported; one that dies every time fails with that stderr."""

from __future__ import annotations

import pytest

import tests.nbval_kernel as plugin


def dying_starts(deaths: int):
    """A stand-in for nbval's start_new_kernel whose first ``deaths`` starts die, writing why."""
    calls = []

    def start(*, stderr, **options):
        calls.append(options)
        if len(calls) <= deaths:
            stderr.write(f"ZMQError: Address already in use (start {len(calls)})")
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "manager", "client"

    return start, calls


@pytest.fixture
def no_iopub(monkeypatch):
    monkeypatch.setattr(plugin.RestartingKernel, "_ensure_iopub_up", lambda self: None)


def test_a_kernel_that_dies_once_is_started_again_and_its_stderr_reported(monkeypatch, no_iopub):
    start, calls = dying_starts(1)
    monkeypatch.setattr(plugin, "start_new_kernel", start)
    with pytest.warns(pytest.PytestWarning, match=r"Address already in use \(start 1\)"):
        kernel = plugin.RestartingKernel("python3", cwd="chapters")
    assert (kernel.km, kernel.kc) == ("manager", "client")
    assert [options["cwd"] for options in calls] == ["chapters", "chapters"]


def test_a_kernel_that_dies_at_every_start_fails_with_its_stderr(monkeypatch, no_iopub):
    start, calls = dying_starts(plugin.ATTEMPTS)
    monkeypatch.setattr(plugin, "start_new_kernel", start)
    with pytest.warns(pytest.PytestWarning), pytest.raises(RuntimeError) as failure:
        plugin.RestartingKernel("python3")
    assert f"start {plugin.ATTEMPTS} of {plugin.ATTEMPTS}" in str(failure.value)
    assert f"Address already in use (start {plugin.ATTEMPTS})" in str(failure.value)
    assert len(calls) == plugin.ATTEMPTS


def test_every_nbval_run_of_the_makefile_loads_the_plugin():
    from pathlib import Path

    makefile = Path(__file__).parents[2] / "Makefile"
    commands = makefile.read_text().replace("\\\n", " ").splitlines()
    runs = [line for line in commands if "--nbval " in line]
    assert len(runs) == 2, runs  # make check and make test-notebooks
    assert all("-p tests.nbval_kernel" in line for line in runs), runs
