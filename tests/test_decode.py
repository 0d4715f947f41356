"""Decoding: greedy, sampling and beam search, on a model trained in the test and on a made-up model."""
import dataclasses

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import decode
from tinytransformer.tasks.sequences import make_batch
from tinytransformer.vocabulary import BOS, EOS, PAD
from tinytransformer.nn import KVCache, TransformerConfig
from tinytransformer.tensor import Tensor
from tinytransformer.tasks import exact_match
from tinytransformer.train import train

from helpers import decoding_config

SEQ_LEN, N_SYMBOLS = 4, 4


@pytest.fixture(scope="module")
def copier():
    """A one-layer model trained for 400 steps (a few seconds) on copying 1 to 4 of 4 symbols.

    Over training seeds 0 to 24 its greedy exact match on held_out was 0.98 to 1.0
    (seed 0: 1.0); 250 steps at half the learning rate gave 0.90 to 1.0, too close to a 0.9 bar.
    """
    config = TransformerConfig(vocab_size=tt.tasks.sequences.vocab_size_for(N_SYMBOLS), d_model=16, n_heads=2, n_layers=1,
                               d_ff=32, max_len=SEQ_LEN + 1, dropout=0.0)
    return train(config, "copy", seq_len=SEQ_LEN, n_symbols=N_SYMBOLS, batch_size=32, steps=400,
                 lr_scale=1.0, warmup=100, variable_length=True, eval_every=0, n_held_out=100,
                 target_accuracy=None, progress=False, seed=0).model


@pytest.fixture(scope="module")
def held_out():
    return make_batch("copy", 100, SEQ_LEN, N_SYMBOLS, rng=12345, variable_length=True)


def test_greedy_copies(copier, held_out):
    ids = decode.greedy(copier, held_out.src, max_len=SEQ_LEN + 1)
    assert ids.shape == (100, SEQ_LEN + 1)
    # the bar leaves room for 5 wrong rows where the worst of 25 training seeds had 2;
    # an untrained model scores 0
    assert exact_match(ids, held_out.tgt_out) >= 0.95


def check_finished_rows(ids):
    """After the first EOS of a row comes only PAD."""
    for row in ids:
        eos = np.flatnonzero(row == EOS)
        if len(eos):
            assert np.all(row[eos[0] + 1:] == PAD), row


def test_greedy_stops_when_every_row_is_finished(copier, held_out):
    ids = decode.greedy(copier, held_out.src, max_len=SEQ_LEN + 1)
    check_finished_rows(ids)
    short = held_out.src[:, 2] == PAD                                      # rows of 1 or 2 symbols
    assert short.sum() > 20
    ids = decode.greedy(copier, held_out.src[short][:, :2], max_len=SEQ_LEN + 1)
    assert ids.shape[1] == 3 and np.all((ids == EOS).sum(axis=1) == 1)     # stopped after the last EOS


def test_decoding_keeps_the_models_mode_and_records_nothing(copier, held_out):
    assert copier.training                          # decoding switches to eval mode and back
    decode.greedy(copier, held_out.src[:2], max_len=3)
    assert copier.training
    with tt.Tape() as tape, pytest.raises(RuntimeError, match="inside a `with Tape"):
        decode.greedy(copier, held_out.src[:2], max_len=3)
    assert len(tape) == 0


def test_bad_arguments(copier, held_out):
    with pytest.raises(ValueError, match=r"greedy: max_len must be between 1 and 5 \(the model's max_len 5"):
        decode.greedy(copier, held_out.src, max_len=6)
    with pytest.raises(ValueError, match="temperature"):
        decode.sample(copier, held_out.src, 5, rng=0, temperature=0.0)
    with pytest.raises(ValueError, match="top_k"):
        decode.sample(copier, held_out.src, 5, rng=0, top_k=0)
    with pytest.raises(ValueError, match="beam_width"):
        decode.beam_search(copier, held_out.src, 5, beam_width=0)


def test_sampling_with_a_seed_is_reproducible(copier, held_out):
    a = decode.sample(copier, held_out.src, 5, rng=7, temperature=3.0)
    b = decode.sample(copier, held_out.src, 5, rng=np.random.default_rng(7), temperature=3.0)
    c = decode.sample(copier, held_out.src, 5, rng=8, temperature=3.0)
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)
    check_finished_rows(a)


def test_sampling_cold_or_top_1_is_greedy(copier, held_out):
    greedy = decode.greedy(copier, held_out.src, 5)
    np.testing.assert_array_equal(decode.sample(copier, held_out.src, 5, rng=0, temperature=1e-4), greedy)
    np.testing.assert_array_equal(decode.sample(copier, held_out.src, 5, rng=0, temperature=50.0, top_k=1),
                                  greedy)


def test_top_k_samples_only_among_the_k_most_likely():
    # from BOS the two most likely are A and B; hot sampling without top_k draws every token a row
    # may continue with (never PAD or BOS)
    src = np.zeros((500, 1), dtype=np.int64)
    assert set(np.unique(decode.sample(MadeUpModel(), src, 1, rng=0, temperature=100.0))) == {EOS, A, B}
    assert set(np.unique(decode.sample(MadeUpModel(), src, 1, rng=0, temperature=100.0, top_k=2))) == {A, B}


def test_beam_width_1_is_greedy(copier, held_out):
    np.testing.assert_array_equal(decode.beam_search(copier, held_out.src, 5, beam_width=1),
                                  decode.greedy(copier, held_out.src, 5))


def test_beam_search_returns_eos_terminated_sequences(copier, held_out):
    ids = decode.beam_search(copier, held_out.src, 5, beam_width=3)
    assert np.all((ids == EOS).sum(axis=1) == 1)
    check_finished_rows(ids)
    assert exact_match(ids, held_out.tgt_out) >= 0.95


# A made-up model whose next token depends only on the last one, so the most
# likely sequence is known: from BOS, A has p = 0.55 and B 0.45; after A
# everything is unsure (EOS 0.3, A 0.35, B 0.35); after B, EOS has p = 0.95.
# Greedy takes A and then wanders; the best whole sequence is B EOS (0.43).
A, B = 3, 4


class MadeUpModel:
    config = TransformerConfig(vocab_size=5, d_model=2, n_heads=1, max_len=8)

    def __init__(self):
        p = np.full((5, 5), 1e-6)                   # p[last token, next token]
        p[BOS, [A, B]] = 0.55, 0.45
        p[A, [EOS, A, B]] = 0.3, 0.35, 0.35
        p[B, [EOS, A, B]] = 0.95, 0.025, 0.025
        self.table = np.log(p / p.sum(axis=1, keepdims=True))
        self.training = False

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def encode(self, src_ids):
        return Tensor(np.zeros((len(src_ids), 1, 2))), np.ones((len(src_ids), 1, 1), dtype=bool)

    def new_cache(self):
        return None                                 # the last token is all it needs: nothing to keep

    def decode(self, prefix, memory, src_keep, cache=None):
        return Tensor(self.table[prefix])           # (N, t, V) logits


def test_beam_search_finds_the_more_likely_sequence_that_greedy_misses():
    src = np.zeros((2, 1), dtype=np.int64)
    greedy = decode.greedy(MadeUpModel(), src, max_len=4)
    np.testing.assert_array_equal(greedy[0], [A, A, A, A])
    beam = decode.beam_search(MadeUpModel(), src, max_len=4, beam_width=2, length_penalty=0.0)
    np.testing.assert_array_equal(beam, [[B, EOS], [B, EOS]])


class PrefersPadModel(MadeUpModel):
    """After BOS the likeliest next token is A, then PAD (which would end a row early, before its EOS), then B, EOS."""

    def __init__(self):
        super().__init__()
        p = np.full((5, 5), 1e-6)
        p[BOS, A] = 1.0
        p[A, [PAD, BOS, B]] = 0.5, 0.3, 0.2
        p[B, EOS] = 1.0
        self.table = np.log(p / p.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("search", ["greedy", "beam_search", "sample"])
def test_no_decoder_emits_pad_or_bos_before_eos(search):
    """PAD and BOS are never chosen: every row is tokens, EOS, then PAD; beam search keeps the EOS."""
    src = np.zeros((3, 1), dtype=np.int64)
    options = dict(rng=0, temperature=1.0) if search == "sample" else {}
    ids = getattr(decode, search)(PrefersPadModel(), src, max_len=5, **options)
    np.testing.assert_array_equal(ids, [[A, B, EOS]] * 3)


# The key/value cache: decoding one token per step gives what re-running the
# whole prefix gives. Float64 models, so the logits agree to ~1e-12.

def float64_copy(model):
    """The same weights in a float64 model."""
    config = dataclasses.replace(model.config, dtype="float64")
    copy = tt.nn.Transformer(config, rng=0)
    for mine, theirs in zip(copy.parameters(), model.parameters()):
        mine.data[...] = theirs.data
    return copy


def untrained(norm_first):
    """Random weights, vocabulary 13, max_len 12: long sequences, rarely EOS, beams re-ranked often."""
    return tt.nn.Transformer(decoding_config(norm_first=norm_first), rng=5)


def untrained_source():
    src = np.random.default_rng(6).integers(3, 13, size=(6, 7))
    src[2, 3:] = PAD                                                       # a padded source row
    return src


@pytest.fixture(scope="module", params=["copier", "untrained post-LN", "untrained pre-LN"])
def model_and_source(request, copier, held_out):
    if request.param == "copier":
        return float64_copy(copier), held_out.src, SEQ_LEN + 1
    return untrained(norm_first=request.param.endswith("pre-LN")), untrained_source(), 12


def test_cached_next_token_logits_equal_the_full_decoder_at_every_step(model_and_source):
    model, src, max_len = model_and_source
    prefix = np.concatenate([np.full((len(src), 1), BOS), decode.greedy(model, src, max_len)], axis=1)
    memory, src_keep = model.encode(src)

    def decoder(ids, cache):
        return model.decode(ids, memory, src_keep, cache)

    cache = model.new_cache()
    for t in range(1, prefix.shape[1]):                                    # the last token is never read
        cached = decode.next_token_logits(decoder, prefix[:, :t], cache)   # (B, V)
        full = decode.next_token_logits(decoder, prefix[:, :t])
        np.testing.assert_allclose(cached, full, rtol=0, atol=1e-12)
        assert cache.length == t


def test_cached_greedy_sample_and_beam_search_equal_uncached(model_and_source):
    model, src, max_len = model_and_source
    for decoder in (lambda use_cache: decode.greedy(model, src, max_len, use_cache=use_cache),
                    lambda use_cache: decode.sample(model, src, max_len, rng=3, temperature=2.0,
                                                    use_cache=use_cache),
                    lambda use_cache: decode.beam_search(model, src, max_len, beam_width=3,
                                                         use_cache=use_cache)):
        np.testing.assert_array_equal(decoder(use_cache=True), decoder(use_cache=False))


def test_cached_beam_width_1_is_greedy(model_and_source):
    model, src, max_len = model_and_source
    np.testing.assert_array_equal(decode.beam_search(model, src, max_len, beam_width=1),
                                  decode.greedy(model, src, max_len))


def test_beam_search_without_reordering_the_cache_goes_wrong(monkeypatch):
    """The equality above needs cache.select: without it a beam reads another beam's history."""
    model, src = untrained(norm_first=False), untrained_source()
    right = decode.beam_search(model, src, 12, beam_width=3, use_cache=False)
    monkeypatch.setattr(KVCache, "select", lambda cache, rows: None)
    assert not np.array_equal(decode.beam_search(model, src, 12, beam_width=3), right)


class CountingModel:
    """Wraps a model; counts the target positions its decoder runs on."""

    def __init__(self, model):
        self.model, self.config, self.positions = model, model.config, 0

    def __getattr__(self, name):
        return getattr(self.model, name)

    def decode(self, tgt_in_ids, memory, src_keep, cache=None):
        self.positions += tgt_in_ids.shape[1]
        return self.model.decode(tgt_in_ids, memory, src_keep, cache)


@pytest.mark.parametrize("use_cache, positions", [(True, 12), (False, 12 * 13 // 2)])
def test_the_cache_runs_one_position_per_step(use_cache, positions):
    counting = CountingModel(untrained(norm_first=False))
    ids = decode.greedy(counting, untrained_source(), 12, use_cache=use_cache)
    assert ids.shape[1] == 12 and not (ids == EOS).any(axis=1).all()      # all 12 steps were run
    assert counting.positions == positions                                # 1 + 1 + ... or 1 + 2 + ... + 12


# GPT: the same functions continue a prompt; the cache gives exactly the uncached result.

def untrained_gpt(norm_first, positions="learned"):
    return tt.nn.GPT(decoding_config(norm_first=norm_first, positions=positions), rng=5)


PROMPT = np.random.default_rng(7).integers(3, 13, size=(4, 3))             # (4, 3)


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-LN", "post-LN"])
def test_gpt_cached_generation_equals_uncached(norm_first):
    gpt = untrained_gpt(norm_first)
    for decoder in (lambda use_cache: decode.greedy(gpt, PROMPT, 10, use_cache=use_cache),
                    lambda use_cache: decode.sample(gpt, PROMPT, 10, rng=3, temperature=2.0, top_k=5,
                                                    use_cache=use_cache),
                    lambda use_cache: decode.beam_search(gpt, PROMPT, 10, beam_width=3, use_cache=use_cache)):
        cached = decoder(use_cache=True)
        np.testing.assert_array_equal(cached, decoder(use_cache=False))
        assert cached.shape[0] == 4 and cached.shape[1] <= 10


def test_gpt_greedy_is_the_argmax_of_the_whole_sequence_at_every_step():
    """What greedy returns is the continuation only, and each token is the model's argmax after the ones before."""
    gpt = untrained_gpt(norm_first=True)
    new = decode.greedy(gpt, PROMPT, 9)                                    # (4, <= 9)
    whole = np.concatenate([PROMPT, new], axis=1)                          # (4, 3 + 9): fits max_len 12
    logits = gpt(whole[:, :-1]).data                                       # (4, 11, V)
    for row in range(4):
        for t in range(new.shape[1]):
            if t == 0 or EOS not in new[row, :t]:
                assert new[row, t] == logits[row, 2 + t].argmax()


def test_gpt_cached_logits_equal_the_full_model_at_every_step():
    gpt = untrained_gpt(norm_first=False, positions="sinusoidal")
    ids = np.concatenate([PROMPT, decode.greedy(gpt, PROMPT, 9)], axis=1)
    cache = gpt.new_cache()
    for t in range(3, ids.shape[1]):
        cached = decode.next_token_logits(gpt.decode, ids[:, :t], cache)
        np.testing.assert_allclose(cached[:, EOS:], gpt(ids[:, :t]).data[:, -1, EOS:], rtol=0, atol=1e-12)
        assert np.all(cached[:, [PAD, BOS]] == -np.inf)
        assert cache.length == t


def test_gpt_cache_runs_the_prompt_once_then_one_position_per_step():
    counting = CountingGPT(untrained_gpt(norm_first=True))
    decode.greedy(counting, PROMPT, 10)
    assert counting.positions[0] == 3 and set(counting.positions[1:]) == {1}


class CountingGPT:
    def __init__(self, model):
        self.model, self.config, self.positions = model, model.config, []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def decode(self, ids, cache=None):
        self.positions.append(ids.shape[1])
        return self.model.decode(ids, cache)


def test_gpt_bad_arguments():
    gpt = untrained_gpt(norm_first=True)
    with pytest.raises(ValueError, match=r"greedy: max_len must be between 1 and 10 \(the model's max_len 12 "
                                         r"holds 3 starting token"):
        decode.greedy(gpt, PROMPT, 11)                                     # 3 + 10 positions to read
    with pytest.raises(ValueError, match="beam_search: max_len must be between 1 and 1"):
        decode.beam_search(gpt, np.full((1, 12), 3), 2)
    with pytest.raises(ValueError, match="sample: the prompt is empty"):
        decode.sample(gpt, np.zeros((2, 0), dtype=np.int64), 3, rng=0)
    with pytest.raises(ValueError, match="GPT: prompt token id 13 is outside"):
        decode.greedy(gpt, np.array([[3, 13]]), 3)


def test_bert_does_not_generate():
    bert = tt.nn.BERT(tt.BERTConfig(vocab_size=13, d_model=16, n_heads=4), rng=0)
    with pytest.raises(TypeError, match="greedy: a BERT does not generate"):
        decode.greedy(bert, PROMPT, 3)
