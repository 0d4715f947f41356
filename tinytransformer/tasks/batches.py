"""The four kinds of batch a task hands the training loop, one per kind of model."""
from typing import NamedTuple

import numpy as np


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


class ImageBatch(NamedTuple):
    """For the vision encoder: each image cut into patches, and its class."""
    patches: np.ndarray   # (B, N, P) float, N patches of P pixel values each
    labels: np.ndarray    # (B,) int64
