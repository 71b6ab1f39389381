"""The stored PyTorch reference data (lnlib/book/data/pytorch_reference.*): small, with provenance,
and not drifted.

The chapters show PyTorch's outputs from this file, so the website carries the evidence without
PyTorch. With PyTorch installed (CI installs it) every case is computed again here and must match
the stored file.
"""

import json

import numpy as np
import pytest

from lnlib.book.tools import pytorch_reference as ref


def test_provenance_names_version_date_and_command():
    provenance = json.loads(ref.PROVENANCE.read_text(encoding="utf-8"))
    assert provenance["torch"].count(".") == 2 and provenance["command"] == "make references"
    assert len(provenance["date"]) == 10 and provenance["date"][4] == "-"
    assert set(provenance["cases"]) == set(ref.CASES)


def test_data_file_is_small():
    assert ref.DATA.stat().st_size < 64 * 1024, (
        "keep the reference data in kilobytes: store a summary of large outputs"
    )


def test_every_case_accepts_the_inputs_it_was_made_from():
    for case, spec in ref.CASES.items():
        stored = ref.pytorch_reference(case, **spec.inputs())
        assert str(stored).startswith("PyTorch ")
        assert all(isinstance(stored[label], np.ndarray) for label in stored.outputs)


def test_changed_inputs_are_refused_with_the_fix():
    with pytest.raises(
        ValueError, match=r"differ from the ones PyTorch was given.*make references"
    ):
        ref.pytorch_reference("variance", one_hot=np.array([0.0, 1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match=r"takes the inputs \['one_hot'\]"):
        ref.pytorch_reference("variance", x=np.zeros(4))
    with pytest.raises(ValueError, match="case must be one of"):
        ref.pytorch_reference("no_such_case")


def test_stored_outputs_match_pytorch_now(torch):
    """Regenerate every case: a changed input, call or PyTorch result shows up here as drift."""
    outputs, digests = ref.run_cases(torch)
    provenance = json.loads(ref.PROVENANCE.read_text(encoding="utf-8"))
    with np.load(ref.DATA) as data:
        for case, results in outputs.items():
            assert digests[case] == provenance["cases"][case]["inputs"], (
                f"{case}: inputs changed; run `make references`"
            )
            assert list(results) == provenance["cases"][case]["outputs"], (
                f"{case}: calls changed; run `make references`"
            )
            for label, value in results.items():
                stored = data[f"{case}::{label}"]
                assert stored.dtype == value.dtype and stored.shape == value.shape, (
                    f"{case}: {label}"
                )
                tolerance = (
                    1e-12
                    if value.dtype == np.float64
                    else 2 * float(np.finfo(value.dtype).eps)
                    if value.dtype.kind == "f"
                    else 0
                )
                np.testing.assert_allclose(
                    value,
                    stored,
                    rtol=tolerance,
                    atol=tolerance,
                    err_msg=(
                        f"{case}: {label} drifted from the stored reference; run `make references`"
                    ),
                )


def test_an_unchanged_case_keeps_its_date_and_a_changed_or_new_one_gets_today():
    # re-running make references to add a case must not re-date the evidence every other chapter
    # prints
    one, two = np.ones(3), np.arange(3.0)
    previous = {
        "date": "2000-01-01",
        "cases": {
            "kept": {"date": "2000-01-02", "inputs": {"x": "d"}, "outputs": ["y"]},
            "changed": {"date": "2000-01-02", "inputs": {"x": "d"}, "outputs": ["y"]},
            "undated": {"inputs": {"x": "d"}, "outputs": ["y"]},
            "recalled": {"date": "2000-01-02", "inputs": {"x": "d"}, "outputs": ["y"]},
        },
    }
    stored = {"kept::y": one, "changed::y": one, "undated::y": one, "recalled::y": one}
    outputs = {
        "kept": {"y": one},
        "changed": {"y": two},
        "undated": {"y": one},
        "recalled": {"z": one},
        "new": {"y": one},
    }
    digests = {case: {"x": "d"} for case in outputs}
    dates = ref.case_dates(outputs, digests, previous, stored, "2026-01-01")
    assert dates == {
        "kept": "2000-01-02",
        "changed": "2026-01-01",
        "undated": "2000-01-01",
        "recalled": "2026-01-01",
        "new": "2026-01-01",
    }
    moved = ref.case_dates(
        {"kept": {"y": one}}, {"kept": {"x": "e"}}, previous, stored, "2026-01-01"
    )
    assert moved == {"kept": "2026-01-01"}


def test_a_reference_prints_its_own_case_date():
    provenance = json.loads(ref.PROVENANCE.read_text(encoding="utf-8"))
    for case, spec in ref.CASES.items():
        expected = provenance["cases"][case].get("date", provenance["date"])
        assert f"(on {expected}," in str(ref.pytorch_reference(case, **spec.inputs()))


def test_agreement_counts_what_the_comparisons_found():
    """The one line chapters 04 to 08 print instead of the full table: counts and worst difference,
    with no "allclose: True" cell that tests/book/test_book.py would count as a second open
    table."""
    from lnlib.compare import Comparison

    reference = ref.pytorch_reference("gamma_beta")
    line = reference.agreement(
        Comparison("a", exact=True, close=True, max_abs_diff=0.0),
        Comparison("b", exact=False, close=True, max_abs_diff=2.5e-16),
        Comparison("c", exact=False, close=False, max_abs_diff=3.0),
    )
    assert (
        line == f"PyTorch {reference.torch_version}: 2 of 3 allclose, 1 exact, max |diff| 3.0e+00"
    )
    assert "allclose:" not in line and len(line) <= 80
    with pytest.raises(ValueError):
        reference.agreement()
