"""Print the versions a test run uses, so that a red run on another machine says what differs.

Run first by ``make test`` (and so by ``.ci/run``): Python, Chromium, the JupyterLab and renderer
the browser tests drive, numpy, and PyTorch when it is installed.
"""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata

PACKAGES = ("numpy", "jupyterlab", "jupyterlab-myst", "playwright", "nbval", "torch")


def chromium_version() -> str:
    executable = os.environ.get("LNBOOK_CHROMIUM", "/usr/bin/chromium")
    try:
        run = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return f"not found at {executable}"
    return run.stdout.strip() or run.stderr.strip()


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def main() -> None:
    lines = [f"Python {platform.python_version()} on {platform.machine()}", chromium_version()]
    lines += [f"{name} {package_version(name)}" for name in PACKAGES]
    print("versions: " + "; ".join(lines), flush=True)


if __name__ == "__main__":
    main()
