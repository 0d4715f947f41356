"""The base of BERT's classification tasks: one label per sequence, answered through [CLS].

A classification task draws labelled sequences; the model reads a sequence and
BERT's [CLS] head gives one logit per class (nn/bert.py's classify). The base
holds everything but the data:

    @dataclasses.dataclass
    class PalindromeTask(ClassificationTask):
        name, label_names = "palindrome", ("no", "yes")
        def room(self): return dict(vocab_size=..., max_len=..., n_classes=2)
        def describe(self): return "8 symbols, length 7"
        def sequences(self, n, rng): return LabelledBatch(ids, labels)     # (n, T) with CLS first, (n,)
        def token_names(self, ids): return [...]

It draws the test sequences (held_out), the labelled ones and the validation
ones from three seeds spawned from `seed`, keeps only labelled sequences that
are not test ones and validation sequences that are neither, trains on the
labelled ones drawn with replacement, stops on the validation accuracy and
reports the test accuracy, measured once at the end.
"""
import abc
import dataclasses

import numpy as np

from .. import functional as F, nn
from ..memory import check_fits
from ..nn import inference
from .batches import LabelledBatch
from .options import option
from .task import BERT_STYLE, Task, TrainSettings, check_held_out_fits, check_option, draw_apart


@dataclasses.dataclass
class ClassificationTask(Task):
    """BERT fine-tuned to label whole sequences: n_labelled fixed training sequences, n_held_out others to
    measure the accuracy on. A subclass writes room, describe, sequences and token_names and sets name and
    label_names."""
    n_labelled: int = option(256, "--labelled", "labelled training sequences")
    n_held_out: int = 1000           # test sequences (held_out), measured once at the end
    n_validation: int = 1000         # validation sequences, neither labelled nor test ones: training stops on them
    seed: int = 0                    # seed of the labelled, the test and the validation sequences

    model_class, model_style, measure = nn.BERT, BERT_STYLE, "accuracy"
    # A few hundred steps at 0.3 of the warmup schedule: fine-tuning on a few hundred fixed sequences
    # overfits and swings at the full rate (docs/extending.md: choosing a learning rate). A subclass that
    # changes some: settings = dataclasses.replace(ClassificationTask.settings, steps=...).
    settings = TrainSettings(steps=300, eval_every=50, lr_scale=0.3)
    label_names = ()                 # the classes' names, in label order: ("copy", "reverse")

    @abc.abstractmethod
    def sequences(self, n, rng):
        """n labelled sequences drawn from rng: a LabelledBatch of ids (n, T), [CLS] first, and labels (n,)."""

    @abc.abstractmethod
    def token_names(self, ids):
        """A sequence's token ids as readable names, for show()."""

    def __post_init__(self):
        check_option(self, "n_labelled", 1)
        check_option(self, "n_held_out", 1)
        check_option(self, "n_validation", 1)
        # each labelled row is drawn (int64), kept as bytes to compare with the held-out rows, and copied once kept
        check_fits(4 * 8 * self.n_labelled * self.room()["max_len"], f"n_labelled = {self.n_labelled}", self.name)
        check_held_out_fits(self, self.n_held_out, self.room()["max_len"])
        labelled_seed, eval_seed, validation_seed = np.random.SeedSequence(self.seed).spawn(3)
        self.held_out = self.sequences(self.n_held_out, np.random.default_rng(eval_seed))
        drawn = self.sequences(self.n_labelled, np.random.default_rng(labelled_seed))
        held_out_rows = {row.tobytes() for row in self.held_out.ids}
        fresh = np.array([row.tobytes() not in held_out_rows for row in drawn.ids], dtype=bool)   # (n_labelled,)
        if not fresh.any():
            raise ValueError(f"{type(self).__name__}: every one of the {self.n_labelled} labelled sequences is "
                             "held out; give more symbols, longer sequences or a smaller n_held_out")
        self.labelled = LabelledBatch(drawn.ids[fresh], drawn.labels[fresh])   # none of them held out
        taken = held_out_rows | {row.tobytes() for row in self.labelled.ids}
        self.validation, self.apart = draw_apart(self.sequences, self.n_validation, taken,
                                                 np.random.default_rng(validation_seed))

    def batch(self, batch_size, rng):
        rows = rng.integers(0, len(self.labelled.labels), size=batch_size)   # (B,) with replacement
        return LabelledBatch(self.labelled.ids[rows], self.labelled.labels[rows])

    def logits(self, model, ids):
        """ids (B, T) -> (B, n_classes): the [CLS] head's logits."""
        return model.classify(ids)

    def loss(self, model, batch, label_smoothing=0.0):
        return F.cross_entropy(self.logits(model, batch.ids), batch.labels, label_smoothing=label_smoothing)

    def predict(self, model, ids):
        """ids (B, T) -> (B,) the most likely label of each sequence, in eval mode and outside any Tape."""
        with inference(model, f"{type(self).__name__}.predict"):
            return self.logits(model, ids).data.argmax(axis=-1)

    def accuracy(self, model, sequences):
        """The share of sequences (a LabelledBatch) labelled right."""
        return float((self.predict(model, sequences.ids) == sequences.labels).mean())

    def evaluate(self, model):
        """The validation accuracy, which training stops on."""
        return self.accuracy(model, self.validation)

    def test(self, model):
        """The test accuracy and the number of test sequences."""
        return self.accuracy(model, self.held_out), len(self.held_out.labels)

    def show(self, model, n=3):
        ids, labels = (rows[:n] for rows in self.validation)
        return [f"validation sequences: {' or '.join(self.label_names)}?"] + [
            f"  {' '.join(self.token_names(row)):<40} {self.label_names[label]:<8} "
            f"predicted {self.label_names[guess]}"
            for row, label, guess in zip(ids, labels, self.predict(model, ids))]

    def plot_example(self):
        """The first validation sequence, its tokens as both keys and queries."""
        ids = self.validation.ids[:1]                                         # (1, T)
        names = self.token_names(ids[0])
        return (ids,), names, names
