"""Weight decay on γ and β or not (lnlib.book.models.decay, ``make results-decay``): the decay
itself, the stored runs against today's code, and what chapter "Scale γ and shift β" says about
them."""

import numpy as np

from lnlib.book.models.decay import DECAY_SETTINGS, decay_findings, decay_run, load_decay, per_seed
from lnlib.book.models.language import (
    NORM_PARAMETERS,
    char_corpus,
    decay_weights,
    init_model,
    train_model,
)

RECORD = load_decay()


def test_decay_weights_scales_matrices_and_norms_only_when_asked():
    for norms in (False, True):
        model = [{"W1": np.full(3, 2.0), "attn_in_gamma": np.ones(3),
                  "ffn_in_beta": np.full(3, 0.5), "final_alpha": np.array(0.5)}]  # fmt: skip
        decay_weights(model, 0.1, norms)
        np.testing.assert_allclose(model[0]["W1"], 1.8)
        np.testing.assert_allclose(model[0]["attn_in_gamma"], 0.9 if norms else 1.0)
        np.testing.assert_allclose(model[0]["ffn_in_beta"], 0.45 if norms else 0.5)
        assert model[0]["final_alpha"] == 0.5
    assert NORM_PARAMETERS == ("_gamma", "_beta")


def test_one_step_differs_only_by_the_decay_of_gamma_and_beta():
    # the gradients of step 1 are taken before any decay, so after it the two arms differ by lr *
    # decay * γ0 in γ (γ0 = 1), by lr * decay * β0 = 0 in β, and not at all elsewhere
    common = {"lr": 1e-2, "steps": 1, "depth": 2, "seed": 0, "weight_decay": 0.1}
    on = train_model("pre", decay_norms=True, **common).model
    off = train_model("pre", decay_norms=False, **common).model
    for w_on, w_off in zip(on, off):
        for key in w_on:
            expected = 1e-2 * 0.1 if key.endswith("_gamma") else 0.0
            np.testing.assert_allclose(w_off[key] - w_on[key], expected, atol=1e-15, err_msg=key)
    # and against no decay at all, every weight matrix differs by lr * decay times its initial value
    plain = train_model("pre", lr=1e-2, steps=1, depth=2, seed=0).model
    initial = init_model("pre", 2, 32, len(char_corpus()[1]), 32, seed=0)
    np.testing.assert_allclose(plain[0]["W1"] - off[0]["W1"], 1e-3 * initial[0]["W1"], atol=1e-15)


def test_stored_record_was_made_by_todays_settings_and_corpus():
    assert RECORD["settings"] == {**DECAY_SETTINGS, "seeds": list(DECAY_SETTINGS["seeds"])}
    assert RECORD["corpus_sha256"] == char_corpus()[2]
    provenance = RECORD["provenance"]
    assert (
        provenance["command"] == "make results-decay" and provenance["cpu"] and provenance["date"]
    )
    assert provenance["cpu_seconds"] < 120  # the brief's budget: a small run
    assert all(run["final"] is not None for runs in RECORD["runs"].values() for run in runs)


def test_a_stored_seed_trains_again_to_where_it_is_stored():
    # another CPU's rounding moves a chaotic run: compare at the precision the chapter states (the
    # seeds' spread)
    common = {k: v for k, v in DECAY_SETTINGS.items() if k != "seeds"}
    for arm, on in (("norms decayed", True), ("norms not decayed", False)):
        again, stored = decay_run(decay_norms=on, seed=0, **common), RECORD["runs"][arm][0]
        spread = {k: per_seed(RECORD, k)[arm].std(ddof=1) for k in ("final", "gamma_mean_abs")}
        for key, sd in spread.items():
            assert abs(again[key] - stored[key]) <= 2 * sd, (arm, key)


def test_what_the_chapter_says_holds_in_the_stored_runs():
    found = decay_findings(RECORD)
    gamma, beta, loss = (per_seed(RECORD, k) for k in ("gamma_mean_abs", "beta_mean_abs", "final"))
    on, off = "norms decayed", "norms not decayed"
    # γ is smaller with decay on every seed, and the two arms' spreads do not overlap
    assert (
        str(found["wd_gamma_lower"]) == str(len(RECORD["settings"]["seeds"]))
        and gamma[on].max() < gamma[off].min()
    )
    assert beta[on].max() < beta[off].min()
    assert gamma[on].mean() < 1 and gamma[off].mean() < 1  # both below their start, γ = 1
    # the loss difference is within the spread over seeds
    diff = loss[on] - loss[off]
    assert found["wd_loss_within"] == "within" and abs(diff.mean()) < diff.std(ddof=1)
    # the setup the chapter describes: the runs used train_model's default width, 32
    assert "width" not in RECORD["settings"] and str(found["wd_width"]) == "32"
    assert (str(found["wd_lr"]), str(found["wd_warmup"])) == ("0.01", "50")
    # the figure's claim: every norm's mean γ, seed by seed, is lower with the decay
    norm_means = per_seed(RECORD, "gamma_norm_means")
    assert norm_means[on].shape == (len(RECORD["settings"]["seeds"]), 2 * 6 + 1)
    assert (norm_means[on] < norm_means[off]).all()


def test_each_norm_feeds_a_matrix_product_so_w_can_absorb_gamma():
    # chapter 07's algebra: in the Pre-LN model a norm's output enters x @ W directly, so scaling γ
    # by c and the rows of W by 1 / c (β by c as well) leaves the model's output unchanged
    from lnlib.book.models.language import model_forward

    model = init_model("pre", 2, 32, len(char_corpus()[1]), 32, seed=0)
    inputs = np.random.default_rng(0).integers(0, len(char_corpus()[1]), size=(2, 8))
    before = model_forward(inputs, model, "pre")[0]
    scale = np.linspace(0.3, 0.9, 32)
    for w in model[:-1]:
        for sub, matrices in (("attn", ("Wq", "Wk", "Wv")), ("ffn", ("W1",))):
            w[f"{sub}_in_gamma"] = w[f"{sub}_in_gamma"] * scale
            w[f"{sub}_in_beta"] = w[f"{sub}_in_beta"] * scale
            for name in matrices:
                w[name] = w[name] / scale[:, None]
    model[-1]["final_gamma"] = model[-1]["final_gamma"] * scale
    model[-1]["final_beta"] = model[-1]["final_beta"] * scale
    model[-1]["head"] = model[-1]["head"] / scale[:, None]
    np.testing.assert_allclose(
        model_forward(inputs, model, "pre")[0], before, rtol=1e-9, atol=1e-12
    )
