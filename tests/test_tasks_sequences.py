"""tasks/sequences.py: the copy and reverse tasks, their batches and token names."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.tasks import sequences
from tinytransformer.vocabulary import BOS, EOS, PAD

def test_special_tokens_and_vocabulary_size():
    assert (PAD, BOS, EOS) == (0, 1, 2) == (tt.PAD, tt.BOS, tt.EOS)
    assert sequences.vocab_size_for(10) == 13                   # PAD, BOS, EOS, then 10 symbols


def test_token_names_number_the_symbols_from_zero_and_name_the_special_tokens():
    ids = np.array([BOS, 3, 12, 5, EOS, PAD])
    assert sequences.token_names(ids) == ["<s>", "0", "9", "2", "</s>", "."]


@pytest.mark.parametrize("task", sequences.TASK_NAMES)
def test_make_batch_shapes_and_special_tokens(task):
    batch = sequences.make_batch(task, batch_size=4, seq_len=5, n_symbols=6, rng=0)
    assert batch.src.shape == (4, 5)
    assert batch.tgt_in.shape == batch.tgt_out.shape == (4, 6)
    assert all(a.dtype == np.int64 for a in batch)
    assert ((batch.src >= 3) & (batch.src < 9)).all()           # symbols 3..8, no PAD at fixed length
    np.testing.assert_array_equal(batch.tgt_in[:, 0], BOS)     # the decoder starts from BOS
    np.testing.assert_array_equal(batch.tgt_out[:, -1], EOS)   # and must end with EOS
    np.testing.assert_array_equal(batch.tgt_in[:, 1:], batch.tgt_out[:, :-1])   # shifted right by one


def test_copy_task_targets_are_the_source():
    batch = sequences.make_batch("copy", batch_size=3, seq_len=4, n_symbols=5, rng=1)
    np.testing.assert_array_equal(batch.tgt_out[:, :4], batch.src)


def test_reverse_task_targets_are_the_source_reversed():
    batch = sequences.make_batch("reverse", batch_size=3, seq_len=4, n_symbols=5, rng=1)
    np.testing.assert_array_equal(batch.tgt_out[:, :4], batch.src[:, ::-1])
    row = batch.src[0]
    assert list(batch.tgt_in[0]) == [BOS, row[3], row[2], row[1], row[0]]


@pytest.mark.parametrize("task", sequences.TASK_NAMES)
def test_variable_length_examples_are_padded_at_the_end(task):
    batch = sequences.make_batch(task, batch_size=64, seq_len=6, n_symbols=5, rng=2, variable_length=True)
    lengths = (batch.src != PAD).sum(axis=1)
    assert lengths.min() >= 1 and lengths.max() <= 6 and len(set(lengths)) > 1
    for src, tgt_in, tgt_out, n in zip(*batch, lengths):
        symbols = src[:n]
        expected = symbols if task == "copy" else symbols[::-1]
        assert (symbols >= 3).all() and (src[n:] == PAD).all()                # PAD only after the symbols
        assert list(tgt_in) == [BOS, *expected] + [PAD] * (6 - n)
        assert list(tgt_out) == [*expected, EOS] + [PAD] * (6 - n)


def test_same_seed_same_batch_and_a_generator_works_too():
    a = sequences.make_batch("reverse", 8, 5, 6, rng=3, variable_length=True)
    b = sequences.make_batch("reverse", 8, 5, 6, rng=3, variable_length=True)
    c = sequences.make_batch("reverse", 8, 5, 6, rng=4, variable_length=True)
    d = sequences.make_batch("reverse", 8, 5, 6, rng=np.random.default_rng(3), variable_length=True)
    for x, y, w in zip(a, b, d):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, w)
    assert not np.array_equal(a.src, c.src)


def test_a_generator_moves_on_between_batches():
    rng = np.random.default_rng(5)
    first, second = sequences.make_batch("copy", 4, 5, 6, rng), sequences.make_batch("copy", 4, 5, 6, rng)
    assert not np.array_equal(first.src, second.src)


def test_bad_task_name_and_sizes_are_clear_errors():
    with pytest.raises(ValueError, match=r"make_batch: task must be one of \('copy', 'reverse'\), got 'no-such-task'"):
        sequences.make_batch("no-such-task", 4, 5, 6, rng=0)
    with pytest.raises(ValueError, match=r"make_batch: batch_size, seq_len and n_symbols must be >= 1, got 4, 0, 6"):
        sequences.make_batch("copy", 4, 0, 6, rng=0)
