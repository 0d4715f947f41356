"""Toy tasks a class uses to watch a Transformer learn, and the worked example.

Token ids: PAD=0, BOS=1, EOS=2, then the symbols 3, 4, ..., 3 + n_symbols - 1.

One example of the copy task with seq_len=4:

    src     = [5, 3, 9, 4]            what the encoder reads
    tgt_in  = [BOS, 5, 3, 9, 4]       what the decoder reads (shifted right)
    tgt_out = [5, 3, 9, 4, EOS]       what the decoder must predict

The reverse task is the same with the symbols reversed in tgt_in and tgt_out.
With variable lengths, shorter examples are padded with PAD at the end.
"""
from typing import NamedTuple

import numpy as np

PAD, BOS, EOS = 0, 1, 2
N_SPECIAL = 3
TASKS = ("copy", "reverse")


class Batch(NamedTuple):
    src: np.ndarray      # (B, seq_len)      int64
    tgt_in: np.ndarray   # (B, seq_len + 1)  int64, starts with BOS
    tgt_out: np.ndarray  # (B, seq_len + 1)  int64, ends with EOS (then PAD)


def vocab_size(n_symbols):
    """Size of the vocabulary: the special tokens plus the symbols."""
    return N_SPECIAL + n_symbols


def token_names(ids):
    """Token ids as readable names: the symbols as 0, 1, 2, ..., then PAD ".", BOS "<s>", EOS "</s>"."""
    special = {PAD: ".", BOS: "<s>", EOS: "</s>"}
    return [special.get(int(i), str(int(i) - N_SPECIAL)) for i in ids]


def make_batch(task, batch_size, seq_len, n_symbols, rng, variable_length=False):
    """Draw `batch_size` fresh examples of `task` ("copy" or "reverse").

    rng: an np.random.Generator or an int seed. With variable_length, each
    example's length is drawn uniformly from 1..seq_len and the rest is PAD.
    """
    if task not in TASKS:
        raise ValueError(f"make_batch: task must be one of {TASKS}, got {task!r}")
    if seq_len < 1 or n_symbols < 1 or batch_size < 1:
        raise ValueError(
            "make_batch: batch_size, seq_len and n_symbols must be >= 1, got "
            f"{batch_size}, {seq_len}, {n_symbols}")
    rng = np.random.default_rng(rng)
    B, T = batch_size, seq_len
    symbols = rng.integers(N_SPECIAL, N_SPECIAL + n_symbols, size=(B, T))  # (B, T)
    if variable_length:
        lengths = rng.integers(1, T + 1, size=B)                             # (B,)
    else:
        lengths = np.full(B, T)
    positions = np.arange(T)                                                 # (T,)
    real = positions[None, :] < lengths[:, None]                             # (B, T) True where a symbol stands
    src = np.where(real, symbols, PAD)                                       # (B, T)

    if task == "copy":
        target = src
    else:
        # position t of the reversed row reads position length-1-t of the source
        source_index = np.clip(lengths[:, None] - 1 - positions[None, :], 0, T - 1)  # (B, T)
        target = np.where(real, np.take_along_axis(src, source_index, axis=1), PAD)

    tgt_in = np.full((B, T + 1), PAD, dtype=np.int64)
    tgt_out = np.full((B, T + 1), PAD, dtype=np.int64)
    tgt_in[:, 0] = BOS
    tgt_in[:, 1:] = target
    tgt_out[:, :T] = target
    tgt_out[np.arange(B), lengths] = EOS
    return Batch(src.astype(np.int64), tgt_in, tgt_out)


# ---------------------------------------------------------------------------
# The worked 3-input self-attention example (row vectors: Q = X @ W_q).
WORKED_X = np.array([[1, 0, 1, 0],
                     [0, 2, 0, 2],
                     [1, 1, 1, 1]], dtype=np.float64)        # (3 inputs, 4 features)
WORKED_W_K = np.array([[0, 0, 1],
                       [1, 1, 0],
                       [0, 1, 0],
                       [1, 1, 0]], dtype=np.float64)         # (4, d_k=3)
WORKED_W_Q = np.array([[1, 0, 1],
                       [1, 0, 0],
                       [0, 0, 1],
                       [0, 1, 1]], dtype=np.float64)         # (4, d_k=3)
WORKED_W_V = np.array([[0, 2, 0],
                       [0, 3, 0],
                       [1, 0, 3],
                       [1, 1, 0]], dtype=np.float64)         # (4, d_v=3)
