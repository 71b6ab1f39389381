r"""Measurements behind the chapter "Fact check": one function per claim of the source documents.

Each function returns what the claim predicts and what the code measures,
either as a :class:`Measurement` (a Monte Carlo estimate with its sample size,
seed and standard error; the standard error is 0 for an exact computation) or
as a small record of exact quantities. The claims themselves, with verdicts,
are listed in :mod:`lnlib.book.factcheck.claims`; the chapter "Fact check" shows both and
``tests/book/test_fact_check.py`` turns every verdict into an assertion.

Inputs are random vectors of H features drawn by :func:`draw_inputs`. Four
families are *exchangeable* (i.i.d. features): "normal", "uniform" (kurtosis
1.8), "laplace" (kurtosis 6) and "exponential" (skewness 2). The fifth,
"unequal", gives every feature its own mean and scale, so the features are
not exchangeable.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ...backward import layer_norm_backward, layer_norm_jacobian
from ...forward import layer_norm
from ...norms import batch_norm
from ...variants import layer_norm_eps_outside_sqrt

__all__ = [
    "DISTRIBUTIONS",
    "Measurement",
    "draw_inputs",
    "exchangeable_second_moments",
    "normal_fourth_moment",
    "normal_fourth_moment_symbolic",
    "xhat_pair_covariance",
    "output_covariances",
    "xhat_moment",
    "output_feature_moments",
    "discrete_entropy",
    "entropy_under_layer_norm",
    "jacobian_rank",
    "feature_correlation",
    "input_scale_gradient_factor",
    "weight_scale_gradient_ratio",
    "gamma_gradient_by_source_rule",
    "single_path_gradient",
    "gamma_step_ratios",
    "batch_norm_future_leak",
    "eps_placement_gap",
    "shift_after_update",
    "GRID_SIZES",
    "MomentGrid",
    "moment_grid",
]

#: Input families of :func:`draw_inputs`; all but "unequal" have i.i.d. (exchangeable) features.
DISTRIBUTIONS = ("normal", "uniform", "laplace", "exponential", "unequal")


@dataclass(frozen=True)
class Measurement:
    """A measured quantity beside the value a source document claims (chapter "Fact check").

    Attributes
    ----------
    name : str
        What was measured.
    measured, claimed : float
        The code's value and the document's.
    stderr : float
        Standard error of `measured` (0.0 when it is computed exactly).
    samples : int
        Monte Carlo sample size (0 for an exact computation).
    seed : int or None
        Seed of the random numbers (None when nothing is random).
    """

    name: str
    measured: float
    claimed: float
    stderr: float = 0.0
    samples: int = 0
    seed: int | None = None

    @property
    def z(self) -> float:
        """(measured - claimed) / stderr: how many standard errors apart (inf for an exact
        mismatch)."""
        gap = self.measured - self.claimed
        if self.stderr == 0.0:
            return 0.0 if gap == 0.0 else float(np.copysign(np.inf, gap))
        return gap / self.stderr

    def __str__(self) -> str:
        """One line, or two (the name, then the numbers) where one would pass the book's 80
        columns."""
        error = (
            f" ± {self.stderr:.4f} (n = {self.samples}, seed {self.seed})"
            if self.samples
            else " (exact)"
        )
        numbers = f"measured {self.measured:.4f}{error}, claimed {self.claimed:.4f}"
        line = f"{self.name}: {numbers}"
        return line if len(line) <= 80 else f"{self.name}:\n  {numbers}"


def _check_size(size, low: int = 2) -> int:
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(
            f"size must be an integer number of features H >= {low}; got {size!r} of type "
            f"{type(size).__name__}."
        )
    if size < low:
        raise ValueError(f"size must be at least {low} features; got {size}.")
    return int(size)


def draw_inputs(distribution: str, size: int, samples: int, seed: int = 0) -> np.ndarray:
    """Draw `samples` random input vectors of `size` features (chapter "Fact check").

    Parameters
    ----------
    distribution : str
        One of :data:`DISTRIBUTIONS`. "unequal" draws feature i from a normal
        with mean i and standard deviation 0.5 + i (features differ in
        location and scale); the others draw i.i.d. standard-shape features.
    size : int
        H, at least 2.
    samples : int
        Number of vectors, at least 2.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    ndarray of shape (samples, size)

    Raises
    ------
    ValueError
        For an unknown distribution or a size or sample count below 2.
    """
    size, samples = _check_size(size), _check_size(samples)
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}; got {distribution!r}.")
    rng = np.random.default_rng(seed)
    shape = (samples, size)
    if distribution == "uniform":
        return rng.uniform(-1.0, 1.0, shape)
    if distribution == "laplace":
        return rng.laplace(size=shape)
    if distribution == "exponential":
        return rng.exponential(size=shape)
    if distribution == "unequal":
        index = np.arange(size)
        return index + (0.5 + index) * rng.normal(size=shape)
    return rng.normal(size=shape)


def exchangeable_second_moments():
    r"""Derive E[x̂_i²] and E[x̂_i x̂_j] (i ≠ j) for exchangeable features, with sympy (chapter
    "Fact check").

    Every sample satisfies :math:`\sum_i \hat x_i = 0` and :math:`\sum_i \hat x_i^2 = H r`, with
    :math:`r = \sigma^2/(\sigma^2+\varepsilon)` (r = 1 for ε = 0). With exchangeable features all
    :math:`E[\hat x_i^2]` equal one number a and all :math:`E[\hat x_i \hat x_j]` another, b.
    Taking expectations of :math:`\hat x_1 \sum_i \hat x_i = 0` and of the second identity gives
    :math:`a + (H-1) b = 0` and :math:`H a = H\,E[r]`.

    Returns
    -------
    dict
        ``{"H", "r", "a", "b"}``: the symbols H and E[r], and the solved a = E[r], b = -E[r]/(H-1).
    """
    # here, not at the top: sympy costs every chapter's import cell most of a second
    import sympy as sp

    H, r, a, b = sp.symbols("H r a b", positive=True)
    solution = sp.solve([sp.Eq(a + (H - 1) * b, 0), sp.Eq(H * a, H * r)], [a, b], dict=True)[0]
    return {"H": H, "r": r, "a": sp.simplify(solution[a]), "b": sp.simplify(solution[b])}


def normal_fourth_moment_symbolic():
    r"""E[x̂_i⁴] for i.i.d. normal features and ε = 0, derived with sympy (chapter "Fact check").

    For normal features, :math:`\hat x_i^2 = (H-1) B` with :math:`B \sim \mathrm{Beta}(\tfrac12,
    \tfrac{H-2}{2})` (the squared component of the centred vector along one direction of the
    centring plane, divided by its squared length). The Beta moments :math:`E[B^k] = \prod_{m<k}
    (p+m)/(p+q+m)` give

    .. math:: E[\hat x_i^2] = 1, \qquad E[\hat x_i^4] = \frac{3(H-1)}{H+1} .

    Returns
    -------
    dict
        ``{"H", "second", "fourth"}``: the symbol H and the two moments as sympy expressions.
    """
    import sympy as sp  # see exchangeable_second_moments

    H = sp.Symbol("H", positive=True)
    p, q = sp.Rational(1, 2), (H - 2) / 2

    def beta_moment(k):
        return sp.prod([(p + m) / (p + q + m) for m in range(k)])

    return {
        "H": H,
        "second": sp.simplify((H - 1) * beta_moment(1)),
        "fourth": sp.factor(sp.simplify((H - 1) ** 2 * beta_moment(2))),
    }


def normal_fourth_moment(size: int) -> float:
    """3(H - 1)/(H + 1): E[x̂⁴] for H i.i.d. normal features and ε = 0 (chapter "Fact check")."""
    size = _check_size(size)
    return 3.0 * (size - 1) / (size + 1)


def _mean_and_error(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(values.size))


def xhat_pair_covariance(
    size: int,
    *,
    distribution: str = "normal",
    samples: int = 20000,
    seed: int = 0,
    eps: float = 0.0,
    pair=(0, 1),
) -> Measurement:
    """Monte Carlo Cov(x̂_i, x̂_j) for one pair of features, against the claimed -1/(H - 1) (chapter
    "Fact check").

    The standard error is that of the mean of the products of the centred pair
    (the delta method's leading term).
    """
    x = draw_inputs(distribution, size, samples, seed)
    xhat = layer_norm(x, eps=eps)
    i, j = pair
    products = (xhat[:, i] - xhat[:, i].mean()) * (xhat[:, j] - xhat[:, j].mean())
    value, error = _mean_and_error(products)
    return Measurement(
        f"Cov(x̂_{i + 1}, x̂_{j + 1}), H = {size}, {distribution}",
        value,
        -1.0 / (size - 1),
        error,
        samples,
        seed,
    )


@dataclass(frozen=True)
class OutputCovariances:
    """The covariance matrix of y = γ x̂ + β: measured, true for exchangeable inputs, and the
    document's (chapter "Fact check")."""

    measured: np.ndarray
    exact: np.ndarray
    document: np.ndarray
    samples: int
    seed: int


def output_covariances(gamma, *, samples: int = 20000, seed: int = 0) -> OutputCovariances:
    r"""Cov(y_i, y_j) for normal i.i.d. inputs and ε = 0, three ways (chapter "Fact check").

    ``exact`` is :math:`\gamma_i\gamma_j(\delta_{ij} - (1-\delta_{ij})/(H-1)) =
    \gamma_i\gamma_j\frac{H}{H-1}(\delta_{ij} - \frac1H)`; ``document`` is the formula of
    "Mathematical foundations", :math:`\frac{\gamma_i\gamma_j}{H}(\delta_{ij} - \frac1H)`, smaller
    by the factor :math:`H^2/(H-1)`.
    """
    gamma = np.asarray(gamma, dtype=float)
    size = _check_size(gamma.size)
    centring = np.eye(size) - 1.0 / size
    outer = np.outer(gamma, gamma)
    y = layer_norm(
        draw_inputs("normal", size, samples, seed), gamma, np.arange(size, dtype=float), eps=0.0
    )
    return OutputCovariances(
        measured=np.cov(y, rowvar=False),
        exact=outer * centring * size / (size - 1),
        document=outer * centring / size,
        samples=samples,
        seed=seed,
    )


def xhat_moment(
    order: int,
    size: int,
    *,
    distribution: str = "normal",
    samples: int = 20000,
    seed: int = 0,
    eps: float = 0.0,
) -> Measurement:
    """Monte Carlo E[x̂_i^order], against the document's 0 (order 3) or 3 (order 4) (chapter "Fact
    check").

    For exchangeable inputs every feature has the same moment, so each sample
    contributes the mean of x̂_i^order over its features (a smaller standard
    error than one feature alone). For "unequal" inputs feature 1 alone is used.
    """
    claimed = {1: 0.0, 2: 1.0, 3: 0.0, 4: 3.0}
    if order not in claimed:
        raise ValueError(
            f"order must be 1, 2, 3 or 4 (the moments the document lists); got {order!r}."
        )
    xhat = layer_norm(draw_inputs(distribution, size, samples, seed), eps=eps)
    powers = xhat[:, 0] ** order if distribution == "unequal" else (xhat**order).mean(axis=1)
    value, error = _mean_and_error(powers)
    return Measurement(
        f"E[x̂^{order}], H = {size}, {distribution}", value, claimed[order], error, samples, seed
    )


@dataclass(frozen=True)
class FeatureMoments:
    """Mean and variance of each output feature over the samples, and of each sample over its
    features (chapter "Fact check")."""

    feature_mean: np.ndarray
    feature_var: np.ndarray
    sample_mean: np.ndarray
    sample_var: np.ndarray
    samples: int
    seed: int


def output_feature_moments(
    gamma,
    beta,
    *,
    distribution: str = "normal",
    samples: int = 20000,
    seed: int = 0,
    eps: float = 0.0,
) -> FeatureMoments:
    """The moments behind the claims E[LN(x)] = β and Var(LN(x)) = γ² (chapter "Fact check").

    Returns per-feature moments over samples (``feature_mean``, ``feature_var``, shape (H,))
    and per-sample moments over features (``sample_mean``, ``sample_var``, shape (samples,)).
    """
    gamma, beta = np.asarray(gamma, dtype=float), np.asarray(beta, dtype=float)
    y = layer_norm(draw_inputs(distribution, gamma.size, samples, seed), gamma, beta, eps=eps)
    return FeatureMoments(
        y.mean(axis=0), y.var(axis=0), y.mean(axis=1), y.var(axis=1), samples, seed
    )


def discrete_entropy(rows, *, decimals: int = 9) -> float:
    """Shannon entropy in bits of the empirical distribution of the rows of `rows` (chapter "Fact
    check").

    Rows equal after rounding to `decimals` count as one outcome, so that
    floating-point noise does not split an outcome in two.
    """
    rows = np.round(np.asarray(rows, dtype=float), decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
    _, counts = np.unique(rows, axis=0, return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum()) + 0.0  # + 0.0: one outcome gives 0.0, not -0.0


def entropy_under_layer_norm(support, gamma=None) -> tuple[float, float]:
    """(H(X), H(LN(X))) in bits for X uniform on the rows of `support`, with ε = 0 (chapter "Fact
    check")."""
    support = np.asarray(support, dtype=float)
    return discrete_entropy(support), discrete_entropy(layer_norm(support, gamma, eps=0.0))


def jacobian_rank(x) -> int:
    """Rank of LayerNorm's Jacobian at `x` with ε = 0: H - 2, the dimension of the sphere x̂ lives
    on (chapter "Fact check")."""
    return int(np.linalg.matrix_rank(layer_norm_jacobian(x, eps=0.0)))


def feature_correlation(
    loadings, *, samples: int = 20000, seed: int = 0, pair=(0, 1)
) -> tuple[Measurement, Measurement]:
    """Correlation of two features before and after LayerNorm, inputs sharing a common factor
    (chapter "Fact check").

    Inputs are :math:`x_i = \\ell_i f + z_i` with one standard-normal factor f per
    sample and independent standard-normal noise z. The standard error of a
    correlation r is approximated by :math:`(1 - r^2)/\\sqrt{n}`. The `claimed`
    value of the second measurement is the correlation before: the document
    says LayerNorm reduces it.

    Returns
    -------
    (before, after) : Measurement, Measurement
    """
    loadings = np.asarray(loadings, dtype=float)
    size = _check_size(loadings.size)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(samples, 1)) * loadings + rng.normal(size=(samples, size))
    i, j = pair

    def corr(data):
        r = float(np.corrcoef(data[:, i], data[:, j])[0, 1])
        return r, (1 - r * r) / np.sqrt(samples)

    r_before, e_before = corr(x)
    r_after, e_after = corr(layer_norm(x, eps=0.0))
    before = Measurement(f"corr(x_{i + 1}, x_{j + 1})", r_before, r_before, e_before, samples, seed)
    after = Measurement(f"corr(y_{i + 1}, y_{j + 1})", r_after, r_before, e_after, samples, seed)
    return before, after


def input_scale_gradient_factor(x, alpha: float, *, eps: float = 0.0, seed: int = 0) -> Measurement:
    r"""The factor k with grad at αx = k · grad at x, against the document's 1/α (chapter "Fact
    check").

    The upstream gradient dy is one fixed random vector; k is the least-squares
    fit of the gradient at :math:`\alpha x` on the gradient at :math:`x`. For ε = 0 the exact answer
    is :math:`1/\lvert\alpha\rvert`.
    """
    x = np.asarray(x, dtype=float)
    dy = np.random.default_rng(seed).normal(size=x.shape)
    base = layer_norm_backward(dy, x, eps=eps)[0]
    scaled = layer_norm_backward(dy, alpha * x, eps=eps)[0]
    factor = float(scaled @ base / (base @ base))
    return Measurement(
        f"gradient factor at α = {alpha:g}, ε = {eps:g}", factor, 1.0 / alpha, 0.0, 0, seed
    )


def weight_scale_gradient_ratio(
    scale: float, *, size: int = 8, inputs: int = 5, seed: int = 0
) -> Measurement:
    r"""‖dL/dW at cW‖ / ‖dL/dW at W‖ for y = LN(W u), ε = 0, against 1/c (chapter "Fact check").

    This is what Ba et al. (2016, §5.2) show about the geometry: growing weights
    shrink the gradient, an implicit reduction of the learning rate.
    """
    rng = np.random.default_rng(seed)
    W, u, dy = rng.normal(size=(size, inputs)), rng.normal(size=inputs), rng.normal(size=size)

    def grad(weights):
        return np.outer(layer_norm_backward(dy, weights @ u, eps=0.0)[0], u)

    ratio = float(np.linalg.norm(grad(scale * W)) / np.linalg.norm(grad(W)))
    return Measurement(f"gradient norm ratio at c = {scale:g}", ratio, 1.0 / scale, 0.0, 0, seed)


def gamma_gradient_by_source_rule(x, dy) -> tuple[np.ndarray, np.ndarray]:
    r"""dL/dγ by the document's update rule (a sum over features i) and by the chain rule (chapter
    "Fact check").

    Returns
    -------
    (document, true) : ndarray
        ``document`` has one number per sample, :math:`\sum_i dy_{n,i}\hat x_{n,i}`;
        ``true`` has one per feature, :math:`\sum_n dy_{n,i}\hat x_{n,i}`, from
        :func:`lnlib.backward.layer_norm_backward`.
    """
    x, dy = np.asarray(x, dtype=float), np.asarray(dy, dtype=float)
    xhat = layer_norm(x)
    return (dy * xhat).sum(axis=-1), layer_norm_backward(dy, x)[1]


def single_path_gradient(x, dy, *, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    r"""dL/dx by the document's one-path chain rule and by the full one, for one vector (chapter
    "Fact check").

    Returns
    -------
    (document, true) : ndarray
        ``document`` is :math:`\frac{\partial L}{\partial y_i}\frac{\partial y_i}{\partial x_i}`,
        the diagonal of the Jacobian alone; ``true`` is :math:`\sum_j \frac{\partial L}{\partial
        y_j}\frac{\partial y_j}{\partial x_i}`, ``dy @ J``, which always sums to 0 over i (LayerNorm
        ignores a shift shared by all features).
    """
    J = layer_norm_jacobian(x, eps=eps)
    dy = np.asarray(dy, dtype=float)
    return dy * np.diag(J), dy @ J


def gamma_step_ratios(
    lr: float,
    *,
    steps: int = 30,
    size: int = 4,
    samples: int = 64,
    batch: int | None = None,
    seed: int = 0,
) -> np.ndarray:
    r"""Ratios ‖γ_{t+1} - γ_t‖ / ‖γ_t - γ_{t-1}‖ of gradient descent on γ (chapter "Fact check").

    Fits :math:`y = \gamma \odot \hat x` to targets by mean squared error, with
    full-batch steps (``batch=None``) or mini-batches of `batch` samples.
    Full batch, the loss is a quadratic with curvature :math:`\lambda_i = \operatorname{mean}_n \hat
    x_{n,i}^2` per feature, so every ratio lies between the smallest and largest :math:`\lvert 1 -
    \eta\lambda_i\rvert`: a contraction only when :math:`\eta < 2/\max\lambda_i`.
    """
    rng = np.random.default_rng(seed)
    xhat = layer_norm(rng.normal(size=(samples, size)), eps=0.0)
    target = xhat * rng.uniform(0.5, 2.0, size) + 0.1 * rng.normal(size=(samples, size))
    gamma, history = np.ones(size), [np.ones(size)]
    for _ in range(steps):
        rows = slice(None) if batch is None else rng.choice(samples, batch, replace=False)
        grad = ((gamma * xhat[rows] - target[rows]) * xhat[rows]).mean(axis=0)
        gamma = gamma - lr * grad
        history.append(gamma)
    moves = np.linalg.norm(np.diff(history, axis=0), axis=1)
    return moves[1:] / moves[:-1]


def batch_norm_future_leak(
    *, tokens: int = 6, width: int = 8, batch: int = 4, seed: int = 0
) -> tuple[float, float]:
    """How much token 0's normalized output changes when only the last token changes (chapter "Fact
    check").

    Batch norm with statistics over (batch, tokens), as in a transformer that
    used it, against layer norm. A causal language model must not let a later
    token change an earlier one's output.

    Returns
    -------
    (batch_norm_change, layer_norm_change) : float, float
    """
    x = np.random.default_rng(seed).normal(size=(batch, tokens, width))
    changed = x.copy()
    changed[:, -1] += 3.0

    def change(f):
        return float(np.abs(f(changed)[:, 0] - f(x)[:, 0]).max())

    return change(lambda v: batch_norm(v, axis=(0, 1))), change(layer_norm)


def eps_placement_gap(x, *, eps: float = 1e-5) -> float:
    """Largest absolute difference on `x` between LN with ε added to σ and LN with ε inside the
    square root (chapter "Fact check")."""
    return float(np.abs(layer_norm_eps_outside_sqrt(x, eps=eps) - layer_norm(x, eps=eps)).max())


def shift_after_update(
    *, samples: int = 500, inputs: int = 6, width: int = 8, step: float = 0.3, seed: int = 11
) -> tuple[float, float]:
    """What LayerNorm pins and what still moves when a layer's weights change (chapter "Fact
    check").

    Inputs with mean 1 (as after a ReLU) go through a random linear layer and
    LayerNorm (ε = 0), before and after adding ``step`` times random noise to
    the weights.

    Returns
    -------
    (sample_mean, feature_shift) : float, float
        The largest per-sample mean over the features after the update (0 up to
        rounding: pinned), and the largest change of a feature's mean over the
        samples (the "covariate shift" the next layer sees).
    """
    rng = np.random.default_rng(seed)
    X, W = rng.normal(loc=1.0, size=(samples, inputs)), rng.normal(size=(inputs, width))
    before = layer_norm(X @ W, eps=0.0)
    after = layer_norm(X @ (W + step * rng.normal(size=W.shape)), eps=0.0)
    return float(np.abs(after.mean(axis=1)).max()), float(
        np.abs(after.mean(axis=0) - before.mean(axis=0)).max()
    )


#: Feature counts H of :func:`moment_grid` (the explorer's slider positions).
GRID_SIZES = (2, 3, 4, 8, 16, 64, 256)


@dataclass(frozen=True)
class MomentGrid:
    """Monte Carlo statistics of x̂ for every input family and H of a grid (chapter "Fact check").

    Every array is indexed ``[distribution, size]`` in the order of `distributions` and `sizes`.

    Attributes
    ----------
    sizes, distributions : tuple
    cov, cov_err : ndarray
        Cov(x̂_1, x̂_2) and its standard error.
    third, third_err, fourth, fourth_err : ndarray
        E[x̂_1³] and E[x̂_1⁴], each with its standard error.
    edges : ndarray
        Histogram bin edges of x̂_1.
    density : ndarray
        Histogram of x̂_1 as a density, indexed ``[distribution, size, bin]``.
    samples, seed : int
    """

    sizes: tuple
    distributions: tuple
    cov: np.ndarray
    cov_err: np.ndarray
    third: np.ndarray
    third_err: np.ndarray
    fourth: np.ndarray
    fourth_err: np.ndarray
    edges: np.ndarray
    density: np.ndarray
    samples: int
    seed: int

    def index(self, distribution: str, size: int) -> tuple[int, int]:
        """Position of (distribution, size) in the arrays; ValueError if the grid does not hold
        it."""
        if distribution not in self.distributions or size not in self.sizes:
            raise ValueError(
                f"the grid holds distributions {self.distributions} and sizes {self.sizes}; got "
                f"{distribution!r}, H = {size!r}."
            )
        return self.distributions.index(distribution), self.sizes.index(size)


def moment_grid(
    sizes=GRID_SIZES,
    distributions=DISTRIBUTIONS,
    *,
    samples: int = 4000,
    seed: int = 0,
    bins: int = 48,
) -> MomentGrid:
    """Precompute the statistics of x̂_1 (ε = 0) on a grid of input families and H (chapter "Fact
    check").

    The explorer of the chapter only looks results up in this grid, so a
    control change costs no sampling. Feature 1 alone is used for every
    family (exchangeable or not), so all entries mean the same thing.
    """
    sizes, distributions = tuple(int(_check_size(h)) for h in sizes), tuple(distributions)
    edges = np.linspace(-4.0, 4.0, bins + 1)
    shape = (len(distributions), len(sizes))
    cov, cov_err, third, third_err, fourth, fourth_err = (np.empty(shape) for _ in range(6))
    density = np.empty(shape + (bins,))
    for d, name in enumerate(distributions):
        for k, size in enumerate(sizes):
            first = layer_norm(draw_inputs(name, size, samples, seed + k), eps=0.0)[:, :2]
            products = (first[:, 0] - first[:, 0].mean()) * (first[:, 1] - first[:, 1].mean())
            cov[d, k], cov_err[d, k] = _mean_and_error(products)
            third[d, k], third_err[d, k] = _mean_and_error(first[:, 0] ** 3)
            fourth[d, k], fourth_err[d, k] = _mean_and_error(first[:, 0] ** 4)
            density[d, k] = np.histogram(first[:, 0], bins=edges, density=False)[0] / (
                samples * np.diff(edges)
            )
    return MomentGrid(
        sizes,
        distributions,
        cov,
        cov_err,
        third,
        third_err,
        fourth,
        fourth_err,
        edges,
        density,
        samples,
        seed,
    )
