"""Grouped-query attention's one new op: each key/value head shared by a group of query heads.

With h query heads and h_kv key/value heads (h a multiple of h_kv), query head j
attends with key/value head j // (h / h_kv): heads 0..g-1 share the first, the
next g the second, and so on (g = h / h_kv, the group size). Fewer key/value
heads make fewer keys and values to compute and to keep in a decoding cache
(Ainslie et al. 2023, "GQA"; LLaMA 2 70B, SmolLM2). h_kv = h is plain multi-head
attention, h_kv = 1 multi-query attention (Shazeer 2019).

The sharing is a copy: repeat each key/value head g times, then attend as usual.
"""
import numpy as np

from .checks import check_float, check_integer


def repeat_kv_forward(x, n_heads):
    """x (..., h_kv, T, d_k) -> (..., n_heads, T, d_k): head j of the output is head j // (n_heads / h_kv) of x."""
    check_float("repeat_kv", x=x)
    check_integer("repeat_kv", "n_heads", n_heads, 1)
    if x.ndim < 3:
        raise ValueError(f"repeat_kv: x must be (..., h_kv, T, d_k), got shape {x.shape}")
    h_kv = x.shape[-3]
    if h_kv == 0 or n_heads % h_kv:
        raise ValueError(f"repeat_kv: n_heads={n_heads} query heads cannot be shared out among h_kv={h_kv} "
                         "key/value heads (n_heads must be a multiple of h_kv)")
    group = n_heads // h_kv
    return np.repeat(x, group, axis=-3), (h_kv, group)                 # (..., h_kv * group, T, d_k)


def repeat_kv_backward(dout, cache):
    h_kv, group = cache
    # forward: out[..., j, :, :] = x[..., j // group, :, :]  ->  dx[..., i, :, :] = the sum of dout over the
    # group of heads i * group .. (i + 1) * group - 1 that copied head i (a copy used g times gets g gradients)
    *lead, h, T, d_k = dout.shape
    return (dout.reshape(*lead, h_kv, group, T, d_k).sum(axis=-3),)    # (..., h_kv, T, d_k)
