"""The gradient check of every op, on small unequal shapes, in float64.

`python -m tinytransformer gradcheck` prints these as a table, and the tests
run each one. Shapes are unequal where the op allows it (2, 3, 4, 5), so a swapped axis fails
(the head-splitting and per-head checks repeat a size);
inputs stay away from kinks (relu at 0) and poles (div, log at 0).
"""
from typing import Callable, NamedTuple

import numpy as np

from . import functional as F


class OpCheck(NamedTuple):
    name: str
    fn: Callable                 # fn(*inputs) -> Tensor
    make_inputs: Callable        # make_inputs(rng) -> dict of named inputs, in fn's order


def _normal(rng, *shape):
    return rng.standard_normal(shape)


def _away_from_zero(rng, *shape):
    x = rng.standard_normal(shape)
    return np.sign(x) * (0.1 + np.abs(x))


def _keep_mask(rng, *shape):
    """A random keep-mask with at least one kept key per query row."""
    keep = rng.random(shape) > 0.4
    keep[..., 0] = True
    return keep


def _attention_mask_with_empty_row(rng):
    keep = _keep_mask(rng, 2, 3, 4)
    keep[1, 2, :] = False            # one query that may attend to nothing: zeros, not nan
    return keep


CHECKS = [
    OpCheck("linear", F.linear,
            lambda r: dict(x=_normal(r, 2, 3, 5), W=_normal(r, 5, 4), b=_normal(r, 4))),
    OpCheck("relu", F.relu, lambda r: dict(x=_away_from_zero(r, 2, 3, 5))),
    OpCheck("gelu", F.gelu, lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("dropout", lambda x: F.dropout(x, 0.3, np.random.default_rng(7)),
            lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("softmax", F.softmax, lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("softmax (axis 1)", lambda x: F.softmax(x, axis=1), lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("log_softmax", F.log_softmax, lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("layer_norm", F.layer_norm,
            lambda r: dict(x=_normal(r, 2, 3, 5), gamma=_normal(r, 5), beta=_normal(r, 5))),
    OpCheck("embedding", F.embedding,
            lambda r: dict(ids=np.array([[0, 3, 3], [6, 0, 2]]), table=_normal(r, 7, 5))),
    OpCheck("positional_encoding", F.positional_encoding, lambda r: dict(x=_normal(r, 2, 3, 6))),
    OpCheck("mask + softmax", lambda s, keep: F.softmax(F.mask(s, keep)),
            lambda r: dict(scores=_normal(r, 2, 3, 4), keep=_keep_mask(r, 2, 3, 4))),
    OpCheck("attention", lambda q, k, v, keep: F.attention(q, k, v, keep)[0],
            lambda r: dict(q=_normal(r, 2, 3, 5), k=_normal(r, 2, 4, 5), v=_normal(r, 2, 4, 6),
                           keep=_attention_mask_with_empty_row(r))),
    OpCheck("attention (heads, causal)", lambda q, k, v: F.attention(q, k, v, F.causal_mask(3))[0],
            lambda r: dict(q=_normal(r, 2, 2, 3, 4), k=_normal(r, 2, 2, 3, 4), v=_normal(r, 2, 2, 3, 5))),
    OpCheck("split_heads", lambda x: F.split_heads(x, 2), lambda r: dict(x=_normal(r, 2, 3, 6))),
    OpCheck("merge_heads", F.merge_heads, lambda r: dict(x=_normal(r, 2, 2, 3, 4))),
    OpCheck("cross_entropy", lambda z, t: F.cross_entropy(z, t, ignore_index=0, label_smoothing=0.1),
            lambda r: dict(logits=_normal(r, 2, 3, 5), targets=np.array([[1, 0, 4], [2, 3, 0]]))),
    OpCheck("add (broadcast)", F.add, lambda r: dict(a=_normal(r, 2, 3, 5), b=_normal(r, 5))),
    OpCheck("sub (broadcast)", F.sub, lambda r: dict(a=_normal(r, 3, 1), b=_normal(r, 2, 3, 5))),
    OpCheck("mul (broadcast)", F.mul, lambda r: dict(a=_normal(r, 2, 3, 5), b=_normal(r, 3, 1))),
    OpCheck("div", F.div, lambda r: dict(a=_normal(r, 2, 3, 5), b=_away_from_zero(r, 2, 3, 5))),
    OpCheck("matmul (batched)", F.matmul, lambda r: dict(a=_normal(r, 2, 3, 5), b=_normal(r, 5, 4))),
    OpCheck("sum", lambda x: F.sum(x, axis=1), lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("mean", lambda x: F.mean(x, axis=(0, 2), keepdims=True), lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("reshape", lambda x: F.reshape(x, (6, 5)), lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("transpose", lambda x: F.transpose(x, (2, 0, 1)), lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("exp", F.exp, lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCheck("log", F.log, lambda r: dict(x=np.abs(_away_from_zero(r, 2, 3, 5)))),
]
