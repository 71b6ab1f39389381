"""The family explorer shows the right sets and the right numbers (chapter "LayerNorm and its
family")."""

import numpy as np
import pytest

from lnlib.book.explorers import family_explorer
from lnlib.book.explorers.family import family_tensor


def standardize(values):
    values = np.asarray(values, dtype=float)
    return (values - values.mean()) / np.sqrt(values.var() + 1e-5)


def test_tensor_has_the_documented_channel_statistics():
    x = family_tensor(samples=2000, seed=1)
    np.testing.assert_allclose(x.mean(axis=(0, 2)), [1.0, -2.0, 0.5, 3.0], atol=0.1)
    np.testing.assert_allclose(x.std(axis=(0, 2)), [1.0, 2.0, 0.5, 1.5], rtol=0.05)


@pytest.mark.parametrize(
    "method,batch,groups,size",
    [
        ("batch", 6, 2, 6 * 4),
        ("batch", 2, 2, 2 * 4),
        ("layer", 6, 2, 4 * 4),
        ("rms", 3, 2, 4 * 4),
        ("instance", 6, 2, 4),
        ("group", 6, 2, 2 * 4),
        ("group", 6, 4, 4),
    ],
)
def test_the_marked_set_has_the_right_size_and_statistics(method, batch, groups, size):
    explorer = family_explorer(method=method, batch=batch, groups=groups)
    x = family_tensor()[:batch]
    assert explorer.result["set_size"] == size
    members = {  # the dot is sample 1, channel 1, position 1: its set written out per method
        "batch": x[:, 0, :],
        "layer": x[0],
        "rms": x[0],
        "instance": x[0, 0],
        "group": x[0, : 4 // groups],
    }[method]
    assert explorer.result["set_mean"] == pytest.approx(members.mean())
    assert explorer.result["set_std"] == pytest.approx(members.std())
    assert f"with {size} entries" in explorer.readout.value


@pytest.mark.parametrize("method", ["batch", "layer", "instance", "group", "rms"])
def test_the_grid_has_one_grey_for_other_sets_and_white_outlined_blocks_outside_the_batch(method):
    """The third student review (finding 8): at a batch of 6 a lighter grey on blocks 3 and 5 read
    as "not in batch". Inside the batch: blue and one grey, parted by white lines; outside: white
    cells with a grey outline, a look no cell inside the batch has."""
    from lnlib.book.figures.family import CELL_COLOURS, MARKED, OUTLINE, OUTSIDE

    explorer = family_explorer(method=method, batch=6)
    for batch in range(1, 7):
        explorer.controls["batch"].value = batch
        faces = explorer.grid.cells.get_facecolor().reshape(6, 16, 4)
        edges = explorer.grid.cells.get_edgecolor().reshape(6, 16, 4)
        inside = {tuple(c) for c in faces[:batch].reshape(-1, 4)}
        assert tuple(CELL_COLOURS[MARKED]) in inside
        assert len(inside - {tuple(CELL_COLOURS[MARKED])}) <= 1, (batch, inside)
        assert tuple(CELL_COLOURS[OUTSIDE]) not in inside
        np.testing.assert_array_equal(edges[:batch], 1.0)  # white lines
        np.testing.assert_array_equal(
            faces[batch:], np.broadcast_to(CELL_COLOURS[OUTSIDE], faces[batch:].shape)
        )
        np.testing.assert_array_equal(edges[batch:], np.broadcast_to(OUTLINE, edges[batch:].shape))
    assert "grey: other sets; white: not in batch" in explorer.grid.cells.axes.get_title("left")


def test_rms_norm_readout_shows_the_root_mean_square_it_divides_by():
    # RMS norm never uses mu or sigma: the readout must show sqrt(mean(x**2)) over all of sample 1
    explorer = family_explorer(method="rms", batch=2)
    sample = family_tensor()[0]
    rms = float(np.sqrt(sum(float(v) ** 2 for v in sample.ravel()) / sample.size))
    assert explorer.result["set_rms"] == pytest.approx(rms)
    assert f"RMS = {rms:.3f}" in explorer.readout.value and "μ =" not in explorer.readout.value
    np.testing.assert_allclose(
        explorer.result["y"][0], sample / np.sqrt(rms**2 + 1e-6), rtol=1e-12
    )  # rms_norm's own eps, 1e-6


def test_batch_norm_output_of_sample_1_is_its_channel_standardized_over_the_batch():
    explorer = family_explorer(method="batch", batch=3)
    x = family_tensor()[:3]
    expected = np.array(
        [(x[0, c] - x[:, c].mean()) / np.sqrt(x[:, c].var() + 1e-5) for c in range(4)]
    )
    np.testing.assert_allclose(explorer.result["y"][0], expected, rtol=1e-12)
    full = np.array(
        [
            (family_tensor()[0, c] - family_tensor()[:, c].mean())
            / np.sqrt(family_tensor()[:, c].var() + 1e-5)
            for c in range(4)
        ]
    )
    assert explorer.result["change"] == pytest.approx(np.abs(expected - full).max())
    assert explorer.result["change"] > 0.05
    # the panel draws both: dots for this batch, rings for the full batch (clipped to the axis's
    # [-4, 4])
    np.testing.assert_allclose(explorer.output.points.get_ydata(), np.clip(expected.ravel(), -4, 4))
    np.testing.assert_allclose(explorer.output.reference.get_ydata(), np.clip(full.ravel(), -4, 4))


@pytest.mark.parametrize("method", ["layer", "instance", "group", "rms"])
def test_per_sample_methods_do_not_depend_on_the_batch(method):
    explorer = family_explorer(method=method, batch=1)
    assert explorer.result["change"] == 0.0
    assert "by up to <b>0.000</b>" in explorer.readout.value


def test_layer_norm_output_is_the_sample_standardized():
    explorer = family_explorer(method="layer", batch=2)
    np.testing.assert_allclose(
        explorer.result["y"][0].ravel(), standardize(family_tensor()[0]).ravel(), rtol=1e-12
    )


def test_degenerate_settings_have_notes():
    explorer = family_explorer(method="batch", batch=1)
    assert "it is instance norm" in explorer.note.value
    np.testing.assert_allclose(
        explorer.result["y"][0, 1], standardize(family_tensor()[0, 1]), rtol=1e-12
    )
    explorer.controls["method"].value = "group"
    explorer.controls["groups"].value = 1
    assert "group norm is layer norm" in explorer.note.value
    explorer.controls["groups"].value = 4
    assert "group norm is instance norm" in explorer.note.value


def test_only_a_real_hazard_carries_the_warning_sign():
    """An identity (G = 1 is layer norm) is explained in plain text; a batch of two, where one
    sample's output depends on the other, is warned about (student review: "⚠ for a plain note")."""
    explorer = family_explorer(method="group", groups=1)
    assert "group norm is layer norm" in explorer.note.value
    assert "⚠" not in explorer.note.value
    explorer.controls["method"].value = "batch"
    explorer.controls["batch"].value = 2
    assert "⚠" in explorer.note.value and "depends strongly" in explorer.note.value


@pytest.mark.parametrize(
    "kwargs,match",
    [({"method": "weight"}, "method"), ({"batch": 0}, "batch"), ({"groups": 3}, "groups")],
)
def test_bad_starting_values_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        family_explorer(**kwargs)
