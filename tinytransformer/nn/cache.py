"""The key/value cache: what incremental decoding keeps between steps, for every attention layer.

Decoding adds one position at a time. In a causal stack the keys and values
of the earlier positions never change (they saw nothing later, and dropout is
off), so each step computes them for the new positions only and appends them
here; the keys and values of an encoder's output are computed once. The cache
holds plain arrays: decoding runs outside any Tape, nothing here is ever part
of a backward pass.

    cache = model.new_cache()                      # KVCache(n_layers, cross_attention)
    logits = model.decode(new_ids, ..., cache)     # the layers read and extend it
    cache.layers[i].self_attn.k                    # (B, h_kv, T_k, d_k) of layer i

Shapes: B batch, h_kv key/value heads (the query heads h, unless grouped-query attention shares each
key/value head among a group of them: then only the h_kv are kept), T_k positions kept, d_k = d_model / h.
"""
import numpy as np


class KeysValues:
    """One attention layer's keys and values k, v (B, h_kv, T_k, d_k), kept between decoding steps.

    Self-attention (grows=True) appends each step's new positions. Cross-attention
    (grows=False) attends to the encoder output, which does not change: its keys
    and values are computed at the first step and then read.
    """

    def __init__(self, grows):
        self.grows = grows
        self.k = self.v = None

    @property
    def length(self):
        """Positions kept: the first new position's number (rotary positions count from it)."""
        return 0 if self.k is None else self.k.shape[-2]

    def keys_values(self, attention, x_kv):
        """attention's keys and values for this step: (B, h_kv, T_k, d_k) arrays, all positions so far."""
        if self.k is not None and not self.grows:
            return self.k, self.v                                   # the encoder output's, from the first step
        new = attention.keys_values(x_kv, self.length)              # keys turned from position self.length on
        k, v = (t.data for t in new)                                # (B, h_kv, T_new, d_k): the new positions only
        if self.k is not None and len(k) != len(self.k):
            raise ValueError(f"KVCache: this cache holds a batch of {len(self.k)} rows, the input has {len(k)}; "
                             "use a new cache (model.new_cache()) for a new batch")
        if self.k is not None:
            k = np.concatenate([self.k, k], axis=-2)                # (B, h_kv, T_k + T_new, d_k)
            v = np.concatenate([self.v, v], axis=-2)
        self.k, self.v = k, v
        return k, v

    def select(self, rows):
        """Keep (or repeat) the given batch rows: (B, ...) -> (len(rows), ...)."""
        if self.k is not None:
            self.k, self.v = self.k[rows], self.v[rows]


class LayerCache:
    """The KeysValues of one layer: its self-attention's and, in a decoder with an encoder, its cross-attention's."""

    def __init__(self, cross_attention):
        self.self_attn = KeysValues(grows=True)
        self.cross_attn = KeysValues(grows=False) if cross_attention else None


class KVCache:
    """One LayerCache per layer of a causal stack (the Transformer's decoder: cross_attention=True; GPT: False)."""

    def __init__(self, n_layers, cross_attention):
        self.layers = [LayerCache(cross_attention) for _ in range(n_layers)]

    @property
    def length(self):
        """Positions decoded so far: as many as the first layer's self-attention keeps."""
        return self.layers[0].self_attn.length

    def select(self, rows):
        """Keep (or repeat) the given batch rows, e.g. the surviving hypotheses of a beam search."""
        for layer in self.layers:
            for keys_values in (layer.self_attn, layer.cross_attn):
                if keys_values is not None:
                    keys_values.select(rows)
