"""The data of the GPT and BERT tasks: addition problems, the text corpus, the masked-LM corpus."""
import numpy as np
import pytest

from tinytransformer import addition, mlm, text
from tinytransformer.data import CLS, EOS, MASK, MLM_N_SPECIAL, PAD

from conftest import binomial_bounds


def test_addition_encodes_fixed_width_operands_and_the_reversed_sum():
    prompt, answer = addition.encode([123, 5], [45, 999], digits=3)
    assert addition.problem_text(prompt[0]) == "123+045="
    assert addition.problem_text(prompt[1], answer[1]) == "005+999=1004"
    assert [addition.ALPHABET[i - 3] for i in answer[0, :-1]] == list("8610")   # 168 as 0168, reversed
    assert answer[0, -1] == EOS and answer.shape == (2, 5) and prompt.shape == (2, 8)
    assert addition.vocab_size() == 15


def test_addition_batch_scores_only_the_answer():
    problems = addition.encode([123], [45], digits=3)
    ids, targets = addition.as_batch(problems)
    assert addition.problem_text(ids[0]) == "123+045=8610"[:len(ids[0])]
    assert ids.shape == targets.shape == (1, 12)
    assert (targets[0, :7] == PAD).all()                                   # the operands: not scored
    np.testing.assert_array_equal(targets[0, 7:], problems.answer[0])       # "=" predicts the first digit
    np.testing.assert_array_equal(ids[0, 8:], targets[0, 7:-1])             # each answer token is read next


def test_addition_held_out_problems_are_never_drawn_for_training():
    split = addition.Split(digits=1, n_held_out=30, seed=0)                # 100 problems, 30 held out
    rng = np.random.default_rng(0)
    drawn = np.concatenate([split.training_numbers(1000, rng) for _ in range(20)])
    assert not np.isin(drawn, split.held_out).any()
    # every one of the 70 others is drawn, uniformly
    counts = np.bincount(drawn, minlength=100)
    assert set(np.flatnonzero(counts)) == set(range(100)) - set(split.held_out)
    low, high = binomial_bounds(len(drawn), 1 / 70)
    assert ((low < counts[counts > 0]) & (counts[counts > 0] < high)).all()


def test_addition_split_of_three_digits_and_its_batches():
    split = addition.Split(digits=3, n_held_out=1000, seed=0)
    assert len(np.unique(split.held_out)) == 1000
    drawn = split.training_numbers(100_000, np.random.default_rng(1))
    assert not np.isin(drawn, split.held_out).any() and drawn.max() < 10 ** 6
    batch = split.training_batch(4, np.random.default_rng(2))
    for ids in batch.ids:                      # each row is a right sum
        a, b, total = addition.problem_text(ids).replace("+", " ").replace("=", " ").split()
        assert int(a) + int(b) == int(total[::-1])
    with pytest.raises(ValueError, match="addition.Split: need 1 <= digits <= 6"):
        addition.Split(digits=0)


def test_the_text_ships_with_the_package_and_splits_without_overlap():
    corpus = text.CharCorpus()
    assert len(corpus.text) == 6110 and corpus.text.startswith("The Lighthouse Keeper's Year")
    assert corpus.decode(corpus.encode("the lamp")) == "the lamp"
    n = len(corpus.train_ids) + len(corpus.held_out_ids)
    assert n == len(corpus.text) and len(corpus.held_out_ids) == round(0.1 * n)
    assert corpus.decode(corpus.held_out_ids) == corpus.text[len(corpus.train_ids):]   # the end of the text
    batch = corpus.training_batch(8, 32, np.random.default_rng(0))
    np.testing.assert_array_equal(batch.ids[:, 1:], batch.targets[:, :-1])  # targets: the next character
    held = corpus.held_out_batch(32)
    assert held.ids.shape == ((len(corpus.held_out_ids) - 1) // 32, 32)
    assert corpus.decode(held.ids[0]) == corpus.text[len(corpus.train_ids):][:32]
    with pytest.raises(ValueError, match="not in the text's alphabet"):
        corpus.encode("\u00e9")


def test_mlm_sequences_are_a_copy_or_a_reverse():
    ids, labels = mlm.make_sequences(200, k_max=6, n_symbols=8, rng=0)
    assert ids.shape == (200, 13) and (ids[:, 0] == CLS).all() and set(labels) == {0, 1}
    for row, label in zip(ids, labels):
        symbols = row[1:][row[1:] != PAD]
        k = len(symbols) // 2
        x, y = symbols[:k], symbols[k:]
        assert 3 <= k <= 6 and (row[1 + 2 * k:] == PAD).all()
        assert list(y) == (list(x[::-1]) if label else list(x)) and x[0] != x[-1]
        assert (symbols >= MLM_N_SPECIAL).all() and (symbols < mlm.vocab_size(8)).all()


def test_mlm_pretraining_batch_corrupts_only_symbols():
    corrupted, targets = mlm.pretraining_batch(100, 6, 8, rng=0)
    assert (corrupted[:, 0] == CLS).all() and (targets[:, 0] == PAD).all()
    assert (corrupted == MASK).any() and (targets != PAD).any()
    assert (targets[corrupted == MASK] != PAD).all()            # [MASK] only where a target is asked
    assert (targets[corrupted == PAD] == PAD).all()             # PAD is never chosen
