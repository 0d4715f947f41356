"""BERT's tasks: tasks/masked_lm.py (vocabulary, corpus and corruption rule), sentence_order.py (the
sentence-level objective), cloze.py (classify's cloze readout) and bert_tasks.py (the mlm and classify data,
and classify's two readouts)."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F, tasks
from tinytransformer.tasks import cloze, masked_lm, sentence_order
from tinytransformer.vocabulary import BERT_N_SPECIAL, CLS, MASK, PAD

from helpers import (analytic_gradients, assert_a_wrong_gradient_is_caught, assert_gradients_along_random_directions,
                     binomial_bounds, tiny_config)


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
        assert (symbols >= BERT_N_SPECIAL).all() and (symbols < masked_lm.vocab_size(8)).all()


def test_mlm_pretraining_batch_corrupts_only_symbols():
    corrupted, targets = masked_lm.pretraining_batch(100, 6, 8, rng=0)
    assert (corrupted[:, 0] == CLS).all() and (targets[:, 0] == PAD).all()
    assert (corrupted == MASK).any() and (targets != PAD).any()
    assert (targets[corrupted == MASK] != PAD).all()            # [MASK] only where a target is asked
    assert (targets[corrupted == PAD] == PAD).all()             # PAD is never chosen


def test_classify_held_out_sequences_are_not_among_the_labelled():
    task = tasks.ClassifyTask(k_max=3, n_symbols=6, n_labelled=500, n_held_out=200, seed=0)  # 360 in all
    held_out = {row.tobytes() for row in task.held_out.ids}
    assert not any(row.tobytes() in held_out for row in task.labelled.ids)
    assert 0 < len(task.labelled.ids) < 500                    # with so few sequences some were dropped
    with pytest.raises(ValueError, match="ClassifyTask: every one of the 50 labelled sequences is held out"):
        tasks.ClassifyTask(k_max=3, n_symbols=3, n_labelled=50, n_held_out=500)   # 36 sequences in all


def test_mlm_and_classify_halves_have_one_length_unless_variable_length_is_asked():
    def half_lengths(ids):                                     # (B, T) -> the set of k over the rows
        return set((np.count_nonzero(ids[:, 1:] != tt.PAD, axis=1) // 2).tolist())

    assert half_lengths(tasks.ClassifyTask(k_max=5, n_labelled=200, n_held_out=200).held_out.ids) == {5}
    assert half_lengths(tasks.MaskedLMTask(k_max=5, n_held_out=200).held_out.ids) == {5}   # corruption keeps PAD
    assert half_lengths(tasks.ClassifyTask(k_max=5, variable_length=True, n_labelled=200,
                                           n_held_out=200).held_out.ids) == {3, 4, 5}
    assert half_lengths(tasks.MaskedLMTask(k_max=5, variable_length=True, n_held_out=200).held_out.ids) == {3, 4, 5}


# ---------------------------------------------------------------------------
# The sentence-level objective: [CLS] tells a second half in the corpus's order from one shuffled.

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


def test_sentence_objective_needs_halves_of_three_and_a_two_class_head():
    with pytest.raises(ValueError, match="the sentence objective needs halves of at least 3 symbols"):
        tasks.MaskedLMTask(k_max=2, sentence_objective=True)
    task = tasks.MaskedLMTask(k_max=3, sentence_objective=True, n_held_out=10)
    assert task.config().n_classes == 2 and tasks.MaskedLMTask(k_max=3, n_held_out=10).config().n_classes is None
    first = task.batch(8, np.random.default_rng(3))
    again = task.batch(8, np.random.default_rng(3))
    for a, b in zip(first, again):                                 # same seed, same batch
        np.testing.assert_array_equal(a, b)


def tiny_bert(**changes):
    return tt.nn.BERT(tiny_config(vocab_size=masked_lm.vocab_size(4), max_len=9, positions="learned",
                                  activation="gelu", **changes), rng=0)


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


# ---------------------------------------------------------------------------
# classify's two readouts

def test_the_cloze_readout_reads_the_masked_lm_head_at_the_first_symbol_of_y():
    model = tiny_bert()                                              # no [CLS] head: the cloze readout needs none
    ids, _ = masked_lm.make_sequences(5, 4, 4, rng=4, k_min=2)      # halves of 2 to 4, padded
    logits = cloze.cloze_logits(model, ids).data                 # (5, 2)
    for row, got in zip(ids, logits):
        k = np.count_nonzero(row[1:] != PAD) // 2
        asked = row.copy()
        asked[1 + k] = MASK                                          # y's first symbol hidden
        at_y = model(asked[None]).data[0, 1 + k]                     # (V,) the masked-LM logits there
        np.testing.assert_allclose(got, [at_y[row[1]], at_y[row[k]]], rtol=1e-12)   # x's first, x's last


def test_the_cloze_readout_gradient_along_random_directions():
    model = tiny_bert()
    ids, labels = masked_lm.make_sequences(4, 4, 4, rng=6, k_min=3)
    loss_of = lambda m: F.cross_entropy(cloze.cloze_logits(m, ids), labels)   # noqa: E731
    grads = analytic_gradients(model, loss_of)
    assert_gradients_along_random_directions(model, loss_of, grads)
    assert_a_wrong_gradient_is_caught(model, loss_of, "embed.table")


@pytest.mark.parametrize("readout, n_classes", [("cloze", None), ("cls", 2)])
def test_classify_answers_by_its_readout(readout, n_classes):
    task = tasks.ClassifyTask(k_max=4, n_symbols=5, n_labelled=20, n_held_out=30, readout=readout)
    model = task.new_model(task.config(d_model=8, n_heads=2, d_ff=12, n_layers=1), np.random.default_rng(0))
    assert model.config.n_classes == n_classes
    expected = (cloze.cloze_logits(model, task.held_out.ids) if readout == "cloze"
                else model.classify(task.held_out.ids)).data.argmax(axis=-1)
    assert task.evaluate(model) == pytest.approx((expected == task.held_out.labels).mean())
    with pytest.raises(ValueError, match="classify: readout must be one of cloze, cls, got 'CLS'"):
        tasks.ClassifyTask(readout="CLS")


@pytest.mark.parametrize("n", [16, 32, 100])
def test_classify_trains_on_the_number_of_labelled_sequences_asked(n):
    task = tasks.ClassifyTask(n_labelled=n)                          # the defaults: 8 symbols, halves of 6
    assert len(task.labelled.ids) == n                               # 8^6 * 7/8 sequences: none held out by chance
    batch = task.batch(64, np.random.default_rng(0))
    rows = {row.tobytes() for row in task.labelled.ids}
    assert all(row.tobytes() in rows for row in batch.ids)           # every training row is a labelled one
    assert tasks.ClassifyTask(n_labelled=n, seed=3).labelled.ids.tobytes() != task.labelled.ids.tobytes()
