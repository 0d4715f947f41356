"""The gradient of every op against finite differences: every case the grader grades (`python -m
tinytransformer check`), here through the Tensor-level API and the tape, then the pure NumPy pairs
called directly on variants the cases do not cover, with their contract (one gradient per input;
backward writes into neither dout nor the cache).

Gradient checks: float64, central differences (eps=1e-6) projected onto a random upstream gradient,
pass = a relative error of at most 1e-6 over the whole gradient (gradcheck.relative_error); agreeing
float64 gradients are at 1e-9 or less. test_gradcheck.py and test_grader.py show that a wrong backward fails.
"""

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import ops
from tinytransformer.gradcheck import PASS_ERROR
from tinytransformer.course.cases import CHECKS
from tinytransformer.course.grader import is_float_array

from helpers import keep_mask, normal



@pytest.mark.parametrize("check", CHECKS, ids=[check.name for check in CHECKS])
def test_backward_matches_finite_differences(check):
    rng = np.random.default_rng(0)
    inputs = check.make_inputs(rng)
    float_inputs = [name for name, x in inputs.items() if is_float_array(x)]
    assert float_inputs, "every op has at least one input to differentiate"
    assert all(inputs[name].dtype == np.float64 for name in float_inputs)

    results = tt.gradcheck(check.fn, *inputs.values(), names=list(inputs), rng=rng)

    assert [r.name for r in results] == float_inputs          # every float input is checked
    for r in results:
        assert r.passed and r.relative_error < 1e-8, r         # rounding only


def arrays_in(cache):
    if isinstance(cache, np.ndarray):
        return [cache]
    if isinstance(cache, tuple):
        return [a for item in cache for a in arrays_in(item)]
    return []


# variants the grader's cases (CHECKS) do not cover
PAIRS = {
    "linear on 4-D x": (ops.linear_forward, ops.linear_backward,
                        [normal(2, 2, 3, 5), normal(5, 4), normal(4)], {}),
    "softmax over axis 0": (ops.softmax_forward, ops.softmax_backward, [normal(2, 3, 5)], {"axis": 0}),
    "log_softmax over axis 1": (ops.log_softmax_forward, ops.log_softmax_backward,
                                [normal(2, 3, 5)], {"axis": 1}),
    "attention, padding-shaped mask": (ops.attention_forward, ops.attention_backward,
                                       [normal(2, 3, 5), normal(2, 4, 5), normal(2, 4, 6), keep_mask(2, 1, 4)],
                                       {}),
    "embedding": (ops.embedding_forward, ops.embedding_backward,
                  [lambda r: np.array([[1, 1, 4], [0, 1, 2]]), normal(5, 3)], {}),
    "cross_entropy, label_smoothing=1": (ops.cross_entropy_forward, ops.cross_entropy_backward,
                                         [normal(4, 5), lambda r: np.array([0, 4, 2, 2])],
                                         {"label_smoothing": 1.0}),
    "cross_entropy, ignore_index=-100": (ops.cross_entropy_forward, ops.cross_entropy_backward,
                                         [normal(2, 3, 5), lambda r: np.array([[1, -100, 4], [-100, 3, 0]])],
                                         {"ignore_index": -100, "label_smoothing": 0.2}),
    "split_heads into 3": (ops.split_heads_forward, ops.split_heads_backward, [normal(2, 4, 6)], {"n_heads": 3}),
    "merge_heads of 3": (ops.merge_heads_forward, ops.merge_heads_backward, [normal(2, 3, 4, 2)], {}),
    "add, both broadcast": (ops.add_forward, ops.add_backward, [normal(2, 1, 5), normal(3, 1)], {}),
    "matmul, a broadcast": (ops.matmul_forward, ops.matmul_backward, [normal(1, 3, 5), normal(2, 5, 4)], {}),
    "sum, axis=-1, keepdims": (ops.sum_forward, ops.sum_backward, [normal(2, 3, 5)],
                               {"axis": -1, "keepdims": True}),
    "mean over (0, 2)": (ops.mean_forward, ops.mean_backward, [normal(2, 3, 5)], {"axis": (0, 2)}),
    "rms_norm on 4-D x": (ops.rms_norm_forward, ops.rms_norm_backward, [normal(2, 2, 3, 5), normal(5)], {}),
    "rope, positions (B, T), odd T": (ops.rope_forward, ops.rope_backward,
                                      [normal(2, 5, 8), lambda r: np.array([[0, 1, 2, 3, 4], [9, 3, 3, 0, 12]])],
                                      {"theta": 50.0}),
    "silu far out": (ops.silu_forward, ops.silu_backward, [lambda r: 12 * r.standard_normal((3, 4))], {}),
    "reshape with -1": (ops.reshape_forward, ops.reshape_backward, [normal(2, 3, 5)], {"shape": (-1, 5)}),
}


@pytest.mark.parametrize("forward, backward, makers, options", PAIRS.values(), ids=PAIRS.keys())
def test_pair_backward_matches_finite_differences(forward, backward, makers, options, rng):
    inputs = [make(rng) for make in makers]
    out, cache = forward(*inputs, **options)
    dout = rng.standard_normal(out.shape)
    saved = [a.copy() for a in [dout, *arrays_in(cache)]]

    grads = backward(dout, cache)

    assert all(np.array_equal(a, b) for a, b in zip(saved, [dout, *arrays_in(cache)])), \
        "backward wrote into dout or the cache"
    assert len(grads) == len(inputs)
    for i, (x, grad) in enumerate(zip(inputs, grads)):
        if not is_float_array(x):
            assert grad is None                  # ids, masks, a missing bias: no gradient
            continue

        def f(x_i, i=i):
            return forward(*inputs[:i], x_i, *inputs[i + 1:], **options)[0]

        numeric = tt.numerical_gradient(f, x.copy(), dout)
        assert grad.shape == x.shape
        assert tt.relative_error(grad, numeric) <= PASS_ERROR

