"""tasks/bert_tasks.py: the mlm and classify tasks, their held-out data, halves and readouts."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import tasks
from tinytransformer.tasks import cloze


def test_classify_held_out_sequences_are_not_among_the_labelled():
    task = tasks.ClassifyTask(k_max=3, n_symbols=6, n_labelled=500, n_held_out=200, seed=0)  # 360 in all
    held_out = {row.tobytes() for row in task.held_out.ids}
    assert not any(row.tobytes() in held_out for row in task.labelled.ids)
    assert 0 < len(task.labelled.ids) < 500                    # with so few sequences some were dropped
    validation = {row.tobytes() for row in task.validation.ids}
    assert task.apart and not validation & held_out and not any(row.tobytes() in validation for row in task.labelled.ids)
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


def test_sentence_objective_needs_halves_of_three_and_a_two_class_head():
    with pytest.raises(ValueError, match="the sentence objective needs halves of at least 3 symbols"):
        tasks.MaskedLMTask(k_max=2, sentence_objective=True)
    task = tasks.MaskedLMTask(k_max=3, sentence_objective=True, n_held_out=10)
    assert task.config().n_classes == 2 and tasks.MaskedLMTask(k_max=3, n_held_out=10).config().n_classes is None
    first = task.batch(8, np.random.default_rng(3))
    again = task.batch(8, np.random.default_rng(3))
    for a, b in zip(first, again):                                 # same seed, same batch
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("readout, n_classes", [("cloze", None), ("cls", 2)])
def test_classify_answers_by_its_readout(readout, n_classes):
    task = tasks.ClassifyTask(k_max=4, n_symbols=5, n_labelled=20, n_held_out=30, readout=readout)
    model = task.new_model(task.config(d_model=8, n_heads=2, d_ff=12, n_layers=1), np.random.default_rng(0))
    assert model.config.n_classes == n_classes
    expected = (cloze.cloze_logits(model, task.held_out.ids) if readout == "cloze"
                else model.classify(task.held_out.ids)).data.argmax(axis=-1)
    assert task.test(model) == (pytest.approx((expected == task.held_out.labels).mean()), 30)
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


def test_classify_refuses_more_labelled_sequences_than_memory_holds_before_drawing_any(monkeypatch):
    from tinytransformer import memory
    monkeypatch.setattr(memory, "available_bytes", lambda: 2**30)          # a machine with 1 GiB free
    with pytest.raises(ValueError, match=r"^classify: n_labelled = 100000000 needs about [\d.]+ GiB of memory; "
                                         r"this machine has 1.0 GiB available$"):
        tasks.ClassifyTask(n_labelled=100_000_000)
    assert len(tasks.ClassifyTask(n_labelled=64).labelled.labels) <= 64    # a class-sized request still works
