"""ops/fast_numpy.py: each faster idiom computes what its plain NumPy expression computes."""
import numpy as np
import pytest

from tinytransformer.ops import fast_numpy as fast

SHAPES = [(7,), (3, 11), (2, 4, 11, 10), (64, 4, 11, 11)]


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_each_idiom_equals_its_plain_expression(shape, dtype, rtol, rng):
    x = rng.standard_normal(shape).astype(dtype)
    cases = [(fast.max_last(x), x.max(axis=-1, keepdims=True))]
    if x.ndim >= 2:
        y = rng.standard_normal(shape).astype(dtype)
        cases.append((fast.matmul_transposed(x, y), x @ y.swapaxes(-1, -2)))
    for got, expected in cases:
        assert got.shape == expected.shape and got.dtype == dtype
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def test_max_last_keeps_minus_infinity_and_exact_values():
    x = np.array([[-np.inf, -np.inf, -np.inf], [1.0, 7.5, -2.0]])
    np.testing.assert_array_equal(fast.max_last(x), [[-np.inf], [7.5]])
