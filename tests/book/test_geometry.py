"""lnlib.book.experiments.normalizing: the plane orthogonal to the all-ones vector, and the sphere
x̂ lies on (chapter "Normalizing").

The geometry claim is tested for random H and random inputs with hypothesis: x̂ is orthogonal
to the all-ones vector and has length √H·√(σ²/(σ²+ε)), which is √H exactly when ε = 0.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lnlib import layer_norm
from lnlib.book.experiments.normalizing import (
    centre,
    centring_matrix,
    ones_component,
    plane_basis,
    plane_coordinates,
    xhat_radius,
)

sizes = st.integers(2, 64)
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
eps_values = st.sampled_from([0.0, 1e-8, 1e-5, 1e-2, 1.0, 10.0])


def vectors(size, batch=None):
    shape = (size,) if batch is None else (batch, size)
    return hnp.arrays(np.float64, shape, elements=finite)


def spread(x, minimum=1e-2):
    return bool(np.all(np.std(x, axis=-1) > minimum))


# --- the basis and the projection ---------------------------------------------------------


def test_basis_of_the_plane_x_plus_y_plus_z_equals_zero_by_hand():
    # Row 1: (1, -1, 0), length sqrt(1 + 1) = sqrt(2). Row 2: (1, 1, -2), length sqrt(1 + 1 + 4) =
    # sqrt(6).
    expected = np.array([[1.0, -1.0, 0.0], [1.0, 1.0, -2.0]]) / np.sqrt([[2.0], [6.0]])
    np.testing.assert_allclose(plane_basis(3), expected, rtol=1e-15)


@settings(max_examples=60, deadline=None)
@given(sizes)
def test_basis_is_orthonormal_and_orthogonal_to_ones(size):
    basis = plane_basis(size)
    assert basis.shape == (size - 1, size)
    np.testing.assert_allclose(basis @ basis.T, np.eye(size - 1), atol=1e-12)
    np.testing.assert_allclose(basis @ np.ones(size), 0.0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(sizes)
def test_centring_matrix_is_the_projector_built_from_the_basis(size):
    # Completeness: the H-1 basis vectors and the unit vector 1/sqrt(H) together resolve the
    # identity.
    basis = plane_basis(size)
    projector = centring_matrix(size)
    np.testing.assert_allclose(projector, basis.T @ basis, atol=1e-12)
    np.testing.assert_allclose(projector @ projector, projector, atol=1e-12)
    np.testing.assert_allclose(projector, projector.T, atol=0)


@settings(max_examples=100, deadline=None)
@given(sizes.flatmap(lambda h: vectors(h, batch=3)))
def test_centre_is_the_projection_and_ones_component_is_what_it_removes(x):
    size = x.shape[-1]
    np.testing.assert_allclose(centre(x), x @ centring_matrix(size).T, atol=1e-9)
    np.testing.assert_allclose(centre(x).sum(axis=-1), 0.0, atol=1e-9)
    rebuilt = centre(x) + ones_component(x)[:, None] * np.ones(size) / np.sqrt(size)
    np.testing.assert_allclose(rebuilt, x, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(sizes.flatmap(vectors))
def test_plane_coordinates_ignore_the_mean_and_keep_the_length(x):
    np.testing.assert_allclose(plane_coordinates(x), plane_coordinates(centre(x)), atol=1e-9)
    np.testing.assert_allclose(
        np.linalg.norm(plane_coordinates(x)), np.linalg.norm(centre(x)), atol=1e-9
    )


def test_coordinates_of_one_two_three_by_hand():
    # (1, -1, 0).(1, 2, 3) / sqrt(2) = -1/sqrt(2);  (1, 1, -2).(1, 2, 3) / sqrt(6) = -3/sqrt(6).
    np.testing.assert_allclose(
        plane_coordinates([1.0, 2.0, 3.0]), [-1 / np.sqrt(2), -3 / np.sqrt(6)], rtol=1e-15
    )
    # sqrt(3) * mean = sqrt(3) * 2.
    assert ones_component([1.0, 2.0, 3.0]) == pytest.approx(2 * np.sqrt(3))


# --- the geometry claim: x̂ is on the sphere of radius sqrt(H) in the hyperplane ⊥ 1 --------------


@settings(max_examples=200, deadline=None)
@given(sizes.flatmap(vectors))
def test_with_eps_zero_xhat_is_on_the_sphere_of_radius_sqrt_h_in_the_hyperplane(x):
    assume(spread(x))
    xhat = layer_norm(x, eps=0.0)
    size = x.size
    assert abs(xhat @ np.ones(size)) < 1e-9 * np.sqrt(size)
    assert np.linalg.norm(xhat) == pytest.approx(np.sqrt(size), rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(sizes.flatmap(lambda h: vectors(h, batch=4)), eps_values)
def test_with_eps_xhat_is_on_the_smaller_sphere(x, eps):
    assume(spread(x))
    size = x.shape[-1]
    var = np.var(x, axis=-1)  # numpy's own biased variance, not lnlib's
    expected = np.sqrt(size) * np.sqrt(var / (var + eps))
    xhat = layer_norm(x, eps=eps)
    np.testing.assert_allclose(xhat @ np.ones(size), 0.0, atol=1e-9 * np.sqrt(size))
    np.testing.assert_allclose(np.linalg.norm(xhat, axis=-1), expected, rtol=1e-10)
    np.testing.assert_allclose(xhat_radius(x, eps=eps), expected, rtol=1e-10)


def test_radius_by_hand_for_one_two_three():
    # x = (1, 2, 3): mean 2, var = (1 + 0 + 1)/3 = 2/3. With eps = 0: x̂ = (-1, 0, 1)/sqrt(2/3),
    # length sqrt(3).
    np.testing.assert_allclose(
        layer_norm([1.0, 2.0, 3.0], eps=0), [-np.sqrt(1.5), 0.0, np.sqrt(1.5)], rtol=1e-15
    )
    # With eps = 1: length sqrt(3) * sqrt((2/3) / (5/3)) = sqrt(3 * 2/5) = sqrt(1.2).
    assert xhat_radius([1.0, 2.0, 3.0], eps=1.0) == pytest.approx(np.sqrt(1.2), rel=1e-15)


def test_a_constant_vector_with_eps_lands_at_the_centre_not_on_the_sphere():
    assert xhat_radius([2.0, 2.0, 2.0], eps=1e-5) == 0.0
    with pytest.raises(ValueError, match="0/0"):
        xhat_radius([2.0, 2.0, 2.0], eps=0.0)


# --- the invariances, stated correctly --------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(sizes.flatmap(vectors), st.floats(1e-2, 1e2), st.sampled_from([1.0, -1.0]), finite)
def test_scaling_by_a_and_adding_a_constant_gives_sign_of_a_times_layer_norm(
    x, magnitude, sign, shift
):
    assume(spread(x, minimum=1e-1))
    moved = sign * magnitude * x + shift
    np.testing.assert_allclose(layer_norm(moved, eps=0.0), sign * layer_norm(x, eps=0.0), atol=1e-6)


@settings(max_examples=150, deadline=None)
@given(
    sizes.flatmap(vectors),
    st.floats(1e-2, 1e2),
    st.sampled_from([1.0, -1.0]),
    st.sampled_from([1e-5, 1e-2, 1.0]),
)
def test_with_eps_scaling_by_a_is_the_same_as_dividing_eps_by_a_squared(x, magnitude, sign, eps):
    # (a x - a mu) / sqrt(a^2 var + eps) = sign(a) (x - mu) / sqrt(var + eps / a^2), exactly.
    assume(spread(x, minimum=1e-1))
    a = sign * magnitude
    np.testing.assert_allclose(
        layer_norm(a * x, eps=eps), sign * layer_norm(x, eps=eps / a**2), rtol=1e-9, atol=1e-9
    )


@settings(max_examples=150, deadline=None)
@given(sizes.flatmap(lambda h: st.tuples(vectors(h), vectors(h))))
def test_a_vector_shift_acts_only_through_its_centred_part(pair):
    x, b = pair
    assume(spread(x + b, minimum=1e-1))
    np.testing.assert_allclose(
        layer_norm(x + b, eps=0), layer_norm(x + centre(b), eps=0), atol=1e-6
    )


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "size, error, message",
    [
        (1, ValueError, ">= 2"),
        (0, ValueError, ">= 2"),
        (2.5, TypeError, "integer"),
        (True, TypeError, "integer"),
    ],
)
def test_bad_sizes_are_refused(size, error, message):
    for function in (plane_basis, centring_matrix):
        with pytest.raises(error, match=message):
            function(size)


def test_bad_vectors_are_refused():
    with pytest.raises(ValueError, match="NaN"):
        plane_coordinates([1.0, np.nan, 3.0])
    with pytest.raises(ValueError, match=">= 2"):
        plane_coordinates([1.0])
    with pytest.raises(TypeError, match="real numbers"):
        centre(["a", "b"])


# --- an independent implementation ------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_torch_layer_norm_output_lies_on_the_same_sphere(torch, seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 50))
    x = rng.normal(rng.normal(), rng.uniform(0.1, 3.0), size=(6, size))
    eps = float(rng.choice([0.0, 1e-5, 0.5]))
    theirs = torch.nn.functional.layer_norm(torch.from_numpy(x), (size,), eps=eps).numpy()
    np.testing.assert_allclose(theirs.sum(axis=-1), 0.0, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(theirs, axis=-1), xhat_radius(x, eps=eps), rtol=1e-9)
