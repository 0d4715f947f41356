"""Grouped-query attention: the repeat_kv op, the attention block with fewer key/value heads, its cache, and
the switches a LLaMA needs (no embedding scale, rope's base, the norms' epsilon); gradients in float64."""
import dataclasses

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer import ops

from helpers import (analytic_gradients, assert_a_wrong_gradient_is_caught, assert_gradients_along_random_directions,
                     decoding_config, tiny_config)


def test_each_query_head_reads_the_key_value_head_of_its_group():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))            # (B, h_kv, T, d_k)
    out, _ = ops.repeat_kv_forward(x, 6)
    assert out.shape == (2, 6, 4, 5)
    for j in range(6):
        assert np.array_equal(out[:, j], x[:, j // 2])                    # heads 0, 1 share 0; 2, 3 share 1; ...


def test_the_backward_matches_finite_differences():
    rng = np.random.default_rng(1)
    for shape, n_heads in (((2, 2, 3, 4), 6), ((1, 3, 2, 5), 3), ((4, 2, 3), 4)):
        results = tt.gradcheck(lambda x: F.repeat_kv(x, n_heads), rng.standard_normal(shape), rng=rng)
        assert results[0].passed and results[0].relative_error < 1e-8


def test_a_wrong_backward_is_caught():
    def first_heads_only(dout, cache):                    # a mistake: the first h_kv heads' gradients
        h_kv, group = cache
        return (dout[..., :h_kv, :, :],)

    rng = np.random.default_rng(2)
    with pytest.raises(tt.GradcheckError):
        tt.gradcheck(lambda x: tt.tensor.apply(ops.repeat_kv_forward, first_heads_only, x, n_heads=4),
                     rng.standard_normal((2, 2, 3, 4)), rng=rng)


def test_heads_that_cannot_be_shared_out_are_one_line():
    with pytest.raises(ValueError, match="n_heads=4 query heads cannot be shared out among h_kv=3"):
        ops.repeat_kv_forward(np.zeros((1, 3, 2, 2)), 4)
    with pytest.raises(ValueError, match="n_heads=6 query heads cannot be shared out among n_kv_heads=4"):
        tt.TransformerConfig(10, n_heads=6, d_model=12, n_kv_heads=4)
    with pytest.raises(ValueError, match="rope_theta must be a positive finite number"):
        tt.TransformerConfig(10, rope_theta=float("nan"))
    with pytest.raises(ValueError, match="embedding_scale must be True or False"):
        tt.TransformerConfig(10, embedding_scale=1)


def grouped_gpt(**changes):
    """A tiny float64 LLaMA-style GPT, 4 query heads sharing 2 key/value heads, no embedding scale."""
    config = tiny_config(n_heads=4, d_model=8, n_kv_heads=2, embedding_scale=False, rope_theta=100.0,
                         norm_first=True, norm="rms", activation="swiglu", positions="rope", bias=False,
                         **changes)
    return tt.nn.GPT(config, rng=0)


def lm_loss(model):
    ids = np.array([[1, 3, 5, 2, 6], [4, 4, 0, 1, 3]])
    return F.cross_entropy(model(ids[:, :-1]), ids[:, 1:])


def test_the_grouped_block_keeps_fewer_key_value_weights():
    model = grouped_gpt()
    attention = model.layers[0].self_attn
    assert attention.W_q.W.shape == (8, 8) and attention.W_k.W.shape == (8, 4) and attention.W_v.W.shape == (8, 4)


def test_every_parameter_of_a_grouped_gpt_without_embedding_scale_gets_its_gradient():
    model = grouped_gpt()
    grads = analytic_gradients(model, lm_loss)
    assert_gradients_along_random_directions(model, lm_loss, grads)
    assert_a_wrong_gradient_is_caught(model, lm_loss, "layers.0.self_attn.W_k.W")


def test_one_key_value_head_per_query_head_is_the_default_model_bit_for_bit():
    config = tiny_config(n_heads=2)
    same = dataclasses.replace(config, n_kv_heads=2)
    ids = np.array([[1, 3, 5, 2]])
    default, spelled = tt.nn.GPT(config), tt.nn.GPT(same)
    assert config.kv_heads == 2 and config.n_kv_heads is None
    for (name, a), (_, b) in zip(default.named_parameters(), spelled.named_parameters()):
        assert np.array_equal(a.data, b.data), name
    assert np.array_equal(default(ids).data, spelled(ids).data)
    with tt.Tape() as tape:
        default(ids)
    assert "repeat_kv" not in str(tape)                     # nothing is repeated when no head is shared


def test_the_cache_keeps_the_key_value_heads_only_and_decodes_as_without_it():
    model = tt.nn.GPT(decoding_config(n_kv_heads=1, positions="rope", rope_theta=500.0, embedding_scale=False))
    prompt = np.array([[3, 4, 5], [6, 7, 8]])
    cache = model.new_cache()
    model.decode(prompt, cache)
    assert cache.layers[0].self_attn.k.shape == (2, 1, 3, 4)               # (B, h_kv, T, d_k): one head, not 4
    with_cache = tt.decode.greedy(model, prompt, 8)
    assert np.array_equal(with_cache, tt.decode.greedy(model, prompt, 8, use_cache=False))


def test_rope_theta_is_the_models():
    ids = np.array([[1, 2, 3, 4]])
    base = decoding_config(positions="rope")
    assert not np.allclose(tt.nn.GPT(base)(ids).data, tt.nn.GPT(dataclasses.replace(base, rope_theta=99.0))(ids).data)
    attention = tt.nn.GPT(dataclasses.replace(base, rope_theta=99.0)).layers[0].self_attn
    x = np.random.default_rng(0).standard_normal((1, 4, 3, 4))
    assert np.array_equal(attention.turned(tt.Tensor(x), 2).data, ops.rope_forward(x, np.arange(2, 5), 99.0)[0])


def test_no_embedding_scale_gives_the_rows_as_they_are():
    model = tt.nn.GPT(tiny_config(embedding_scale=False))
    ids = np.array([[1, 3]])
    assert np.array_equal(model.embed(ids).data, model.embed.table.data[ids])
    scaled = tt.nn.GPT(tiny_config())
    assert np.array_equal(scaled.embed(ids).data, scaled.embed.table.data[ids] * np.sqrt(8))


def test_the_norms_take_the_configs_epsilon():
    model = tt.nn.BERT(tiny_config(tt.BERTConfig, norm_eps=1e-12))
    assert model.encoder[0].norm1.eps == 1e-12


def test_a_grouped_model_is_saved_and_loaded_with_its_switches(tmp_path):
    model = grouped_gpt(max_len=8)
    path = tmp_path / "gqa.npz"
    tt.save_checkpoint(model, path)
    loaded = tt.load_checkpoint(path)
    assert loaded.config == model.config
    ids = np.array([[1, 2, 3]])
    assert np.array_equal(loaded(ids).data, model(ids).data)


@pytest.mark.torch
def test_grouped_attention_equals_torchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((2, 6, 5, 4)), rng.standard_normal((2, 2, 5, 4)), rng.standard_normal((2, 2, 5, 4))
    keep = tt.causal_mask(5)
    ours, _ = F.attention(q, F.repeat_kv(k, 6), F.repeat_kv(v, 6), keep)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(keep), enable_gqa=True)
    assert np.allclose(ours.data, theirs.numpy(), atol=1e-12)
