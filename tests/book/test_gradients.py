"""The chapter "Gradients through LayerNorm": its explorer shows the right numbers, and its figures'
data are right."""

import numpy as np
import pytest

import lnlib.book.explorers
from lnlib import layer_norm
from lnlib.backward import numerical_gradient, relative_error
from lnlib.book.figures.gradients import scaled_pieces


def test_explorer_shows_the_finite_difference_gradient_at_its_defaults():
    explorer = lnlib.book.explorers.gradients_explorer(
        x=[2.0, 4.0, 6.0, 8.0], dy=[1.5, -0.5, 0.0, 0.5]
    )
    numeric = numerical_gradient(
        lambda v: layer_norm(v, eps=0), [2.0, 4.0, 6.0, 8.0], [1.5, -0.5, 0.0, 0.5]
    )
    assert relative_error(explorer.result["dx"], numeric) < 1e-6
    assert explorer.result["std"] == pytest.approx(
        np.sqrt(5.0)
    )  # var of 2, 4, 6, 8 is (9 + 1 + 1 + 9) / 4 = 5
    shown = ", ".join(f"{v:.3g}" for v in numeric)
    assert f"dx = [{shown}]" in explorer.readout.value
    assert "Σ dx = 0 " in explorer.readout.value and "dx · x̂ = 0 " in explorer.readout.value
    assert explorer.note.value == ""


def test_explorer_shows_dx_as_zeros_when_every_dy_is_equal():
    # learner B39 (2026-12-01): the "things to try" line promises dx = 0 for equal dy, and the
    # readout printed rounding noise, dx = [-1.51e-17, 2.52e-17, ...]
    explorer = lnlib.book.explorers.gradients_explorer(
        x=[0.3, 4.1, -2.7, 8.0], dy=[0.7, 0.7, 0.7, 0.7]
    )
    assert np.abs(explorer.result["dx"]).max() < 1e-12
    assert "dx = [0, 0, 0, 0]" in explorer.readout.value


def test_explorer_jacobian_follows_the_sliders():
    explorer = lnlib.book.explorers.gradients_explorer()
    explorer.controls["x2"].value = -3.0
    x = np.array([2.0, -3.0, 6.0, 8.0])
    rows = [numerical_gradient(lambda v: layer_norm(v, eps=0), x, np.eye(4)[i]) for i in range(4)]
    assert relative_error(explorer.result["jacobian"], np.array(rows)) < 1e-6


def test_explorer_shows_what_eps_leaves_along_xhat():
    # sum_j dx_j xhat_j = H m eps / ((var + eps) s) with m = mean(dy xhat), gamma = 1 (see
    # test_backward.py)
    explorer = lnlib.book.explorers.gradients_explorer(
        x=[0.0, 0.5, 1.0, 1.5], dy=[1.0, 0.0, 0.0, 0.0]
    )
    explorer.controls["eps"].value = 1.0
    var, s = 0.3125, np.sqrt(1.3125)  # var of 0, .5, 1, 1.5 = (2.25 + .25 + .25 + 2.25) / 16
    xhat = (np.array([0.0, 0.5, 1.0, 1.5]) - 0.75) / s
    expected = 4 * (xhat[0] / 4) * 1.0 / ((var + 1.0) * s)
    assert explorer.result["dx_dot_xhat"] == pytest.approx(expected, rel=1e-12)
    assert f"dx · x̂ = {expected:.3g}" in explorer.readout.value
    assert "ε is larger than the variance" in explorer.note.value


def test_explorer_says_when_eps_is_too_small_to_see():
    """A learner set ε = 0.01 and saw only a text line change: the note says why (ε ≪ σ²) and what
    to try."""
    explorer = lnlib.book.explorers.gradients_explorer()  # x = 2, 4, 6, 8: σ² = 5
    variance = np.var([2.0, 4.0, 6.0, 8.0])
    for eps, share in ((1e-5, "2 × 10⁻⁶"), (0.01, "0.002")):  # ε/σ² by hand
        explorer.controls["eps"].value = eps
        growth = 100 * (np.sqrt(1 + eps / variance) - 1)  # s = √(σ² + ε) against √σ²
        assert f"ε is {share} of σ²: s grows {growth:.2g} %" in explorer.note.value
        assert "dx · x̂ leaves 0" in explorer.note.value and "Try ε = 1" in explorer.note.value
    # dy ⟂ x̂ (x̂ ∝ −3, −1, 1, 3): dx · x̂ stays 0 at every ε, and the note must not say it leaves 0
    for name, value in zip(("dy1", "dy2", "dy3", "dy4"), (1.0, -1.0, -1.0, 1.0)):
        explorer.controls[name].value = value
    explorer.controls["eps"].value = 0.01
    assert "dx · x̂ = 0 " in explorer.readout.value
    assert "ε is 0.002 of σ²" in explorer.note.value and "leaves 0" not in explorer.note.value
    for eps in (0.0, 1.0):  # nothing to explain at ε = 0; at ε = 1 (a fifth of σ²) the figures move
        explorer.controls["eps"].value = eps
        assert explorer.note.value == ""


def test_explorer_notes_a_constant_input():
    explorer = lnlib.book.explorers.gradients_explorer()
    for name in ("x1", "x2", "x3", "x4"):
        explorer.controls[name].value = 3.0
    assert explorer.result == {"defined": False}
    assert "LayerNorm is undefined here" in explorer.note.value
    explorer.controls["eps"].value = 0.01
    dy = np.array([1.5, -0.5, 0.0, 0.5])
    np.testing.assert_allclose(
        explorer.result["dx"], (dy - dy.mean()) / 0.1, rtol=1e-12
    )  # xhat = 0, s = sqrt(0.01)
    assert "x̂ = 0" in explorer.note.value


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"x": [1.0, 2.0], "dy": [1.0]}, "same length"),
        ({"x": [20.0, 1.0], "dy": [0.0, 1.0]}, "must lie in"),
        ({"eps": 0.5}, "eps must be one of"),
        ({"gamma": [1.0, 2.0]}, "gamma must have one value per feature"),
    ],
)
def test_explorer_refuses_bad_starting_values(kwargs, words):
    with pytest.raises(ValueError, match=words):
        lnlib.book.explorers.gradients_explorer(**kwargs)


def test_term_panel_limit_bounds_every_term():
    # The explorer fixes the terms axis at sqrt(H) * max|dy|; no reachable setting may leave it.
    rng = np.random.default_rng(0)
    for _ in range(300):
        x = rng.uniform(-10, 10, size=4) * rng.choice([1e-3, 1.0])
        dy = rng.uniform(-2, 2, size=4)
        eps = float(rng.choice([0.0, 1e-5, 1e-2, 1.0]))
        _, terms, scaled_dx, _, _ = scaled_pieces(x, dy, eps=eps)
        biggest = max(np.abs(scaled_dx).max(), *(np.abs(t).max() for t in terms.values()))
        assert biggest <= 2.0 * np.sqrt(4) + 1e-12


def test_companion_colour_scale_covers_every_jacobian_entry_with_gamma():
    # abs(s * J[i, j]) <= abs(gamma[i]): with gamma = 2 somewhere, a fixed scale of +-1 would clip
    # the heatmap.
    from lnlib.book.figures.gradients import gradients_companion

    x = np.array([2.0, 4.0, 6.0, 8.0])
    fig = gradients_companion(
        {
            "eps = 0": (x, [1.0, 0.0, 0.0, 0.0], 0.0),
            "eps = 0.01": (x / 100, [0.0, 1.0, 0.0, 0.0], 1e-2),
        },
        gamma=[2.0, -1.0, 0.5, 1.0],
    )
    heatmaps = [image for ax in fig.axes for image in ax.images]
    assert len(heatmaps) == 2
    for image in heatmaps:
        low, high = image.get_clim()
        assert low <= image.get_array().min() and image.get_array().max() <= high
    # at eps = 0.01 and a tiny input, s * J is nearly diag(gamma) (I - 11'/H): entry (1, 1) is about
    # 2 * 3/4
    assert np.abs(heatmaps[1].get_array()).max() > 1.0


# RMSNorm's backward pass (lnlib.book.experiments.gradients)

TOKEN = np.array([0.4, -0.9, 0.2, 5.1])  # the chapter's token 1


def test_rms_jacobian_equals_finite_differences_of_the_forward_pass():
    from lnlib import rms_norm
    from lnlib.book.experiments.gradients import rms_jacobian

    gamma = np.array([1.0, 0.5, 1.5, 0.8])
    rows = [
        numerical_gradient(lambda v: rms_norm(v, gamma, eps=1e-2), TOKEN, np.eye(4)[i])
        for i in range(4)
    ]
    assert relative_error(rms_jacobian(TOKEN, gamma, eps=1e-2), np.array(rows)) < 1e-7


def test_rms_jacobian_removes_only_the_radial_direction_and_layer_norms_also_the_shift():
    from lnlib.book.experiments.gradients import jacobian_geometry

    found = jacobian_geometry(TOKEN)
    np.testing.assert_allclose(found["rms_eigenvalues"], [0, 1, 1, 1], atol=1e-12)
    np.testing.assert_allclose(found["ln_eigenvalues"], [0, 0, 1, 1], atol=1e-12)
    assert found["rms_idempotent"] < 1e-12
    assert found["rms_Jx"] < 1e-12 and found["ln_Jx"] < 1e-12 and found["ln_J1"] < 1e-12
    # J 1 / rstd = 1 - x̂ mean(x̂) at ε = 0, of norm sqrt(H (1 - mean(x̂)²)), by hand
    xhat = TOKEN / np.sqrt(np.mean(TOKEN**2))
    assert found["rms_J1"] == pytest.approx(np.sqrt(1 - xhat.mean() ** 2), rel=1e-12)
    # the chapter's form, in x: mean(x̂)² = mean(x)² / mean(x²); checked on a second vector too
    for vector in (TOKEN, np.array([3.0, -1.0, 2.0, 0.5, 1.0])):
        shift = jacobian_geometry(vector)
        assert shift["rms_J1_formula"] == pytest.approx(shift["rms_J1"], rel=1e-12)


def test_what_eps_leaves_of_jx_is_eps_over_mean_square_plus_eps():
    from lnlib.book.experiments.gradients import jacobian_geometry

    found = jacobian_geometry(TOKEN, ratios=(1e-3, 0.5, 3.0))
    for t in (1e-3, 0.5, 3.0):
        assert found["leftover"][t] == pytest.approx(t / (1 + t), rel=1e-9)
        assert found["leftover_formula"][t] == t / (1 + t)


def test_check_rms_norm_passes_the_kernel_saving_rstd_and_fails_sigma_and_16_bit_rstd():
    from lnlib.book.experiments.gradients import saved_statistic_checks

    found = saved_statistic_checks()
    assert found["rstd"] == {"passed": True, "failed": [], "worst": {}}
    for name in ("sigma = 1/rstd", "rstd in float16"):
        assert not found[name]["passed"]
        assert found[name]["failed"] == [("backward", "float32"), ("backward", "float64")]
    assert min(found["sigma = 1/rstd"]["worst"].values()) > 1e6  # x σ in place of x / σ
    # a relative error of about 2⁻¹² misses float32's budget by hundreds, float64's by ~10¹¹
    rounded = found["rstd in float16"]["worst"]
    assert 10 < rounded["float32"] < 1e4
    assert rounded["float64"] > 1e9


def test_float16_rstd_error_stays_under_half_a_unit_in_the_last_of_11_bits():
    from lnlib.book.experiments.gradients import float16_rstd_error

    found = float16_rstd_error(rows=2000)
    assert found["bound"] == 2.0**-11
    assert found["bound"] / 2 < found["max"] <= found["bound"]
    assert 2.0**-14 < found["mean"] < found["max"]


def test_rms_gradient_figure_draws_dx_as_the_sum_of_its_two_terms():
    from lnlib.book.figures.gradients import rms_gradient_figure
    from lnlib.book.figures.style import layout_problems
    from lnlib.rms import rms_norm_backward

    x, dy = np.array([1.2, 0.6]), np.array([0.6, 1.8])
    fig = rms_gradient_figure(x, dy, {1e-2: 0.0099, 1.0: 0.5}, {1e-2: 1 / 101, 1.0: 0.5})
    assert layout_problems(fig) == []
    drawn = [a for a in fig.axes[0].texts if a.arrow_patch is not None]
    ends = [np.array(a.xy) - np.array(a.xyann) for a in drawn]
    dx = rms_norm_backward(dy, x, eps=0.0)[0]
    np.testing.assert_allclose(ends[0] + ends[1], dx, atol=1e-12)
    np.testing.assert_allclose(ends[2], dx, atol=1e-12)
    assert abs(dx @ x) < 1e-12  # tangent to the circle through x


# --- the chapter's prose numbers (experiments.gradients.*_findings) -----------------------------
# Each expected value is computed here another way: finite differences, or the formula by hand.

TOKEN = np.array([0.4, -0.9, 0.2, 5.1])  # the chapter's token 1, its outlier last
TOKEN_DY = np.array([0.3, -0.2, 0.1, 0.4])
TOKEN_GAMMA = np.array([1.0, 0.5, 1.5, 0.8])


def texts(found: dict) -> dict:
    return {key: str(value) for key, value in found.items()}


def fd_jacobian(x, gamma=None, eps=0.0):
    """J_ij = dy_i/dx_j by central finite differences of the forward pass."""
    return np.array(
        [
            numerical_gradient(lambda v: layer_norm(v, gamma, eps=eps), x, row)
            for row in np.eye(x.size)
        ]
    )


def test_outlier_findings_read_the_scaled_jacobians_columns():
    from lnlib.book.experiments.gradients import outlier_findings
    from lnlib.book.tools.prose import number

    scaled = fd_jacobian(TOKEN) * TOKEN.std()
    columns = np.linalg.norm(scaled, axis=0)
    xhat = (TOKEN - TOKEN.mean()) / np.sqrt(TOKEN.var() + 1e-5)
    dx = numerical_gradient(lambda v: layer_norm(v, TOKEN_GAMMA), TOKEN, TOKEN_DY)
    expected = {
        "outlier_xhat": number(xhat[3], ".2f"),
        "outlier_diag": number(scaled[3, 3], ".3f"),
        "outlier_col": number(columns[3], ".2f"),
        "outlier_col3": number(columns[3], ".3f"),
        "others_col_min": number(columns[:3].min(), ".2f"),
        "others_col_max": number(columns[:3].max(), ".2f"),
        "outlier_col_ratio": number(columns[:3].min() / columns[3], ".0f"),
    }
    expected.update({f"dx_token1_{j}": number(v, ".3f") for j, v in enumerate(dx, start=1)})
    assert texts(outlier_findings(TOKEN, TOKEN_DY, TOKEN_GAMMA)) == texts(expected)
    assert str(expected["outlier_xhat"]) == "1.69"  # below √3, the largest x̂ at H = 4


def test_leftover_findings_follow_the_formula_for_what_eps_leaves():
    from lnlib.book.experiments.gradients import leftover_findings
    from lnlib.book.tools.prose import number

    rng = np.random.default_rng(5)
    v, up, g = rng.normal(3.0, 2.0, size=8), rng.normal(size=8), rng.uniform(0.5, 2.0, size=8)

    def leftover(eps):  # x̂ᵀdx = H mean(dx̂ x̂) / s · ε / (σ² + ε)
        s = np.sqrt(v.var() + eps)
        xhat = (v - v.mean()) / s
        return 8 * np.mean(g * up * xhat) / s * eps / (v.var() + eps)

    dx_small = numerical_gradient(lambda z: layer_norm(z, g, eps=1e-5), v, up)
    assert texts(leftover_findings(up, v, g)) == texts(
        {
            "leftover_eps1": number(leftover(1.0), ".3f"),
            "leftover_eps5": number(leftover(1e-5), ".1e"),
            "dx_norm_eps5": number(np.linalg.norm(dx_small), ".2f"),
            "var_v": number(v.var(), ".2f"),
        }
    )


def test_scale_ratios_are_one_without_eps_and_fall_below_one_with_it():
    from lnlib.book.experiments.gradients import scale_ratios

    alphas = [1e-4, 1e-2, 1.0, 10.0]
    np.testing.assert_allclose(scale_ratios(TOKEN_DY, TOKEN, alphas, 0.0), 1.0, rtol=1e-9)
    with_eps = scale_ratios(TOKEN_DY, TOKEN, alphas, 1e-5)
    # the gradient stops growing near α = √ε ≈ 0.003: at α = 10⁻⁴ it keeps about α/√ε of the 1/α
    # rule
    assert with_eps[0] < 0.1 and np.all(np.diff(with_eps) > 0)
    assert with_eps[-1] == pytest.approx(1.0, abs=1e-4)


def test_scaling_findings_measure_the_ratio_by_finite_differences():
    from lnlib.book.experiments.gradients import scaling_findings
    from lnlib.book.tools.prose import number

    unit = (TOKEN - TOKEN.mean()) / TOKEN.std()

    def ratio(gamma):
        at = lambda z: np.linalg.norm(  # noqa: E731
            numerical_gradient(lambda v: layer_norm(v, gamma, eps=1e-5), z, TOKEN_DY)
        )
        return 1e-3 * at(1e-3 * unit) / at(unit)

    found = texts(scaling_findings(TOKEN_DY, TOKEN, TOKEN_GAMMA))
    assert found == texts(
        {
            "ratio_small_alpha": number(ratio(None), ".3f"),
            "ratio_small_alpha_gamma": number(ratio(TOKEN_GAMMA), ".3f"),
            "saturation": number(316.0, ".0f"),  # 1/√(10⁻⁵) = 316.2
        }
    )
    assert found["ratio_small_alpha"] != found["ratio_small_alpha_gamma"]  # the ratio depends on γ


def test_rms_findings_at_a_vector_whose_numbers_are_known():
    from lnlib.book.experiments.gradients import jacobian_geometry, rms_findings

    x = np.array([1.0, 1.0, 1.0, 3.0])  # mean 1.5, mean square 3: √(1 − 2.25/3) = 0.5
    assert texts(rms_findings(x, jacobian_geometry(x))) == {
        "rms_J1": "0.50",
        "token1_mean": "1.50",
        "token1_ms": "3.000",
        "rms_leftover_t4": "0.0001",  # t / (1 + t)
        "rms_leftover_t2": "0.0099",
        "rms_leftover_t0": "0.5",
        "rms_leftover_1e6": "10⁻⁶",
    }


def test_kernel_findings_give_the_power_of_ten_below_each_miss():
    from lnlib.book.experiments.gradients import kernel_findings

    checks = {
        "rstd in float16": {"worst": {"float32": 350.0, "float64": 2.0e11}},
        "sigma = 1/rstd": {"worst": {"float32": 3.0e39, "float64": 5.0e40}},
    }
    assert texts(kernel_findings(checks, {"max": 4.83e-4, "mean": 1.79e-4})) == {
        "rms16_miss_float32": "10²",
        "rms16_miss_float64": "10¹¹",
        "rms_sigma_miss": "10³⁹",  # the smaller of the two dtypes' misses
        "rstd16_max": "4.8 × 10⁻⁴",
        "rstd16_mean": "1.8 × 10⁻⁴",
        "float32_eps": "1.2 × 10⁻⁷",  # 2⁻²³
    }


# Exercise 4's norms (lnlib.book.exercises.gradients.OTHER_NORMS): the answer key's closed form
# (course_keys/09_gradients_4.md, not shipped in the wheel) against the checker's finite
# differences, against this file's own forward pass differenced, and against sympy's derivative.
def _other_norm_forward(norm: str, x, g: float, eps: float = 0.1):
    """The forward pass of exercise 4's `norm`, row by row, in numpy or (objects) in sympy."""
    if isinstance(x, np.ndarray):
        mean, absolute, sqrt = (lambda v: v.mean(axis=-1, keepdims=True)), np.abs, np.sqrt
    else:
        import sympy as sp

        def mean(v):
            return sum(v) / len(v)

        absolute, sqrt = sp.Abs, sp.sqrt
    if norm == "mad":
        c = x - mean(x) if isinstance(x, np.ndarray) else [v - mean(x) for v in x]
        d = mean(absolute(c)) if isinstance(x, np.ndarray) else mean([absolute(v) for v in c])
    elif norm == "eps_outside":
        c = x - mean(x) if isinstance(x, np.ndarray) else [v - mean(x) for v in x]
        d = sqrt(mean(c**2)) if isinstance(x, np.ndarray) else sqrt(mean([v**2 for v in c]))
    elif norm == "rms_eps_outside":
        c = x
        d = sqrt(mean(x**2)) if isinstance(x, np.ndarray) else sqrt(mean([v**2 for v in x]))
    else:  # scalenorm
        c, eps = x, 0.0
        d = (
            sqrt((x**2).sum(axis=-1, keepdims=True))
            if isinstance(x, np.ndarray)
            else sqrt(sum(v**2 for v in x))
        )
    return g * c / (d + eps) if isinstance(x, np.ndarray) else [g * v / (d + eps) for v in c]


def _key_closed_form(norm: str, x, dy, g: float) -> np.ndarray:
    """The answer key's solution to exercise 4, run on rows `x`, `dy` and gain `g`."""
    from lnlib.book.exercises.chapter import key_solution
    from lnlib.book.exercises.gradients import exercises

    namespace = {"np": np, "norm": norm, "xn": np.asarray(x, float), "dyn": dy, "gn": g}
    exec(key_solution(exercises.builders[3]), namespace)
    return namespace["answer_4"]


@pytest.mark.parametrize("norm", ["mad", "eps_outside", "rms_eps_outside", "scalenorm"])
def test_exercise_4s_closed_form_is_the_gradient_of_each_norm(norm):
    """The key's closed form agrees with the checker's finite differences (its expected answers),
    with this file's own forward pass differenced, on students' data and on random rows, and with
    sympy's exact derivative of the forward pass at integer data, for every norm of the family."""
    import sympy as sp

    from lnlib.book.exercises.gradients import OTHER_NORMS, _other_norm_rows, other_norm_backward

    assert norm in OTHER_NORMS
    rng = np.random.default_rng(4)
    for _ in range(3):
        data = _other_norm_rows(rng, norms=(norm,))
        x, dy, g = data["xn"], data["dyn"], data["gn"]
        closed = _key_closed_form(norm, x, dy, g)
        checker = other_norm_backward(norm, x, dy, g)
        np.testing.assert_allclose(checker, closed, rtol=1e-9, atol=1e-11)
        numerical = numerical_gradient(lambda v: _other_norm_forward(norm, v, g), x, dy)
        np.testing.assert_allclose(closed, numerical, rtol=1e-6, atol=1e-8)
    x = rng.normal(size=(3, 5))
    dy = rng.normal(size=(3, 5))
    numerical = numerical_gradient(lambda v: _other_norm_forward(norm, v, 1.7), x, dy)
    np.testing.assert_allclose(_key_closed_form(norm, x, dy, 1.7), numerical, rtol=1e-6, atol=1e-8)
    # sympy: L = sum(dy * y) for symbols, differentiated, at a student's row (exact rationals)
    H = 4
    xs = sp.symbols(f"x1:{H + 1}", real=True)
    dys = sp.symbols(f"dy1:{H + 1}", real=True)
    g, eps = sp.Rational(3, 2), sp.Rational(1, 10)
    loss = sum(d * y for d, y in zip(dys, _other_norm_forward(norm, list(xs), g, eps)))
    gradient = [sp.diff(loss, v) for v in xs]
    data = _other_norm_rows(np.random.default_rng(5), norms=(norm,))
    for row, up in zip(data["xn"], data["dyn"]):
        at = {**dict(zip(xs, map(sp.Rational, row))), **dict(zip(dys, map(sp.Rational, up)))}
        exact = np.array([float(sp.nsimplify(d.subs(at))) for d in gradient])
        closed = _key_closed_form(norm, row[None], up[None], 1.5)[0]
        np.testing.assert_allclose(closed, exact, rtol=1e-12, atol=1e-14)
        checker = other_norm_backward(norm, row[None], up[None], 1.5)[0]
        np.testing.assert_allclose(checker, exact, rtol=1e-9, atol=1e-11)


def test_the_installed_library_carries_no_closed_form_of_exercise_4():
    """The instructor review's B1: the key's solution shipped in the students' wheel. It lives in
    course_keys/, outside the package; the checker differences the forward pass."""
    from pathlib import Path

    import lnlib.book.exercises.gradients as gradients

    package = Path(gradients.__file__).resolve().parents[2]
    assert not any(package.rglob("09_gradients_4*"))
    assert "np.sign" not in Path(gradients.__file__).read_text(encoding="utf-8")


# Exercise 1's named mistakes (learner B's n2: a sign error got only a count of wrong entries).
EXERCISE_1_DATA = {  # the chapter's cell
    "xe": np.array([[2.0, 4.0, 6.0, 8.0], [1.0, 0.0, -1.0, 4.0], [3.0, 3.0, 5.0, 1.0]]),
    "dye": np.array([[1.0, 0.0, 0.0, -1.0], [0.5, 0.5, -0.5, 0.0], [0.0, 2.0, 0.0, 1.0]]),
}


def _exercise_1_variants(xe, dye, eps=1e-5):
    """Exercise 1's answer and the wrong answers a learner's likely slips give, from the data."""
    centred = xe - xe.mean(axis=-1, keepdims=True)
    xhat = centred / np.sqrt(xe.var(axis=-1, keepdims=True) + eps)
    return {
        "right": (dye * xhat).sum(axis=0),
        "sign": (dye * -xhat).sum(axis=0),  # centred as mean - x
        "raw x": (dye * xe).sum(axis=0),  # forgot to normalize
        "no eps": (dye * centred / np.sqrt(xe.var(axis=-1, keepdims=True))).sum(axis=0),
        "over features": (dye * xhat).sum(axis=-1),
        "over samples": (dye * (xe - xe.mean(axis=0)) / np.sqrt(xe.var(axis=0) + eps)).sum(axis=0),
        "running example": (RUNNING_DY * running_xhat).sum(axis=0),
    }


# the chapter's running example (its first code cell), which a reader of exercise 1 may reuse
RUNNING_X = np.array([[0.4, -0.9, 0.2, 5.1], [-0.3, 0.8, 1.1, -0.6], [1.2, -0.4, 0.3, 0.7]])
RUNNING_DY = np.array([[0.3, -0.2, 0.1, 0.4], [-0.5, 0.2, 0.3, 0.1], [0.1, 0.4, -0.3, -0.1]])
running_xhat = (RUNNING_X - RUNNING_X.mean(axis=-1, keepdims=True)) / np.sqrt(
    RUNNING_X.var(axis=-1, keepdims=True) + 1e-5
)


NAMED_IN_EXERCISE_1 = {  # a phrase of the sentence each wrong variant must get
    "sign": "every entry has the wrong sign",
    "raw x": "weights dye by the raw input xe",
    "no eps": "ε is missing",
    "over features": "sums over the features (axis=-1)",
    "over samples": "normalizes each feature over the samples (axis=0)",
    "running example": "dγ of the chapter's running example",
}


def test_exercise_1s_running_example_is_the_chapters():
    """The running example exercise 1's named mistake reuses is the one the chapter's first code
    cell makes (its source read from the notebook and run alone)."""
    import json
    from pathlib import Path

    from lnlib.book.exercises.gradients import RUNNING_DY as shipped_dy
    from lnlib.book.exercises.gradients import RUNNING_X as shipped_x

    notebook = Path(__file__).parents[2] / "chapters" / "09_gradients.ipynb"
    cells = json.loads(notebook.read_text())["cells"]
    source = next(
        "".join(c["source"]) for c in cells if "".join(c["source"]).startswith("# three tokens")
    )
    namespace = {"np": np, "lnlib": __import__("lnlib")}
    exec(source, namespace)  # noqa: S102 (the chapter's own cell)
    np.testing.assert_array_equal(namespace["x"], shipped_x)
    np.testing.assert_array_equal(namespace["dy"], shipped_dy)


@pytest.mark.parametrize("seed", [None, 0, 1, 2])
def test_exercise_1_names_each_likely_mistake_and_passes_the_right_answer(seed):
    """On the chapter's data and on three students' data (the course edition's variants): the
    right answer passes, typed in full and at the three digits asked; each slip, computed here
    from the data, gets its own sentence, typed in full and (all but ε) rounded; a sign flipped
    on one entry only is a slip, and gets the count of wrong entries."""
    from lnlib.book.exercises.feedback import round_to_digits
    from lnlib.book.exercises.gradients import exercises

    data = (
        EXERCISE_1_DATA
        if seed is None
        else exercises.builders[0].variant(np.random.default_rng(seed))
    )
    exercise = exercises.exercise(1, **data)
    answers = _exercise_1_variants(**data)
    assert exercise.feedback(answers["right"]) == "Correct!"
    assert exercise.feedback(round_to_digits(answers["right"], 3)) == "Correct!"
    for slip, phrase in NAMED_IN_EXERCISE_1.items():
        line = exercise.feedback(answers[slip])
        assert line.startswith("Not quite: ") and phrase in line, (slip, line)
        if slip != "no eps":  # ε = 1e-5 against a variance near 1 moves only later digits
            line = exercise.feedback(round_to_digits(answers[slip], 3))
            assert line.startswith("Not quite: ") and phrase in line, (slip, line)
    if seed is None:  # ε's effect, a relative 1e-5 / (2 var), rounds away at three digits
        assert exercise.feedback(round_to_digits(answers["no eps"], 3)) == "Correct!"
    one_flipped = answers["right"].copy()
    one_flipped[np.argmax(np.abs(one_flipped))] *= -1
    line = exercise.feedback(one_flipped)
    assert "1 of 4 entries differ" in line and "wrong sign" not in line, line


EXERCISE_5_DATA = {  # the chapter's cell, which the website prints and judges by
    "xk": np.array([[1.0, -1.0, 1.0, -1.0], [2.0, 2.0, -2.0, 2.0], [0.0, 4.0, 0.0, 0.0]]),
    "dyk": np.array([[0.5, 1.0, -1.0, 0.0], [1.0, 0.0, 0.5, -0.5], [0.0, -1.0, 2.0, 1.0]]),
}
EXERCISE_5_DATA["saved"] = np.sqrt((EXERCISE_5_DATA["xk"] ** 2).mean(axis=-1) + 0.01)


def test_exercise_5_names_the_rstd_mistake_typed_from_the_pages_data():
    """A reader multiplied by `saved` as if it were rstd, with the website's printout of `saved`
    (1.005, 2.0025: -9.015 for -9.01498), and typed 4.51, -9.02, -3.01, -2.00: told only "4 of 4
    entries differ". A named mistake typed a digit short of those asked, or a hair past its
    rounding at them, is named; the right answer at the digits asked is still right."""
    from lnlib.book.exercises.feedback import round_to_digits
    from lnlib.book.exercises.gradients import exercises

    exercise = exercises.exercise(5, **EXERCISE_5_DATA)
    rstd = "that multiplies x by the saved number as if it were rstd"
    for typed in ([4.51, -9.02, -3.01, -2.00], [4.5, -9.0, -3.0, -2.0]):
        assert rstd in exercise.feedback(typed), typed
    assert exercise.feedback(round_to_digits(exercise.expected, 3)) == "Correct!"
