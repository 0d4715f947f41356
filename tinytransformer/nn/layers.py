"""The building blocks: Linear, Embedding, the two kinds of added positions, LayerNorm, RMSNorm, Dropout,
FeedForward and SwiGLU (rotary positions are in attention.py: they turn queries and keys, adding nothing).

Shapes: B batch, T time, V vocabulary.
"""
import math

import numpy as np

from .. import functional as F
from .module import Module, parameter

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}
FEED_FORWARDS = (*ACTIVATIONS, "swiglu")    # config.activation: FeedForward with an activation, or SwiGLU
NORMS = ("layer", "rms")                    # config.norm: LayerNorm or RMSNorm


class Linear(Module):
    """y = x @ W + b, W (d_in, d_out) Xavier-uniform, b zeros."""

    def __init__(self, d_in, d_out, rng, bias=True, dtype="float32"):
        limit = math.sqrt(6.0 / (d_in + d_out))
        self.W = parameter(rng.uniform(-limit, limit, (d_in, d_out)).astype(dtype), "W")
        self.b = parameter(np.zeros(d_out, dtype=dtype), "b") if bias else None

    def forward(self, x):
        return F.linear(x, self.W, self.b)


class Embedding(Module):
    """Token ids (B, T) -> vectors (B, T, d_model), multiplied by sqrt(d_model) as in the paper (scale=False:
    the rows as they are, as LLaMA and BERT)."""

    def __init__(self, vocab_size, d_model, rng, dtype="float32", scale=True):
        # entries N(0, 1/d_model): after the sqrt(d_model) scale they are N(0, 1)
        self.table = parameter((rng.standard_normal((vocab_size, d_model)) / math.sqrt(d_model)).astype(dtype),
                               "table")
        self.scale = math.sqrt(d_model) if scale else None

    def forward(self, ids):
        rows = F.embedding(ids, self.table)                                  # (B, T, d_model)
        return rows if self.scale is None else rows * self.scale


class SinusoidalPositions(Module):
    """x (B, T, d_model) plus the paper's fixed sin/cos table, rows offset .. offset + T - 1. No parameters."""

    def forward(self, x, offset=0):
        return F.positional_encoding(x, offset)


class LearnedPositions(Module):
    """x (B, T, d_model) plus a learned vector per position, as GPT and BERT have.

    A learned position is an embedding: row t of a (max_len, d_model) table,
    looked up by the position ids offset .. offset + T - 1 with the same op as
    the tokens, so it gets its gradient the same way.
    """

    def __init__(self, max_len, d_model, rng, dtype="float32"):
        # entries N(0, 1), the size of the scaled token embeddings. BERT draws N(0, 0.02^2), but beside
        # tokens of size 1 such positions start out nearly invisible: a small GPT learning to repeat 6
        # random symbols reached 100% in 400 Adam steps with N(0, 1) and 95% with N(0, 0.02^2) (2 seeds)
        self.table = parameter(rng.standard_normal((max_len, d_model)).astype(dtype), "table")

    def forward(self, x, offset=0):
        position_ids = np.arange(offset, offset + x.shape[-2])                # (T,)
        return F.add(x, F.embedding(position_ids, self.table))               # (B, T, d_model) + (T, d_model)


class LayerNorm(Module):
    """Layer normalisation over the last axis (d_model), with a learnt scale gamma and shift beta.

    bias=False: no beta to learn (the shift is a constant 0), as in a model without biases.
    """
    def __init__(self, d_model, dtype="float32", eps=1e-5, bias=True):
        self.gamma = parameter(np.ones(d_model, dtype=dtype), "gamma")
        self.beta = parameter(np.zeros(d_model, dtype=dtype), "beta") if bias else np.zeros(d_model, dtype=dtype)
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, self.gamma, self.beta, self.eps)


class RMSNorm(Module):
    """RMS normalisation over the last axis (d_model), with a learnt scale gamma: no mean taken away, no shift."""
    def __init__(self, d_model, dtype="float32", eps=1e-5):
        self.gamma = parameter(np.ones(d_model, dtype=dtype), "gamma")
        self.eps = eps

    def forward(self, x):
        return F.rms_norm(x, self.gamma, self.eps)


def make_norm(config):
    """The normalisation config.norm names, over d_model: LayerNorm (beta only with config.bias) or RMSNorm;
    its epsilon config.norm_eps."""
    if config.norm == "rms":
        return RMSNorm(config.d_model, config.dtype, config.norm_eps)
    return LayerNorm(config.d_model, config.dtype, config.norm_eps, bias=config.bias)


class Dropout(Module):
    """Inverted dropout with its own Generator (a seed would draw the same mask every step); the identity
    in eval mode or when p = 0."""

    def __init__(self, p, rng):
        self.p, self.rng = p, rng

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return F.dropout(x, self.p, self.rng)


class FeedForward(Module):
    """Position-wise: act(x @ W_1 + b_1) @ W_2 + b_2, from d_model to d_ff and back (x a row per position)."""

    def __init__(self, d_model, d_ff, rng, activation="relu", dtype="float32", bias=True):
        self.linear1 = Linear(d_model, d_ff, rng, bias=bias, dtype=dtype)
        self.linear2 = Linear(d_ff, d_model, rng, bias=bias, dtype=dtype)
        self.activation = activation

    def forward(self, x):
        return self.linear2(ACTIVATIONS[self.activation](self.linear1(x)))   # (B, T, d_model)


class SwiGLU(Module):
    """The gated feed-forward of LLaMA (Shazeer 2020), d_model -> d_ff -> d_model, x a row per position:

        (silu(x @ W_1) * (x @ W_3)) @ W_2

    x @ W_1 decides, through SiLU, how much of each of the d_ff features x @ W_3 passes on. Three
    matrices instead of two: at 2/3 of a FeedForward's d_ff it has the same number of weights (swiglu_d_ff).
    """

    def __init__(self, d_model, d_ff, rng, dtype="float32", bias=True):
        self.linear1 = Linear(d_model, d_ff, rng, bias=bias, dtype=dtype)
        self.linear2 = Linear(d_ff, d_model, rng, bias=bias, dtype=dtype)
        self.linear3 = Linear(d_model, d_ff, rng, bias=bias, dtype=dtype)

    def forward(self, x):
        gate = F.silu(self.linear1(x))                                       # (B, T, d_ff)
        return self.linear2(gate * self.linear3(x))                          # (B, T, d_ff) -> (B, T, d_model)


def swiglu_d_ff(d_ff):
    """The SwiGLU width with the weights of a d_ff-wide FeedForward: 3 d_model w = 2 d_model d_ff, so w = 2 d_ff / 3,
    rounded to the nearest integer (LLaMA: 2/3 of 4 d_model)."""
    return max(1, round(2 * d_ff / 3))


def make_feed_forward(config, rng):
    """The feed-forward sublayer config.activation names: SwiGLU, or FeedForward with relu or gelu."""
    c = config
    if c.activation == "swiglu":
        return SwiGLU(c.d_model, c.d_ff, rng, c.dtype, bias=c.bias)
    return FeedForward(c.d_model, c.d_ff, rng, c.activation, c.dtype, bias=c.bias)
