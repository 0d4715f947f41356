"""BERT's two tasks on the corpus of masked_lm.py: mlm, masked-LM pretraining, and classify, copy or reverse?

mlm corrupts the corpus by BERT's rule and is evaluated by the held-out loss;
with sentence_objective [CLS] also learns sentence_order.py's question.
classify fine-tunes on a few labelled sequences and answers through one of two
readouts: "cls", a new head on [CLS] (BERT's); or "cloze", the masked-LM head
asked to fill y's first symbol (cloze.py).
"""
import dataclasses

from .. import nn
from ..checkpoint import load_checkpoint
from ..nn import inference
from ..vocabulary import PAD
from .classification import ClassificationTask
from .cloze import cloze_logits
from .masked_lm import make_sequences, pretraining_batch, token_names, vocab_size_for
from .options import option
from .sentence_order import masked_lm_and_order_loss, sentence_pair_batch
from .task import (BERT_STYLE, Task, TrainSettings, check_held_out_fits, check_option, held_out_loss,
                   language_model_loss)


def min_half(k_max, variable_length):
    """The shortest half of mlm/classify's sequences: k_max (every half as long), or 3 with variable_length.

    With halves of one length, the middle of every sequence is at the same position; with variable
    lengths it moves, and the model must find it before it can compare the halves. The classroom
    model does not learn that in the default steps: its masked-LM loss stays above what knowing only
    which symbols the other half holds gives, and [CLS] stays near chance (README, "Train a
    Transformer, a GPT or a BERT").
    """
    return min(3, k_max) if variable_length else k_max


def describe_halves(task):
    """ "8 symbols, halves of 6": mlm's and classify's sequences in a few words."""
    halves = f"{task.k_min} to {task.k_max}" if task.variable_length else f"{task.k_max}"
    return f"{task.n_symbols} symbols, halves of {halves}"


def check_halves(task):
    """Halves of at least 2 symbols (a copy and a reverse must differ), over at least 2 symbols."""
    check_option(task, "k_max", 2)
    check_option(task, "n_symbols", 2)
    check_option(task, "n_held_out", 1)


@dataclasses.dataclass
class MaskedLMTask(Task):
    """Masked-LM pretraining of BERT on the corpus; evaluated by the loss on a fixed corrupted held-out set."""
    k_max: int = option(6, "--k-max", "symbols in each half of a sequence, k (the longest half)")
    n_symbols: int = option(8, "--symbols", "distinct symbols")
    variable_length: bool = option(False, "--variable-length", "halves of 3..k-max symbols, padded with PAD")
    p: float = 0.15                  # the share of symbol positions chosen for corruption
    sentence_objective: bool = option(False, "--sentence-objective", "also train [CLS] to tell a second half "
                                      "in the corpus's order (copy or reverse) from one shuffled, BERT's second "
                                      "pretraining task adapted to this corpus")
    n_held_out: int = 1000           # held-out sequences
    seed: int = 0                    # seed of the held-out sequences

    name, model_class, model_style, exact = "mlm", nn.BERT, BERT_STYLE, False
    settings = TrainSettings(steps=600, target_accuracy=None)

    def __post_init__(self):
        check_halves(self)
        if not 0 < self.p <= 1:
            raise ValueError(f"mlm: p (the share of symbols chosen) must be in (0, 1], got {self.p!r}")
        if self.sentence_objective and self.k_max < 3:
            raise ValueError(f"mlm: the sentence objective needs halves of at least 3 symbols (with 2, every "
                             f"order of x is x or its reverse), got k_max={self.k_max}")
        self.k_min = min_half(self.k_max, self.variable_length)
        check_held_out_fits(self, self.n_held_out, 1 + 2 * self.k_max)
        self.held_out = pretraining_batch(self.n_held_out, self.k_max, self.n_symbols, self.seed, self.p,
                                          self.k_min)

    def room(self):
        room = dict(vocab_size=vocab_size_for(self.n_symbols), max_len=1 + 2 * self.k_max)
        return {**room, "n_classes": 2} if self.sentence_objective else room

    def describe(self):
        return describe_halves(self) + ("; [CLS]: in order or shuffled?" if self.sentence_objective else "")

    def batch(self, batch_size, rng):
        make = sentence_pair_batch if self.sentence_objective else pretraining_batch
        return make(batch_size, self.k_max, self.n_symbols, rng, self.p, self.k_min)

    def loss(self, model, batch, label_smoothing=0.0):
        if self.sentence_objective:
            return masked_lm_and_order_loss(model, batch, label_smoothing)
        return language_model_loss(model, batch, label_smoothing)

    def evaluate(self, model):
        """The masked-LM loss on held-out corpus sequences (none shuffled), with or without the sentence objective."""
        return held_out_loss(model, *self.held_out)

    def show(self, model, n=3):
        """n held-out corrupted sequences and the model's guess at each chosen position."""
        ids, targets = (rows[:n] for rows in self.held_out)
        with inference(model, "MaskedLMTask.show"):
            guess = model(ids).data.argmax(axis=-1)                           # (n, T)
        lines = ["held-out sequences: what the model reads, and at the chosen positions the original / its guess"]
        for row, target, g in zip(ids, targets, guess):
            chosen = target != PAD
            lines += ["  reads    " + " ".join(token_names(row)),
                      "  answers  " + " ".join(f"{o}/{p}" if c else "." for o, p, c in
                                               zip(token_names(target), token_names(g), chosen)), ""]
        return lines

    def plot_example(self):
        ids = self.held_out.ids[:1]                                           # (1, T)
        return (ids,), token_names(ids[0]), token_names(ids[0])


@dataclasses.dataclass
class ClassifyTask(ClassificationTask):
    """Fine-tuning BERT to answer copy or reverse? Trained on n_labelled fixed examples, stopped on the
    accuracy on n_validation others, tested on n_held_out others still. readout: "cloze" (the masked-LM head fills y's first symbol) or "cls"
    (a new head on [CLS])."""
    k_max: int = option(6, "--k-max", "symbols in each half of a sequence, k (the longest half)")
    n_symbols: int = option(8, "--symbols", "distinct symbols")
    variable_length: bool = option(False, "--variable-length", "halves of 3..k-max symbols, padded with PAD")
    readout: str = option("cloze", "--readout", "how BERT answers: cloze (its masked-LM head fills y's first "
                          "symbol, hidden by [MASK]: x's first means copy, x's last reverse) or cls (a new head "
                          "on [CLS], as BERT fine-tunes)")
    pretrained: str | None = option(None, "--pretrained", "start from this masked-LM checkpoint "
                                    "(train --task mlm --save PATH)", metavar="PATH")

    name, label_names = "classify", ("copy", "reverse")
    READOUTS = ("cloze", "cls")

    def __post_init__(self):
        check_halves(self)
        if self.readout not in self.READOUTS:
            raise ValueError(f"classify: readout must be one of {', '.join(self.READOUTS)}, got {self.readout!r}")
        self.k_min = min_half(self.k_max, self.variable_length)
        super().__post_init__()

    def sequences(self, n, rng):
        return make_sequences(n, self.k_max, self.n_symbols, rng, self.k_min)

    token_names = staticmethod(token_names)

    def room(self):
        """The cls readout needs a 2-class [CLS] head; the cloze readout none (it reads the masked-LM head)."""
        return dict(vocab_size=vocab_size_for(self.n_symbols), max_len=1 + 2 * self.k_max,
                    n_classes=2 if self.readout == "cls" else None)

    def describe(self):
        return (describe_halves(self) + f"; {self.readout} readout"
                + ("" if self.apart else "; validation and test sequences overlap (so few sequences exist)"))

    def new_model(self, config, rng):
        """A fresh BERT on config; with `pretrained`, the checkpoint's BERT with config's dropout (its sizes
        are the checkpoint's) and, for the cls readout, a new [CLS] head drawn from rng."""
        if self.pretrained is None:
            return super().new_model(config, rng)
        pretrained = load_checkpoint(self.pretrained)
        if not isinstance(pretrained, nn.BERT):
            raise ValueError(f"classify: --pretrained needs a BERT checkpoint (train --task mlm --save), "
                             f"got a {type(pretrained).__name__}")
        model = nn.classifier_from(pretrained, self.room()["n_classes"], rng=rng, dropout=config.dropout)
        self.check(model.config)
        return model

    def logits(self, model, ids):
        """ids (B, T) -> (B, 2) logits of copy and reverse, by the task's readout."""
        return cloze_logits(model, ids) if self.readout == "cloze" else model.classify(ids)
