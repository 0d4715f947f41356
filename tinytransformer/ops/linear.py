"""The linear layer y = x @ W + b, with row vectors as in the course."""
from .checks import check_float


def linear_forward(x, W, b=None):
    """x (..., d_in), W (d_in, d_out), b (d_out,) or None  ->  y (..., d_out)."""
    check_float("linear", x=x, W=W, b=b)
    if W.ndim != 2:
        raise ValueError(f"linear: W must be 2-D (d_in, d_out), got shape {W.shape}")
    if x.ndim < 1 or x.shape[-1] != W.shape[0]:
        raise ValueError(f"linear: x has {x.shape[-1] if x.ndim else 0} features (shape {x.shape}) "
                         f"but W expects {W.shape[0]} (W is {W.shape})")
    if b is not None and b.shape != (W.shape[1],):
        raise ValueError(f"linear: b must have shape ({W.shape[1]},) to match W {W.shape}, got {b.shape}")
    # One matrix product over all leading axes: (B*T, d_in) @ (d_in, d_out).
    x2 = x.reshape(-1, x.shape[-1])                       # (N, d_in)
    y = x2 @ W                                            # (N, d_out)
    if b is not None:
        y += b
    return y.reshape(*x.shape[:-1], W.shape[1]), (x2, W, x.shape, b is not None)


def linear_backward(dout, cache):
    x2, W, x_shape, has_bias = cache
    dout2 = dout.reshape(-1, W.shape[1])                  # (N, d_out)
    # forward: y = x @ W + b, and dout = dL/dy  ->  dx = dout @ W.T,  dW = x.T @ dout,  db = sum of dout over rows
    dx = (dout2 @ W.T).reshape(x_shape)                   # (..., d_in)
    dW = x2.T @ dout2                                     # (d_in, d_out)
    db = dout2.sum(axis=0) if has_bias else None          # (d_out,)
    return dx, dW, db
