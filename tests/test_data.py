"""The toy tasks (copy, reverse), their batches, BERT's corruption rule, and the worked 3-input example."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import data
from tinytransformer.data import BOS, EOS, PAD

from conftest import binomial_bounds


def test_special_tokens_and_vocabulary_size():
    assert (PAD, BOS, EOS) == (0, 1, 2) == (tt.PAD, tt.BOS, tt.EOS)
    assert data.vocab_size(10) == 13                   # PAD, BOS, EOS, then 10 symbols


def test_token_names_number_the_symbols_from_zero_and_name_the_special_tokens():
    ids = np.array([BOS, 3, 12, 5, EOS, PAD])
    assert data.token_names(ids) == ["<s>", "0", "9", "2", "</s>", "."]


@pytest.mark.parametrize("task", data.TASKS)
def test_make_batch_shapes_and_special_tokens(task):
    batch = data.make_batch(task, batch_size=4, seq_len=5, n_symbols=6, rng=0)
    assert batch.src.shape == (4, 5)
    assert batch.tgt_in.shape == batch.tgt_out.shape == (4, 6)
    assert all(a.dtype == np.int64 for a in batch)
    assert ((batch.src >= 3) & (batch.src < 9)).all()           # symbols 3..8, no PAD at fixed length
    np.testing.assert_array_equal(batch.tgt_in[:, 0], BOS)     # the decoder starts from BOS
    np.testing.assert_array_equal(batch.tgt_out[:, -1], EOS)   # and must end with EOS
    np.testing.assert_array_equal(batch.tgt_in[:, 1:], batch.tgt_out[:, :-1])   # shifted right by one


def test_copy_task_targets_are_the_source():
    batch = data.make_batch("copy", batch_size=3, seq_len=4, n_symbols=5, rng=1)
    np.testing.assert_array_equal(batch.tgt_out[:, :4], batch.src)


def test_reverse_task_targets_are_the_source_reversed():
    batch = data.make_batch("reverse", batch_size=3, seq_len=4, n_symbols=5, rng=1)
    np.testing.assert_array_equal(batch.tgt_out[:, :4], batch.src[:, ::-1])
    row = batch.src[0]
    assert list(batch.tgt_in[0]) == [BOS, row[3], row[2], row[1], row[0]]


@pytest.mark.parametrize("task", data.TASKS)
def test_variable_length_examples_are_padded_at_the_end(task):
    batch = data.make_batch(task, batch_size=64, seq_len=6, n_symbols=5, rng=2, variable_length=True)
    lengths = (batch.src != PAD).sum(axis=1)
    assert lengths.min() >= 1 and lengths.max() <= 6 and len(set(lengths)) > 1
    for src, tgt_in, tgt_out, n in zip(*batch, lengths):
        symbols = src[:n]
        expected = symbols if task == "copy" else symbols[::-1]
        assert (symbols >= 3).all() and (src[n:] == PAD).all()                # PAD only after the symbols
        assert list(tgt_in) == [BOS, *expected] + [PAD] * (6 - n)
        assert list(tgt_out) == [*expected, EOS] + [PAD] * (6 - n)


def test_same_seed_same_batch_and_a_generator_works_too():
    a = data.make_batch("reverse", 8, 5, 6, rng=3, variable_length=True)
    b = data.make_batch("reverse", 8, 5, 6, rng=3, variable_length=True)
    c = data.make_batch("reverse", 8, 5, 6, rng=4, variable_length=True)
    d = data.make_batch("reverse", 8, 5, 6, rng=np.random.default_rng(3), variable_length=True)
    for x, y, z, w in zip(a, b, c, d):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, w)
    assert not np.array_equal(a.src, c.src)


def test_a_generator_moves_on_between_batches():
    rng = np.random.default_rng(5)
    first, second = data.make_batch("copy", 4, 5, 6, rng), data.make_batch("copy", 4, 5, 6, rng)
    assert not np.array_equal(first.src, second.src)


def test_bad_task_name_and_sizes_are_clear_errors():
    with pytest.raises(ValueError, match=r"make_batch: task must be one of \('copy', 'reverse'\), got 'sort'"):
        data.make_batch("sort", 4, 5, 6, rng=0)
    with pytest.raises(ValueError, match=r"make_batch: batch_size, seq_len and n_symbols must be >= 1, got 4, 0, 6"):
        data.make_batch("copy", 4, 0, 6, rng=0)


def test_worked_example_gives_the_hand_computed_attention_outputs():
    # Q = X W_q, K = X W_k, V = X W_v, then softmax(Q K^T) V without the 1/sqrt(d_k) scale,
    # as the example is usually worked by hand
    Q, K, V = (data.WORKED_X @ W for W in (data.WORKED_W_Q, data.WORKED_W_K, data.WORKED_W_V))
    np.testing.assert_array_equal(Q[0], [1, 0, 2])
    np.testing.assert_array_equal(K @ Q[0], [2, 4, 4])            # scores of input 1
    out, probs = tt.functional.attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(probs[0], [0.0634, 0.4683, 0.4683], atol=1e-4)
    np.testing.assert_allclose(out.data, [[1.9366, 6.6831, 1.5951],
                                          [2.0000, 7.9640, 0.0540],   # 1.999994 rounds to 2.0000
                                          [1.9997, 7.7599, 0.3584]], atol=1e-4)


def test_bert_special_tokens_come_after_pad_bos_eos():
    assert (data.CLS, data.MASK, data.MLM_N_SPECIAL) == (3, 4, 5)


def test_mask_tokens_follows_berts_80_10_10_rule_in_frequency():
    V, n_symbols = 25, 20                                       # symbols 5..24
    rng = np.random.default_rng(0)
    ids = rng.integers(data.MLM_N_SPECIAL, V, size=(400, 50))   # (400, 50)
    ids[:, 0] = data.CLS
    ids[:, 40:] = PAD                                           # trailing padding is never chosen
    corrupted, targets = data.mask_tokens(ids, rng=1, p=0.15, vocab_size=V)
    chosen = targets != PAD
    n_real, n_chosen = (ids >= data.MLM_N_SPECIAL).sum(), chosen.sum()
    low, high = binomial_bounds(n_real, 0.15)
    assert low < n_chosen < high
    np.testing.assert_array_equal(targets[chosen], ids[chosen])            # the original token
    assert not chosen[:, 0].any() and not chosen[:, 40:].any()             # never [CLS], never PAD
    np.testing.assert_array_equal(corrupted[~chosen], ids[~chosen])        # the rest untouched

    became = corrupted[chosen]
    masked = became == data.MASK
    kept = became == ids[chosen]
    # a random replacement draws any of the n_symbols symbols, the original included
    for count, rate in [(masked.sum(), 0.8), (kept.sum(), 0.1 + 0.1 / n_symbols),
                        ((~masked & ~kept).sum(), 0.1 * (1 - 1 / n_symbols))]:
        low, high = binomial_bounds(n_chosen, rate)
        assert low < count < high, (count, rate, n_chosen)
    replaced = became[~masked & ~kept]
    assert replaced.min() >= data.MLM_N_SPECIAL and replaced.max() < V   # a symbol, never a special token
    counts = np.bincount(replaced - data.MLM_N_SPECIAL, minlength=n_symbols)
    low, high = binomial_bounds(len(replaced), 1 / n_symbols)
    assert (low < counts).all() and (counts < high).all()                  # uniform over the symbols


def test_mask_tokens_is_seeded_and_checks_its_input():
    ids = np.arange(5, 25).reshape(2, 10)
    first = data.mask_tokens(ids, rng=3, vocab_size=25)
    again = data.mask_tokens(ids, rng=np.random.default_rng(3), vocab_size=25)
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)
    nothing, none_chosen = data.mask_tokens(ids, rng=3, p=0.0, vocab_size=25)
    np.testing.assert_array_equal(nothing, ids)
    assert (none_chosen == PAD).all()
    with pytest.raises(ValueError, match=r"mask_tokens: ids must lie in 0..24 \(vocab_size\), got 6..25"):
        data.mask_tokens(ids + 1, rng=0, vocab_size=25)
    with pytest.raises(ValueError, match="mask_tokens: ids must be a 2-d integer array"):
        data.mask_tokens(ids.astype(float), rng=0, vocab_size=25)
    with pytest.raises(ValueError, match="mask_tokens: need 0 <= p <= 1"):
        data.mask_tokens(ids, rng=0, p=1.5, vocab_size=25)
