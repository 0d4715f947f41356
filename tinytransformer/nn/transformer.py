"""The encoder-decoder of "Attention Is All You Need"."""
from .. import functional as F
from .cache import KVCache
from .blocks import DecoderLayer, SelfAttentionLayer
from .model import Model


class Transformer(Model):
    """The encoder-decoder of "Attention Is All You Need".

        logits = model(src_ids, tgt_in_ids)     # (B, T_src), (B, T_tgt) ints -> (B, T_tgt, V)

    One embedding table serves source and target (one vocabulary) and, with
    tie_embeddings, the output projection too. Source PAD positions
    (config.pad_id) are masked in encoder self-attention and cross-attention;
    decoder self-attention is causal. With positions="learned", source and
    target positions share one table, as they share one embedding table.
    """

    def __init__(self, config, rng=0):
        rng, dropout_rng = self.build_embeddings(config, rng)
        c = config
        self.encoder = [SelfAttentionLayer(c, rng, dropout_rng) for _ in range(c.n_layers)]
        self.decoder = [DecoderLayer(c, rng, dropout_rng) for _ in range(c.n_layers)]
        self.encoder_norm, self.decoder_norm = self.make_final_norm(), self.make_final_norm()
        self.build_output(rng)

    def encode(self, src_ids):
        """src_ids (B, T_src) -> memory (B, T_src, d_model), src_keep (B, 1, T_src)."""
        return self.encoder_stack(src_ids, "src")

    def decode(self, tgt_in_ids, memory, src_keep, cache=None):
        """tgt_in_ids (B, T_tgt) and the encoder's output -> logits (B, T_tgt, V).

        With a KVCache (see new_cache), tgt_in_ids are only the positions after
        the cache.length already decoded (one at a time, in incremental decoding),
        and the cache grows by them.
        """
        start = 0 if cache is None else cache.length
        y = self.embed_ids(tgt_in_ids, "tgt_in", start)                   # (B, T_tgt, d_model)
        tgt_keep = F.causal_mask(tgt_in_ids.shape[1], start)             # (T_tgt, start + T_tgt)
        for layer, layer_cache in zip(self.decoder, self.layer_caches(cache, cross_attention=True)):
            y = layer(y, memory, tgt_keep, src_keep, layer_cache)
        return self.logits(y if self.decoder_norm is None else self.decoder_norm(y))

    def new_cache(self):
        """An empty KVCache for incremental decoding (nn/cache.py): one per batch of sequences decoded together."""
        return KVCache(self.config.n_layers, cross_attention=True)

    def forward(self, src_ids, tgt_in_ids):
        memory, src_keep = self.encode(src_ids)
        return self.decode(tgt_in_ids, memory, src_keep)
