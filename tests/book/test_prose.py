"""Numbers and citations in the prose read right in JupyterLab and on the website (CONTRIBUTING.md,
"Prose that renders in both places").

The notebook carries each computed number as a literal between two HTML comments naming its glue key
(lnlib/book/tools/prose.py); the website replaces the marker by the glued value of its own build
(_ext/prose_markers.py). nbval proves each committed glue output equals a fresh run; these tests
prove each literal equals its committed glue output, so what JupyterLab shows before any cell runs
is the number the code computes.
"""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from pybtex.database import parse_file

from lnlib.book.tools import prose

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
sys.path.insert(0, str(ROOT / "_ext"))
import prose_markers  # noqa: E402  (the book's own Sphinx extension)

CITE_MARKER = re.compile(r"<!--(?:cite|citet):([\w,-]+)-->(.*?)<!--/(?:cite|citet)-->")
# Markup that JupyterLab (even with jupyterlab-myst) shows raw or cannot resolve: not used in prose.
UNRENDERED = re.compile(r"\{(glue(:\w+)?|doc|ref|cite(:\w+)?|eval|numref|eq)\}`")


def markdown_cells(path):
    return [
        cell
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if cell["cell_type"] == "markdown"
    ]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_prose_number_is_its_committed_glue_text(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    texts = prose.glued_texts(nb)
    for cell in markdown_cells(path):
        for key, literal in prose.MARKER.findall("".join(cell["source"])):
            assert key in texts, (
                f"{path.name}: the prose names glue key {key!r}, which no cell glues"
            )
            assert literal == texts[key], (
                f"{path.name}: the prose shows {literal!r} for {key!r} but the code glued "
                f"{texts[key]!r}: run `make notebooks`"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_website_prints_each_glued_text_as_committed(path):
    """myst-nb's glue:text passes the stored text through its own formatter; it must come back
    unchanged."""
    from myst_nb.core.variables import format_plain_text

    nb = json.loads(path.read_text(encoding="utf-8"))
    stored = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            record = out.get("metadata", {}).get("scrapbook", {})
            if "name" in record:
                stored[record["name"]] = "".join(out["data"][record["mime_prefix"] + "text/plain"])
    for cell in markdown_cells(path):
        for key, literal in prose.MARKER.findall("".join(cell["source"])):
            assert format_plain_text(stored[key], "s") == literal, (
                f"{path.name}: the website would print {key!r} differently from {literal!r}"
            )


# Markdown or TeX inside a glued text: the website's glue:text prints it literally ("$H = 64$").
MARKUP_IN_TEXT = re.compile(r"\$|`|\*\*|\[[^\]]*\]\(")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_glued_prose_holds_no_markup(path):
    """A learner saw raw "$x$" on the website where JupyterLab rendered math between the same
    markers."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    texts = prose.glued_texts(nb)
    for cell in markdown_cells(path):
        for key, _ in prose.MARKER.findall("".join(cell["source"])):
            found = MARKUP_IN_TEXT.search(texts[key])
            assert found is None, (
                f"{path.name}: glued text {key!r} holds {found.group(0)!r}, which the website "
                f"prints raw: {texts[key][:80]!r}"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_prose_uses_no_markup_jupyterlab_cannot_render(path):
    for cell in markdown_cells(path):
        text = "".join(cell["source"])
        found = UNRENDERED.search(text)
        assert found is None, (
            f"{path.name}: {found.group(0)!r} renders raw or unresolved in JupyterLab; see "
            "CONTRIBUTING.md for the marker or link to use"
        )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_marker_starts_a_line(path):
    """A line that starts with an HTML comment starts a raw HTML block in CommonMark: JupyterLab
    would show the rest of that paragraph as HTML (math unrendered). Keep markers inside the
    sentence."""
    for cell in markdown_cells(path):
        for line in "".join(cell["source"]).split("\n"):
            assert not line.lstrip().startswith("<!--"), (
                f"{path.name}: a line starts with a marker: {line[:60]!r}"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_marker_closes_on_its_line(path):
    """The website's extension (_ext/prose_markers.py) reads the notebook's raw JSON, where a cell's
    line break ends a string: a marker whose text runs onto the next line is never turned into its
    role, and its comments stay in the page (truth audit 13: "Dehghani et / al. [2023]")."""
    opening = re.compile(r"<!--(glue|cite|citet):[\w,-]+-->")
    for cell in markdown_cells(path):
        for line in "".join(cell["source"]).split("\n"):
            assert len(opening.findall(line)) == len(prose_markers.MARKER.findall(line)), (
                f"{path.name}: a marker does not close on its line: {line[:80]!r}"
            )


BIB = parse_file(str(ROOT / "references.bib")).entries


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_citation_names_its_authors_and_year(path):
    for cell in markdown_cells(path):
        for keys, literal in CITE_MARKER.findall("".join(cell["source"])):
            for key in keys.split(","):
                assert key in BIB, f"{path.name}: cites {key!r}, which references.bib does not have"
                entry = BIB[key]
                surname = " ".join(
                    (entry.persons.get("author") or entry.persons["editor"])[0].last_names
                )
                assert surname in literal and entry.fields["year"] in literal, (
                    f"{path.name}: the citation of {key} reads {literal!r}, without {surname} and "
                    f"{entry.fields['year']}"
                )


def test_the_website_gets_this_builds_roles():
    text = (
        "a <!--glue:mean_sample1-->2.5<!--/glue--> b <!--cite:ba2016layer,wu2018group-->[Ba et "
        "al., 2016; Wu and He, 2018]<!--/cite-->"
    )
    assert (
        prose_markers.to_roles(text)
        == "a {glue:text}`mean_sample1` b {cite}`ba2016layer,wu2018group`"
    )
    textual = "as <!--citet:xu2019understanding-->Xu et al. [2019]<!--/citet--> show"
    assert prose_markers.to_roles(textual) == "as {cite:t}`xu2019understanding` show"


@pytest.mark.parametrize(
    "value, spec, text",
    [
        (1e-05, "", "10⁻⁵"),
        (1e-05, ".0e", "10⁻⁵"),
        (8990000.0, ".2e", "8.99 × 10⁶"),
        (2.5e-06, ".1e", "2.5 × 10⁻⁶"),
        (2.5, "", "2.5"),
        (13.5, ".2f", "13.50"),
        (-0.25, ".3f", "−0.250"),
        (12345, ",", "12,345"),
        (7, "", "7"),
    ],
)
def test_numbers_are_written_for_prose(value, spec, text):
    assert str(prose.number(value, spec)) == text and repr(prose.number(value, spec)) == repr(text)


def test_prose_number_rejects_what_is_not_a_finite_number():
    with pytest.raises(TypeError, match="real number"):
        prose.number("1e-5")
    with pytest.raises(ValueError, match="finite"):
        prose.number(float("nan"))


def test_fill_names_a_missing_key():
    with pytest.raises(KeyError, match="never_glued"):
        prose.fill_markers("x <!--glue:never_glued-->1<!--/glue-->", {})
    assert (
        prose.fill_markers("x <!--glue:a-->old<!--/glue-->", {"a": "new"})
        == "x <!--glue:a-->new<!--/glue-->"
    )


def test_a_spread_keeps_only_the_digits_its_seeds_support():
    # 8 seeds with sd 1: the mean's standard error is 0.37, so tenths would be noise
    nbsp = "\u00a0"  # "±" sits between no-break spaces: "31 ± 1" never wraps
    assert (
        str(prose.mean_sd([30.0, 31.0, 32.0, 29.5, 31.5, 30.5, 32.5, 30.0])) == f"31{nbsp}±{nbsp}1"
    )
    tight = prose.mean_sd(5 + np.linspace(-1e-3, 1e-3, 8))
    assert str(tight) == f"5.000{nbsp}±{nbsp}0.0007" and tight.n == 8
    # sd 0.3 over 24 seeds: standard error 0.06, so the tenths digit is supported (1.4, not 1)
    assert (
        str(prose.mean_sd(1.4 + 0.3 * np.tile([-1.0, 1.0], 12) * np.sqrt(23 / 24)))
        == f"1.4{nbsp}±{nbsp}0.3"
    )  # standard error 0.00025: three decimals


def test_spreads_agree_within_four_standard_errors_of_their_difference():
    one, two = prose.mean_sd([1.0, 2.0, 3.0, 4.0]), prose.mean_sd([2.0, 3.0, 4.0, 5.0])
    assert one.agrees_with(two) and two.agrees_with(
        one
    )  # means 1 apart, standard error of the difference 0.91
    assert not one.agrees_with(prose.mean_sd([11.0, 12.0, 13.0, 14.0]))


@pytest.mark.parametrize("values", [[1.0], [1.0, float("nan")], []])
def test_mean_sd_refuses_what_has_no_spread_to_state(values):
    with pytest.raises(ValueError, match="at least two finite values"):
        prose.mean_sd(values)


@pytest.mark.parametrize("display", [False, True])
@pytest.mark.parametrize("value", [prose.number(0.123, ".3f"), 2.5, "text"])
def test_glue_displays_what_myst_nb_glue_displays(value, display, monkeypatch):
    glue_module = pytest.importorskip(
        "myst_nb.ext.glue", reason="myst-nb is not installed: run `make test`"
    )
    import IPython.display

    calls = []
    record = lambda *args, **kwargs: calls.append((args, kwargs))  # noqa: E731
    monkeypatch.setattr(glue_module, "ipy_display", record)
    monkeypatch.setattr(IPython.display, "display", record)
    glue_module.glue("key", value, display)
    prose.glue("key", value, display)
    assert len(calls) == 2 and calls[0] == calls[1]
    bundle = calls[1][0][0]
    assert bundle[("" if display else prose.GLUE_PREFIX) + "text/plain"] == repr(value)
