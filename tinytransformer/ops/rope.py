"""Rotary position embedding (RoPE, Su et al. 2021, "RoFormer"): positions as rotations of q and k.

Each pair (x[2i], x[2i+1]) of a query or key row at position p turns by the angle
p * theta^(-2i/d_k), i = 0 .. d_k/2 - 1:

    out[2i]   = x[2i] cos(angle) - x[2i+1] sin(angle)
    out[2i+1] = x[2i] sin(angle) + x[2i+1] cos(angle)

A rotation keeps lengths, and the dot product of two rows rotated by the angles
of positions m and n depends on m - n only: attention sees relative positions.
(RoFormer pairs neighbours, as here; some libraries pair dimension i with i + d_k/2.)
"""
import numpy as np

from .checks import check_finite, check_float, check_ids


def rotate(x, cos, sin):
    """Each pair (x[2i], x[2i+1]) of x (..., T, d_k) turned by the angle whose cos and sin (..., T, d_k/2) are given."""
    even, odd = x[..., 0::2], x[..., 1::2]                          # (..., T, d_k/2) each
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out                                                      # (..., T, d_k)


def rope_forward(x, positions, theta=10000.0):
    """x (..., T, d_k), positions (..., T) or (T,) integers  ->  x rotated pair by pair, (..., T, d_k)."""
    check_float("rope", x=x)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError(f"rope: x must be (..., T, d_k) with d_k even, got shape {x.shape}")
    check_ids("rope", positions, what="position")
    check_finite("rope", "theta", theta)
    if theta <= 0:
        raise ValueError(f"rope: theta must be positive, got {theta!r}")
    try:
        fits = np.broadcast_shapes(positions.shape, x.shape[:-1]) == x.shape[:-1]
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"rope: positions of shape {positions.shape} do not broadcast to x's "
                         f"(..., T) = {x.shape[:-1]}")
    d_k = x.shape[-1]
    frequencies = theta ** (-np.arange(0, d_k, 2) / d_k)             # (d_k/2,) theta^(-2i/d_k)
    angle = positions[..., None] * frequencies                      # (..., T, d_k/2)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    return rotate(x, cos, sin), (cos, sin)


def rope_backward(dout, cache):
    cos, sin = cache
    # forward: out = R(angle) x, a rotation of each pair  ->  dx = R(angle).T dout = R(-angle) dout,
    # the inverse rotation (a rotation's transpose is its inverse)
    return rotate(dout, cos, -sin), None

