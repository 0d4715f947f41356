"""ascending for BERT: is the sequence in order (each symbol at least the one before it)? Answered through [CLS].

Half the sequences are drawn in order; the other half are drawn in order and then have two positions
swapped, so an answer must look at every neighbouring pair, not at the first few symbols. The label is
read off the sequence itself (a swap of two equal symbols leaves it in order).
"""
import dataclasses

import numpy as np

from ..vocabulary import BERT_N_SPECIAL, CLS
from .batches import LabelledBatch
from .classification import ClassificationTask
from .options import option


@dataclasses.dataclass
class AscendingTask(ClassificationTask):
    """ascending for BERT: is the sequence in order? A yes/no label through [CLS]."""
    seq_len: int = option(8, "--seq-len", "symbols per sequence")
    n_symbols: int = option(10, "--symbols", "distinct symbols")
    n_labelled: int = option(4096, "--labelled", "labelled training sequences")   # 256 stayed near 70%

    settings = dataclasses.replace(ClassificationTask.settings, steps=1000)       # 300 steps reached 95%

    name, label_names = "ascending", ("no", "yes")

    def room(self):
        return dict(vocab_size=BERT_N_SPECIAL + self.n_symbols, max_len=self.seq_len + 1, n_classes=2)  # + 1: [CLS]

    def describe(self):
        return f"{self.n_symbols} symbols, length {self.seq_len}, {len(self.labelled.labels)} labelled"

    def sequences(self, n, rng):
        """n sequences, half in order and half with two positions swapped, [CLS] first; label 1 if in order."""
        T = self.seq_len
        symbols = np.sort(rng.integers(0, self.n_symbols, size=(n, T)), axis=1)          # (n, T) in order
        i = rng.integers(0, T, size=n)                                                    # (n,)
        j = (i + rng.integers(1, T, size=n)) % T                                          # (n,) never i
        swapped = rng.random(n) < 0.5                                                     # (n,)
        rows = np.arange(n)
        a, b = symbols[rows, i], symbols[rows, j]
        symbols[rows, i] = np.where(swapped, b, a)
        symbols[rows, j] = np.where(swapped, a, b)
        labels = (np.diff(symbols, axis=1) >= 0).all(axis=1).astype(np.int64)              # (n,)
        ids = np.concatenate([np.full((n, 1), CLS), BERT_N_SPECIAL + symbols], axis=1)   # (n, T + 1)
        return LabelledBatch(ids.astype(np.int64), labels)

    def token_names(self, ids):
        return ["[CLS]" if i == CLS else str(int(i) - BERT_N_SPECIAL) for i in ids]
