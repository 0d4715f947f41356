"""A catalogue of backward-pass mistakes that students make, each one caught by the grader.

Every mistake is the library's backward pass with one change, marked
`# mistake:`. MISTAKES pairs each with its op and with the diagnosis the
grader gives it (diagnose.Diagnosis.kind; "raised" when the backward raises,
"contract" when it breaks the op contract, None when the grader only says
FAIL and the error). The tests grade every one; notebook 14 shows a few.

    from tinytransformer import grader, mistakes
    m = mistakes.MISTAKES[0]
    grader.grade_op(m.op, backward=m.backward)      # FAIL, with m.kind's diagnosis
"""
import math
from typing import Callable, NamedTuple

import numpy as np

from .. import ops
from ..ops import sum_backward, unbroadcast


class Mistake(NamedTuple):
    """A classic mistake: the op it belongs to, the library's backward pass with that one change, its kind."""
    op: str                  # the op whose backward it stands in for ("tape": Tape.backward)
    backward: Callable       # the library's backward with one change
    kind: str                # the grader's diagnosis: a Diagnosis.kind, "raised", "contract", or None


# softmax.py: y = softmax(x)  ->  dx = y * (dout - sum_j dout_j y_j)

def softmax_without_the_sum_term(dout, cache):
    """Only the diagonal of the Jacobian: every y_i also depends on every x_j through the sum."""
    out, axis = cache
    return (out * dout,)                                    # mistake: "- sum_j dout_j y_j" left out


def softmax_summed_over_the_last_axis(dout, cache):
    """Right along the last axis, wrong along any other: it vanishes on a shape checked along -1 only."""
    out, axis = cache
    return (out * (dout - (dout * out).sum(axis=-1, keepdims=True)),)   # mistake: axis=-1, not axis


# layernorm.py: dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))

def layer_norm_without_the_mean_terms(dout, cache):
    """As if the mean and the variance were constants: x reaches y through them too."""
    xhat, rstd, gamma = cache
    dgamma = unbroadcast(dout * xhat, gamma.shape)
    dbeta = unbroadcast(dout, gamma.shape)
    dx = rstd * (dout * gamma)                              # mistake: both mean terms left out
    return dx, dgamma, dbeta


def layer_norm_ignoring_the_mean(dout, cache):
    """As if the mean were a constant: the variance's term is there, the mean's is not."""
    xhat, rstd, gamma = cache
    dxhat = dout * gamma
    dx = rstd * (dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))   # mistake: "- mean(dxhat)" left out
    return dx, unbroadcast(dout * xhat, gamma.shape), unbroadcast(dout, gamma.shape)


def layer_norm_ignoring_the_variance(dout, cache):
    """As if the variance were a constant: the mean's term is there, the variance's is not."""
    xhat, rstd, gamma = cache
    dxhat = dout * gamma
    dx = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True))   # mistake: "- xhat * mean(dxhat * xhat)" left out
    return dx, unbroadcast(dout * xhat, gamma.shape), unbroadcast(dout, gamma.shape)


def layer_norm_dgamma_not_summed(dout, cache):
    """gamma (D,) was stretched over every row: its gradient must be summed over them."""
    xhat, rstd, gamma = cache
    dgamma = dout * xhat                                    # mistake: not summed over the rows
    dbeta = unbroadcast(dout, gamma.shape)
    dxhat = dout * gamma
    dx = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    return dx, dgamma, dbeta



def layer_norm_means_over_the_first_axis(dout, cache):
    """The row means taken over axis 0: the forward normalised each row over its last axis, the features."""
    xhat, rstd, gamma = cache
    dxhat = dout * gamma
    dx = rstd * (dxhat - dxhat.mean(axis=0, keepdims=True)   # mistake: axis=0, not axis=-1 (both means)
                 - xhat * (dxhat * xhat).mean(axis=0, keepdims=True))
    return dx, unbroadcast(dout * xhat, gamma.shape), unbroadcast(dout, gamma.shape)

# layernorm.py: rms_norm's dx = rstd * (dxhat - xhat * mean(dxhat * xhat))

def rms_norm_ignoring_the_rms(dout, cache):
    """As if the root mean square were a constant: it depends on every x_j of the row."""
    xhat, rstd, gamma = cache
    dx = rstd * (dout * gamma)                              # mistake: "- xhat * mean(dxhat * xhat)" left out
    return dx, unbroadcast(dout * xhat, gamma.shape)


def rms_norm_with_the_mean_term_of_layer_norm(dout, cache):
    """Layer norm's backward copied over: rms_norm takes no mean away, so it has no mean term."""
    xhat, rstd, gamma = cache
    dxhat = dout * gamma
    dx = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True)   # mistake: "- mean(dxhat)" is layer norm's
                 - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    return dx, unbroadcast(dout * xhat, gamma.shape)


def rms_norm_rms_term_without_rstd(dout, cache):
    """The root mean square's term left outside the factor rstd, which every term of dx carries."""
    xhat, rstd, gamma = cache
    dxhat = dout * gamma
    dx = rstd * dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)   # mistake: the term outside rstd * (...)
    return dx, unbroadcast(dout * xhat, gamma.shape)


def rms_norm_dgamma_not_summed(dout, cache):
    """gamma (D,) was stretched over every row: its gradient must be summed over them."""
    xhat, rstd, gamma = cache
    dxhat = dout * gamma
    dx = rstd * (dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    return dx, dout * xhat                                  # mistake: dgamma not summed over the rows


# rope.py: out = R(angle) x  ->  dx = R(-angle) dout

def rope_rotating_forward_again(dout, cache):
    """The backward of a rotation is the inverse rotation, by -angle: this one turns dout further on."""
    cos, sin = cache
    return ops.rope.rotate(dout, cos, sin), None            # mistake: sin, not -sin


def rope_pairing_the_halves(dout, cache):
    """The forward paired neighbours (x[2i], x[2i+1]); this backward pairs x[i] with x[i + d_k/2]."""
    cos, sin = cache
    half = dout.shape[-1] // 2
    first, second = dout[..., :half], dout[..., half:]      # mistake: the halves, not [0::2] and [1::2]
    return np.concatenate([first * cos + second * sin, second * cos - first * sin], axis=-1), None


# attention.py: S = q @ k.T * scale  ->  dq = dS @ k * scale, dk = dS.T @ q * scale

def _attention_dscores(dout, probs, v):
    dprobs = dout @ v.swapaxes(-1, -2)
    return probs * (dprobs - (dprobs * probs).sum(axis=-1, keepdims=True))


def attention_scale_forgotten_in_dq(dout, cache):
    """The forward scaled the scores by 1/sqrt(d_k); dq must be scaled by it too."""
    q, k, v, probs, scale = cache
    dv = probs.swapaxes(-1, -2) @ dout
    dscores = _attention_dscores(dout, probs, v)
    dq = dscores @ k                                        # mistake: "* scale" left out
    dk = dscores.swapaxes(-1, -2) @ q * scale
    return dq, dk, dv, None


def attention_dk_not_transposed(dout, cache):
    """dk = dS.T @ q: without the transpose, a query's row is paired with the wrong key."""
    q, k, v, probs, scale = cache
    dv = probs.swapaxes(-1, -2) @ dout
    dscores = _attention_dscores(dout, probs, v) * scale
    dq = dscores @ k
    dk = dscores @ q                                        # mistake: dscores, not dscores.swapaxes(-1, -2)
    return dq, dk, dv, None


# flash_attention.py: each tile's probabilities A = e^(S - L); dS = A * (dA - D), D = rowsum(dout * out)

def _flash_gradients(dout, cache, probabilities, correction):
    """The library's backward with two of its pieces given: probabilities(scores, rows, cols) -> the tile's A, and
    correction(rows, probs, dout_tile, cols) -> the tile's D (..., bq, 1)."""
    q, k, v, out, L, keep, scale, block_q, block_k = cache
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for rows, cols, tile_keep in ops.flash_attention.kept_tiles(keep, q.shape[-2], k.shape[-2], block_q, block_k):
        probs = probabilities(ops.flash_attention.tile_scores(q, k, tile_keep, scale, rows, cols), rows, cols)
        dout_tile = dout[..., rows, :]
        dv[..., cols, :] += probs.swapaxes(-1, -2) @ dout_tile
        dprobs = dout_tile @ v[..., cols, :].swapaxes(-1, -2)
        dscores = probs * (dprobs - correction(rows, probs, dout_tile, cols))
        dq[..., rows, :] += dscores @ k[..., cols, :] * scale
        dk[..., cols, :] += dscores.swapaxes(-1, -2) @ q[..., rows, :] * scale
    return dq, dk, dv, None


def _flash_row_correction(dout, out):
    D = (dout * out).sum(axis=-1)
    return lambda rows, probs, dout_tile, cols: D[..., rows, None]


def flash_attention_rescaling_forgotten(dout, cache):
    """Each tile's probabilities normalised with the tile's own max and sum, as if its keys were the whole row:
    the online softmax's rescaling between blocks left out."""
    q, k, v, out, L, keep, scale, block_q, block_k = cache
    tile_softmax = ops.softmax_forward                                 # mistake: the tile's softmax, not e^(S - L)
    return _flash_gradients(dout, cache, lambda scores, rows, cols: tile_softmax(scores)[0],
                            _flash_row_correction(dout, out))


def flash_attention_L_before_the_last_block(dout, cache):
    """The log-sum-exp L of each row taken before its last key block: the probabilities of every tile are
    measured against a row without its last keys."""
    q, k, v, out, L, keep, scale, block_q, block_k = cache
    cut = (k.shape[-2] - 1) // block_k * block_k                       # where the last key block starts
    early = None if keep is None else np.broadcast_to(keep, q.shape[:-1] + k.shape[-2:-1])[..., :cut]
    _, (*_, L_early, _, _, _, _) = ops.flash_attention_forward(q, k[..., :cut, :], v[..., :cut, :], early, scale,
                                                               block_q, block_k)   # mistake: L before the last block
    return _flash_gradients(dout, cache, lambda scores, rows, cols: np.exp(scores - L_early[..., rows, None]),
                            _flash_row_correction(dout, out))


def flash_attention_D_from_the_tiles_output(dout, cache):
    """D from the tile's own part of the output, (its probabilities) @ (its values), inside the loop: the
    softmax's correction is a sum over the whole row."""
    q, k, v, out, L, keep, scale, block_q, block_k = cache
    return _flash_gradients(dout, cache, lambda scores, rows, cols: np.exp(scores - L[..., rows, None]),
                            lambda rows, probs, dout_tile, cols:   # mistake: the tile's output, not the row's
                            (dout_tile * (probs @ v[..., cols, :])).sum(axis=-1, keepdims=True))


# basic.py

def matmul_gradient_not_transposed(dout, cache):
    """da = dout @ b.T: without .T the shapes do not even fit (unless b is square)."""
    a, b = cache
    da = dout @ b                                           # mistake: b, not b.swapaxes(-1, -2)
    db = a.swapaxes(-1, -2) @ dout
    return unbroadcast(da, a.shape), unbroadcast(db, b.shape)


def add_without_the_broadcast_sum(dout, cache):
    """A stretched input fed every element it was copied to: its gradient is the sum over the copies."""
    a_shape, b_shape = cache
    return dout, dout                                       # mistake: not summed back to a's and b's shapes


def sub_with_the_wrong_sign(dout, cache):
    """out = a - b: b's gradient is -dout."""
    a_shape, b_shape = cache
    return unbroadcast(dout, a_shape), unbroadcast(dout, b_shape)     # mistake: dout, not -dout


def mean_without_dividing_by_n(dout, cache):
    """out = sum_i x_i / n: each x_i gets dout / n, not dout."""
    x_shape, axes, keepdims, count = cache
    (dx,) = sum_backward(dout, (x_shape, axes, keepdims))
    return (dx,)                                            # mistake: not divided by count


def exp_of_the_output(dout, cache):
    """The cache of exp is its output e^x, not x: e^(cache) is e^(e^x)."""
    x = cache                                               # mistake: the cache is out = e^x, not x
    return (dout * np.exp(x),)


def relu_without_the_mask(dout, cache):
    """The gradient flows only where x > 0."""
    positive = cache
    return (dout,)                                          # mistake: "* positive" left out


def relu_zeroing_dout_in_place(dout, cache):
    """Right numbers, but written into dout: add's backward hands one dout to both of its inputs."""
    positive = cache
    dout[~positive] = 0                                     # mistake: changes the caller's array
    return (dout,)


def gelu_derivative_of_the_exact_form(dout, cache):
    """The forward is the tanh form; this is the derivative of the exact one, Phi(x) + x phi(x): 0.1% off."""
    x, t = cache
    phi = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    Phi = 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2)))
    return (dout * (Phi + x * phi),)                        # mistake: the other GELU's derivative


def gelu_without_the_inner_derivative(dout, cache):
    """tanh's argument c (x + 0.044715 x^3) depends on x: the chain rule multiplies by its derivative."""
    x, t = cache
    return (dout * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t)),)   # mistake: "* c (1 + 3 * 0.044715 x^2)" left out


def gelu_with_a_rounded_constant(dout, cache):
    """sqrt(2/pi) typed as 0.7978: right to four digits, and still wrong."""
    x, t = cache
    c = 0.7978                                              # mistake: GELU_C = sqrt(2/pi) = 0.7978845...
    return (dout * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3 * 0.044715 * x * x)),)


def silu_without_the_product_rule(dout, cache):
    """out = x * sigmoid(x) is a product of two factors that both depend on x: s + x s (1 - s), not s."""
    x, s = cache
    return (dout * s,)                                      # mistake: "+ x * s * (1 - s)" left out


def silu_second_term_without_x(dout, cache):
    """The product rule's second term lost its factor x: the derivative of sigmoid alone."""
    x, s = cache
    return (dout * (s + s * (1.0 - s)),)                    # mistake: "x *" left out of the second term


def silu_as_the_derivative_of_sigmoid(dout, cache):
    """s (1 - s) is the derivative of sigmoid(x); silu is x * sigmoid(x)."""
    x, s = cache
    return (dout * s * (1.0 - s),)                          # mistake: sigmoid's derivative, not silu's


def dropout_scale_forgotten(dout, cache):
    """Inverted dropout scales the kept elements by 1/(1-p) going forward, so backward must too."""
    scale = cache
    return (dout if scale is None else dout * (scale > 0),)     # mistake: the mask alone, not the scale


def transpose_with_the_same_axes(dout, cache):
    """Undoing a permutation takes its inverse; for a 2-D transpose the two are the same."""
    axes = cache
    return (dout.transpose(axes),)                          # mistake: axes, not np.argsort(axes)


# linear.py, embedding.py, loss.py

def linear_dW_transposed(dout, cache):
    """y = x @ W with W (d_in, d_out): dW = x.T @ dout is (d_in, d_out); dout.T @ x is its transpose."""
    x2, W, x_shape, has_bias = cache
    dout2 = dout.reshape(-1, W.shape[1])
    dx = (dout2 @ W.T).reshape(x_shape)
    dW = dout2.T @ x2                                       # mistake: dout.T @ x, not x.T @ dout
    db = dout2.sum(axis=0) if has_bias else None
    return dx, dW, db


def linear_bias_summed_over_the_batch_axis_only(dout, cache):
    """b is added at every position of every sequence: sum over all of them, not the first axis only."""
    x2, W, x_shape, has_bias = cache
    dout2 = dout.reshape(-1, W.shape[1])
    dx = (dout2 @ W.T).reshape(x_shape)
    dW = x2.T @ dout2
    db = dout.sum(axis=0) if has_bias else None             # mistake: axis 0 of (B, T, d_out) only
    return dx, dW, db


def log_softmax_sending_gradient_to_masked_inputs(dout, cache):
    """Right where x is finite; a masked -inf input is a constant, and must get no gradient."""
    out, axis = cache
    return (dout - np.exp(out) * dout.sum(axis=axis, keepdims=True),)   # mistake: not zeroed where out = -inf


def embedding_overwriting_repeated_ids(dout, cache):
    """A token used twice must get the sum of both gradients; fancy assignment keeps only one."""
    ids, table_shape = cache
    dtable = np.zeros(table_shape)
    dtable[ids.reshape(-1)] = dout.reshape(ids.size, -1)    # mistake: = keeps the last; np.add.at adds
    return None, dtable


def cross_entropy_without_label_smoothing(dout, cache):
    """With label smoothing the target is (1 - eps) one_hot + eps / V, not the one_hot."""
    logp, safe_targets, counted, n, label_smoothing = cache
    probs = np.exp(logp)
    one_hot = (safe_targets[..., None] == np.arange(logp.shape[-1])).astype(probs.dtype)
    return (probs - one_hot) * ((dout / n) * counted[..., None]), None     # mistake: q = one_hot, unsmoothed


def cross_entropy_ignored_positions_not_zeroed(dout, cache):
    """An ignored target (padding) adds nothing to the loss, so its logits get no gradient."""
    logp, safe_targets, counted, n, label_smoothing = cache
    V = logp.shape[-1]
    probs = np.exp(logp)
    one_hot = (safe_targets[..., None] == np.arange(V)).astype(probs.dtype)
    probs_minus_q = probs - label_smoothing / V - (1.0 - label_smoothing) * one_hot
    return probs_minus_q * (dout / n), None                  # mistake: "* counted[..., None]" left out


# tensor.py: the tape's replay

def cross_entropy_in_float64(dout, cache):
    """Right numbers in the wrong dtype: float32 logits get a float64 gradient, and training goes float64."""
    dlogits, dtargets = ops.cross_entropy_backward(dout, cache)
    return dlogits.astype(np.float64), dtargets             # mistake: the gradient's dtype is not the logits'


def replay_assigning_instead_of_adding(tape, output, grad=None):
    """A tensor used twice must get the sum of its paths; assigning keeps only the last one."""
    output.grad = np.ones_like(output.data) if grad is None else grad
    for record in reversed(tape.records):
        dout = record.output.grad
        if dout is None:
            continue
        for t, g in zip(record.inputs, record.backward(dout, record.cache)):
            if getattr(t, "requires_grad", False) and g is not None:
                t.grad = g                                  # mistake: t.grad = g, not t.grad + g
    tape.records.clear()
    tape.released = True


MISTAKES = [
    Mistake("softmax", softmax_without_the_sum_term, "softmax without the subtraction term"),
    Mistake("softmax", softmax_summed_over_the_last_axis, None),
    Mistake("layer_norm", layer_norm_without_the_mean_terms, "layer norm ignoring the mean and the variance"),
    Mistake("layer_norm", layer_norm_ignoring_the_mean, "layer norm ignoring the mean"),
    Mistake("layer_norm", layer_norm_ignoring_the_variance, "layer norm ignoring the variance"),
    Mistake("layer_norm", layer_norm_dgamma_not_summed, "missing sum"),
    Mistake("layer_norm", layer_norm_means_over_the_first_axis, "norm's means over the wrong axis"),
    Mistake("rms_norm", rms_norm_ignoring_the_rms, "rms norm ignoring the root mean square"),
    Mistake("rms_norm", rms_norm_with_the_mean_term_of_layer_norm, "rms norm with layer norm's mean term"),
    Mistake("rms_norm", rms_norm_dgamma_not_summed, "missing sum"),
    Mistake("rms_norm", rms_norm_rms_term_without_rstd, "rms norm's term without rstd"),
    Mistake("attention", attention_scale_forgotten_in_dq, "factor"),
    Mistake("attention", attention_dk_not_transposed, "raised"),
    Mistake("flash_attention", flash_attention_rescaling_forgotten, "flash attention without the rescaling"),
    Mistake("flash_attention", flash_attention_L_before_the_last_block, "flash attention with L before the last block"),
    Mistake("flash_attention", flash_attention_D_from_the_tiles_output, "flash attention with D from the wrong output"),
    Mistake("matmul", matmul_gradient_not_transposed, "raised"),
    Mistake("add", add_without_the_broadcast_sum, "missing sum"),
    Mistake("sub", sub_with_the_wrong_sign, "wrong sign"),
    Mistake("mean", mean_without_dividing_by_n, "factor"),
    Mistake("exp", exp_of_the_output, "exp(out)"),
    Mistake("relu", relu_without_the_mask, "nonzero"),
    Mistake("relu", relu_zeroing_dout_in_place, "contract"),
    Mistake("gelu", gelu_derivative_of_the_exact_form, "close"),
    Mistake("gelu", gelu_with_a_rounded_constant, "close"),
    Mistake("gelu", gelu_without_the_inner_derivative, "gelu without the inner derivative"),
    Mistake("silu", silu_without_the_product_rule, "silu without the product rule"),
    Mistake("silu", silu_as_the_derivative_of_sigmoid, "silu as sigmoid"),
    Mistake("silu", silu_second_term_without_x, "silu's second term without x"),
    Mistake("rope", rope_rotating_forward_again, "rope rotating the same way"),
    Mistake("rope", rope_pairing_the_halves, "rope pairing the halves"),
    Mistake("log_softmax", log_softmax_sending_gradient_to_masked_inputs, "contract"),
    Mistake("dropout", dropout_scale_forgotten, "factor"),
    Mistake("transpose", transpose_with_the_same_axes, "wrong shape"),
    Mistake("linear", linear_dW_transposed, "transposed"),
    Mistake("linear", linear_bias_summed_over_the_batch_axis_only, "missing sum"),
    Mistake("embedding", embedding_overwriting_repeated_ids, "some elements"),
    Mistake("cross_entropy", cross_entropy_without_label_smoothing, "some elements"),
    Mistake("cross_entropy", cross_entropy_ignored_positions_not_zeroed, "nonzero"),
    Mistake("cross_entropy", cross_entropy_in_float64, "contract"),
    Mistake("tape", replay_assigning_instead_of_adding, None),
]
