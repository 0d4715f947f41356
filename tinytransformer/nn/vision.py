"""VisionTransformer: BERT's encoder reading an image cut into patches instead of a sentence cut into tokens.

    logits = vit(patches)          # (B, N, P) floats -> (B, n_classes)

The recipe of ViT (Dosovitskiy et al., 2020), at classroom size: each patch's
P pixel values, flattened, are one "token"; a Linear maps it to d_model (where
a sentence looks its tokens up in an embedding table). A learned class vector
goes first, as BERT's [CLS]; learned positions are added, so the model knows
where each patch sits; the encoder stack is the one BERT and GPT use; the
class vector's final state, through one Linear, gives the class logits.
Nothing in the encoder knows it reads an image: the only image-specific parts
are the patching (tasks/digits.py) and the first Linear.

Its config is a VisionConfig: the block's sizes, patch_pixels = P, max_len = N + 1
(the class position) and n_classes; no vocabulary (no token ids).
"""
import numpy as np

from .. import functional as F
from ..ops.checks import check_seed
from .bert import BERT
from .config import VisionConfig
from .blocks import SelfAttentionLayer
from .layers import Dropout, LearnedPositions, Linear
from .model import Model
from .module import parameter


class VisionTransformer(Model):
    """Patches in, class logits out: a Linear patch embedding, a class vector, learned positions, an encoder."""
    config_class = VisionConfig

    def __init__(self, config, rng=0):
        self.check_config(config)
        c = self.config = config
        rng = np.random.default_rng(check_seed(type(self).__name__, rng))
        dropout_rng = np.random.default_rng(rng.integers(2 ** 63))   # its own stream, from the same seed
        self.patch_embedding = Linear(c.patch_pixels, c.d_model, rng, dtype=c.dtype)
        self.class_vector = parameter(rng.standard_normal((1, c.d_model)).astype(c.dtype), "class_vector")
        self.positions = LearnedPositions(c.max_len, c.d_model, rng, c.dtype)
        self.dropout = Dropout(c.dropout, dropout_rng)
        self.encoder = [SelfAttentionLayer(c, rng, dropout_rng) for _ in range(c.n_layers)]
        self.encoder_norm = self.make_final_norm()
        self.classifier = Linear(c.d_model, c.n_classes, rng, dtype=c.dtype)

    def check_patches(self, patches):
        c = self.config
        if not isinstance(patches, np.ndarray) or patches.ndim != 3 or patches.shape[2] != c.patch_pixels \
                or not np.issubdtype(patches.dtype, np.floating):
            raise ValueError(f"VisionTransformer: patches must be a float array (B, N, {c.patch_pixels}), got "
                             f"{getattr(patches, 'dtype', type(patches).__name__)} {getattr(patches, 'shape', '')}")
        if patches.shape[1] + 1 > c.max_len:
            raise ValueError(f"VisionTransformer: {patches.shape[1]} patches and the class position need "
                             f"max_len >= {patches.shape[1] + 1}, got {c.max_len}")

    def encode(self, patches):
        """patches (B, N, P) -> hidden vectors (B, N + 1, d_model), position 0 the class vector's."""
        self.check_patches(patches)
        B, N, P = patches.shape
        # a zero patch in front, then the class vector added to position 0 only: a product with the one-hot
        # column e_0 (N + 1, 1), as BERT.first_position reads position 0, so the tape needs no concatenation
        padded = np.concatenate([np.zeros((B, 1, P), patches.dtype), patches], axis=1)   # (B, N + 1, P)
        first = np.zeros((N + 1, 1), dtype=self.class_vector.dtype)
        first[0, 0] = 1.0
        x = F.add(self.patch_embedding(padded.astype(self.class_vector.dtype)),         # (B, N + 1, d_model)
                  F.matmul(first, self.class_vector))                                 # + (N + 1, d_model)
        x = self.dropout(self.positions(x))
        for layer in self.encoder:
            x = layer(x, None)                         # every position sees every other: no mask
        return x if self.encoder_norm is None else self.encoder_norm(x)

    def forward(self, patches):
        return self.classifier(BERT.first_position(self.encode(patches)))        # (B, n_classes)
