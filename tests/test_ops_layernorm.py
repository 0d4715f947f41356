"""ops/layernorm.py: layer and RMS normalisation normalise, scale and shift, and stay finite on a constant row."""

import numpy as np

import tinytransformer as tt
from tinytransformer import functional as F

from helpers import param


def test_layer_norm_output_has_mean_zero_and_variance_one(rng):
    x = 2 + 3 * rng.standard_normal((2, 3, 8))
    y = F.layer_norm(x, np.ones(8), np.zeros(8)).data
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    var = x.var(axis=-1)                           # biased, as torch.nn.LayerNorm
    np.testing.assert_allclose(y.var(axis=-1), var / (var + 1e-5), rtol=1e-12)   # eps inside the root
    assert np.abs(y.var(axis=-1) - 1).max() < 1e-5



def test_layer_norm_scales_by_gamma_and_shifts_by_beta(rng):
    x, gamma, beta = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4)
    xhat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(F.layer_norm(x, gamma, beta).data, gamma * xhat + beta, rtol=1e-12)



def test_layer_norm_on_a_constant_row_is_finite(rng):
    x = param(np.full((2, 5), 3.0))
    gamma, beta = param(rng.standard_normal(5)), param(rng.standard_normal(5))
    with tt.Tape() as tape:
        y = F.layer_norm(x, gamma, beta)
    tape.backward(y, rng.standard_normal((2, 5)))
    np.testing.assert_allclose(y.data, np.broadcast_to(beta.data, (2, 5)), atol=1e-12)   # xhat = 0
    for t in (x, gamma, beta):
        assert np.isfinite(t.grad).all()
    np.testing.assert_allclose(gamma.grad, 0.0, atol=1e-12)                              # dgamma = sum dy * xhat



def test_rms_norm_divides_by_the_root_mean_square_and_scales_by_gamma(rng):
    x, gamma = 2 + 3 * rng.standard_normal((2, 3, 8)), rng.standard_normal(8)
    expected = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5) * gamma
    np.testing.assert_allclose(F.rms_norm(x, gamma).data, expected, rtol=1e-12)
    y = F.rms_norm(x, np.ones(8)).data
    np.testing.assert_allclose(np.sqrt((y * y).mean(axis=-1)), 1.0, atol=1e-5)   # rms 1, up to eps
    assert np.abs(y.mean(axis=-1)).min() > 0.1                                    # the mean is not taken away


def test_rms_norm_of_zeros_is_finite(rng):
    x, gamma = param(np.zeros((2, 5))), param(rng.standard_normal(5))
    with tt.Tape() as tape:
        y = F.rms_norm(x, gamma)
    tape.backward(y, rng.standard_normal((2, 5)))
    np.testing.assert_array_equal(y.data, 0.0)
    assert np.isfinite(x.grad).all() and np.isfinite(gamma.grad).all()
