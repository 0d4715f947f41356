"""Layer normalisation over the last axis, as torch.nn.LayerNorm.

    mean = mean(x),  var = mean((x - mean)^2)     (biased variance)
    xhat = (x - mean) / sqrt(var + eps)           (eps inside the root)
    y    = gamma * xhat + beta
"""
import numpy as np

from . import fast_numpy as fast
from .checks import check_float


def layer_norm_forward(x, gamma, beta, eps=1e-5):
    """x (..., D), gamma (D,), beta (D,)  ->  y (..., D)."""
    check_float("layer_norm", x=x, gamma=gamma, beta=beta)
    D = x.shape[-1]
    for name, p in (("gamma", gamma), ("beta", beta)):
        if p.shape != (D,):
            raise ValueError(f"layer_norm: {name} must have shape ({D},) to match x {x.shape}, got {p.shape}")
    if eps <= 0:
        raise ValueError(f"layer_norm: eps must be positive, got {eps}")
    mean = fast.sum_last(x) / D                            # (..., 1): x.mean(axis=-1, keepdims=True)
    centered = x - mean                                    # (..., D)
    var = fast.sum_last(centered * centered) / D           # (..., 1): mean of centered**2
    rstd = 1.0 / np.sqrt(var + eps)                        # (..., 1) reciprocal standard deviation
    xhat = centered * rstd                                 # (..., D)
    # Cache xhat and rstd (not x): backward needs exactly these two.
    return xhat * gamma + beta, (xhat, rstd, gamma)


def layer_norm_backward(dout, cache):
    xhat, rstd, gamma = cache
    D = xhat.shape[-1]
    # forward: y = gamma * xhat + beta  ->  dgamma = sum(dy * xhat), dbeta = sum(dy)
    dgamma = fast.sum_leading(dout * xhat)                 # (D,): summed over every axis but the last
    dbeta = fast.sum_leading(dout)                         # (D,)
    # forward: xhat = (x - mean) * rstd; mean and rstd depend on every x_j too, giving
    #   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
    dxhat = dout * gamma                                   # (..., D)
    # (fast.sum_last(a) / D is a.mean(axis=-1, keepdims=True))
    dx = rstd * (dxhat - fast.sum_last(dxhat) / D - xhat * (fast.sum_last(dxhat * xhat) / D))
    return dx, dgamma, dbeta
