"""BERT's tasks: masked-LM pretraining on a synthetic corpus, then a [CLS] question about its sequences.

Vocabulary (vocabulary.py): PAD, BOS, EOS, [CLS], [MASK] = 0..4, then n_symbols symbols from 5.

Every sequence of the corpus is [CLS], then k random symbols x, then y: either
x again (a copy) or x reversed, with equal odds; k varies from k_min to k_max
and shorter sequences end in PAD. With k = 3:

    [CLS] 7 5 9 7 5 9 . .       a copy   (label 0)
    [CLS] 7 5 9 9 5 7 . .       a reverse (label 1)

Structure to learn without labels: a masked symbol of y can be read off x (and
one of x off y) once the model has seen, in the unmasked pairs, which rule the
sequence follows and where its middle is. The fine-tuning question is exactly
that rule: copy or reverse? x's first and last symbols always differ, so no
sequence is both.
"""
import dataclasses

import numpy as np

from .. import functional as F, nn
from ..checkpoint import load_checkpoint
from ..decode import inference
from ..vocabulary import BERT_N_SPECIAL, CLS, MASK, PAD, LabelledBatch, LMBatch
from .task import BERT_STYLE, Task, Training, check_option, held_out_loss, language_model_loss


def vocab_size(n_symbols):
    return BERT_N_SPECIAL + n_symbols


def token_names(ids):
    """BERT's tokens as names: symbols from 0, [CLS] "C", [MASK] "M", PAD "."."""
    special = {PAD: ".", CLS: "C", MASK: "M"}
    return [special.get(int(i), str(int(i) - BERT_N_SPECIAL)) for i in ids]


def make_sequences(batch_size, k_max, n_symbols, rng, k_min=3):
    """batch_size sequences of the corpus and their labels: LabelledBatch with ids (B, 1 + 2 * k_max)."""
    if not 2 <= k_min <= k_max or n_symbols < 2:
        raise ValueError(f"mlm.make_sequences: need 2 <= k_min <= k_max and n_symbols >= 2, "
                         f"got k_min={k_min}, k_max={k_max}, n_symbols={n_symbols}")
    rng = np.random.default_rng(rng)
    B, K = batch_size, k_max
    k = rng.integers(k_min, K + 1, size=B)                                  # (B,) this row's length of x
    x = rng.integers(0, n_symbols, size=(B, K))                             # (B, K) symbols 0..n-1 for now
    last = np.arange(B), k - 1
    x[last] = (x[:, 0] + rng.integers(1, n_symbols, size=B)) % n_symbols   # x's last symbol differs from its first
    labels = rng.integers(0, 2, size=B)                                     # (B,) 1 = reverse
    position = np.arange(K)                                                 # (K,)
    mirrored = np.clip(k[:, None] - 1 - position, 0, K - 1)                 # (B, K) i -> k - 1 - i
    y = np.where(labels[:, None] == 1, np.take_along_axis(x, mirrored, axis=1), x)   # (B, K)
    real = position < k[:, None]                                            # (B, K)
    ids = np.full((B, 1 + 2 * K), PAD, dtype=np.int64)                      # (B, 1 + 2K)
    ids[:, 0] = CLS
    row, col = np.nonzero(real)                                             # (N,) each: every real position of x
    ids[row, 1 + col] = x[row, col] + BERT_N_SPECIAL
    ids[row, 1 + k[row] + col] = y[row, col] + BERT_N_SPECIAL               # y follows x without a gap
    return LabelledBatch(ids, labels.astype(np.int64))


def mask_tokens(ids, rng, p=0.15, *, vocab_size, mask_id=MASK, n_special=BERT_N_SPECIAL,
                mask_share=0.8, random_share=0.1):
    """BERT's corruption for masked-language-model pretraining: ids (B, T) -> (corrupted_ids, targets).

    Each symbol position (id >= n_special: never PAD, [CLS] or another special
    token) is chosen independently with probability p. A chosen position
    becomes mask_id with probability mask_share (0.8), a symbol drawn
    uniformly from n_special..vocab_size-1 with probability random_share (0.1;
    it may draw the original), and otherwise stays as it is (0.1). targets
    (B, T) holds the original id at chosen positions and PAD elsewhere, so
    that cross_entropy(..., ignore_index=PAD) counts only the chosen ones.
    Why not always [MASK]: the model never sees [MASK] when it is fine-tuned,
    so it must also learn to represent (and check) the real tokens it reads.
    rng: an np.random.Generator or a seed.
    """
    ids = np.asarray(ids)
    if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"mask_tokens: ids must be a 2-d integer array (B, T), got {ids.dtype} {ids.shape}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"mask_tokens: ids must lie in 0..{vocab_size - 1} (vocab_size), "
                         f"got {ids.min()}..{ids.max()}")
    if not (0 <= p <= 1 and 0 <= mask_share and 0 <= random_share and mask_share + random_share <= 1):
        raise ValueError(f"mask_tokens: need 0 <= p <= 1 and mask_share + random_share <= 1 (both >= 0), "
                         f"got p={p}, mask_share={mask_share}, random_share={random_share}")
    if not 0 <= mask_id < n_special < vocab_size:
        raise ValueError(f"mask_tokens: need 0 <= mask_id < n_special < vocab_size, "
                         f"got {mask_id}, {n_special}, {vocab_size}")
    rng = np.random.default_rng(rng)
    chosen = (ids >= n_special) & (rng.random(ids.shape) < p)                 # (B, T)
    fate = rng.random(ids.shape)                                              # (B, T) one draw decides what happens
    to_mask = chosen & (fate < mask_share)
    to_random = chosen & (fate >= mask_share) & (fate < mask_share + random_share)
    random_symbols = rng.integers(n_special, vocab_size, size=ids.shape)      # (B, T)
    corrupted = np.where(to_mask, mask_id, np.where(to_random, random_symbols, ids))
    targets = np.where(chosen, ids, PAD)
    return corrupted.astype(np.int64), targets.astype(np.int64)


def pretraining_batch(batch_size, k_max, n_symbols, rng, p=0.15, k_min=3):
    """Corpus sequences corrupted by BERT's rule: LMBatch(corrupted ids, targets at the chosen positions)."""
    rng = np.random.default_rng(rng)
    ids, _ = make_sequences(batch_size, k_max, n_symbols, rng, k_min)
    return LMBatch(*mask_tokens(ids, rng, p, vocab_size=vocab_size(n_symbols)))


def min_half(k_max, variable_length):
    """The shortest half of mlm/classify's sequences: k_max (every half as long), or 3 with variable_length.

    With halves of one length, the middle of every sequence is at the same position; with variable
    lengths it moves, and the model must find it before it can compare the halves. The classroom
    model does not learn that in the default steps: its masked-LM loss stays above what knowing only
    which symbols the other half holds gives, and [CLS] stays near chance (README, "Train a
    Transformer, a GPT or a BERT").
    """
    return min(3, k_max) if variable_length else k_max


def check_halves(task):
    """Halves of at least 2 symbols (a copy and a reverse must differ), over at least 2 symbols."""
    check_option(task, "seq_len", 2)
    check_option(task, "n_symbols", 2)
    check_option(task, "eval_size", 1)


@dataclasses.dataclass
class MaskedLMTask(Task):
    """Masked-LM pretraining of BERT on the corpus; evaluated by the loss on a fixed corrupted held-out set."""
    seq_len: int = 6                 # symbols in each half of a sequence (the longest half)
    n_symbols: int = 8               # distinct symbols
    variable_length: bool = False    # halves of 3..seq_len symbols, padded
    p: float = 0.15                  # the share of symbol positions chosen for corruption
    eval_size: int = 1000            # held-out sequences
    seed: int = 0                    # seed of the held-out sequences

    name, model_class, model_style, exact = "mlm", nn.BERT, BERT_STYLE, False
    training = Training(steps=600, target_accuracy=None)

    def __post_init__(self):
        check_halves(self)
        if not 0 < self.p <= 1:
            raise ValueError(f"mlm: p (the share of symbols chosen) must be in (0, 1], got {self.p!r}")
        self.k_min = min_half(self.seq_len, self.variable_length)
        self.eval_set = pretraining_batch(self.eval_size, self.seq_len, self.n_symbols, self.seed, self.p,
                                          self.k_min)

    def room(self):
        return dict(vocab_size=vocab_size(self.n_symbols), max_len=1 + 2 * self.seq_len)

    def describe(self):
        halves = f"{self.k_min} to {self.seq_len}" if self.variable_length else f"{self.seq_len}"
        return f"{self.n_symbols} symbols, halves of {halves}"

    def batch(self, batch_size, rng):
        return pretraining_batch(batch_size, self.seq_len, self.n_symbols, rng, self.p, self.k_min)

    loss = staticmethod(language_model_loss)

    def evaluate(self, model):
        return held_out_loss(model, *self.eval_set)

    def show(self, model, n=3):
        """n held-out corrupted sequences and the model's guess at each chosen position."""
        ids, targets = (rows[:n] for rows in self.eval_set)
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
        ids = self.eval_set.ids[:1]                                           # (1, T)
        return (ids,), token_names(ids[0]), token_names(ids[0])


@dataclasses.dataclass
class ClassifyTask(Task):
    """Fine-tuning BERT's [CLS] head: copy or reverse? Trained on n_labelled fixed examples,
    evaluated by the exact match (accuracy) on eval_size others."""
    seq_len: int = 6                 # symbols in each half of a sequence (the longest half)
    n_symbols: int = 8               # distinct symbols
    n_labelled: int = 256            # labelled training sequences
    variable_length: bool = False    # halves of 3..seq_len symbols, padded
    pretrained: str | None = None    # a masked-LM checkpoint to start from (train --task mlm --save PATH)
    eval_size: int = 1000            # held-out sequences
    seed: int = 0                    # seed of the labelled and the held-out sequences

    name, model_class, model_style = "classify", nn.BERT, BERT_STYLE
    training = Training(steps=300, eval_every=50, lr_scale=0.3)

    def __post_init__(self):
        check_halves(self)
        check_option(self, "n_labelled", 1)
        self.k_min = min_half(self.seq_len, self.variable_length)
        labelled_seed, eval_seed = np.random.SeedSequence(self.seed).spawn(2)
        self.eval_set = make_sequences(self.eval_size, self.seq_len, self.n_symbols,
                                       np.random.default_rng(eval_seed), self.k_min)
        drawn = make_sequences(self.n_labelled, self.seq_len, self.n_symbols, np.random.default_rng(labelled_seed),
                               self.k_min)
        held_out = {row.tobytes() for row in self.eval_set.ids}
        fresh = np.array([row.tobytes() not in held_out for row in drawn.ids], dtype=bool)   # (n_labelled,)
        if not fresh.any():
            raise ValueError(f"ClassifyTask: every one of the {self.n_labelled} labelled sequences is held out; "
                             "give more symbols, longer sequences or a smaller eval_size")
        self.labelled = LabelledBatch(drawn.ids[fresh], drawn.labels[fresh])   # none of them held out

    def room(self):
        return dict(vocab_size=vocab_size(self.n_symbols), max_len=1 + 2 * self.seq_len, n_classes=2)

    def describe(self):
        return MaskedLMTask.describe(self)

    def new_model(self, config, rng):
        """A fresh BERT with a [CLS] head on config; with `pretrained`, the checkpoint's BERT with a new
        [CLS] head (drawn from rng) and config's dropout: its sizes are the checkpoint's."""
        if self.pretrained is None:
            return super().new_model(config, rng)
        pretrained = load_checkpoint(self.pretrained)
        if not isinstance(pretrained, nn.BERT):
            raise ValueError(f"classify: --pretrained needs a BERT checkpoint (train --task mlm --save), "
                             f"got a {type(pretrained).__name__}")
        model = nn.classifier_from(pretrained, 2, rng=rng, dropout=config.dropout)
        self.check(model.config)
        return model

    def batch(self, batch_size, rng):
        rows = rng.integers(0, len(self.labelled.labels), size=batch_size)   # (B,) with replacement
        return LabelledBatch(self.labelled.ids[rows], self.labelled.labels[rows])

    def loss(self, model, batch, label_smoothing=0.0):
        logits = model.classify(batch.ids)                                   # (B, n_classes)
        return F.cross_entropy(logits, batch.labels, label_smoothing=label_smoothing)

    def evaluate(self, model):
        with inference(model, "ClassifyTask.evaluate"):
            predicted = model.classify(self.eval_set.ids).data.argmax(axis=-1)   # (B,)
        return float((predicted == self.eval_set.labels).mean())

    def show(self, model, n=3):
        ids, labels = (rows[:n] for rows in self.eval_set)
        with inference(model, "ClassifyTask.show"):
            predicted = model.classify(ids).data.argmax(axis=-1)             # (n,)
        answer = ("copy", "reverse")
        return ["held-out sequences: copy or reverse?"] + [
            f"  {' '.join(token_names(row)):<40} {answer[label]:<8} predicted {answer[guess]}"
            for row, label, guess in zip(ids, labels, predicted)]

    plot_example = MaskedLMTask.plot_example        # the first held-out sequence, read the same way
