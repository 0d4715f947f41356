"""Bad input to any op: a clear error naming the op and the problem, before any arithmetic."""

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F



x235, W54 = np.zeros((2, 3, 5)), np.zeros((5, 4))



q235, k245, v246 = np.zeros((2, 3, 5)), np.zeros((2, 4, 5)), np.zeros((2, 4, 6))



logits235 = np.zeros((2, 3, 5))



targets23 = np.array([[1, 0, 4], [2, 3, 0]])



table75 = np.zeros((7, 5))



BAD_INPUTS = {
    "linear: x features != W rows": (
        lambda: F.linear(x235, np.zeros((4, 3))), ValueError, r"linear: x has 5 features .* W expects 4"),
    "linear: bias of the wrong shape": (
        lambda: F.linear(x235, W54, np.zeros(5)), ValueError, r"linear: b must have shape \(4,\)"),
    "linear: W not 2-D": (
        lambda: F.linear(x235, np.zeros(5)), ValueError, r"linear: W must be 2-D"),
    "attention: d_k of q and k differ": (
        lambda: F.attention(np.zeros((2, 3, 4)), np.zeros((2, 4, 3)), v246), ValueError,
        r"attention: q has d_k=4 but k has d_k=3"),
    "attention: k and v lengths differ": (
        lambda: F.attention(q235, k245, np.zeros((2, 5, 6))), ValueError,
        r"attention: k has 4 positions \(T_k\) but v has 5"),
    "attention: mask of the wrong shape": (
        lambda: F.attention(q235, k245, v246, np.ones((3, 3), dtype=bool)), ValueError,
        r"attention: mask of shape \(3, 3\) does not broadcast to scores of shape \(2, 3, 4\)"),
    "attention: mask not boolean": (
        lambda: F.attention(q235, k245, v246, np.ones((3, 4))), TypeError,
        r"attention: the mask must be a boolean ndarray .* got float64"),
    "attention: different batch axes": (
        lambda: F.attention(q235, np.zeros((3, 4, 5)), np.zeros((3, 4, 6))), ValueError,
        r"attention: q, k, v must share their leading \(batch, head\) axes"),
    "split_heads: d_model not divisible by n_heads": (
        lambda: F.split_heads(x235, 2), ValueError, r"split_heads: d_model=5 is not divisible by n_heads=2"),
    "mask: mask of the wrong shape": (
        lambda: F.mask(np.zeros((3, 4)), np.ones((4, 3), dtype=bool)), ValueError,
        r"mask: mask of shape \(4, 3\) does not broadcast"),
    "mask: mask not boolean": (
        lambda: F.mask(np.zeros((3, 3)), np.tril(np.ones((3, 3), dtype=int))), TypeError,
        r"mask: the mask must be a boolean ndarray"),
    "embedding: id too large": (
        lambda: F.embedding(np.array([[1, 7]]), table75), ValueError, r"embedding: token id 7 is outside \[0, 7\)"),
    "embedding: negative id": (
        lambda: F.embedding(np.array([[-1, 2]]), table75), ValueError, r"embedding: token id -1 is outside \[0, 7\)"),
    "embedding: ids not integers": (
        lambda: F.embedding(np.array([[1.0, 2.0]]), table75), TypeError,
        r"embedding: token ids must be an integer ndarray, got float64"),
    "embedding: ids a list": (
        lambda: F.embedding([1, 2], table75), TypeError, r"embedding: token ids must be an integer ndarray, got list"),
    "cross_entropy: target too large": (
        lambda: F.cross_entropy(logits235, np.array([[1, 0, 5], [2, 3, 0]])), ValueError,
        r"cross_entropy: target 5 is outside \[0, 5\)"),
    "cross_entropy: negative target": (
        lambda: F.cross_entropy(logits235, np.array([[1, -1, 4], [2, 3, 0]])), ValueError,
        r"cross_entropy: target -1 is outside \[0, 5\)"),
    "cross_entropy: targets of the wrong shape": (
        lambda: F.cross_entropy(logits235, np.array([1, 0, 4])), ValueError,
        r"cross_entropy: targets must have shape \(2, 3\) .* got \(3,\)"),
    "cross_entropy: targets not integers": (
        lambda: F.cross_entropy(logits235, targets23.astype(float)), TypeError,
        r"cross_entropy: targets must be an integer ndarray, got float64"),
    "cross_entropy: every target ignored": (
        lambda: F.cross_entropy(logits235, np.zeros((2, 3), dtype=int), ignore_index=0), ValueError,
        r"cross_entropy: every target equals ignore_index"),
    "cross_entropy: label_smoothing above 1": (
        lambda: F.cross_entropy(logits235, targets23, label_smoothing=1.5), ValueError,
        r"cross_entropy: label_smoothing must be in \[0, 1\], got 1.5"),
    "cross_entropy: label_smoothing below 0": (
        lambda: F.cross_entropy(logits235, targets23, label_smoothing=-0.1), ValueError,
        r"cross_entropy: label_smoothing must be in \[0, 1\], got -0.1"),
    "layer_norm: gamma of the wrong shape": (
        lambda: F.layer_norm(x235, np.ones(4), np.zeros(5)), ValueError,
        r"layer_norm: gamma must have shape \(5,\) .* got \(4,\)"),
    "layer_norm: beta of the wrong shape": (
        lambda: F.layer_norm(x235, np.ones(5), np.zeros((1, 5))), ValueError,
        r"layer_norm: beta must have shape \(5,\) .* got \(1, 5\)"),
    "layer_norm: eps not positive": (
        lambda: F.layer_norm(x235, np.ones(5), np.zeros(5), eps=0.0), ValueError,
        r"layer_norm: eps must be a finite number > 0, got 0.0"),
    "rms_norm: gamma of the wrong shape": (
        lambda: F.rms_norm(x235, np.ones(4)), ValueError, r"rms_norm: gamma must have shape \(5,\) .* got \(4,\)"),
    "rms_norm: eps not positive": (
        lambda: F.rms_norm(x235, np.ones(5), eps=-1e-5), ValueError, r"rms_norm: eps must be a finite number > 0, got -1e-05"),
    "rms_norm: eps nan": (
        lambda: F.rms_norm(x235, np.ones(5), eps=float("nan")), ValueError, r"rms_norm: eps must be a finite number > 0, got nan"),
    "silu: integers": (lambda: F.silu(np.arange(3)), TypeError, r"silu: x must hold floating-point numbers"),
    "rope: odd d_k": (
        lambda: F.rope(x235, np.arange(3)), ValueError, r"rope: x must be \(\.\.\., T, d_k\) with d_k even, got shape \(2, 3, 5\)"),
    "rope: positions not integers": (
        lambda: F.rope(k245[..., :4], np.arange(4.0)), TypeError, r"rope: positions must be an integer ndarray, got float64"),
    "rope: positions of another length": (
        lambda: F.rope(k245[..., :4], np.arange(3)), ValueError,
        r"rope: positions of shape \(3,\) do not broadcast to x's \(\.\.\., T\) = \(2, 4\)"),
    "rope: positions that would grow x": (
        lambda: F.rope(k245[..., :4], np.zeros((3, 2, 4), dtype=int)), ValueError,
        r"rope: positions of shape \(3, 2, 4\) do not broadcast"),
    "rope: theta not positive": (
        lambda: F.rope(k245[..., :4], np.arange(4), theta=0.0), ValueError, r"rope: theta must be positive, got 0.0"),
    "rope: theta nan": (
        lambda: F.rope(k245[..., :4], np.arange(4), theta=float("nan")), ValueError,
        r"rope: theta must be a finite number, got nan"),
    "dropout: p = 1": (
        lambda: F.dropout(x235, 1.0, np.random.default_rng(0)), ValueError, r"dropout: p must be in \[0, 1\), got 1.0"),
    "dropout: p < 0": (
        lambda: F.dropout(x235, -0.1, np.random.default_rng(0)), ValueError,
        r"dropout: p must be in \[0, 1\), got -0.1"),
    "dropout: p > 1, even when not training": (
        lambda: F.dropout(x235, 1.5, np.random.default_rng(0), training=False), ValueError, r"dropout: p must be in"),
    "dropout: rng not a Generator": (
        lambda: F.dropout(x235, 0.1, None), TypeError, r"dropout: rng must be a seed \(an int\) or an np.random.Generator, got NoneType"),
    "dropout: rng True (a bool is no seed)": (
        lambda: F.dropout(x235, 0.1, True), TypeError, r"dropout: rng must be a seed \(an int\) or an np.random.Generator, got bool"),
    "matmul: inner sizes differ": (
        lambda: F.matmul(x235, np.zeros((4, 3))), ValueError, r"matmul: a is \(2, 3, 5\) and b is \(4, 3\)"),
    "reshape: wrong number of elements": (
        lambda: F.reshape(x235, (4, 4)), ValueError, r"reshape: cannot reshape \(2, 3, 5\) \(30 elements\)"),
    "mixed dtypes in add": (
        lambda: F.add(np.zeros(3, np.float32), np.zeros(3)), TypeError,
        r"add: inputs must share one dtype, got float32 and float64"),
    "mixed dtypes in linear": (
        lambda: F.linear(x235.astype(np.float32), W54), TypeError,
        r"linear: inputs must share one dtype, got float32 and float64 \(W\)"),
    "mixed dtypes in attention": (
        lambda: F.attention(q235, k245.astype(np.float32), v246), TypeError,
        r"attention: inputs must share one dtype, got float64 and float32 \(k\)"),
    "mixed dtypes in layer_norm": (
        lambda: F.layer_norm(x235.astype(np.float32), np.ones(5), np.zeros(5)), TypeError,
        r"layer_norm: inputs must share one dtype"),
    "integers where floats are needed": (
        lambda: F.softmax(np.arange(3)), TypeError, r"softmax: x must hold floating-point numbers, got dtype int"),
    "padding_mask: ids not integers": (
        lambda: tt.padding_mask(np.zeros((2, 3)), 0), TypeError, r"padding_mask: token ids must be an integer"),
}



@pytest.mark.parametrize("call, error, message", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()

