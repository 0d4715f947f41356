"""tasks/sentence_order.py: the sentence-level objective, [CLS] tells a second half in the corpus's order
from one shuffled."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer.tasks import masked_lm, sentence_order
from tinytransformer.vocabulary import CLS, MASK, PAD

from helpers import (analytic_gradients, assert_a_wrong_gradient_is_caught, assert_gradients_along_random_directions,
                     binomial_bounds, tiny_bert)


def halves(row):
    """A corpus row -> (x, y) without [CLS] and PAD."""
    symbols = row[1:][row[1:] != PAD]
    k = len(symbols) // 2
    return symbols[:k], symbols[k:]


def test_sentence_pairs_positives_are_corpus_sequences_negatives_the_same_symbols_out_of_order():
    ids, _ = masked_lm.make_sequences(600, k_max=6, n_symbols=8, rng=0, k_min=3)
    rng = np.random.default_rng(1)
    chosen = np.arange(0, 600, 2)
    shuffled = sentence_order.shuffle_second_halves(ids, chosen, rng)
    for b, (row, before) in enumerate(zip(shuffled, ids)):
        x, y = halves(row)
        assert row[0] == CLS and (row[1:1 + len(x)] == before[1:1 + len(x)]).all()      # [CLS] and x untouched
        if b % 2:                                                   # not chosen: as drawn
            np.testing.assert_array_equal(row, before)
        else:                                                       # x's symbols, neither in x's order nor reversed
            assert sorted(y) == sorted(x)
            assert list(y) != list(x) and list(y) != list(x[::-1])


def test_sentence_pair_batch_is_balanced_and_counts_masked_lm_targets_in_kept_rows_only():
    B, n_symbols = 4000, 8
    batch = sentence_order.sentence_pair_batch(B, 6, n_symbols, rng=5, k_min=6)
    kept, shuffled = batch.in_order == 1, batch.in_order == 0
    low, high = binomial_bounds(B, 0.5)
    assert low < kept.sum() < high                                 # half kept, half shuffled
    assert (batch.targets[shuffled] == PAD).all()                  # a shuffled y cannot be read off x
    assert (batch.targets[kept] != PAD).any()
    # a kept row, its corruption undone, is the corpus sequence as drawn: copies and reverses alike
    clean, labels = masked_lm.make_sequences(B, 6, n_symbols, np.random.default_rng(5), 6)   # the batch's first draw
    original = np.where(batch.targets != PAD, batch.targets, batch.ids)          # (B, T)
    np.testing.assert_array_equal(original[kept], clean[kept])
    low, high = binomial_bounds(kept.sum(), 0.5)
    assert low < labels[kept].sum() < high                         # the order label says nothing of copy/reverse
    # every row is corrupted alike: [MASK] is no clue to the order label
    mask_rate = [(batch.ids[rows] == MASK).sum() / (batch.ids[rows] >= MASK).sum()
                 for rows in (kept, shuffled)]
    assert abs(mask_rate[0] - mask_rate[1]) < 0.01


def tiny_pairs():
    return sentence_order.sentence_pair_batch(6, 4, 4, rng=1, p=0.3, k_min=4)     # (6, 9) rows, both kinds


def test_the_two_pretraining_losses_add():
    model, batch = tiny_bert(n_classes=2), tiny_pairs()
    assert set(batch.in_order) == {0, 1}
    both = sentence_order.masked_lm_and_order_loss(model, batch).data
    masked_lm_alone = F.cross_entropy(model(batch.ids), batch.targets, ignore_index=PAD).data
    order_alone = F.cross_entropy(model.classify(batch.ids), batch.in_order).data
    assert both == pytest.approx(masked_lm_alone + order_alone, rel=1e-12)
    every_row_shuffled = batch._replace(targets=np.full_like(batch.targets, PAD))
    assert sentence_order.masked_lm_and_order_loss(model, every_row_shuffled).data == pytest.approx(order_alone)


def test_the_cls_head_gradient_matches_finite_differences():
    """[CLS]'s vector and the head: float64, a random upstream gradient, every input."""
    rng = np.random.default_rng(0)
    x, W, b = rng.standard_normal((3, 5, 4)), rng.standard_normal((4, 2)), rng.standard_normal(2)
    checks = tt.gradcheck(lambda x, W, b: F.linear(tt.nn.BERT.first_position(x), W, b), x, W, b,
                          names=["x", "W", "b"], rng=1)
    assert all(check.passed for check in checks)
    model = tiny_bert(n_classes=2)
    with tt.Tape() as tape:
        hidden = tt.Tensor(rng.standard_normal((3, 5, 8)), requires_grad=True)
        out = model.first_position(hidden)
    tape.backward(out, rng.standard_normal(out.shape))
    assert np.abs(hidden.grad[:, 1:]).max() == 0 and np.abs(hidden.grad[:, 0]).min() > 0   # position 0 only


def test_the_pretraining_loss_gradient_along_random_directions_and_a_wrong_one_is_caught():
    model, batch = tiny_bert(n_classes=2), tiny_pairs()
    loss_of = lambda m: sentence_order.masked_lm_and_order_loss(m, batch)              # noqa: E731
    grads = analytic_gradients(model, loss_of)
    assert all(grad is not None for grad in grads.values())          # the [CLS] head and the encoder both learn
    assert_gradients_along_random_directions(model, loss_of, grads)
    assert_a_wrong_gradient_is_caught(model, loss_of, "classifier.W")
