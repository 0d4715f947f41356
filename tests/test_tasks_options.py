"""tasks/task.py's Task and tasks/options.py's option(): a new task is one new file and one line in TASKS,
and the training loop and the command line take it as they are."""
import dataclasses
import importlib.util
import json

import pytest

import tinytransformer as tt
from tinytransformer import tasks
from tinytransformer.__main__ import main
from tinytransformer.tasks.options import flags_of
from tinytransformer.train import train

# A whole new task, as its own file of tasks/ would hold it.
COUNT_TASK = '''
"""count: GPT reads random symbols and answers, at each position, that symbol plus one (or minus one)."""
import dataclasses

import numpy as np

from tinytransformer import nn
from tinytransformer.tasks.batches import LMBatch
from tinytransformer.tasks.options import option
from tinytransformer.tasks.task import GPT_STYLE, Task, TrainSettings, held_out_loss, language_model_loss
from tinytransformer.vocabulary import N_SPECIAL

N_SYMBOLS = 5


def count_batch(batch_size, length, direction, rng):
    symbols = rng.integers(0, N_SYMBOLS, size=(batch_size, length))              # (B, T)
    answers = (symbols + (1 if direction == "up" else -1)) % N_SYMBOLS            # (B, T)
    return LMBatch(symbols + N_SPECIAL, answers + N_SPECIAL)


@dataclasses.dataclass
class CountTask(Task):
    """Each symbol plus one, or minus one, modulo 5; evaluated by the held-out loss."""
    length: int = option(6, "--length", "symbols per sequence")
    direction: str = option("up", "--direction", "count up or down", choices=("up", "down"))
    n_held_out: int = 64

    name, model_class, model_style, exact = "count", nn.GPT, GPT_STYLE, False
    settings = TrainSettings(steps=4, batch_size=8, eval_every=2, target_accuracy=None)

    def __post_init__(self):
        self.held_out = count_batch(self.n_held_out, self.length, self.direction, np.random.default_rng(0))

    def room(self):
        return dict(vocab_size=N_SPECIAL + N_SYMBOLS, max_len=self.length)

    def describe(self):
        return f"{N_SYMBOLS} symbols counting {self.direction}, length {self.length}"

    def batch(self, batch_size, rng):
        return count_batch(batch_size, self.length, self.direction, rng)

    loss = staticmethod(language_model_loss)

    def evaluate(self, model):
        return held_out_loss(model, *self.held_out)

    def show(self, model, n=3):
        return [" ".join(map(str, row - N_SPECIAL)) for row in self.held_out.ids[:n]]

    def plot_example(self):
        ids = self.held_out.ids[:1]
        names = [str(i) for i in ids[0]]
        return (ids,), names, names
'''


@pytest.fixture
def count_task(tmp_path, monkeypatch):
    """The new file, imported, and its one registry line: TASKS[name] = the class."""
    path = tmp_path / "count.py"
    path.write_text(COUNT_TASK)
    spec = importlib.util.spec_from_file_location("count", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(tasks.TASKS, module.CountTask.name, module.CountTask)
    return module.CountTask


def test_a_new_task_trains_through_train_by_name_and_as_an_object(count_task):
    by_name = train(None, "count", length=4, seed=3, progress=False)
    as_object = train(None, count_task(length=4), seed=3, progress=False)
    assert type(by_name.model) is tt.nn.GPT and by_name.model.config.max_len == 4
    assert by_name.steps == 4 and [step for step, _ in by_name.eval_history] == [2, 4]     # its own settings
    assert by_name.held_out_loss > 0 and by_name.exact_match is None
    assert by_name.losses == as_object.losses


def test_a_new_task_trains_through_the_command_line_with_its_own_options(count_task, tmp_path, capsys):
    path = tmp_path / "run.json"
    status = main(["train", "--task", "count", "--direction", "down", "--length", "3", "--d-model", "16",
                   "--heads", "2", "--json", str(path)])
    out = capsys.readouterr().out
    assert status == 0 and "5 symbols counting down, length 3" in out
    result = json.loads(path.read_text())
    assert result["task"] == "count" and len(result["losses"]) == 4
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "count (GPT)" in help_text
    assert "--direction {up,down} count: count up or down (default: count up)" in help_text
    assert main(["train", "--task", "copy", "--direction", "down"]) == 2
    assert "--direction is not an option of the copy task" in capsys.readouterr().err


def test_a_task_without_every_method_cannot_be_made():
    @dataclasses.dataclass
    class Unfinished(tasks.Task):
        name, model_class = "unfinished", tt.nn.GPT

        def room(self):
            return dict(vocab_size=8, max_len=4)

    with pytest.raises(TypeError, match="abstract"):
        Unfinished()


def test_one_flag_setting_two_fields_is_refused(count_task, monkeypatch, capsys):
    @dataclasses.dataclass
    class Clash(count_task):
        width: int = tasks.options.option(3, "--length", "the same flag for another field")
        name = "clash"

    monkeypatch.setitem(tasks.TASKS, "clash", Clash)
    with pytest.raises(TypeError, match="--length is declared for different fields"):
        main(["train", "--help"])


def test_every_training_setting_has_a_flag():
    assert [flag.field for flag in flags_of(tasks.TrainSettings)] == [f.name for f in dataclasses.fields(tasks.TrainSettings)]
    assert {flag.type for flag in flags_of(tasks.TrainSettings)} == {int, float}
