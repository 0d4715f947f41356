"""Attention's fast twin: the same numbers as attention.py's plain pair, bit for bit, computed a few
sequences at a time and in place. F.attention, and so every model's training, runs this one.

    out, cache = attention_forward_fast(q, k, v, keep=None, scale=None)   # as attention_forward
    dq, dk, dv, None = attention_backward_fast(dout, cache)               # as attention_backward

What it buys (benchmarks/results/speed_idioms.json): a whole batch's (T_q, T_k) arrays outgrow the core's
cache at long lengths, and then each pass over them waits on memory; a few sequences at a time, every pass
stays in the cache. The forward also writes the product, the mask and the softmax into one array it owns.
The backward is the plain attention_backward itself, run on each slice: a student's edition, whose plain
backward is the student's own, trains with it.
"""
import math

import numpy as np

from .attention import attention_backward, check_attention
from .softmax import softmax_into

# About how much of the (T_q, T_k) arrays attention works on at a time: of 0.5 to 8 MiB, 2 MiB was the fastest
# at lengths 129 and 257 (benchmarks/results/speed_idioms.json)
CACHE_BYTES = 2 * 2**20


def attention_forward_fast(q, k, v, keep=None, scale=None):
    """attention_forward's numbers (out, and the cache (q, k, v, probs, scale)), a few sequences at a time."""
    scale = check_attention(q, k, v, keep, scale)
    scores_shape = q.shape[:-1] + (k.shape[-2],)
    probs = np.empty(scores_shape, np.result_type(q, k))  # (..., T_q, T_k), filled a few sequences at a time
    masked = None if keep is None else np.broadcast_to(~keep, scores_shape)   # True where a score is masked
    out = [_forward_rows(q[rows], k[rows], v[rows], None if keep is None else masked[rows], scale, probs[rows])
           for rows in cache_sized_rows(probs)]
    return _stacked(out), (q, k, v, probs, scale)          # out (..., T_q, d_v)


def _forward_rows(q, k, v, masked, scale, probs):
    """Attention for some rows of the batch; their probabilities are written into probs, their output returned."""
    # Each (..., T_q, T_k) pass costs; the op owns probs, so the product, the mask and the softmax write into it.
    scores = np.matmul(q * scale, k.swapaxes(-1, -2), out=probs)   # = (q * scale) @ k.T
    if masked is not None:
        np.copyto(scores, -np.inf, where=masked)           # = np.where(keep, scores, -inf), in place
    softmax_into(scores, -1, out=scores)                   # A = softmax(scores); masked probs are 0
    return probs @ v                                       # (..., T_q, d_v)


def attention_backward_fast(dout, cache):
    """attention_backward's numbers, a few sequences at a time: the plain backward on each slice."""
    q, k, v, probs, scale = cache
    grads = [attention_backward(dout[rows], (q[rows], k[rows], v[rows], probs[rows], scale))[:3]
             for rows in cache_sized_rows(probs)]
    dq, dk, dv = (_stacked(parts) for parts in zip(*grads))   # each as q, k, v
    return dq, dk, dv, None


def cache_sized_rows(scores):
    """Slices of the first axis of scores (..., T_q, T_k): as many as CACHE_BYTES needs, the rows shared out
    evenly, so that a slice holds at most CACHE_BYTES and one row more.

    Each sequence's numbers are the same either way (a product of stacked matrices is one product per
    matrix). A 2-axis scores (T_q, T_k), or an empty batch, is one slice.
    """
    if scores.ndim < 3 or len(scores) == 0:
        return [slice(None)]
    n_slices = max(1, math.ceil(scores.nbytes / CACHE_BYTES))
    rows = math.ceil(len(scores) / n_slices)                 # the rows shared out evenly
    return [slice(start, start + rows) for start in range(0, len(scores), rows)]


def _stacked(parts):
    """The parts of the batch's rows as one array (the part itself when there is one)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)
