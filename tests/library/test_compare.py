"""lnlib.compare: the table that tells a reader whether two results agree."""

import numpy as np
import pytest

from lnlib import compare


def test_compare_reports_exact_close_and_difference(capsys):
    result = compare("dx", np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    assert (result.exact, result.close) == (False, True)
    assert result.max_abs_diff == pytest.approx(1e-9, rel=1e-6)
    line = capsys.readouterr().out
    assert (
        line.startswith("dx")
        and "exact: False" in line
        and "allclose: True" in line
        and "1.00e-09" in line
    )


def test_compare_exact_and_not_close(capsys):
    assert compare("same", [1, 2], [1, 2], show=False).exact
    far = compare("far", [0.0, 1.0], [0.0, 1.1], show=False)
    assert not far.close and far.max_abs_diff == pytest.approx(0.1)
    assert capsys.readouterr().out == ""


def test_compare_refuses_shapes_that_would_broadcast():
    with pytest.raises(ValueError, match=r"shapes differ, \(2, 1\) \(ours\) against \(2,\)"):
        compare("mu", np.zeros((2, 1)), np.zeros(2))


def test_compare_lines_fit_the_books_80_columns(capsys):
    for name in ("dx", "n" * 24, "a name longer than the name column holds"):
        compare(name, np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and max(len(line) for line in lines) <= 80
    assert lines[2] == "a name longer than the name column holds" and lines[3].lstrip().startswith(
        "| allclose: True"
    )
