r"""The geometry of normalizing: the plane orthogonal to the all-ones vector, and the sphere in it.

For a vector :math:`x \in \mathbb{R}^H` with mean :math:`\mu` and biased variance
:math:`\sigma^2`, write :math:`\mathbf{1}` for the all-ones vector. Then

* centring, :math:`x - \mu\mathbf{1} = (I - \tfrac{1}{H}\mathbf{1}\mathbf{1}^\top)\,x`, is the
  orthogonal projection onto the hyperplane :math:`\{v : \mathbf{1}\cdot v = 0\}`;
* :math:`\hat x = (x - \mu\mathbf{1})/\sqrt{\sigma^2 + \varepsilon}` lies in that hyperplane, at
  distance :math:`\sqrt{H}\,\sqrt{\sigma^2/(\sigma^2 + \varepsilon)}` from the origin: on the
  sphere of radius :math:`\sqrt{H}` when :math:`\varepsilon = 0`, just inside it otherwise.

For H = 3 the hyperplane is the plane x + y + z = 0 and the sphere is a circle of radius
:math:`\sqrt 3`. :func:`plane_basis` gives an orthonormal basis of the hyperplane, so a vector
can be drawn by its :func:`plane_coordinates`. The chapter "Normalizing" explains all of it.

Every function here works on the last axis of its input.
"""

from __future__ import annotations

import numpy as np

from ...forward import layer_norm_steps
from ...validation import as_float_array, check_count

__all__ = [
    "centring_matrix",
    "plane_basis",
    "centre",
    "ones_component",
    "plane_coordinates",
    "xhat_radius",
]


def centring_matrix(size: int) -> np.ndarray:
    r"""The centring projection :math:`P = I - \frac{1}{H}\mathbf{1}\mathbf{1}^\top` (chapter
    "Normalizing").

    ``P @ x`` equals ``x - x.mean()``: the orthogonal projection of `x` onto the hyperplane
    orthogonal to the all-ones vector. P is symmetric, ``P @ P == P``, and ``P @ ones == 0``.

    Parameters
    ----------
    size : int
        H, the number of features, at least 2.

    Returns
    -------
    ndarray of shape (size, size)

    Raises
    ------
    TypeError
        If `size` is not an integer.
    ValueError
        If `size` is smaller than 2.
    """
    size = check_count(size, "size", minimum=2)
    return np.eye(size) - np.full((size, size), 1.0 / size)


def plane_basis(size: int) -> np.ndarray:
    r"""An orthonormal basis of the hyperplane orthogonal to the all-ones vector (chapter
    "Normalizing").

    Row k (k = 1, ..., H-1) is :math:`(1, \dots, 1, -k, 0, \dots, 0)/\sqrt{k(k+1)}`, with k
    ones (the Helmert basis). For H = 3 the rows are :math:`(1, -1, 0)/\sqrt 2` and
    :math:`(1, 1, -2)/\sqrt 6`, two perpendicular unit vectors in the plane x + y + z = 0.

    Parameters
    ----------
    size : int
        H, the number of features, at least 2.

    Returns
    -------
    ndarray of shape (size - 1, size)
        Orthonormal rows, each orthogonal to the all-ones vector.

    Raises
    ------
    TypeError, ValueError
        As :func:`centring_matrix`.

    Examples
    --------
    >>> (plane_basis(3) * np.sqrt([[2.0], [6.0]])).round(12)
    array([[ 1., -1.,  0.],
           [ 1.,  1., -2.]])
    """
    size = check_count(size, "size", minimum=2)
    k = np.arange(1, size)[:, None]
    j = np.arange(size)[None, :]
    rows = np.where(j < k, 1.0, np.where(j == k, -k, 0.0))
    return rows / np.sqrt(k * (k + 1.0))


def centre(x) -> np.ndarray:
    """Subtract from each vector (last axis) its mean: the projection onto the plane orthogonal to 1
    (chapter "Normalizing").

    Parameters
    ----------
    x : array_like
        Input of shape (..., H).

    Returns
    -------
    ndarray
        Same shape; every vector sums to zero up to rounding.

    Raises
    ------
    TypeError, ValueError
        For inputs that :func:`lnlib.validation.as_float_array` refuses.
    """
    x = as_float_array(x, "x")
    return x - x.mean(axis=-1, keepdims=True)


def ones_component(x) -> np.ndarray:
    r"""The signed length of each vector's component along the unit vector :math:`\mathbf{1}/\sqrt
    H`: :math:`\sqrt H\,\mu` (chapter "Normalizing").

    This is the part of `x` that centring throws away:
    ``x = centre(x) + ones_component(x) * ones / sqrt(H)``.

    Parameters
    ----------
    x : array_like
        Input of shape (..., H).

    Returns
    -------
    ndarray of shape (...)
    """
    x = as_float_array(x, "x")
    return x.sum(axis=-1) / np.sqrt(x.shape[-1])


def plane_coordinates(x) -> np.ndarray:
    """Coordinates of each vector's projection onto the plane orthogonal to 1, in
    :func:`plane_basis` (chapter "Normalizing").

    Because the basis is orthogonal to the all-ones vector, `x` and ``centre(x)`` have the same
    coordinates, and their Euclidean length equals the length of ``centre(x)``.

    Parameters
    ----------
    x : array_like
        Input of shape (..., H) with H >= 2.

    Returns
    -------
    ndarray of shape (..., H - 1)
    """
    x = as_float_array(x, "x")
    return x @ plane_basis(x.shape[-1]).T


def xhat_radius(x, *, eps: float = 1e-5) -> np.ndarray:
    r"""The length of the normalized vector predicted by the geometry: :math:`\sqrt
    H\,\sqrt{\sigma^2/(\sigma^2+\varepsilon)}` (chapter "Normalizing").

    Computed from the statistics of `x` alone, not from :math:`\hat x`, so it can be checked
    against ``np.linalg.norm(layer_norm(x, eps=eps), axis=-1)``. It is exactly :math:`\sqrt H`
    for ``eps=0`` and slightly less for ``eps > 0``; a constant vector with ``eps > 0`` has
    radius 0 (its :math:`\hat x` is the origin).

    Parameters
    ----------
    x : array_like
        Input of shape (..., H).
    eps : float, default 1e-5
        As in :func:`lnlib.forward.layer_norm`.

    Returns
    -------
    ndarray of shape (...)

    Raises
    ------
    ValueError
        For a constant vector with ``eps=0`` (0/0), and whatever
        :func:`lnlib.forward.layer_norm_steps` refuses.
    """
    steps = layer_norm_steps(x, eps=eps)
    var = steps.var[..., 0]
    return np.sqrt(steps.size * var / (var + eps))
