"""BERT: the encoder-only Transformer, with a masked-language-model output and a [CLS] classifier."""
import dataclasses

import numpy as np

from .. import functional as F
from .blocks import SelfAttentionLayer
from .config import BERTConfig
from .layers import Linear
from .model import Model


class BERT(Model):
    """An encoder-only Transformer: every position sees every other (non-PAD) one.

        logits = bert(ids)              # (B, T) ints -> masked-LM logits (B, T, V)
        logits = bert.classify(ids)     # (B, T) ints -> (B, n_classes), from position 0 ([CLS])

    The masked-LM output is tied to the embedding matrix (tie_embeddings=True,
    the default, as BERT does). PAD positions (config.pad_id) are masked out of
    attention as keys, so padding a row never changes its real positions; a
    row with no real token is an error. BERT is post-LN with learned
    positions: BERTConfig(positions="learned", activation="gelu").
    The classification head is one Linear (d_model -> n_classes) on the final
    hidden vector of position 0, built when config.n_classes is set.
    """
    config_class = BERTConfig

    def __init__(self, config, rng=0):
        rng, dropout_rng = self.build_embeddings(config, rng)
        c = config
        self.encoder = [SelfAttentionLayer(c, rng, dropout_rng) for _ in range(c.n_layers)]
        self.encoder_norm = self.make_final_norm()
        self.build_output(rng)
        self.classifier = None if c.n_classes is None else Linear(c.d_model, c.n_classes, rng, dtype=c.dtype)

    def encode(self, ids):
        """ids (B, T) -> hidden vectors (B, T, d_model)."""
        self.check_input(ids, "ids")
        empty = np.flatnonzero((ids == self.config.pad_id).all(axis=1))
        if len(empty):
            raise ValueError(f"BERT: row {empty[0]} of ids has no real token (every position is "
                             f"PAD = {self.config.pad_id}): there is nothing for its positions to attend to")
        return self.encoder_stack(ids, "ids")[0]

    def forward(self, ids):
        return self.logits(self.encode(ids))                              # (B, T, V)

    def classify(self, ids):
        """ids (B, T), each row starting with [CLS] -> class logits (B, n_classes)."""
        if self.classifier is None:
            raise ValueError("BERT.classify: this model has no classification head; build it with "
                             "BERTConfig(n_classes=...)")
        return self.classifier(self.first_position(self.encode(ids)))    # (B, n_classes)

    @staticmethod
    def first_position(x):
        """x (B, T, d_model) -> the [CLS] vectors (B, d_model): position 0 of each row."""
        # a product with the one-hot row e_0 (1, T): the tape's ops have no indexing, and the
        # product's backward puts the gradient on position 0 only
        first = np.zeros((1, x.shape[1]), dtype=x.dtype)
        first[0, 0] = 1.0
        return F.reshape(F.matmul(first, x), (x.shape[0], -1))             # (B, 1, d_model) -> (B, d_model)


def classifier_from(pretrained, n_classes=2, rng=0, **changes):
    """A new BERT with every weight of a pretrained BERT but its [CLS] head: a new head of n_classes
    drawn from rng (None: no head; the model answers through its masked-LM output).

    A pretrained [CLS] head (from a sentence-level pretraining objective) is never copied: it
    answered another question. changes: other config fields to change (dropout, say); sizes must stay.
    """
    config = dataclasses.replace(pretrained.config, n_classes=n_classes, **changes)
    model = BERT(config, rng=rng)
    transfer_weights(pretrained, model, skip="classifier.")
    return model


def transfer_weights(source, target, skip=None):
    """Copy every parameter of source into the parameter of target with the same name and shape,
    except those whose name starts with skip. Returns the names of target's parameters left as they
    were (the new head)."""
    mine = dict(source.named_parameters())
    left = []
    for name, param in target.named_parameters():
        if name in mine and mine[name].shape == param.shape and not (skip and name.startswith(skip)):
            param.data[...] = mine[name].data
        else:
            left.append(name)
    return left
