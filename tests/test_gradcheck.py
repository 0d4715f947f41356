"""The gradient checker itself: its numbers, and proof that it catches wrong backward passes."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import ops
from tinytransformer import gradcheck_every_op
from tinytransformer.__main__ import main
from tinytransformer.gradcheck import GradcheckError
from tinytransformer.gradcheck_every_op import CHECKS, OpCheck
from tinytransformer.tensor import apply

REPO = Path(__file__).resolve().parents[1]


def test_rel_error_values():
    assert tt.rel_error(1.0, 1.0) == 0.0
    assert tt.rel_error(1.0, 1.1) == pytest.approx(0.1 / 2.1, rel=1e-12)       # |a - b| / (|a| + |b|)
    assert tt.rel_error([1.0, 2.0], [1.0, 3.0]) == pytest.approx(1 / 5, rel=1e-12)   # the largest element
    assert tt.rel_error(np.zeros(3), np.zeros(3)) == 0.0
    assert tt.rel_error(1e-10, 0.0) == pytest.approx(1e-2, rel=1e-12)          # denominator floored at 1e-8


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
    assert all(r.passed and r.max_rel_error < 1e-6 for r in results)


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
    assert results[0].max_rel_error > 1e-2 and results[1].max_rel_error < 1e-6


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


# ---------------------------------------------------------------------------
# `python -m tinytransformer gradcheck`

def test_gradcheck_command_prints_a_passing_row_for_every_op_input(capsys):
    assert main(["gradcheck"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.endswith(("pass", "FAIL"))]
    expected = [(check.name, name) for check in CHECKS
                for name, x in check.make_inputs(np.random.default_rng(0)).items() if x.dtype.kind == "f"]
    assert len(rows) == len(expected)
    for row, (op, input_name) in zip(rows, expected):
        assert row.startswith(op) and row.split()[-3] == input_name and row.endswith("pass")
    assert f"{len(expected)} of {len(expected)} gradients agree with finite differences" in out
    assert "FAIL" not in out


def test_gradcheck_command_fails_when_an_op_is_wrong(capsys, monkeypatch):
    broken = OpCheck("broken softmax", WRONG_OPS["softmax without its correction term"][0],
                     lambda r: {"x": r.standard_normal((2, 3))})
    monkeypatch.setattr(gradcheck_every_op, "CHECKS", [CHECKS[0], broken])
    assert main(["gradcheck"]) == 1
    out = capsys.readouterr().out
    assert "broken softmax" in out and "FAIL" in out
    assert "3 of 4 gradients agree with finite differences; 1 FAILED" in out


def test_python_m_tinytransformer_gradcheck_exits_0():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "tinytransformer", "gradcheck"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pass" in done.stdout and "FAIL" not in done.stdout
    for check in CHECKS:
        assert check.name in done.stdout


def test_gradcheck_refuses_a_function_that_returns_more_than_one_tensor(rng):
    q = rng.standard_normal((2, 3, 4))
    with pytest.raises(TypeError, match=r"gradcheck: fn must return one Tensor, got tuple"):
        tt.gradcheck(tt.functional.attention, q, q, q)
