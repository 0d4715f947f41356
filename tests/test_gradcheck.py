"""The gradient checker itself: its numbers, and proof that it catches wrong backward passes."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer import ops
from tinytransformer.gradcheck import PASS_ERROR, GradcheckError, relative_error
from tinytransformer.tensor import apply


def test_elementwise_relative_error_values():
    assert tt.elementwise_relative_error(1.0, 1.0) == 0.0
    assert tt.elementwise_relative_error(1.0, 1.1) == pytest.approx(0.1 / 2.1, rel=1e-12)       # |a - b| / (|a| + |b|)
    assert tt.elementwise_relative_error([1.0, 2.0], [1.0, 3.0]) == pytest.approx(1 / 5, rel=1e-12)   # the largest element
    assert tt.elementwise_relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert tt.elementwise_relative_error(1e-10, 0.0) == pytest.approx(1e-2, rel=1e-12)          # denominator floored at 1e-8


def test_relative_error_is_relative_to_the_whole_gradient():
    assert relative_error([1.0, 2.0], [1.0, 2.0]) == 0.0
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_error([1.0, -4.0], [1.0, -2.0]) == pytest.approx(2 / (4 + 2), rel=1e-12)   # max|a-b| / (max|a| + max|b|)
    assert relative_error([3.0, 1e-7], [3.0, 2e-7]) == pytest.approx(1e-7 / 6, rel=1e-6)    # a near-zero element
    assert tt.elementwise_relative_error([3.0, 1e-7], [3.0, 2e-7]) == pytest.approx(1 / 3, rel=1e-6)          # elementwise: 1/3


def test_numerical_gradient_of_x_squared_is_2x(rng):
    x = rng.standard_normal((2, 3))
    dout = rng.standard_normal((2, 3))
    saved = x.copy()
    grad = tt.numerical_gradient(lambda x: x ** 2, x, dout)
    np.testing.assert_allclose(grad, 2 * x * dout, rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(x, saved)                                    # x is restored


def test_numerical_gradient_of_a_matrix_product(rng):
    x, A, dout = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    grad = tt.numerical_gradient(lambda x: x @ A, x, dout)
    np.testing.assert_allclose(grad, dout @ A.T, rtol=1e-7, atol=1e-9)      # d sum((xA) * dout)/dx


def test_gradcheck_reports_every_float_input_and_passes_a_right_backward(rng):
    results = tt.gradcheck(tt.functional.linear, rng.standard_normal((2, 3)), rng.standard_normal((3, 4)),
                           rng.standard_normal(4), names=["x", "W", "b"])
    assert [r.name for r in results] == ["x", "W", "b"]
    assert all(r.passed and r.elementwise_error < 1e-6 and r.relative_error < 1e-8 for r in results)


def test_gradcheck_fails_a_gradient_0_05_percent_off_unless_given_pytorch_tolerances(rng):
    def off_by_0_05_percent(dout, cache):
        (dx,) = ops.softmax_backward(dout, cache)
        return (dx * 1.0005,)
    x = rng.standard_normal((3, 5))
    fn = lambda x: apply(ops.softmax_forward, off_by_0_05_percent, x)
    (strict,) = tt.gradcheck(fn, x, raise_on_failure=False)
    assert not strict.passed and strict.relative_error > 1e2 * PASS_ERROR
    (lenient,) = tt.gradcheck(fn, x, atol=1e-5, rtol=1e-3, raise_on_failure=False)      # allclose lets it by
    assert lenient.passed


def test_gradcheck_treats_a_masked_score_as_a_constant(rng):
    scores, keep = rng.standard_normal((3, 4)), rng.random((3, 4)) > 0.5
    keep[:, 0] = True
    (result,) = tt.gradcheck(F.mask, scores, keep)             # -inf outputs: no nan from inf - inf
    assert result.passed and np.isfinite(result.relative_error)


# ---------------------------------------------------------------------------
# Deliberately wrong backward passes: each must fail the check.

def softmax_backward_without_correction(dout, cache):
    out, axis = cache
    return (out * dout,)                           # forgot "- sum_j dout_j y_j"


def softmax_backward_with_plain_mean(dout, cache):
    out, axis = cache
    return (out * (dout - dout.mean(axis=axis, keepdims=True)),)   # should be sum(dout * y), not mean(dout)


def layer_norm_backward_missing_a_term(dout, cache):
    xhat, rstd, gamma = cache
    dx, dgamma, dbeta = ops.layer_norm_backward(dout, cache)
    dxhat = dout * gamma
    return dx + rstd * xhat * (dxhat * xhat).mean(axis=-1, keepdims=True), dgamma, dbeta   # dropped it


def matmul_backward_untransposed(dout, cache):
    a, b = cache
    return dout @ b, a.T @ dout                    # da should be dout @ b.T


def wrong(forward, backward):
    """A Tensor-level op made of a right forward and the given (wrong) backward."""
    return lambda *inputs: apply(forward, backward, *inputs)


WRONG_OPS = {
    "softmax without its correction term": (wrong(ops.softmax_forward, softmax_backward_without_correction),
                                            [(3, 5)]),
    "softmax with a plain mean": (wrong(ops.softmax_forward, softmax_backward_with_plain_mean), [(3, 5)]),
    "layer_norm missing a term": (wrong(ops.layer_norm_forward, layer_norm_backward_missing_a_term),
                                  [(3, 5), (5,), (5,)]),
    "matmul with an untransposed gradient": (wrong(ops.matmul_forward, matmul_backward_untransposed),
                                             [(3, 4), (4, 4)]),
}


@pytest.mark.parametrize("fn, shapes", WRONG_OPS.values(), ids=WRONG_OPS.keys())
def test_gradcheck_catches_a_wrong_backward(fn, shapes, rng):
    inputs = [rng.standard_normal(shape) for shape in shapes]
    with pytest.raises(GradcheckError, match="disagrees with finite differences"):
        tt.gradcheck(fn, *inputs)


def test_gradcheck_names_the_wrong_input_only(rng):
    fn = WRONG_OPS["matmul with an untransposed gradient"][0]
    results = tt.gradcheck(fn, rng.standard_normal((3, 4)), rng.standard_normal((4, 4)), names=["a", "b"],
                           raise_on_failure=False)
    assert [(r.name, r.passed) for r in results] == [("a", False), ("b", True)]
    assert results[0].elementwise_error > 1e-2 and results[1].elementwise_error < 1e-6


@pytest.mark.parametrize("forward, wrong_backward, shapes", [
    (ops.softmax_forward, softmax_backward_with_plain_mean, [(3, 5)]),
    (ops.layer_norm_forward, layer_norm_backward_missing_a_term, [(3, 5)]),
], ids=["softmax with a plain mean", "layer_norm missing a term"])
def test_an_all_ones_upstream_gradient_would_hide_the_bug(forward, wrong_backward, shapes, rng):
    """Why gradcheck draws a random upstream gradient.

    With dout = 1 everywhere the loss is sum(y). For softmax that sum is 1 whatever x is,
    so the true gradient is 0, and the wrong backward also gives 0 (dout minus its mean).
    For layer norm with gamma = 1 (its initial value), the dropped term is
    xhat * mean(xhat) = 0. Only a random dout tells right from wrong.
    """
    inputs = [rng.standard_normal(shape) for shape in shapes]
    if forward is ops.layer_norm_forward:
        inputs += [np.ones(5), np.zeros(5)]        # gamma = 1, beta = 0
    x = inputs[0]

    def both_gradients(dout):
        wrong_dx = wrong_backward(dout, forward(*inputs)[1])[0]
        numeric = tt.numerical_gradient(lambda x: forward(x, *inputs[1:])[0], x.copy(), dout)
        return wrong_dx, numeric

    wrong_dx, numeric = both_gradients(np.ones_like(x))
    np.testing.assert_allclose(wrong_dx, numeric, atol=1e-5, rtol=1e-3)     # the bug hides
    wrong_dx, numeric = both_gradients(rng.standard_normal(x.shape))
    assert not np.allclose(wrong_dx, numeric, atol=1e-5, rtol=1e-3)         # the bug shows


def test_gradcheck_refuses_a_function_that_returns_more_than_one_tensor(rng):
    q = rng.standard_normal((2, 3, 4))
    with pytest.raises(TypeError, match=r"gradcheck: fn must return one Tensor, got tuple"):
        tt.gradcheck(tt.functional.attention, q, q, q)


def test_a_gradient_too_small_to_measure_passes_within_the_rounding(rng):
    """Layer norm over 2 features: xhat is +-1 whatever x is, so dx is near zero everywhere and its
    relative error is rounding over rounding; the error is within what central differences resolve."""
    x = 1 + 2 * rng.standard_normal((3, 2))
    (dx, *_) = tt.gradcheck(F.layer_norm, x, np.ones(2), np.zeros(2), names=["x", "gamma", "beta"])
    assert dx.passed and dx.max_abs_error < 1e-9
    wrong = lambda x: apply(ops.layer_norm_forward, lambda dout, cache: (dout, None, None), x, np.ones(2), np.zeros(2))
    (dx,) = tt.gradcheck(wrong, x, raise_on_failure=False)[:1]
    assert not dx.passed                                           # an error of the size of dout still fails
