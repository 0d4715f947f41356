"""BERT's second pretraining task, adapted to the corpus of masked_lm.py (mlm with sentence_objective).

[CLS] also predicts whether y holds x's symbols in the corpus's order (a copy
or a reverse, label 1) or the same symbols shuffled (label 0). Its label says
nothing about copy or reverse: half its positives are each.
"""
from typing import NamedTuple

import numpy as np

from .. import functional as F
from ..vocabulary import PAD
from .masked_lm import half_lengths, make_sequences, mask_tokens, vocab_size_for


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
    corrupted, targets = mask_tokens(ids, rng, p, vocab_size=vocab_size_for(n_symbols))
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
