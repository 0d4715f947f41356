"""ops/basic.py and ops/linear.py: relu, gelu, silu, dropout and the linear layer, forward values and behaviour."""

import numpy as np

import tinytransformer as tt
from tinytransformer import functional as F

from helpers import param


def test_gelu_tanh_form_values():
    x = np.array([1.0, -1.0, 2.0, 0.5, 0.0])
    # torch.nn.functional.gelu(x, approximate="tanh") in float64
    np.testing.assert_allclose(F.gelu(x).data, [0.8411919906, -0.1588080094, 1.9545976941, 0.3457140098, 0.0],
                               atol=1e-10)
    # the tanh form is odd up to x: gelu(x) - gelu(-x) = x
    np.testing.assert_allclose(F.gelu(x).data - F.gelu(-x).data, x, atol=1e-15)



def test_relu_values():
    np.testing.assert_array_equal(F.relu(np.array([-2.0, -0.1, 0.3, 4.0])).data, [0.0, 0.0, 0.3, 4.0])



def test_linear_is_x_times_W_plus_b(rng):
    x, W, b = rng.standard_normal((2, 3, 5)), rng.standard_normal((5, 4)), rng.standard_normal(4)
    np.testing.assert_allclose(F.linear(x, W, b).data, np.einsum("btd,de->bte", x, W) + b, rtol=1e-12)
    np.testing.assert_allclose(F.linear(x, W).data, np.einsum("btd,de->bte", x, W), rtol=1e-12)



def test_dropout_same_seed_gives_the_same_mask_bit_for_bit(rng):
    x = rng.standard_normal((4, 50))
    a = F.dropout(x, 0.3, np.random.default_rng(5)).data
    b = F.dropout(x, 0.3, np.random.default_rng(5)).data
    c = F.dropout(x, 0.3, np.random.default_rng(6)).data
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)



def test_dropout_takes_a_seed_the_same_mask_each_call_or_a_generator_a_fresh_one(rng):
    x = rng.standard_normal((4, 50))
    seeded = [F.dropout(x, 0.3, 5).data for _ in range(2)]
    np.testing.assert_array_equal(seeded[0], seeded[1])
    np.testing.assert_array_equal(seeded[0], F.dropout(x, 0.3, np.random.default_rng(5)).data)
    generator = np.random.default_rng(5)
    assert not np.array_equal(F.dropout(x, 0.3, generator).data, F.dropout(x, 0.3, generator).data)


def test_dropout_is_the_identity_when_not_training(rng):
    x = rng.standard_normal((4, 5))
    np.testing.assert_array_equal(F.dropout(x, 0.5, np.random.default_rng(0), training=False).data, x)
    np.testing.assert_array_equal(F.dropout(x, 0.0, np.random.default_rng(0)).data, x)



def test_dropout_zeroes_about_p_and_scales_the_rest_to_keep_the_mean():
    x = np.ones((200, 500))
    y = F.dropout(x, 0.3, np.random.default_rng(0)).data
    assert abs((y == 0).mean() - 0.3) < 0.01
    np.testing.assert_allclose(y[y != 0], 1 / 0.7, rtol=1e-12)    # inverted dropout
    assert abs(y.mean() - 1.0) < 0.02



def test_dropout_backward_uses_the_forward_mask(rng):
    x = param(rng.standard_normal((3, 6)))
    with tt.Tape() as tape:
        y = F.dropout(x, 0.5, np.random.default_rng(1))
    dout = rng.standard_normal((3, 6))
    tape.backward(y, dout)
    np.testing.assert_allclose(x.grad, dout * y.data / x.data, rtol=1e-12)   # 0 or dout / (1 - p)



def test_silu_values_and_no_overflow_far_out():
    x = np.array([1.0, -1.0, 2.0, 0.0, -800.0, 800.0])
    # x / (1 + e^-x): 1 / (1 + e^-1) = 0.7310585786, 2 / (1 + e^-2) = 1.7615941560
    with np.errstate(all="raise"):                      # the tanh form: no overflow in e^800
        y = F.silu(x).data
    np.testing.assert_allclose(y, [0.7310585786, -0.2689414214, 1.7615941560, 0.0, 0.0, 800.0], atol=1e-10)
    np.testing.assert_allclose(F.silu(x[:4]).data - F.silu(-x[:4]).data, x[:4], atol=1e-15)   # as gelu: odd up to x
