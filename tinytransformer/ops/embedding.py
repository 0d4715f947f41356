"""Token embeddings (a table lookup) and the sinusoidal positional encoding."""
import functools

import numpy as np

from .checks import check_float, check_ids, check_integer


def embedding_forward(ids, table):
    """ids (...) integers in [0, V), table (V, d_model)  ->  rows (..., d_model)."""
    check_float("embedding", table=table)
    if table.ndim != 2:
        raise ValueError(f"embedding: table must be 2-D (V, d_model), got shape {table.shape}")
    check_ids("embedding", ids, table.shape[0])
    return table[ids], (ids, table.shape)


def embedding_backward(dout, cache):
    ids, table_shape = cache
    # forward: out[n] = table[ids[n]] = one_hot(ids)[n] @ table  ->  dtable = one_hot(ids).T @ dout
    # (a token used twice gets the sum of both gradients)
    flat_ids = ids.reshape(-1)                                                    # (N,)
    one_hot = np.zeros((flat_ids.size, table_shape[0]), dout.dtype)              # (N, V)
    one_hot[np.arange(flat_ids.size), flat_ids] = 1                               # a 1 at each row's id
    dtable = one_hot.T @ dout.reshape(flat_ids.size, -1)                          # (V, d_model)
    return None, dtable


@functools.lru_cache(maxsize=32)
def _positions(T, d_model):
    t = np.arange(T)[:, None]                                   # (T, 1)
    two_i = np.arange(0, d_model, 2)                            # (ceil(d_model/2),)
    angle = t / 10000.0 ** (two_i / d_model)                    # (T, ceil(d_model/2))
    P = np.empty((T, d_model))
    P[:, 0::2] = np.sin(angle)
    P[:, 1::2] = np.cos(angle[:, : d_model // 2])
    P.flags.writeable = False                                   # cached: nobody may change it
    return P


def sinusoidal_positions(T, d_model):
    """(T, d_model) float64: P[t, 2i] = sin(t / 10000^(2i/d_model)), P[t, 2i+1] = cos(same)."""
    check_integer("sinusoidal_positions", "T", T, 0)
    check_integer("sinusoidal_positions", "d_model", d_model, 1)
    return _positions(int(T), int(d_model)).copy()


def positional_encoding_forward(x, offset=0):
    """x (..., T, d_model)  ->  x + P[offset : offset + T] (added, not concatenated, as in the paper).

    offset is the position of x's first row: incremental decoding feeds one position at a time.
    """
    check_float("positional_encoding", x=x)
    if x.ndim < 2:
        raise ValueError(f"positional_encoding: x must be (..., T, d_model), got shape {x.shape}")
    check_integer("positional_encoding", "offset", offset, 0)
    T = x.shape[-2]
    P = _positions(offset + T, x.shape[-1])[offset:]                  # (T, d_model)
    return x + P.astype(x.dtype, copy=False), None


def positional_encoding_backward(dout, cache):
    # out = x + P with P a constant  ->  dx = dout
    return (dout,)
