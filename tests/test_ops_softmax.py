"""ops/softmax.py and ops/loss.py: softmax, log_softmax and cross-entropy against formulas, and their stability."""
import math

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F

from helpers import param


def test_softmax_is_positive_and_sums_to_one_along_its_axis(rng):
    x = 3 * rng.standard_normal((2, 3, 5))
    for axis in (-1, 0, 1):
        y = F.softmax(x, axis=axis).data
        assert (y > 0).all()
        np.testing.assert_allclose(y.sum(axis=axis), 1.0, rtol=1e-12)
        np.testing.assert_allclose(y, np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True), rtol=1e-12)



def test_softmax_and_log_softmax_hand_computed():
    x = np.log(np.array([1.0, 2.0, 3.0]))          # e^x = 1, 2, 3
    np.testing.assert_allclose(F.softmax(x).data, [1 / 6, 2 / 6, 3 / 6], rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(x).data, np.log([1 / 6, 2 / 6, 3 / 6]), rtol=1e-12)



def test_log_softmax_equals_log_of_softmax_for_moderate_logits(rng):
    x = rng.standard_normal((2, 3, 5))
    np.testing.assert_allclose(F.log_softmax(x, axis=1).data, np.log(F.softmax(x, axis=1).data), rtol=1e-12)



def cross_entropy_by_hand(logits, targets, ignore_index, label_smoothing):
    """One position at a time: -sum_v q_v log p_v, q = (1 - eps) one_hot + eps / V; mean over counted."""
    V = logits.shape[-1]
    losses = []
    for z, c in zip(logits.reshape(-1, V), targets.reshape(-1)):
        if c == ignore_index:
            continue
        log_p = z - np.log(np.sum(np.exp(z)))
        q = np.full(V, label_smoothing / V)
        q[c] += 1 - label_smoothing
        losses.append(-np.sum(q * log_p))
    return np.mean(losses)



@pytest.mark.parametrize("ignore_index, label_smoothing", [(None, 0.0), (0, 0.0), (None, 0.1), (0, 0.1), (0, 1.0)])
def test_cross_entropy_matches_the_formula(ignore_index, label_smoothing, rng):
    logits = rng.standard_normal((2, 3, 5))
    targets = np.array([[1, 0, 4], [2, 3, 0]])
    loss = F.cross_entropy(logits, targets, ignore_index=ignore_index, label_smoothing=label_smoothing)
    assert loss.shape == ()
    expected = cross_entropy_by_hand(logits, targets, ignore_index, label_smoothing)
    np.testing.assert_allclose(loss.data, expected, rtol=1e-12)



def test_cross_entropy_of_uniform_logits_is_log_V():
    loss = F.cross_entropy(np.zeros((4, 7)), np.array([0, 3, 6, 2]))
    np.testing.assert_allclose(loss.data, math.log(7), rtol=1e-12)



def test_a_fully_masked_row_gives_zeros_and_minus_infinity_never_nan(rng):
    """softmax of an all -inf row is zeros, log_softmax -inf (the log of those zeros); nothing flows back."""
    x = rng.standard_normal((3, 4))
    x[1] = -np.inf
    x[2, :2] = -np.inf                                               # a partly masked row
    probs, logp = param(x), param(x)
    with tt.Tape() as tape:
        out = F.softmax(probs)
    tape.backward(out, rng.standard_normal((3, 4)))
    with tt.Tape() as tape:
        log_out = F.log_softmax(logp)
    tape.backward(log_out, rng.standard_normal((3, 4)))
    np.testing.assert_array_equal(out.data[1], 0)
    np.testing.assert_array_equal(log_out.data[1], -np.inf)
    np.testing.assert_allclose(np.exp(log_out.data), out.data, rtol=1e-12)   # every row, masked ones included
    assert np.isfinite(probs.grad).all() and np.isfinite(logp.grad).all()
    np.testing.assert_array_equal(logp.grad[1], 0)
    np.testing.assert_array_equal(logp.grad[2, :2], 0)


def test_softmax_and_log_softmax_of_huge_logits_stay_finite_and_correct():
    x = np.array([[1e4, -1e4, 0.0], [1e4, 1e4, 1e4], [-1e4, -1e4, -1e4]])
    np.testing.assert_allclose(F.softmax(x).data, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [1 / 3, 1 / 3, 1 / 3]],
                               atol=1e-15)
    np.testing.assert_allclose(F.log_softmax(x).data[0], [0.0, -2e4, -1e4], atol=1e-12)
    assert np.isfinite(F.log_softmax(x).data).all()



def test_softmax_backward_of_huge_logits_is_finite(rng):
    x = param(np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]]))
    with tt.Tape() as tape:
        y = F.log_softmax(F.softmax(x) * 1.0 + 0.5)
    tape.backward(y, rng.standard_normal(y.shape))
    assert np.isfinite(x.grad).all()



def test_cross_entropy_of_huge_logits_is_finite_and_correct():
    logits = param([[1e4, -1e4, 0.0], [1e4, -1e4, 0.0]])       # log p = [0, -2e4, -1e4] in both rows
    with tt.Tape() as tape:
        loss = F.cross_entropy(logits, np.array([0, 1]), label_smoothing=0.3)
    tape.backward(loss)
    q = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1]])               # (1 - 0.3) one_hot + 0.3 / 3
    np.testing.assert_allclose(loss.data, (0.1 * 3e4 + (0.8 * 2e4 + 0.1 * 1e4)) / 2, rtol=1e-12)
    np.testing.assert_allclose(logits.grad, ([[1, 0, 0], [1, 0, 0]] - q) / 2, atol=1e-12)   # (p - q) / n

