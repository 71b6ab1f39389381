"""Figures and explorers of chapters 01-07 read cleanly: column width, no cut or colliding text, no
legend on the data.

`lnlib.book.figures.style.layout_problems` draws a figure and names what a reader would trip over;
the figures here are built with the inputs their chapters use. The explorers are checked at the
settings they open with and at the settings that move their artists furthest.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from lnlib import layer_norm  # noqa: E402
from lnlib.book import explorers as widgets
from lnlib.book.experiments.complete_examples import documents_embedding  # noqa: E402
from lnlib.book.experiments.numerics import gradient_sums, small_gradient_sums  # noqa: E402
from lnlib.book.explorers.gamma_beta import PER_GROUP_BETA, PER_GROUP_GAMMA  # noqa: E402
from lnlib.book.figures import (  # noqa: E402
    epsilon,
    gamma_beta,
    mean,
    normalizing,
    numerics,
    the_input,
    variance,
    why_normalize,
)
from lnlib.book.figures.style import (  # noqa: E402
    COLOUR_NAMES,
    COLUMN_WIDTH,
    PALETTE,
    layout_problems,
    new_figure,
)
from lnlib.book.models.decay import load_decay, per_seed  # noqa: E402
from lnlib.book.models.deep_stack import random_stack, run_stack  # noqa: E402
from lnlib.variants import FRAMEWORK_EPS, sample_variance  # noqa: E402

EXPLORERS = [
    "why_normalize_explorer",
    "input_explorer",
    "mean_explorer",
    "variance_explorer",
    "epsilon_explorer",
    "normalizing_explorer",
    "gamma_beta_explorer",
]


def test_the_checker_finds_cut_colliding_and_covering_text():
    fig, (left, right) = new_figure(1, 2)
    left.set_title("a title long enough to run into the title of the panel on its right")
    right.set_title("and this one is cut by the figure's right edge, far too long")
    left.plot(np.linspace(0, 1, 50), np.linspace(0, 1, 50), label="data")
    left.legend(loc="upper left")
    left.set_xlim(0, 1)
    left.set_ylim(0, 1)
    left.plot([0.05], [0.95], "o")  # a point under the legend
    problems = " | ".join(layout_problems(fig))
    plt.close(fig)
    assert (
        "overlap" in problems
        and "cut by the figure's edge" in problems
        and "covers its data" in problems
    )


def test_the_checker_ignores_ticks_it_does_not_draw():
    fig, ax = new_figure()
    ax.semilogx([1e-10, 1e2], [0, 1])  # the log locator keeps a 1e-12 tick outside the view
    assert layout_problems(fig) == []
    plt.close(fig)


def _page_figures():
    """The page figures of chapters 01-07, built as the chapters build them."""
    x, weights, upstream = random_stack(50, 64, 32, seed=0)
    runs = {a: run_stack(x, a * weights, upstream, layer_norm_on=False) for a in (1.0, 2.0)}
    with_ln = run_stack(x, 2.0 * weights, upstream, layer_norm_on=True)
    curves = {
        f"a = {a:g}, no LayerNorm": (run, {"color": PALETTE["mean"]}) for a, run in runs.items()
    }
    curves["with LayerNorm (any a: one curve)"] = (with_ln, {"color": PALETTE["input"], "ls": "--"})
    companion = {
        f"a = {a:g}": {
            (ln, act): run_stack(x, a * weights, upstream, layer_norm_on=ln, activation=act)
            for act in ("relu", "tanh")
            for ln in (False, True)
        }
        for a in (0.5, np.sqrt(2), 3.0)
    }
    rng = np.random.default_rng(0)
    tokens = rng.normal(size=(4000, 4)) * rng.uniform(0.5, 3.0, size=(4000, 1)) + rng.normal(
        0, 2, size=(4000, 1)
    )
    pattern = np.array([0.0, 1.0, -1.0, 0.0])
    return {
        "01 scale": lambda: why_normalize.scale_figure(curves),
        "01 companion": lambda: why_normalize.scale_companion(companion),
        "02 groups": lambda: the_input.groups_figure((2, 3, 4), ("batch", "sequence", "hidden")),
        "02 companion": lambda: the_input.groups_companion(
            {
                "feed-forward or recurrent": (("batch", "features"), (3, 6)),
                "transformer": (("batch", "sequence", "hidden"), (2, 3, 4)),
            }
        ),
        "03 mean": lambda: mean.mean_figure([1.0, 2.0, 3.0, 4.0])[0],
        "04 variance": lambda: variance.variance_figure([1.0, 2.0, 3.0, 4.0])[0],
        "04 bessel": lambda: variance.bessel_figure(np.arange(2, 2049), marked=(4, 512)),
        "05 output variance": lambda: epsilon.output_variance_figure(FRAMEWORK_EPS),
        "05 companion": lambda: epsilon.epsilon_companion(
            {
                f"δ = {s:g}": float(sample_variance(1.0 + s * pattern))
                for s in (1.0, 1e-2, 1e-3, 1e-4)
            },
            framework_eps=FRAMEWORK_EPS,
        ),
        "06 sphere": lambda: normalizing.sphere_figure(
            rng.normal(size=(15, 3)) * 1.2 + rng.normal(size=(15, 1))
        ),
        "06 companion": lambda: normalizing.normalizing_companion(
            {
                "x = (1, 2, 3)": ([1, 2, 3], 0.0),
                "x + 2 = (3, 4, 5): same x̂": ([3, 4, 5], 0.0),
                "2x − 3 = (−1, 1, 3): same x̂": ([-1, 1, 3], 0.0),
                "−x: the opposite point": ([-1, -2, -3], 0.0),
                "x + (0, 0, 1.5): another point": ([1, 2, 4.5], 0.0),
                "x with ε = 1: inside the circle": ([1, 2, 3], 1.0),
            }
        ),
        "07 per feature": lambda: gamma_beta.per_feature_figure(
            layer_norm(tokens), np.array([0.5, 1.0, 2.0, -1.0]), np.array([-2.0, 0.0, 1.0, 3.0])
        ),
        "07 companion": lambda: gamma_beta.gamma_beta_companion(
            layer_norm(documents_embedding()),
            {
                "γ = 1, β = 0 (initial)": (1.0, 0.0),
                "γ = 2, β = 0": (2.0, 0.0),
                "γ = 1, β = 3": (1.0, 3.0),
                "γ = 0.5, β = −1": (0.5, -1.0),
                "per group of 64": (PER_GROUP_GAMMA, PER_GROUP_BETA),
            },
        ),
        "07 decay γ": lambda: gamma_beta.decay_gamma_figure(
            per_seed(load_decay(), "gamma_norm_means")
        ),
        "13 running sum": lambda: numerics.running_sum_figure(
            gradient_sums().count_trace, small_gradient_sums()
        ),
    }


@pytest.mark.parametrize("name", list(_page_figures()))
def test_page_figures_read_cleanly(name):
    fig = _page_figures()[name]()
    try:
        assert fig.get_figwidth() <= COLUMN_WIDTH + 1e-9
        assert layout_problems(fig) == [], name
    finally:
        plt.close(fig)


# Settings that move each explorer's artists furthest (bars at their tallest, points at the
# corners).
EXTREMES = {
    "why_normalize_explorer": [
        {"depth": 50, "weight_scale": 3.0},
        {"depth": 50, "weight_scale": 0.5, "layer_norm": True},
    ],
    "input_explorer": [
        {"batch": 4, "features": 8, "length": 5},
        {"context": "feed-forward", "batch": 1, "features": 1},
    ],
    "mean_explorer": [{"x1": -5.0, "x2": 10.0, "x3": -5.0, "x4": 10.0}, {"x1": 10.0, "x2": -5.0}],
    "variance_explorer": [{"x1": 0.0, "x2": 5.0, "x3": 0.0, "x4": 5.0, "divisor": True}],
    "epsilon_explorer": [{"eps": 1.0, "spread": 1e-5}, {"eps": 1e-10, "spread": 10.0}],
    "normalizing_explorer": [
        {"x1": -3.0, "x2": 3.0, "x3": 3.0, "eps": 1.0},
        {"x1": 3.0, "x2": -3.0, "x3": -3.0},
    ],
    "gamma_beta_explorer": [
        {f"gamma{i}": -2.0 for i in range(1, 5)} | {f"beta{i}": 3.0 for i in range(1, 5)},
        {f"gamma{i}": 0.25 for i in range(1, 5)} | {"beta1": -3.0, "beta4": -3.0},
    ],
}


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorers_fit_the_column_and_read_cleanly_at_every_extreme(name):
    explorer = getattr(widgets, name)()
    figure: Figure = explorer.renderer.figure
    assert figure.get_figwidth() <= COLUMN_WIDTH + 1e-9, (
        "the website would shrink this explorer's text below 75 %"
    )
    assert layout_problems(figure) == [], f"{name} as it opens"
    for setting in EXTREMES[name]:
        for control, value in setting.items():
            explorer.controls[control].value = value
        assert layout_problems(figure) == [], f"{name} at {setting}"


def test_squares_of_the_variance_figure_are_square_on_the_page():
    fig, (_, squares) = variance.variance_figure([1.0, 2.0, 3.0, 4.0])
    fig.canvas.draw()
    for patch in [*squares.squares, squares.average]:
        box = patch.get_window_extent()
        assert box.width == pytest.approx(box.height, rel=0.02)  # equal aspect: areas read as areas
    plt.close(fig)


def test_gamma_beta_histogram_marks_the_bars_it_cuts():
    explorer = widgets.gamma_beta_explorer()
    assert explorer.panels.clipped == 0 and "cut at the top" not in explorer.readout.value
    for i in range(1, 9):
        explorer.controls[f"gamma{i}"].value = 0.25  # each group packed into a few bins
    panels = explorer.panels
    stacked = sum(
        np.histogram(part, bins=panels.edges)[0] for part in np.split(explorer.result["y_wide"], 8)
    )
    over = int(np.sum(stacked > panels.top))
    assert over > 0 and panels.clipped == over and len(panels.clip_marks.get_xdata()) == over
    assert f"{over} histogram bar" in explorer.readout.value


def test_normalizing_readout_says_when_eps_is_too_small_to_see():
    explorer = widgets.normalizing_explorer()
    explorer.controls["eps"].value = 1e-5
    assert "too close to the circle" in explorer.readout.value
    explorer.controls["eps"].value = 1.0
    assert "too close to the circle" not in explorer.readout.value


def test_every_palette_colour_has_the_name_prose_uses():
    assert set(COLOUR_NAMES) == set(PALETTE)
    assert len(set(COLOUR_NAMES.values())) == len(COLOUR_NAMES)  # one word, one colour
