"""Every number the fact check's verdicts quote (lnlib.book.experiments.fact_check), recomputed
here.

Each key of :data:`KEYS` has an expected value computed without lnlib's normalization (numpy by
hand), or, for the stack, the training and the batch draws, from the models with the chapters' seeds
and a check of the property the prose states. The test of the registry fails if a key has no
expectation.
"""

import numpy as np
import pytest

from lnlib.book.experiments import fact_check
from lnlib.book.experiments.complete_examples import EMBEDDING_SHOWN, documents_embedding

FINDINGS = fact_check.findings()
BATCH = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
TOKEN = np.array([2.0, 4.0, 6.0, 8.0])


def xhat(x, eps=1e-5):
    """x̂ over the last axis, by hand."""
    x = np.asarray(x, float)
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)


def gap(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def features():
    return np.random.default_rng(0).uniform(0.0, 1.0, size=16)


def embedding_counts():
    emb = documents_embedding(seed=0)
    shown = list(EMBEDDING_SHOWN)
    printed = np.array(fact_check.DOCUMENT_XHAT_512)
    var = emb.var()

    def count(values):
        return int(np.sum(np.round(values, 3) == printed))

    return {
        "match_sigma_eps": count((emb[shown] - 0.135) / (0.048 + 1e-5)),
        "match_unrounded": count((emb[shown] - 0.135) / (np.sqrt(0.0023) + 1e-5)),
        "match_frameworks": count((emb[shown] - emb.mean()) / np.sqrt(var + 1e-5)),
    }


def jacobian_diagonal(x, eps=1e-5):
    """J_ii of LayerNorm (γ = 1) by central differences."""
    h, out = 1e-6, []
    for i in range(x.size):
        step = np.eye(x.size)[i] * h
        out.append((xhat(x + step, eps)[i] - xhat(x - step, eps)[i]) / (2 * h))
    return np.array(out)


EMB = documents_embedding(seed=0)
EMB_S = np.sqrt(EMB.var() + 1e-5)
NEAR = np.array(fact_check.NEAR)
DIAG = jacobian_diagonal(TOKEN)
DOC_DIAG = (1 - 1 / 4) / np.sqrt(TOKEN.var() + 1e-5)

#: key -> the expected value, computed independently (None: checked by a property test below).
EXPECTED = {
    "bn_leak": None,
    "ln_leak": 0.0,
    "mean_sample1": 2.5,
    "mean_sample2": 6.5,
    "mean_token": 5.0,
    "var_sample1": 1.25,
    "var_sample2": 1.25,
    "std_sample1": np.sqrt(1.25),
    "std_with_eps": np.sqrt(1.25 + 1e-5),
    "std_eps_gap": np.sqrt(1.25 + 1e-5) - np.sqrt(1.25),
    "token_var": 5.0,
    "scale_gap": gap(xhat(1000 * features()), xhat(features())),
    "tiny_gap": gap(xhat(features() / 1000), xhat(features())),
    "near_inside": xhat(NEAR)[1],
    "near_outside": (NEAR[1] - NEAR.mean()) / (NEAR.std() + 1e-5),
    "near_out_var": xhat(NEAR).var(),
    "eps_PyTorch": 1e-5,
    "eps_Flax": 1e-6,
    "eps_Keras": 1e-3,
    "eps_spread": 1000.0,
    "doc_x1_printed": -1.5 / 1.11801,
    "doc_x1": -1.5 / np.sqrt(1.25 + 1e-5),
    "doc_x1_3dp": -1.5 / np.sqrt(1.25 + 1e-5),
    "doc_gap_1234": gap(
        (BATCH[0] - 2.5) / (np.sqrt(1.25) + 1e-5), (BATCH[0] - 2.5) / np.sqrt(1.25 + 1e-5)
    ),
    "token_std_eps": np.sqrt(5.0 + 1e-5),
    "doc_var": 1.25,
    "token_vs_sample": gap(xhat(TOKEN), xhat(BATCH[0])),
    "flip_diff": gap(xhat(-2 * BATCH[0], 0), xhat(BATCH[0], 0)),
    "shift_diff": gap(xhat(BATCH[0] + [0, 0, 0, 3.0], 0), xhat(BATCH[0], 0)),
    "small_diff": gap(xhat(1e-3 * BATCH[0]), xhat(BATCH[0])),
    "var_xhat_token": 5.0 / (5.0 + 1e-5),
    "slot_gamma_spread": None,
    "shared_gamma": None,
    "slot_loss": None,
    "shared_loss": None,
    "slot_mean_loss": None,
    "shortfall_token": 1 - np.sqrt(5.0 / (5.0 + 1e-5)),
    "shortfall_embedding": 1 - np.sqrt(EMB.var() / (EMB.var() + 1e-5)),
    "emb_mean": 0.135,
    "emb_var": 0.048**2,
    "emb_divisor": np.sqrt(0.048**2 + 1e-5),
    "emb_std": 0.048,
    "emb_out_std": np.sqrt(0.048**2 / (0.048**2 + 1e-5)),
    "doc_sigma_squared": 0.002304,
    "doc_root_of_rounded": np.sqrt(0.0023),
    "divisor_gap": EMB_S - (0.048 + 1e-5),
    "divisor_gap_in_eps": (EMB_S - (0.048 + 1e-5)) / 1e-5,
    **embedding_counts(),
    "emb_xhat_differ": 4 - embedding_counts()["match_frameworks"],
    "doc_diag": DOC_DIAG,
    "true_diag_1": DIAG[0],
    "true_diag_2": DIAG[1],
    "doc_factor": np.max(DOC_DIAG / DIAG),
    "bn_two_value": 2.0 / np.sqrt(4.0 + 1e-5),
    "doc_one_pass_0": None,
    "doc_one_pass_1": None,
    "doc_one_pass_seq_0": None,
    "doc_one_pass_seq_1": None,
    "f16_tiny": 2.0**-24,
    "f16_tiny_over_eps": 2.0**-24 / 1e-8,
    "relu_orders": None,
    "tanh_ln_growth": None,
    "shift_plain": None,
    "shift_ln": None,
    "bn_noise": None,
    "spread_64": None,
    "spread_2": None,
    "n_claims": None,
    "n_documents": None,
    "n_papers": None,
    "n_true": None,
    "n_conditional": None,
    "n_partly": None,
    "n_false": None,
    "n_uncheckable": None,
    "eps_e5": None,
    "xhat1_e5": None,
    "we_fourth": None,
    "unequal_cov": None,
    "unequal_z": None,
    "cov_factor": None,
    "cov_n": None,
    "k4_normal4": None,
    "k4_exact4": None,
    "k4_uniform": None,
    "k4_laplace": None,
    "k4_laplace_err": None,
    "k4_laplace_one": None,
    "k4_laplace_one_err": None,
    "skew_exp": None,
    "bound_256": None,
    "corr_kept": None,
}


def test_every_finding_has_an_expectation_and_a_meaning():
    assert set(EXPECTED) == set(fact_check.KEYS) == set(FINDINGS)
    for key, (spec, meaning) in fact_check.KEYS.items():
        assert meaning and isinstance(spec, str), key


@pytest.mark.parametrize("key", [k for k, v in EXPECTED.items() if v is not None])
def test_a_finding_equals_its_independent_value(key):
    assert FINDINGS[key] == pytest.approx(float(EXPECTED[key]), rel=1e-6, abs=1e-9)


def test_the_glued_texts_round_as_the_prose_says():
    texts = {key: str(text) for key, text in fact_check.glued(FINDINGS).items()}
    assert texts["eps_PyTorch"] == "10⁻⁵" and texts["doc_x1_3dp"] == "−1.342"
    assert texts["match_frameworks"] == "1" and texts["emb_xhat_differ"] == "3"


def test_batch_norm_leaks_the_future_and_layer_norm_does_not():
    assert FINDINGS["bn_leak"] > 0.5 and FINDINGS["ln_leak"] < 1e-12


def test_per_slot_parameters_learn_one_shared_pair():
    spread, shared = FINDINGS["slot_gamma_spread"], FINDINGS["shared_gamma"]
    assert 0 < spread < 0.2 and 0.3 < shared < 1.0
    # the slots' average pair fits as well as the least-squares pair, to within a percent
    assert FINDINGS["slot_mean_loss"] == pytest.approx(FINDINGS["shared_loss"], rel=0.01)
    assert FINDINGS["shared_loss"] <= FINDINGS["slot_mean_loss"]
    assert FINDINGS["slot_loss"] > FINDINGS["shared_loss"]


def test_the_one_pass_variance_of_the_shifted_batch_is_wrong_in_float32():
    for key in ("doc_one_pass_0", "doc_one_pass_1", "doc_one_pass_seq_0", "doc_one_pass_seq_1"):
        assert abs(FINDINGS[key] - 1.25) >= 1.0, key  # wrong by at least the answer's size
    # the same sums in sequence, float32, by hand
    row = (BATCH[0] + 1e4).astype(np.float32)
    total = squares = np.float32(0)
    for v in row:
        total, squares = total + v, squares + v * v
    assert FINDINGS["doc_one_pass_seq_0"] == float(squares / 4 - (total / 4) ** 2)


def test_the_stack_without_layer_norm_drifts_and_with_it_does_not():
    assert FINDINGS["relu_orders"] > 20 and FINDINGS["tanh_ln_growth"] > 10
    assert 0.05 < FINDINGS["shift_ln"] < FINDINGS["shift_plain"] < 0.3


def test_batch_noise_shrinks_with_the_batch():
    assert 0.1 < FINDINGS["bn_noise"] < 0.5
    assert 0 < FINDINGS["spread_64"] < FINDINGS["spread_2"] < 1.5


def test_the_verdict_counts_add_up():
    from lnlib.book.factcheck.claims import CLAIMS

    verdicts = ("n_true", "n_conditional", "n_partly", "n_false", "n_uncheckable")
    assert sum(FINDINGS[k] for k in verdicts) == FINDINGS["n_claims"] == len(CLAIMS)
    assert FINDINGS["n_documents"] + FINDINGS["n_papers"] == len(CLAIMS)


def test_the_statistics_evidence():
    assert FINDINGS["eps_e5"] == pytest.approx(np.exp(-5))
    assert FINDINGS["xhat1_e5"] == pytest.approx(-3 / np.sqrt(5 + np.exp(-5)))
    assert FINDINGS["we_fourth"] == pytest.approx(np.mean(xhat(TOKEN) ** 4))
    assert FINDINGS["cov_factor"] == pytest.approx(16 / 3) and FINDINGS["cov_n"] == 40000
    assert FINDINGS["k4_exact4"] == pytest.approx(3 * 3 / 5)
    assert FINDINGS["bound_256"] == pytest.approx(np.sqrt(255))
    # Monte Carlo estimates: near their exact or limiting values, as the prose reads them
    assert FINDINGS["k4_normal4"] == pytest.approx(1.8, abs=0.05)
    assert FINDINGS["k4_uniform"] == pytest.approx(1.8, abs=0.05)
    assert 5 < FINDINGS["k4_laplace"] < 6 and 0 < FINDINGS["k4_laplace_err"] < 0.1
    assert abs(FINDINGS["k4_laplace_one"] - 6) < 3 * FINDINGS["k4_laplace_one_err"] + 0.5
    assert 1.7 < FINDINGS["skew_exp"] < 2.1
    assert FINDINGS["unequal_z"] > 10 and FINDINGS["unequal_cov"] > -1 / 3
    assert 0.3 < FINDINGS["corr_kept"] < 0.7
