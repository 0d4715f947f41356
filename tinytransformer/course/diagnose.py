"""What kind of mistake a wrong gradient shows: the grader's diagnoses.

    diagnose("W", yours, right, W.shape)  ->  Diagnosis(kind, text, detail) or None

`right` is the gradient by finite differences, `yours` what a backward pass
returned for an input of shape `shape`. The patterns, tried in this order:

    named           a classic mistake of softmax, layer_norm, rms_norm, exp, gelu, silu, rope or
                    flash_attention (recognise)
    wrong shape     transposed; missing sum over the broadcast axes; else the two shapes
    not finite      nan or inf: where
    zero            yours is 0 everywhere, or 0 at the only elements that are wrong
    wrong sign      yours = -right
    factor          yours = c * right for one constant c
    transposed      yours = right with its last two axes swapped (a square matrix)
    close           off by a little at many elements: a formula near the right one
    nonzero         wrong only where the right gradient is 0
    some elements   only some elements wrong: how many, and where

"zero" at some elements, "nonzero" and "some elements" need every other
element right to rounding (ROUNDING); "close" is the case where it is not.

"=" means within the grader's tolerance (PASS_ERROR, relative to the
gradient's size). A gradient wrong everywhere in no such way gets None: the
grader then gives only the relative error.

explain_raised says NumPy's complaint about a matrix product whose shapes do
not fit as the likely mistake: a missing transpose.
"""
import math
import re
from typing import NamedTuple

import numpy as np

from ..gradcheck import PASS_ERROR, relative_error
from ..ops import broadcast_axes, unbroadcast
from ..ops.rope import rotate


class Diagnosis(NamedTuple):
    """What a wrong gradient's mistake looks like: its kind, the sentence the grader prints, and any detail."""
    kind: str           # "wrong shape", "transposed", "missing sum", "not finite", "zero", "wrong sign",
                        # "factor", "close", "nonzero", "some elements", or a classic mistake by name
    text: str           # the sentence the grader prints
    detail: object = None   # the factor, the axes to sum, or the boolean array of wrong elements


ROUNDING = 1e-8    # an element off by less than this (relative to the gradient's size) is right: rounding
CLOSE = 1e-2       # a gradient off by less than this everywhere is close to right


def within_pass_error(a, b):
    """True when a, changed as a diagnosis proposes, would pass: relative error at most PASS_ERROR."""
    return relative_error(a, b) <= PASS_ERROR


def diagnose(name, yours, right, shape):
    """A Diagnosis of yours, the gradient of input name, against the right one: a wrong shape, or how values differ."""
    yours = np.asarray(yours, dtype=np.float64)
    if yours.shape != tuple(shape):
        return _wrong_shape(name, yours, right, tuple(shape))
    return _wrong_values(name, yours, right)


def _wrong_shape(name, yours, right, shape):
    grad = f"your d{name} is {yours.shape}, {name} is {shape}"
    if yours.ndim >= 2 and yours.swapaxes(-1, -2).shape == shape:
        ok = within_pass_error(yours.swapaxes(-1, -2), right)
        return Diagnosis("transposed", f"transposed: {grad}" + ("" if ok else "; and wrong after transposing too"))
    if yours.ndim == len(shape) and yours.T.shape == shape:
        ok = within_pass_error(yours.T, right)
        return Diagnosis("transposed", f"axes reversed: {grad}" + ("" if ok else "; and wrong after reversing too"))
    axes = summed_axes(yours.shape, shape)
    if axes is not None:
        ok = within_pass_error(unbroadcast(yours, shape), right)
        return Diagnosis("missing sum", f"missing sum over broadcast axes {axes}: {grad}"
                         + ("; summed over them it is right" if ok else "; and wrong after the sum too"), axes)
    return Diagnosis("wrong shape", f"wrong shape: {grad}")


def summed_axes(big, shape):
    """The axes of `big` that broadcasting `shape` to `big` stretched or added, or None if it does not broadcast."""
    try:
        if np.broadcast_shapes(big, shape) != big:
            return None
    except ValueError:
        return None
    return broadcast_axes(big, shape)


def _wrong_values(name, yours, right):
    if not np.isfinite(yours).all():
        bad = ~np.isfinite(yours)
        return Diagnosis("not finite", f"nan or inf at {places(name, bad)}", bad)
    scale = np.abs(yours).max(initial=0.0) + np.abs(right).max(initial=0.0)
    off = np.abs(yours - right) / scale                                 # each element's error, relative
    wrong = off > PASS_ERROR
    if not yours.any():
        return Diagnosis("zero", f"zero everywhere: d{name} should not be", wrong)
    if within_pass_error(yours, -right):
        return Diagnosis("wrong sign", f"wrong sign: your d{name} is minus the right one", -1.0)
    c = float(np.sum(yours * right) / np.sum(right * right)) if right.any() else 0.0
    if right.any() and within_pass_error(yours, c * right):
        return Diagnosis("factor", f"off by a constant factor: your d{name} is {factor_name(c)} times the right one", c)
    if yours.ndim >= 2 and yours.shape[-1] == yours.shape[-2] and within_pass_error(yours, right.swapaxes(-1, -2)):
        return Diagnosis("transposed", f"transposed: your d{name} is the right one with its last two axes swapped")
    if (off[~wrong] > ROUNDING).any():            # the rest is not right either, only close: no clean set
        if off.max() < CLOSE:
            return Diagnosis("close", f"close, but off by up to {off.max():.1e} of the gradient's size at "
                                      f"{wrong.sum()} of {wrong.size} elements: a formula near the right one, "
                                      "or float32 somewhere", wrong)
        return None
    if (yours[wrong] == 0).all():
        return Diagnosis("zero", f"zero where it should not be: {places(name, wrong)}", wrong)
    if (np.abs(right[wrong]) <= ROUNDING * scale).all():
        return Diagnosis("nonzero", f"nonzero where it should be zero: {places(name, wrong)}", wrong)
    if not wrong.all():
        return Diagnosis("some elements", f"only some elements wrong: {places(name, wrong)}", wrong)
    return None


MATMUL = re.compile(r"matmul: Input operand \d has a mismatch in its core dimension.*\(size (\d+) is different from "
                    r"(\d+)\)")
DOT = re.compile(r"shapes (\([\d, ]*\)) and (\([\d, ]*\)) not aligned")


def explain_raised(problem, shapes):
    """NumPy's complaint about a matrix product whose shapes do not fit, said as the likely mistake (a missing
    transpose) with the shapes the gradients must have ({input: shape}); a file that does not import as Python says
    it; any other problem as it is."""
    if problem.startswith("raised does not import: "):            # a file that raised while Python ran it
        return problem.removeprefix("raised ")
    found = MATMUL.search(problem) or DOT.search(problem)
    if not found:
        return problem
    sizes = (f"its inner sizes {found[1]} and {found[2]} differ" if found.re is MATMUL
             else f"shapes {found[1]} and {found[2]} do not align")
    must = ", ".join(f"d{name} must be {shape}" for name, shape in shapes.items())
    return (f"raised ValueError in a matrix product: a shape does not fit ({sizes}): did you forget a "
            f"transpose? ({must})")


def factor_name(c):
    """'2', '0.5 (1/2)', '2.23607 (sqrt 5)', '1.0005': a factor, named when it is a simple one."""
    for value, name in _simple_factors():
        if math.isclose(c, value, rel_tol=1e-6):
            return f"{c:.6g} ({name})" if name != f"{c:.6g}" else name
    return f"{c:.6g}"


def _simple_factors():
    for n in range(2, 65):
        yield n, f"{n}"
        yield 1 / n, f"1/{n}"
        yield math.sqrt(n), f"sqrt {n}"
        yield 1 / math.sqrt(n), f"1/sqrt {n}"
    for n in range(1, 65):
        yield -n, f"-{n}"
        yield -1 / n, f"-1/{n}"


def places(name, wrong, shown=4):
    """'10 of 35 elements: table[0, :], table[3, :]': how many are wrong, and where (whole axes as ':')."""
    whole = tuple(axis for axis in range(wrong.ndim)
                  if wrong.shape[axis] > 1 and (wrong.any(axis=axis) == wrong.all(axis=axis)).all())
    groups = np.argwhere(wrong.any(axis=whole, keepdims=True)).tolist()
    where = [f"{name}[{', '.join(':' if axis in whole else str(i) for axis, i in enumerate(index))}]"
             for index in groups[:shown]]
    more = f", ... ({len(groups)} places)" if len(groups) > shown else ""
    return f"{wrong.sum()} of {wrong.size} elements: {', '.join(where)}{more}"


# ---------------------------------------------------------------------------
# The classic mistakes of eight ops, recognised by name from the op's cache.

def recognise(op, trial, yours, name):
    """A Diagnosis naming a classic mistake of op (softmax, layer_norm, rms_norm, exp, gelu, silu, rope) in
    yours, the gradient of input `name` on trial (op_grading.Trial); None when it is none of them."""
    recognisers = {("softmax", "x"): _softmax_mistakes, ("layer_norm", "x"): _layer_norm_mistakes,
                   ("rms_norm", "x"): _rms_norm_mistakes, ("exp", "x"): _exp_mistakes,
                   ("gelu", "x"): _gelu_mistakes, ("silu", "x"): _silu_mistakes, ("rope", "x"): _rope_mistakes}
    yours = np.asarray(yours, dtype=np.float64)
    if op == "flash_attention":
        return _flash_attention_mistakes(yours, list(trial.inputs).index(name), trial.dout, trial.cache)
    found = recognisers.get((op, name))
    return found(yours, trial.right[name], trial.dout, trial.cache) if found else None


def _softmax_mistakes(yours, right, dout, cache):
    out, axis = cache
    if within_pass_error(yours, out * dout):
        return Diagnosis("softmax without the subtraction term",
                         "softmax without the subtraction term: your dx is y * dout, the Jacobian's diagonal "
                         "only; every y_i also depends on every x_j through the normalising sum")
    return None


def _layer_norm_mistakes(yours, right, dout, cache):
    xhat, rstd, gamma = cache
    axis = _wrong_axis(yours, dout * gamma, xhat, rstd, mean_term=True)
    if axis:
        return axis
    # Each mistake adds to dx, row by row, a constant (the mean's dependence ignored), a multiple of
    # xhat (the variance's), or both: fit err = a + b * xhat per row (xhat sums to 0 along a row).
    err = yours - right
    a = err.mean(axis=-1, keepdims=True)
    b = (err * xhat).sum(axis=-1, keepdims=True) / (xhat * xhat).sum(axis=-1, keepdims=True)
    scale = np.abs(yours).max() + np.abs(right).max()
    if np.abs(err - a - b * xhat).max() > 1e-6 * scale:
        return None
    ignored = " and ".join(what for what, part in (("the mean", a), ("the variance", b * xhat))
                           if np.abs(part).max() > 1e-6 * scale)
    if not ignored:
        return None
    return Diagnosis(f"layer norm ignoring {ignored}",
                     f"layer norm ignoring how {ignored} depend{'s' * (' and ' not in ignored)} on x: x reaches "
                     "y through the mean and the variance of its row as well as directly")


def _wrong_axis(yours, dxhat, xhat, rstd, mean_term):
    """A Diagnosis when yours is the norm's backward with its row means taken over another axis (or all of
    them) than the last, the one the forward normalises; None otherwise."""
    for axis in [*range(xhat.ndim - 1), None]:
        def mean(z):
            return z.mean(axis=axis, keepdims=True)
        term = dxhat - (mean(dxhat) if mean_term else 0.0) - xhat * mean(dxhat * xhat)
        if within_pass_error(yours, rstd * term):
            where = "over every axis" if axis is None else f"over axis {axis}"
            return Diagnosis("norm's means over the wrong axis",
                             f"{'layer' if mean_term else 'rms'} norm with the means of its backward taken {where}: "
                             "the forward normalises each row over its last axis, the features, so every mean that "
                             "comes from it is a row's")
    return None


def _rms_norm_mistakes(yours, right, dout, cache):
    xhat, rstd, gamma = cache
    dxhat = dout * gamma
    axis = _wrong_axis(yours, dxhat, xhat, rstd, mean_term=False)
    if axis:
        return axis
    if within_pass_error(yours, rstd * dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)):
        return Diagnosis("rms norm's term without rstd",
                         "rms norm with the root mean square's term not scaled as the rest: x reaches y only "
                         "through xhat = x * rstd, so every term of dx, that one too, carries the factor rstd")
    # The root mean square's term is a multiple of xhat per row, layer norm's mean term a constant per row:
    # fit err = a + b * xhat per row by least squares and say which of the two is there.
    err = yours - right
    n = xhat.shape[-1]
    sum_xhat, sum_xhat2 = xhat.sum(axis=-1, keepdims=True), (xhat * xhat).sum(axis=-1, keepdims=True)
    sum_err, sum_err_xhat = err.sum(axis=-1, keepdims=True), (err * xhat).sum(axis=-1, keepdims=True)
    b = (n * sum_err_xhat - sum_xhat * sum_err) / (n * sum_xhat2 - sum_xhat * sum_xhat)
    a = (sum_err - b * sum_xhat) / n
    scale = np.abs(yours).max() + np.abs(right).max()
    if np.abs(err - a - b * xhat).max() > 1e-6 * scale:
        return None
    mean_term, rms_term = np.abs(a).max() > 1e-6 * scale, np.abs(b * xhat).max() > 1e-6 * scale
    if mean_term and not rms_term:
        return Diagnosis("rms norm with layer norm's mean term",
                         "rms norm with layer norm's mean term: rms_norm takes no mean away from x, so nothing "
                         "in its backward comes from a mean of x")
    if rms_term and within_pass_error(yours, rstd * dxhat):
        return Diagnosis("rms norm ignoring the root mean square",
                         "rms norm ignoring how the root mean square depends on x: every x_j of a row is in "
                         "it, so x reaches y through it as well as directly")
    return None


def _exp_mistakes(yours, right, dout, cache):
    out = cache
    if within_pass_error(yours, dout * np.exp(out)):
        return Diagnosis("exp(out)", "exp's backward as exp(out): d e^x/dx is e^x, which the forward already "
                                     "returned as out; exp(out) is e^(e^x)")
    return None


def _gelu_mistakes(yours, right, dout, cache):
    x, t = cache
    outer = 0.5 * (1.0 + t)
    if within_pass_error(yours, dout * (outer + 0.5 * x * (1.0 - t * t))) or within_pass_error(yours, dout * outer):
        return Diagnosis("gelu without the inner derivative",
                         "gelu without its inner derivative: tanh's argument c (x + 0.044715 x^3) depends "
                         "on x too, and the chain rule multiplies by its derivative")
    return None


def _silu_mistakes(yours, right, dout, cache):
    x, s = cache
    if within_pass_error(yours, dout * s) or within_pass_error(yours, dout * x * s * (1.0 - s)):
        return Diagnosis("silu without the product rule",
                         "silu without the product rule: out = x * sigmoid(x) is a product of two factors that "
                         "both depend on x, and your dx has the derivative of one of them only")
    if within_pass_error(yours, dout * (s + s * (1.0 - s))):
        return Diagnosis("silu's second term without x",
                         "silu's product rule with a factor missing from its second term: in the derivative of "
                         "a product, each term keeps the factor that is not differentiated")
    if within_pass_error(yours, dout * s * (1.0 - s)):
        return Diagnosis("silu as sigmoid", "silu's backward as sigmoid's: silu is x * sigmoid(x), a product, "
                                            "not sigmoid(x) alone")
    return None


def _rope_mistakes(yours, right, dout, cache):
    cos, sin = cache
    if within_pass_error(yours, rotate(dout, cos, sin)):
        return Diagnosis("rope rotating the same way",
                         "rope's backward turned dout the same way the forward turned x: the backward of a linear "
                         "map is its transpose, and a rotation's transpose is not the rotation itself")
    if any(within_pass_error(yours, _rotate_halves(dout, cos, direction * sin)) for direction in (1, -1)):
        return Diagnosis("rope pairing the halves",
                         "rope's backward pairs dimension i with i + d_k/2: the forward pairs neighbours, "
                         "(x[2i], x[2i+1]), and the backward must turn the same pairs")
    return None


def _rotate_halves(x, cos, sin):
    """x (..., T, d_k) with each pair (x[i], x[i + d_k/2]) turned by the angle of cos and sin (..., T, d_k/2):
    the pairing some libraries use, not this one's."""
    half = x.shape[-1] // 2
    first, second = x[..., :half], x[..., half:]                    # (..., T, d_k/2) each
    return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)


# flash_attention's mistakes are whole backward passes with one change each, which an edition must not show: they
# are the catalogue's (mistakes.py, left out of an edition), and where it is missing nothing is named.
FLASH_ATTENTION = {
    "flash_attention_rescaling_forgotten": (
        "flash attention without the rescaling",
        "the rescaling forgotten: your gradients are those of each tile's probabilities normalised on their own, as "
        "if the tile's keys were the whole row; every tile holds a share of the whole row's softmax, and the forward "
        "pass saved what puts each tile on the row's scale"),
    "flash_attention_L_before_the_last_block": (
        "flash attention with L before the last block",
        "L taken before the last block: your gradients are those of probabilities measured against a row without "
        "its last key block; the log-sum-exp is the whole row's, every key block in it"),
    "flash_attention_D_from_the_tiles_output": (
        "flash attention with D from the wrong output",
        "D from the wrong output: your dq and dk take the softmax's correction from one tile's part of the output; "
        "the correction sums over the whole row, and the output it needs is the whole row's, the one the forward "
        "pass returned"),
}


def _flash_attention_mistakes(yours, index, dout, cache):
    try:
        from . import mistakes
    except ImportError:                                         # a student edition: no catalogue, nothing named
        return None
    for name, (kind, text) in FLASH_ATTENTION.items():
        if within_pass_error(yours, getattr(mistakes, name)(dout, cache)[index]):
            return Diagnosis(kind, text)
    return None
