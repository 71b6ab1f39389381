"""lnlib.variance_algorithms, lnlib.book.experiments.memory_speed and the numerics explorer: the
variance algorithms, their errors, and the numbers shown."""

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lnlib import layer_norm
from lnlib.book.experiments.memory_speed import (
    FUSED_WELFORD_LAYER_NORM,
    NAIVE_LAYER_NORM,
    KernelStep,
    memory_traffic,
)
from lnlib.book.experiments.numerics import error_sweep, layer_norm_with, shift_errors, shifted_data
from lnlib.validation import BFLOAT16
from lnlib.variance_algorithms import (
    METHODS,
    WelfordState,
    chan_merge,
    exact_variance,
    unit_roundoff,
    variance,
    variance_relative_error,
    welford,
)


def fraction_variance(row):
    """The biased variance of the float values in `row`, in exact rational arithmetic."""
    values = [Fraction(float(v)) for v in np.ravel(row)]
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / len(values)


def float64_two_pass(x):
    """The textbook two-pass variance over the last axis, in float64, with numpy's own sums."""
    x = np.asarray(x, dtype=np.float64)
    return ((x - x.mean(axis=-1, keepdims=True)) ** 2).mean(axis=-1)


RNG = np.random.default_rng(2024)
UNIT = RNG.normal(size=(6, 100))


# --- the documents' example -----------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_documents_batch_variance(method):
    # deviations are -1.5, -0.5, 0.5, 1.5: (2.25 + 0.25 + 0.25 + 2.25) / 4 = 5 / 4
    np.testing.assert_array_equal(
        variance([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], method=method), [1.25, 1.25]
    )


def test_documents_example_shifted_breaks_only_one_pass_in_float32():
    # x + 1e4 is exact in float32 (10004 < 2**24), so are the mean 10002.5 and the deviations:
    # two-pass and Welford stay exactly 5/4. But x**2 ~ 1.0005e8 needs 27 significant bits and
    # float32 keeps 24: E[x^2] is rounded to a multiple of 8, far coarser than the variance 1.25.
    x = np.array([1.0, 2.0, 3.0, 4.0]) + 1e4
    assert variance(x, method="two_pass", dtype="float32") == np.float32(1.25)
    assert variance(x, method="welford", dtype="float32") == np.float32(1.25)
    assert abs(float(variance(x, method="one_pass", dtype="float32")) - 1.25) >= 1.0


def test_documents_example_shifted_one_pass_is_zero_by_hand():
    # float32 keeps 24 significant bits: numbers in [2**26, 2**27) are 8 apart, in [2**27, 2**28)
    # 16, in [2**28, 2**29) 32. squares 100020001, 100040004, 100060009, 100080016 round (ties to
    # even) to 100020000, 100040000, 100060008, 100080016; tree sum: 200060000 (exact), 200140024 ->
    # 200140032 (tie, even); 400200032 (exact); / 4 = 100050008 = E[x^2]. mean: 40010 / 4 = 10002.5
    # exactly; mean**2 = 100050006.25 -> 100050008. E[x^2] - mean**2 = 0, where the truth is 1.25.
    x = np.array([10001.0, 10002.0, 10003.0, 10004.0])
    assert variance(x, method="one_pass", dtype="float32") == np.float32(0.0)


# --- accuracy against independent references ------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shift", [0.0, 3.0, 100.0])
def test_float64_methods_match_exact_rational_variance(method, shift):
    x = UNIT + shift
    exact = np.array([float(fraction_variance(row)) for row in x])
    # one-pass loses about u * shift**2 relatively (u = 1.1e-16): at shift 100 that is ~1e-12
    tolerance = 1e-13 if method != "one_pass" else 1e-10
    np.testing.assert_allclose(variance(x, method=method), exact, rtol=tolerance)


def test_exact_variance_matches_rational_arithmetic():
    x = UNIT * 1e-3 + 1e4
    exact = np.array([float(fraction_variance(row)) for row in x])
    np.testing.assert_allclose(exact_variance(x), exact, rtol=1e-12)


@pytest.mark.parametrize("method", ["two_pass", "welford"])
def test_float32_stable_methods_match_float64_two_pass(method):
    x = (UNIT + 1e3).astype(np.float32)
    reference = float64_two_pass(x)
    ours = variance(x, method=method)
    assert ours.dtype == np.float32
    # Welford's error grows like u * shift (u = 6e-8): at shift 1e3, ~6e-5; two-pass stays near u
    np.testing.assert_allclose(ours, reference, rtol=1e-3 if method == "welford" else 1e-5)


def test_one_pass_error_grows_like_the_square_of_the_shift():
    sweep = error_sweep([10.0, 1000.0], "float32")
    small, large = sweep.variance_error["one_pass"]
    # (1000 / 10)**2 = 1e4 predicted; ask for 100 to leave room for the randomness of rounding
    assert large > 100 * small


def test_math_fsum_reference_agrees_with_float64_two_pass():
    x = UNIT + 50.0
    fsum_reference = [
        math.fsum((v - math.fsum(row) / row.size) ** 2 for v in row) / row.size for row in x
    ]
    np.testing.assert_allclose(variance(x, method="two_pass"), fsum_reference, rtol=1e-14)
    np.testing.assert_allclose(variance(x, method="welford"), fsum_reference, rtol=1e-13)


# --- catastrophic cancellation: the seeded negative variances -------------------------------------


def test_one_pass_gives_negative_variances_in_float32_for_a_seeded_example():
    data = shifted_data(1e4, "float32", rows=8, size=256, seed=0)
    one_pass = variance(data, method="one_pass")
    assert np.sum(one_pass < 0) >= 1
    assert np.all(variance(data, method="two_pass") > 0)
    assert np.all(variance(data, method="welford") > 0)
    assert shift_errors(1e4, "float32").negative["one_pass"] == int(np.sum(one_pass < 0))


def test_negative_variance_makes_nan_unless_clamped():
    data = shifted_data(1e4, "float32")
    negative_rows = variance(data, method="one_pass") < -1e-5
    assert negative_rows.any()
    y = layer_norm_with(data, method="one_pass", dtype="float32")
    assert np.isnan(y[negative_rows]).all()
    assert np.isfinite(layer_norm_with(data, method="one_pass", dtype="float32", clamp=True)).all()


# --- arithmetic really happens in the requested dtype ---------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("method", METHODS)
def test_result_has_the_requested_dtype(method, dtype):
    assert variance(UNIT, method=method, dtype=dtype).dtype == dtype


def test_float16_overflow_is_returned_not_hidden():
    x = np.random.default_rng(0).normal(size=256) + 100.0
    # one-pass sums x**2 ~ 256 * 100**2 = 2.56e6, beyond float16's 65504: inf (or NaN after inf -
    # inf)
    assert not np.isfinite(variance(x, method="one_pass", dtype="float16"))
    # two-pass sums x ~ 256 * 100 = 25600 < 65504, then squared deviations of order 1: finite and
    # close
    assert variance(x, method="two_pass", dtype="float16") == pytest.approx(
        float64_two_pass(x.astype(np.float16)), rel=1e-2
    )


def test_float16_two_pass_overflows_where_welford_does_not():
    x = np.random.default_rng(0).normal(size=256) + 500.0
    # the sum 256 * 500 = 128000 overflows float16; Welford's running mean stays near 500
    assert not np.isfinite(variance(x, method="two_pass", dtype="float16"))
    assert variance(x, method="welford", dtype="float16") == pytest.approx(
        float64_two_pass(x.astype(np.float16)), rel=0.2
    )


def test_unit_roundoff_values():
    # float16/32/64 keep 10/23/52 fraction bits: u = 2**-11, 2**-24, 2**-53
    assert unit_roundoff("float16") == 2.0**-11
    assert unit_roundoff("float32") == 2.0**-24
    assert unit_roundoff(np.float64) == 2.0**-53


def test_unit_roundoff_is_the_one_the_harness_uses_and_knows_every_float_format():
    # one function: lnlib.harness budgets with lnlib.variance_algorithms'; bfloat16 keeps 7 fraction
    # bits
    from lnlib import harness

    assert harness.unit_roundoff is unit_roundoff
    assert unit_roundoff("bfloat16") == unit_roundoff(BFLOAT16) == 2.0**-8
    assert unit_roundoff("float8_e4m3fn") == 2.0**-4
    assert unit_roundoff(None) == 2.0**-53


@pytest.mark.parametrize(("dtype", "error"), [("int32", ValueError), ("banana", TypeError)])
def test_unit_roundoff_refuses_what_is_not_a_float_dtype(dtype, error):
    with pytest.raises(error, match="dtype must be"):
        unit_roundoff(dtype)


def test_the_variance_dtypes_go_through_the_one_compute_dtype_rule():
    # validation.compute_dtype resolves and checks them; bfloat16 is not one of this chapter's
    # precisions
    with pytest.raises(
        ValueError, match="dtype must be one of float16, float32, float64; got bfloat16"
    ):
        variance(UNIT, dtype="bfloat16")
    assert variance(UNIT.astype(np.float16)).dtype == np.float16  # no float32 widening by default


# --- Welford and Chan's merge ---------------------------------------------------------------------


def test_chan_merge_of_two_chunks_equals_the_whole():
    x = UNIT[0] + 7.0
    a, b = welford(x[:30], lanes=1), welford(x[30:], lanes=1)
    merged = chan_merge(a, b)
    assert merged.count == 100
    assert merged.mean == pytest.approx(float(np.mean(x)), rel=1e-14)
    assert merged.variance == pytest.approx(float(fraction_variance(x)), rel=1e-13)


def test_chan_merge_by_hand():
    # chunk [1, 3]: n 2, mean 2, M2 2; chunk [5]: n 1, mean 5, M2 0 delta 3, mean 2 + 3 * 1/3 = 3,
    # M2 = 2 + 0 + 9 * 2 * 1 / 3 = 8; [1, 3, 5] has mean 3, M2 4 + 0 + 4 = 8
    a = WelfordState(np.float64(2), np.float64(2), np.float64(2))
    b = WelfordState(np.float64(1), np.float64(5), np.float64(0))
    merged = chan_merge(a, b)
    assert (merged.count, merged.mean, merged.m2) == (3, pytest.approx(3.0), pytest.approx(8.0))


@pytest.mark.parametrize("size", [1, 5, 32, 37, 100])
@pytest.mark.parametrize("lanes", [1, 3, 32])
def test_welford_any_lanes_any_size(size, lanes):
    x = np.random.default_rng(size).normal(size=(3, size)) + 2.0
    state = welford(x, lanes=lanes)
    np.testing.assert_array_equal(state.count, size)
    np.testing.assert_allclose(state.mean, x.mean(axis=-1), rtol=1e-13)
    np.testing.assert_allclose(state.variance, float64_two_pass(x), rtol=1e-12, atol=1e-15)


def test_tuple_axis_equals_flattened_trailing_axes():
    x = np.random.default_rng(3).normal(size=(2, 3, 4)) + 5.0
    for method in METHODS:
        np.testing.assert_allclose(
            variance(x, method=method, axis=(1, 2)), float64_two_pass(x.reshape(2, 12)), rtol=1e-8
        )
        np.testing.assert_allclose(
            variance(x, method=method, axis=0), float64_two_pass(np.moveaxis(x, 0, -1)), rtol=1e-8
        )  # one-pass on 2 values near 5: ~1e-10


def test_layer_norm_with_two_pass_float64_is_layer_norm():
    x = UNIT + 3.0
    np.testing.assert_allclose(
        layer_norm_with(x, method="two_pass", dtype="float64"),
        layer_norm(x),
        rtol=1e-12,
        atol=1e-12,
    )


def test_torch_agrees_with_welford_and_two_pass(torch):
    x = UNIT + 1e4
    t64 = torch.tensor(x)
    np.testing.assert_allclose(
        variance(x, method="welford"), t64.var(dim=-1, unbiased=False).numpy(), rtol=1e-12
    )
    x32 = x.astype(np.float32)
    torch_out = torch.nn.functional.layer_norm(torch.tensor(x32), (x.shape[-1],)).numpy()
    exact_out = layer_norm(x32.astype(np.float64))
    ours = layer_norm_with(x32, method="welford", dtype="float32")
    # both are float32 kernels that avoid cancellation: errors of order u * shift = 6e-4, never O(1)
    assert np.abs(torch_out - exact_out).max() < 1e-2
    assert np.abs(ours - exact_out).max() < 1e-2


# --- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"method": "three_pass"}, ValueError, "one_pass"),
        ({"method": None}, ValueError, "method must be one of"),
        ({"dtype": "int32"}, ValueError, "float16, float32, float64"),
        ({"dtype": np.complex64}, ValueError, "float16, float32, float64"),
        ({"dtype": "banana"}, TypeError, "dtype must be"),
        ({"axis": 2}, ValueError, "out of range"),
    ],
)
def test_bad_arguments(kwargs, error, words):
    with pytest.raises(error, match=words):
        variance(UNIT, **kwargs)


@pytest.mark.parametrize(
    ("x", "error", "words"),
    [
        ([1.0, np.nan], ValueError, "NaN"),
        (np.zeros((2, 0)), ValueError, "empty"),
        ([1 + 1j, 2.0], TypeError, "complex"),
        (["a", "b"], TypeError, "real numbers"),
    ],
)
def test_bad_inputs(x, error, words):
    with pytest.raises(error, match=words):
        variance(x)


def test_values_too_large_for_the_dtype_are_refused():
    with pytest.raises(ValueError, match="does not fit in float16"):
        variance([1e5, 1.0], dtype="float16")


def test_bad_lanes_and_zero_reference():
    with pytest.raises(ValueError, match="lanes"):
        welford(UNIT, lanes=0)
    with pytest.raises(TypeError, match="lanes"):
        welford(UNIT, lanes=2.5)
    with pytest.raises(ValueError, match="positive"):
        variance_relative_error([1.0], [0.0])


def test_data_destroyed_by_rounding_is_refused():
    # near 1e4, float16 numbers are 8 apart (2**13 <= 1e4 < 2**14, 10 fraction bits: 2**(13-10) = 8)
    with pytest.raises(ValueError, match="8 apart"):
        shifted_data(1e4, "float16")
    sweep = error_sweep([10.0, 1e4], "float16")
    assert np.isfinite(sweep.variance_error["two_pass"][0]) and np.isnan(
        sweep.variance_error["two_pass"][1]
    )


# --- memory traffic -------------------------------------------------------------------------------


def test_naive_layer_norm_traffic_by_hand():
    # reads of H-vectors: x (mean), x (subtract), d (square), sq (mean), d (divide), xhat (scale),
    # scaled (shift) = 7 writes of H-vectors: d, sq, xhat, scaled, y = 5
    traffic = memory_traffic(NAIVE_LAYER_NORM)
    assert (traffic.reads, traffic.writes, traffic.total) == (7, 5, 12)
    # counting gamma and beta too adds 2 reads
    assert memory_traffic(NAIVE_LAYER_NORM, count_parameters=True).reads == 9


def test_fused_kernel_traffic_by_hand():
    # Welford sweep reads x; the normalize sweep reads x again and writes y: 2 reads, 1 write
    assert (
        memory_traffic(FUSED_WELFORD_LAYER_NORM).reads,
        memory_traffic(FUSED_WELFORD_LAYER_NORM).writes,
    ) == (2, 1)
    assert memory_traffic(FUSED_WELFORD_LAYER_NORM, count_parameters=True).total == 5


def test_traffic_refuses_non_steps():
    with pytest.raises(TypeError, match="KernelStep"):
        memory_traffic([("x", "y")])
    assert memory_traffic([KernelStep("y = x", ("x",), ("y",))]).total == 2


# --- the explorer shows the right numbers ---------------------------------------------------------


def test_explorer_shows_the_errors_of_shift_errors():
    from lnlib.book.explorers import numerics_explorer

    explorer = numerics_explorer(shift=1e4, dtype="float32")
    expected = shift_errors(1e4, "float32")
    assert explorer.result["errors"] == expected
    assert f"{expected.variance_error['two_pass']:.1e}" in explorer.readout.value
    assert f"{expected.negative['one_pass']} of 8" in explorer.readout.value
    assert "negative" in explorer.note.value
    explorer.controls["shift"].value = 10.0
    assert explorer.result["errors"] == shift_errors(10.0, "float32")
    assert explorer.note.value == ""


def test_explorer_dtype_changes_the_curves_and_notes_float16_limits():
    from lnlib.book.explorers import numerics_explorer
    from lnlib.book.explorers.numerics import sweep_for

    explorer = numerics_explorer(shift=1e4, dtype="float32")
    explorer.controls["dtype"].value = "float16"
    curve = explorer.panels.curves["variance_error", "welford"]
    finite = np.isfinite(sweep_for("float16").variance_error["welford"])
    np.testing.assert_allclose(
        curve.get_ydata()[finite], sweep_for("float16").variance_error["welford"][finite]
    )
    assert "8 apart" in explorer.note.value
    explorer.controls["shift"].value = 1e5
    assert "does not fit in float16" in explorer.note.value
    assert explorer.result == {}


def test_explorer_names_the_methods_that_overflow_in_float16():
    # at shift 300: sum of x ~ 256 * 300 = 76800 and sum of x**2 ~ 256 * 9e4 both exceed float16's
    # 65504, while Welford's running mean stays near 300
    from lnlib.book.explorers import numerics_explorer

    explorer = numerics_explorer(shift=300.0, dtype="float16")
    assert "Overflow or NaN in one-pass E[x²] − E[x]² and two-pass:" in explorer.note.value
    assert "Welford" not in explorer.note.value
    assert np.isfinite(explorer.result["errors"].variance_error["welford"])


def test_explorer_refuses_bad_starting_values():
    from lnlib.book.explorers import numerics_explorer

    with pytest.raises(ValueError, match="shift"):
        numerics_explorer(shift=0.5)
    with pytest.raises(ValueError, match="dtype"):
        numerics_explorer(dtype="int8")


def test_welford_counts_stay_exact_beyond_float16_integers():
    # float16 holds integers exactly only up to 2048; above 4096 its numbers are 4 apart, so 5001 is
    # not one. A kernel's counter is an integer: the count must be exact even when the data are
    # float16.
    x = np.random.default_rng(5).normal(size=5001) + 3.0
    state = welford(x, dtype="float16")
    assert state.count == 5001
    assert state.mean.dtype == np.float16
    assert float(state.variance) == pytest.approx(
        float(float64_two_pass(x.astype(np.float16))), rel=2e-2
    )


# --- the table's claim: Welford's M2 cannot go negative, even after rounding ----------------------


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(np.float64, st.integers(1, 70), elements=st.floats(-1.0, 1.0)),
    st.floats(0.0, 1e4),
    st.sampled_from(["float16", "float32"]),
    st.integers(1, 8),
)
def test_welford_m2_is_never_negative(noise, shift, dtype, lanes):
    # each update adds delta * (x - new mean), two numbers of one sign (the new mean lies between
    # the old mean and x, and rounding is monotonic); Chan's merge adds only non-negative terms.
    # One-pass has no such guarantee.
    state = welford(noise * 1e-3 + shift, dtype=dtype, lanes=lanes)
    assert state.m2 >= 0


def test_lnlib_variance_is_the_function_and_no_module_shadows_it():
    """`from lnlib import variance` gives the function; its module has a name of its own."""
    import lnlib
    from lnlib import variance_algorithms

    assert lnlib.variance is variance_algorithms.variance
    assert not (Path(lnlib.__file__).parent / "variance.py").exists()
