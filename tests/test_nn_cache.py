"""Incremental decoding with a key/value cache gives what the full decoder gives."""
import dataclasses

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F

from helpers import decoding_config


def tiny_model(norm_first, tie_embeddings=True, seed=3):
    return tt.nn.Transformer(decoding_config(norm_first=norm_first, tie_embeddings=tie_embeddings), rng=seed)


def source_and_target(rng):
    src = rng.integers(3, 13, size=(5, 7))
    src[1, 4:] = tt.PAD                                    # a padded source row
    tgt_in = rng.integers(3, 13, size=(5, 9))
    tgt_in[:, 0] = tt.BOS
    return src, tgt_in


# the 9 target positions fed to the cache one at a time, or in chunks of several
PIECES = pytest.mark.parametrize("pieces", [[(t, t + 1) for t in range(9)], [(0, 4), (4, 5), (5, 9)]],
                                 ids=["one at a time", "chunks"])


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("tie_embeddings", [True, False])
@PIECES
def test_decoding_in_pieces_equals_the_full_decoder(norm_first, tie_embeddings, pieces):
    model = tiny_model(norm_first, tie_embeddings)
    src, tgt_in = source_and_target(np.random.default_rng(0))
    memory, src_keep = model.encode(src)
    full = model.decode(tgt_in, memory, src_keep).data                       # (B, 9, V)
    cache = model.new_cache()
    steps = [model.decode(tgt_in[:, a:b], memory, src_keep, cache).data for a, b in pieces]
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, rtol=0, atol=1e-12)
    assert cache.length == 9


def test_a_cache_with_wrong_keys_gives_different_logits():
    """The equality above is not automatic: a step reads its history from the cache."""
    model = tiny_model(norm_first=False)
    src, tgt_in = source_and_target(np.random.default_rng(2))
    memory, src_keep = model.encode(src)
    full = model.decode(tgt_in, memory, src_keep).data
    cache = model.new_cache()
    model.decode(tgt_in[:, :1], memory, src_keep, cache)
    for layer in cache.layers:
        layer.self_attn.k = np.zeros_like(layer.self_attn.k)
    second = model.decode(tgt_in[:, 1:2], memory, src_keep, cache).data
    assert np.abs(second - full[:, 1:2]).max() > 1e-3


def test_select_keeps_the_chosen_rows():
    model = tiny_model(norm_first=True)
    src, tgt_in = source_and_target(np.random.default_rng(3))
    memory, src_keep = model.encode(src)
    cache = model.new_cache()
    model.decode(tgt_in[:, :3], memory, src_keep, cache)
    rows = np.array([4, 0, 0])
    cache.select(rows)
    step = model.decode(tgt_in[rows, 3:4], F.Tensor(memory.data[rows]),
                        src_keep[rows], cache).data
    full = model.decode(tgt_in[rows, :4], F.Tensor(memory.data[rows]), src_keep[rows]).data
    np.testing.assert_allclose(step[:, 0], full[:, 3], rtol=0, atol=1e-12)


def test_decoding_past_max_len_is_refused():
    model = tiny_model(norm_first=False)
    src, tgt_in = source_and_target(np.random.default_rng(4))
    memory, src_keep = model.encode(src)
    cache = model.new_cache()
    model.decode(np.concatenate([tgt_in, tgt_in[:, :3]], axis=1), memory, src_keep, cache)   # 12 positions
    with pytest.raises(ValueError, match="tgt_in has 13 positions but max_len is 12"):
        model.decode(tgt_in[:, :1], memory, src_keep, cache)


def test_causal_mask_with_a_start_offset():
    np.testing.assert_array_equal(tt.causal_mask(3), np.tril(np.ones((3, 3), dtype=bool)))
    np.testing.assert_array_equal(tt.causal_mask(2, start=3), [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])


def test_positional_encoding_offset_adds_the_later_rows():
    x = np.zeros((1, 2, 6))
    out = F.positional_encoding(x, offset=3).data
    np.testing.assert_allclose(out[0], tt.sinusoidal_positions(5, 6)[3:], rtol=0, atol=0)


def test_a_cache_of_another_model_is_refused():
    model = tiny_model(norm_first=False)
    gpt = tt.nn.GPT(model.config, rng=0)
    src, tgt_in = source_and_target(np.random.default_rng(5))
    memory, src_keep = model.encode(src)
    with pytest.raises(ValueError, match="Transformer: the cache does not fit this model"):
        model.decode(tgt_in[:, :1], memory, src_keep, gpt.new_cache())
    with pytest.raises(ValueError, match="GPT: the cache does not fit this model"):
        gpt.decode(tgt_in[:, :1], model.new_cache())


def decoded_in_pieces_equals_whole(gpt, pieces):
    """Decode the same ids piece by piece with a cache and whole without one; assert they agree. (ids, cache)."""
    _, ids = source_and_target(np.random.default_rng(6))
    full = gpt(ids).data                                                    # (B, 9, V)
    cache = gpt.new_cache()
    steps = [gpt.decode(ids[:, a:b], cache).data for a, b in pieces]
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, rtol=0, atol=1e-12)
    return ids, cache


@pytest.mark.parametrize("norm_first", [False, True])
@PIECES
def test_gpt_in_pieces_equals_gpt_on_the_whole_sequence(norm_first, pieces):
    config = dataclasses.replace(tiny_model(norm_first).config, positions="learned")
    gpt = tt.nn.GPT(config, rng=3)
    ids, cache = decoded_in_pieces_equals_whole(gpt, pieces)
    assert cache.length == 9
    for layer in cache.layers:
        layer.self_attn.v = np.zeros_like(layer.self_attn.v)   # a cache that forgot its values
    right = gpt(np.concatenate([ids, ids[:, :1]], axis=1)).data[:, -1]       # position 9 with its true history
    wrong = gpt.decode(ids[:, :1], cache).data[:, 0]
    assert np.abs(wrong - right).max() > 1e-3                               # the equality above is not automatic


@PIECES
def test_a_rope_gpt_in_pieces_equals_it_on_the_whole_sequence(pieces):
    """Rotary positions: each piece's queries and keys are turned from the cache's length on."""
    config = tt.TransformerConfig.llama_style(vocab_size=13, d_model=16, n_heads=4, max_len=12, dtype="float64")
    gpt = tt.nn.GPT(config, rng=3)
    ids, cache = decoded_in_pieces_equals_whole(gpt, pieces)


def test_rope_pieces_turned_from_position_0_would_differ(monkeypatch):
    """The equality above needs the offset: a cache that turned every piece from position 0 gives other logits."""
    config = tt.TransformerConfig.llama_style(vocab_size=13, d_model=16, n_heads=4, max_len=12, dtype="float64")
    gpt = tt.nn.GPT(config, rng=3)
    _, ids = source_and_target(np.random.default_rng(6))
    full = gpt(ids).data
    monkeypatch.setattr(tt.nn.KeysValues, "length", property(lambda self: 0))
    cache = gpt.new_cache()
    steps = [gpt.decode(ids[:, a:a + 1], cache).data for a in range(3)]
    assert np.abs(steps[0] - full[:, :1]).max() < 1e-12                   # the first piece is at position 0 anyway
    assert np.abs(steps[2] - full[:, 2:3]).max() > 1e-3


def test_a_rope_transformer_decodes_in_pieces_as_a_whole():
    config = decoding_config(positions="rope", norm="rms", activation="swiglu", bias=False, norm_first=True)
    model = tt.nn.Transformer(config, rng=3)
    src, tgt_in = source_and_target(np.random.default_rng(0))
    memory, src_keep = model.encode(src)
    full = model.decode(tgt_in, memory, src_keep).data
    cache = model.new_cache()
    steps = [model.decode(tgt_in[:, a:a + 1], memory, src_keep, cache).data for a in range(9)]
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, rtol=0, atol=1e-12)
