"""The token ids every model and task shares, and the three kinds of batch.

    PAD, BOS, EOS = 0, 1, 2     every vocabulary starts with these: padding, begin, end
    CLS, MASK = 3, 4            BERT's vocabulary adds these two; its symbols start at 5

A task's own symbols come after its special tokens (N_SPECIAL = 3, or
BERT_N_SPECIAL = 5), so no number above ever changes.
"""
from typing import NamedTuple

import numpy as np

PAD, BOS, EOS = 0, 1, 2
N_SPECIAL = 3
CLS, MASK = 3, 4                 # BERT's vocabulary only: [CLS] is the summary position, [MASK] hides a token
BERT_N_SPECIAL = 5


class Batch(NamedTuple):
    """For the encoder-decoder: the source, and the target shifted right (in) and as predicted (out)."""
    src: np.ndarray      # (B, T_src)      int64
    tgt_in: np.ndarray   # (B, T_tgt)      int64, starts with BOS
    tgt_out: np.ndarray  # (B, T_tgt)      int64, ends with EOS (then PAD)


class LMBatch(NamedTuple):
    """For a decoder-only (GPT) or encoder-only (BERT) model: targets[:, t] is what position t
    must predict (for GPT the token after ids[:, :t + 1]); PAD = not counted by the loss."""
    ids: np.ndarray       # (B, T) int64, what the model reads
    targets: np.ndarray   # (B, T) int64


class LabelledBatch(NamedTuple):
    """For a classifier: one label per sequence."""
    ids: np.ndarray       # (B, T) int64, starting with [CLS]
    labels: np.ndarray    # (B,) int64
