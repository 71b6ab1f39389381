"""The chapter "Normalizing": its explorer shows the right numbers, and its figures draw the right
points."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from lnlib import layer_norm
from lnlib.book.explorers.normalizing import normalizing_explorer
from lnlib.book.figures.normalizing import (
    normalizing_companion,
    normalizing_figure,
    plane_limit,
    sphere_figure,
)
from lnlib.variants import layer_norm_eps_outside_sqrt


def test_explorer_shows_one_two_three_on_the_circle():
    explorer = normalizing_explorer(values=(1.0, 2.0, 3.0), eps=0.0)
    # mean 2, var (1 + 0 + 1)/3 = 2/3, x̂ = (-1, 0, 1)/sqrt(2/3) = (-1.2247, 0, 1.2247), length
    # sqrt(3).
    assert explorer.result["mean"] == 2.0
    assert explorer.result["var"] == pytest.approx(2 / 3)
    np.testing.assert_allclose(explorer.result["xhat"], [-np.sqrt(1.5), 0.0, np.sqrt(1.5)])
    assert explorer.result["radius"] == pytest.approx(np.sqrt(3))
    assert "<b>1.7321</b>" in explorer.readout.value
    # Projection (u1, u2) = ((1 - 2)/sqrt(2), (1 + 2 - 6)/sqrt(6)).
    np.testing.assert_allclose(explorer.result["projection"], [-1 / np.sqrt(2), -3 / np.sqrt(6)])
    assert "(-0.707, -1.225)" in explorer.readout.value
    assert explorer.note.value == ""


def test_explorer_scaling_and_shifting_x_does_not_move_xhat():
    explorer = normalizing_explorer(values=(1.0, 2.0, 3.0))
    before = explorer.result["xhat"]
    for name, value in (("x1", -1.0), ("x2", 1.0), ("x3", 3.0)):  # 2 * (1, 2, 3) - 3
        explorer.controls[name].value = value
    np.testing.assert_allclose(explorer.result["xhat"], before)
    for name, value in (("x1", -1.0), ("x2", -2.0), ("x3", -3.0)):  # -(1, 2, 3): the opposite point
        explorer.controls[name].value = value
    np.testing.assert_allclose(explorer.result["xhat"], -before)


def test_explorer_eps_pulls_xhat_inside_the_circle():
    explorer = normalizing_explorer(values=(1.0, 2.0, 3.0))
    explorer.controls["eps"].value = 1.0
    # sqrt(3) * sqrt((2/3) / (2/3 + 1)) = sqrt(3 * 2/5) = sqrt(1.2).
    assert explorer.result["radius"] == pytest.approx(np.sqrt(1.2))
    assert "inside the circle" in explorer.note.value


@pytest.mark.parametrize("eps, says", [(0.0, "undefined"), (1e-5, "centre of the circle")])
def test_explorer_notes_a_constant_vector(eps, says):
    explorer = normalizing_explorer(values=(1.0, 2.0, 3.0), eps=eps)
    for name in ("x1", "x2", "x3"):
        explorer.controls[name].value = 2.0
    assert says in explorer.note.value
    np.testing.assert_allclose(explorer.result["projection"], 0.0, atol=1e-15)
    assert explorer.result["radius"] == 0.0


@pytest.mark.parametrize(
    "kwargs", [{"values": (1.0, 2.0)}, {"values": (1.0, 2.0, 9.0)}, {"eps": 0.5}]
)
def test_explorer_refuses_bad_starting_values(kwargs):
    with pytest.raises(ValueError, match="3 starting values|must lie in|eps must be one of"):
        normalizing_explorer(**kwargs)


def test_plane_limit_holds_the_farthest_corner_of_the_cube():
    # Corner (3, -3, -3): centred (4, -2, -2), length sqrt(16 + 4 + 4) = sqrt(24).
    assert plane_limit(-3.0, 3.0) > np.sqrt(24)
    assert plane_limit(-0.1, 0.1) > np.sqrt(3)


def test_figure_draws_the_projection_and_the_image():
    _, (plane, entries) = normalizing_figure([1.0, 2.0, 3.0], eps=0.0, managed=False)
    point = np.column_stack(plane.projection.get_data()).ravel()
    image = np.column_stack(plane.xhat.get_data()).ravel()
    np.testing.assert_allclose(point, [-1 / np.sqrt(2), -3 / np.sqrt(6)])
    np.testing.assert_allclose(np.linalg.norm(image), np.sqrt(3))
    np.testing.assert_allclose(
        image / np.linalg.norm(image), point / np.linalg.norm(point)
    )  # same ray
    assert [bar.get_height() for bar in entries.x_bars] == [1.0, 2.0, 3.0]


def test_sphere_figure_puts_every_image_on_the_circle():
    inputs = np.random.default_rng(0).normal(size=(20, 3))
    fig = sphere_figure(inputs)
    plane_axes = next(ax for ax in fig.axes if ax.name != "3d")
    star = [line for line in plane_axes.lines if line.get_marker() == "*"][0]
    np.testing.assert_allclose(np.hypot(*star.get_data()), np.sqrt(3))


def test_companion_has_one_panel_per_example():
    fig = normalizing_companion(
        {
            "a": ([1, 2, 3], 0.0),
            "b": ([2, 2, 2], 1e-5),
            "c": ([-1, -2, -3], 0.0),
            "d": ([1, 2, 3], 1.0),
        }
    )
    assert [ax.get_title() for ax in fig.axes] == ["a", "b", "c", "d"]


# --- the documents' numbers that the chapter corrects ------------------------------------------


def test_the_step_by_step_document_cut_off_its_outer_entries_instead_of_rounding():
    # By hand: 1.5 / sqrt(1.25) = 1.5 / 1.1180340 = 1.3416408, which rounds to 1.342 (the document
    # prints 1.341).
    assert round(1.5 / 1.1180340, 3) == 1.342
    for variant in (layer_norm, layer_norm_eps_outside_sqrt):
        assert variant([1.0, 2.0, 3.0, 4.0], eps=1e-5).round(3).tolist() == [
            -1.342,
            -0.447,
            0.447,
            1.342,
        ]


def test_the_two_samples_give_identical_xhat_and_the_token_only_nearly():
    sample_1, sample_2 = layer_norm([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], eps=1e-5)
    np.testing.assert_array_equal(sample_1, sample_2)
    token = layer_norm([2.0, 4.0, 6.0, 8.0], eps=1e-5)
    # Token = 2 x sample 1, so its x̂ is sample 1's with eps / 4: (x - mu) / sqrt(1.25 + 2.5e-6)
    # instead of sqrt(1.25 + 1e-5).
    expected = np.array([-1.5, -0.5, 0.5, 1.5]) / np.sqrt(1.25 + 2.5e-6)
    np.testing.assert_allclose(token, expected, rtol=1e-14)
    assert 1e-6 < np.max(np.abs(token - sample_1)) < 1e-5
