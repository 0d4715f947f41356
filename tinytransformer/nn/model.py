"""Model: what the Transformer, GPT and BERT share, from the token ids in to the logits out.

    ids -> token embedding * sqrt(d_model) (unless embedding_scale=False) + positions
        (-> normalised, with embedding_norm) -> dropout -> (the model's stacks) -> logits

(Rotary positions add nothing here: self-attention turns its queries and keys by them, attention.py.)

The logits come from the output projection, which with tie_embeddings is the
embedding matrix itself: logits = y @ E.T.
"""
import dataclasses

import numpy as np

from .. import functional as F
from ..memory import check_fits, parameter_floor
from ..ops.checks import check_ids, check_seed
from .attention import MultiHeadAttention
from .config import ModelConfig, TransformerConfig
from .layers import Dropout, Embedding, LearnedPositions, Linear, SinusoidalPositions, make_norm
from .module import Module


class Model(Module):
    """The base of every model (Transformer, GPT, BERT, the vision encoder); a subclass builds its stacks
    between build_embeddings() and build_output()."""
    config_class = TransformerConfig     # the config of the model's family (BERT: BERTConfig; vision: VisionConfig)

    def check_config(self, config):
        """config must be the config of the model's family: one line naming both, else; its values must be ones
        it would have accepted when made (a field set afterwards, positions="foo", is refused here in the config's
        own line, not built into a model without positions); and its parameters must fit in the memory there is
        (memory.available_bytes)."""
        if not isinstance(config, self.config_class):
            raise TypeError(f"{type(self).__name__}: config must be a {self.config_class.__name__}, got "
                            f"{type(config).__name__ if isinstance(config, ModelConfig) else repr(config)}")
        dataclasses.replace(config)                 # runs the config's checks (__post_init__) again
        n = parameter_floor(config)                  # from the config's numbers: nothing allocated yet
        check_fits(np.dtype(config.dtype).itemsize * n,
                   f"storing its parameters (at least {n:,} {config.dtype} numbers)", type(self).__name__)

    def build_embeddings(self, config, rng):
        """Check config, build the embeddings and the input dropout -> (rng, dropout_rng) for the stacks.

        rng: a seed or an np.random.Generator (every model defaults to seed 0: same seed, same weights).
        """
        self.check_config(config)
        rng = np.random.default_rng(check_seed(type(self).__name__, rng))
        c = self.config = config
        dropout_rng = np.random.default_rng(rng.integers(2 ** 63))   # its own stream, from the same seed
        self.embed = Embedding(c.vocab_size, c.d_model, rng, c.dtype, scale=c.embedding_scale)
        if c.positions == "learned":
            self.positions = LearnedPositions(c.max_len, c.d_model, rng, c.dtype)
        elif c.positions == "sinusoidal":
            self.positions = SinusoidalPositions()
        else:
            self.positions = None                                     # rope: in self-attention
        self.embedding_norm = make_norm(c) if c.embedding_norm else None   # BERT normalises the sum
        self.dropout = Dropout(c.dropout, dropout_rng)
        return rng, dropout_rng

    def make_final_norm(self):
        """Pre-LN leaves the residual stream unnormalised: a stack's output is normalised once (None for post-LN)."""
        return make_norm(self.config) if self.config.norm_first else None

    def build_output(self, rng):
        """The output projection: the embedding matrix when tied, else its own Linear."""
        c = self.config
        self.output = None if c.tie_embeddings else Linear(c.d_model, c.vocab_size, rng, bias=c.bias, dtype=c.dtype)

    def check_input(self, ids, name, offset=0):
        """ids must be a (B, T) array of token ids of the vocabulary, its positions offset.. within max_len."""
        model = type(self).__name__
        check_ids(model, ids, self.config.vocab_size, what=f"{name} token id")
        if ids.ndim != 2:
            raise ValueError(f"{model}: {name} ids must be (B, T), got shape {ids.shape}")
        if offset + ids.shape[1] > self.config.max_len:
            raise ValueError(f"{model}: {name} has {offset + ids.shape[1]} positions but max_len is "
                             f"{self.config.max_len}")

    def embed_ids(self, ids, name, offset=0):
        """ids (B, T), checked, whose first position is number offset -> (B, T, d_model)."""
        self.check_input(ids, name, offset)
        x = self.embed(ids)                                                 # (B, T, d_model)
        x = x if self.positions is None else self.positions(x, offset)
        return self.dropout(x if self.embedding_norm is None else self.embedding_norm(x))

    def encoder_stack(self, ids, name):
        """ids (B, T) through self.encoder, each position attending to every non-PAD one
        -> x (B, T, d_model), keep (B, 1, T)."""
        x = self.embed_ids(ids, name)
        keep = F.padding_mask(ids, self.config.pad_id)                      # (B, 1, T)
        for layer in self.encoder:
            x = layer(x, keep)
        return (x if self.encoder_norm is None else self.encoder_norm(x)), keep

    def layer_caches(self, cache, cross_attention):
        """Each layer's LayerCache of a KVCache from new_cache(), or None for every layer without one."""
        if cache is None:
            return [None] * self.config.n_layers
        if len(cache.layers) != self.config.n_layers or (cache.layers[0].cross_attn is not None) != cross_attention:
            raise ValueError(f"{type(self).__name__}: the cache does not fit this model; make it with "
                             "model.new_cache()")
        return cache.layers

    def logits(self, y):
        """y (B, T, d_model) -> (B, T, V)."""
        if self.output is None:
            return F.linear(y, F.transpose(self.embed.table))               # W = E.T
        return self.output(y)

    def attention_probs(self):
        """The attention probabilities of the last forward pass: {"encoder.0.self_attn": (B, h, T_q, T_k), ...}."""
        return {name: m.probs for name, m in self.named_modules() if isinstance(m, MultiHeadAttention)}
