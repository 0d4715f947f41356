"""tasks/ and the one training loop: every task trains its model, by name or as an object."""
import json

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import tasks
from tinytransformer.nn import classifier_from
from tinytransformer.tasks.text import generate_text
from tinytransformer.train import train

TINY = dict(d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.0)
SHORT = dict(batch_size=8, steps=6, eval_every=3, progress=False)


@pytest.fixture(scope="module")
def small_tasks():
    return {"addition": tasks.AdditionTask(digits=2, n_held_out=20),
            "text": tasks.TextTask(seq_len=16),
            "mlm": tasks.MaskedLMTask(k_max=4, n_symbols=5, n_held_out=20),
            "classify": tasks.ClassifyTask(k_max=4, n_symbols=5, n_labelled=32, n_held_out=20, readout="cls")}


@pytest.mark.parametrize("name, model_class", [("addition", "GPT"), ("text", "GPT"), ("mlm", "BERT"),
                                               ("classify", "BERT")])
def test_each_task_trains_its_model_in_the_one_loop(small_tasks, name, model_class):
    task = small_tasks[name]
    first = train(task.config(**TINY), task, seed=2, **SHORT)
    again = train(task.config(**TINY), task, seed=2, **SHORT)
    assert type(first.model).__name__ == model_class == tasks.TASKS[name].model_class.__name__
    assert first.losses == again.losses and len(first.losses) == 6         # same seed, same losses
    assert [step for step, _ in first.eval_history] == [3, 6]
    if task.exact:
        assert 0 <= first.exact_match <= 1 and first.held_out_loss is None
    else:
        assert first.exact_match is None and first.held_out_loss == first.eval_history[-1][1] > 0
        assert first.reached_target_at_step is None
    json.dumps(first.summary())


def test_a_language_model_run_lowers_the_held_out_loss(small_tasks):
    task = small_tasks["text"]
    result = train(task.config(**TINY), task, batch_size=16, steps=60, eval_every=30, progress=False)
    (_, first), (_, last) = result.eval_history
    assert last < first


def test_train_refuses_a_config_or_model_that_does_not_fit_the_task(small_tasks):
    addition_task = small_tasks["addition"]
    with pytest.raises(ValueError, match="train: the config .* does not fit the addition task"):
        train(tt.TransformerConfig(vocab_size=15, max_len=5), addition_task, progress=False)
    with pytest.raises(ValueError, match="train: the addition task trains a GPT, got a BERT"):
        train(None, addition_task, model=tt.nn.BERT(small_tasks["mlm"].config(**TINY)), progress=False)
    with pytest.raises(ValueError, match="does not fit the classify task; it needs n_classes=2"):
        train(small_tasks["mlm"].config(**TINY), small_tasks["classify"], progress=False)
    with pytest.raises(TypeError, match="the classify task trains a BERT, whose config is a BERTConfig; got a "
                                        "TransformerConfig"):
        train(small_tasks["addition"].config(**TINY), small_tasks["classify"], progress=False)
    with pytest.raises(ValueError, match="train: task must be a task object or one of .'copy', 'reverse'"):
        train(None, "no-such-task", progress=False)
    with pytest.raises(TypeError, match="train: unknown option digit; the settings are steps, batch_size"):
        train(None, addition_task, digit=3, progress=False)


def test_every_task_trains_by_name_with_its_own_options_and_its_own_defaults():
    """A name gives the task's classroom model and settings; options go to the task or to the settings."""
    result = train(None, "mlm", k_max=3, n_symbols=4, n_held_out=10, steps=2, batch_size=4, progress=False)
    assert type(result.model) is tt.nn.BERT and result.steps == 2
    assert result.model.config.max_len == 7 and result.model.config.d_model == tt.TransformerConfig(vocab_size=1).d_model == 64
    fine_tuned = train(None, "classify", k_max=3, n_symbols=4, n_labelled=8, n_held_out=10, steps=100,
                       batch_size=2, progress=False)
    assert [step for step, _ in fine_tuned.eval_history] == [50, 100]   # classify's eval_every, not train()'s 100


def test_fine_tuning_trains_the_classifier_made_from_the_pretrained_model(small_tasks):
    """What classifier_from copies is tested with BERT (test_nn_bert.py); here the loop trains that model itself."""
    pretrained = train(small_tasks["mlm"].config(**TINY), small_tasks["mlm"], seed=0, **SHORT).model
    classifier = classifier_from(pretrained, 2, rng=0)
    before = {name: param.data.copy() for name, param in classifier.named_parameters()}
    result = train(None, small_tasks["classify"], model=classifier, seed=0, **SHORT)
    assert result.model is classifier
    assert all(not np.array_equal(param.data, before[name]) for name, param in classifier.named_parameters())


def test_text_generation_goes_past_the_models_max_len(small_tasks):
    task = small_tasks["text"]
    model = tt.nn.GPT(task.config(**TINY), rng=0)
    sample = generate_text(model, task.corpus, "The", 40, rng=0)     # max_len 16: 40 characters need chunks
    assert sample.startswith("The") and len(sample) == 43
    assert sample == generate_text(model, task.corpus, "The", 40, rng=0)
    with pytest.raises(ValueError, match="generate_text: the prompt must be 1 to 8 tokens"):
        generate_text(model, task.corpus, "The keeper climbed", 10, rng=0)


def test_make_task_builds_every_task_by_name():
    small = dict(seq_len=4, k_max=4, n_symbols=5, digits=1, n_labelled=16, n_held_out=10)
    for name in tuple(tasks.TASKS):
        options = {key: value for key, value in small.items() if key in tasks.options_of(tasks.TASKS[name])}
        task = tasks.make_task(name, **options)
        assert type(task) is tasks.TASKS[name] and all(getattr(task, k) == v for k, v in options.items())
    with pytest.raises(ValueError, match="make_task: name must be one of"):
        tasks.make_task("no-such-task")


# Smaller settings for the tasks that have them, to keep the test quick; any other task is built with its defaults
SMALL_EXACT = {"copy": dict(seq_len=4, n_symbols=5), "reverse": dict(seq_len=4, n_symbols=5), "addition": dict(digits=2),
               "classify": dict(k_max=4, n_symbols=5, n_labelled=32)}


def split_keys(split):
    """The rows of a split (its first array, or the English of translate's Pairs) as a set, to compare splits."""
    first = split[0]
    return set(first) if isinstance(first, list) else {row.tobytes() for row in first}


def test_every_task_that_stops_early_has_a_validation_split_apart_from_its_test_split():
    exact = [name for name, task_class in tasks.TASKS.items() if task_class.exact]     # a new task joins by itself
    assert {"copy", "classify", "translate", "digits"} <= set(exact)
    for name in exact:
        task = tasks.make_task(name, **SMALL_EXACT.get(name, {}))
        validation, test = split_keys(task.validation), split_keys(task.held_out)
        assert validation and test and not validation & test, name
        assert task.settings.target_accuracy is not None     # it stops early: on the validation split


class Watched(tasks.CopyTask):
    """copy, recording which split each measure reads."""

    def __post_init__(self):
        super().__post_init__()
        self.calls = []

    def evaluate(self, model):
        self.calls.append("validation")
        return super().evaluate(model)

    def test(self, model):
        self.calls.append("test")
        return super().test(model)


def test_training_stops_on_the_validation_split_and_measures_the_test_split_once_at_the_end():
    task = Watched(seq_len=4, n_symbols=5, n_held_out=50, n_validation=40)
    result = train(task.config(**TINY), task, steps=9, eval_every=3, target_accuracy=None, progress=False)
    assert task.calls == ["validation"] * 3 + ["test"]
    assert result.exact_match == task.evaluate(result.model) and result.test_size == 50
    assert result.test_exact_match == tasks.sequences.evaluate_sequences(result.model, task.held_out)
    task.calls.clear()
    stopped = train(task.config(**TINY), task, steps=9, eval_every=3, target_accuracy=0.0, progress=False)
    assert stopped.reached_target_at_step == 3 and task.calls == ["validation", "test"]


@pytest.mark.parametrize("name", ["copy", "classify", "translate"])
def test_the_validation_split_takes_no_draw_from_the_training_stream(name):
    """Same seed, same training batches, whatever the validation split's size."""
    options = {**SMALL_EXACT.get(name, {}), "n_held_out": 20}
    made = [tasks.make_task(name, **options, n_validation=size) for size in (1, 30)]
    runs = [train(task.config(**TINY), task, steps=3, batch_size=4, eval_every=0, progress=False) for task in made]
    assert runs[0].losses == runs[1].losses
