"""lnlib as a wheel, and the book's source as a zip, on the website, so that a reader can install
the library and its checks (chapter 16's harness), or run the notebooks, without the repository: a
learner review found no page that said how.

At the end of an HTML build, ``pip wheel`` builds lnlib from a copy of the package in a temporary
folder (no ``build/`` or ``*.egg-info`` is left in the tree) into ``<html>/downloads/``. The pages
link to ``downloads/lnlib-<version>-py3-none-any.whl`` by name; a link to a wheel that was not
built (the version in pyproject.toml changed, the page did not) fails the build. ``downloads/``
also gets :data:`SOURCE`, the files the website was built from (a git checkout's tracked files, as
they stand; the course website's copy, without the solutions), less ``course_keys/``: the answer
key an instructor holds back comes with a clone of the repository, not with a public download.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from sphinx.errors import ExtensionError

#: What the wheel is built from.
PACKAGE = ("pyproject.toml", "README.md", "LICENSE", "lnlib")
#: The source archive's name in ``downloads/``, and the folder it unpacks into.
SOURCE, FOLDER = "layernorm-book-source.zip", "layernorm-book"
#: Left out of the source archive: the held-back answer key, and the build's own outputs.
LEFT_OUT = ("course_keys/", "_build/")
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
        # as `make wheel` builds it: pip fetches the build backend pyproject.toml names
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
        command += ["--disable-pip-version-check", "--wheel-dir", str(target), scratch]
        built = subprocess.run(command, capture_output=True, text=True)
        if built.returncode != 0:
            raise ExtensionError(f"lnlib's wheel was not built: {built.stderr[-2000:]}")
    (wheel,) = target.glob("lnlib-*.whl")
    return wheel


def source_files(source: Path) -> list[str]:
    """The files of the book at `source`, relative to it: a git checkout's tracked files, else
    every file but hidden ones (the course website's copy holds only those), less
    :data:`LEFT_OUT`."""
    listed = subprocess.run(
        ["git", "-C", str(source), "ls-files", "-z"], capture_output=True, text=True
    )
    if listed.returncode == 0 and (source / ".git").exists():
        names = [name for name in listed.stdout.split("\0") if name]
    else:
        names = [
            str(Path(folder, name).relative_to(source))
            for folder, _, files in os.walk(source)
            for name in files
        ]
        names = [n for n in names if not any(part.startswith(".") for part in Path(n).parts)]
    return sorted(n for n in names if not n.startswith(LEFT_OUT) and (source / n).is_file())


def source_archive(source: Path, target: Path) -> Path:
    """:data:`SOURCE` in `target`: :func:`source_files` under one folder, :data:`FOLDER`."""
    archive = target / SOURCE
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as packed:
        for name in source_files(source):
            packed.write(source / name, f"{FOLDER}/{name}")
    return archive


def offer_the_wheel(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    wheel = build_wheel(Path(app.srcdir), outdir / "downloads")
    source_archive(Path(app.srcdir), outdir / "downloads")
    linked = {name for page in outdir.rglob("*.html") for name in LINK.findall(page.read_text())}
    if linked - {wheel.name}:
        raise ExtensionError(
            f"pages link to {sorted(linked - {wheel.name})}, but the wheel built is {wheel.name}: "
            "change the links (intro.md, api.md, instructors.md) to the version in pyproject.toml"
        )


def setup(app):
    app.connect("build-finished", offer_the_wheel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
