"""palindrome: BERT reads a sequence of symbols and answers through [CLS] whether it reads the same backwards."""
import dataclasses

import numpy as np

from ..vocabulary import BERT_N_SPECIAL, CLS
from .batches import LabelledBatch
from .classification import ClassificationTask
from .masked_lm import token_names
from .options import option


@dataclasses.dataclass
class PalindromeTask(ClassificationTask):
    """Is the sequence a palindrome? Half the sequences are; the others are one symbol away from one."""
    length: int = option(7, "--length", "symbols per sequence")
    n_symbols: int = option(8, "--symbols", "distinct symbols")
    n_labelled: int = option(4096, "--labelled", "labelled training sequences")   # 256 stay at chance

    name, label_names = "palindrome", ("no", "yes")
    settings = dataclasses.replace(ClassificationTask.settings, steps=600)   # it climbs past the base's 300

    def room(self):
        return dict(vocab_size=BERT_N_SPECIAL + self.n_symbols, max_len=1 + self.length, n_classes=2)

    def describe(self):
        return f"{self.n_symbols} symbols, length {self.length}"

    def sequences(self, n, rng):
        half = self.length // 2
        symbols = rng.integers(0, self.n_symbols, size=(n, self.length))           # (n, length)
        symbols[:, self.length - half:] = symbols[:, :half][:, ::-1]               # every row a palindrome
        spoiled = np.flatnonzero(rng.random(n) < 0.5)                              # half of them changed once,
        where = rng.integers(0, half, size=len(spoiled))                           # in the first half,
        change = rng.integers(1, self.n_symbols, size=len(spoiled))                # to another symbol
        symbols[spoiled, where] = (symbols[spoiled, where] + change) % self.n_symbols
        labels = (symbols == symbols[:, ::-1]).all(axis=1).astype(np.int64)       # (n,) 1: a palindrome
        ids = np.concatenate([np.full((n, 1), CLS), BERT_N_SPECIAL + symbols], axis=1)   # (n, 1 + length)
        return LabelledBatch(ids, labels)

    token_names = staticmethod(token_names)
