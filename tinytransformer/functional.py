"""The ops on Tensors: each function is one call to one forward/backward pair.

Arguments may be Tensors or ndarrays; an ndarray is a constant (no gradient).
Inside a `with Tape()` block each call is recorded, so backward can undo it.

Broadcasting is NumPy's and PyTorch's, on purpose: add, sub, mul, div and matmul
accept any shapes those libraries accept ((B, T, d) + (d,) adds the row to every
position; (B, T, d) * (T, 1) scales each position), and a mask broadcasts over
the scores it keeps. Their backward sums the gradient over the broadcast axes.
Shapes that do not broadcast are an error naming both; shapes that do are never
flagged, even where a mistake would also broadcast (a (T,) bias meant as (d,)
with T == d): check the shapes you pass, as in NumPy or PyTorch.
"""
from . import ops, tensor
from .ops import causal_mask, padding_mask, sinusoidal_positions
from .ops.checks import check_call
from .tensor import Tensor

__all__ = ["linear", "relu", "gelu", "silu", "dropout", "softmax", "log_softmax", "layer_norm", "rms_norm",
           "embedding", "mask", "attention", "flash_attention", "split_heads", "merge_heads", "repeat_kv",
           "positional_encoding", "rope", "cross_entropy", "add", "sub", "mul", "div", "matmul", "sum", "mean", "reshape",
           "transpose", "exp", "log", "causal_mask", "padding_mask", "sinusoidal_positions", "Tensor"]


def _apply(forward, backward, *inputs, **options):
    """tensor.apply, after the checks every call here shares (ops/checks.py's check_call: arrays, not lists;
    float32 or float64; the axes the op needs)."""
    check_call(forward, [t.data if isinstance(t, Tensor) else t for t in inputs], options)
    return tensor.apply(forward, backward, *inputs, **options)


def _apply_with_cache(forward, backward, *inputs, **options):
    """tensor.apply_with_cache, after the same checks."""
    check_call(forward, [t.data if isinstance(t, Tensor) else t for t in inputs], options)
    return tensor.apply_with_cache(forward, backward, *inputs, **options)


def linear(x, W, b=None):
    """x (..., d_in) @ W (d_in, d_out) + b (d_out,)  ->  (..., d_out)."""
    return _apply(ops.linear_forward, ops.linear_backward, x, W, b)


def relu(x):
    """max(x, 0), elementwise."""
    return _apply(ops.relu_forward, ops.relu_backward, x)


def gelu(x):
    """GELU, tanh approximation (as GPT-2 and torch's approximate='tanh')."""
    return _apply(ops.gelu_forward, ops.gelu_backward, x)


def silu(x):
    """SiLU (swish), x * sigmoid(x), elementwise: the gate of the SwiGLU feed-forward."""
    return _apply(ops.silu_forward, ops.silu_backward, x)


def dropout(x, p, rng, training=True):
    """Inverted dropout driven by rng (an np.random.Generator, or a seed); identity when not training."""
    return _apply(ops.dropout_forward, ops.dropout_backward, x, p=p, rng=rng, training=training)


def softmax(x, axis=-1):
    """exp(x) over its sum along axis: each row sums to 1 (a row of -inf gives zeros)."""
    return _apply(ops.softmax_forward, ops.softmax_backward, x, axis=axis)


def log_softmax(x, axis=-1):
    """x minus the log of the sum of exp(x) along axis: the log of softmax, computed stably."""
    return _apply(ops.log_softmax_forward, ops.log_softmax_backward, x, axis=axis)


def layer_norm(x, gamma, beta, eps=1e-5):
    """Normalise the last axis of x, then scale by gamma and shift by beta (both (D,))."""
    return _apply(ops.layer_norm_forward, ops.layer_norm_backward, x, gamma, beta, eps=eps)


def rms_norm(x, gamma, eps=1e-5):
    """Divide the last axis of x by the root of its mean square, then scale by gamma (D,): no mean, no beta."""
    return _apply(ops.rms_norm_forward, ops.rms_norm_backward, x, gamma, eps=eps)


def embedding(ids, table):
    """Rows of table (V, d_model) picked by the integer ids (...)  ->  (..., d_model)."""
    return _apply(ops.embedding_forward, ops.embedding_backward, ids, table)


def mask(scores, keep):
    """scores where keep (boolean, True = may attend) else -inf."""
    return _apply(ops.mask_forward, ops.mask_backward, scores, keep)


def attention(q, k, v, keep=None, scale=None):
    """Scaled dot-product attention -> (out Tensor (..., T_q, d_v), probs ndarray (..., T_q, T_k)).

    keep: boolean mask (True = may attend) broadcastable to (..., T_q, T_k); scale defaults to 1/sqrt(d_k).
    The attention probabilities are returned for inspection; gradients flow through out.
    """
    out, cache = _apply_with_cache(ops.attention_forward_fast, ops.attention_backward_fast, q, k, v, keep,
                                  scale=scale)              # the fast twin of ops.attention_forward: same numbers
    _, _, _, probs, _ = cache            # the op keeps the probabilities in its cache: (q, k, v, probs, scale)
    return out, probs


def flash_attention(q, k, v, keep=None, scale=None, block_q=ops.flash_attention.BLOCK,
                    block_k=ops.flash_attention.BLOCK):
    """attention's output, computed in (block_q, block_k) tiles: no (T_q, T_k) array kept -> out Tensor (..., T_q, d_v).

    keep and scale as attention's; the probabilities are never stored, so none are returned.
    """
    return _apply(ops.flash_attention_forward, ops.flash_attention_backward, q, k, v, keep, scale=scale,
                 block_q=block_q, block_k=block_k)


def split_heads(x, n_heads):
    """(..., T, d_model) -> (..., n_heads, T, d_k)."""
    return _apply(ops.split_heads_forward, ops.split_heads_backward, x, n_heads=n_heads)


def merge_heads(x):
    """(..., n_heads, T, d_k) -> (..., T, n_heads * d_k)."""
    return _apply(ops.merge_heads_forward, ops.merge_heads_backward, x)


def repeat_kv(x, n_heads):
    """(..., h_kv, T, d_k) -> (..., n_heads, T, d_k): each key/value head shared by n_heads / h_kv query heads."""
    return _apply(ops.repeat_kv_forward, ops.repeat_kv_backward, x, n_heads=n_heads)


def positional_encoding(x, offset=0):
    """x (..., T, d_model) plus the sinusoidal positions of the paper, from position offset on."""
    return _apply(ops.positional_encoding_forward, ops.positional_encoding_backward, x, offset=offset)


def rope(x, positions, theta=10000.0):
    """x (..., T, d_k) with each pair (x[2i], x[2i+1]) rotated by positions (..., T) * theta^(-2i/d_k)."""
    return _apply(ops.rope_forward, ops.rope_backward, x, positions, theta=theta)


def cross_entropy(logits, targets, ignore_index=None, label_smoothing=0.0):
    """Mean cross-entropy of logits (..., V) against integer targets (...), as torch's."""
    return _apply(ops.cross_entropy_forward, ops.cross_entropy_backward, logits, targets,
                 ignore_index=ignore_index, label_smoothing=label_smoothing)


def add(a, b):
    """a + b, broadcast as in NumPy."""
    return _apply(ops.add_forward, ops.add_backward, a, b)


def sub(a, b):
    """a - b, broadcast as in NumPy."""
    return _apply(ops.sub_forward, ops.sub_backward, a, b)


def mul(a, b):
    """a * b, elementwise, broadcast as in NumPy."""
    return _apply(ops.mul_forward, ops.mul_backward, a, b)


def div(a, b):
    """a / b, elementwise, broadcast as in NumPy (a zero in b is an error)."""
    return _apply(ops.div_forward, ops.div_backward, a, b)


def matmul(a, b):
    """a @ b over the last two axes (both inputs at least 2-D), the axes in front broadcast."""
    return _apply(ops.matmul_forward, ops.matmul_backward, a, b)


def sum(x, axis=None, keepdims=False):
    """The sum of x over axis (None: every axis), the summed axes kept as size 1 if keepdims."""
    return _apply(ops.sum_forward, ops.sum_backward, x, axis=axis, keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    """The mean of x over axis (None: every axis), the averaged axes kept as size 1 if keepdims."""
    return _apply(ops.mean_forward, ops.mean_backward, x, axis=axis, keepdims=keepdims)


def reshape(x, shape):
    """x's elements, in order, in the given shape."""
    return _apply(ops.reshape_forward, ops.reshape_backward, x, shape=shape)


def transpose(x, axes=None):
    """x with its axes permuted by axes (None: reversed)."""
    return _apply(ops.transpose_forward, ops.transpose_backward, x, axes=axes)


def exp(x):
    """e to the power x, elementwise."""
    return _apply(ops.exp_forward, ops.exp_backward, x)


def log(x):
    """The natural log of x, elementwise (x must be positive)."""
    return _apply(ops.log_forward, ops.log_backward, x)
