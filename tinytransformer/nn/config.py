"""TransformerConfig: the sizes and switches every model of the package is built from."""
import dataclasses

import numpy as np

from .layers import FEED_FORWARDS, NORMS, swiglu_d_ff

DTYPES = ("float32", "float64")
POSITIONS = ("sinusoidal", "learned", "rope")


@dataclasses.dataclass
class TransformerConfig:
    """Sizes and switches of a model: Transformer, GPT, BERT or the vision encoder.

    The size defaults are the classroom model's (d_model 64, 4 heads, 2 layers,
    d_ff 128), the only place they are written; dropout defaults to the paper's
    0.1 and max_len to 64. The classroom model itself is trained without dropout,
    with each task's vocabulary and max_len (tasks/task.py).
    """
    vocab_size: int
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2            # layers of each stack (the Transformer has two stacks)
    d_ff: int = 128
    max_len: int = 64            # most positions a sequence may have
    dropout: float = 0.1         # the paper's P_drop
    norm_first: bool = False     # False: post-LN, the paper; True: pre-LN, as GPT-2
    tie_embeddings: bool = True  # the output projection reuses the embedding matrix
    activation: str = "relu"     # the feed-forward sublayer: "relu" or "gelu" (FeedForward), or "swiglu" (SwiGLU)
    dtype: str = "float32"       # float64 for gradient checks
    positions: str = "sinusoidal"   # added to the tokens: "sinusoidal" (the paper) or "learned" (GPT, BERT: a
                                    # (max_len, d_model) table); or "rope", rotating q and k in self-attention
    norm: str = "layer"          # "layer" (LayerNorm) or "rms" (RMSNorm, as LLaMA)
    bias: bool = True            # biases in every Linear and LayerNorm (LLaMA has none)
    pad_id: int = 0              # the padding token: masked out of attention as a key
    n_classes: int | None = None    # size of BERT's [CLS] classification head; None: no head
    patch_pixels: int | None = None  # the vision encoder's input: numbers per image patch; None: token ids

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            check_positive_integer(name, getattr(self, name))
        if self.d_model % self.n_heads:
            raise ValueError(f"TransformerConfig: d_model={self.d_model} is not divisible by "
                             f"n_heads={self.n_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"TransformerConfig: dropout must be in [0, 1), got {self.dropout}")
        for name in ("norm_first", "tie_embeddings"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"TransformerConfig: {name} must be True or False, got {getattr(self, name)!r}")
        for name, allowed in (("activation", FEED_FORWARDS), ("dtype", DTYPES), ("positions", POSITIONS),
                              ("norm", NORMS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"TransformerConfig: {name} must be one of {list(allowed)}, "
                                 f"got {getattr(self, name)!r}")
        if not isinstance(self.bias, bool):
            raise ValueError(f"TransformerConfig: bias must be True or False, got {self.bias!r}")
        if self.positions == "rope" and self.d_k % 2:
            raise ValueError(f"TransformerConfig: rope turns pairs of numbers, so d_k = d_model / n_heads must be "
                             f"even, got {self.d_k}")
        if not isinstance(self.pad_id, (int, np.integer)) or not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"TransformerConfig: pad_id must be a token id in [0, vocab_size="
                             f"{self.vocab_size}), got {self.pad_id!r}")
        for name in ("n_classes", "patch_pixels"):
            if getattr(self, name) is not None:
                check_positive_integer(name, getattr(self, name))

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

    @property
    def d_k(self):
        return self.d_model // self.n_heads


def check_positive_integer(name, value):
    """Raise ValueError, naming the setting, unless value is a positive integer (not a bool)."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"TransformerConfig: {name} must be a positive integer, got {value!r}")
