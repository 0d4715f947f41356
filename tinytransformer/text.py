"""A character-level language model's text: "The Lighthouse Keeper's Year" (texts/the_lighthouse.txt).

The text was written for this project and is released under its MIT licence,
so it ships inside the package (package data) and reads the same under every
Python version. It is 6,110 characters of plain ASCII English prose.

Tokens: PAD, BOS, EOS = 0, 1, 2 (data.py), then the text's distinct
characters in sorted order from 3. The first 90% of the text is for training
and the last 10% is held out: never trained on, it measures how well the
model predicts text it has not seen (held-out loss).
"""
from importlib import resources

import numpy as np

from .data import N_SPECIAL, LMBatch

TEXT_FILE = "the_lighthouse.txt"


def load_text():
    """The whole text as a str."""
    return (resources.files(__package__) / "texts" / TEXT_FILE).read_text(encoding="ascii")


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


def generate(model, corpus, prompt, n_chars, rng, temperature=0.8, top_k=None):
    """Continue prompt (a str) by n_chars characters sampled from a GPT trained on corpus.

    The model sees at most config.max_len positions, so generation goes in
    chunks: each chunk is sampled after the last max_len // 2 characters so far.
    """
    from .decode import sample

    rng = np.random.default_rng(rng)
    n_wanted = len(prompt) + n_chars
    ids = corpus.encode(prompt)
    window = model.config.max_len // 2
    if not 1 <= len(ids) <= window:
        raise ValueError(f"text.generate: the prompt must have 1 to {window} characters (max_len // 2), "
                         f"got {len(ids)}")
    empty_chunks = 0
    while len(ids) < n_wanted:
        context = ids[-window:][None, :]                                   # (1, <= window)
        wanted = min(model.config.max_len - context.shape[1], n_wanted - len(ids))
        new = sample(model, context, wanted, rng, temperature=temperature, top_k=top_k)[0]
        new = new[new >= N_SPECIAL]              # a special token (EOS ends a sample) is no character: drop it
        empty_chunks = 0 if len(new) else empty_chunks + 1
        if empty_chunks == 100:
            raise ValueError("text.generate: 100 samples in a row began with a special token, not a character")
        ids = np.concatenate([ids, new])
    return corpus.decode(ids[:n_wanted])
