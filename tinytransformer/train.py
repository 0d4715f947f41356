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

Training stops early, keeping the model of the last good step, on Ctrl-C, SIGTERM or SIGHUP (the step
under way is finished; a second signal drops the forward and backward pass or the evaluation under way,
never an update), on a loss that is NaN or infinite (no update is made from it) and on an update that
would make a weight NaN or infinite (Adam refuses it); result.stopped says why and when.
"""
import contextlib
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
MAX_STEPS = 10**7                # a month of the smallest model's steps: a larger count is a typo


def check_settings(settings):
    """What TrainSettings lets through but the loop cannot use: one ValueError before any work."""
    if settings.steps > MAX_STEPS:
        raise ValueError(f"train: steps must be at most {MAX_STEPS:,} (a month at a quarter of a second a step), got "
                         f"{settings.steps:,}; Ctrl-C stops a long run and keeps its model")
    if settings.clip_norm is not None and not np.isfinite(settings.clip_norm):
        raise ValueError(f"train: clip_norm must be a finite number > 0, got {settings.clip_norm!r}")


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
    try:
        tape.backward(value)     # the tape frees its records: nothing grows from step to step
    except BaseException:        # a backward pass stopped by a second Ctrl-C: the weights writeable again
        tape.release()
        raise
    with StopSignals.holding():  # a second Ctrl-C waits for the update: never half an update in the weights
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
        self.write(f"\r{line}" if self.in_place else f"{line}\n")

    def write(self, text):
        """A status line is a courtesy: a stream that fails (closed, full, a terminal gone) is dropped, never
        the training."""
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.stream = None

    def close(self):
        if self.in_place and self.stream is not None:
            self.write("\n")


STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")     # Ctrl-C, kill, a closed terminal or a dropped ssh


class StopSignals:
    """While open: Ctrl-C (SIGINT), SIGTERM and SIGHUP are recorded (.received: the first one's name), for the
    work under way to stop where it can keep what it has. A later signal stops at once (KeyboardInterrupt) only
    inside `with signals.dropping():`, work that can be dropped whole (a forward and backward pass, an
    evaluation); anywhere else (an update, a save) it is recorded and the work finished.

    One is open at a time: a `with StopSignals()` inside another (train() inside the command line's, which
    also covers the save) is that same one (StopSignals.opened). Outside the main thread signals are left alone.
    """
    opened = None

    def __new__(cls):
        return cls.opened or super().__new__(cls)

    def __enter__(self):
        if StopSignals.opened is self:
            self.depth += 1
            return self
        self.received, self.depth, self.may_drop, self.previous, self.last_work = None, 1, False, {}, False
        if threading.current_thread() is threading.main_thread():
            for name in STOP_SIGNALS:
                number = getattr(signal, name)
                self.previous[number] = signal.signal(number, self.receive)
        StopSignals.opened = self
        return self

    def receive(self, number, frame):
        if self.received and self.may_drop:
            self.may_drop = False                  # one KeyboardInterrupt: the handler that catches it runs whole
            raise KeyboardInterrupt
        self.received = self.received or signal.Signals(number).name

    @contextlib.contextmanager
    def dropping(self):
        """Work that a second signal may stop at once: it leaves nothing half-written."""
        self.may_drop = True
        try:
            yield
        finally:
            self.may_drop = False

    @classmethod
    @contextlib.contextmanager
    def holding(cls):
        """Work no signal may cut in half (an update of the weights) inside a dropping() one."""
        signals = cls.opened
        may_drop = signals is not None and signals.may_drop
        if may_drop:
            signals.may_drop = False
        try:
            yield
        finally:
            if may_drop:
                signals.may_drop = True

    def __exit__(self, *exception):
        self.depth -= 1
        if self.depth:
            return
        StopSignals.opened = None
        for number, handler in self.previous.items():
            signal.signal(number, signal.SIG_IGN if self.received and self.last_work else handler)

    def the_last_work(self):
        """The process ends after this work (a command): once a signal came, later ones (the second of a double
        Ctrl-C, 20 ms late) are ignored to the end, so they cannot kill it after its last line."""
        self.last_work = True


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
    check_settings(settings)
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
    test_exact_match = test_size = None
    with StopSignals() as signals:
        try:
            for step in range(1, settings.steps + 1):
                if signals.received:
                    stopped = f"interrupted ({signals.received}) after step {step - 1}"
                    break
                start = time.perf_counter()
                batch = task.batch(settings.batch_size, data_rng)
                optimizer.lr = schedule(step)
                try:
                    with signals.dropping():
                        loss = train_step(model, optimizer, batch, task.loss, settings.label_smoothing,
                                          settings.clip_norm)
                except FloatingPointError:           # Adam refused an update that overflowed: the weights are kept
                    stopped = f"the update of step {step} would make weights NaN or infinite"
                    break
                except MemoryError:                  # Adam writes the weights last: those of the last step
                    stopped = f"step {step} needed more memory than there is"
                    break
                train_seconds += time.perf_counter() - start
                if not np.isfinite(loss):
                    stopped = f"the loss was {loss} at step {step}"
                    break
                losses.append(loss)
                evaluating = (settings.eval_every and step % settings.eval_every == 0) or step == settings.steps
                if evaluating:
                    try:
                        with signals.dropping():
                            eval_history.append((step, task.evaluate(model)))
                    except MemoryError:
                        stopped = f"the evaluation after step {step} needed more memory than there is"
                        break
                    bar.value = eval_history[-1][1]
                bar.update(step, losses[-1], force=evaluating)
                if evaluating and stops_early and bar.value >= settings.target_accuracy:
                    reached_at = step
                    break
            if stopped is None and not signals.received:
                with signals.dropping():
                    test_exact_match, test_size = task.test(model) or (None, None)    # once
        except KeyboardInterrupt:                    # a second signal: the work under way dropped, no update half made
            pass
        except MemoryError:
            stopped = f"the test split after step {len(losses)} needed more memory than there is"
        if stopped is None and signals.received:
            stopped = f"interrupted ({signals.received}) after step {len(losses)}"
    bar.close()

    last = eval_history[-1][1] if eval_history else None
    steps = len(losses)                                  # the steps whose update the model holds
    return TrainResult(task=task.name, steps=steps, wall_seconds=time.perf_counter() - wall_start,
                       train_seconds=train_seconds, ms_per_step=1000.0 * train_seconds / max(steps, 1),
                       exact_match=last if task.exact else None, held_out_loss=None if task.exact else last,
                       final_loss=losses[-1] if losses else None, reached_target_at_step=reached_at,
                       losses=losses, eval_history=eval_history, stopped=stopped,
                       test_exact_match=test_exact_match, test_size=test_size, model=model)
