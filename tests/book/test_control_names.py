"""Every control of every chapter's explorer says what it moves and reads its value with its unit
(WCAG 4.1.2 "Name, Role, Value").

Build-free: each chapter's own explorer call (its Explore cell) is evaluated, and its website plan
(:func:`lnlib.book.explorers.web.web_states`) is read: every control (the website's sweep controls
included) must carry an accessible name that starts with its visible label and says more, and a
spoken value for every position; a number must read back as the value it stands for, with the unit
listed below for a count, and with none for a pure number. A new numeric control must be listed
here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from lnlib.book.explorers.base import Meaning, spoken_number
from lnlib.book.explorers.web import web_plan, web_states
from lnlib.book.tools.cells import evaluate

ROOT = Path(__file__).resolve().parents[2]
EXPLORER_CALL = re.compile(r"^\w+_explorer\(.*\)\s*$", re.S)

#: The unit of every control that counts something, by (explorer class, control name): the reader
#: hears it.
UNITS = {
    ("WhyNormalizeExplorer", "depth"): "layer",
    ("InputExplorer", "batch"): "sample",
    ("InputExplorer", "length"): "token",
    ("InputExplorer", "features"): "feature",
    ("FamilyExplorer", "batch"): "sample",
    ("FamilyExplorer", "groups"): "group",
    ("PrePostNormExplorer", "depth"): "layer",
    ("PrePostNormExplorer", "width"): "feature",
    ("After2020Explorer", "depth"): "layer",
    ("MemorySpeedExplorer", "size"): "feature",
    ("MemorySpeedExplorer", "rows"): "row",
    ("FactCheckExplorer", "size"): "feature",
}
#: Numeric controls whose quantity is a pure number (a scale, ε, a shift): no unit.
PURE_NUMBERS = {
    ("WhyNormalizeExplorer", "weight_scale"),
    ("EpsilonExplorer", "eps"),
    ("EpsilonExplorer", "spread"),
    ("NormalizingExplorer", "eps"),
    ("GradientsExplorer", "eps"),
    ("NumericsExplorer", "shift"),
}
#: Numeric controls read out in words of their own (they still start with their number).
WORDED = {
    ("CompleteExamplesExplorer", "step"): r"\d of \d: \S.*",
    ("After2020Explorer", "qk_scale"): r"× \d+",
}
SWEPT = re.compile(
    r"^(x|dy|gamma|beta)\d$|^value$"
)  # one slider per vector entry (the website's "value"): pure numbers
PLAIN = re.compile(r"−?[\d.]+( × 10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)?|√2|1e-5 \(PyTorch\)|1e-5")


def chapter_explorers() -> dict[str, str]:
    """Chapter -> its explorer cell's source, e.g.
    ``mean_explorer(values=[1.0, 2.0, 3.0, 4.0])``."""
    found = {}
    for notebook in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            text = "".join(cell["source"]).strip()
            if cell["cell_type"] == "code" and EXPLORER_CALL.match(text):
                found[notebook.stem] = text
    return found


EXPLORERS = chapter_explorers()


def number_of(text: str) -> float:
    """The number a spoken value starts with: "1 × 10⁻⁵" -> 1e-05, "−0.25" -> -0.25, "12 layers" ->
    12."""
    digits = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
    match = re.match(r"^(?:× )?(−?[\d.]+(?:e-\d+)?)(?: × 10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+))?", text)
    assert match, f"{text!r} does not start with a number"
    mantissa = float(match.group(1).replace("−", "-"))
    return mantissa * 10.0 ** int(match.group(2).translate(digits)) if match.group(2) else mantissa


def test_every_chapter_with_an_explorer_is_checked():
    assert len(EXPLORERS) >= 15, f"found explorer cells in only {sorted(EXPLORERS)}"


def named_controls(explorer, states) -> list[tuple]:
    """(name, visible label, accessible name, kind, values, spoken values) of every website control;
    the sweep's value slider once per entry it can move."""
    named = [(c.name, c.label, c.what, c.kind, c.values, c.spoken) for c in states.controls]
    if states.sweep:
        grids = web_plan(explorer).grids
        for entry, label, what, spoken in zip(
            states.controls[1].values,
            states.sweep["names"],
            states.sweep["whats"],
            states.sweep["spoken"],
        ):
            named.append((entry, label, what, "range", grids[entry], tuple(spoken)))
    return named


@pytest.mark.parametrize("chapter", sorted(EXPLORERS))
def test_every_control_says_what_it_moves_and_its_value(chapter):
    cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
    index = next(
        i for i, c in enumerate(cells) if "".join(c["source"]).strip() == EXPLORERS[chapter]
    )
    explorer = evaluate(cells, index, EXPLORERS[chapter])  # the chapter's own call, its example
    kind = type(explorer).__name__
    for name, control in explorer.controls.items():
        assert isinstance(control.meaning, Meaning), f"{kind}.{name}: no Meaning"
        assert control.tooltip.startswith(control.meaning.what), (
            f"{kind}.{name}: the notebook's tooltip does not say what the control moves"
        )
    for name, label, what, control_kind, values, spoken in named_controls(
        explorer, web_states(explorer)
    ):
        where = f"{chapter}: {kind}.{name}"
        assert what.startswith(label) and len(what) > len(label) + 5, (
            f"{where}: name {what!r} does not start with the visible label {label!r} and say more"
        )
        assert len(spoken) == len(values), f"{where}: {len(spoken)} spoken values for {len(values)}"
        assert all(t.strip() for t in spoken), f"{where}: an empty spoken value"
        if control_kind == "range":
            assert len(set(spoken)) == len(spoken), (
                f"{where}: two positions read the same: {spoken}"
            )
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            continue  # a list of named options (a preset, a method): their names are what is read
        unit = UNITS.get((kind, name))
        assert (
            unit or (kind, name) in PURE_NUMBERS or (kind, name) in WORDED or SWEPT.match(name)
        ), f"{where}: a numeric control in none of UNITS, PURE_NUMBERS and WORDED"
        for value, text in zip(values, spoken):
            if unit:
                expected = f" {unit}" if value == 1 else f" {unit}s"
                assert text.endswith(expected), f"{where}: {text!r} lacks its unit {expected!r}"
                text = text.removesuffix(expected)
            pattern = WORDED.get((kind, name), PLAIN)
            assert re.fullmatch(pattern, text), f"{where}: {text!r} is not read as {pattern}"
            if text == "√2":
                assert np.isclose(value, np.sqrt(2)), f"{where}: √2 stands for {value}"
            else:  # 2 significant digits at least: within 5 %
                assert np.isclose(number_of(text), value, rtol=0.05), (
                    f"{where}: {text!r} does not read back as {value}"
                )


def test_spoken_numbers():
    """A few values worked by hand: the powers of ten a screen reader says, a true minus sign."""
    assert spoken_number(1e-5, 2) == "1 × 10⁻⁵"
    assert spoken_number(10**-5.5, 2) == "3.2 × 10⁻⁶"
    assert spoken_number(-0.25) == "−0.25"
    assert spoken_number(1e4, 3) == "1 × 10⁴"
    assert spoken_number(1024) == "1024"
    # a log slider's labels keep one notation across its decades (learner A6: "0.0001" after
    # "3.16 × 10⁻⁵" on chapter 05's ε slider)
    assert spoken_number(1e-4, 3, powers=True) == "1 × 10⁻⁴"
    assert spoken_number(10**-0.5, 3, powers=True) == "3.16 × 10⁻¹"
    assert (
        spoken_number(1.0, 3, powers=True) == "1"
        and spoken_number(10.0, 3, powers=True) == "1 × 10¹"
    )
    assert Meaning("depth L, layers", "layer").text(1) == "1 layer"
    assert Meaning("depth L, layers", "layer").text(12) == "12 layers"
    assert Meaning("on", "").text(True) == "on"
    assert Meaning("a", "").text(np.sqrt(2), "√2") == "√2"
