"""Train a Transformer on the copy or reverse task, and measure it by exact match.

    config = TransformerConfig(vocab_size=data.vocab_size(10), max_len=11, dropout=0.0)
    result = train(config, task="reverse")
    result.exact_match, result.reached_target_at_step, result.model

Each step draws a fresh batch, runs the model inside a Tape, backpropagates
the cross-entropy and takes one Adam step at the learning rate of the paper's
warmup schedule. Every eval_every steps the model greedily decodes a held-out
set; training stops early once the fraction of rows decoded exactly right
reaches target_accuracy.
"""
import dataclasses
import sys
import time

import numpy as np

from . import functional as F
from .data import EOS, PAD, make_batch, vocab_size
from .decode import greedy
from .nn import Transformer
from .optim import Adam, WarmupSchedule, clip_grad_norm
from .tensor import Tape

EVAL_SEED_OFFSET = 1_000_000     # the held-out set's seed is seed + this: no overlap with training streams
# The defaults of train() and of `python -m tinytransformer train`, chosen for the fewest
# steps to 99% held-out exact match on the classroom model: over 20 seeds, scale 1 with
# warmup 100 took a median 400 steps, scale 2 with warmup 200 800 (benchmarks/README.md).
LR_SCALE, WARMUP, EVAL_EVERY = 1.0, 100, 100


def exact_match(pred_ids, tgt_out):
    """Fraction of rows whose prediction is right at every position up to and including EOS.

    pred_ids (B, L) decoded ids without BOS (PAD after EOS), tgt_out (B, T)
    with one EOS per row. A prediction shorter than its target's EOS is wrong;
    what comes after the target's EOS is not compared.
    """
    pred_ids, tgt_out = np.asarray(pred_ids), np.asarray(tgt_out)
    if pred_ids.ndim != 2 or tgt_out.ndim != 2 or len(pred_ids) != len(tgt_out):
        raise ValueError(f"exact_match: need pred_ids (B, L) and tgt_out (B, T) with the same B, "
                         f"got {pred_ids.shape} and {tgt_out.shape}")
    has_eos = (tgt_out == EOS).any(axis=1)                                  # (B,)
    if not has_eos.all():
        raise ValueError(f"exact_match: row {np.argmin(has_eos)} of tgt_out has no EOS")
    B, T = tgt_out.shape
    pred = np.full((B, T), PAD, dtype=pred_ids.dtype)                       # (B, T) cut or PAD-extended
    width = min(T, pred_ids.shape[1])
    pred[:, :width] = pred_ids[:, :width]
    eos_at = (tgt_out == EOS).argmax(axis=1)                                # (B,) first EOS of each row
    compared = np.arange(T)[None, :] <= eos_at[:, None]                     # (B, T) up to and including EOS
    right = ((pred == tgt_out) | ~compared).all(axis=1)                     # (B,)
    return float(right.mean())


def evaluate(model, batch):
    """Exact match of greedy decoding on a held-out Batch (as many steps as tgt_out has positions)."""
    return exact_match(greedy(model, batch.src, max_len=batch.tgt_out.shape[1]), batch.tgt_out)


def train_step(model, optimizer, batch, label_smoothing=0.0, clip_norm=None):
    """Forward, loss, backward, (clip), update. Returns the loss as a float."""
    with Tape() as tape:
        logits = model(batch.src, batch.tgt_in)                             # (B, T + 1, V)
        loss = F.cross_entropy(logits, batch.tgt_out, ignore_index=PAD, label_smoothing=label_smoothing)
    optimizer.zero_grad()
    tape.backward(loss)          # the tape frees its records: nothing grows from step to step
    if clip_norm is not None:
        clip_grad_norm(optimizer.params, clip_norm)
    optimizer.step()
    return float(loss.data)


@dataclasses.dataclass
class TrainResult:
    task: str
    steps: int                             # steps taken (fewer than asked when the target was reached)
    wall_seconds: float                    # everything: training, evaluation, setup
    train_seconds: float                   # the training steps alone, batches included
    ms_per_step: float                     # train_seconds / steps, in milliseconds
    exact_match: float                     # on the held-out set, after the last step
    final_loss: float
    reached_target_at_step: int | None
    losses: list                           # the training loss of every step
    eval_history: list                     # (step, exact match) of every evaluation
    model: Transformer = dataclasses.field(repr=False)

    def summary(self):
        """Everything but the model, as a dict for JSON."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)
                if field.name != "model"}


class Progress:
    """One status line, rewritten in place with \\r. stream: True for stderr, False for none, or a text stream."""

    def __init__(self, total_steps, stream=True, every=10):
        self.stream = sys.stderr if stream is True else stream or None    # sys.stderr now: notebooks replace it
        self.total_steps, self.every = total_steps, every
        self.accuracy = None

    def update(self, step, loss, force=False):
        if self.stream is None or not (force or step % self.every == 0):
            return
        accuracy = "   -  " if self.accuracy is None else f"{self.accuracy:6.1%}"
        self.stream.write(f"\rstep {step:>{len(str(self.total_steps))}}/{self.total_steps}  "
                          f"loss {loss:.4f}  exact match {accuracy}")
        self.stream.flush()

    def close(self):
        if self.stream is not None:
            self.stream.write("\n")


def train(config, task="reverse", *, seq_len=10, n_symbols=10, batch_size=64, steps=3000,
          lr_scale=LR_SCALE, warmup=WARMUP, clip_norm=None, label_smoothing=0.0, variable_length=False,
          seed=0, eval_every=EVAL_EVERY, eval_size=1000, target_accuracy=0.99, progress=True):
    """Train a new Transformer(config) on task; returns a TrainResult (the model included).

    config: a TransformerConfig with room for the task (vocab_size >= n_symbols + 3,
    max_len >= seq_len + 1). steps: at most this many; eval_every=0 evaluates
    only at the end; target_accuracy=None never stops early. progress: True for a
    status line on stderr, False for none, or a text stream. Same seed, same losses, bit for bit.
    """
    if config.vocab_size < vocab_size(n_symbols) or config.max_len < seq_len + 1:
        raise ValueError(f"train: the config (vocab_size={config.vocab_size}, max_len={config.max_len}) "
                         f"has no room for {n_symbols} symbols and sequences of {seq_len} + EOS; "
                         f"it needs vocab_size >= {vocab_size(n_symbols)} and max_len >= {seq_len + 1}")
    if steps < 1 or eval_every < 0:
        raise ValueError(f"train: need steps >= 1 and eval_every >= 0, got {steps} and {eval_every}")
    wall_start = time.perf_counter()
    model_seed, data_seed = np.random.SeedSequence(seed).spawn(2)          # two independent streams
    model = Transformer(config, rng=np.random.default_rng(model_seed))
    data_rng = np.random.default_rng(data_seed)
    eval_set = make_batch(task, eval_size, seq_len, n_symbols, seed + EVAL_SEED_OFFSET, variable_length)
    optimizer = Adam(model.parameters(), lr=0.0)
    schedule = WarmupSchedule(config.d_model, warmup, lr_scale)
    bar = Progress(steps, progress)

    losses, eval_history, reached_at, train_seconds = [], [], None, 0.0
    for step in range(1, steps + 1):
        start = time.perf_counter()
        batch = make_batch(task, batch_size, seq_len, n_symbols, data_rng, variable_length)
        optimizer.lr = schedule(step)
        losses.append(train_step(model, optimizer, batch, label_smoothing, clip_norm))
        train_seconds += time.perf_counter() - start
        evaluating = (eval_every and step % eval_every == 0) or step == steps
        if evaluating:
            eval_history.append((step, evaluate(model, eval_set)))
            bar.accuracy = eval_history[-1][1]
        bar.update(step, losses[-1], force=evaluating)
        if evaluating and target_accuracy is not None and bar.accuracy >= target_accuracy:
            reached_at = step
            break
    bar.close()

    return TrainResult(task=task, steps=step, wall_seconds=time.perf_counter() - wall_start,
                       train_seconds=train_seconds, ms_per_step=1000.0 * train_seconds / step,
                       exact_match=eval_history[-1][1], final_loss=losses[-1],
                       reached_target_at_step=reached_at, losses=losses, eval_history=eval_history,
                       model=model)
