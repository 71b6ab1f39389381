"""lnlib.book.models.language and the pieces it added to the transformer: learned norms, causal
attention, the corpus.

Every gradient is held to central differences (chapter "Gradients through LayerNorm"'s standard);
the attention's causality, the norms' special cases and the corpus's provenance are checked
directly.
"""

import hashlib
import json
import sys

import numpy as np
import pytest

from lnlib import layer_norm
from lnlib.backward import numerical_gradient, relative_error
from lnlib.book.models.dyt import dyt
from lnlib.book.models.language import (
    CORPUS,
    TRAINED_PLACEMENTS,
    char_corpus,
    cross_entropy,
    init_model,
    model_backward,
    model_forward,
    norm_inputs,
    placement_setup,
    stdlib_docstrings,
    text_batch,
    train_model,
)
from lnlib.book.models.training import adam_moments, adam_update
from lnlib.book.models.transformer import (
    attention_backward,
    attention_forward,
    ffn_forward,
    init_layer,
    norm_backward,
    norm_forward,
)


def perturbed_model(name, seed=1, depth=4, width=6, vocab=7, tokens=5):
    """A small model whose γ, β (and DyT's α) are moved off their initial 1, 0 (and 0.5), so their
    gradients are general."""
    rng = np.random.default_rng(seed)
    model = init_model(name, depth, width, vocab, tokens, seed=seed)
    for w in model:
        for k in w:
            if k.endswith(("gamma", "beta", "alpha")):
                w[k] = w[k] + rng.normal(0.0, 0.3, size=w[k].shape)
    return model


@pytest.mark.parametrize("name", TRAINED_PLACEMENTS)
def test_model_backward_matches_finite_differences_for_every_parameter(name):
    """Depth 4 puts one post-norm layer in Mix-LN's stack (⌊4/4⌋), so every wiring is exercised."""
    rng = np.random.default_rng(0)
    inputs, targets = rng.integers(0, 7, size=(2, 5)), rng.integers(0, 7, size=(2, 5))
    model = perturbed_model(name)
    logits, cache = model_forward(inputs, model, name)
    grads = model_backward(cross_entropy(logits, targets)[1], cache, model, name)
    for i, w in enumerate(model):
        assert set(grads[i]) == set(w)
        for key, value in w.items():

            def loss(v, i=i, key=key, shape=value.shape):
                changed = [dict(layer) for layer in model]
                changed[i][key] = v.reshape(shape)
                return np.array(
                    [cross_entropy(model_forward(inputs, changed, name)[0], targets)[0]]
                )

            numeric = numerical_gradient(loss, np.ravel(value).astype(float), np.array([1.0]))
            assert relative_error(np.ravel(grads[i][key]), numeric) < 1e-6, (name, i, key)


def test_learned_norm_is_gamma_times_layer_norm_plus_beta_and_dyt_is_tanh():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3, 5))
    g, b = rng.normal(size=5), rng.normal(size=5)
    np.testing.assert_allclose(
        norm_forward(x, {"k_gamma": g, "k_beta": b}, "k")[0], g * layer_norm(x) + b, atol=1e-12
    )
    params = {"k_gamma": g, "k_beta": b, "k_alpha": np.array(0.7)}
    np.testing.assert_allclose(norm_forward(x, params, "k")[0], g * np.tanh(0.7 * x) + b)
    np.testing.assert_allclose(norm_forward(x)[0], layer_norm(x), atol=1e-12)  # no parameters


@pytest.mark.parametrize("dyt_norm", [False, True])
def test_norm_backward_matches_finite_differences(dyt_norm):
    rng = np.random.default_rng(4)
    x, dy = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 3, 5))
    params = {"k_gamma": rng.normal(size=5), "k_beta": rng.normal(size=5)}
    if dyt_norm:
        params["k_alpha"] = np.array(0.6)
    dx, grads = norm_backward(dy, norm_forward(x, params, "k")[1], params, "k")
    assert (
        relative_error(dx, numerical_gradient(lambda v: norm_forward(v, params, "k")[0], x, dy))
        < 1e-7
    )
    for key, value in params.items():

        def f(v, key=key, shape=value.shape):
            return norm_forward(x, {**params, key: v.reshape(shape)}, "k")[0]

        numeric = numerical_gradient(f, np.atleast_1d(value).astype(float), dy)
        assert relative_error(np.ravel(grads[key]), np.ravel(numeric)) < 1e-7, key


def test_dyt_norm_agrees_with_the_dyt_module():
    x = np.random.default_rng(5).normal(size=(3, 4))
    params = {"k_gamma": np.full(4, 2.0), "k_beta": np.full(4, -1.0), "k_alpha": np.array(0.5)}
    np.testing.assert_allclose(
        norm_forward(x, params, "k")[0], dyt(x, 0.5, params["k_gamma"], params["k_beta"])
    )


def test_causal_attention_ignores_later_tokens_and_its_backward_matches_finite_differences():
    rng = np.random.default_rng(6)
    w = init_layer(rng, 4)
    x, dy = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 4))
    later = x.copy()
    later[:, 3:] = rng.normal(size=(2, 2, 4))
    out, cache = attention_forward(x, w, causal=True)
    np.testing.assert_array_equal(out[:, :3], attention_forward(later, w, causal=True)[0][:, :3])
    assert not np.allclose(
        out[:, :3], attention_forward(later, w)[0][:, :3]
    )  # not causal: they leak
    dx, grads = attention_backward(dy, cache, w)
    assert (
        relative_error(
            dx, numerical_gradient(lambda v: attention_forward(v, w, causal=True)[0], x, dy)
        )
        < 1e-6
    )
    for name in ("Wq", "Wk", "Wv", "Wo"):
        numeric = numerical_gradient(
            lambda m: attention_forward(x, {**w, name: m}, causal=True)[0], w[name], dy
        )
        assert relative_error(grads[name], numeric) < 1e-6, name


@pytest.mark.parametrize("name", TRAINED_PLACEMENTS)
def test_the_model_predicts_each_character_from_the_ones_before_it_only(name):
    rng = np.random.default_rng(7)
    model = init_model(name, 2, 8, 10, 6, seed=2)
    inputs = rng.integers(0, 10, size=(1, 6))
    changed = inputs.copy()
    changed[0, 4:] = (inputs[0, 4:] + 1) % 10
    a, b = model_forward(inputs, model, name)[0], model_forward(changed, model, name)[0]
    np.testing.assert_array_equal(a[:, :4], b[:, :4])
    assert not np.allclose(a[:, 4:], b[:, 4:])


def test_cross_entropy_by_hand():
    """Two equal logits over two characters: ln 2 per character; the gradient is p minus the one-hot
    target, over the count."""
    loss, d = cross_entropy(np.zeros((1, 2, 2)), np.array([[0, 1]]))
    assert loss == pytest.approx(np.log(2.0))
    np.testing.assert_allclose(d, [[[-0.25, 0.25], [0.25, -0.25]]])


def test_each_placement_has_the_norms_its_wiring_reads():
    assert placement_setup("pre_qk") == ("pre", True, False, "layer") and placement_setup("dyt")[2]
    rms = init_model("pre_rms", 2, 4, 5, 3)  # today's RMSNorm: a learned γ and no β
    assert "attn_in_gamma" in rms[0] and "final_gamma" in rms[-1]
    assert not any(k.endswith("beta") for layer in rms for k in layer)
    post, pre = init_model("post", 2, 4, 5, 3), init_model("pre", 2, 4, 5, 3)
    assert (
        "attn_out_gamma" in post[0]
        and "attn_in_gamma" not in post[0]
        and "final_gamma" not in post[-1]
    )
    assert "attn_in_gamma" in pre[0] and "final_gamma" in pre[-1]
    assert "ffn_in_alpha" in init_model("dyt", 2, 4, 5, 3)[1]
    mix = init_model("mixln", 4, 4, 5, 3)
    assert (
        "attn_out_gamma" in mix[0] and "attn_in_gamma" in mix[1]
    )  # ⌊4/4⌋ = 1 post layer at the bottom
    with pytest.raises(ValueError, match="placement must be one of"):
        placement_setup("olmo")


def test_the_committed_corpus_matches_its_hash_and_the_stdlib_it_came_from():
    record = json.loads(CORPUS.read_text())
    assert hashlib.sha256(record["text"].encode()).hexdigest() == record["sha256"]
    assert "Python Software Foundation" in record["licence"]
    ids, alphabet, digest = char_corpus()
    assert (
        digest == record["sha256"]
        and "".join(alphabet[i] for i in ids[:200]) == record["text"][:200]
    )
    if ".".join(map(str, sys.version_info[:3])) == record["python"]:
        assert stdlib_docstrings(record["modules"]) == record["text"]


def test_batches_predict_the_next_character_and_keep_the_held_out_tenth_apart():
    ids = np.arange(1000)
    x, y = text_batch(np.random.default_rng(0), ids, 50, 8)
    np.testing.assert_array_equal(y[:, :-1], x[:, 1:])
    np.testing.assert_array_equal(y, x + 1)
    assert y.max() < 900
    held = text_batch(np.random.default_rng(0), ids, 50, 8, held_out=True)[0]
    assert held.min() >= 900


def test_adam_update_moves_a_parameter_by_the_rate_on_its_first_step():
    """Adam's first bias-corrected step is rate · g / (|g| + ε): the rate in the sign of the
    gradient."""
    w = [{"a": np.array([1.0, -2.0])}]
    adam_update(w, [{"a": np.array([3.0, -0.5])}], adam_moments(w), 1, 0.1)
    np.testing.assert_allclose(w[0]["a"], [0.9, -1.9])


def test_a_short_run_learns_the_text_and_is_reproducible():
    a = train_model("pre", lr=1e-2, warmup=5, steps=40, depth=1, width=16, tokens=16, batch=8)
    b = train_model("pre", lr=1e-2, warmup=5, steps=40, depth=1, width=16, tokens=16, batch=8)
    vocab = len(char_corpus()[1])
    assert a.losses[0] == pytest.approx(np.log(vocab), rel=0.15)
    assert a.final < 0.8 * np.log(vocab) and not a.diverged
    np.testing.assert_array_equal(a.losses, b.losses)


def test_a_run_whose_loss_stops_being_finite_is_marked_diverged():
    run = train_model("post", lr=1e6, steps=30, depth=1, width=8, tokens=8, batch=4)
    assert run.diverged


def test_norm_inputs_are_the_stream_each_pre_norm_reads():
    model = init_model("pre", 2, 8, 10, 6, seed=3)
    inputs = np.random.default_rng(8).integers(0, 10, size=(2, 6))
    seen = norm_inputs(inputs, model, "pre")
    assert [n for n, _ in seen] == ["L1 attn", "L1 ffn", "L2 attn", "L2 ffn", "final"]
    top = model[-1]
    np.testing.assert_allclose(seen[0][1], top["embed"][inputs] + top["pos"][:6])
    # the stream the FFN's norm reads, plus the FFN of its normalization, is the next layer's input
    middle, layer = seen[1][1], model[0]
    ffn = ffn_forward(norm_forward(middle, layer, "ffn_in")[0], layer)[0]
    np.testing.assert_allclose(middle + ffn, seen[2][1], atol=1e-12)
    # the final norm's input, normalized with the model's final γ and β, gives the model's logits
    logits = norm_forward(seen[-1][1], top, "final")[0] @ top["head"]
    np.testing.assert_allclose(logits, model_forward(inputs, model, "pre")[0], atol=1e-12)
    with pytest.raises(ValueError, match="Pre-LN-style"):
        norm_inputs(inputs, init_model("post", 2, 8, 10, 6), "post")
