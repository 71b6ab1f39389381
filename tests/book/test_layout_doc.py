"""CONTRIBUTING.md's "Layout" names every module under lnlib/, so the map a newcomer reads matches
the tree.

The matching rule, read from the section's tree block and its table:

- a library module ``lnlib/<stem>.py`` is named when the block has ``<stem>.py`` or a table row
  starts with `` `<stem>` ``;
- a book module ``lnlib/book/<package>/<stem>.py`` is named when ``<stem>`` appears as a word in its
  package's entry of the block (``<package>/`` and its continuation lines) or in the table's rows
  for ``book.<package>``; in a package whose entry says ``<chapter>.py``, a module named for a
  chapter's slug (``chapters/NN_<slug>.ipynb``) is named by that pattern;
- a package's ``__init__.py`` is covered by its folder, which must have its own entry in the block.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LNLIB = ROOT / "lnlib"
SLUGS = {path.stem.split("_", 1)[1] for path in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")}


def layout_section() -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    match = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, 'CONTRIBUTING.md has no "## Layout" section'
    return match.group(1)


SECTION = layout_section()
BLOCK = re.search(r"^```\n(.*?)^```", SECTION, flags=re.M | re.S).group(1).splitlines()
ROWS = [line for line in SECTION.splitlines() if line.startswith("| `")]


def first_cell(row: str) -> str:
    return row.split("|")[1].strip().strip("`")


def block_entry(folder: str) -> str | None:
    """The block's line for `folder` (``models/``) and the continuation lines indented under it."""
    for i, line in enumerate(BLOCK):
        indent = len(line) - len(line.lstrip())
        if line.lstrip().startswith(folder):
            entry = [line]
            for nxt in BLOCK[i + 1 :]:
                if not nxt.strip() or len(nxt) - len(nxt.lstrip()) <= indent + 8:
                    break
                entry.append(nxt)
            return "\n".join(entry)
    return None


def book_modules() -> list[Path]:
    return sorted((LNLIB / "book").rglob("*.py"))


def named(module: Path) -> bool:
    relative = module.relative_to(LNLIB)
    stem = module.stem
    if len(relative.parts) == 1:  # the library
        return any(f"{stem}.py" in line for line in BLOCK) or any(
            first_cell(row) == stem for row in ROWS
        )
    in_book = relative.parts[0] == "book"
    package = ".".join(relative.parts[1 if in_book else 0 : -1])  # "models" (lnlib/book) or "gpu"
    entry = block_entry(package.replace(".", "/") + "/") or ""
    prefix = r"book\." if in_book else ""
    rows = [
        r
        for r in ROWS
        if re.fullmatch(rf"{prefix}{re.escape(package)}(\..*)?( \(a package\))?", first_cell(r))
    ]
    text = "\n".join([entry, *rows])
    if "<chapter>.py" in entry and stem in SLUGS:
        return True
    return re.search(rf"\b{re.escape(stem)}\b", re.sub(r"<\w+>", "", text)) is not None


def test_the_layout_section_has_a_block_and_a_table():
    assert BLOCK and ROWS


@pytest.mark.parametrize(
    "package",
    sorted({p.parent for p in book_modules() if p.parent != LNLIB / "book"}),
    ids=lambda p: str(p.relative_to(LNLIB)),
)
def test_every_book_package_has_its_entry(package):
    assert block_entry(package.name + "/"), f"CONTRIBUTING.md's Layout block has no {package.name}/"


def test_every_module_under_lnlib_is_named_in_the_layout():
    library_packages = [p for p in LNLIB.glob("*/*.py") if p.parent.name != "book"]
    modules = sorted(LNLIB.glob("*.py")) + [
        p for p in book_modules() + library_packages if p.name != "__init__.py"
    ]
    missing = [str(p.relative_to(ROOT)) for p in modules if not named(p)]
    assert missing == [], f"add these to CONTRIBUTING.md's Layout (block or table): {missing}"


def test_the_rule_catches_a_module_left_out():
    assert not named(LNLIB / "book" / "tools" / "no_such_tool.py")
    assert not named(LNLIB / "book" / "exercises" / "no_such_helper.py")
    assert not named(LNLIB / "no_such_module.py")
    assert not named(LNLIB / "gpu" / "no_such_kernel.py")
    assert named(LNLIB / "book" / "figures" / "mean.py")  # a chapter slug, by `<chapter>.py`
