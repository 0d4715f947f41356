"""Masks, scaled dot-product attention (one fused op), and splitting into heads.

Attention is written here plainly, line by line as it is derived (the form an edition blanks and the
grader grades); attention_fast.py is its twin for speed, which the training loop runs.

Masks are boolean and True means "may attend" (keep), as in PyTorch's
scaled_dot_product_attention. Masking is by selection: a masked score becomes
-inf before the softmax, so its probability is exactly zero.
"""
import math

import numpy as np

from .checks import check_finite, check_float, check_ids, check_integer, check_mask
from .softmax import softmax_backward, softmax_forward

def causal_mask(T, start=0):
    """(T, T) keep-mask, True on and below the diagonal: position t sees 0..t.

    With start > 0 the T queries are positions start .. start + T - 1 and the
    keys are positions 0 .. start + T - 1: (T, start + T), query i sees 0 .. start + i.
    (Incremental decoding: the earlier positions' keys come from a cache.)
    """
    check_integer("causal_mask", "T", T, 1)
    check_integer("causal_mask", "start", start, 0)
    return np.tri(T, start + T, start, dtype=bool)


def padding_mask(ids, pad_id):
    """(B, 1, T) keep-mask, False at the PAD positions of ids (B, T).

    The middle axis of size 1 broadcasts over every query position.
    """
    check_ids("padding_mask", ids)
    check_integer("padding_mask", "pad_id", pad_id, 0)
    if ids.ndim != 2:
        raise ValueError(f"padding_mask: ids must be (B, T), got shape {ids.shape}")
    return (ids != pad_id)[:, None, :]                       # (B, 1, T)


def mask_forward(scores, keep):
    """Set the scores where keep is False to -inf."""
    check_float("mask", scores=scores)
    check_mask("mask", keep, scores.shape)
    return np.where(keep, scores, -np.inf), keep           # a Python -inf keeps scores' dtype


def mask_backward(dout, cache):
    keep = cache
    # out = scores where kept, else a constant  ->  dscores = dout where kept, else 0
    return np.where(keep, dout, 0), None                   # scores' shape


def attention_forward(q, k, v, keep=None, scale=None):
    """softmax(q @ k.T * scale, masked) @ v, fused into one op.

    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v),
    keep broadcastable to (..., T_q, T_k); scale defaults to 1/sqrt(d_k).
    Returns out (..., T_q, d_v), cache; the cache (q, k, v, probs, scale) holds the
    attention probabilities probs (..., T_q, T_k), which F.attention also returns.
    A query whose every key is masked gets probabilities of zero and an output of zero.
    (The plain form, the one to read; the training loop runs attention_fast.py's twin, the same numbers.)
    """
    scale = check_attention(q, k, v, keep, scale)
    scores = (q * scale) @ k.swapaxes(-1, -2)              # (..., T_q, T_k) = q @ k.T * scale, scaling q
    if keep is not None:
        scores = np.where(keep, scores, -np.inf)           # a masked score is -inf: its probability is 0
    probs, _ = softmax_forward(scores)                     # (..., T_q, T_k): A = softmax(S), row by row
    return probs @ v, (q, k, v, probs, scale)              # out (..., T_q, d_v)


def check_attention(q, k, v, keep, scale, op="attention"):
    """The checks of attention's inputs (op: the name its lines give), one line each -> the scale (1/sqrt(d_k)
    if None)."""
    check_float(op, q=q, k=k, v=v)
    if q.ndim < 2 or k.ndim != q.ndim or v.ndim != q.ndim:
        raise ValueError(f"{op}: q, k, v need the same number (>= 2) of axes, got {q.shape}, {k.shape}, {v.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"{op}: q has d_k={q.shape[-1]} but k has d_k={k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"{op}: k has {k.shape[-2]} positions (T_k) but v has {v.shape[-2]}")
    if not q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
        raise ValueError(f"{op}: q, k, v must share their leading (batch, head) axes, "
                         f"got {q.shape[:-2]}, {k.shape[:-2]}, {v.shape[:-2]}")
    if keep is not None:
        check_mask(op, keep, q.shape[:-1] + (k.shape[-2],))
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    check_finite(op, "scale", scale)
    return scale


# Backward, with A = probs and S = the scaled, masked scores:
#   out = A @ v       ->  dv = A.T @ dout,   dA = dout @ v.T
#   A = softmax(S)    ->  dS = A * (dA - sum_j dA_j A_j)   (row by row; masked A are 0, so is dS)
#   S = q @ k.T * scale  ->  dq = dS @ k * scale,   dk = dS.T @ q * scale
# (.T swaps the last two axes.) The mask selects, so it passes dS through unchanged.

def attention_backward(dout, cache):
    q, k, v, probs, scale = cache
    dv = probs.swapaxes(-1, -2) @ dout                     # (..., T_k, d_v) = A.T @ dout
    dprobs = dout @ v.swapaxes(-1, -2)                     # (..., T_q, T_k) = dout @ v.T
    (dS,) = softmax_backward(dprobs, (probs, -1))          # (..., T_q, T_k)
    dq = dS @ k * scale                                    # (..., T_q, d_k): the scale on T_q x d_k, not on dS
    dk = dS.swapaxes(-1, -2) @ q * scale                   # (..., T_k, d_k) = dS.T @ q * scale
    return dq, dk, dv, None


def split_heads_forward(x, n_heads):
    """(..., T, d_model) -> (..., n_heads, T, d_k) with d_k = d_model / n_heads."""
    d_model = x.shape[-1]
    if n_heads < 1 or d_model % n_heads:
        raise ValueError(f"split_heads: d_model={d_model} is not divisible by n_heads={n_heads}")
    *lead, T, _ = x.shape
    heads = x.reshape(*lead, T, n_heads, d_model // n_heads)  # (..., T, h, d_k)
    return heads.swapaxes(-2, -3), None                       # (..., h, T, d_k)


def split_heads_backward(dout, cache):
    # splitting moves numbers without changing them: merge the gradient back
    return (merge_heads_forward(dout)[0],)                    # (..., h, T, d_k) -> (..., T, h * d_k)


def merge_heads_forward(x):
    """(..., n_heads, T, d_k) -> (..., T, n_heads * d_k): the heads side by side."""
    *lead, h, T, d_k = x.shape
    return x.swapaxes(-2, -3).reshape(*lead, T, h * d_k), h   # (..., T, h * d_k)


def merge_heads_backward(dout, cache):
    n_heads = cache
    # merging moves numbers without changing them: split the gradient back
    return (split_heads_forward(dout, n_heads)[0],)           # (..., T, h * d_k) -> (..., h, T, d_k)
