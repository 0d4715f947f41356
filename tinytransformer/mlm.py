"""BERT's tasks: masked-LM pretraining on a synthetic corpus, then a [CLS] question about its sequences.

Vocabulary (data.py): PAD, BOS, EOS, [CLS], [MASK] = 0..4, then n_symbols symbols from 5.

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
from typing import NamedTuple

import numpy as np

from .data import CLS, MLM_N_SPECIAL, PAD, LMBatch, mask_tokens


class LabelledBatch(NamedTuple):
    ids: np.ndarray       # (B, T) int64, starting with [CLS]
    labels: np.ndarray    # (B,) int64, 0 = copy, 1 = reverse


def vocab_size(n_symbols):
    return MLM_N_SPECIAL + n_symbols


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
    ids[row, 1 + col] = x[row, col] + MLM_N_SPECIAL
    ids[row, 1 + k[row] + col] = y[row, col] + MLM_N_SPECIAL                # y follows x without a gap
    return LabelledBatch(ids, labels.astype(np.int64))


def pretraining_batch(batch_size, k_max, n_symbols, rng, p=0.15, k_min=3):
    """Corpus sequences corrupted by BERT's rule: LMBatch(corrupted ids, targets at the chosen positions)."""
    rng = np.random.default_rng(rng)
    ids, _ = make_sequences(batch_size, k_max, n_symbols, rng, k_min)
    return LMBatch(*mask_tokens(ids, rng, p, vocab_size=vocab_size(n_symbols)))


def classifier_from(pretrained, n_classes=2, rng=None, **changes):
    """A new BERT with a [CLS] head of n_classes, every other weight copied from a pretrained BERT.

    changes: other config fields to change (dropout, say); sizes must stay.
    The head's weights are drawn from rng.
    """
    from . import nn

    config = dataclasses.replace(pretrained.config, n_classes=n_classes, **changes)
    model = nn.BERT(config, rng=rng)
    transfer_weights(pretrained, model)
    return model


def transfer_weights(source, target):
    """Copy every parameter of source into the parameter of target with the same name and shape
    (pretrained encoder into a model with a classification head). Returns the names of target's
    parameters left as they were (the new head)."""
    mine = dict(source.named_parameters())
    left = []
    for name, param in target.named_parameters():
        if name in mine and mine[name].shape == param.shape:
            param.data[...] = mine[name].data
        else:
            left.append(name)
    return left
