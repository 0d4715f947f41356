"""The layers the stacks are made of: sublayers wrapped in residual + normalisation.

    SelfAttentionLayer   self-attention, then feed-forward: the layer of the encoder
                         (the paper's "encoder layer"), of BERT and of GPT; the
                         mask it is given makes the difference (padding, or causal)
    DecoderLayer         self-attention, attention to the encoder's output, feed-forward

GPT's layer is the paper's decoder layer with nothing to cross-attend to: what
is left is self-attention and feed-forward, a SelfAttentionLayer with a causal mask.

The config chooses the parts: config.norm the normalisation (LayerNorm or RMSNorm), config.activation
the feed-forward (FeedForward or SwiGLU), config.bias the biases, positions="rope" rotary positions in
self-attention (cross-attention compares two sequences' positions, and turns nothing), config.attention
the attention op of both (the ordinary one, or "flash": in tiles).
"""
from .attention import MultiHeadAttention
from .layers import Dropout, make_feed_forward, make_norm
from .module import Module


def self_attention(config, rng):
    """The self-attention sublayer of config: with rotary positions if config.positions is "rope"."""
    c = config
    return MultiHeadAttention(c.d_model, c.n_heads, rng, c.dtype, bias=c.bias, rope=c.positions == "rope",
                              n_kv_heads=c.n_kv_heads, rope_theta=c.rope_theta, flash=c.attention == "flash")


def residual(x, sublayer, norm, dropout, norm_first):
    """Post-LN (the paper): norm(x + sublayer(x)); pre-LN: x + sublayer(norm(x))."""
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


class SelfAttentionLayer(Module):
    """Self-attention, then feed-forward; residual + normalisation around each."""

    def __init__(self, config, rng, dropout_rng):
        c = config
        self.self_attn = self_attention(c, rng)
        self.feed_forward = make_feed_forward(c, rng)
        self.norm1, self.norm2 = make_norm(c), make_norm(c)
        self.dropout = Dropout(c.dropout, dropout_rng)
        self.norm_first = c.norm_first

    def forward(self, x, keep, cache=None):
        """x (B, T, d_model) -> (B, T, d_model); keep, broadcastable to (B, T, T_k), says who may attend to whom.

        cache: this layer's LayerCache when decoding incrementally (a causal keep only).
        """
        self_cache = None if cache is None else cache.self_attn
        x = residual(x, lambda x: self.self_attn(x, x, keep, self_cache), self.norm1, self.dropout,
                     self.norm_first)
        return residual(x, self.feed_forward, self.norm2, self.dropout, self.norm_first)


class DecoderLayer(Module):
    """Masked self-attention, attention to the encoder's output, feed-forward;
    residual + normalisation around each."""

    def __init__(self, config, rng, dropout_rng):
        c = config
        self.self_attn = self_attention(c, rng)
        self.cross_attn = MultiHeadAttention(c.d_model, c.n_heads, rng, c.dtype, bias=c.bias,
                                             n_kv_heads=c.n_kv_heads, flash=c.attention == "flash")
        self.feed_forward = make_feed_forward(c, rng)
        self.norm1, self.norm2, self.norm3 = (make_norm(c) for _ in range(3))
        self.dropout = Dropout(c.dropout, dropout_rng)
        self.norm_first = c.norm_first

    def forward(self, y, memory, tgt_keep, src_keep, cache=None):
        """y (B, T_tgt, d_model) the target so far; memory (B, T_src, d_model) the encoder output.

        With a LayerCache, y holds only the new positions; the keys and values of
        earlier positions and of the memory come from the cache.
        """
        self_cache, cross_cache = (None, None) if cache is None else (cache.self_attn, cache.cross_attn)
        y = residual(y, lambda y: self.self_attn(y, y, tgt_keep, self_cache), self.norm1, self.dropout,
                     self.norm_first)
        y = residual(y, lambda y: self.cross_attn(y, memory, src_keep, cross_cache), self.norm2, self.dropout,
                     self.norm_first)
        return residual(y, self.feed_forward, self.norm3, self.dropout, self.norm_first)
