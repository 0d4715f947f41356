"""Toy tasks a class uses to watch a Transformer learn, and the worked example.

Token ids: PAD=0, BOS=1, EOS=2, then the symbols 3, 4, ..., 3 + n_symbols - 1.

One example of the copy task with seq_len=4:

    src     = [5, 3, 9, 4]            what the encoder reads
    tgt_in  = [BOS, 5, 3, 9, 4]       what the decoder reads (shifted right)
    tgt_out = [5, 3, 9, 4, EOS]       what the decoder must predict

The reverse task is the same with the symbols reversed in tgt_in and tgt_out.
With variable lengths, shorter examples are padded with PAD at the end.

BERT's vocabulary adds two special tokens after the three, so that no number
above changes: [CLS]=3 (the summary position a classifier reads) and
[MASK]=4 (what masked-language-model corruption writes), then that
vocabulary's symbols from 5. mask_tokens corrupts a batch by BERT's rule.
"""
from typing import NamedTuple

import numpy as np

PAD, BOS, EOS = 0, 1, 2
N_SPECIAL = 3
TASKS = ("copy", "reverse")
CLS, MASK = 3, 4                 # BERT's vocabulary only: its symbols start after them
MLM_N_SPECIAL = 5


class Batch(NamedTuple):
    src: np.ndarray      # (B, seq_len)      int64
    tgt_in: np.ndarray   # (B, seq_len + 1)  int64, starts with BOS
    tgt_out: np.ndarray  # (B, seq_len + 1)  int64, ends with EOS (then PAD)


class LMBatch(NamedTuple):
    """A batch for a decoder-only (GPT) or encoder-only (BERT) model: targets[:, t] is what position t
    must predict (for GPT the token after ids[:, :t + 1]); PAD = not counted by the loss."""
    ids: np.ndarray       # (B, T) int64, what the model reads
    targets: np.ndarray   # (B, T) int64


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


def mask_tokens(ids, rng, p=0.15, *, vocab_size, mask_id=MASK, n_special=MLM_N_SPECIAL,
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
