"""GPT: the decoder-only Transformer, a causal language model."""
from .. import functional as F
from .blocks import SelfAttentionLayer
from .cache import KVCache
from .model import Model


class GPT(Model):
    """A decoder-only Transformer: position t predicts token t + 1 from tokens 0..t.

        logits = gpt(ids)        # (B, T) ints -> (B, T, V)

    Its layers are the Transformer's decoder layers without cross-attention
    (there is no encoder to attend to), which leaves self-attention and
    feed-forward: SelfAttentionLayer, the encoder's layer, given a causal mask.
    GPT-2 is pre-LN with learned positions: TransformerConfig(norm_first=True,
    positions="learned", activation="gelu"); post-LN and sinusoidal positions
    work too. PAD is not masked: the mask is causal only, so trailing PAD never
    changes the positions before it (leave their targets out of the loss).
    """

    def __init__(self, config, rng=0):
        rng, dropout_rng = self.build_embeddings(config, rng)
        self.layers = [SelfAttentionLayer(config, rng, dropout_rng) for _ in range(config.n_layers)]
        self.final_norm = self.make_final_norm()
        self.build_output(rng)

    def decode(self, ids, cache=None):
        """ids (B, T) -> logits (B, T, V).

        With a KVCache (see new_cache), ids are only the positions after the
        cache.length already decoded, and the cache grows by them.
        """
        start = 0 if cache is None else cache.length
        x = self.embed_ids(ids, "ids", start)                             # (B, T, d_model)
        keep = F.causal_mask(ids.shape[1], start)                         # (T, start + T)
        for layer, layer_cache in zip(self.layers, self.layer_caches(cache, cross_attention=False)):
            x = layer(x, keep, layer_cache)
        return self.logits(x if self.final_norm is None else self.final_norm(x))

    def new_cache(self):
        """An empty KVCache for incremental decoding (nn/cache.py): one per batch of sequences decoded together."""
        return KVCache(self.config.n_layers, cross_attention=False)

    def forward(self, ids):
        return self.decode(ids)
