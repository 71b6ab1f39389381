"""The book's structure: the table of contents, the chapter template, and the notebooks' committed
state.

These checks keep the chapter rules of CONTRIBUTING.md that nbval and the build cannot see:
every chapter follows the template, every explorer shows on the website (precomputed), every figure
has alt text, every glued number exists.
"""

import importlib
import json
import re
from pathlib import Path

import pytest
import yaml

import lnlib.book.explorers
from lnlib.book.tools import prose
from lnlib.book.tools.course import path_minutes
from lnlib.book.tools.notebooks import (
    PRACTITIONER_CHAPTERS,
    PRACTITIONER_OPENING,
    practitioner_line,
)

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
TEMPLATE_HEADINGS = ["The idea", "Explore", "Exercises", "Summary"]
# The sources' audit has one home, the fact check (CONTRIBUTING.md, "A chapter", step 4): its
# verdict table first, then its own idea and explorer, then every statement by topic, its forensics
# folded.
FACT_CHECK = "17_fact_check"
GLANCE, STATEMENTS = "The verdicts at a glance", "The statements, by topic"
FACT_CHECK_HEADINGS = [GLANCE, "The idea", "Explore", STATEMENTS, "Exercises", "Summary"]
# What lnlib.compare prints: a comparison table a reader may open, but at most one shown open per
# chapter.
COMPARISON = re.compile(r"exact: (True|False)|allclose: (True|False)")
EXPLORER_CALL = re.compile(r"\b(\w+_explorer)\(")
GLUE_REFERENCE = re.compile(r"<!--glue:([\w-]+)-->")


def toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell):
    return "".join(cell["source"])


def code_cells(nb):
    return [cell for cell in nb["cells"] if cell["cell_type"] == "code"]


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def test_every_toc_entry_exists():
    for name in toc_files():
        assert any((ROOT / f"{name}{suffix}").exists() for suffix in (".md", ".ipynb")), (
            f"_toc.yml lists {name}, which does not exist"
        )


def test_every_chapter_is_in_the_toc_in_numbered_order():
    # chapters/sources.md sits beside the chapters so their links work where only chapters/ is
    # handed out
    listed = [name for name in toc_files() if re.match(r"chapters/\d\d_", name)]
    assert sorted(listed) == [f"chapters/{path.stem}" for path in CHAPTERS], (
        "a chapter notebook is missing from _toc.yml (or the reverse)"
    )
    assert listed == sorted(listed), (
        "chapters must appear in _toc.yml in their numbered reading order"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_is_committed_executed_top_to_bottom(path):
    nb = load(path)
    counts = [cell["execution_count"] for cell in code_cells(nb) if source(cell).strip()]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: run it top to bottom in a fresh kernel (make notebooks)"
    )
    for cell in code_cells(nb):
        assert all(out["output_type"] != "error" for out in cell["outputs"]), (
            f"{path.name}: a stored output is an error"
        )
        for out in cell["outputs"]:
            assert not (out["output_type"] == "stream" and out["name"] == "stderr"), (
                f"{path.name}: stderr output (a warning?) in:\n{source(cell)}"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_practitioners_line_opens_chapters_09_to_16(path):
    """The line under the title, in the same words in each (learner B3's F4) but for the path's
    stops it names in the chapter (learner B, 2026-11-29: which sections to read, which to skip),
    as the tools state them; the "In practice" boxes keep their own links."""
    first = next(source(c) for c in load(path)["cells"] if c["cell_type"] == "markdown")
    lines = first.splitlines()
    if path.stem[:2] in PRACTITIONER_CHAPTERS:
        assert lines[1:3] == ["", practitioner_line(path.name, path_minutes(path))], (
            f"{path.name}: the first line under the title must be practitioner_line"
            " (lnlib.book.tools.notebooks), with path_minutes: run `make notebooks`"
        )
        assert sum(PRACTITIONER_OPENING in source(c) for c in load(path)["cells"]) == 1
    else:
        assert PRACTITIONER_OPENING not in first, f"{path.name}: not one of PRACTITIONER_CHAPTERS"


def test_practitioners_line_states_the_paths_own_time():
    path = (ROOT / "chapters" / "what_to_use_today.md").read_text(encoding="utf-8")
    box = path.split("{admonition} A practitioner's path through the book", 1)[1]
    from lnlib.book.tools.course import path_page_sentence

    stated = f"<!--time-->{path_page_sentence(ROOT / 'chapters')}<!--/time-->, an estimate"
    assert stated in box.split("```", 1)[0]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_follows_the_template(path):
    nb = load(path)
    markdown = "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert re.match(r"# .+", markdown), (
        f"{path.name}: the first markdown line must be the chapter title"
    )
    assert "**Goal.**" in markdown, f"{path.name}: no Goal paragraph"
    headings = FACT_CHECK_HEADINGS if path.stem == FACT_CHECK else TEMPLATE_HEADINGS
    positions = [markdown.find(f"## {heading}") for heading in headings]
    for heading, position in zip(headings, positions):
        assert position >= 0, f"{path.name}: missing section '## {heading}'"
    assert positions == sorted(positions), f"{path.name}: sections out of template order"
    first_section = re.search(r"^## (.+)$", markdown, re.M).group(1)
    assert first_section == headings[0], (
        f"{path.name}: the first section is {first_section!r}; a chapter opens with {headings[0]!r}"
    )
    assert "The documents' worked example" not in markdown, (
        f"{path.name}: the documents' worked example belongs, folded, in {FACT_CHECK}"
    )
    if path.stem == FACT_CHECK:
        assert "{admonition} Check the claim" in section(nb, STATEMENTS, "markdown"), (
            f"{path.name}: no 'Check the claim' box in '{STATEMENTS}'"
        )
    exercises = exercise_cells(nb)
    assert 2 <= len(exercises) <= 5, f"{path.name}: needs 2 to 5 exercises"


def section_cells(nb, heading: str) -> list[dict]:
    """The cells after the markdown cell that opens ``## heading``, up to the next ``## ``
    heading."""
    cells, inside = [], False
    for cell in nb["cells"]:
        text = source(cell)
        if cell["cell_type"] == "markdown" and re.search(r"^## ", text, re.M):
            opens = re.search(rf"^## {re.escape(heading)}$", text, re.M)
            if inside and not opens:
                break
            inside = inside or bool(opens)
        if inside:
            cells.append(cell)
    return cells


def section(nb, heading: str, kind: str) -> str:
    return "\n".join(source(c) for c in section_cells(nb, heading) if c["cell_type"] == kind)


def folded(cell) -> bool:
    """Folded on the website (hide-cell: input and output behind a toggle) and in JupyterLab."""
    hidden = cell["metadata"].get("jupyter", {})
    return "remove-cell" in tags(cell) or (
        "hide-cell" in tags(cell) and hidden.get("source_hidden") and hidden.get("outputs_hidden")
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_documents_forensics_fold_and_at_most_one_comparison_shows(path):
    """The fact check keeps its quotes and verdicts in view and folds its code (CONTRIBUTING.md, "A
    chapter", step 4): every code cell of its statements is folded on the website and in JupyterLab;
    in the whole chapter at most one cell shows an lnlib.compare table open."""
    nb = load(path)
    for cell in section_cells(nb, STATEMENTS) + section_cells(nb, GLANCE):
        if cell["cell_type"] == "code":
            assert folded(cell), (
                f"{path.name}: cell {cell['id']} in the fact check's statements is not folded "
                "(tag it hide-cell and set jupyter.source_hidden and jupyter.outputs_hidden)"
            )
    shown = [
        cell["id"]
        for cell in code_cells(nb)
        if not folded(cell)
        and any(COMPARISON.search(output_text(out)) for out in cell.get("outputs", []))
    ]
    assert len(shown) <= 1, f"{path.name}: {len(shown)} cells show comparison tables open: {shown}"


def output_text(output) -> str:
    if "text" in output:
        return "".join(output["text"])
    return "".join(output.get("data", {}).get("text/plain", ""))


# Lines of a code cell that exist for the prose, not for the reader: gluing numbers and their
# imports.
PLUMBING = re.compile(r"\bglue\(|\bprose\.|import glue\b|import prose\b")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_jupyterlab_shows_teaching_code_not_plumbing(path):
    """Cells the website removes start collapsed in JupyterLab, and glue/prose plumbing is at most 5
    % of the code lines JupyterLab shows open (plumbing stays out of the cells a reader sees)."""
    shown, plumbing = 0, []
    for cell in code_cells(load(path)):
        collapsed = cell["metadata"].get("jupyter", {}).get("source_hidden", False)
        if "remove-cell" in tags(cell):
            assert collapsed, (
                f"{path.name}: cell {cell['id']} is removed on the website but open in JupyterLab"
            )
        if not collapsed:
            lines = [line for line in source(cell).splitlines() if line.strip()]
            shown += len(lines)
            plumbing += [line for line in lines if PLUMBING.search(line)]
    assert len(plumbing) <= 0.05 * shown, (
        f"{path.name}: {len(plumbing)} of the {shown} code lines open in JupyterLab are plumbing: "
        f"{plumbing}"
    )


ANSWER_CELL = re.compile(r"^answer_(\d+) = None", re.M)
CHECK_LINE = re.compile(r"^exercises\.check\((\d+), answer_(\d+)(?:, .*)?\)$")
EXERCISES_IMPORT = re.compile(r"^from lnlib\.book\.exercises\.(\w+) import exercises$", re.M)
SOLUTION = re.compile(
    r"^:::\{dropdown\} Solution to exercise (\d+)\n```python\n(.*?)\n```\n:::$", re.S
)
# What building an expected answer in a chapter's cell would look like (it belongs in
# lnlib.book.exercises).
EXPECTED_IN_THE_CLEAR = re.compile(r"\bExercise\(|\bexpected_\d|\bmistakes\s*=|\bexercise_\d+\s*=")


def exercise_cells(nb):
    """Each exercise's two cells, by number: its one code cell (data, answer, check) and its
    collapsed solution."""
    cells = nb["cells"]
    found = {}
    for index, cell in enumerate(cells):
        match = ANSWER_CELL.search(source(cell)) if cell["cell_type"] == "code" else None
        if match:
            found[match.group(1)] = cells[index : index + 2]
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_ask_before_they_tell(path):
    """One cell per exercise answers and checks (a stale answer cannot pass), no cell holds an
    expected answer (lnlib.book.exercises builds it inside the check), and the solution is collapsed
    markdown, which Run All does not execute (CONTRIBUTING.md, "A chapter", step 5)."""
    nb = load(path)
    found = exercise_cells(nb)
    for k, (cell, solution) in found.items():
        where = f"{path.name}, exercise {k}"
        last = source(cell).strip().splitlines()[-1]
        match = CHECK_LINE.match(last)
        assert match and match.group(1) == match.group(2) == k, (
            f"{where}: the exercise's cell ends with exercises.check({k}, answer_{k}, ...), not "
            f"{last!r}"
        )
        assert solution["cell_type"] == "markdown", (
            f"{where}: the solution is a markdown dropdown, not a code cell Run All would execute"
        )
        match = SOLUTION.match(source(solution).strip())
        assert match and match.group(1) == k and f"answer_{k} =" in match.group(2), (
            f"{where}: the solution is ':::{{dropdown}} Solution to exercise {k}' around a python "
            f"block that sets answer_{k}"
        )
    # the audit's evidence folds: in the fact check's statements and table, and in an appendix after
    # the Summary
    markdown = "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    appendices = re.findall(r"^## (Appendix\b.*)$", markdown, re.M)
    for heading in appendices:
        assert markdown.find(f"## {heading}") > markdown.find("## Summary"), (
            f"{path.name}: '## {heading}' must come after the Summary"
        )
    documents = {
        cell["id"]
        for heading in (GLANCE, STATEMENTS, *appendices)
        for cell in section_cells(nb, heading)
    }
    # and a printout a reader may skip folds too (learner B: sympy's steps, a kernel's source), but
    # never in the exercises, nor a cell that sets an answer: solutions are collapsed markdown
    in_exercises = {cell["id"] for cell in section_cells(nb, "Exercises")}
    for cell in code_cells(nb):
        assert (
            "hide-cell" not in tags(cell)
            or cell["id"] in documents
            or (
                cell["id"] not in in_exercises
                and not re.search(r"^answer_\d+\s*=", source(cell), re.M)
            )
        ), (
            f"{path.name}: a hide-cell code cell in the exercises or setting an answer "
            "(solutions are collapsed markdown)"
        )
        assert not EXPECTED_IN_THE_CLEAR.search(source(cell)), (
            f"{path.name}: cell {cell['id']} builds an expected answer; that lives in "
            "lnlib.book.exercises"
        )
    imports = {m for cell in code_cells(nb) for m in EXERCISES_IMPORT.findall(source(cell))}
    assert len(imports) == 1, f"{path.name}: imports its exercises from one module, found {imports}"
    module = importlib.import_module(f"lnlib.book.exercises.{imports.pop()}")
    assert module.exercises.chapter == path.stem and len(module.exercises) == len(found), (
        f"{path.name}: {module.__name__} holds {len(module.exercises)} exercises of "
        f"{module.exercises.chapter}; the chapter asks {len(found)}"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_explorers_show_on_the_website_and_are_not_compared_by_nbval(path):
    """An explorer's output is the live widget in a kernel and the precomputed explorer on the
    website (lnlib.book.explorers.web): never removed, and never compared by nbval (a widget's model
    id changes per run)."""
    cells = load(path)["cells"]
    for cell in cells:
        if cell["cell_type"] != "code" or not EXPLORER_CALL.search(source(cell)):
            continue
        assert "nbval-ignore-output" in tags(cell), (
            f"{path.name}: the explorer cell must be tagged nbval-ignore-output"
        )
        assert not {"remove-output", "remove-cell", "hide-output"} & set(tags(cell)), (
            f"{path.name}: the explorer's output must show on the website"
        )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_ignored_outputs_are_only_live_explorers(path):
    """nbval may skip comparing a cell's output only where it legitimately varies: a live widget, or
    a comparison with PyTorch, which prints a skip note where the optional extra is not
    installed."""
    for cell in code_cells(load(path)):
        if "nbval-ignore-output" in tags(cell):
            # PyTorch's evidence is stored data (lnlib.book.tools.pytorch_reference), as
            # reproducible as any other output
            assert EXPLORER_CALL.search(source(cell)), (
                f"{path.name}: nbval-ignore-output on a cell that shows no "
                f"explorer:\n{source(cell)}"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_figure_has_alt_text(path):
    for cell in code_cells(load(path)):
        has_figure = any("image/png" in out.get("data", {}) for out in cell["outputs"])
        if has_figure and "remove-output" not in tags(cell):
            alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")
            assert len(alt) > 20, (
                f"{path.name}: a figure without alt text (cell metadata "
                f"mystnb.image.alt):\n{source(cell)}"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_glued_number_in_the_prose_is_computed_in_the_chapter(path):
    nb = load(path)
    used = {
        key
        for c in nb["cells"]
        if c["cell_type"] == "markdown"
        for key in GLUE_REFERENCE.findall(source(c))
    }
    defined = set(
        prose.glued_texts(nb)
    )  # what the executed chapter glued (one glue call may glue several keys)
    assert used <= defined, (
        f"{path.name}: glued in prose but never computed: {sorted(used - defined)}"
    )


def test_every_explorer_is_used_in_a_chapter():
    text = "\n".join(source(c) for path in CHAPTERS for c in load(path)["cells"])
    for name in lnlib.book.explorers.__all__:
        if name.endswith("_explorer"):
            assert f"{name}(" in text, f"{name} is in lnlib.book.explorers but no chapter shows it"


def test_every_page_footer_names_the_licences_and_how_to_cite():
    """The footer gives LICENSE-TEXT.md's licence for text and figures, LICENSE's for code, and a
    one-line citation with the package's version; it links, but loads nothing from outside (offline
    site)."""
    footer = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["extra_footer"]
    licence_text = (ROOT / "LICENSE-TEXT.md").read_text()
    assert "CC BY 4.0" in licence_text and "CC BY 4.0" in footer
    assert (ROOT / "LICENSE").read_text().startswith("MIT License") and "MIT licence" in footer
    version = re.search(r'^version = "(.+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert (
        "Cite as: The LayerNorm book team (2026). <em>LayerNorm, worked out</em>, version "
        f"{version}."
    ) in footer
    assert not re.search(r"<(img|script|link|iframe)\b|\bsrc=", footer)


HIDDEN_DEF = re.compile(r"^\s*(def|class) ", re.M)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_removed_cells_hold_plumbing_not_code_to_read(path):
    """A cell the website removes holds no function or class (code a reader might want to see, or a
    test to cover, lives in lnlib.book.experiments.<slug>) and at most 15 lines of gluing."""
    for cell in code_cells(load(path)):
        if "remove-cell" not in tags(cell):
            continue
        assert not HIDDEN_DEF.search(source(cell)), (
            f"{path.name}: cell {cell['id']} defines code in a removed cell; move it to "
            "lnlib.book.experiments"
        )
        lines = source(cell).splitlines()
        assert len(lines) <= 15, f"{path.name}: removed cell {cell['id']} has {len(lines)} lines"
