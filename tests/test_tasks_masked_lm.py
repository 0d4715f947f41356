"""tasks/masked_lm.py: BERT's vocabulary, the corpus of copies and reverses, and BERT's corruption rule."""
import numpy as np
import pytest

from tinytransformer.tasks import masked_lm
from tinytransformer.vocabulary import BERT_N_SPECIAL, CLS, MASK, PAD

from helpers import binomial_bounds


def test_bert_special_tokens_come_after_pad_bos_eos():
    assert (CLS, MASK, BERT_N_SPECIAL) == (3, 4, 5)


def test_mask_tokens_follows_berts_80_10_10_rule_in_frequency():
    V, n_symbols = 25, 20                                       # symbols 5..24
    rng = np.random.default_rng(0)
    ids = rng.integers(BERT_N_SPECIAL, V, size=(400, 50))   # (400, 50)
    ids[:, 0] = CLS
    ids[:, 40:] = PAD                                           # trailing padding is never chosen
    corrupted, targets = masked_lm.mask_tokens(ids, rng=1, p=0.15, vocab_size=V)
    chosen = targets != PAD
    n_real, n_chosen = (ids >= BERT_N_SPECIAL).sum(), chosen.sum()
    low, high = binomial_bounds(n_real, 0.15)
    assert low < n_chosen < high
    np.testing.assert_array_equal(targets[chosen], ids[chosen])            # the original token
    assert not chosen[:, 0].any() and not chosen[:, 40:].any()             # never [CLS], never PAD
    np.testing.assert_array_equal(corrupted[~chosen], ids[~chosen])        # the rest untouched

    became = corrupted[chosen]
    masked = became == MASK
    kept = became == ids[chosen]
    # a random replacement draws any of the n_symbols symbols, the original included
    for count, rate in [(masked.sum(), 0.8), (kept.sum(), 0.1 + 0.1 / n_symbols),
                        ((~masked & ~kept).sum(), 0.1 * (1 - 1 / n_symbols))]:
        low, high = binomial_bounds(n_chosen, rate)
        assert low < count < high, (count, rate, n_chosen)
    replaced = became[~masked & ~kept]
    assert replaced.min() >= BERT_N_SPECIAL and replaced.max() < V   # a symbol, never a special token
    counts = np.bincount(replaced - BERT_N_SPECIAL, minlength=n_symbols)
    low, high = binomial_bounds(len(replaced), 1 / n_symbols)
    assert (low < counts).all() and (counts < high).all()                  # uniform over the symbols


def test_mask_tokens_is_seeded_and_checks_its_input():
    ids = np.arange(5, 25).reshape(2, 10)
    first = masked_lm.mask_tokens(ids, rng=3, vocab_size=25)
    again = masked_lm.mask_tokens(ids, rng=np.random.default_rng(3), vocab_size=25)
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)
    nothing, none_chosen = masked_lm.mask_tokens(ids, rng=3, p=0.0, vocab_size=25)
    np.testing.assert_array_equal(nothing, ids)
    assert (none_chosen == PAD).all()
    with pytest.raises(ValueError, match=r"mask_tokens: ids must lie in 0..24 \(vocab_size\), got 6..25"):
        masked_lm.mask_tokens(ids + 1, rng=0, vocab_size=25)
    with pytest.raises(ValueError, match="mask_tokens: ids must be a 2-d integer array"):
        masked_lm.mask_tokens(ids.astype(float), rng=0, vocab_size=25)
    with pytest.raises(ValueError, match="mask_tokens: need 0 <= p <= 1"):
        masked_lm.mask_tokens(ids, rng=0, p=1.5, vocab_size=25)


def test_mlm_sequences_are_a_copy_or_a_reverse():
    ids, labels = masked_lm.make_sequences(200, k_max=6, n_symbols=8, rng=0)
    assert ids.shape == (200, 13) and (ids[:, 0] == CLS).all() and set(labels) == {0, 1}
    for row, label in zip(ids, labels):
        symbols = row[1:][row[1:] != PAD]
        k = len(symbols) // 2
        x, y = symbols[:k], symbols[k:]
        assert 3 <= k <= 6 and (row[1 + 2 * k:] == PAD).all()
        assert list(y) == (list(x[::-1]) if label else list(x)) and x[0] != x[-1]
        assert (symbols >= BERT_N_SPECIAL).all() and (symbols < masked_lm.vocab_size_for(8)).all()


def test_mlm_pretraining_batch_corrupts_only_symbols():
    corrupted, targets = masked_lm.pretraining_batch(100, 6, 8, rng=0)
    assert (corrupted[:, 0] == CLS).all() and (targets[:, 0] == PAD).all()
    assert (corrupted == MASK).any() and (targets != PAD).any()
    assert (targets[corrupted == MASK] != PAD).all()            # [MASK] only where a target is asked
    assert (targets[corrupted == PAD] == PAD).all()             # PAD is never chosen
