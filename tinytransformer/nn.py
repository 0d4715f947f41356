"""The layers of the Transformer, small to large, ending with the whole model.

Shapes: B batch, T time (T_src for the source, T_tgt for the target),
V vocabulary, h heads, d_k = d_model / h.

    Linear, Embedding, LayerNorm, Dropout          building blocks
    MultiHeadAttention, FeedForward                the two kinds of sublayer
    EncoderLayer, DecoderLayer                     sublayers with residual + LayerNorm
    Transformer                                    embeddings, the stacks, the output projection
"""
import dataclasses
import math

import numpy as np

from . import functional as F
from .data import PAD
from .ops.checks import check_ids
from .tensor import Tensor

DTYPES = ("float32", "float64")
ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


@dataclasses.dataclass
class TransformerConfig:
    """Sizes and switches of the model. Defaults are the classroom model."""
    vocab_size: int
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2            # encoder layers, and as many decoder layers
    d_ff: int = 128
    max_len: int = 64            # longest source or target sequence
    dropout: float = 0.1         # the paper's P_drop
    norm_first: bool = False     # False: post-LN, the paper; True: pre-LN, as GPT-2
    tie_embeddings: bool = True  # the output projection reuses the embedding matrix
    activation: str = "relu"     # of the feed-forward sublayer: "relu" or "gelu"
    dtype: str = "float32"       # float64 for gradient checks

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"TransformerConfig: {name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"TransformerConfig: d_model={self.d_model} is not divisible by "
                             f"n_heads={self.n_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"TransformerConfig: dropout must be in [0, 1), got {self.dropout}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"TransformerConfig: activation must be one of {list(ACTIVATIONS)}, "
                             f"got {self.activation!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"TransformerConfig: dtype must be one of {DTYPES}, got {self.dtype!r}")

    @property
    def d_k(self):
        return self.d_model // self.n_heads


def parameter(data, name):
    return Tensor(data, requires_grad=True, name=name)


class Module:
    """A layer: holds parameters (Tensors with requires_grad) and sub-layers as attributes."""

    training = True

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix=""):
        """(dotted name, Tensor) for every parameter, sub-layers included, in definition order."""
        for key, value in vars(self).items():
            if isinstance(value, Tensor) and value.requires_grad:
                yield prefix + key, value
            elif isinstance(value, Module):
                yield from value.named_parameters(f"{prefix}{key}.")
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield from item.named_parameters(f"{prefix}{key}.{i}.")

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def modules(self):
        yield self
        for value in vars(self).values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, Module):
                    yield from item.modules()

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def train(self, mode=True):
        """Training mode (dropout on) or, with mode=False, evaluation mode (dropout off)."""
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        return self.train(False)


class Linear(Module):
    """y = x @ W + b, W (d_in, d_out) Xavier-uniform, b zeros."""

    def __init__(self, d_in, d_out, rng, bias=True, dtype="float32"):
        limit = math.sqrt(6.0 / (d_in + d_out))
        self.W = parameter(rng.uniform(-limit, limit, (d_in, d_out)).astype(dtype), "W")
        self.b = parameter(np.zeros(d_out, dtype=dtype), "b") if bias else None

    def forward(self, x):
        return F.linear(x, self.W, self.b)


class Embedding(Module):
    """Token ids (B, T) -> vectors (B, T, d_model), multiplied by sqrt(d_model) as in the paper."""

    def __init__(self, vocab_size, d_model, rng, dtype="float32"):
        # entries N(0, 1/d_model): after the sqrt(d_model) scale they are N(0, 1)
        self.table = parameter((rng.standard_normal((vocab_size, d_model)) / math.sqrt(d_model)).astype(dtype),
                               "table")
        self.scale = math.sqrt(d_model)

    def forward(self, ids):
        return F.embedding(ids, self.table) * self.scale


class LayerNorm(Module):
    def __init__(self, d_model, dtype="float32", eps=1e-5):
        self.gamma = parameter(np.ones(d_model, dtype=dtype), "gamma")
        self.beta = parameter(np.zeros(d_model, dtype=dtype), "beta")
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, self.gamma, self.beta, self.eps)


class Dropout(Module):
    """Inverted dropout with its own Generator; the identity in eval mode or when p = 0."""

    def __init__(self, p, rng):
        self.p, self.rng = p, rng

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return F.dropout(x, self.p, self.rng)


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

    def keys_values(self, x_kv):
        """x_kv (B, T_k, d_model) -> k, v (B, h, T_k, d_k)."""
        return F.split_heads(self.W_k(x_kv), self.n_heads), F.split_heads(self.W_v(x_kv), self.n_heads)

    def attend(self, x_q, k, v, keep=None):
        """x_q (B, T_q, d_model) attends to keys and values (B, h, T_k, d_k) -> (B, T_q, d_model).

        keep: boolean mask broadcastable to (B, T_q, T_k), True = may attend.
        """
        q = F.split_heads(self.W_q(x_q), self.n_heads)       # (B, h, T_q, d_k)
        if keep is not None and keep.ndim == 3:
            keep = keep[:, None]                             # (B, 1, T_q or 1, T_k): same for every head
        out, self.probs = F.attention(q, k, v, keep)         # (B, h, T_q, d_k)
        return self.W_o(F.merge_heads(out))                  # (B, T_q, d_model)

    def forward(self, x_q, x_kv, keep=None):
        """x_q (B, T_q, d_model) attends to x_kv (B, T_k, d_model)."""
        return self.attend(x_q, *self.keys_values(x_kv), keep)


class KVCache:
    """What incremental decoding keeps between steps, for each decoder layer.

    Decoding adds one target position at a time. The keys and values of the
    earlier positions never change (the decoder is causal: they saw nothing
    later), so each step computes them for the new position only and appends
    them here; the encoder output's keys and values are computed once.
    Inference only: the arrays here are never part of a backward pass.
    """

    def __init__(self):
        self.length = 0          # target positions decoded so far
        self.self_kv = {}        # decoder layer -> (k, v) Tensors (B, h, length, d_k)
        self.memory_kv = {}      # decoder layer -> (k, v) Tensors (B, h, T_src, d_k)

    def extend(self, layer, k, v):
        """Append the new positions' k, v (B, h, T_new, d_k); return all so far (B, h, length + T_new, d_k)."""
        if layer in self.self_kv:
            old_k, old_v = self.self_kv[layer]
            k = Tensor(np.concatenate([old_k.data, k.data], axis=-2))
            v = Tensor(np.concatenate([old_v.data, v.data], axis=-2))
        self.self_kv[layer] = (k, v)
        return k, v

    def select(self, rows):
        """Keep (or repeat) the given batch rows, e.g. the surviving hypotheses of a beam search."""
        def pick(kv):
            return tuple(Tensor(t.data[rows]) for t in kv)
        self.self_kv = {layer: pick(kv) for layer, kv in self.self_kv.items()}
        self.memory_kv = {layer: pick(kv) for layer, kv in self.memory_kv.items()}


class FeedForward(Module):
    """Position-wise: W_2 act(x @ W_1 + b_1) + b_2, from d_model to d_ff and back."""

    def __init__(self, d_model, d_ff, rng, activation="relu", dtype="float32"):
        self.linear1 = Linear(d_model, d_ff, rng, dtype=dtype)
        self.linear2 = Linear(d_ff, d_model, rng, dtype=dtype)
        self.activation = activation

    def forward(self, x):
        return self.linear2(ACTIVATIONS[self.activation](self.linear1(x)))   # (B, T, d_model)


def residual(x, sublayer, norm, dropout, norm_first):
    """Post-LN (the paper): norm(x + sublayer(x)); pre-LN: x + sublayer(norm(x))."""
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


class EncoderLayer(Module):
    """Self-attention over the source, then feed-forward; residual + LayerNorm around each."""

    def __init__(self, config, rng, dropout_rng):
        c = config
        self.self_attn = MultiHeadAttention(c.d_model, c.n_heads, rng, c.dtype)
        self.feed_forward = FeedForward(c.d_model, c.d_ff, rng, c.activation, c.dtype)
        self.norm1, self.norm2 = LayerNorm(c.d_model, c.dtype), LayerNorm(c.d_model, c.dtype)
        self.dropout = Dropout(c.dropout, dropout_rng)
        self.norm_first = c.norm_first

    def forward(self, x, src_keep):
        x = residual(x, lambda h: self.self_attn(h, h, src_keep), self.norm1, self.dropout, self.norm_first)
        return residual(x, self.feed_forward, self.norm2, self.dropout, self.norm_first)


class DecoderLayer(Module):
    """Masked self-attention, attention to the encoder's output, feed-forward;
    residual + LayerNorm around each."""

    def __init__(self, config, rng, dropout_rng):
        c = config
        self.self_attn = MultiHeadAttention(c.d_model, c.n_heads, rng, c.dtype)
        self.cross_attn = MultiHeadAttention(c.d_model, c.n_heads, rng, c.dtype)
        self.feed_forward = FeedForward(c.d_model, c.d_ff, rng, c.activation, c.dtype)
        self.norm1, self.norm2, self.norm3 = (LayerNorm(c.d_model, c.dtype) for _ in range(3))
        self.dropout = Dropout(c.dropout, dropout_rng)
        self.norm_first = c.norm_first

    def forward(self, y, memory, tgt_keep, src_keep, cache=None):
        """y (B, T_tgt, d_model) the target so far; memory (B, T_src, d_model) the encoder output.

        With a KVCache, y holds only the new positions; the keys and values of
        earlier positions and of the memory come from the cache.
        """
        def self_attention(h):
            k, v = self.self_attn.keys_values(h)                         # (B, h, T_tgt, d_k)
            if cache is not None:
                k, v = cache.extend(self, k, v)                          # (B, h, length + T_tgt, d_k)
            return self.self_attn.attend(h, k, v, tgt_keep)

        def cross_attention(h):
            if cache is None:
                return self.cross_attn(h, memory, src_keep)
            if self not in cache.memory_kv:
                cache.memory_kv[self] = self.cross_attn.keys_values(memory)
            return self.cross_attn.attend(h, *cache.memory_kv[self], src_keep)

        y = residual(y, self_attention, self.norm1, self.dropout, self.norm_first)
        y = residual(y, cross_attention, self.norm2, self.dropout, self.norm_first)
        return residual(y, self.feed_forward, self.norm3, self.dropout, self.norm_first)


class Transformer(Module):
    """The encoder-decoder of "Attention Is All You Need".

        logits = model(src_ids, tgt_in_ids)     # (B, T_src), (B, T_tgt) ints -> (B, T_tgt, V)

    One embedding table serves source and target (one vocabulary) and, with
    tie_embeddings, the output projection too. Source PAD positions are masked
    in encoder self-attention and cross-attention; decoder self-attention is causal.
    """

    def __init__(self, config, rng=None):
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"Transformer: config must be a TransformerConfig, got {type(config).__name__}")
        rng = np.random.default_rng(rng)
        c = self.config = config
        dropout_rng = np.random.default_rng(rng.integers(2 ** 63))   # its own stream, from the same seed
        self.embed = Embedding(c.vocab_size, c.d_model, rng, c.dtype)
        self.dropout = Dropout(c.dropout, dropout_rng)
        self.encoder = [EncoderLayer(c, rng, dropout_rng) for _ in range(c.n_layers)]
        self.decoder = [DecoderLayer(c, rng, dropout_rng) for _ in range(c.n_layers)]
        # pre-LN leaves the residual stream unnormalised: normalise each stack's output once
        self.encoder_norm = LayerNorm(c.d_model, c.dtype) if c.norm_first else None
        self.decoder_norm = LayerNorm(c.d_model, c.dtype) if c.norm_first else None
        self.output = None if c.tie_embeddings else Linear(c.d_model, c.vocab_size, rng, dtype=c.dtype)

    def check_ids(self, ids, name, offset=0):
        check_ids("Transformer", ids, self.config.vocab_size, what=f"{name} token id")
        if ids.ndim != 2:
            raise ValueError(f"Transformer: {name} ids must be (B, T), got shape {ids.shape}")
        if offset + ids.shape[1] > self.config.max_len:
            raise ValueError(f"Transformer: {name} has {offset + ids.shape[1]} positions but max_len is "
                             f"{self.config.max_len}")

    def embed_positions(self, ids, offset=0):
        return self.dropout(F.positional_encoding(self.embed(ids), offset))   # (B, T, d_model)

    def encode(self, src_ids):
        """src_ids (B, T_src) -> memory (B, T_src, d_model), src_keep (B, 1, T_src)."""
        self.check_ids(src_ids, "src")
        src_keep = F.padding_mask(src_ids, PAD)                          # (B, 1, T_src)
        x = self.embed_positions(src_ids)
        for layer in self.encoder:
            x = layer(x, src_keep)
        if self.encoder_norm is not None:
            x = self.encoder_norm(x)
        return x, src_keep

    def decode(self, tgt_in_ids, memory, src_keep, cache=None):
        """tgt_in_ids (B, T_tgt) and the encoder's output -> logits (B, T_tgt, V).

        With a KVCache, tgt_in_ids are only the positions after the cache.length
        already decoded (one at a time, in incremental decoding), and the cache grows.
        """
        start = 0 if cache is None else cache.length
        self.check_ids(tgt_in_ids, "tgt_in", start)
        tgt_keep = F.causal_mask(tgt_in_ids.shape[1], start)             # (T_tgt, start + T_tgt)
        y = self.embed_positions(tgt_in_ids, start)
        for layer in self.decoder:
            y = layer(y, memory, tgt_keep, src_keep, cache)
        if cache is not None:
            cache.length += tgt_in_ids.shape[1]
        if self.decoder_norm is not None:
            y = self.decoder_norm(y)
        if self.output is None:
            return F.linear(y, F.transpose(self.embed.table))            # (B, T_tgt, V), W = E.T
        return self.output(y)                                            # (B, T_tgt, V)

    def forward(self, src_ids, tgt_in_ids):
        memory, src_keep = self.encode(src_ids)
        return self.decode(tgt_in_ids, memory, src_keep)

    def attention_probs(self):
        """The attention probabilities of the last forward pass: {"encoder.0.self_attn": (B, h, T_q, T_k), ...}."""
        probs = {}
        for stack_name, stack in (("encoder", self.encoder), ("decoder", self.decoder)):
            for i, layer in enumerate(stack):
                for name in ("self_attn", "cross_attn"):
                    if hasattr(layer, name):
                        probs[f"{stack_name}.{i}.{name}"] = getattr(layer, name).probs
        return probs
