"""Property tests of lnlib.norms with hypothesis: the invariance each member's statistics set
implies, for every input."""

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lnlib.norms import batch_norm, group_norm, rms_norm

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
images = st.tuples(st.integers(2, 4), st.sampled_from([2, 4, 6]), st.integers(2, 3)).flatmap(
    lambda shape: hnp.arrays(np.float64, shape, elements=finite)
)
positive = st.floats(1e-2, 1e2)


@settings(max_examples=100, deadline=None)
@given(images, st.data())
def test_batch_norm_ignores_a_positive_affine_map_of_each_feature(x, data):
    """Each channel's set spans the batch: scaling and shifting one channel everywhere cancels."""
    assume(np.all(x.std(axis=(0, 2)) > 1e-2))
    channels = x.shape[1]
    scale = np.array(data.draw(st.lists(positive, min_size=channels, max_size=channels)))[
        None, :, None
    ]
    shift = np.array(data.draw(st.lists(finite, min_size=channels, max_size=channels)))[
        None, :, None
    ]
    np.testing.assert_allclose(
        batch_norm(scale * x + shift, axis=(0, 2), eps=0.0),
        batch_norm(x, axis=(0, 2), eps=0.0),
        atol=1e-6,
    )


@settings(max_examples=100, deadline=None)
@given(images, st.data())
def test_group_norm_ignores_a_positive_affine_map_of_each_sample_group(x, data):
    n, channels, _ = x.shape
    groups = data.draw(st.sampled_from([g for g in (1, 2) if channels % g == 0]))
    grouped = x.reshape(n, groups, -1)
    assume(np.all(grouped.std(axis=-1) > 1e-2))
    scale = np.array(
        data.draw(st.lists(positive, min_size=n * groups, max_size=n * groups))
    ).reshape(n, groups, 1)
    shift = np.array(data.draw(st.lists(finite, min_size=n * groups, max_size=n * groups))).reshape(
        n, groups, 1
    )
    moved = (scale * grouped + shift).reshape(x.shape)
    np.testing.assert_allclose(
        group_norm(moved, groups, eps=0.0), group_norm(x, groups, eps=0.0), atol=1e-6
    )


@settings(max_examples=100, deadline=None)
@given(
    hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(2, 8)), elements=finite),
    positive,
)
def test_rms_norm_ignores_positive_scale_and_has_unit_mean_square(x, scale):
    assume(np.all(np.sqrt((x * x).mean(axis=-1)) > 1e-2))
    y = rms_norm(x, eps=0.0)
    np.testing.assert_allclose(rms_norm(scale * x, eps=0.0), y, atol=1e-9)
    np.testing.assert_allclose((y * y).mean(axis=-1), 1.0, rtol=1e-9)
