"""What every task gives the one training loop, every default in one place, and the shared measures.

A task is a small object that knows its data and its model:

    task = make_task("addition", digits=3)            # tasks/__init__.py: the tasks by name
    config = task.config()                            # the classroom model with room for the task
    model = task.new_model(config, rng)               # of task.model_class: nn.GPT here
    with Tape() as tape:
        loss = task.loss(model, task.batch(64, rng))
    task.evaluate(model)                              # validation exact match, or held-out loss
    task.test(model)                                  # test exact match, once at the end (None: no test split)

Each task is a dataclass subclassing Task: its fields are its data options
(seq_len, digits, ...) and their defaults, written only there; a field the
command line sets is declared with option() (options.py), its flag and help
beside it. Its class attributes say the rest: name, model_class, exact (True:
evaluate gives the exact match on a validation split, training may stop at a
target on it, and test gives the exact match on a test split that nothing
chose anything by, measured once at the end; False: evaluate gives the
held-out loss, lower is better, and nothing stops on it), model_style (the config
fields of its model family) and settings (a TrainSettings: the loop's settings for it). Task
declares the methods every task writes (room, describe, batch, loss,
evaluate, show) and those it may (test, for a task that stops on evaluate;
plot_example, for `train --plot`); a new task
is one file of tasks/ and its import and line in tasks/__init__.py's TASKS (the book's
page "Extending tinytransformer" walks through one). Two bases save most of
the writing: sequences.SequenceTask (symbols in, symbols out, for the
encoder-decoder) and classification.ClassificationTask (a label per sequence,
through BERT's [CLS]).
"""
import abc
import dataclasses

import numpy as np

from .. import functional as F
from ..memory import check_fits
from ..nn import TransformerConfig, inference, swiglu_d_ff
from ..nn.config import MODERN_BLOCK
from ..vocabulary import EOS, PAD
from .options import option

# The classroom model: TransformerConfig's default sizes (d_model 64, 4 heads, 2 layers, d_ff 128),
# trained without dropout; every task starts from it (the command line's --d-model and so on).
CLASSROOM_MODEL = dict(dropout=0.0)
GPT_STYLE = dict(positions="learned", norm_first=True, activation="gelu")     # GPT-2: pre-LN, GELU
# The modern block (as TransformerConfig.llama_style) with the classroom model's feed-forward weights:
# SwiGLU's three matrices at 2/3 of the classroom d_ff (nn.swiglu_d_ff(128) = 85) hold as many as its two
MODERN_STYLE = dict(MODERN_BLOCK, d_ff=swiglu_d_ff(TransformerConfig.d_ff))
BERT_STYLE = dict(positions="learned", norm_first=False, activation="gelu")   # BERT: post-LN, GELU


@dataclasses.dataclass(frozen=True)
class TrainSettings:
    """The training loop's settings. The defaults are the classroom schedule; each task changes a few.

    copy/reverse: the fewest steps to 99% held-out exact match on the classroom model: over 20
    seeds, scale 1 with warmup 100 took a median 400 steps, scale 2 with warmup 200 800
    (benchmarks/history.md). The book's training results page says how the others were chosen.
    """
    steps: int = option(3000, "--steps", "at most this many steps")
    batch_size: int = option(64, "--batch-size", "sequences per step")
    lr_scale: float = option(1.0, "--lr-scale", "scale of the warmup learning-rate schedule")   # optim.WarmupSchedule
    warmup: int = option(100, "--warmup", "steps of linear learning-rate warmup")
    eval_every: int = option(100, "--eval-every", "steps between validation evaluations (0 = only at the end)")
    target_accuracy: float | None = option(0.99, "--target-accuracy",     # None: never stop early
                                           "stop once validation exact match reaches this")
    clip_norm: float | None = option(None, "--clip-norm", "clip the gradients' joint norm to this")
    label_smoothing: float = option(0.0, "--label-smoothing", "label smoothing of the cross-entropy")

    def __post_init__(self):
        for name in ("steps", "batch_size", "warmup"):
            if not isinstance(getattr(self, name), (int, np.integer)) or getattr(self, name) < 1:
                raise ValueError(f"train: {name} must be a positive integer, got {getattr(self, name)!r}")
        if not isinstance(self.eval_every, (int, np.integer)) or self.eval_every < 0:
            raise ValueError(f"train: eval_every must be an integer >= 0 (0 = only at the end), got {self.eval_every!r}")
        if not 0 < self.lr_scale < np.inf:
            raise ValueError(f"train: lr_scale must be a finite number > 0, got {self.lr_scale!r}")
        if self.target_accuracy is not None and not 0 <= self.target_accuracy <= 1:
            raise ValueError(f"train: target_accuracy must be in [0, 1] (a share of exact matches), "
                             f"got {self.target_accuracy!r}")
        if self.clip_norm is not None and not self.clip_norm > 0:
            raise ValueError(f"train: clip_norm must be > 0, got {self.clip_norm!r}")
        if not 0 <= self.label_smoothing < 1:
            raise ValueError(f"train: label_smoothing must be in [0, 1), got {self.label_smoothing!r}")


def check_option(task, field, low, high=None):
    """task.<field> must be an integer from low (to high): one clear line naming the task and the option."""
    value = getattr(task, field)
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low or \
            (high is not None and value > high):
        expected = f">= {low}" if high is None else f"from {low} to {high}"
        raise ValueError(f"{task.name}: {field} must be an integer {expected}, got {value!r}")


def check_held_out_fits(task, rows, row_length):
    """The held-out set, rows sequences of row_length tokens, must fit in memory with the working arrays that
    draw it (about eight int64 arrays of its size) and with one attention map over it (float32, one head: it
    is evaluated in one batch): one line before anything is drawn."""
    check_fits(rows * (8 * 8 * row_length + 4 * row_length ** 2),
               f"the held-out set ({rows:,} sequences of {row_length:,} tokens) and one attention map over it",
               task.name)


class Task(abc.ABC):
    """The base of every task: what the training loop (train.py) and the command line (cli/train.py) ask
    of one. A task writes the abstract methods and sets name and model_class; the rest has defaults."""

    name = None                  # the task's name on the command line: "copy", "reverse", "addition", ...
    model_class = None           # nn.Transformer, nn.GPT, nn.BERT or nn.VisionTransformer
    exact = True                 # evaluate gives validation exact match (else the held-out loss)
    measure = "exact match"      # what evaluate's share is called: "accuracy" for a label per sequence
    examples = "sequences"       # what the test split holds, for the report: "images", "problems", ...
    model_style = {}             # config fields of the model family (GPT_STYLE, BERT_STYLE, MODERN_STYLE)
    settings = TrainSettings()

    @abc.abstractmethod
    def room(self):
        """What a config needs for this task: {"vocab_size": ..., "max_len": ...} (and n_classes)."""

    @abc.abstractmethod
    def describe(self):
        """The task's data in a few words, for the command line's first line ("10 symbols, length 10")."""

    @abc.abstractmethod
    def batch(self, batch_size, rng):
        """batch_size fresh training examples drawn from rng: a Batch, LMBatch, ... (batches.py) for loss."""

    @abc.abstractmethod
    def loss(self, model, batch, label_smoothing=0.0):
        """The training loss of model on batch: a scalar Tensor, recorded on the Tape around it."""

    @abc.abstractmethod
    def evaluate(self, model):
        """The measure training watches: exact match in [0, 1] on the validation split if exact (training
        stops on it), else the held-out loss (a float)."""

    def test(self, model):
        """(exact match in [0, 1], examples measured) on the test split, which nothing was chosen by: train
        calls it once, after the last step. None (this default): the task has no test split (text, mlm:
        nothing stops or is chosen on their held-out loss)."""
        return None

    @abc.abstractmethod
    def show(self, model, n=3):
        """Lines of text showing the model at work on n held-out examples."""

    def plot_example(self):
        """(the model's inputs, key labels, query labels) of one held-out example, for `train --plot`'s attention
        map; None (this default): --plot draws the loss curve alone."""
        return None

    @classmethod
    def model_styles(cls):
        """The config fields of the task's model for each choice of its options, for train --help: {the flags
        that choose it ("" for the defaults): model_style}. A task whose model_style depends on an option
        (text's --block) lists each."""
        return {"": cls.model_style}

    def config(self, **changes):
        """The classroom model for this task, a config of its model's family; changes override (d_model=32, ...)."""
        return self.model_class.config_class(**{**CLASSROOM_MODEL, **self.model_style, **self.room(), **changes})

    def check(self, config):
        """config must have room for the task: at least the vocabulary and positions config() gives it."""
        room = self.room()
        if not isinstance(config, self.model_class.config_class):
            raise TypeError(f"train: the {self.name} task trains a {self.model_class.__name__}, whose config is a "
                            f"{self.model_class.config_class.__name__}; got a {type(config).__name__}")
        sizes = [name for name in ("vocab_size", "max_len") if name in room]
        short = [f"{name} >= {room[name]}" for name in sizes if getattr(config, name) < room[name]]
        n_classes = getattr(config, "n_classes", None)
        if n_classes != room.get("n_classes"):
            short.append(f"n_classes={room.get('n_classes')}")
        if short:
            given = ", ".join(f"{name}={getattr(config, name)}" for name in sizes)
            raise ValueError(f"train: the config ({given}, n_classes={n_classes}) does not fit the {self.name} "
                             "task; it needs " + ", ".join(short))

    def new_model(self, config, rng):
        """A fresh model of the class the task trains, on config, its weights drawn from rng."""
        return self.model_class(config, rng=rng)

    def held_out_measures(self, held_out_loss):
        """Other measures of a held-out loss, by name, for the report and --json (text: per character)."""
        return {}

    def model_measures(self, model):
        """Other measures of the trained model, by name, for --json (translate: BLEU, chrF, examples)."""
        return {}


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


def draw_apart(draw, n, taken, rng):
    """(n examples drawn by draw(k, rng), apart): a validation split apart from the test split. draw gives a
    batch (a NamedTuple of arrays, one row per example, its first array the key); taken holds the test rows'
    keys as bytes. Rows whose key is taken are skipped, in up to 20 rounds of n; apart is False when settings
    so small that the test split holds nearly every example left too few: then the first n rows drawn."""
    parts, found, first = [], 0, None
    for _ in range(20):
        batch = draw(n, rng)
        first = batch if first is None else first
        fresh = np.array([row.tobytes() not in taken for row in batch[0]], dtype=bool)     # (n,)
        parts.append(type(batch)(*(part[fresh] for part in batch)))
        found += int(fresh.sum())
        if found >= n:
            return type(batch)(*(np.concatenate(arrays)[:n] for arrays in zip(*parts))), True
    return first, False


def language_model_loss(model, batch, label_smoothing=0.0):
    """Cross-entropy of model(ids) (B, T, V) against targets (B, T), PAD not counted: GPT and BERT alike."""
    logits = model(batch.ids)                                                # (B, T, V)
    return F.cross_entropy(logits, batch.targets, ignore_index=PAD, label_smoothing=label_smoothing)


def held_out_loss(model, ids, targets):
    """Mean cross-entropy over the counted targets, in eval mode and outside any Tape (nothing recorded)."""
    with inference(model, "held_out_loss"):
        return float(F.cross_entropy(model(ids), targets, ignore_index=PAD).data)
