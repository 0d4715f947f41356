"""The configs: the sizes and switches every model shares (ModelConfig), and each family's own fields."""
import dataclasses

import numpy as np

from .layers import FEED_FORWARDS, NORMS, swiglu_d_ff

DTYPES = ("float32", "float64")
POSITIONS = ("sinusoidal", "learned", "rope")
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

    def __post_init__(self):
        name = type(self).__name__
        for field in ("d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            check_positive_integer(name, field, getattr(self, field))
        if self.d_model % self.n_heads:
            raise ValueError(f"{name}: d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1), got {self.dropout}")
        if not isinstance(self.norm_first, (bool, np.bool_)):
            raise TypeError(f"{name}: norm_first must be True or False, got {self.norm_first!r}")
        for field, allowed in (("activation", FEED_FORWARDS), ("dtype", DTYPES), ("positions", POSITIONS),
                               ("norm", NORMS), ("attention", ATTENTIONS)):
            if getattr(self, field) not in allowed:
                raise ValueError(f"{name}: {field} must be one of {list(allowed)}, got {getattr(self, field)!r}")
        if not isinstance(self.bias, bool):
            raise ValueError(f"{name}: bias must be True or False, got {self.bias!r}")
        if self.positions == "rope" and self.d_k % 2:
            raise ValueError(f"{name}: rope turns pairs of numbers, so d_k = d_model / n_heads must be "
                             f"even, got {self.d_k}")

    @property
    def d_k(self):
        """Each head's width: d_model / n_heads."""
        return self.d_model // self.n_heads


@dataclasses.dataclass
class TransformerConfig(ModelConfig):
    """A model of token ids, the encoder-decoder's and GPT's: ModelConfig's fields, then the vocabulary.

    TransformerConfig(vocab_size, d_model=..., ...): the vocabulary size is the one positional field.
    """
    vocab_size: int
    tie_embeddings: bool = True  # the output projection reuses the embedding matrix
    pad_id: int = 0              # the padding token: masked out of attention as a key

    def __post_init__(self):
        super().__post_init__()
        name = type(self).__name__
        check_positive_integer(name, "vocab_size", self.vocab_size)
        if not isinstance(self.tie_embeddings, (bool, np.bool_)):
            raise TypeError(f"{name}: tie_embeddings must be True or False, got {self.tie_embeddings!r}")
        if not isinstance(self.pad_id, (int, np.integer)) or not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"{name}: pad_id must be a token id in [0, vocab_size={self.vocab_size}), "
                             f"got {self.pad_id!r}")

    @classmethod
    def llama_style(cls, vocab_size, **changes):
        """The block of LLaMA and most language models since 2023: pre-norm with RMSNorm, a SwiGLU
        feed-forward, rotary positions, no biases, no dropout; changes override any field.

        d_ff, unless given, is swiglu_d_ff(4 * d_model): the weights of a FeedForward of 4 d_model, as LLaMA.
        """
        d_model = changes.get("d_model", cls.d_model)
        fields = dict(norm_first=True, norm="rms", activation="swiglu", positions="rope", bias=False, dropout=0.0,
                      d_ff=swiglu_d_ff(4 * d_model))
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
