"""The masked-LM data: BERT's vocabulary, a corpus of copies and reverses, and BERT's corruption rule.

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

What is built on this data, one file each: bert_tasks.py (the mlm and classify
tasks), sentence_order.py (BERT's second pretraining objective, adapted) and
cloze.py (classify's cloze readout).
"""
import numpy as np

from ..vocabulary import BERT_N_SPECIAL, CLS, MASK, PAD
from .batches import LabelledBatch, LMBatch


def vocab_size_for(n_symbols):
    """The vocabulary size for n_symbols symbols: BERT's special tokens, then the symbols."""
    return BERT_N_SPECIAL + n_symbols


def token_names(ids):
    """BERT's tokens as names: symbols from 0, [CLS] "C", [MASK] "M", PAD "."."""
    special = {PAD: ".", CLS: "C", MASK: "M"}
    return [special.get(int(i), str(int(i) - BERT_N_SPECIAL)) for i in ids]


def make_sequences(batch_size, k_max, n_symbols, rng, k_min=3):
    """batch_size sequences of the corpus and their labels: LabelledBatch with ids (B, 1 + 2 * k_max)."""
    if not 2 <= k_min <= k_max or n_symbols < 2:
        raise ValueError(f"make_sequences: need 2 <= k_min <= k_max and n_symbols >= 2, "
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
    return LMBatch(*mask_tokens(ids, rng, p, vocab_size=vocab_size_for(n_symbols)))


def half_lengths(ids):
    """ids (B, T) corpus sequences -> (B,) each row's k: [CLS], then 2k symbols, then PAD."""
    return np.count_nonzero(ids[:, 1:] != PAD, axis=1) // 2
