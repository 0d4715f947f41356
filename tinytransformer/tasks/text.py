"""The text task: a GPT learns to predict the next token of a text, by characters or by BPE tokens.

Two texts (`load_text`):
- "story": "The Lighthouse Keeper's Year" (texts/the_lighthouse.txt), written for this
  project and released under its MIT licence: 6,110 characters of plain ASCII
  English prose, shipped inside the package, the same bytes under every Python.
- "python-docs": Python's language reference as `help()` shows it
  (pydoc_data.topics, part of every Python install; the PSF's, read where it is
  installed, none of it shipped here): about 465,000 characters of English prose
  with code in it. It is regenerated for each Python release, so it differs a
  little from one Python version to the next, and so do the numbers trained on it.

The first 90% of the text is for training and the last 10% is held out: never
trained on, it measures how well the model predicts text it has not seen. The
tokenizer (tokenizer/) is "char" (the text's distinct characters) or "bpe"
(byte-level BPE of bpe_size ids, trained on the training part only). Model
ids: PAD, BOS, EOS = 0, 1, 2 (vocabulary.py), then the tokenizer's ids from 3.

Losses per token do not compare across tokenizers (a BPE token holds several
characters); nats per character do: the held-out loss summed over the
held-out targets, divided by the characters they spell.

    text = generate_text(gpt, corpus, "The", 200, rng=0)    # a GPT trained on text: 200 tokens more
"""
import dataclasses
import platform
from importlib import resources

import numpy as np

from .. import nn
from ..decode import sample
from ..tokenizer import BPE, CharTokenizer
from ..vocabulary import N_SPECIAL
from .batches import LMBatch
from .options import option
from .task import GPT_STYLE, MODERN_STYLE, Task, TrainSettings, check_option, held_out_loss, language_model_loss

TEXT_FILE = "the_lighthouse.txt"
TEXTS = ("story", "python-docs")
TOKENIZERS = ("char", "bpe")
BLOCKS = {"gpt2": GPT_STYLE, "modern": MODERN_STYLE}     # --block: the GPT's layers
BPE_SIZE = 512                      # the default of tokenizer="bpe": 256 bytes and 256 merges


def load_text(name="story"):
    """The text called name ("story" or "python-docs") as a str."""
    if name == "story":
        return (resources.files("tinytransformer") / "texts" / TEXT_FILE).read_text(encoding="ascii")
    if name == "python-docs":
        from pydoc_data.topics import topics
        return "".join(topics[topic] for topic in sorted(topics))
    raise ValueError(f"load_text: name must be one of {TEXTS}, got {name!r}")


def describe_text(name):
    """Where the text comes from, in a few words."""
    if name == "python-docs":
        return f"Python {platform.python_version()}'s language reference (pydoc_data.topics)"
    return "the story"


class TextCorpus:
    """A text as model ids: a training part (the first 1 - held_out_share of its characters) and a held-out part.

    tokenizer: "char" (the whole text's characters: an id for every character the
    held-out part holds) or "bpe" (merges learned from the training part only).
    """

    def __init__(self, text=None, held_out_share=0.1, tokenizer="char", bpe_size=None):
        self.text = load_text() if text is None else text
        if not 0 < held_out_share < 1:
            raise ValueError(f"TextCorpus: held_out_share must be between 0 and 1, got {held_out_share}")
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"TextCorpus: tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")
        if tokenizer == "char" and bpe_size is not None:
            raise ValueError(f"TextCorpus: bpe_size is for tokenizer='bpe' (a character vocabulary is the "
                             f"text's characters), got bpe_size={bpe_size}")
        if bpe_size is not None and bpe_size < 256:
            raise ValueError(f"TextCorpus: bpe_size must be at least 256 (the byte values), got {bpe_size}")
        cut = int(round(len(self.text) * (1 - held_out_share)))
        train_text, held_out_text = self.text[:cut], self.text[cut:]
        self.tokenizer = CharTokenizer.train(self.text) if tokenizer == "char" else \
            BPE.train(train_text, BPE_SIZE if bpe_size is None else bpe_size)
        self.train_ids, self.held_out_ids = self.encode(train_text), self.encode(held_out_text)

    @property
    def vocab_size(self):
        return N_SPECIAL + self.tokenizer.vocab_size

    def encode(self, text):
        return np.array(self.tokenizer.encode(text), dtype=np.int64) + N_SPECIAL

    def decode(self, ids):
        """Ids back to text; special tokens are left out."""
        return self.tokenizer.decode([int(i) - N_SPECIAL for i in np.asarray(ids).ravel() if i >= N_SPECIAL])

    def characters(self, ids):
        """How many characters the ids spell: a character counts where its first byte is
        (a BPE token can hold part of a character's bytes)."""
        data = b"".join(self.tokenizer.vocab[int(i) - N_SPECIAL] for i in np.asarray(ids).ravel())
        return sum(1 for byte in data if byte & 0xC0 != 0x80)      # 10xxxxxx continues a character

    def training_batch(self, batch_size, seq_len, rng):
        """batch_size windows of seq_len tokens from random places of the training part,
        each with the next token as its targets."""
        starts = rng.integers(0, len(self.train_ids) - seq_len, size=batch_size)    # (B,)
        window = self.train_ids[starts[:, None] + np.arange(seq_len + 1)]           # (B, seq_len + 1)
        return LMBatch(window[:, :-1], window[:, 1:])

    def held_out_batch(self, seq_len):
        """The held-out part cut into consecutive windows of seq_len (the remainder left out):
        every held-out token but the first few is predicted exactly once."""
        n = (len(self.held_out_ids) - 1) // seq_len
        window = self.held_out_ids[np.arange(n)[:, None] * seq_len + np.arange(seq_len + 1)]   # (n, seq_len + 1)
        return LMBatch(window[:, :-1], window[:, 1:])


class CharCorpus(TextCorpus):
    """A TextCorpus with characters as tokens: id N_SPECIAL + i is alphabet[i]."""

    def __init__(self, text=None, held_out_share=0.1):
        super().__init__(text, held_out_share, tokenizer="char")

    @property
    def alphabet(self):
        return self.tokenizer.alphabet


@dataclasses.dataclass
class TextTask(Task):
    """Next-token prediction on a text for GPT, by characters or BPE tokens; evaluated by the held-out loss."""
    seq_len: int = option(32, "--seq-len", "tokens per sequence (the context GPT sees)")
    text_name: str = option("story", "--text", "the story (the package's, 6 KB) or python-docs (Python's "
                            "language reference, 465 KB)", choices=TEXTS)                       # load_text
    tokenizer: str = option("char", "--tokenizer", "characters (char) or byte-level BPE (bpe) as tokens",
                            choices=TOKENIZERS)
    bpe_size: int | None = option(None, "--bpe-size", "ids of the BPE (--tokenizer bpe): 256 bytes and the "
                                  f"merges (default {BPE_SIZE})")                              # char: None
    block: str = option("gpt2", "--block", "the GPT's layers: gpt2 (pre-LN LayerNorm, GELU, learned positions, "
                        "biases) or modern (as LLaMA: pre-norm RMSNorm, SwiGLU, rotary positions, no biases; "
                        "d_ff 85, the feed-forward weights of gpt2's 128)", choices=tuple(BLOCKS))
    corpus: TextCorpus | None = None        # a corpus of your own, instead of text_name, tokenizer and bpe_size

    name, model_class, exact = "text", nn.GPT, False
    # in a 600-step run on the story the held-out loss was lowest at step 300 and rose after it: the
    # 5,500 training characters are overfitted (README, "Train")
    settings = TrainSettings(steps=300, batch_size=32, target_accuracy=None)

    def __post_init__(self):
        if self.block not in BLOCKS:
            raise ValueError(f"text: block must be one of {tuple(BLOCKS)}, got {self.block!r}")
        if self.corpus is None:
            if self.text_name not in TEXTS:
                raise ValueError(f"text: text_name must be one of {TEXTS}, got {self.text_name!r}")
            self.corpus = TextCorpus(load_text(self.text_name), tokenizer=self.tokenizer, bpe_size=self.bpe_size)
        elif (self.text_name, self.tokenizer, self.bpe_size) != ("story", "char", None):
            raise ValueError("text: give either a corpus or text_name, tokenizer and bpe_size, not both")
        # the held-out part must hold at least one window and its next token; show() prompts with half a window
        check_option(self, "seq_len", 2, min(len(self.corpus.held_out_ids), len(self.corpus.train_ids)) - 1)
        self.held_out = self.corpus.held_out_batch(self.seq_len)
        self.held_out_characters = self.corpus.characters(self.held_out.targets)

    @property
    def model_style(self):
        """The config fields of the block: GPT-2's or the modern one's."""
        return BLOCKS[self.block]

    @classmethod
    def model_styles(cls):
        return {("" if block == cls.block else f"--block {block}"): style for block, style in BLOCKS.items()}

    @property
    def characters_per_token(self):
        """Characters per held-out target token: 1 for characters, about 2 to 3 for BPE."""
        return self.held_out_characters / self.held_out.targets.size

    def nats_per_character(self, loss_per_token):
        """A held-out loss per token as nats per character: the total over the held-out targets,
        divided by the characters they spell. It compares models with different tokenizers."""
        return loss_per_token / self.characters_per_token

    def held_out_measures(self, held_out_loss):
        return {"held_out_nats_per_character": self.nats_per_character(held_out_loss),
                "characters_per_token": self.characters_per_token}

    def room(self):
        return dict(vocab_size=self.corpus.vocab_size, max_len=self.seq_len)

    def describe(self):
        tokens = "characters as tokens" if isinstance(self.corpus.tokenizer, CharTokenizer) else \
            f"BPE of {self.corpus.tokenizer.vocab_size} tokens ({self.characters_per_token:.2f} characters per token)"
        return f"{len(self.corpus.text):,} characters of {describe_text(self.text_name)}, {tokens}, " \
               f"{self.seq_len} tokens of context"

    def batch(self, batch_size, rng):
        return self.corpus.training_batch(batch_size, self.seq_len, rng)

    loss = staticmethod(language_model_loss)

    def evaluate(self, model):
        return held_out_loss(model, *self.held_out)

    def show(self, model, n=3, seed=0, n_chars=200):
        """n samples of about n_chars characters after the start of the held-out part (temperature 0.8)."""
        start = self.corpus.decode(self.corpus.held_out_ids[:min(16, self.seq_len // 2)])
        n_tokens = int(np.ceil(n_chars / self.characters_per_token))
        lines = [f"generated after {start!r} (temperature 0.8):"]
        for i in range(n):
            lines += [generate_text(model, self.corpus, start, n_tokens, rng=seed + i), ""]
        return lines

    def plot_example(self):
        ids = self.held_out.ids[:1, :32]                                      # (1, up to 32)
        names = [self.corpus.tokenizer.token_text(int(i) - N_SPECIAL) for i in ids[0]]
        return (ids,), names, names


def generate_text(model, corpus, prompt, n_tokens, rng, temperature=0.8, top_k=None):
    """Continue prompt (a str) by n_tokens tokens (characters, for a character corpus) sampled from a
    GPT trained on corpus's tokens.

    corpus: anything with encode(str) -> ids and decode(ids) -> str (tasks/text.py's TextCorpus).
    The model sees at most config.max_len positions, so generation goes in
    chunks: each chunk is sampled after the last max_len // 2 tokens so far.
    """
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, (int, np.integer)) or n_tokens < 0:
        raise ValueError(f"generate_text: n_tokens must be an integer >= 0, got {n_tokens!r}")
    rng = np.random.default_rng(rng)
    ids = corpus.encode(prompt)
    n_wanted = len(ids) + n_tokens
    window = model.config.max_len // 2
    if not 1 <= len(ids) <= window:
        raise ValueError(f"generate_text: the prompt must be 1 to {window} tokens (max_len // 2), "
                         f"got {len(ids)}")
    empty_chunks = 0
    while len(ids) < n_wanted:
        context = ids[-window:][None, :]                                   # (1, <= window)
        wanted = min(model.config.max_len - context.shape[1], n_wanted - len(ids))
        new = sample(model, context, wanted, rng, temperature=temperature, top_k=top_k)[0]
        new = new[new >= N_SPECIAL]              # a special token (EOS ends a sample) is no character: drop it
        empty_chunks = 0 if len(new) else empty_chunks + 1
        if empty_chunks == 100:
            raise ValueError("generate_text: 100 samples in a row began with a special token, not a character")
        ids = np.concatenate([ids, new])
    return corpus.decode(ids[:n_wanted])
