"""BERT's tasks: masked-LM pretraining on a synthetic corpus, then a question about its sequences.

Vocabulary (vocabulary.py): PAD, BOS, EOS, [CLS], [MASK] = 0..4, then n_symbols symbols from 5.

Every sequence of the corpus is [CLS], then k random symbols x, then y: either
x again (a copy) or x reversed, with equal odds; k varies from k_min to k_max
and shorter sequences end in PAD. With k = 3:

    [CLS] 7 5 9 7 5 9 . .       a copy   (label 0)
    [CLS] 7 5 9 9 5 7 . .       a reverse (label 1)

Structure to learn without labels: a masked symbol of y can be read off x (and
one of x off y) once the model has seen, in the unmasked pairs, which rule the
sequence follows and where its middle is. The fine-tuning question (classify)
is that rule: copy or reverse? x's first and last symbols always differ, so no
sequence is both.

BERT's second pretraining task, adapted (mlm with sentence_objective): [CLS]
also predicts whether y holds x's symbols in the corpus's order (a copy or a
reverse, label 1) or the same symbols shuffled (label 0). Its label says
nothing about copy or reverse: half its positives are each.

classify answers through one of two readouts: "cls", a new head on [CLS]
(BERT's); or "cloze", the masked-LM head asked to fill y's first symbol, hidden
by [MASK]: x's first symbol means a copy, x's last a reverse.
"""
import dataclasses
from typing import NamedTuple

import numpy as np

from .. import functional as F, nn
from ..checkpoint import load_checkpoint
from ..nn import inference
from ..vocabulary import BERT_N_SPECIAL, CLS, MASK, PAD
from .batches import LabelledBatch, LMBatch
from .options import option
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


def half_lengths(ids):
    """ids (B, T) corpus sequences -> (B,) each row's k: [CLS], then 2k symbols, then PAD."""
    return np.count_nonzero(ids[:, 1:] != PAD, axis=1) // 2


class SentencePairBatch(NamedTuple):
    """Masked-LM pretraining with the sentence-level objective on [CLS]."""
    ids: np.ndarray        # (B, T) int64, corrupted by BERT's rule, every row alike
    targets: np.ndarray    # (B, T) int64, the masked-LM targets; all PAD in a shuffled row
    in_order: np.ndarray   # (B,) int64, 1 = y is x in the corpus's order (copy or reverse), 0 = shuffled


def shuffle_second_halves(ids, rows, rng):
    """ids (B, T) corpus sequences -> a copy in which each row of rows has y replaced by x's symbols
    in an order that is neither x's nor its reverse (so halves need k >= 3)."""
    out = ids.copy()
    for b in rows:
        k = half_lengths(ids[b:b + 1])[0]                                    # this row's half length
        x = ids[b, 1:1 + k]                                                   # (k,)
        y = x
        while np.array_equal(y, x) or np.array_equal(y, x[::-1]):           # x[0] != x[-1]: k >= 3 ends this
            y = x[rng.permutation(k)]
        out[b, 1 + k:1 + 2 * k] = y
    return out


def sentence_pair_batch(batch_size, k_max, n_symbols, rng, p=0.15, k_min=3, negatives=shuffle_second_halves):
    """Corpus sequences, each kept (in_order 1) or its y shuffled (0) with equal odds, then corrupted by
    BERT's rule. The masked-LM targets count in the kept rows only: a shuffled y cannot be read off x.
    negatives(ids, rows, rng) makes the negative rows (benchmarks/bert_transfer_search.py tries others)."""
    rng = np.random.default_rng(rng)
    ids, _ = make_sequences(batch_size, k_max, n_symbols, rng, k_min)
    in_order = rng.integers(0, 2, size=batch_size)                          # (B,) 1 = kept
    ids = negatives(ids, np.flatnonzero(in_order == 0), rng)
    corrupted, targets = mask_tokens(ids, rng, p, vocab_size=vocab_size(n_symbols))
    targets[in_order == 0] = PAD
    return SentencePairBatch(corrupted, targets, in_order.astype(np.int64))


def masked_lm_and_order_loss(model, batch, label_smoothing=0.0):
    """The masked-LM loss plus the [CLS] head's cross-entropy on in_order, as BERT adds its two losses."""
    x = model.encode(batch.ids)                                              # (B, T, d_model)
    order_logits = model.classifier(model.first_position(x))                 # (B, 2) from [CLS]'s vector
    order = F.cross_entropy(order_logits, batch.in_order, label_smoothing=label_smoothing)
    if (batch.targets == PAD).all():                                         # every row shuffled: no masked-LM target
        return order
    masked_lm = F.cross_entropy(model.logits(x), batch.targets, ignore_index=PAD,             # logits (B, T, V)
                                label_smoothing=label_smoothing)
    return masked_lm + order


def cloze_logits(model, ids):
    """classify's cloze readout: ids (B, T) corpus sequences -> logits (B, 2) of copy and reverse.

    y's first symbol is replaced by [MASK] and the masked-LM head is asked what belongs there: its
    logit of x's first symbol is the logit of "copy", of x's last symbol that of "reverse".
    """
    B, T = ids.shape
    rows = np.arange(B)
    k = half_lengths(ids)                                                    # (B,) each row's half length
    asked = ids.copy()
    asked[rows, 1 + k] = MASK                                                # y starts at 1 + k
    x = model.encode(asked)                                                  # (B, T, d_model)
    # Both picks are products with one-hot arrays, as BERT.first_position: the tape has no indexing op.
    at = np.zeros((B, 1, T), dtype=x.dtype)                                  # (B, 1, T) one-hot of the asked position
    at[rows, 0, 1 + k] = 1.0
    # backward: dx = at^T @ dout, so only position 1 + k of each row gets a gradient
    logits = model.logits(F.matmul(at, x))                                   # (B, 1, d_model) -> (B, 1, V)
    candidates = np.zeros((B, logits.shape[-1], 2), dtype=x.dtype)           # (B, V, 2) one-hot columns
    candidates[rows, ids[:, 1], 0] = 1.0                                     # x's first symbol: a copy
    candidates[rows, ids[rows, k], 1] = 1.0                                  # x's last symbol: a reverse
    # backward: dlogits = dout @ candidates^T, so only the two candidate symbols' logits get one
    return F.reshape(F.matmul(logits, candidates), (B, 2))                  # (B, 1, 2) -> (B, 2)


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
    halves = f"{task.k_min} to {task.seq_len}" if task.variable_length else f"{task.seq_len}"
    return f"{task.n_symbols} symbols, halves of {halves}"


def check_halves(task):
    """Halves of at least 2 symbols (a copy and a reverse must differ), over at least 2 symbols."""
    check_option(task, "seq_len", 2)
    check_option(task, "n_symbols", 2)
    check_option(task, "eval_size", 1)


@dataclasses.dataclass
class MaskedLMTask(Task):
    """Masked-LM pretraining of BERT on the corpus; evaluated by the loss on a fixed corrupted held-out set."""
    seq_len: int = option(6, "--seq-len", "symbols in each half of a sequence (the longest half)")
    n_symbols: int = option(8, "--vocab", "distinct symbols")
    variable_length: bool = option(False, "--variable-length", "halves of 3..seq-len symbols, padded with PAD")
    p: float = 0.15                  # the share of symbol positions chosen for corruption
    sentence_objective: bool = option(False, "--sentence-objective", "also train [CLS] to tell a second half "
                                      "in the corpus's order (copy or reverse) from one shuffled, BERT's second "
                                      "pretraining task adapted to this corpus")
    eval_size: int = 1000            # held-out sequences
    seed: int = 0                    # seed of the held-out sequences

    name, model_class, model_style, exact = "mlm", nn.BERT, BERT_STYLE, False
    training = Training(steps=600, target_accuracy=None)

    def __post_init__(self):
        check_halves(self)
        if not 0 < self.p <= 1:
            raise ValueError(f"mlm: p (the share of symbols chosen) must be in (0, 1], got {self.p!r}")
        if self.sentence_objective and self.seq_len < 3:
            raise ValueError(f"mlm: the sentence objective needs halves of at least 3 symbols (with 2, every "
                             f"order of x is x or its reverse), got seq_len={self.seq_len}")
        self.k_min = min_half(self.seq_len, self.variable_length)
        self.eval_set = pretraining_batch(self.eval_size, self.seq_len, self.n_symbols, self.seed, self.p,
                                          self.k_min)

    def room(self):
        room = dict(vocab_size=vocab_size(self.n_symbols), max_len=1 + 2 * self.seq_len)
        return {**room, "n_classes": 2} if self.sentence_objective else room

    def describe(self):
        return describe_halves(self) + ("; [CLS]: in order or shuffled?" if self.sentence_objective else "")

    def batch(self, batch_size, rng):
        make = sentence_pair_batch if self.sentence_objective else pretraining_batch
        return make(batch_size, self.seq_len, self.n_symbols, rng, self.p, self.k_min)

    def loss(self, model, batch, label_smoothing=0.0):
        if self.sentence_objective:
            return masked_lm_and_order_loss(model, batch, label_smoothing)
        return language_model_loss(model, batch, label_smoothing)

    def evaluate(self, model):
        """The masked-LM loss on held-out corpus sequences (none shuffled), with or without the sentence objective."""
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
    """Fine-tuning BERT to answer copy or reverse? Trained on n_labelled fixed examples, evaluated by the
    exact match (accuracy) on eval_size others. readout: "cloze" (the masked-LM head fills y's first
    symbol) or "cls" (a new head on [CLS])."""
    seq_len: int = option(6, "--seq-len", "symbols in each half of a sequence (the longest half)")
    n_symbols: int = option(8, "--vocab", "distinct symbols")
    n_labelled: int = option(256, "--labelled", "labelled training sequences")
    variable_length: bool = option(False, "--variable-length", "halves of 3..seq-len symbols, padded with PAD")
    readout: str = option("cloze", "--readout", "how BERT answers: cloze (its masked-LM head fills y's first "
                          "symbol, hidden by [MASK]: x's first means copy, x's last reverse) or cls (a new head "
                          "on [CLS], as BERT fine-tunes)")
    pretrained: str | None = option(None, "--pretrained", "start from this masked-LM checkpoint "
                                    "(train --task mlm --save PATH)", metavar="PATH")
    eval_size: int = 1000            # held-out sequences
    seed: int = 0                    # seed of the labelled and the held-out sequences

    name, model_class, model_style = "classify", nn.BERT, BERT_STYLE
    training = Training(steps=300, eval_every=50, lr_scale=0.3)
    READOUTS = ("cloze", "cls")

    def __post_init__(self):
        check_halves(self)
        check_option(self, "n_labelled", 1)
        if self.readout not in self.READOUTS:
            raise ValueError(f"classify: readout must be one of {', '.join(self.READOUTS)}, got {self.readout!r}")
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
        """The cls readout needs a 2-class [CLS] head; the cloze readout none (it reads the masked-LM head)."""
        return dict(vocab_size=vocab_size(self.n_symbols), max_len=1 + 2 * self.seq_len,
                    n_classes=2 if self.readout == "cls" else None)

    def describe(self):
        return describe_halves(self) + f"; {self.readout} readout"

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

    def batch(self, batch_size, rng):
        rows = rng.integers(0, len(self.labelled.labels), size=batch_size)   # (B,) with replacement
        return LabelledBatch(self.labelled.ids[rows], self.labelled.labels[rows])

    def logits(self, model, ids):
        """ids (B, T) -> (B, 2) logits of copy and reverse, by the task's readout."""
        return cloze_logits(model, ids) if self.readout == "cloze" else model.classify(ids)

    def loss(self, model, batch, label_smoothing=0.0):
        return F.cross_entropy(self.logits(model, batch.ids), batch.labels, label_smoothing=label_smoothing)

    def predict(self, model, ids):
        """ids (B, T) -> (B,) 0 = copy, 1 = reverse, in eval mode and outside any Tape."""
        with inference(model, "ClassifyTask.predict"):
            return self.logits(model, ids).data.argmax(axis=-1)

    def evaluate(self, model):
        return float((self.predict(model, self.eval_set.ids) == self.eval_set.labels).mean())

    def show(self, model, n=3):
        ids, labels = (rows[:n] for rows in self.eval_set)
        answer = ("copy", "reverse")
        return ["held-out sequences: copy or reverse?"] + [
            f"  {' '.join(token_names(row)):<40} {answer[label]:<8} predicted {answer[guess]}"
            for row, label, guess in zip(ids, labels, self.predict(model, ids))]

    plot_example = MaskedLMTask.plot_example        # the first held-out sequence, read the same way
