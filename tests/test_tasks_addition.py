"""tasks/addition.py: the problems, their format, and a held-out split never trained on."""
import numpy as np
import pytest

from tinytransformer.tasks import addition
from tinytransformer.vocabulary import EOS, PAD

from helpers import binomial_bounds
def test_addition_encodes_fixed_width_operands_and_the_reversed_sum():
    prompt, answer = addition.encode([123, 5], [45, 999], digits=3)
    assert addition.problem_text(prompt[0]) == "123+045="
    assert addition.problem_text(prompt[1], answer[1]) == "005+999=1004"
    assert [addition.ALPHABET[i - 3] for i in answer[0, :-1]] == list("8610")   # 168 as 0168, reversed
    assert answer[0, -1] == EOS and answer.shape == (2, 5) and prompt.shape == (2, 8)
    assert addition.VOCAB_SIZE == 15


def test_addition_batch_scores_only_the_answer():
    problems = addition.encode([123], [45], digits=3)
    ids, targets = addition.as_batch(problems)
    assert addition.problem_text(ids[0]) == "123+045=8610"
    assert ids.shape == targets.shape == (1, 12)
    assert (targets[0, :7] == PAD).all()                                   # the operands: not scored
    np.testing.assert_array_equal(targets[0, 7:], problems.answer[0])       # "=" predicts the first digit
    np.testing.assert_array_equal(ids[0, 8:], targets[0, 7:-1])             # each answer token is read next


def test_addition_held_out_problems_are_never_drawn_for_training():
    split = addition.Split(digits=1, n_held_out=30, seed=0)                # 100 problems, 30 held out
    rng = np.random.default_rng(0)
    drawn = np.concatenate([split.training_numbers(1000, rng) for _ in range(20)])
    assert not np.isin(drawn, split.held_out_numbers).any()
    # every one of the 70 others is drawn, uniformly
    counts = np.bincount(drawn, minlength=100)
    assert set(np.flatnonzero(counts)) == set(range(100)) - set(split.held_out_numbers)
    low, high = binomial_bounds(len(drawn), 1 / 70)
    assert ((low < counts[counts > 0]) & (counts[counts > 0] < high)).all()


def test_addition_validation_problems_are_apart_from_the_test_and_never_drawn_for_training():
    split = addition.Split(digits=1, n_held_out=20, seed=0, n_validation=10)   # 100 problems: 20 test, 10 validation
    assert len(np.union1d(split.held_out_numbers, split.validation_numbers)) == 30
    drawn = split.training_numbers(20_000, np.random.default_rng(0))
    assert set(drawn) == set(range(100)) - set(split.held_out_numbers) - set(split.validation_numbers)
    assert np.array_equal(split.held_out_numbers, addition.Split(digits=1, n_held_out=20, seed=0).held_out_numbers)
    task = addition.AdditionTask(digits=2)
    assert len(task.validation.prompt) == len(task.held_out.prompt) == 1000
    with pytest.raises(ValueError, match="n_held_out \\+ n_validation < 100"):
        addition.Split(digits=1, n_held_out=60, n_validation=40)


def test_addition_split_of_three_digits_and_its_batches():
    split = addition.Split(digits=3, n_held_out=1000, seed=0)
    assert len(np.unique(split.held_out_numbers)) == 1000
    drawn = split.training_numbers(100_000, np.random.default_rng(1))
    assert not np.isin(drawn, split.held_out_numbers).any() and drawn.max() < 10 ** 6
    batch = split.training_batch(4, np.random.default_rng(2))
    for ids in batch.ids:                      # each row is a right sum
        a, b, total = addition.problem_text(ids).replace("+", " ").replace("=", " ").split()
        assert int(a) + int(b) == int(total[::-1])
    with pytest.raises(ValueError, match="addition.Split: need 1 <= digits <= 6"):
        addition.Split(digits=0)
