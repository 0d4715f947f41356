"""Check hand-derived backward passes against finite differences.

The check projects everything onto a random upstream gradient `dout`: it
compares the analytic gradient of L = sum(f(x) * dout) with central
differences (L(x + eps) - L(x - eps)) / (2 eps), element by element of every
input. A random dout (never all ones) catches bugs that cancel out in a plain
sum, such as a layer norm or softmax backward missing a term.

How close is right? In float64 the central difference is good to about 1e-9
of the gradient's size on small inputs (rounding, eps = 1e-6), so a right
backward pass has a relative error of about 1e-9 and anything above 1e-6 is a
mistake, not rounding. The relative error is taken over the whole gradient,
max |analytic - numeric| / (max |analytic| + max |numeric|): element by element
(elementwise_relative_error, CS231n's) a right gradient with an element near zero can show 1e-1.
A gradient that is itself near zero everywhere (layer norm over 2 features)
is below what central differences can measure: it passes when its error is
within their rounding (resolution).
"""
from typing import NamedTuple

import numpy as np

from .tensor import Tape, Tensor

PASS_ERROR = 1e-6       # relative_error at most this: only the rounding of finite differences is left


class GradcheckError(AssertionError):
    """A backward pass disagrees with finite differences."""


class InputCheck(NamedTuple):
    """What gradcheck found for one input: its name, the errors of its analytic gradient, and the verdict."""
    name: str
    elementwise_error: float   # elementwise_relative_error: the largest elementwise relative error
    max_abs_error: float
    passed: bool
    relative_error: float      # relative_error: the error relative to the gradient's size


def elementwise_relative_error(a, b):
    """Largest elementwise |a - b| / (|a| + |b|): about 1e-10 or less when two float64 results agree."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b)), initial=0.0))


def relative_error(analytic, numeric):
    """max |analytic - numeric| / (max |analytic| + max |numeric|), 0 when both are zero.

    Relative to the whole gradient's size, so an element that is near zero cannot
    fail a right gradient on rounding alone; one wrong element still shows.
    """
    a, n = np.asarray(analytic, dtype=np.float64), np.asarray(numeric, dtype=np.float64)
    scale = np.max(np.abs(a), initial=0.0) + np.max(np.abs(n), initial=0.0)
    return 0.0 if scale == 0 else float(np.max(np.abs(a - n)) / scale)


def resolution(out, dout, eps=1e-6):
    """The smallest gradient error central differences can tell from rounding: 100 times the rounding
    of L = sum(out * dout), eps_mach * sum |out * dout|, over the step eps. (About 1e-7 on the ops'
    small cases, where a right backward pass is off by about 1e-9: it decides only gradients that are
    near zero everywhere.)"""
    return 100 * np.finfo(np.float64).eps * float(np.sum(np.abs(masked_as_constant(out) * dout))) / eps


def agrees(analytic, numeric, smallest):
    """The pass mark: relative_error <= PASS_ERROR, or every element within `smallest` (resolution)."""
    return (relative_error(analytic, numeric) <= PASS_ERROR
            or float(np.max(np.abs(np.asarray(analytic) - numeric), initial=0.0)) <= smallest)


def masked_as_constant(out):
    """out with -inf (a masked score) as 0: it does not depend on the input, so it adds nothing to L."""
    return np.where(np.isneginf(out), 0.0, out)


def numerical_gradient(f, x, dout, eps=1e-6):
    """d sum(f(x) * dout) / dx by central differences.

    f takes the array x and returns an array; x is changed in place, one
    element at a time, and restored afterwards.
    """
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        original = x[index]
        x[index] = original + eps
        plus = np.sum(f(x) * dout)
        x[index] = original - eps
        minus = np.sum(f(x) * dout)
        x[index] = original
        grad[index] = (plus - minus) / (2 * eps)
    return grad


def gradcheck(fn, *inputs, names=None, eps=1e-6, atol=None, rtol=None, rng=0, raise_on_failure=True):
    """Compare the tape's gradients of fn(*inputs) with finite differences, for every float input.

    fn takes Tensors (and constants) and returns one Tensor of floats that depends on the inputs
    through the tape; anything else (an int, a detached Tensor) cannot be checked and is refused.
    inputs are ndarrays: floating ones (float64, unless atol or rtol is given: a failure in
    float32 says so) get a gradient,
    the others (ids, masks) are passed as constants.
    rng (a seed or Generator) draws the random upstream gradient.
    Returns one InputCheck per float input; raises GradcheckError if any fails
    (unless raise_on_failure=False). Pass: relative_error <= PASS_ERROR (1e-6), or an error
    within the rounding of the central differences (agrees), meant for float64; with atol or
    rtol given, pass is allclose(analytic, numeric, atol, rtol) instead (PyTorch's rule, by
    default atol=1e-5, rtol=1e-3), e.g. for float32.
    """
    names = names or [f"input {i}" for i in range(len(inputs))]
    rng = np.random.default_rng(rng)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, np.ndarray) and x.dtype.kind == "f"]
    if not wrt:
        raise ValueError("gradcheck: no input is a floating-point ndarray, so there is no gradient to check")
    tensors = [Tensor(x.copy(), requires_grad=True) if i in wrt else x for i, x in enumerate(inputs)]

    with Tape() as tape:
        out = fn(*tensors)
    if not isinstance(out, Tensor):                  # the upstream gradient is drawn in out's shape
        raise TypeError(f"gradcheck: fn must return one Tensor, got {type(out).__name__}; for a function "
                        "that returns more, check one output, e.g. lambda q, k, v: F.attention(q, k, v)[0]")
    if out.dtype.kind != "f":
        raise TypeError(f"gradcheck: fn must return a Tensor of floating-point numbers, got dtype {out.dtype}")
    if not out.requires_grad:
        raise ValueError("gradcheck: fn's output does not depend on any input through the tape (computed on "
                         ".data, or on a Tensor made afresh?), so there is no backward pass to check")
    dout = rng.standard_normal(out.shape).astype(out.dtype)
    tape.backward(out, dout)

    results = []
    for i in wrt:
        def f(x, i=i):
            args = [Tensor(x if j == i else a) if j in wrt else a for j, a in enumerate(inputs)]
            return masked_as_constant(fn(*args).data)     # Tensors, as in the taped call, outside any tape
        numeric = numerical_gradient(f, inputs[i].copy(), dout, eps)
        analytic = tensors[i].grad if tensors[i].grad is not None else np.zeros_like(numeric)
        error = relative_error(analytic, numeric)
        if atol is None and rtol is None:
            passed = agrees(analytic, numeric, resolution(out.data, dout, eps))
        else:
            passed = bool(np.allclose(analytic, numeric, atol=1e-5 if atol is None else atol,
                                      rtol=1e-3 if rtol is None else rtol))
        results.append(InputCheck(names[i], elementwise_relative_error(analytic, numeric),
                                  float(np.max(np.abs(analytic - numeric), initial=0.0)), passed, error))
    failed = [r for r in results if not r.passed]
    if failed and raise_on_failure:
        lines = [f"  {r.name}: relative error {r.relative_error:.2e}, max abs error {r.max_abs_error:.2e}"
                 for r in failed]
        loose = [f"{names[i]} is {inputs[i].dtype}" for i in wrt if inputs[i].dtype != np.float64]
        if loose and atol is None and rtol is None:
            lines.append(f"  ({', '.join(loose)}: central differences in it are too coarse for the pass mark, "
                         "a right backward pass fails too; check in float64, x.astype(np.float64), or give atol "
                         "and rtol for a looser check)")
        raise GradcheckError("gradcheck: the backward pass disagrees with finite differences:\n" + "\n".join(lines))
    return results
