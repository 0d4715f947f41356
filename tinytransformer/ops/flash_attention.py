"""Attention in tiles (FlashAttention): the same numbers as attention, without ever holding the (T_q, T_k) array.

The ordinary op keeps the probabilities A = softmax(q @ k.T * scale), (..., T_q, T_k), for its backward
pass: at T = 8192 that is 256 MiB of float32 per head and sequence. Here the queries go in blocks of
block_q rows and the keys in blocks of block_k; only one (block_q, block_k) tile of scores exists at a time.

The forward pass: an online softmax. For one query row and the scores s_1 .. s_n of its keys,

    out = sum_j e^(s_j - m) v_j / l,     m = max_j s_j,   l = sum_j e^(s_j - m).

Key blocks arrive one at a time, so keep a running max m, a running sum l and a running numerator
acc = sum_j e^(s_j - m) v_j over the blocks seen so far. A new block with scores s_j brings a new max
m_new = max(m, max_j s_j). Every term already in l and acc was measured from the old max:

    e^(s_j - m_old) = e^(s_j - m_new) * e^(m_new - m_old),   so   e^(s_j - m_new) = e^(s_j - m_old) * e^(m_old - m_new)

and multiplying l and acc by the one factor e^(m_old - m_new) (<= 1: m_new >= m_old) puts every old
term on the new max; the new block's terms are added on that max. After the last block m, l and acc
are the whole row's, and out = acc / l: one division per row, at the end.

Saved for the backward pass: out and, per row, the log-sum-exp L = m + log l, one number, where the
ordinary op saves T_k probabilities. It gives back any probability: e^(s_j - L) = e^(s_j - m) / l = A_j.

The backward pass recomputes each tile's scores and probabilities from L (a comment above it derives
it). Masks are attention's: boolean, True = may attend, broadcast to (..., T_q, T_k); a query row
with no key kept gets an output of 0 and gradients of 0, never nan; a tile whose every score is masked (a
causal mask's tiles above the diagonal) is skipped, forward and backward.
"""

import numpy as np

from .attention import check_attention
from .checks import check_integer

# Rows of queries and of keys in a tile, unless given. Of 32, 64, 128 and 256, 64 and 128 were the fastest forward
# and backward (batch 8 x 4 heads, d_k 64, causal, T = 256 and 1024; CPU time, one thread, on a busy machine); a
# tile of 128 x 128 of that batch is 2 MiB of float32, the size attention's cache-sized slices aim at.
BLOCK = 128


def flash_attention_forward(q, k, v, keep=None, scale=None, block_q=BLOCK, block_k=BLOCK):
    """softmax(q @ k.T * scale, masked) @ v, computed tile by tile.

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v), keep broadcastable to (..., T_q, T_k);
    scale defaults to 1/sqrt(d_k); block_q, block_k: the tile's rows and columns (any T, divided or not).
    Returns out (..., T_q, d_v) and the cache (q, k, v, out, L, keep, scale, block_q, block_k), with
    L (..., T_q) the log-sum-exp of each row's scores (0 for a row with no key kept).
    """
    scale = check_attention(q, k, v, keep, scale, op="flash_attention")
    check_integer("flash_attention", "block_q", block_q, 1)
    check_integer("flash_attention", "block_k", block_k, 1)
    T_q, T_k = q.shape[-2], k.shape[-2]
    out = np.empty(q.shape[:-1] + v.shape[-1:], q.dtype)          # (..., T_q, d_v)
    L = np.empty(q.shape[:-1], q.dtype)                            # (..., T_q)
    for rows in _blocks(T_q, block_q):
        m = np.full(q.shape[:-2] + (rows.stop - rows.start,), -np.inf, q.dtype)   # (..., bq) running max
        l = np.zeros_like(m)                                                     # (..., bq) running sum
        acc = np.zeros(m.shape + v.shape[-1:], q.dtype)                          # (..., bq, d_v) running numerator
        for cols in _blocks(T_k, block_k):
            tile_keep = keep_tile(keep, rows, cols)
            if tile_keep is not None and not tile_keep.any():
                continue                                                         # every score -inf: adds nothing
            scores = tile_scores(q, k, tile_keep, scale, rows, cols)             # (..., bq, bk)
            m_new = np.maximum(m, scores.max(axis=-1))                           # (..., bq)
            m_new_shift = _finite(m_new)                                         # a row masked so far: 0, not -inf
            e = np.exp(scores - m_new_shift[..., None])                          # (..., bq, bk): e^(s - m_new)
            rescale = np.exp(m - m_new_shift)                                    # (..., bq): e^(m_old - m_new)
            l = rescale * l + e.sum(axis=-1)                                     # old terms moved onto m_new
            acc = rescale[..., None] * acc + e @ v[..., cols, :]                 # (..., bq, d_v)
            m = m_new
        # A row with no key kept has l = 0 and acc = 0: dividing by 1 gives 0, never 0/0.
        empty = l == 0
        out[..., rows, :] = acc / np.where(empty, 1, l)[..., None]               # (..., bq, d_v)
        L[..., rows] = _finite(m) + np.log(np.where(empty, 1, l))                # (..., bq); 0 where empty
    return out, (q, k, v, out, L, keep, scale, block_q, block_k)


# Backward. The ordinary op's backward, with A = probs, S = the scaled masked scores:
#   out = A @ v          ->  dv = A.T @ dout,   dA = dout @ v.T
#   A = softmax(S)       ->  dS = A * (dA - D),  D_i = sum_j dA_ij A_ij   (one number per query row)
#   S = q @ k.T * scale  ->  dq = dS @ k * scale,   dk = dS.T @ q * scale
# Everything here is tile by tile except D, a sum over the whole row. It needs no tile:
#   D_i = sum_j dA_ij A_ij = sum_j (dout_i . v_j) A_ij = dout_i . (sum_j A_ij v_j) = dout_i . out_i,
# so D = rowsum(dout * out), from the saved output. Then each tile recomputes its scores S and its
# probabilities A = e^(S - L) (recomputed, not cached: that is the memory saved), and adds its part
# to dq, dk and dv. A masked score is -inf, so its A is 0, and so are its dS and its contributions.
# The key blocks are the outer loop (as FlashAttention-2): each key block's dk and dv are finished
# when its loop ends; dq collects a part from every key block.

def flash_attention_backward(dout, cache):
    q, k, v, out, L, keep, scale, block_q, block_k = cache
    D = (dout * out).sum(axis=-1)                                   # (..., T_q): sum_j dA_ij A_ij, per row
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for rows, cols, tile_keep in kept_tiles(keep, q.shape[-2], k.shape[-2], block_q, block_k):
        probs = np.exp(tile_scores(q, k, tile_keep, scale, rows, cols) - L[..., rows, None])   # (..., bq, bk)
        dout_tile = dout[..., rows, :]                                                    # (..., bq, d_v)
        dv[..., cols, :] += probs.swapaxes(-1, -2) @ dout_tile                            # A.T @ dout
        dprobs = dout_tile @ v[..., cols, :].swapaxes(-1, -2)                             # (..., bq, bk)
        dscores = probs * (dprobs - D[..., rows, None])                                   # A * (dA - D)
        dq[..., rows, :] += dscores @ k[..., cols, :] * scale                             # (..., bq, d_k)
        dk[..., cols, :] += dscores.swapaxes(-1, -2) @ q[..., rows, :] * scale            # (..., bk, d_k)
    return dq, dk, dv, None


def kept_tiles(keep, T_q, T_k, block_q, block_k):
    """(rows, cols, the tile's part of keep) for every tile, key blocks outer, but those keep masks whole (their
    probabilities are all 0: they add nothing)."""
    for cols in _blocks(T_k, block_k):
        for rows in _blocks(T_q, block_q):
            tile_keep = keep_tile(keep, rows, cols)
            if tile_keep is None or tile_keep.any():
                yield rows, cols, tile_keep


def tile_scores(q, k, tile_keep, scale, rows, cols):
    """The scaled scores of the query rows and key columns given (slices), masked by tile_keep: (..., bq, bk)."""
    scores = (q[..., rows, :] * scale) @ k[..., cols, :].swapaxes(-1, -2)        # (..., bq, bk)
    if tile_keep is None or tile_keep.all():
        return scores                                                            # nothing masked: no pass over it
    return np.where(tile_keep, scores, -np.inf)


def keep_tile(keep, rows, cols):
    """The part of keep over the tile (rows, cols), broadcastable to its scores; None when keep is None.
    Read from keep as given: an axis of size 1 (the same for every query, or every key) stays whole."""
    if keep is None:
        return None
    cols = cols if keep.shape[-1] > 1 else slice(None)
    if keep.ndim == 1:
        return keep[cols]
    rows = rows if keep.shape[-2] > 1 else slice(None)
    return keep[..., rows, cols]


def _blocks(T, block):
    """Slices of 0 .. T - 1 of block positions each; the last may be shorter."""
    return [slice(start, min(start + block, T)) for start in range(0, T, block)]


def _finite(m):
    """m with -inf (a row whose every key so far is masked) as 0: s - m is then -inf - 0, never -inf + inf = nan."""
    return np.where(np.isneginf(m), 0, m)
