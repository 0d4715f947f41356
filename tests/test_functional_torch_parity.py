"""Every op's forward and gradients equal PyTorch's, in float64 (skipped without torch).

Each case computes the same function twice, with tinytransformer and with torch,
on the same inputs, and backpropagates the same random upstream gradient.
"""
import math

import numpy as np
import pytest

import tinytransformer as tt
from helpers import keep_mask, normal
from tinytransformer import functional as F

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
TF = torch.nn.functional


def ours(fn, inputs, dout):
    """Forward and gradients of every float input, with the tape."""
    tensors = [tt.Tensor(x.copy(), requires_grad=True) if x.dtype.kind == "f" else x for x in inputs]
    with tt.Tape() as tape:
        out = fn(*tensors)
        out = out[0] if isinstance(out, tuple) else out
    tape.backward(out, dout)
    return out.data, [t.grad for t in tensors if isinstance(t, tt.Tensor)]


def theirs(fn, inputs, dout):
    """Forward and gradients of every float input, with torch autograd."""
    tensors = [torch.tensor(x, requires_grad=x.dtype.kind == "f") for x in inputs]
    out = fn(*tensors)
    out.backward(torch.tensor(dout))
    return out.detach().numpy(), [t.grad.numpy() for t in tensors if t.requires_grad]


def output_shape(fn, inputs):
    out = fn(*inputs)
    return (out[0] if isinstance(out, tuple) else out).shape


def torch_positions(T, d_model):
    """The paper's formula as the Annotated Transformer writes it, in torch."""
    position = torch.arange(T, dtype=torch.float64)[:, None]
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    P = torch.zeros(T, d_model, dtype=torch.float64)
    P[:, 0::2] = torch.sin(position * div_term)
    P[:, 1::2] = torch.cos(position * div_term)[:, : d_model // 2]   # odd d_model: one cosine fewer
    return P


def torch_rope(x, positions, theta=10000.0):
    """RoFormer's rotation written with torch's complex numbers: pair (x[2i], x[2i+1]) as x[2i] + i x[2i+1],
    multiplied by e^(i * position * theta^(-2i/d_k))."""
    d_k = x.shape[-1]
    frequencies = theta ** (-torch.arange(0, d_k, 2, dtype=torch.float64) / d_k)
    angle = torch.as_tensor(positions, dtype=torch.float64)[..., None] * frequencies
    turn = torch.polar(torch.ones_like(angle), angle)
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], d_k // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).reshape(x.shape)


ids_23 = lambda r: np.array([[0, 3, 3], [6, 0, 2]])        # noqa: E731  (3 repeated, 0 twice)
targets_23 = lambda r: np.array([[1, 0, 4], [2, 3, 0]])    # noqa: E731  (0 is ignored below)

CASES = {
    "linear": (F.linear, lambda x, W, b: x @ W + b, [normal(2, 3, 5), normal(5, 4), normal(4)]),
    "relu": (F.relu, torch.relu, [normal(2, 3, 5)]),
    "gelu (tanh)": (F.gelu, lambda x: TF.gelu(x, approximate="tanh"), [normal(2, 3, 5)]),
    "softmax": (F.softmax, lambda x: torch.softmax(x, dim=-1), [normal(2, 3, 5)]),
    "softmax (axis 1)": (lambda x: F.softmax(x, axis=1), lambda x: torch.softmax(x, dim=1), [normal(2, 3, 5)]),
    "log_softmax": (F.log_softmax, lambda x: torch.log_softmax(x, dim=-1), [normal(2, 3, 5)]),
    "layer_norm": (F.layer_norm, lambda x, g, b: TF.layer_norm(x, (5,), g, b, eps=1e-5),
                   [normal(2, 3, 5), normal(5), normal(5)]),
    "rms_norm": (F.rms_norm, lambda x, g: TF.rms_norm(x, (5,), g, eps=1e-5), [normal(2, 3, 5), normal(5)]),
    "rms_norm, eps=1e-3": (lambda x, g: F.rms_norm(x, g, eps=1e-3), lambda x, g: TF.rms_norm(x, (6,), g, eps=1e-3),
                           [normal(4, 6), normal(6)]),
    "silu": (F.silu, TF.silu, [lambda r: 4 * r.standard_normal((2, 3, 5))]),
    "rope": (lambda x: F.rope(x, np.array([0, 1, 7])), lambda x: torch_rope(x, [0, 1, 7]), [normal(2, 3, 6)]),
    "rope, heads, theta=500": (
        lambda x: F.rope(x, np.array([[[3, 4, 5]], [[0, 9, 2]]]), theta=500.0),
        lambda x: torch_rope(x, [[[3, 4, 5]], [[0, 9, 2]]], theta=500.0), [normal(2, 2, 3, 8)]),
    "attention, masked, with an empty row": (
        F.attention, lambda q, k, v, keep: TF.scaled_dot_product_attention(q, k, v, attn_mask=keep),
        [normal(2, 3, 5), normal(2, 4, 5), normal(2, 4, 6), keep_mask(2, 3, 4, empty_row=(1, 2))]),
    "attention, heads, causal, scale=0.3": (
        lambda q, k, v: F.attention(q, k, v, tt.causal_mask(3), scale=0.3),
        lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3),
        [normal(2, 2, 3, 4), normal(2, 2, 3, 4), normal(2, 2, 3, 5)]),
    "mask + softmax": (lambda s, keep: F.softmax(F.mask(s, keep)),
                       lambda s, keep: torch.softmax(s.masked_fill(~keep, -math.inf), dim=-1),
                       [normal(2, 3, 4), lambda r: np.tril(np.ones((3, 4), dtype=bool))]),
    "embedding": (F.embedding, lambda ids, table: TF.embedding(ids, table), [ids_23, normal(7, 5)]),
    "positional_encoding": (F.positional_encoding, lambda x: x + torch_positions(3, 6), [normal(2, 3, 6)]),
    "positional_encoding, odd d_model": (F.positional_encoding, lambda x: x + torch_positions(4, 5),
                                         [normal(2, 4, 5)]),
    "cross_entropy": (F.cross_entropy, lambda z, t: TF.cross_entropy(z.reshape(-1, 5), t.reshape(-1)),
                      [normal(2, 3, 5), targets_23]),
    "cross_entropy, ignore_index, label_smoothing": (
        lambda z, t: F.cross_entropy(z, t, ignore_index=0, label_smoothing=0.1),
        lambda z, t: TF.cross_entropy(z.reshape(-1, 5), t.reshape(-1), ignore_index=0, label_smoothing=0.1),
        [normal(2, 3, 5), targets_23]),
    "split_heads": (lambda x: F.split_heads(x, 2), lambda x: x.reshape(2, 3, 2, 3).transpose(1, 2),
                    [normal(2, 3, 6)]),
    "merge_heads": (F.merge_heads, lambda x: x.transpose(1, 2).reshape(2, 3, 8), [normal(2, 2, 3, 4)]),
    "add (broadcast)": (F.add, torch.add, [normal(2, 3, 5), normal(5)]),
    "sub (broadcast)": (F.sub, torch.sub, [normal(3, 1), normal(2, 3, 5)]),
    "mul (broadcast)": (F.mul, torch.mul, [normal(2, 3, 5), normal(3, 1)]),
    "div": (F.div, torch.div, [normal(2, 3, 5), lambda r: 0.5 + r.random((2, 3, 5))]),
    "matmul (batched)": (F.matmul, torch.matmul, [normal(2, 3, 5), normal(5, 4)]),
    "sum": (lambda x: F.sum(x, axis=1), lambda x: x.sum(dim=1), [normal(2, 3, 5)]),
    "mean": (lambda x: F.mean(x, axis=(0, 2), keepdims=True), lambda x: x.mean(dim=(0, 2), keepdim=True),
             [normal(2, 3, 5)]),
    "reshape": (lambda x: F.reshape(x, (6, 5)), lambda x: x.reshape(6, 5), [normal(2, 3, 5)]),
    "transpose": (lambda x: F.transpose(x, (2, 0, 1)), lambda x: x.permute(2, 0, 1), [normal(2, 3, 5)]),
    "exp": (F.exp, torch.exp, [normal(2, 3, 5)]),
    "log": (F.log, torch.log, [lambda r: 0.1 + r.random((2, 3, 5))]),
}


@pytest.mark.parametrize("our_fn, torch_fn, makers", CASES.values(), ids=CASES.keys())
def test_forward_and_gradients_equal_torch(our_fn, torch_fn, makers, rng):
    inputs = [make(rng) for make in makers]
    dout = rng.standard_normal(output_shape(our_fn, inputs))
    our_out, our_grads = ours(our_fn, inputs, dout)
    torch_out, torch_grads = theirs(torch_fn, inputs, dout)
    np.testing.assert_allclose(our_out, torch_out, rtol=1e-10, atol=1e-12)
    assert len(our_grads) == len(torch_grads)
    for ours_g, theirs_g in zip(our_grads, torch_grads):
        np.testing.assert_allclose(ours_g, theirs_g, rtol=1e-10, atol=1e-12)


def test_fully_masked_row_is_zero_in_both(rng):
    q, k, v = (torch.tensor(rng.standard_normal((1, 2, 3))) for _ in range(3))
    keep = np.array([[True, False], [False, False]])
    torch_out = TF.scaled_dot_product_attention(q, k, v, attn_mask=torch.tensor(keep)).numpy()
    our_out = F.attention(q.numpy(), k.numpy(), v.numpy(), keep)[0].data
    np.testing.assert_array_equal(torch_out[0, 1], 0.0)       # torch >= 2.5
    np.testing.assert_allclose(our_out, torch_out, rtol=1e-12, atol=1e-15)


def test_sinusoidal_positions_equal_the_torch_formula():
    for T, d_model in [(7, 8), (5, 6), (3, 5)]:
        expected = torch_positions(T, d_model).numpy()
        np.testing.assert_allclose(tt.sinusoidal_positions(T, d_model), expected, rtol=1e-12, atol=1e-14)


def test_attention_weights_equal_torch_softmax_of_the_masked_scores(rng):
    q, k, v = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 4, 6))
    keep = keep_mask(2, 3, 4, empty_row=(1, 2))(rng)
    _, weights = F.attention(q, k, v, keep)
    scores = torch.tensor(q) @ torch.tensor(k).transpose(-1, -2) / math.sqrt(5)
    expected = torch.softmax(scores.masked_fill(~torch.tensor(keep), -math.inf), dim=-1)
    np.testing.assert_allclose(weights, torch.nan_to_num(expected, nan=0.0).numpy(), rtol=1e-12, atol=1e-15)
