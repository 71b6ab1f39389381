"""What a chapter's cell needs from the cells before it: the book's tests evaluate one cell's
expression (an explorer call, an exercise's data) without running the whole chapter.

A chapter's explorer call or exercise may use the chapter's running example
(``mean_explorer(values=tokens[1])``, ``exercises.check(2, answer_2, token=token)``).
:func:`evaluate` runs only the earlier statements that bind what the expression reads, and what
those read in turn (a backward slice), then evaluates the expression; :func:`cells_needed` names the
whole cells a live notebook must run for it (JupyterLab runs cells, not statements). Used by
``tests/book/test_student_leaks.py``, ``tests/book/test_control_names.py`` and the browser tests
(``tests/browser/test_lab.py``, ``test_web_explorers.py``).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io


def code(cell: dict) -> str:
    """A code cell's source as Python (IPython's magics and shell lines dropped)."""
    return "\n".join(
        line for line in "".join(cell["source"]).splitlines() if not line.startswith(("%", "!"))
    )


def bound(stmt: ast.AST, *, nested: bool = True) -> set[str]:
    """The names a statement binds or changes (``x = ...``, ``x[0] += ...``, ``def x``,
    ``import x``).

    With ``nested=False``, only the names it binds in its own scope: a function's, a class's, a
    lambda's or a comprehension's inner names are theirs (``def f(): z = 1`` binds ``f`` only).

    >>> sorted(bound(ast.parse("a, b[0] = f(c)")))
    ['a', 'b']
    >>> sorted(bound(ast.parse("def f():\\n    z = 1"), nested=False))
    ['f']
    """
    names = set()
    for node in _nodes(stmt, nested):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                names.add(base.id)
    return names


SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _nodes(tree: ast.AST, nested: bool):
    """Every node of `tree`; with ``nested=False`` a nested scope yields itself but not its body."""
    if nested:
        yield from ast.walk(tree)
        return
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, SCOPES):
            pending.extend(ast.iter_child_nodes(node))


def read(stmt: ast.AST) -> set[str]:
    """The names a statement reads (builtins excluded).

    >>> sorted(read(ast.parse("y = np.sqrt(x) + len(x)")))
    ['np', 'x']
    """
    loaded = {
        n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return loaded - set(dir(builtins))


def _statements(cells: list[dict]) -> list[tuple[int, ast.stmt]]:
    return [
        (index, stmt)
        for index, cell in enumerate(cells)
        if cell["cell_type"] == "code"
        for stmt in ast.parse(code(cell)).body
    ]


def _slice(statements: list[tuple[int, ast.stmt]], need: set[str]) -> list[tuple[int, ast.stmt]]:
    keep = []
    for index, stmt in reversed(statements):  # each statement that binds a name still needed
        if bound(stmt) & need:
            keep.append((index, stmt))
            need |= read(stmt)
    return keep[::-1]


def evaluate(cells: list[dict], before: int, expression: str, *, own: str = ""):
    """`expression` evaluated after the statements of ``cells[:before]`` (and of `own`, the cell's
    own lines before it) that it needs; what those statements print is dropped.

    >>> cells = [{"cell_type": "code", "source": ["a = 2\\n", "b = 5\\n", "print(a)"]},
    ...          {"cell_type": "code", "source": ["c = a * 3"]}]
    >>> evaluate(cells, 2, "c + 1")
    7
    """
    own_cell = [{"cell_type": "code", "source": [own]}]
    statements = _statements(cells[:before]) + _statements(own_cell)
    keep = [stmt for _, stmt in _slice(statements, read(ast.parse(expression)))]
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(ast.Module(body=keep, type_ignores=[]), "<cells>", "exec"), namespace)  # noqa: S102
    return eval(expression, namespace)  # noqa: S307 (the committed chapter's own code)


def cells_needed(cells: list[dict], before: int, source: str) -> list[int]:
    """The indices of the earlier code cells a live notebook must run before `source` can run: every
    cell holding a statement `source` needs, and, since a cell runs whole, what the rest of each
    such cell reads.

    >>> cells = [{"cell_type": "code", "source": ["a = 2\\n", "z = 1"]},
    ...          {"cell_type": "code", "source": ["b = a + 1"]},
    ...          {"cell_type": "code", "source": ["q = 0"]}]
    >>> cells_needed(cells, 3, "print(b)")
    [0, 1]
    """
    statements = _statements(cells[:before])
    need, found = read(ast.parse(source)) - bound(ast.parse(source)), set()
    while True:
        more = {index for index, _ in _slice(statements, set(need))} - found
        if not more:
            return sorted(found)
        found |= more
        for index in more:
            whole = ast.parse(code(cells[index]))
            need |= read(whole) - bound(whole)
