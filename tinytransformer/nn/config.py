"""The configs: the sizes and switches every model shares (ModelConfig), and each family's own fields."""
import dataclasses

import numpy as np

from .layers import FEED_FORWARDS, NORMS, swiglu_d_ff

DTYPES = ("float32", "float64")
POSITIONS = ("sinusoidal", "learned", "rope")
# The block of LLaMA and most language models since 2023: pre-norm with RMSNorm, a SwiGLU feed-forward,
# rotary positions, no biases. Its width is swiglu_d_ff(the FeedForward's it replaces): LLaMA's 4 d_model
# (llama_style), or the classroom model's d_ff (the text task's --block modern, tasks/task.py)
MODERN_BLOCK = dict(norm_first=True, norm="rms", activation="swiglu", positions="rope", bias=False)
ATTENTIONS = ("ordinary", "flash")


@dataclasses.dataclass(kw_only=True)
class ModelConfig:
    """The sizes and switches every model family shares: the block (attention, feed-forward, norms) and
    the positions. Each family's config adds its own fields: TransformerConfig (token ids in and out: the
    encoder-decoder and GPT), BERTConfig (and a [CLS] head), VisionConfig (image patches in, classes out).

    The size defaults are the classroom model's (d_model 64, 4 heads, 2 layers,
    d_ff 128), the only place they are written; dropout defaults to the paper's
    0.1 and max_len to 64. The classroom model itself is trained without dropout,
    with each task's vocabulary and max_len (tasks/task.py).
    """
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2            # layers of each stack (the Transformer has two stacks)
    d_ff: int = 128
    max_len: int = 64            # most positions a sequence may have
    dropout: float = 0.1         # the paper's P_drop
    norm_first: bool = False     # False: post-LN, the paper; True: pre-LN, as GPT-2
    activation: str = "relu"     # the feed-forward sublayer: "relu" or "gelu" (FeedForward), or "swiglu" (SwiGLU)
    dtype: str = "float32"       # float64 for gradient checks
    positions: str = "sinusoidal"   # added to the tokens: "sinusoidal" (the paper) or "learned" (GPT, BERT: a
                                    # (max_len, d_model) table); or "rope", rotating q and k in self-attention
    norm: str = "layer"          # "layer" (LayerNorm) or "rms" (RMSNorm, as LLaMA)
    bias: bool = True            # biases in every Linear and LayerNorm (LLaMA has none)
    attention: str = "ordinary"  # "ordinary" (F.attention, its probabilities kept) or "flash" (F.flash_attention:
                                 # in tiles, no (T, T) array; the same numbers to rounding, no probabilities to show)
    n_kv_heads: int | None = None   # key/value heads, each shared by n_heads / n_kv_heads query heads
                                    # (grouped-query attention, ops/grouped.py); None: n_heads, one each
    rope_theta: float = 10000.0  # rope's base: pair i turns by position * rope_theta^(-2i/d_k) (LLaMA 3: 500000)
    embedding_scale: bool = True  # token embeddings times sqrt(d_model), as the paper; LLaMA and BERT do not
    norm_eps: float = 1e-5       # the epsilon of every LayerNorm and RMSNorm (BERT: 1e-12)

    def __post_init__(self):
        name = type(self).__name__
        for field in ("d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            check_positive_integer(name, field, getattr(self, field))
        if self.d_model % self.n_heads:
            raise ValueError(f"{name}: d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if isinstance(self.dropout, bool) or not isinstance(self.dropout, (int, float, np.floating)) \
                or not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1), got {self.dropout!r}")
        if not isinstance(self.norm_first, (bool, np.bool_)):
            raise TypeError(f"{name}: norm_first must be True or False, got {self.norm_first!r}")
        for field, allowed in (("activation", FEED_FORWARDS), ("dtype", DTYPES), ("positions", POSITIONS),
                               ("norm", NORMS), ("attention", ATTENTIONS)):
            if getattr(self, field) not in allowed:
                raise ValueError(f"{name}: {field} must be one of {list(allowed)}, got {getattr(self, field)!r}")
        if not isinstance(self.bias, bool):
            raise ValueError(f"{name}: bias must be True or False, got {self.bias!r}")
        if self.n_kv_heads is not None:
            check_positive_integer(name, "n_kv_heads", self.n_kv_heads)
            if self.n_heads % self.n_kv_heads:
                raise ValueError(f"{name}: n_heads={self.n_heads} query heads cannot be shared out among "
                                 f"n_kv_heads={self.n_kv_heads} key/value heads (a multiple is needed)")
        if not isinstance(self.embedding_scale, bool):
            raise ValueError(f"{name}: embedding_scale must be True or False, got {self.embedding_scale!r}")
        for field in ("rope_theta", "norm_eps"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
                raise ValueError(f"{name}: {field} must be a positive finite number, got {value!r}")
        if self.positions == "rope" and self.d_k % 2:
            raise ValueError(f"{name}: rope turns pairs of numbers, so d_k = d_model / n_heads must be "
                             f"even, got {self.d_k}")

    @property
    def d_k(self):
        """Each head's width: d_model / n_heads."""
        return self.d_model // self.n_heads

    @property
    def kv_heads(self):
        """The key/value heads: n_kv_heads, or n_heads when it is None (every query head has its own)."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads


@dataclasses.dataclass
class TransformerConfig(ModelConfig):
    """A model of token ids, the encoder-decoder's and GPT's: ModelConfig's fields, then the vocabulary.

    TransformerConfig(vocab_size, d_model=..., ...): the vocabulary size is the one positional field.
    """
    vocab_size: int
    tie_embeddings: bool = True  # the output projection reuses the embedding matrix
    pad_id: int = 0              # the padding token: masked out of attention as a key
    embedding_norm: bool = False  # normalise tokens + positions before the first layer, as BERT does

    def __post_init__(self):
        super().__post_init__()
        name = type(self).__name__
        check_positive_integer(name, "vocab_size", self.vocab_size)
        if not isinstance(self.tie_embeddings, (bool, np.bool_)):
            raise TypeError(f"{name}: tie_embeddings must be True or False, got {self.tie_embeddings!r}")
        if not isinstance(self.embedding_norm, bool):
            raise ValueError(f"{name}: embedding_norm must be True or False, got {self.embedding_norm!r}")
        if not isinstance(self.pad_id, (int, np.integer)) or not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"{name}: pad_id must be a token id in [0, vocab_size={self.vocab_size}), "
                             f"got {self.pad_id!r}")

    @classmethod
    def llama_style(cls, vocab_size, **changes):
        """The modern block (MODERN_BLOCK: pre-norm with RMSNorm, a SwiGLU feed-forward, rotary positions,
        no biases) with no dropout; changes override any field.

        d_ff, unless given, is swiglu_d_ff(4 * d_model): the weights of a FeedForward of 4 d_model, as LLaMA.
        """
        d_model = changes.get("d_model", cls.d_model)
        fields = dict(MODERN_BLOCK, dropout=0.0, d_ff=swiglu_d_ff(4 * d_model))
        return cls(vocab_size, **{**fields, **changes})


@dataclasses.dataclass
class BERTConfig(TransformerConfig):
    """BERT's config: a TransformerConfig, and the size of the classification head on [CLS] (None: no head)."""
    n_classes: int | None = None

    def __post_init__(self):
        super().__post_init__()
        if self.n_classes is not None:
            check_positive_integer(type(self).__name__, "n_classes", self.n_classes)


@dataclasses.dataclass(kw_only=True)
class VisionConfig(ModelConfig):
    """The vision encoder's config: ModelConfig's fields, the numbers per image patch (its input) and the
    classes (its output). max_len is the patches plus the class position. No vocabulary: no token ids."""
    patch_pixels: int
    n_classes: int

    def __post_init__(self):
        super().__post_init__()
        for field in ("patch_pixels", "n_classes"):
            check_positive_integer(type(self).__name__, field, getattr(self, field))


def check_positive_integer(config_name, name, value):
    """Raise ValueError, naming the config and the setting, unless value is a positive integer (not a bool)."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{config_name}: {name} must be a positive integer, got {value!r}")
