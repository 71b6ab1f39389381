"""The library stays a library: `import lnlib` loads nothing of the book's, no top-level module imports
lnlib.book, and the top level stays small enough to read (CONTRIBUTING.md, "Layout"; ARCHITECTURE.md, "The layers")."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = sorted((ROOT / "lnlib").glob("*.py"))
MAX_TOP_LEVEL = 14


def test_import_lnlib_loads_no_plotting_widgets_or_sympy():
    code = (
        "import lnlib, sys; print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'matplotlib','ipywidgets','IPython','sympy'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", "import lnlib loaded " + done.stdout


def test_import_lnlib_loads_no_book_module():
    code = "import lnlib, sys; print(sorted(m for m in sys.modules if m.startswith('lnlib.book')))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", "import lnlib loaded " + done.stdout


def imported_modules(path: Path) -> list[str]:
    """Every module a file imports (anywhere in it, functions included), as an absolute dotted name."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # a top-level module's package is lnlib
                base = "lnlib" + ("." + base if base else "")
            names += [base] + [f"{base}.{alias.name}" for alias in node.names]
    return names


def test_no_library_module_imports_the_book():
    offenders = {
        path.name: [
            m for m in imported_modules(path) if m == "lnlib.book" or m.startswith("lnlib.book.")
        ]
        for path in LIBRARY
    }
    assert {name: mods for name, mods in offenders.items() if mods} == {}


def test_the_library_is_at_most_14_top_level_modules():
    assert LIBRARY, "no lnlib/*.py found"
    assert len(LIBRARY) <= MAX_TOP_LEVEL, [path.name for path in LIBRARY]
