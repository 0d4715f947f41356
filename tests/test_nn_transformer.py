"""The whole Transformer: gradients against finite differences, masks, determinism, bad input."""
import dataclasses

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer.nn import Transformer, TransformerConfig
from helpers import (tiny_config, analytic_gradients, assert_a_wrong_gradient_is_caught,
                     assert_gradients_along_random_directions)


# src has PAD (0) at the end of its second row; tgt_out ends with EOS (2), then PAD
SRC = np.array([[3, 4, 5, 6, 4], [6, 5, 3, 0, 0]])             # (2, 5)
TGT_IN = np.array([[1, 3, 4, 5], [1, 6, 5, 3]])                # (2, 4)
TGT_OUT = np.array([[3, 4, 5, 2], [6, 5, 2, 0]])               # (2, 4)


def loss_of(model):
    return F.cross_entropy(model(SRC, TGT_IN), TGT_OUT, ignore_index=tt.PAD, label_smoothing=0.1)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("tie_embeddings", [True, False], ids=["tied", "untied"])
def test_whole_model_gradient_along_random_directions(positions, norm_first, tie_embeddings):
    config = tiny_config(norm_first=norm_first, tie_embeddings=tie_embeddings, positions=positions)
    model = Transformer(config, rng=0)
    grads = analytic_gradients(model, loss_of)
    assert all(g is not None for g in grads.values()), "every parameter gets a gradient"
    assert_gradients_along_random_directions(model, loss_of, grads)


def test_directional_check_catches_a_wrong_gradient():
    model = Transformer(tiny_config(), rng=0)
    assert_a_wrong_gradient_is_caught(model, loss_of, "decoder.1.cross_attn.W_v.W")


@pytest.mark.parametrize("name", ["encoder.0.self_attn.W_q.W", "decoder.1.norm2.gamma", "embed.table"])
def test_gradient_of_single_parameters_element_by_element(name):
    model = Transformer(tiny_config(), rng=0)
    grads = analytic_gradients(model, loss_of)
    p = dict(model.named_parameters())[name]
    numeric = tt.numerical_gradient(lambda _: loss_of(model).data, p.data, np.array(1.0))
    np.testing.assert_allclose(grads[name], numeric, atol=1e-7, rtol=1e-5)


def test_decoder_is_causal():
    model = Transformer(tiny_config(), rng=0)
    logits = model(SRC, TGT_IN).data                                  # (2, 4, V)
    future_changed = TGT_IN.copy()
    future_changed[:, 2:] = [[6, 6], [4, 4]]
    changed = model(SRC, future_changed).data
    np.testing.assert_array_equal(changed[:, :2], logits[:, :2])      # positions 0, 1 cannot see 2, 3
    assert not np.allclose(changed[:, 2:], logits[:, 2:])             # later positions do see them


def test_extra_source_padding_changes_nothing():
    model = Transformer(tiny_config(), rng=0)
    logits = model(SRC, TGT_IN).data
    padded = np.concatenate([SRC, np.zeros((2, 1), dtype=SRC.dtype)], axis=1)   # (2, 6), one more PAD
    np.testing.assert_allclose(model(padded, TGT_IN).data, logits, rtol=1e-12, atol=1e-12)
    real_token_added = padded.copy()
    real_token_added[1, 3] = 4                                        # a symbol instead of a PAD: it counts
    assert not np.allclose(model(real_token_added, TGT_IN).data[1], logits[1])


def test_same_seed_same_model_other_seed_differs():
    a, b, c = (Transformer(tiny_config(), rng=seed) for seed in (0, 0, 1))
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(pa.data, pb.data, err_msg=name)
    np.testing.assert_array_equal(a(SRC, TGT_IN).data, b(SRC, TGT_IN).data)
    assert not np.allclose(a(SRC, TGT_IN).data, c(SRC, TGT_IN).data)


def test_float32_by_default_and_logits_shape():
    assert tt.TransformerConfig(vocab_size=7).dtype == "float32"
    model = Transformer(tiny_config(dtype="float32"), rng=0)
    logits = model(SRC, TGT_IN)
    assert logits.shape == (2, 4, 7) and logits.dtype == np.float32
    assert all(p.dtype == np.float32 for p in model.parameters())


def test_bad_input_gives_clear_errors():
    model = Transformer(tiny_config(), rng=0)
    with pytest.raises(ValueError, match="token id 7 is outside"):
        model(np.array([[3, 7]]), TGT_IN[:1])
    with pytest.raises(ValueError, match="token id -1 is outside"):
        model(SRC, np.array([[1, -1]]))
    with pytest.raises(TypeError, match="integer"):
        model(SRC.astype(np.float64), TGT_IN)
    with pytest.raises(ValueError, match="max_len is 6"):
        model(np.full((1, 7), 3), TGT_IN[:1])
    with pytest.raises(ValueError, match="max_len is 6"):
        model(SRC, np.full((2, 7), 3))
    with pytest.raises(ValueError, match=r"must be \(B, T\)"):
        model(SRC[0], TGT_IN)
    with pytest.raises(ValueError, match="not divisible by n_heads=3"):
        tiny_config(d_model=8, n_heads=3)


def expected_parameter_count(c):
    d, V, f = c.d_model, c.vocab_size, c.d_ff
    attention = 4 * (d * d + d)                       # W_q, W_k, W_v, W_o with biases
    feed_forward = d * f + f + f * d + d
    norm = 2 * d                                      # gamma, beta
    encoder_layer = attention + feed_forward + 2 * norm
    decoder_layer = 2 * attention + feed_forward + 3 * norm
    total = V * d + c.n_layers * (encoder_layer + decoder_layer)
    total += 2 * norm if c.norm_first else 0          # the final norms of pre-LN
    total += 0 if c.tie_embeddings else d * V + V     # a separate output layer
    return total


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("tie_embeddings", [True, False])
def test_parameter_count_and_names(norm_first, tie_embeddings):
    config = TransformerConfig(vocab_size=13, norm_first=norm_first, tie_embeddings=tie_embeddings)
    model = Transformer(config, rng=0)
    named = list(model.named_parameters())
    assert sum(p.data.size for _, p in named) == expected_parameter_count(config)
    names = [name for name, _ in named]
    assert len(set(names)) == len(names) == len(model.parameters())
    assert names[0] == "embed.table"
    assert "encoder.1.self_attn.W_q.W" in names and "decoder.0.cross_attn.W_o.b" in names
    assert ("output.W" in names) == (not tie_embeddings)
    assert ("encoder_norm.gamma" in names) == norm_first


def test_classroom_model_size():
    assert expected_parameter_count(TransformerConfig(vocab_size=13)) == 168_256


def test_train_and_eval_mode_toggle_dropout():
    model = Transformer(tiny_config(dropout=0.5), rng=0)
    no_dropout = Transformer(tiny_config(dropout=0.0), rng=0)         # same seed: the same weights
    assert model.training
    first, second = model(SRC, TGT_IN).data, model(SRC, TGT_IN).data
    assert not np.allclose(first, second)                            # a fresh dropout mask each call
    model.eval()
    assert not any(m.training for m in model.modules())
    np.testing.assert_array_equal(model(SRC, TGT_IN).data, no_dropout(SRC, TGT_IN).data)
    model.train()
    assert all(m.training for m in model.modules())
    assert not np.allclose(model(SRC, TGT_IN).data, no_dropout(SRC, TGT_IN).data)


@pytest.mark.parametrize("model_class", [tt.nn.Transformer, tt.nn.GPT, tt.nn.BERT])
def test_a_model_built_without_a_seed_is_seed_0_the_same_weights_every_time(model_class):
    config = tiny_config(model_class.config_class)
    first, second, seeded = model_class(config), model_class(config), model_class(config, rng=0)
    for a, b, c in zip(first.parameters(), second.parameters(), seeded.parameters()):
        np.testing.assert_array_equal(a.data, b.data)
        np.testing.assert_array_equal(a.data, c.data)
    assert not np.array_equal(first.embed.table.data, model_class(config, rng=1).embed.table.data)


@pytest.mark.parametrize("model_class, wrong", [(tt.nn.Transformer, tt.VisionConfig), (tt.nn.GPT, tt.VisionConfig),
                                                (tt.nn.BERT, tt.TransformerConfig),
                                                (tt.nn.VisionTransformer, tt.TransformerConfig)])
def test_each_model_takes_its_own_family_config_and_refuses_another_in_one_line(model_class, wrong):
    family = model_class.config_class.__name__
    extra = dict(patch_pixels=5, n_classes=3) if wrong is tt.VisionConfig else {}
    with pytest.raises(TypeError, match=rf"^{model_class.__name__}: config must be a {family}, got {wrong.__name__}$"):
        model_class(tiny_config(wrong, **extra))


def test_the_families_share_the_block_fields_and_only_their_own_extras():
    shared = {f.name for f in dataclasses.fields(tt.ModelConfig)}
    assert {f.name for f in dataclasses.fields(tt.TransformerConfig)} - shared == {"vocab_size", "tie_embeddings",
                                                                                    "pad_id", "embedding_norm"}
    assert {f.name for f in dataclasses.fields(tt.BERTConfig)} - shared == {"vocab_size", "tie_embeddings",
                                                                             "pad_id", "embedding_norm", "n_classes"}
    assert {f.name for f in dataclasses.fields(tt.VisionConfig)} - shared == {"patch_pixels", "n_classes"}
    assert tt.TransformerConfig(11).vocab_size == 11                  # the vocabulary: the one positional field
