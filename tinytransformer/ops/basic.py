"""Elementwise and shape primitives, each a forward/backward pair.

    out, cache = name_forward(*inputs, **options)
    grads      = name_backward(dout, cache)   # one per array input, in order

The tape needs these to build anything; attention built from them is
compared with the fused attention op in the tests.
"""
import math
import numbers

import numpy as np

from .checks import check_float


def broadcast_axes(big, shape):
    """The axes of `big` that broadcasting `shape` up to `big` added (in front) or stretched (from 1)."""
    extra = len(big) - len(shape)
    return tuple(range(extra)) + tuple(i + extra for i, n in enumerate(shape) if n == 1 and big[i + extra] != 1)


def unbroadcast(grad, shape):
    """Sum `grad` back to `shape`: the backward of NumPy broadcasting.

    forward: out = a + b, with a of `shape` stretched to out's shape
    backward: each element of a fed every output element it was copied to,
    so its gradient is the sum over the copies.
    """
    if grad.shape == shape:
        return grad
    summed = grad.sum(axis=broadcast_axes(grad.shape, shape), keepdims=True)   # 1 on every copied axis
    return summed.reshape(shape)                                             # shape: the added axes dropped


# In add, sub, mul and div an input may be a plain Python number: a constant,
# so its gradient is None (and costs nothing).

def _shape(a):
    return a.shape if isinstance(a, np.ndarray) else None


def add_forward(a, b):
    """Return (a + b, cache), broadcast as in NumPy; either input may be a plain number (a constant)."""
    check_float("add", a=a, b=b)
    return a + b, (_shape(a), _shape(b))


def add_backward(dout, cache):
    a_shape, b_shape = cache
    # out = a + b  ->  da = dout, db = dout, each summed over the axes broadcasting stretched
    da = None if a_shape is None else unbroadcast(dout, a_shape)            # out's shape -> a's
    db = None if b_shape is None else unbroadcast(dout, b_shape)            # out's shape -> b's
    return da, db


def sub_forward(a, b):
    """Return (a - b, cache), broadcast as in NumPy; either input may be a plain number (a constant)."""
    check_float("sub", a=a, b=b)
    return a - b, (_shape(a), _shape(b))


def sub_backward(dout, cache):
    a_shape, b_shape = cache
    # out = a - b  ->  da = dout, db = -dout
    da = None if a_shape is None else unbroadcast(dout, a_shape)            # out's shape -> a's
    db = None if b_shape is None else unbroadcast(-dout, b_shape)           # out's shape -> b's
    return da, db


def mul_forward(a, b):
    """Return (a * b, cache), broadcast as in NumPy; either input may be a plain number (a constant)."""
    check_float("mul", a=a, b=b)
    return a * b, (a, b)


def mul_backward(dout, cache):
    a, b = cache
    # out = a * b  ->  da = dout * b, db = dout * a
    da = None if _shape(a) is None else unbroadcast(dout * b, a.shape)      # out's shape -> a's
    db = None if _shape(b) is None else unbroadcast(dout * a, b.shape)      # out's shape -> b's
    return da, db


def div_forward(a, b):
    """Return (a / b, cache), broadcast as in NumPy; a zero in b is a ZeroDivisionError."""
    check_float("div", a=a, b=b)
    if np.any(np.asarray(b) == 0):
        raise ZeroDivisionError("div: the divisor contains zeros")
    return a / b, (a, b)


def div_backward(dout, cache):
    a, b = cache
    # out = a / b  ->  da = dout / b, db = -dout * a / b^2
    da = None if _shape(a) is None else unbroadcast(dout / b, a.shape)              # out's shape -> a's
    db = None if _shape(b) is None else unbroadcast(-dout * a / (b * b), b.shape)   # out's shape -> b's
    return da, db


def matmul_forward(a, b):
    """Return (a @ b, cache): a product over the last two axes of each input, the axes in front broadcast."""
    check_float("matmul", a=a, b=b)
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul: both inputs need at least 2 dimensions, got {a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: a is {a.shape} and b is {b.shape}; "
                         f"a's last axis ({a.shape[-1]}) must equal b's second-to-last ({b.shape[-2]})")
    return a @ b, (a, b)


def matmul_backward(dout, cache):
    a, b = cache
    # out = a @ b  ->  da = dout @ b.T, db = a.T @ dout (.T swaps the last two axes)
    da = dout @ b.swapaxes(-1, -2)                         # (..., n, k), before summing to a's shape
    db = a.swapaxes(-1, -2) @ dout                         # (..., k, m), before summing to b's shape
    return unbroadcast(da, a.shape), unbroadcast(db, b.shape)


def _normalize_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % ndim for a in axes)


def sum_forward(x, axis=None, keepdims=False):
    """Return (the sum of x over axis, cache): None sums every axis; keepdims keeps them as size 1."""
    check_float("sum", x=x)
    return x.sum(axis=axis, keepdims=keepdims), (x.shape, _normalize_axes(axis, x.ndim), keepdims)


def sum_backward(dout, cache):
    x_shape, axes, keepdims = cache
    # out = sum_i x_i  ->  dx_i = dout: every summed element gets the same gradient
    if not keepdims:
        dout = np.expand_dims(dout, axes)                      # out's shape with 1 on each summed axis
    return (np.broadcast_to(dout, x_shape),)                   # x_shape (a read-only view)


def mean_forward(x, axis=None, keepdims=False):
    """Return (the mean of x over axis, cache): None averages every axis; keepdims keeps them as size 1."""
    check_float("mean", x=x)
    axes = _normalize_axes(axis, x.ndim)
    count = math.prod(x.shape[a] for a in axes)
    return x.mean(axis=axis, keepdims=keepdims), (x.shape, axes, keepdims, count)


def mean_backward(dout, cache):
    x_shape, axes, keepdims, count = cache
    # out = sum_i x_i / n  ->  dx_i = dout / n
    (dx,) = sum_backward(dout, (x_shape, axes, keepdims))    # x_shape
    return (dx / count,)


def reshape_forward(x, shape):
    """Return (x's elements in the given shape, cache: x's shape)."""
    try:
        out = x.reshape(shape)
    except ValueError:
        raise ValueError(f"reshape: cannot reshape {x.shape} ({x.size} elements) into {shape}") from None
    return out, x.shape


def reshape_backward(dout, cache):
    x_shape = cache
    # a reshape moves no numbers: the gradient is reshaped back
    return (dout.reshape(x_shape),)                            # out's shape -> x_shape


def transpose_forward(x, axes=None):
    """Return (x with its axes permuted by axes, cache): None reverses them."""
    if axes is not None and not all(isinstance(a, numbers.Integral) and -x.ndim <= a < x.ndim for a in axes):
        raise ValueError(f"transpose: axes must each be an axis of x in [-{x.ndim}, {x.ndim}) (x is {x.shape}), "
                         f"got {tuple(axes)}")
    axes = tuple(reversed(range(x.ndim))) if axes is None else tuple(a % x.ndim for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {x.ndim} axes of {x.shape}")
    return x.transpose(axes), axes


def transpose_backward(dout, cache):
    axes = cache
    # out axis i is x axis axes[i]; undo it with the inverse permutation
    return (dout.transpose(np.argsort(axes)),)                 # out's axes -> x's


def exp_forward(x):
    """Return (exp(x), cache: that output, which is also its derivative)."""
    check_float("exp", x=x)
    out = np.exp(x)
    return out, out


def exp_backward(dout, cache):
    out = cache
    # out = e^x  ->  dx = dout * e^x = dout * out
    return (dout * out,)


def log_forward(x):
    """Return (log(x), cache: x); x must be positive."""
    check_float("log", x=x)
    if np.any(x <= 0):
        raise ValueError(f"log: input must be positive, got a minimum of {x.min()}")
    return np.log(x), x


def log_backward(dout, cache):
    x = cache
    # out = log x  ->  dx = dout / x
    return (dout / x,)


def relu_forward(x):
    """Return (max(x, 0), cache: where x is positive)."""
    check_float("relu", x=x)
    positive = x > 0
    return x * positive, positive


def relu_backward(dout, cache):
    positive = cache
    # out = max(x, 0)  ->  dx = dout where x > 0, else 0
    return (dout * positive,)


GELU_C = math.sqrt(2.0 / math.pi)


def gelu_forward(x):
    """Return (gelu(x), cache): GELU in its tanh form, as GPT-2."""
    check_float("gelu", x=x)
    # tanh form: gelu(x) = 0.5 x (1 + tanh(c (x + 0.044715 x^3))), c = sqrt(2/pi)
    t = np.tanh(GELU_C * (x + 0.044715 * (x * x * x)))     # x * x * x = x ** 3: float32's power is ~300x slower
    return 0.5 * x * (1.0 + t), (x, t)


def gelu_backward(dout, cache):
    x, t = cache
    # d/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 * 0.044715 x^2)
    local = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3 * 0.044715 * x * x)
    return (dout * local,)


def silu_forward(x):
    """Return (silu(x), cache): SiLU, x * sigmoid(x), the gate of LLaMA's SwiGLU feed-forward."""
    check_float("silu", x=x)
    # sigmoid(x) = 1 / (1 + e^-x) = (1 + tanh(x/2)) / 2: the tanh form never overflows
    s = 0.5 * (1.0 + np.tanh(0.5 * x))
    return x * s, (x, s)


def silu_backward(dout, cache):
    x, s = cache
    # out = x * s with s = sigmoid(x), s' = s (1 - s)  ->  dx = dout * (s + x s (1 - s))   (product rule)
    return (dout * (s + x * s * (1.0 - s)),)


def dropout_forward(x, p, rng, training=True):
    """Inverted dropout: zero each element with probability p, scale the rest by 1/(1-p).

    rng: an np.random.Generator (each call draws a fresh mask) or a seed (the same mask every call).
    """
    check_float("dropout", x=x)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return x, None
    if isinstance(rng, bool) or not isinstance(rng, (np.random.Generator, numbers.Integral)):
        raise TypeError(f"dropout: rng must be a seed (an int) or an np.random.Generator, got {type(rng).__name__}")
    scale = (np.random.default_rng(rng).random(x.shape) >= p).astype(x.dtype) / (1.0 - p)
    return x * scale, scale


def dropout_backward(dout, cache):
    scale = cache
    # out = x * scale (scale is 0 or 1/(1-p))  ->  dx = dout * scale; identity when not training
    return (dout if scale is None else dout * scale,)
