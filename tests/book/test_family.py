"""Chapter 10's BatchNorm lab: norm_lab_findings (what the chapter glues), checked on a record made
by hand and on the stored sweep, where each sentence of the chapter's findings must hold; and the
lab's figure."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lnlib.book.experiments.family import EVAL_BATCH, norm_lab_findings  # noqa: E402
from lnlib.book.figures.family import norm_lab_figure  # noqa: E402
from lnlib.book.figures.style import layout_problems  # noqa: E402
from lnlib.book.models.norm_lab import NORMS, load_lab  # noqa: E402

BATCHES, SEEDS, CHECKPOINTS = [2, 8, 32, 128, 256], [0, 1, 2], [1, 2, 4, 8]


def made_up_record(lag_gaps):
    """Accuracy = 50 + 10 * batch index + seed; BatchNorm at batch 2 is 20 + seed; lag gaps as
    given."""
    grid = [[50.0 + 10 * b + s for s in SEEDS] for b in range(len(BATCHES))]
    accuracy = {n: [row[:] for row in grid] for n in NORMS}
    accuracy["batch"][0] = [20.0 + s for s in SEEDS]
    running = np.full((len(SEEDS), len(CHECKPOINTS)), 40.0)
    return {
        "settings": {
            "batches": BATCHES,
            "seeds": SEEDS,
            "steps": 300,
            "rate": 3e-3,
            "high_rate": 3e-2,
            "lag_batch": 32,
            "checkpoints": CHECKPOINTS,
            "momentum": 0.2,
        },
        "accuracy": accuracy,
        "loss": {n: [[1.0, 1.2, 1.4]] * len(BATCHES) for n in NORMS},
        "batch_modes": {h: [row[:] for row in grid] for h in ("whole", "pairs", "one_class")},
        "lag": {
            key: {"running": running.tolist(), "whole": (running + lag_gaps).tolist()}
            for key in ("rate", "high_rate")
        },
    }


def test_findings_of_a_made_up_record():
    gaps = np.array([[5.0, 4.0, 3.0, -1.0], [6.0, 2.0, 1.0, 0.0], [7.0, 3.0, 2.0, 1.0]])
    found = norm_lab_findings(made_up_record(gaps))
    assert found["lab_bn_2"].value == pytest.approx(21.0)
    assert found["lab_ln_256"].value == pytest.approx(91.0)
    assert found["lab_bn_2_worst"].value == 3
    assert found["lab_running"].value == pytest.approx(50 + 10 * BATCHES.index(EVAL_BATCH) + 1)
    assert found["lab_lag_gap_1"].value == pytest.approx(6.0)
    assert found["lab_lag_steps"].value == 4  # positive in every seed up to the third checkpoint
    assert found["lab_lag_gap_end"].value == pytest.approx(0.0)
    assert str(found["lab_rate"]) == "3 × 10⁻³"
    assert found["lab_start_weight_1"].value == pytest.approx(0.8)  # 1 - momentum
    assert found["lab_start_weight_lag"].value == pytest.approx(0.8 * 0.8 * 0.8 * 0.8)  # 4 updates


def test_findings_refuse_a_lab_where_the_running_statistics_never_lag():
    with pytest.raises(ValueError, match="never lag"):
        norm_lab_findings(made_up_record(np.zeros((len(SEEDS), len(CHECKPOINTS)))))


@pytest.fixture(scope="module")
def stored():
    return load_lab()


@pytest.fixture(scope="module")
def found(stored):
    return norm_lab_findings(stored)


def test_stored_lab_batch_norm_at_batch_2_is_worst_in_every_seed(stored, found):
    assert found["lab_bn_2_worst"].value == len(stored["settings"]["seeds"])
    assert found["lab_bn_loss_2"].value > 2 * found["lab_ln_loss_2"].value


def test_stored_lab_layer_and_rms_at_batch_2_lose_what_no_norm_loses(found):
    # "within the spread of no norm": mean ± sd intervals overlap
    none = found["lab_none_2"]
    for key in ("lab_ln_2", "lab_rms_2"):
        spread = found[key]
        assert abs(spread.value - none.value) <= spread.sd + none.sd, key


def test_stored_lab_at_batch_256_the_four_norms_are_alike(found):
    means = [found[f"lab_{n}_256"].value for n in ("none", "bn", "ln", "rms")]
    assert max(means) - min(means) < 1.5


def test_stored_lab_train_mode_fails_on_pairs_and_one_digit_batches(found):
    assert abs(found["lab_whole"].value - found["lab_running"].value) < 1
    assert found["lab_pairs"].value < 60 < 95 < found["lab_running"].value
    assert found["lab_one_class"].value < 15  # chance is 10 %


def test_stored_lab_running_statistics_lag_then_catch_up(found):
    assert found["lab_lag_gap_1"].value > 3 * found["lab_lag_gap_1"].sd / np.sqrt(5)
    assert found["lab_lag_steps"].value >= 4
    assert found["lab_lag_gap_base"].value > 0
    assert abs(found["lab_lag_gap_end"].value) < 1


def test_norm_lab_figure_reads_cleanly(stored):
    fig = norm_lab_figure(stored)
    try:
        assert layout_problems(fig) == []
        assert len(fig.axes) == 4
        assert all(ax.get_xlabel() and ax.get_title() for ax in fig.axes)
        assert fig.axes[0].get_ylabel() == "test accuracy (%)"
    finally:
        plt.close(fig)


# --- the chapter's prose numbers (experiments.family.*_findings) --------------------------------


def _texts(found: dict) -> dict:
    return {key: str(value) for key, value in found.items()}


def test_outlier_findings_compare_rows_and_columns():
    from lnlib.book.experiments.family import outlier_findings

    x = np.array([[0.0, 1.0, 2.0, 10.0], [2.0, 1.0, 0.0, 12.0]])
    rows = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    assert _texts(outlier_findings(x)) == {
        "raw_band": "2.00",
        "ln_band": f"{np.ptp(rows[:, :3]):.2f}",
        # rounded outward: "between lo and hi" holds of the exact values (learner B)
        "ln_outlier_lo": f"{np.floor(rows[:, 3].min() * 100) / 100:.2f}",
        "ln_outlier_hi": f"{np.ceil(rows[:, 3].max() * 100) / 100:.2f}",
        "bn_lo": "−1.00",  # two values per column standardize to ±1
        "bn_hi": "1.00",
    }
    skewed = outlier_findings(np.array([[0.0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 5]]))
    # the extremes as the printout rounds them, not rounded outward
    column = np.array([0.0, 1.0, 5.0])
    standardized = (column - column.mean()) / np.sqrt(column.var() + 1e-5)
    assert str(skewed["bn_lo"]) == f"{standardized.min():.2f}".replace("-", "\u2212")
    assert str(skewed["bn_hi"]) == f"{standardized.max():.2f}"
    found = outlier_findings(x)
    assert found["ln_outlier_lo"].value <= rows[:, 3].min() <= rows[:, 3].max()
    assert rows[:, 3].max() <= found["ln_outlier_hi"].value


def test_batch_findings_read_the_spread_across_batches():
    from lnlib.book.experiments.family import BatchEffects, batch_findings

    training = {
        2: np.array([[0.0, 0.0], [2.0, 2.0]]),  # std 1 in each feature
        8: np.array([[0.0, 1.0], [0.5, 1.0]]),  # std 0.25 and 0
        64: np.array([[1.0, -1.0], [1.0, -1.0]]),  # mean (1, −1)
    }
    effects = BatchEffects(training, np.array([1.2, -1.05]), np.zeros(2), training)
    assert _texts(batch_findings(effects)) == {
        "spread_2": "1.000",
        "spread_8": "0.125",
        "spread_64": "0.000",
        "inference_gap": "0.200",
    }


def test_invariance_findings_bound_the_rounding_and_name_the_smallest_change():
    from lnlib.book.experiments.family import InvarianceTable, invariance_findings

    table = InvarianceTable({"a": (1e-16, 0.5), "b": (0.3, 2e-17)}, tol=1e-9)
    assert _texts(invariance_findings(table)) == {
        "rounding_bound": "2.2 × 10⁻¹⁴",  # 100 float64 epsilons
        "smallest_real_change": "0.30",
    }
    with pytest.raises(ValueError, match="rounding bound"):
        invariance_findings(InvarianceTable({"a": (1e-10, 0.5)}, tol=1e-9))


def test_invariance_findings_refuse_a_row_that_is_not_the_papers():
    from lnlib.book.experiments.family import InvarianceTable, invariance_findings

    # the paper's layer-norm row is I I N I N I; this one reads I I I I I N
    table = InvarianceTable({"Layer norm": (1e-16,) * 5 + (0.3,)}, tol=1e-9)
    with pytest.raises(ValueError, match="Layer norm differs from the paper"):
        invariance_findings(table)


def test_rms_shift_findings_measure_where_rms_and_layer_norm_part():
    from lnlib.book.experiments.family import rms_shift_findings

    # [-1, 1] + 1 = [0, 2]: RMS norm gives [0, √2], layer norm [−1, 1]; they part by 1 at the first
    # entry
    assert _texts(rms_shift_findings(np.array([[-1.0, 1.0]]))) == {"rms_shift_diff": "1.00"}
    assert _texts(rms_shift_findings(np.array([[-1.0, 1.0]]), shift=0.0)) == {
        "rms_shift_diff": "0.00"
    }
