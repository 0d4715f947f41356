"""The tape: what it records, how it replays, and what it refuses to do."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer.course.cases import CHECKS
from tinytransformer.tools.profile import ProfilingTape

from helpers import param


def test_a_tensor_used_twice_gets_both_gradients(rng):
    # diamond: x feeds two branches that meet again, y = (3x) * (2x) = 6x^2, dy/dx = 12x
    x = param(rng.standard_normal((2, 3)))
    dout = rng.standard_normal((2, 3))
    with tt.Tape() as tape:
        y = (x * 3.0) * (x * 2.0)
    tape.backward(y, dout)
    np.testing.assert_allclose(x.grad, 12 * x.data * dout, rtol=1e-12)


def test_a_tensor_used_twice_in_one_op(rng):
    x = param(rng.standard_normal(4))
    with tt.Tape() as tape:
        loss = (x * x + x).sum()                   # d/dx = 2x + 1
    tape.backward(loss)
    np.testing.assert_allclose(x.grad, 2 * x.data + 1, rtol=1e-12)


def test_broadcast_inputs_get_gradients_of_their_own_shape(rng):
    x, b, s = param(rng.standard_normal((2, 3, 5))), param(rng.standard_normal(5)), param(rng.standard_normal((3, 1)))
    dout = rng.standard_normal((2, 3, 5))
    with tt.Tape() as tape:
        y = x * s + b                              # b (5,) and s (3, 1) are stretched to (2, 3, 5)
    tape.backward(y, dout)
    assert b.grad.shape == (5,) and s.grad.shape == (3, 1)
    np.testing.assert_allclose(b.grad, dout.sum(axis=(0, 1)), rtol=1e-12)
    np.testing.assert_allclose(s.grad, (dout * x.data).sum(axis=(0, 2))[:, None], rtol=1e-12)
    np.testing.assert_allclose(x.grad, dout * s.data, rtol=1e-12)


def test_every_tensor_operator_backpropagates(rng):
    def f(a, b):
        y = (2.0 - a) * b / (1.5 + b * b) - 1.0 / (a * a + 1.0)    # (3, 4), every arithmetic operator
        return (-(y @ b.T)).T.reshape(9).mean() + y.transpose().sum()
    tt.gradcheck(f, rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng=1)


def test_a_chain_of_5000_ops_has_no_recursion_limit():
    x = param(2.0)
    with tt.Tape() as tape:
        y = x
        for _ in range(5000):                      # far deeper than Python's recursion limit (1000)
            y = y * 1.001
    assert len(tape) == 5000
    tape.backward(y)
    np.testing.assert_allclose(x.grad, 1.001 ** 5000, rtol=1e-10)


def test_a_released_tape_refuses_a_second_backward(rng):
    x = param(rng.standard_normal(3))
    with tt.Tape() as tape:
        loss = (x * x).sum()
    tape.backward(loss)
    assert len(tape) == 0 and "released" in str(tape)             # the caches are freed
    with pytest.raises(RuntimeError, match="backward: this tape was already replayed"):
        tape.backward(loss)
    with pytest.raises(RuntimeError, match="already replayed"):
        loss.backward()
    np.testing.assert_allclose(x.grad, 2 * x.data, rtol=1e-12)   # the refused calls added nothing


def test_nothing_is_recorded_outside_a_tape(rng):
    x = param(rng.standard_normal((2, 3)))
    y = F.softmax(x * 2.0)                         # no tape: plain inference
    assert not y.requires_grad and y._tape is None
    with pytest.raises(RuntimeError, match="not computed inside a `with Tape\\(\\)` block"):
        y.sum().backward()

    with tt.Tape() as tape:
        z = x * 2.0
    after = z * 3.0                                # after the block: not recorded
    assert len(tape) == 1 and after._tape is None and not after.requires_grad


def test_ops_on_constants_are_not_recorded(rng):
    with tt.Tape() as tape:
        y = F.softmax(tt.Tensor(rng.standard_normal(3))) * np.ones(3)   # nothing needs a gradient
    assert len(tape) == 0 and not y.requires_grad


def test_print_tape_lists_op_names_and_shapes(rng, capsys):
    x, W = param(rng.standard_normal((2, 3, 5))), param(rng.standard_normal((5, 4)))
    with tt.Tape() as tape:
        loss = (F.softmax(F.linear(x, W)) * 2.0).sum()
    print(tape)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Tape with 4 records (op, input shapes -> output shape):"
    assert lines[1].split() == ["0", "linear", "(2,", "3,", "5)", "(5,", "4)", "->", "(2,", "3,", "4)"]
    assert lines[2].split() == ["1", "softmax", "(2,", "3,", "4)", "->", "(2,", "3,", "4)"]
    assert lines[3].split() == ["2", "mul", "(2,", "3,", "4)", "const", "->", "(2,", "3,", "4)"]
    assert lines[4].split() == ["3", "sum", "(2,", "3,", "4)", "->", "()"]
    assert loss.shape == ()


def test_gradients_accumulate_across_backward_calls_until_cleared(rng):
    x = param(rng.standard_normal(3))
    for _ in range(2):
        with tt.Tape() as tape:
            loss = (x * x).sum()
        tape.backward(loss)
    np.testing.assert_allclose(x.grad, 2 * (2 * x.data), rtol=1e-12)
    x.grad = None
    with tt.Tape() as tape:
        loss = (x * x).sum()
    tape.backward(loss)
    np.testing.assert_allclose(x.grad, 2 * x.data, rtol=1e-12)


def test_loss_backward_equals_tape_backward(rng):
    data = rng.standard_normal((2, 3))
    grads = []
    for use_tensor_method in (False, True):
        x = param(data)
        with tt.Tape() as tape:
            loss = F.log_softmax(x).mean()
        loss.backward() if use_tensor_method else tape.backward(loss)
        grads.append(x.grad)
    np.testing.assert_array_equal(grads[0], grads[1])
    assert np.abs(grads[0]).max() > 0


def test_backward_of_a_non_scalar_needs_grad(rng):
    x = param(rng.standard_normal((2, 3)))
    with tt.Tape() as tape:
        y = x * 2.0
    with pytest.raises(ValueError, match=r"backward: output has shape \(2, 3\); pass grad="):
        tape.backward(y)
    with pytest.raises(ValueError, match=r"backward: grad has shape \(3,\) but output has \(2, 3\)"):
        tape.backward(y, np.ones(3))
    dout = rng.standard_normal((2, 3))
    tape.backward(y, dout)
    np.testing.assert_allclose(x.grad, 2 * dout, rtol=1e-12)


def test_requires_grad_needs_floats():
    with pytest.raises(TypeError, match="Tensor: requires_grad needs floating-point data, got dtype int"):
        tt.Tensor(np.arange(3), requires_grad=True)


@pytest.mark.parametrize("check", CHECKS, ids=[check.name for check in CHECKS])
def test_float32_stays_float32_through_every_op(check):
    inputs = check.make_inputs(np.random.default_rng(0))
    tensors = [param(x, np.float32) if isinstance(x, np.ndarray) and x.dtype.kind == "f" else x
               for x in inputs.values()]
    with tt.Tape() as tape:
        out = check.fn(*tensors)
        out = out[0] if isinstance(out, tuple) else out
    assert out.dtype == np.float32
    tape.backward(out, np.ones(out.shape, dtype=np.float32))
    for t in tensors:
        if isinstance(t, tt.Tensor):
            assert t.grad.dtype == np.float32 and t.grad.shape == t.shape


def nested_tapes(x):
    with tt.Tape() as outer:
        a = x * 2.0
        with tt.Tape() as inner:
            b = a * 3.0
        c = (b * 4.0).sum()
    return outer, inner, a, b, c


def test_nested_tapes_each_record_every_op_inside_their_block(rng):
    x = param(rng.standard_normal(3))
    outer, inner, a, b, c = nested_tapes(x)
    assert len(inner) == 1 and len(outer) == 4      # b = a * 3 is inside both blocks
    assert c._tape is outer and b._tape is inner    # loss.backward() replays the innermost tape
    outer.backward(c)
    np.testing.assert_allclose(x.grad, np.full(3, 24.0), rtol=1e-12)   # c = sum(24 x)

    x = param(rng.standard_normal(3))
    outer, inner, a, b, c = nested_tapes(x)
    b.backward(np.ones(3))                          # the inner tape alone stops at a
    np.testing.assert_allclose(a.grad, np.full(3, 3.0), rtol=1e-12)
    assert x.grad is None


def test_T_reverses_every_axis_as_numpy_does(rng):
    x = param(rng.standard_normal((2, 3, 4)))
    with tt.Tape():
        y = x.T
    assert y.shape == (4, 3, 2)
    np.testing.assert_array_equal(y.data, x.data.T)
    dout = rng.standard_normal((4, 3, 2))
    y.backward(dout)
    np.testing.assert_array_equal(x.grad, dout.T)               # the gradient is reversed back


def test_the_plain_tape_has_no_timers_and_the_profiling_tape_times_every_op(rng):
    x, W = param(rng.standard_normal((4, 3))), param(rng.standard_normal((3, 5)))
    assert not hasattr(tt.Tape(), "seconds")
    with ProfilingTape() as tape:
        loss = F.relu(F.linear(x, W)).sum()
    tape.backward(loss)
    assert set(tape.seconds) == {"linear", "relu", "sum"}
    for name, totals in tape.seconds.items():
        assert totals["calls"] == 1 and totals["forward"] > 0 and totals["backward"] > 0, name
    with tt.Tape() as plain:                       # the same gradients as the plain tape's
        again = F.relu(F.linear(x, W)).sum()
    first_grad = W.grad.copy()
    W.grad = None
    plain.backward(again)
    np.testing.assert_array_equal(W.grad, first_grad)
