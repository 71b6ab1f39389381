"""The explorers of the chapters "The mean", "The variance" and "Epsilon" show the right numbers,
and their figures draw them.

Expected values come from hand arithmetic (written out) or from a second formula.
"""

import math

import matplotlib
import numpy as np
import pytest

from lnlib.book.explorers import epsilon_explorer, mean_explorer, variance_explorer
from lnlib.book.explorers.variance import H_MINUS_1
from lnlib.book.figures.epsilon import epsilon_companion, output_variance_figure
from lnlib.book.figures.variance import bessel_figure, variance_companion, variance_figure
from lnlib.variants import FRAMEWORK_EPS, sample_variance, std_inside, std_outside

matplotlib.use("Agg")


# --- the variance explorer ------------------------------------------------------------------


def test_variance_explorer_shows_the_documents_example():
    explorer = variance_explorer(values=[1.0, 2.0, 3.0, 4.0])
    # squares 2.25, 0.25, 0.25, 2.25; sum 5; 5 / 4 = 1.25; sqrt(1.25) = 1.118...
    np.testing.assert_allclose(explorer.result["squares"], [2.25, 0.25, 0.25, 2.25])
    assert explorer.result["variance"] == pytest.approx(1.25)
    assert explorer.result["std"] == pytest.approx(math.sqrt(1.25))
    assert "<b>1.25</b>" in explorer.readout.value and "<b>1.118</b>" in explorer.readout.value


def test_variance_explorer_divisor_switches_to_h_minus_one():
    explorer = variance_explorer(values=[1.0, 0.0, 0.0, 0.0])
    assert explorer.result["variance"] == pytest.approx(
        0.75 / 4
    )  # squares sum to 3/4 (see test_variants)
    explorer.controls["divisor"].value = True
    assert explorer.result["variance"] == pytest.approx(0.75 / 3)
    assert f"s{H_MINUS_1}² = sum / 3" in explorer.readout.value


def test_variance_explorer_squares_are_drawn_with_the_deviations_as_sides():
    explorer = variance_explorer(values=[1.0, 2.0, 3.0, 4.0])
    explorer.controls["x1"].value = 0.0  # mean 2.25, deviations -2.25, -0.25, 0.75, 1.75
    _, squares = explorer.panels
    sides = [square.get_width() for square in squares.squares]
    np.testing.assert_allclose(sides, [2.25, 0.25, 0.75, 1.75])
    assert [s.get_height() for s in squares.squares] == pytest.approx(sides)
    # the dashed square's area is the mean of the areas: (5.0625 + 0.0625 + 0.5625 + 3.0625) / 4 =
    # 2.1875
    assert squares.average.get_width() ** 2 == pytest.approx(2.1875)


def test_variance_explorer_notes_a_constant_vector():
    explorer = variance_explorer(values=[1.0, 2.0, 3.0, 4.0])
    for name in ("x1", "x2", "x3", "x4"):
        explorer.controls[name].value = 3.0
    assert "All entries are equal" in explorer.note.value
    assert explorer.result["variance"] == 0.0


@pytest.mark.parametrize(
    ("values", "kwargs", "problem"),
    [
        ([1.0], {}, "2 to 8"),
        (list(range(9)), {"high": 10.0}, "2 to 8"),
        ([1.0, 20.0], {}, "must lie in"),
        ([1.0, 2.0], {"low": 3.0, "high": 3.0}, "low < high"),
    ],
)
@pytest.mark.parametrize("factory", [mean_explorer, variance_explorer])
def test_slider_per_entry_explorers_refuse_bad_arguments(factory, values, kwargs, problem):
    with pytest.raises(ValueError, match=f"{factory.__name__}.*{problem}"):
        factory(values=values, **kwargs)


def test_mean_explorer_readout_shows_an_outlier_centred_value_in_full():
    explorer = mean_explorer(values=[-5.0, 10.0, 10.0, 10.0])
    # mean (−5 + 30) / 4 = 6.25; centred −11.25 and three times 3.75, each to three decimals
    # (learner A, 2026-11-30: four significant digits among three-decimal values read as a slip)
    assert "[-11.250, 3.750, 3.750, 3.750]" in explorer.readout.value
    assert "(−5 + 10 + 10 + 10) / 4" in explorer.readout.value  # signs as written by hand


# --- the epsilon explorer -------------------------------------------------------------------


def test_epsilon_explorer_opens_where_eps_is_still_below_the_variance():
    explorer = epsilon_explorer()
    # δ = 0.01: deviations 0, ±1e-2, 0, so the variance is 2e-4 / 4 = 5e-5 > eps = 1e-5: no warning
    # yet
    assert explorer.result["variance"] == pytest.approx(5e-5, rel=1e-9)
    assert explorer.result["output_variance"] == pytest.approx(5e-5 / (5e-5 + 1e-5), rel=1e-6)
    assert explorer.note.value == ""
    explorer.controls["spread"].value = 1e-3  # the chapter's near-constant input: now ε dominates
    assert "ε ≥ σ²" in explorer.note.value


def test_epsilon_explorer_on_the_near_constant_input():
    explorer = epsilon_explorer(spread=1e-3)
    np.testing.assert_allclose(explorer.result["x"], [1.0, 1.001, 0.999, 1.0])
    # deviations 0, 1e-3, -1e-3, 0: variance 2e-6 / 4 = 5e-7, smaller than eps = 1e-5
    assert explorer.result["variance"] == pytest.approx(5e-7, rel=1e-9)
    assert explorer.result["output_variance"] == pytest.approx(5e-7 / (5e-7 + 1e-5), rel=1e-6)
    assert explorer.result["std_outside"] == pytest.approx(
        math.sqrt(5e-7) / (math.sqrt(5e-7) + 1e-5), rel=1e-6
    )
    # the readout shows the same two numbers (0.04762 and 0.9861)
    assert f"<b>{5e-7 / (5e-7 + 1e-5):.4g}</b>" in explorer.readout.value
    assert f"<b>{math.sqrt(5e-7) / (math.sqrt(5e-7) + 1e-5):.4g}</b>" in explorer.readout.value
    assert "ε ≥ σ²" in explorer.note.value


def test_epsilon_explorer_large_spread_is_standardized():
    explorer = epsilon_explorer(eps=1e-5, spread=1.0)
    # variance 2 / 4 = 0.5, so the output variance is 0.5 / 0.50001
    assert explorer.result["output_variance"] == pytest.approx(0.5 / 0.50001, rel=1e-9)
    np.testing.assert_allclose(
        explorer.result["exact"], [0.0, math.sqrt(2), -math.sqrt(2), 0.0], atol=1e-12
    )
    assert explorer.note.value == ""


def test_epsilon_explorer_eps_slider_moves_the_outputs():
    explorer = epsilon_explorer(eps=1e-10, spread=1e-3)
    small = explorer.result["inside"].copy()
    explorer.controls["eps"].value = 1e-2
    assert np.all(np.abs(explorer.result["inside"]) <= np.abs(small))
    assert explorer.marker.line.get_xdata()[0] == pytest.approx(1e-2)


@pytest.mark.parametrize("kwargs", [{"eps": 0.0}, {"eps": 2.0}, {"spread": 0.0}, {"spread": 100.0}])
def test_epsilon_explorer_refuses_out_of_range_starts(kwargs):
    with pytest.raises(ValueError, match="epsilon_explorer"):
        epsilon_explorer(**kwargs)


# --- figures ---------------------------------------------------------------------------------


def test_std_formulas_agree_with_their_definitions():
    # sigma^2 = eps: inside gives sqrt(1/2); sigma = eps: outside gives 1/2
    assert std_inside(1e-4, 1e-4) == pytest.approx(math.sqrt(0.5))
    assert std_outside(1e-4, 1e-2) == pytest.approx(0.5)


def test_figures_are_built_with_labelled_axes():
    figures = [
        variance_figure([1.0, 2.0, 3.0, 4.0])[0],
        variance_companion({"a": [1, 2, 3, 4], "b": [0, 0, 0, 4], "c": [5, 6, 7, 8]}),
        bessel_figure(np.arange(2, 100)),
        epsilon_companion({"wide": 0.5, "narrow": 5e-7}, framework_eps=FRAMEWORK_EPS),
        output_variance_figure(FRAMEWORK_EPS),
    ]
    for figure in figures:
        for ax in figure.axes:
            if ax.get_visible():
                assert ax.get_xlabel(), "an axis without an x label"
        matplotlib.pyplot.close(figure)


def test_companion_solid_curve_falls_first_exactly_when_sigma_is_below_one_half():
    # The chapter's caption: ε inside the root (solid) matters near ε = σ², added to σ (dashed) near
    # ε = σ.
    # To first order the solid curve is 1 - ε/(2σ²) and the dashed 1 - ε/σ, so the solid one falls
    # first when σ < 1/2 (the chapter's δ = 0.01, 0.001, 0.0001); at δ = 1 (σ ≈ 0.71) the dashed one
    # does.
    pattern = np.array([0.0, 1.0, -1.0, 0.0])
    spreads = (1.0, 1e-2, 1e-3, 1e-4)
    variances = {f"δ = {s:g}": float(sample_variance(1.0 + s * pattern)) for s in spreads}
    figure = epsilon_companion(variances, framework_eps=FRAMEWORK_EPS)
    for ax, variance in zip(figure.axes, variances.values()):
        solid, dashed = ax.lines[0], ax.lines[1]
        eps = solid.get_xdata()
        first_below = {line: eps[np.argmax(line.get_ydata() < 0.9)] for line in (solid, dashed)}
        assert (first_below[solid] < first_below[dashed]) == (math.sqrt(variance) < 0.5)
        if math.sqrt(variance) < 0.5:  # decades apart: the dashed curve holds on until ε nears σ
            assert first_below[dashed] / first_below[solid] > 0.4 / math.sqrt(variance)
    matplotlib.pyplot.close(figure)


def test_mean_and_variance_explorers_open_where_the_website_starts():
    """The website opens on the first preset (chapters 03 and 04's running examples); the widget on
    the same."""
    for factory, name in ((mean_explorer, "mean"), (variance_explorer, "variance")):
        explorer = factory()
        first = next(iter(explorer.web_plan.presets.values()))
        values = explorer.values()
        assert {k: values[k] for k in first} == pytest.approx(first), name
        assert len(first) == sum(k.startswith("x") for k in values), name
