"""Start a chapter's kernel again when it dies while starting, and report why it died.

Loaded with ``-p tests.nbval_kernel`` (``make test-notebooks``, ``make check``). nbval starts one
kernel a chapter and sends its stderr to /dev/null. A CI run on 2026-12-01 lost all 73 cells of one
chapter to "Kernel died before replying to kernel_info" with no reason shown; 80 kernel starts in
two parallel processes here all succeeded, so the cause was outside the chapter (a clash over the
kernel's ports is the usual one with two workers). This plugin keeps the kernel's stderr, starts
the kernel up to three times, and reports each failed start as a warning carrying that stderr. A
chapter whose kernel dies three times still fails, with the stderr in its error.
"""

from __future__ import annotations

import tempfile
import warnings

import nbval.plugin
import pytest
from nbval.kernel import RunningKernel, start_new_kernel

ATTEMPTS = 3


class RestartingKernel(RunningKernel):
    """nbval's kernel, started up to ``ATTEMPTS`` times, its stderr kept for the report."""

    def __init__(self, kernel_name, cwd=None, startup_timeout=60):
        for attempt in range(1, ATTEMPTS + 1):
            with tempfile.TemporaryFile("w+") as stderr:
                try:
                    self.km, self.kc = start_new_kernel(
                        startup_timeout=startup_timeout,
                        kernel_name=kernel_name,
                        stderr=stderr,
                        cwd=cwd,
                    )
                    break
                except RuntimeError as error:
                    stderr.seek(0)
                    reason = f"{error} (start {attempt} of {ATTEMPTS}, in {cwd}); "
                    reason += f"the kernel's stderr:\n{stderr.read()[-3000:]}"
                    if attempt == ATTEMPTS:
                        raise RuntimeError(reason) from error
                    warnings.warn(pytest.PytestWarning(reason), stacklevel=2)
        self._ensure_iopub_up()


nbval.plugin.RunningKernel = RestartingKernel
