"""softmax and log_softmax along any axis, max-subtracted so large logits stay finite.

softmax(x)_i = e^(x_i - m) / sum_j e^(x_j - m), with m = max_j x_j: subtracting
m changes nothing mathematically and keeps every exponent <= 0 (no overflow).
"""
import numpy as np

from .checks import check_float


def _row_max(x, axis):
    """Max along axis; a row that is all -inf (fully masked) uses 0 instead of -inf,
    so that x - m stays -inf there rather than becoming -inf - (-inf) = nan."""
    m = x.max(axis=axis, keepdims=True)
    return np.where(np.isneginf(m), 0, m)


def softmax_forward(x, axis=-1):
    """Return (the softmax of x along axis, cache): each row sums to 1; a row of -inf gives zeros."""
    check_float("softmax", x=x)
    out = softmax_into(x, axis, np.empty_like(x))
    return out, (out, axis)


def softmax_into(x, axis, out):
    """Write the softmax of x along axis into out and return it: out may be x itself, an array the caller
    made and will not read again (attention's scores), which then makes no array of x's size."""
    np.subtract(x, _row_max(x, axis), out=out)                 # = x - max: every exponent <= 0
    np.exp(out, out=out)                                       # = e^(x - max), in place
    total = out.sum(axis=axis, keepdims=True)                  # x's shape with size 1 along axis
    # A fully masked row (all -inf) has e = 0 and total = 0: dividing by 1
    # instead gives probabilities of zero, never 0/0 = nan.
    out /= np.where(total == 0, 1, total)                      # = e / total, in place
    return out


def softmax_backward(dout, cache):
    out, axis = cache
    # y = softmax(x): dy_i/dx_j = y_i (delta_ij - y_j), so the Jacobian-vector
    # product is dx = y * (dout - sum_j dout_j y_j)
    weighted = (dout * out).sum(axis=axis, keepdims=True)     # x's shape with 1 along axis: sum_j dout_j y_j
    dx = dout - weighted                                       # x's shape
    dx *= out                                                  # = out * (dout - weighted), in place
    return (dx,)


def log_softmax_forward(x, axis=-1):
    """Return (the log-softmax of x along axis, cache): x minus the log of the sum of its exponentials."""
    check_float("log_softmax", x=x)
    shifted = x - _row_max(x, axis)
    total = np.exp(shifted).sum(axis=axis, keepdims=True)      # x's shape with size 1 along axis
    # A fully masked row (all -inf) has total = 0; log(1) instead keeps it -inf, the log of
    # softmax's zeros, never -inf - (-inf) = nan.
    out = shifted - np.log(np.where(total == 0, 1, total))
    return out, (out, axis)


def log_softmax_backward(dout, cache):
    out, axis = cache
    # y_i = x_i - log sum_j e^(x_j): dy_i/dx_j = delta_ij - softmax(x)_j,
    # so dx = dout - softmax(x) * sum_i dout_i, with softmax(x) = e^y.
    # Where y = -inf the input was a masked -inf, a constant: by convention nothing flows back there
    # (PyTorch passes dout on; the mask's own backward zeroes it either way).
    dx = dout - np.exp(out) * dout.sum(axis=axis, keepdims=True)   # x's shape (the sum: 1 along axis)
    return (np.where(np.isneginf(out), 0, dx),)                     # x's shape
