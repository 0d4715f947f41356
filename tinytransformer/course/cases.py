"""The gradient check of every op: each on two or more small shapes, in float64.

`python -m tinytransformer check` grades every case on two random draws
(grader.py); the tests run each case through the tape as well. Sizes are
unequal where the op allows it (2, 3, 4, 5), so a swapped axis fails, and
each op has a second case with other shapes or options, so a mistake that
vanishes on one shape (a sum over the wrong axis, a transpose of a square
matrix) shows on the other. Inputs stay away from kinks (relu at 0) and
poles (div, log at 0).
"""
from typing import Callable, NamedTuple

import numpy as np

from .. import ops
from ..tensor import apply


class OpCase(NamedTuple):
    """One grading case of an op: how to make its inputs from a random generator, and its forward's options."""
    op: str                      # the pair ops.<op>_forward, ops.<op>_backward
    make_inputs: Callable        # make_inputs(rng) -> dict of the forward's inputs by name, in order
    options: dict = {}           # keyword options of the forward

    @property
    def forward(self):
        return getattr(ops, f"{self.op}_forward")

    @property
    def backward(self):
        return getattr(ops, f"{self.op}_backward")

    @property
    def label(self):
        """'x (2, 3, 5), axis=1': the case's shapes and options."""
        return describe(self.make_inputs(np.random.default_rng(0)), self.options)

    @property
    def name(self):
        return f"{self.op} {self.label}"

    def run_forward(self, *inputs):
        """(out, cache) of the op's forward (dropout's rng is a seed: the same mask every call)."""
        return self.forward(*inputs, **self.options)

    def fn(self, *inputs):
        """The op on Tensors, recorded by the tape: what tt.gradcheck checks."""
        return apply(self.forward, self.backward, *inputs, **self.options)


def describe(inputs, options=None):
    """'x (2, 3, 5), axis=1': each input's shape (or value), then the options that matter."""
    def one(name, x):
        return f"{name} {x.shape}" if isinstance(x, np.ndarray) else f"{name} {x}"
    shown = [f"{k}={v}" for k, v in (options or {}).items() if k != "rng"]     # dropout's seed says nothing
    return ", ".join([one(name, x) for name, x in inputs.items()] + shown)


def _normal(rng, *shape):
    return rng.standard_normal(shape)


def _away_from_zero(rng, *shape):
    x = rng.standard_normal(shape)
    return np.sign(x) * (0.1 + np.abs(x))


def _positive(rng, *shape):
    return np.abs(_away_from_zero(rng, *shape))


def _keep_mask(rng, *shape):
    """A random keep-mask with at least one kept key per query row."""
    keep = rng.random(shape) > 0.4
    keep[..., 0] = True
    return keep


def _keep_mask_with_empty_row(rng):
    keep = _keep_mask(rng, 2, 3, 4)
    keep[1, 2, :] = False            # one query that may attend to nothing: zeros, not nan
    return keep


CHECKS = [
    # basic.py: elementwise ops and shapes (broadcasting's backward is a sum: unbroadcast)
    OpCase("add", lambda r: dict(a=_normal(r, 2, 3, 5), b=_normal(r, 5))),
    OpCase("add", lambda r: dict(a=_normal(r, 3, 1), b=_normal(r, 2, 3, 4))),
    OpCase("add", lambda r: dict(a=_normal(r, 4, 3), b=2.5)),
    OpCase("sub", lambda r: dict(a=_normal(r, 3, 1), b=_normal(r, 2, 3, 5))),
    OpCase("sub", lambda r: dict(a=_normal(r, 4, 3), b=_normal(r, 4, 3))),
    OpCase("mul", lambda r: dict(a=_normal(r, 2, 3, 5), b=_normal(r, 3, 1))),
    OpCase("mul", lambda r: dict(a=_normal(r, 4, 3), b=_normal(r, 4, 3))),
    OpCase("div", lambda r: dict(a=_normal(r, 2, 3, 5), b=_away_from_zero(r, 2, 3, 5))),
    OpCase("div", lambda r: dict(a=_normal(r, 4, 3), b=_away_from_zero(r, 3))),
    OpCase("matmul", lambda r: dict(a=_normal(r, 2, 3, 5), b=_normal(r, 5, 4))),
    OpCase("matmul", lambda r: dict(a=_normal(r, 3, 4), b=_normal(r, 2, 4, 2))),
    OpCase("sum", lambda r: dict(x=_normal(r, 2, 3, 5)), dict(axis=1)),
    OpCase("sum", lambda r: dict(x=_normal(r, 4, 3)), dict(axis=None)),
    OpCase("sum", lambda r: dict(x=_normal(r, 2, 3, 5)), dict(axis=(0, 2), keepdims=True)),
    OpCase("mean", lambda r: dict(x=_normal(r, 2, 3, 5)), dict(axis=(0, 2), keepdims=True)),
    OpCase("mean", lambda r: dict(x=_normal(r, 4, 6)), dict(axis=-1)),
    OpCase("reshape", lambda r: dict(x=_normal(r, 2, 3, 5)), dict(shape=(6, 5))),
    OpCase("reshape", lambda r: dict(x=_normal(r, 4, 6)), dict(shape=(2, 3, 4))),
    OpCase("transpose", lambda r: dict(x=_normal(r, 2, 3, 5)), dict(axes=(2, 0, 1))),
    OpCase("transpose", lambda r: dict(x=_normal(r, 4, 3)), dict(axes=None)),
    OpCase("exp", lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCase("exp", lambda r: dict(x=_normal(r, 4, 6))),
    OpCase("log", lambda r: dict(x=_positive(r, 2, 3, 5))),
    OpCase("log", lambda r: dict(x=_positive(r, 4, 6))),
    OpCase("relu", lambda r: dict(x=_away_from_zero(r, 2, 3, 5))),
    OpCase("relu", lambda r: dict(x=_away_from_zero(r, 4, 6))),
    OpCase("gelu", lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCase("gelu", lambda r: dict(x=3 * _normal(r, 4, 6))),
    OpCase("silu", lambda r: dict(x=_normal(r, 2, 3, 5))),
    OpCase("silu", lambda r: dict(x=3 * _normal(r, 4, 6))),
    OpCase("dropout", lambda r: dict(x=_normal(r, 2, 3, 5)), dict(p=0.3, rng=7)),
    OpCase("dropout", lambda r: dict(x=_normal(r, 4, 6)), dict(p=0.5, rng=7)),
    OpCase("dropout", lambda r: dict(x=_normal(r, 3, 4)), dict(p=0.0, rng=7)),   # cache None
    # linear.py
    OpCase("linear", lambda r: dict(x=_normal(r, 2, 3, 5), W=_normal(r, 5, 4), b=_normal(r, 4))),
    OpCase("linear", lambda r: dict(x=_normal(r, 4, 3), W=_normal(r, 3, 3), b=_normal(r, 3))),
    OpCase("linear", lambda r: dict(x=_normal(r, 3, 5), W=_normal(r, 5, 2), b=None)),
    # softmax.py
    OpCase("softmax", lambda r: dict(x=_normal(r, 2, 3, 5)), dict(axis=-1)),
    OpCase("softmax", lambda r: dict(x=_normal(r, 2, 3, 5)), dict(axis=1)),
    OpCase("softmax", lambda r: dict(x=_normal(r, 4, 6)), dict(axis=-1)),
    OpCase("log_softmax", lambda r: dict(x=_normal(r, 2, 3, 5)), dict(axis=-1)),
    OpCase("log_softmax", lambda r: dict(x=_normal(r, 4, 3)), dict(axis=0)),
    # layernorm.py
    OpCase("layer_norm", lambda r: dict(x=_normal(r, 2, 3, 5), gamma=_normal(r, 5), beta=_normal(r, 5))),
    OpCase("layer_norm", lambda r: dict(x=_normal(r, 4, 6), gamma=_normal(r, 6), beta=_normal(r, 6)),
           dict(eps=1e-3)),
    OpCase("rms_norm", lambda r: dict(x=_normal(r, 2, 3, 5), gamma=_normal(r, 5))),
    OpCase("rms_norm", lambda r: dict(x=_normal(r, 4, 6), gamma=_normal(r, 6)), dict(eps=1e-3)),
    # attention.py
    OpCase("mask", lambda r: dict(scores=_normal(r, 2, 3, 4), keep=_keep_mask(r, 2, 3, 4))),
    OpCase("mask", lambda r: dict(scores=_normal(r, 2, 2, 3, 5), keep=_keep_mask(r, 3, 5))),
    OpCase("attention", lambda r: dict(q=_normal(r, 2, 3, 5), k=_normal(r, 2, 4, 5), v=_normal(r, 2, 4, 6),
                                       keep=_keep_mask_with_empty_row(r))),
    OpCase("attention", lambda r: dict(q=_normal(r, 2, 2, 3, 4), k=_normal(r, 2, 2, 3, 4), v=_normal(r, 2, 2, 3, 5),
                                       keep=ops.causal_mask(3))),
    OpCase("attention", lambda r: dict(q=_normal(r, 3, 4), k=_normal(r, 5, 4), v=_normal(r, 5, 2), keep=None),
           dict(scale=0.5)),
    OpCase("split_heads", lambda r: dict(x=_normal(r, 2, 3, 6)), dict(n_heads=2)),
    OpCase("split_heads", lambda r: dict(x=_normal(r, 3, 8)), dict(n_heads=4)),
    OpCase("merge_heads", lambda r: dict(x=_normal(r, 2, 2, 3, 4))),
    OpCase("merge_heads", lambda r: dict(x=_normal(r, 3, 2, 5))),
    # flash_attention.py: blocks smaller than T and not dividing it, so every row spans two or more key blocks
    OpCase("flash_attention", lambda r: dict(q=_normal(r, 2, 3, 5), k=_normal(r, 2, 4, 5), v=_normal(r, 2, 4, 6),
                                             keep=_keep_mask_with_empty_row(r)), dict(block_q=2, block_k=3)),
    OpCase("flash_attention", lambda r: dict(q=_normal(r, 2, 2, 5, 4), k=_normal(r, 2, 2, 5, 4),
                                             v=_normal(r, 2, 2, 5, 3), keep=ops.causal_mask(5)),
           dict(block_q=2, block_k=2)),
    OpCase("flash_attention", lambda r: dict(q=_normal(r, 3, 4), k=_normal(r, 7, 4), v=_normal(r, 7, 2), keep=None),
           dict(scale=0.5, block_q=2, block_k=3)),
    # grouped.py: the query heads a multiple of the key/value heads
    OpCase("repeat_kv", lambda r: dict(x=_normal(r, 2, 2, 3, 4)), dict(n_heads=6)),
    OpCase("repeat_kv", lambda r: dict(x=_normal(r, 1, 3, 5)), dict(n_heads=2)),
    # embedding.py
    OpCase("embedding", lambda r: dict(ids=np.array([[0, 3, 3], [6, 0, 2]]), table=_normal(r, 7, 5))),
    OpCase("embedding", lambda r: dict(ids=np.array([1, 1, 1, 3, 0]), table=_normal(r, 4, 3))),
    OpCase("positional_encoding", lambda r: dict(x=_normal(r, 2, 3, 6))),
    OpCase("positional_encoding", lambda r: dict(x=_normal(r, 4, 5)), dict(offset=2)),
    # rope.py: position 0 is no rotation at all, so each case has later positions too
    OpCase("rope", lambda r: dict(x=_normal(r, 2, 3, 6), positions=np.array([0, 1, 2]))),
    OpCase("rope", lambda r: dict(x=_normal(r, 2, 2, 3, 4), positions=np.array([[[5, 6, 7]], [[0, 2, 9]]])),
           dict(theta=100.0)),
    # loss.py
    OpCase("cross_entropy", lambda r: dict(logits=_normal(r, 2, 3, 5), targets=np.array([[1, 0, 4], [2, 3, 0]])),
           dict(ignore_index=0, label_smoothing=0.1)),
    OpCase("cross_entropy", lambda r: dict(logits=_normal(r, 4, 6), targets=np.array([5, 0, 2, 2]))),
]
