"""Input checks shared by the ops: a clear error before any arithmetic.

Every message names the op, what it expected and what it got, e.g.
`linear: x has 4 features but W expects 5 (W is (5, 3))`.
"""
import numbers

import numpy as np


def check_float(op, **arrays):
    """Each array must hold floating-point numbers, all of one dtype.

    Python scalars are allowed: they take the dtype of the arrays (no upcast).
    """
    dtype = None
    for name, a in arrays.items():
        if a is None or (isinstance(a, numbers.Real) and not isinstance(a, np.ndarray)):
            continue
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{op}: {name} must be a NumPy array or a Tensor, got {type(a).__name__}")
        if a.dtype.kind != "f":
            raise TypeError(f"{op}: {name} must hold floating-point numbers, got dtype {a.dtype}")
        if dtype is not None and a.dtype != dtype:
            raise TypeError(f"{op}: inputs must share one dtype, got {dtype} and {a.dtype} ({name}); "
                            "convert one with .astype() first")
        dtype = a.dtype


def check_ids(op, ids, n_rows=None, what="token id"):
    """ids must be an integer array with every value in [0, n_rows) (any value if n_rows is None).

    An id outside the vocabulary is a ValueError, wherever it is found (an op, a model, a task).
    """
    if not isinstance(ids, np.ndarray) or ids.dtype.kind not in "iu":
        kind = ids.dtype if isinstance(ids, np.ndarray) else type(ids).__name__
        raise TypeError(f"{op}: {what}s must be an integer ndarray, got {kind}")
    if n_rows is not None and ids.size and (ids.min() < 0 or ids.max() >= n_rows):
        bad = ids[(ids < 0) | (ids >= n_rows)].flat[0]
        raise ValueError(f"{op}: {what} {bad} is outside [0, {n_rows})")


def check_mask(op, keep, target_shape, target_name="scores"):
    """keep must be boolean and broadcast to target_shape without changing it."""
    if not isinstance(keep, np.ndarray) or keep.dtype != np.bool_:
        kind = keep.dtype if isinstance(keep, np.ndarray) else type(keep).__name__
        raise TypeError(f"{op}: the mask must be a boolean ndarray (True = may attend), got {kind}")
    try:
        shape = np.broadcast_shapes(keep.shape, target_shape)
    except ValueError:
        shape = None
    if shape != tuple(target_shape):
        raise ValueError(f"{op}: mask of shape {keep.shape} does not broadcast to "
                         f"{target_name} of shape {tuple(target_shape)}")


def check_number(op, name, value, low=None, high=None, low_open=False, high_open=False):
    """value must be a real number (not a bool, not NaN or infinite) in [low, high]; low_open, high_open: the
    bound itself excluded."""
    bounds = ("(" if low_open else "[") + f"{low}, {high}" + (")" if high_open else "]")
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value) and \
        (low is None or (value > low if low_open else value >= low)) and \
        (high is None or (value < high if high_open else value <= high))
    if not ok:
        expected = ("a finite number" + (f" in {bounds}" if high is not None else "" if low is None else
                                         f" {'>' if low_open else '>='} {low}"))
        raise ValueError(f"{op}: {name} must be {expected}, got {value!r}")


def check_integer(op, name, value, low):
    """value must be an integer (not a bool, not 2.5) >= low."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{op}: {name} must be an integer >= {low}, got {value!r}")


def check_finite(op, name, value):
    """value must be a real number, not NaN or infinite (a NaN scale makes every output NaN)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{op}: {name} must be a finite number, got {value!r}")
