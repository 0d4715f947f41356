"""A character-level language model's task: "The Lighthouse Keeper's Year" (texts/the_lighthouse.txt).

The text was written for this project and is released under its MIT licence,
so it ships inside the package (package data) and reads the same under every
Python version. It is 6,110 characters of plain ASCII English prose.

Tokens: PAD, BOS, EOS = 0, 1, 2 (vocabulary.py), then the text's distinct
characters in sorted order from 3. The first 90% of the text is for training
and the last 10% is held out: never trained on, it measures how well the
model predicts text it has not seen (held-out loss).
"""
import dataclasses
from importlib import resources

import numpy as np

from .. import nn
from ..decode import generate_text
from ..vocabulary import N_SPECIAL, LMBatch
from .task import GPT_STYLE, Task, Training, check_option, held_out_loss, language_model_loss

TEXT_FILE = "the_lighthouse.txt"


def load_text():
    """The whole text as a str."""
    return (resources.files("tinytransformer") / "texts" / TEXT_FILE).read_text(encoding="ascii")


class CharCorpus:
    """The text as token ids, split into a training part and a held-out part (its last held_out share)."""

    def __init__(self, text=None, held_out=0.1):
        self.text = load_text() if text is None else text
        if not 0 < held_out < 1:
            raise ValueError(f"CharCorpus: held_out must be a share between 0 and 1, got {held_out}")
        self.alphabet = "".join(sorted(set(self.text)))
        self.index = {c: N_SPECIAL + i for i, c in enumerate(self.alphabet)}
        ids = self.encode(self.text)
        cut = int(round(len(ids) * (1 - held_out)))
        self.train_ids, self.held_out_ids = ids[:cut], ids[cut:]

    @property
    def vocab_size(self):
        return N_SPECIAL + len(self.alphabet)

    def encode(self, text):
        unknown = sorted(set(text) - set(self.index))
        if unknown:
            raise ValueError(f"CharCorpus.encode: characters not in the text's alphabet: {unknown}")
        return np.array([self.index[c] for c in text], dtype=np.int64)

    def decode(self, ids):
        """Ids back to text; special tokens are left out."""
        return "".join(self.alphabet[i - N_SPECIAL] for i in np.asarray(ids).ravel() if i >= N_SPECIAL)

    def training_batch(self, batch_size, seq_len, rng):
        """batch_size windows of seq_len characters from random places of the training part,
        each with the next character as its targets."""
        starts = rng.integers(0, len(self.train_ids) - seq_len, size=batch_size)    # (B,)
        window = self.train_ids[starts[:, None] + np.arange(seq_len + 1)]           # (B, seq_len + 1)
        return LMBatch(window[:, :-1], window[:, 1:])

    def held_out_batch(self, seq_len):
        """The held-out part cut into consecutive windows of seq_len (the remainder left out):
        every held-out character but the first few is predicted exactly once."""
        n = (len(self.held_out_ids) - 1) // seq_len
        window = self.held_out_ids[np.arange(n)[:, None] * seq_len + np.arange(seq_len + 1)]   # (n, seq_len + 1)
        return LMBatch(window[:, :-1], window[:, 1:])


@dataclasses.dataclass
class TextTask(Task):
    """Next-character prediction on a CharCorpus for GPT; evaluated by the held-out loss."""
    seq_len: int = 32                       # characters of context
    corpus: CharCorpus | None = None        # None: the package's text

    name, model_class, model_style, exact = "text", nn.GPT, GPT_STYLE, False
    # in a 600-step run the held-out loss was lowest at step 300 and rose after it: the 5,500
    # training characters are overfitted (README, "Train")
    training = Training(steps=300, batch_size=32, target_accuracy=None)

    def __post_init__(self):
        if self.corpus is None:
            self.corpus = CharCorpus()
        # the held-out part must hold at least one window and its next character
        check_option(self, "seq_len", 1, min(len(self.corpus.held_out_ids), len(self.corpus.train_ids)) - 1)
        self.eval_set = self.corpus.held_out_batch(self.seq_len)

    def room(self):
        return dict(vocab_size=self.corpus.vocab_size, max_len=self.seq_len)

    def describe(self):
        return f"{len(self.corpus.text)} characters, {self.seq_len} of context"

    def batch(self, batch_size, rng):
        return self.corpus.training_batch(batch_size, self.seq_len, rng)

    loss = staticmethod(language_model_loss)

    def evaluate(self, model):
        return held_out_loss(model, *self.eval_set)

    def show(self, model, n=3, seed=0):
        """n samples of 200 characters after the start of the held-out part (temperature 0.8)."""
        start = self.corpus.decode(self.corpus.held_out_ids[:min(16, self.seq_len // 2)])
        lines = [f"generated after {start!r} (temperature 0.8):"]
        for i in range(n):
            lines += [generate_text(model, self.corpus, start, 200, rng=seed + i), ""]
        return lines

    def plot_example(self):
        ids = self.eval_set.ids[:1, :32]                                      # (1, up to 32)
        names = list(self.corpus.decode(ids[0]))
        return (ids,), names, names
