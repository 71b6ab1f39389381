"""lnlib.book.experiments.family: the computed Table 1 of Ba, Kiros & Hinton (2016) equals the
paper's, and each verdict has a reason."""

import numpy as np
import pytest

from lnlib.book.experiments.family import (
    METHODS,
    PAPER_TABLE_1,
    ROUNDING_BOUND,
    TRANSFORMATIONS,
    invariance_table,
    max_change,
)

# Typed from the paper (REFERENCES.md), independently of lnlib's copy: "I" = Invariant, "N" = No.
COLUMNS = [
    "weight matrix re-scaling",
    "weight matrix re-centering",
    "weight vector re-scaling",
    "dataset re-scaling",
    "dataset re-centering",
    "single training case re-scaling",
]
PAPER = {
    "Batch norm": "I N I I I N",
    "Weight norm": "I N I N N N",
    "Layer norm": "I I N I N I",
}


def as_bools(row):
    return tuple(cell == "I" for cell in row.split())


def test_columns_are_the_papers_in_order():
    assert list(TRANSFORMATIONS) == COLUMNS


@pytest.mark.parametrize("seed", range(5))
def test_computed_rows_equal_the_papers_table(seed):
    table = invariance_table(seed=seed)
    for method, row in PAPER.items():
        assert table.invariant[method] == as_bools(row), f"{method} (seed {seed})"


def test_lnlibs_copy_of_the_paper_is_the_paper():
    assert PAPER_TABLE_1 == {method: as_bools(row) for method, row in PAPER.items()}


def test_rms_norm_row():
    # Derived by hand: RMS(c a) = |c| RMS(a), so any positive factor common to all of a case's
    # summed inputs cancels (weight matrix, dataset and single case re-scaling); no mean is removed,
    # so a shift of all summed inputs (weight matrix re-centering) or of each unit by a different
    # amount (dataset re-centering) shows, and so does scaling one unit (weight vector re-scaling),
    # which changes the case's RMS.
    assert invariance_table().invariant["RMS norm"] == as_bools("I N N I N I")


def test_verdicts_are_far_from_the_tolerance():
    """Invariant outputs move by rounding only (below the bound chapter 10 states); the others by a
    visible fraction."""
    changes = np.array(list(invariance_table().changes.values()))
    assert changes[changes <= 1e-9].max() < ROUNDING_BOUND
    assert changes[changes > 1e-9].min() > 1e-2


def test_layer_norm_recentering_invariance_is_the_mean_shift_by_hand():
    # W' = W + 1 g^T adds g.x to every unit's summed input of case x: layer norm removes it, batch
    # norm does not.
    rng = np.random.default_rng(0)
    W, X = rng.normal(size=(4, 3)), rng.normal(loc=1.0, size=(10, 3))
    g = rng.normal(size=3)
    shifted = X @ (W + g).T
    np.testing.assert_allclose(shifted, X @ W.T + (X @ g)[:, None])
    assert max_change("Layer norm", "weight matrix re-centering", W, X, rng) < 1e-12
    assert max_change("Batch norm", "weight matrix re-centering", W, X, rng) > 1e-2


def test_bad_names_and_sizes_are_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="method must be one of"):
        max_change("Group norm", COLUMNS[0], np.ones((2, 2)), np.ones((2, 2)), rng)
    with pytest.raises(ValueError, match="transformation must be one of"):
        max_change("Layer norm", "rotation", np.ones((2, 2)), np.ones((2, 2)), rng)
    with pytest.raises(ValueError, match="cases must be at least 2"):
        invariance_table(cases=1)


def test_methods_are_the_four_rows():
    assert list(METHODS) == ["Batch norm", "Weight norm", "Layer norm", "RMS norm"]
