"""lnlib as a wheel on the website, so that a reader can install the library and its checks
(chapter 16's harness) without the repository: a learner review found no page that said how.

At the end of an HTML build, ``pip wheel`` builds lnlib from a copy of the package in a temporary
folder (no ``build/`` or ``*.egg-info`` is left in the tree) into ``<html>/downloads/``. The pages
link to ``downloads/lnlib-<version>-py3-none-any.whl`` by name; a link to a wheel that was not
built (the version in pyproject.toml changed, the page did not) fails the build.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sphinx.errors import ExtensionError

#: What the wheel is built from.
PACKAGE = ("pyproject.toml", "README.md", "LICENSE", "lnlib")
LINK = re.compile(r'href="(?:\.\./)*downloads/(lnlib-[^"]+\.whl)"')


def build_wheel(source: Path, target: Path) -> Path:
    """lnlib's wheel, built from `source`'s package (:data:`PACKAGE`), in `target`."""
    shutil.rmtree(target, ignore_errors=True)  # a wheel of an older version goes
    target.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as scratch:
        for name in PACKAGE:
            path = source / name
            copy = shutil.copytree if path.is_dir() else shutil.copy2
            ignore = {"ignore": shutil.ignore_patterns("__pycache__")} if path.is_dir() else {}
            copy(path, Path(scratch) / name, **ignore)
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
        command += ["--no-build-isolation", "--wheel-dir", str(target), scratch]
        subprocess.run(command, check=True, capture_output=True)
    (wheel,) = target.glob("lnlib-*.whl")
    return wheel


def offer_the_wheel(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    wheel = build_wheel(Path(app.srcdir), outdir / "downloads")
    linked = {name for page in outdir.rglob("*.html") for name in LINK.findall(page.read_text())}
    if linked - {wheel.name}:
        raise ExtensionError(
            f"pages link to {sorted(linked - {wheel.name})}, but the wheel built is {wheel.name}: "
            "change the links (intro.md, api.md, instructors.md) to the version in pyproject.toml"
        )


def setup(app):
    app.connect("build-finished", offer_the_wheel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
