"""Multi-head attention: project, split into heads, (turn q and k by their positions,) attend, merge, project back.

Shapes: B batch, T_q queries, T_k keys, h heads, h_kv key/value heads (h unless grouped), d_k = d_model / h.
"""
import numpy as np

from .. import functional as F
from .layers import Linear
from .module import Module


class MultiHeadAttention(Module):
    """All heads at once: Q = x_q @ W_q, K = x_kv @ W_k, V = x_kv @ W_v, each split into h heads.

    With rope (self-attention only), each query and key is turned by its position (F.rope), counted
    from `start`: 0, or the positions a key/value cache already holds.
    rope_theta: rope's base (config.rope_theta).
    n_kv_heads (grouped-query attention): fewer key/value heads than query heads, each shared by a group of
    n_heads / n_kv_heads query heads (F.repeat_kv); W_k and W_v are then (d_model, n_kv_heads * d_k), and a
    key/value cache keeps n_kv_heads heads. None: n_heads, plain multi-head attention.
    After each forward, `self.probs` holds the attention probabilities (B, h, T_q, T_k); with flash=True the
    heads attend through F.flash_attention, tile by tile, which keeps no probabilities: `self.probs` is None.
    """

    def __init__(self, d_model, n_heads, rng, dtype="float32", bias=True, rope=False, n_kv_heads=None,
                 rope_theta=10000.0, flash=False):
        self.n_heads = n_heads
        self.n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        d_kv = self.n_kv_heads * (d_model // n_heads)                  # the keys' and values' width
        self.W_q = Linear(d_model, d_model, rng, bias=bias, dtype=dtype)
        self.W_k = Linear(d_model, d_kv, rng, bias=bias, dtype=dtype)
        self.W_v = Linear(d_model, d_kv, rng, bias=bias, dtype=dtype)
        self.W_o = Linear(d_model, d_model, rng, bias=bias, dtype=dtype)
        self.rope, self.rope_theta = rope, rope_theta
        self.flash = flash
        self.probs = None

    def turned(self, x, start):
        """x (B, h, T, d_k) at positions start .. start + T - 1, turned by them with rope, else as it is."""
        return F.rope(x, np.arange(start, start + x.shape[-2]), self.rope_theta) if self.rope else x

    def keys_values(self, x_kv, start=0):
        """x_kv (B, T_k, d_model), its first position number start -> keys and values (B, h_kv, T_k, d_k)."""
        k = self.turned(F.split_heads(self.W_k(x_kv), self.n_kv_heads), start)    # (B, h_kv, T_k, d_k)
        return k, F.split_heads(self.W_v(x_kv), self.n_kv_heads)

    def forward(self, x_q, x_kv, keep=None, cache=None):
        """x_q (B, T_q, d_model) attends to x_kv (B, T_k, d_model) -> (B, T_q, d_model).

        keep: boolean mask broadcastable to (B, T_q, T_k), True = may attend.
        cache: this layer's KeysValues when decoding incrementally (nn/cache.py): it adds the
        keys and values of the positions decoded before.
        """
        start = 0 if cache is None else cache.length                            # the queries' first position
        q = self.turned(F.split_heads(self.W_q(x_q), self.n_heads), start)      # (B, h, T_q, d_k)
        k, v = self.keys_values(x_kv) if cache is None else cache.keys_values(self, x_kv)   # (B, h_kv, T_k, d_k)
        if self.n_kv_heads != self.n_heads:                     # grouped: each key/value head serves a group
            k, v = F.repeat_kv(k, self.n_heads), F.repeat_kv(v, self.n_heads)          # (B, h, T_k, d_k)
        if keep is not None and keep.ndim == 3:
            keep = keep[:, None]                               # (B, 1, T_q or 1, T_k): the same for every head
        if self.flash:
            out, self.probs = F.flash_attention(q, k, v, keep), None            # (B, h, T_q, d_k)
        else:
            out, self.probs = F.attention(q, k, v, keep)                         # (B, h, T_q, d_k)
        return self.W_o(F.merge_heads(out))                                      # (B, T_q, d_model)
