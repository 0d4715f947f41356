"""Multi-head attention, and the key/value cache that incremental decoding keeps for it.

Shapes: B batch, T_q queries, T_k keys, h heads, d_k = d_model / h.
"""
import numpy as np

from .. import functional as F
from ..tensor import Tensor
from .layers import Linear
from .module import Module


class MultiHeadAttention(Module):
    """All heads at once: project, split into heads, attend, merge, project back.

    After each forward, `self.probs` holds the attention probabilities (B, h, T_q, T_k).
    """

    def __init__(self, d_model, n_heads, rng, dtype="float32"):
        self.n_heads = n_heads
        self.W_q = Linear(d_model, d_model, rng, dtype=dtype)
        self.W_k = Linear(d_model, d_model, rng, dtype=dtype)
        self.W_v = Linear(d_model, d_model, rng, dtype=dtype)
        self.W_o = Linear(d_model, d_model, rng, dtype=dtype)
        self.probs = None

    def forward(self, x_q, x_kv, keep=None, cache=None):
        """x_q (B, T_q, d_model) attends to x_kv (B, T_k, d_model) -> (B, T_q, d_model).

        keep: boolean mask broadcastable to (B, T_q, T_k), True = may attend.
        cache: this layer's KeysValues when decoding incrementally (see KVCache).
        """
        q = F.split_heads(self.W_q(x_q), self.n_heads)               # (B, h, T_q, d_k)
        if cache is not None and cache.complete:
            k, v = cache.k, cache.v                                  # the encoder output's, from the first step
        else:
            k = F.split_heads(self.W_k(x_kv), self.n_heads)          # (B, h, T_k, d_k)
            v = F.split_heads(self.W_v(x_kv), self.n_heads)          # (B, h, T_k, d_k)
            if cache is not None:
                k, v = cache.add(k, v)                               # (B, h, earlier + T_k, d_k)
        if keep is not None and keep.ndim == 3:
            keep = keep[:, None]                                     # (B, 1, T_q or 1, T_k): same for every head
        out, self.probs = F.attention(q, k, v, keep)                 # (B, h, T_q, d_k)
        return self.W_o(F.merge_heads(out))                          # (B, T_q, d_model)


class KeysValues:
    """One attention layer's keys and values k, v (B, h, T_k, d_k), kept between decoding steps.

    Self-attention (grows=True) appends each step's new positions. Cross-attention
    (grows=False) attends to the encoder output, which does not change: its keys
    and values are computed at the first step and then read (complete is True).
    """

    def __init__(self, grows):
        self.grows = grows
        self.k = self.v = None

    @property
    def complete(self):
        return not self.grows and self.k is not None

    def add(self, k, v):
        """Append the new positions' k, v (B, h, T_new, d_k); return all so far (B, h, T_k, d_k)."""
        if self.k is not None:
            k = Tensor(np.concatenate([self.k.data, k.data], axis=-2))
            v = Tensor(np.concatenate([self.v.data, v.data], axis=-2))
        self.k, self.v = k, v
        return k, v

    def select(self, rows):
        if self.k is not None:
            self.k, self.v = Tensor(self.k.data[rows]), Tensor(self.v.data[rows])   # (len(rows), h, T_k, d_k)


class KVCache:
    """What incremental decoding keeps between steps, for each layer of a causal stack.

    Decoding adds one position at a time. The keys and values of the earlier
    positions never change (the stack is causal: they saw nothing later), so
    each step computes them for the new position only and appends them here;
    the keys and values of an encoder's output are computed once.
    Inference only: the arrays here are never part of a backward pass.

        cache = KVCache(n_layers=2, cross_attention=True)   # the Transformer's decoder; GPT: False
        cache.layers[i].self_attn, cache.layers[i].cross_attn   # KeysValues of layer i
    """

    def __init__(self, n_layers, cross_attention):
        self.layers = [LayerCache(cross_attention) for _ in range(n_layers)]

    @property
    def length(self):
        """Positions decoded so far: as many as the keys kept (the cache is only ever changed by add)."""
        first = self.layers[0].self_attn
        return 0 if first.k is None else first.k.shape[-2]

    def select(self, rows):
        """Keep (or repeat) the given batch rows, e.g. the surviving hypotheses of a beam search."""
        for layer in self.layers:
            for keys_values in (layer.self_attn, layer.cross_attn):
                if keys_values is not None:
                    keys_values.select(rows)


class LayerCache:
    """The KeysValues of one layer: its self-attention's and, in a decoder with an encoder, its cross-attention's."""

    def __init__(self, cross_attention):
        self.self_attn = KeysValues(grows=True)
        self.cross_attn = KeysValues(grows=False) if cross_attention else None
