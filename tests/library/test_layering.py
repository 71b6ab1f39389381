"""The library stays a library: `import lnlib` loads nothing of the book's, no top-level module
imports lnlib.book, and the top level stays small enough to read (CONTRIBUTING.md, "Layout";
ARCHITECTURE.md, "The layers")."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = sorted((ROOT / "lnlib").glob("*.py"))
#: The library: the top level and its sub-packages (lnlib.gpu), everything but lnlib.book.
LIBRARY = sorted(
    p for p in (ROOT / "lnlib").rglob("*.py") if p.relative_to(ROOT / "lnlib").parts[0] != "book"
)
#: 15 since harness_add (the fused add's checks) was split from harness, already 1300 lines.
MAX_TOP_LEVEL = 15


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
    """Every module a file imports (anywhere in it, functions included), as an absolute dotted
    name."""
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


def test_the_library_is_at_most_15_top_level_modules():
    assert TOP_LEVEL, "no lnlib/*.py found"
    assert len(TOP_LEVEL) <= MAX_TOP_LEVEL, [path.name for path in TOP_LEVEL]


def test_the_library_includes_its_sub_packages():
    assert ROOT / "lnlib" / "gpu" / "kernels.py" in LIBRARY
    assert not any("book" in p.parts for p in LIBRARY)


def module_name(path: Path) -> str:
    """The dotted name of the lnlib module at `path` (a package by its ``__init__.py``)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Every lnlib module and the lnlib modules it imports, anywhere in it (functions included).

    ``from .x import y`` counts as importing ``x.y`` when that is a module, else ``x``. The parent
    packages Python imports on the way are not edges: a package's ``__init__`` re-exports its
    modules, and counting it would make every module a cycle with its own package.
    """
    paths = sorted((ROOT / "lnlib").rglob("*.py"))
    modules = {module_name(path): path for path in paths}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            else:
                continue
            edges |= {t for t in targets if t in modules and t != name}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_planted_cycle():
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(planted) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_sees_relative_and_function_local_imports():
    graph = import_graph()
    assert "lnlib.book.explorers.web" in graph["lnlib.book.explorers.base"]  # inside a method
    assert "lnlib.validation" in graph["lnlib.forward"]
    assert "lnlib.book.figures.render" in graph["lnlib.book.explorers.web"]


def test_no_lnlib_modules_import_each_other_in_a_cycle():
    """A cycle makes what a module sees depend on which one was imported first (ARCHITECTURE.md,
    "The layers"): every import, a function's included, goes one way."""
    assert cycles(import_graph()) == []
