"""Train any of the three models on any task, one loop for all; measure by exact match or held-out loss.

    config = TransformerConfig(vocab_size=data.vocab_size(10), max_len=11, dropout=0.0)
    result = train(config, task="reverse")
    result.exact_match, result.reached_target_at_step, result.model

    task = tasks.AdditionTask(digits=3)                  # or TextTask, MaskedLMTask, ClassifyTask
    result = train(task.config(dropout=0.0), task)       # result.model is a tt.nn.GPT

Each step draws a fresh batch from the task, runs the model inside a Tape,
backpropagates the task's loss and takes one Adam step at the learning rate
of the paper's warmup schedule. Every eval_every steps the task evaluates the
model on its held-out set: the exact match (copy, reverse, addition,
classify), and then training stops once it reaches target_accuracy; or the
held-out loss (text, mlm). What differs from task to task (the model, a batch,
the loss, the evaluation) lives in tasks.py; the loop below is the same.
"""
import dataclasses
import sys
import time

import numpy as np

from .optim import Adam, WarmupSchedule, clip_grad_norm
from .tasks import CLASSROOM, SequenceTask, new_model, transformer_loss
from .tasks import exact_match                             # noqa: F401  (imported from here by tests and notebooks)
from .tasks import evaluate_sequences as evaluate          # noqa: F401  (the copy/reverse evaluation, by its old name)
from .tensor import Tape

EVAL_SEED_OFFSET = 1_000_000     # the held-out set's seed is seed + this: no overlap with training streams
# The defaults of train(): the classroom schedule, as `train --task copy|reverse` uses it (tasks.py says why).
LR_SCALE, WARMUP, EVAL_EVERY = CLASSROOM["lr"], CLASSROOM["warmup"], CLASSROOM["eval_every"]


def train_step(model, optimizer, batch, label_smoothing=0.0, clip_norm=None, loss=transformer_loss):
    """Forward, loss, backward, (clip), update. Returns the loss as a float.

    loss(model, batch, label_smoothing) -> a scalar Tensor: by default the
    encoder-decoder's on a copy/reverse Batch; a task's .loss for the others.
    """
    with Tape() as tape:
        value = loss(model, batch, label_smoothing)
    optimizer.zero_grad()
    tape.backward(value)         # the tape frees its records: nothing grows from step to step
    if clip_norm is not None:
        clip_grad_norm(optimizer.params, clip_norm)
    optimizer.step()
    return float(value.data)


@dataclasses.dataclass
class TrainResult:
    task: str
    steps: int                             # steps taken (fewer than asked when the target was reached)
    wall_seconds: float                    # everything: training, evaluation, setup
    train_seconds: float                   # the training steps alone, batches included
    ms_per_step: float                     # train_seconds / steps, in milliseconds
    exact_match: float | None              # on the held-out set, after the last step (None: no exact answer)
    held_out_loss: float | None            # the language models' held-out loss after the last step, else None
    final_loss: float
    reached_target_at_step: int | None
    losses: list                           # the training loss of every step
    eval_history: list                     # (step, exact match or held-out loss) of every evaluation
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
            value = f"{self.value:6.1%}" if self.metric == "exact match" else f"{self.value:.4f}"
        line = (f"step {step:>{len(str(self.total_steps))}}/{self.total_steps}  "
                f"loss {loss:.4f}  {self.metric} {value}")
        self.stream.write(f"\r{line}" if self.in_place else f"{line}\n")
        self.stream.flush()

    def close(self):
        if self.in_place:
            self.stream.write("\n")


def train(config, task="reverse", *, seq_len=10, n_symbols=10, batch_size=64, steps=3000,
          lr_scale=LR_SCALE, warmup=WARMUP, clip_norm=None, label_smoothing=0.0, variable_length=False,
          seed=0, eval_every=EVAL_EVERY, eval_size=1000, target_accuracy=0.99, progress=True, model=None):
    """Train a new model of the task's class on task; returns a TrainResult (the model included).

    task: "copy" or "reverse" (seq_len, n_symbols, variable_length and
    eval_size describe it; the held-out set's seed is seed + EVAL_SEED_OFFSET),
    or a task object from tasks.py, which carries its own sizes and held-out set.
    config: a TransformerConfig with room for the task (task.config(...) makes
    one). model: train this model instead of a new one (fine-tuning); then
    config may be None. steps: at most this many; eval_every=0 evaluates only at
    the end; target_accuracy=None never stops early (tasks without an exact
    answer never do). progress: True for a status on stderr, False for none, or
    a text stream. Same seed, same losses, bit for bit.
    """
    if isinstance(task, str):
        if task not in ("copy", "reverse"):
            raise ValueError(f"train: a task by name is 'copy' or 'reverse', got {task!r}; pass the others "
                             "as objects, e.g. tasks.AdditionTask()")
        task = SequenceTask(task, seq_len, n_symbols, variable_length, eval_size, seed + EVAL_SEED_OFFSET)
    if model is not None:
        if config is not None and config != model.config:
            raise ValueError("train: config differs from model.config; pass config=None to train the model")
        if type(model).__name__ != task.model_name:
            raise ValueError(f"train: the {task.name} task trains a {task.model_name}, got a {type(model).__name__}")
        config = model.config
    task.check(config)
    if steps < 1 or eval_every < 0:
        raise ValueError(f"train: need steps >= 1 and eval_every >= 0, got {steps} and {eval_every}")
    wall_start = time.perf_counter()
    model_seed, data_seed = np.random.SeedSequence(seed).spawn(2)          # two independent streams
    if model is None:
        model = new_model(task, config, np.random.default_rng(model_seed))
    data_rng = np.random.default_rng(data_seed)
    optimizer = Adam(model.parameters(), lr=0.0)
    schedule = WarmupSchedule(config.d_model, warmup, lr_scale)
    bar = Progress(steps, progress, metric="exact match" if task.exact else "held-out loss")
    stops_early = task.exact and target_accuracy is not None

    losses, eval_history, reached_at, train_seconds = [], [], None, 0.0
    for step in range(1, steps + 1):
        start = time.perf_counter()
        batch = task.batch(batch_size, data_rng)
        optimizer.lr = schedule(step)
        losses.append(train_step(model, optimizer, batch, label_smoothing, clip_norm, task.loss))
        train_seconds += time.perf_counter() - start
        evaluating = (eval_every and step % eval_every == 0) or step == steps
        if evaluating:
            eval_history.append((step, task.evaluate(model)))
            bar.value = eval_history[-1][1]
        bar.update(step, losses[-1], force=evaluating)
        if evaluating and stops_early and bar.value >= target_accuracy:
            reached_at = step
            break
    bar.close()

    last = eval_history[-1][1]
    return TrainResult(task=task.name, steps=step, wall_seconds=time.perf_counter() - wall_start,
                       train_seconds=train_seconds, ms_per_step=1000.0 * train_seconds / step,
                       exact_match=last if task.exact else None, held_out_loss=None if task.exact else last,
                       final_loss=losses[-1], reached_target_at_step=reached_at, losses=losses,
                       eval_history=eval_history, model=model)
