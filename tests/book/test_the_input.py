"""The chapter "The input x": lnlib.book.experiments.the_input, its figure panel, and the input
explorer's numbers."""

import numpy as np
import pytest

from lnlib import layer_norm, layer_norm_steps
from lnlib.book.experiments.the_input import CONTEXTS, NORMALIZATIONS, reduction_axes
from lnlib.book.explorers import input_explorer
from lnlib.norms import axis_ids


@pytest.mark.parametrize("shape", [(2, 5), (3, 1), (2, 3, 4), (1, 4, 2)])
@pytest.mark.parametrize("normalization", sorted(NORMALIZATIONS))
def test_axis_ids_of_each_normalization_are_exactly_the_elements_that_share_a_mean(
    shape, normalization
):
    """Independent route: lnlib's forward pass computes the means; equal labels must mean equal
    means, and vice versa."""
    axes = reduction_axes(normalization, len(shape))
    x = np.random.default_rng(0).normal(size=shape)
    means = np.broadcast_to(layer_norm_steps(x, axis=axes).mean, shape)
    groups = axis_ids(shape, axes)
    for label in np.unique(groups):
        assert np.ptp(means[groups == label]) == 0.0
    assert len(np.unique(groups)) == len(np.unique(means))


def test_group_counts_by_hand():
    # transformer input (B, T, H) = (2, 3, 4): LayerNorm, one mean per token = 2 * 3 = 6, each over
    # H = 4 values;
    # BatchNorm, one mean per hidden unit = 4, each over B * T = 6 values; last two axes: one per
    # sample = 2, over 12.
    for normalization, count, size in (
        ("LayerNorm", 6, 4),
        ("BatchNorm", 4, 6),
        ("LayerNorm over the last two axes", 2, 12),
    ):
        groups = axis_ids((2, 3, 4), reduction_axes(normalization, 3))
        assert groups.max() + 1 == count
        assert np.all(np.bincount(groups.ravel()) == size)


def test_reduction_axes_refuse_bad_input():
    with pytest.raises(ValueError, match="normalization must be one of"):
        reduction_axes("GroupNorm", 3)
    with pytest.raises(ValueError, match="at least 2 axes"):
        reduction_axes("LayerNorm", 1)


def test_contexts_name_their_axes():
    assert CONTEXTS["transformer"].axis_names == ("batch", "sequence", "hidden")
    assert {c.ndim for c in CONTEXTS.values()} == {2, 3}


def test_axis_tuple_matches_pytorch_normalized_shape_and_batch_norm(torch):
    x = np.random.default_rng(1).normal(size=(2, 3, 4))
    t = torch.tensor(x)
    ln_two = torch.nn.functional.layer_norm(t, normalized_shape=(3, 4), eps=1e-5).numpy()
    np.testing.assert_allclose(
        layer_norm(x, axis=reduction_axes("LayerNorm over the last two axes", 3)),
        ln_two,
        rtol=1e-10,
        atol=1e-12,
    )
    bn = (
        torch.nn.functional.batch_norm(t.transpose(1, 2), None, None, training=True, eps=1e-5)
        .transpose(1, 2)
        .numpy()
    )
    np.testing.assert_allclose(
        layer_norm(x, axis=reduction_axes("BatchNorm", 3)), bn, rtol=1e-10, atol=1e-12
    )


def test_input_explorer_shows_the_group_counts():
    explorer = input_explorer()  # transformer (2, 3, 4), LayerNorm
    assert (explorer.result["count"], explorer.result["size"]) == (2 * 3, 4)
    assert "<b>6</b>" in explorer.readout.value and "nn.LayerNorm(4)" in explorer.readout.value
    explorer.controls["normalization"].value = "BatchNorm"
    assert (explorer.result["count"], explorer.result["size"]) == (4, 2 * 3)
    assert "nn.BatchNorm1d(4) on x.transpose(1, 2)" in explorer.readout.value
    explorer.controls["length"].value = 5
    assert explorer.result["shape"] == (2, 5, 4) and explorer.result["size"] == 2 * 5
    assert explorer.note.value == ""
    # the figure carries no axis names of its own; the readout says which axis is which
    assert "blocks: batch, rows: sequence, columns: hidden" in explorer.readout.value
    explorer.controls["context"].value = "feed-forward"
    assert "In the figure, rows: batch, columns: features" in explorer.readout.value
    assert "x = the output W h + b" in explorer.readout.value


def test_input_explorer_notes_degenerate_settings():
    explorer = input_explorer(context="feed-forward", normalization="BatchNorm", batch=1)
    assert explorer.result["size"] == 1 and "single value" in explorer.note.value
    assert "each over <b>1</b> value." in explorer.readout.value
    assert "refuses a batch of one" in explorer.note.value
    explorer.controls["batch"].value = 3
    assert explorer.note.value == ""
    explorer.controls["normalization"].value = "LayerNorm over the last two axes"
    assert explorer.result["count"] == 1 and "not LayerNorm any more" in explorer.note.value
    assert explorer.controls[
        "length"
    ].disabled  # unused by a feed-forward layer, and the readout says so
    assert "sequence length T is not used" in explorer.readout.value
    explorer.controls["normalization"].value = "LayerNorm"
    explorer.controls["features"].value = 1
    assert explorer.result["size"] == 1 and "outputs beta whatever the input" in explorer.note.value


@pytest.mark.parametrize(
    "kwargs",
    [{"context": "convolution"}, {"normalization": "RMSNorm"}, {"batch": 0}, {"features": 9}],
)
def test_input_explorer_refuses_bad_starting_values(kwargs):
    with pytest.raises(ValueError):
        input_explorer(**kwargs)
