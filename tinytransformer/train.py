"""Train any model on any task, one loop for all; measure by exact match or held-out loss.

    result = train(None, "reverse")                       # the task's classroom model and settings
    result.exact_match, result.reached_target_at_step     # on the validation split, which training stops on
    result.test_exact_match, result.model                 # on the test split, measured once at the end

    task = tasks.AdditionTask(digits=3)                   # or any task of tasks/, e.g. make_task("text")
    result = train(task.config(d_model=32), task, steps=500)   # result.model is a tt.nn.GPT

Each step draws a fresh batch from the task, runs the model inside a Tape,
backpropagates the task's loss and takes one Adam step at the learning rate
of the paper's warmup schedule. Every eval_every steps the task evaluates the
model: the exact match on its validation split (copy, reverse, addition,
classify, translate, digits), and then training stops once it reaches
target_accuracy; or the held-out loss (text, mlm), which nothing stops on.
After the last step, the exact tasks measure their test split once: nothing
was chosen by it, so it says how the model does on examples it has never been
judged by. What differs from task to task (the model, a batch,
the loss, the evaluation, the settings) lives in tasks/; the loop below is the same.

Training stops early, keeping the model of the last good step, on Ctrl-C or SIGTERM (the step under way
is finished; a second Ctrl-C stops at once), on a loss that is NaN or infinite (no update is made
from it) and on an update that would make a weight NaN or infinite (Adam refuses it); result.stopped
says why and when.
"""
import dataclasses
import signal
import sys
import threading
import time

import numpy as np

from .optim import AdamFast, WarmupSchedule, clip_grad_norm
from .tasks import DEFAULT_TASK, TASKS, TrainSettings, make_task, options_of
from .tensor import Tape

EVAL_SEED_OFFSET = 1_000_000     # the held-out sets' seed is seed + this: no overlap with training streams


def train_step(model, optimizer, batch, loss, label_smoothing=0.0, clip_norm=None):
    """Forward, loss, backward, (clip), update. Returns the loss as a float (NaN or inf: no update made).

    loss(model, batch, label_smoothing) -> a scalar Tensor: the task's .loss
    (for copy and reverse, tasks.sequences.transformer_loss).
    """
    with Tape() as tape:
        value = loss(model, batch, label_smoothing)
    if not np.isfinite(value.data):
        tape.release()
        return float(value.data)                 # no update from a NaN or infinite loss: the model is kept
    optimizer.zero_grad()
    tape.backward(value)         # the tape frees its records: nothing grows from step to step
    if clip_norm is not None:
        clip_grad_norm(optimizer.params, clip_norm)
    optimizer.step()
    return float(value.data)


@dataclasses.dataclass
class TrainResult:
    """What train returns: the steps taken, the times, validation and test exact match or held-out loss, the losses."""
    task: str
    steps: int                             # steps taken (fewer than asked when the target was reached)
    wall_seconds: float                    # everything: training, evaluation, setup
    train_seconds: float                   # the training steps alone, batches included
    ms_per_step: float                     # train_seconds / steps, in milliseconds
    exact_match: float | None              # on the validation split, after the last step (None: no exact answer)
    held_out_loss: float | None            # the language models' held-out loss after the last step, else None
    final_loss: float
    reached_target_at_step: int | None     # the step whose validation exact match reached the target
    losses: list                           # the training loss of every step
    eval_history: list                     # (step, validation exact match or held-out loss) of every evaluation
    stopped: str | None                    # why training stopped before its steps and target: None, or e.g.
                                           # "interrupted (SIGINT) after step 37", "the loss was nan at step 12"
    test_exact_match: float | None         # on the test split, measured once after the last step (None: the
    test_size: int | None                  # task has no test split, or training stopped); the examples measured
    model: object = dataclasses.field(repr=False)   # the trained tt.nn.Transformer, GPT or BERT

    def summary(self):
        """Everything but the model, as a dict for JSON."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)
                if field.name != "model"}


class Progress:
    """The training status for a person watching. stream: True for stderr, False for none, or a text stream.

    On a terminal, one line rewritten in place with \\r every `every` steps; on
    anything else (a file, a pipe, a notebook), one ordinary line every
    10 * every steps and at every evaluation, so that a log reads line by line.
    """

    def __init__(self, total_steps, stream=True, every=10, metric="exact match"):
        self.stream = sys.stderr if stream is True else stream or None    # sys.stderr now: notebooks replace it
        self.total_steps, self.every, self.metric = total_steps, every, metric
        self.in_place = self.stream is not None and self.stream.isatty()
        self.value = None

    def update(self, step, loss, force=False):
        every = self.every if self.in_place else 10 * self.every
        if self.stream is None or not (force or step % every == 0):
            return
        if self.value is None:
            value = "   -  "
        else:
            value = f"{self.value:.4f}" if self.metric == "held-out loss" else f"{self.value:6.1%}"
        line = (f"step {step:>{len(str(self.total_steps))}}/{self.total_steps}  "
                f"loss {loss:.4f}  {self.metric} {value}")
        self.stream.write(f"\r{line}" if self.in_place else f"{line}\n")
        self.stream.flush()

    def close(self):
        if self.in_place:
            self.stream.write("\n")


class StopSignals:
    """While open: Ctrl-C (SIGINT) and SIGTERM are recorded in .received ("SIGINT"), to stop after the step
    under way; a second one raises KeyboardInterrupt at once. Outside the main thread, signals are left alone."""

    def __enter__(self):
        self.received, self.previous = None, {}
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                self.previous[number] = signal.signal(number, self.receive)
        return self

    def receive(self, number, frame):
        if self.received:
            raise KeyboardInterrupt
        self.received = signal.Signals(number).name

    def __exit__(self, *exception):
        for number, handler in self.previous.items():
            signal.signal(number, handler)


def train(config=None, task=DEFAULT_TASK, *, model=None, seed=0, progress=True, **options):
    """Train a new model of the task's class on task; returns a TrainResult (the model included).

    task: a task object (tasks/) or a task's name, a key of tasks.TASKS ("copy", "reverse", ...; its
    held-out data drawn from seed + EVAL_SEED_OFFSET).
    config: a config of the task's model family with room for the task; None gives task.config(), the classroom model.
    model: train this model instead of a new one (fine-tuning); then config may be None.
    options: for a task given by name, its own options (seq_len, n_symbols, ...), and for every
    task the training settings, each the task's own unless given (tasks/task.py's TrainSettings:
    steps, batch_size, lr_scale, warmup, eval_every, target_accuracy, clip_norm, label_smoothing).
    progress: True for a status on stderr, False for none, or a text stream.
    Same seed, same losses, bit for bit.
    """
    if isinstance(task, str):
        if task not in TASKS:
            raise ValueError(f"train: task must be a task object or one of {tuple(TASKS)}, got {task!r}")
        known = options_of(TASKS[task])
        task_options = {name: options.pop(name) for name in list(options) if name in known}
        task = make_task(task, seed=seed + EVAL_SEED_OFFSET, **task_options)
    unknown = sorted(set(options) - set(options_of(TrainSettings)))
    if unknown:
        raise TypeError(f"train: unknown option {', '.join(unknown)}; the settings are "
                        + ", ".join(options_of(TrainSettings)))
    settings = dataclasses.replace(task.settings, **options)
    if model is not None:
        if config is not None and config != model.config:
            raise ValueError("train: config differs from model.config; pass config=None to train the model")
        if not isinstance(model, task.model_class):
            raise ValueError(f"train: the {task.name} task trains a {task.model_class.__name__}, "
                             f"got a {type(model).__name__}")
        task.check(model.config)
    else:
        config = task.config() if config is None else config
        task.check(config)
    wall_start = time.perf_counter()
    model_seed, data_seed = np.random.SeedSequence(seed).spawn(2)          # two independent streams
    if model is None:
        model = task.new_model(config, np.random.default_rng(model_seed))
    data_rng = np.random.default_rng(data_seed)
    optimizer = AdamFast(model.parameters(), lr=0.0)          # Adam's twin over one vector
    schedule = WarmupSchedule(model.config.d_model, settings.warmup, settings.lr_scale)
    bar = Progress(settings.steps, progress, metric=f"validation {task.measure}" if task.exact else "held-out loss")
    stops_early = task.exact and settings.target_accuracy is not None

    losses, eval_history, reached_at, train_seconds, stopped = [], [], None, 0.0, None
    with StopSignals() as signals:
        for step in range(1, settings.steps + 1):
            start = time.perf_counter()
            batch = task.batch(settings.batch_size, data_rng)
            optimizer.lr = schedule(step)
            try:
                loss = train_step(model, optimizer, batch, task.loss, settings.label_smoothing, settings.clip_norm)
            except FloatingPointError:               # Adam refused an update that overflowed: the weights are kept
                stopped = f"the update of step {step} would make weights NaN or infinite"
                break
            train_seconds += time.perf_counter() - start
            if not np.isfinite(loss):
                stopped = f"the loss was {loss} at step {step}"
                break
            losses.append(loss)
            evaluating = (settings.eval_every and step % settings.eval_every == 0) or step == settings.steps
            if evaluating:
                eval_history.append((step, task.evaluate(model)))
                bar.value = eval_history[-1][1]
            bar.update(step, losses[-1], force=evaluating)
            if evaluating and stops_early and bar.value >= settings.target_accuracy:
                reached_at = step
                break
            if signals.received:
                stopped = f"interrupted ({signals.received}) after step {step}"
                break
    bar.close()

    last = eval_history[-1][1] if eval_history else None
    steps = len(losses)                                  # the steps whose update the model holds
    test_exact_match, test_size = (task.test(model) if stopped is None else None) or (None, None)   # once
    return TrainResult(task=task.name, steps=steps, wall_seconds=time.perf_counter() - wall_start,
                       train_seconds=train_seconds, ms_per_step=1000.0 * train_seconds / max(steps, 1),
                       exact_match=last if task.exact else None, held_out_loss=None if task.exact else last,
                       final_loss=losses[-1] if losses else None, reached_target_at_step=reached_at,
                       losses=losses, eval_history=eval_history, stopped=stopped,
                       test_exact_match=test_exact_match, test_size=test_size, model=model)
