"""copy and reverse: the encoder-decoder's classroom tasks, their data and their task classes.

Token ids: PAD=0, BOS=1, EOS=2 (vocabulary.py), then the symbols 3, 4, ..., 3 + n_symbols - 1.
One example of the copy task with seq_len=4:

    src     = [5, 3, 9, 4]            what the encoder reads
    tgt_in  = [BOS, 5, 3, 9, 4]       what the decoder reads (shifted right)
    tgt_out = [5, 3, 9, 4, EOS]       what the decoder must predict

The reverse task is the same with the symbols reversed in tgt_in and tgt_out.
With variable lengths, shorter examples are padded with PAD at the end.
Evaluated by greedy decoding: training stops on the exact match of a validation
set, and the test set (held_out) is measured once, at the end. Both are drawn
from seed, apart (no source in both, unless the settings make too few sequences); training draws fresh batches from its own stream.
"""
import abc
import dataclasses

import numpy as np

from .. import functional as F, nn
from ..decode import greedy
from ..vocabulary import BOS, EOS, N_SPECIAL, PAD
from .batches import Batch
from .options import option
from .task import Task, check_held_out_fits, check_option, draw_apart, exact_match

TASK_NAMES = ("copy", "reverse")           # the two tasks of this file, by name (tasks.TASKS holds every task)


def vocab_size_for(n_symbols):
    """Size of the vocabulary: the special tokens plus the symbols."""
    return N_SPECIAL + n_symbols


def token_names(ids):
    """Token ids as readable names: the symbols as 0, 1, 2, ..., then PAD ".", BOS "<s>", EOS "</s>"."""
    special = {PAD: ".", BOS: "<s>", EOS: "</s>"}
    return [special.get(int(i), str(int(i) - N_SPECIAL)) for i in ids]


def copy_target(src, lengths):
    """copy's target: the source itself, (B, T)."""
    return src


def reverse_target(src, lengths):
    """reverse's target: each row's symbols backwards, PAD where the source has PAD, (B, T)."""
    T = src.shape[1]
    positions = np.arange(T)                                                 # (T,)
    # position t of the reversed row reads position length-1-t of the source
    source_index = np.clip(lengths[:, None] - 1 - positions[None, :], 0, T - 1)  # (B, T)
    return np.where(src != PAD, np.take_along_axis(src, source_index, axis=1), PAD)


def draw_sequences(target, batch_size, seq_len, n_symbols, rng, variable_length=False):
    """Draw `batch_size` fresh source sequences and make each one's answer with target(src, lengths) -> (B, T),
    PAD where src has PAD: a Batch for the encoder-decoder.

    rng: an np.random.Generator or an int seed. With variable_length, each
    example's length is drawn uniformly from 1..seq_len and the rest is PAD.
    """
    if seq_len < 1 or n_symbols < 1 or batch_size < 1:
        raise ValueError(
            "make_batch: batch_size, seq_len and n_symbols must be >= 1, got "
            f"{batch_size}, {seq_len}, {n_symbols}")
    rng = np.random.default_rng(rng)
    B, T = batch_size, seq_len
    symbols = rng.integers(N_SPECIAL, N_SPECIAL + n_symbols, size=(B, T))  # (B, T)
    if variable_length:
        lengths = rng.integers(1, T + 1, size=B)                             # (B,)
    else:
        lengths = np.full(B, T)
    real = np.arange(T)[None, :] < lengths[:, None]                          # (B, T) True where a symbol stands
    src = np.where(real, symbols, PAD)                                       # (B, T)
    answer = target(src, lengths)                                            # (B, T)

    tgt_in = np.full((B, T + 1), PAD, dtype=np.int64)
    tgt_out = np.full((B, T + 1), PAD, dtype=np.int64)
    tgt_in[:, 0] = BOS
    tgt_in[:, 1:] = answer
    tgt_out[:, :T] = answer
    tgt_out[np.arange(B), lengths] = EOS
    return Batch(src.astype(np.int64), tgt_in, tgt_out)


def make_batch(task, batch_size, seq_len, n_symbols, rng, variable_length=False):
    """Draw `batch_size` fresh examples of `task` ("copy" or "reverse"): draw_sequences with its target."""
    targets = {"copy": copy_target, "reverse": reverse_target}
    if task not in targets:
        raise ValueError(f"make_batch: task must be one of {TASK_NAMES}, got {task!r}")
    return draw_sequences(targets[task], batch_size, seq_len, n_symbols, rng, variable_length)


def transformer_loss(model, batch, label_smoothing=0.0):
    """Cross-entropy of the encoder-decoder on a copy/reverse Batch, PAD not counted."""
    logits = model(batch.src, batch.tgt_in)                                 # (B, T + 1, V)
    return F.cross_entropy(logits, batch.tgt_out, ignore_index=PAD, label_smoothing=label_smoothing)


def evaluate_sequences(model, batch):
    """Exact match of greedy decoding on a held-out copy/reverse Batch (as many steps as tgt_out has positions)."""
    return exact_match(greedy(model, batch.src, max_len=batch.tgt_out.shape[1]), batch.tgt_out)


@dataclasses.dataclass
class SequenceTask(Task):
    """The base of the encoder-decoder's symbol tasks: a source of symbols in, an answer of symbols out,
    evaluated by greedy decoding. A subclass sets name and writes the static method target(src, lengths) ->
    (B, T), PAD where src has PAD."""
    seq_len: int = option(10, "--seq-len", "symbols per sequence")
    n_symbols: int = option(10, "--symbols", "distinct symbols")
    variable_length: bool = option(False, "--variable-length", "lengths 1..seq-len, padded with PAD")
    n_held_out: int = 1000           # test sequences (held_out), measured once at the end
    n_validation: int = 1000         # validation sequences, none of them a test sequence: training stops on them
    seed: int = 0                    # seed of the test and the validation sequences

    model_class = nn.Transformer

    @staticmethod
    @abc.abstractmethod
    def target(src, lengths):
        """The answer to each source row, (B, T) from src (B, T) and its lengths (B,); PAD where src has PAD."""

    def __post_init__(self):
        for field in ("seq_len", "n_symbols", "n_held_out", "n_validation"):
            check_option(self, field, 1)
        check_held_out_fits(self, self.n_held_out, self.seq_len + 1)
        self.held_out = self.batch(self.n_held_out, self.seed)                # the test split
        validation_seed = np.random.SeedSequence(self.seed).spawn(1)[0]      # apart from the test's stream
        self.validation, self.apart = draw_apart(self.batch, self.n_validation,
                                                 {row.tobytes() for row in self.held_out.src},
                                                 np.random.default_rng(validation_seed))

    def room(self):
        return dict(vocab_size=vocab_size_for(self.n_symbols), max_len=self.seq_len + 1)    # + 1: BOS or EOS

    def describe(self):
        return (f"{self.n_symbols} symbols, length {self.seq_len}" + (" (variable)" if self.variable_length else "")
                + ("" if self.apart else "; validation and test sequences overlap (so few sequences exist)"))

    def batch(self, batch_size, rng):
        return draw_sequences(self.target, batch_size, self.seq_len, self.n_symbols, rng, self.variable_length)

    loss = staticmethod(transformer_loss)

    def evaluate(self, model):
        return evaluate_sequences(model, self.validation)

    def test(self, model):
        return evaluate_sequences(model, self.held_out), len(self.held_out.src)

    def show(self, model, n=3):
        """Lines showing n validation examples and the model's greedy answers."""
        src, _, tgt_out = (ids[:n] for ids in self.validation)
        predicted = greedy(model, src, max_len=tgt_out.shape[1])
        lines = ["validation examples (symbols as 0, 1, ..., . for PAD):"]
        for rows in zip(src, tgt_out, predicted):
            source, target, prediction = (" ".join(token_names(ids)) for ids in rows)
            lines += [f"  source     {source}", f"  target     {target}", f"  predicted  {prediction}", ""]
        return lines

    def plot_example(self):
        """(the model's inputs, key labels, query labels) of one validation example, for an attention map."""
        src, tgt_in, tgt_out = (ids[:1] for ids in self.validation)
        return (src, tgt_in), token_names(src[0]), token_names(tgt_out[0])


@dataclasses.dataclass
class CopyTask(SequenceTask):
    """copy for the encoder-decoder Transformer: write the source again; evaluated by greedy decoding."""

    name = "copy"
    target = staticmethod(copy_target)


@dataclasses.dataclass
class ReverseTask(SequenceTask):
    """reverse for the encoder-decoder Transformer: write the source backwards; evaluated by greedy decoding."""

    name = "reverse"
    target = staticmethod(reverse_target)
