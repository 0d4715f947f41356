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
        check_float_dtype(op, name, a)
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


FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def check_float_dtype(op, name, a):
    """A floating-point array must be float32 or float64, the dtypes the library computes in: float16 overflows
    at 65,504 (exp(12) is inf) and float128 is not what any op was checked in."""
    if a.dtype.kind == "f" and a.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{op}: {name} is {a.dtype}; tinytransformer computes in float32 or float64 "
                        f"(convert it with .astype(np.float32))")


# the axes an op's first input needs, and what they are
MIN_AXES = {"linear": (1, "(..., d_in)"), "softmax": (1, "(..., T)"), "log_softmax": (1, "(..., V)"),
            "split_heads": (2, "(..., T, d_model)"),
            "merge_heads": (3, "(..., n_heads, T, d_k)"), "positional_encoding": (2, "(..., T, d_model)"),
            "rope": (2, "(..., T, d_k)"), "attention": (2, "(..., T_q, d_k)"), "cross_entropy": (1, "(..., V)")}


def check_call(forward, arrays, options):
    """What every call through tt.functional is checked for before its op runs, in one place: each input an
    array (a Tensor's data), a number or None, never a list; floating-point arrays float32 or float64; the first
    input with the axes the op needs; an axis option naming axes the input has (softmax's not of size 0); a
    dropout seed an integer >= 0 or a Generator. forward: the op's forward function (its name and arguments')."""
    op = forward.__name__.removesuffix("_forward")
    for i, a in enumerate(arrays):
        if isinstance(a, np.ndarray):
            if a.dtype.kind == "f" and a.dtype not in FLOAT_DTYPES:
                check_float_dtype(op, argument_name(forward, i), a)
        elif a is not None and (not isinstance(a, numbers.Number) or isinstance(a, complex)) and \
                argument_name(forward, i) not in ("ids", "targets", "keep", "positions"):   # checked by the op itself
            raise TypeError(f"{op}: {argument_name(forward, i)} must be a NumPy array or a Tensor, got "
                            f"{type(a).__name__} (convert it with np.asarray)")
    x = arrays[0] if arrays and isinstance(arrays[0], np.ndarray) else None
    if x is None:
        return
    if op in MIN_AXES and x.ndim < MIN_AXES[op][0]:
        n, shape = MIN_AXES[op]
        raise ValueError(f"{op}: {argument_name(forward, 0)} must be {shape}, at least {n} "
                         f"{'axis' if n == 1 else 'axes'}, got shape {x.shape}")
    axis = options.get("axis")
    for one in (axis if isinstance(axis, tuple) else () if axis is None else (axis,)):
        if isinstance(one, bool) or not isinstance(one, numbers.Integral) or not -x.ndim <= one < x.ndim:
            raise ValueError(f"{op}: axis must be an integer in [{-x.ndim}, {x.ndim}) ({argument_name(forward, 0)} "
                             f"is {x.shape}), got {axis!r}")
        if op in ("softmax", "log_softmax") and x.shape[one] == 0:
            raise ValueError(f"{op}: axis {one} of {argument_name(forward, 0)} {x.shape} is empty; a softmax over "
                             "no values has no probabilities")
    if op == "dropout":
        check_seed("dropout", options.get("rng"))


def check_seed(who, rng):
    """rng must be a seed (an integer >= 0) or an np.random.Generator -> rng (NumPy's own errors say neither)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, bool) or not isinstance(rng, numbers.Integral):
        raise TypeError(f"{who}: rng must be a seed (an int) or an np.random.Generator, got {type(rng).__name__}")
    if rng < 0:
        raise ValueError(f"{who}: rng must be a seed (an int) or an np.random.Generator, got {rng} (a seed is >= 0)")
    return rng


def argument_name(forward, i):
    """The name of forward's i-th argument ("x", "W", ...), for a message."""
    import inspect
    names = list(inspect.signature(forward).parameters)
    return names[i] if i < len(names) else f"input {i + 1}"
