"""Property tests of the ops: random shapes and values (derandomized, so every run is the same)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer import ops



PROPERTY = settings(max_examples=25, deadline=None, derandomize=True, database=None)



dims = st.integers(min_value=1, max_value=4)



shapes = st.lists(dims, min_size=1, max_size=3).map(tuple)



seeds = st.integers(min_value=0, max_value=2**32 - 1)



@PROPERTY
@given(shape=shapes, seed=seeds, data=st.data())
def test_property_softmax_rows_sum_to_one_and_backward_matches(shape, seed, data):
    axis = data.draw(st.integers(min_value=-len(shape), max_value=len(shape) - 1), label="axis")
    x = 3 * np.random.default_rng(seed).standard_normal(shape)
    np.testing.assert_allclose(F.softmax(x, axis=axis).data.sum(axis=axis), 1.0, rtol=1e-12)
    tt.gradcheck(lambda t: F.softmax(t, axis=axis), x, rng=seed)



@PROPERTY
@given(lead=st.lists(dims, max_size=2).map(tuple), d_in=dims, d_out=dims, seed=seeds)
def test_property_linear_backward_matches_finite_differences(lead, d_in, d_out, seed):
    r = np.random.default_rng(seed)
    x, W, b = r.standard_normal((*lead, d_in)), r.standard_normal((d_in, d_out)), r.standard_normal(d_out)
    assert len(tt.gradcheck(F.linear, x, W, b, rng=seed)) == 3



@PROPERTY
@given(batch=st.lists(dims, max_size=2).map(tuple), n=dims, m=dims, p=dims, seed=seeds)
def test_property_matmul_backward_matches_finite_differences(batch, n, m, p, seed):
    r = np.random.default_rng(seed)
    tt.gradcheck(F.matmul, r.standard_normal((*batch, n, m)), r.standard_normal((m, p)), rng=seed)



@st.composite
def broadcast_pair(draw):
    """A shape, and a bigger shape it broadcasts to (extra leading axes, size-1 axes stretched)."""
    shape = draw(st.lists(st.integers(1, 3), max_size=3).map(tuple))
    stretched = tuple(draw(st.integers(1, 3)) if n == 1 else n for n in shape)
    lead = draw(st.lists(st.integers(1, 3), max_size=2).map(tuple))
    return shape, lead + stretched



@PROPERTY
@given(pair=broadcast_pair(), seed=seeds)
def test_property_unbroadcast_is_the_adjoint_of_broadcasting(pair, seed):
    shape, big = pair
    r = np.random.default_rng(seed)
    a, grad = r.standard_normal(shape), r.standard_normal(big)
    summed = ops.unbroadcast(grad, shape)
    assert summed.shape == shape
    # sum(broadcast(a) * grad) == sum(a * unbroadcast(grad)): each copy of a_i sends its gradient back to a_i
    np.testing.assert_allclose(np.sum(np.broadcast_to(a, big) * grad), np.sum(a * summed), rtol=1e-10, atol=1e-12)



@PROPERTY
@given(lead=st.lists(dims, max_size=2).map(tuple), D=st.integers(2, 6), seed=seeds)
def test_property_layer_norm_normalizes_and_backward_matches(lead, D, seed):
    r = np.random.default_rng(seed)
    x = 1 + 2 * r.standard_normal((*lead, D))
    y = F.layer_norm(x, np.ones(D), np.zeros(D)).data
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    var = x.var(axis=-1)
    np.testing.assert_allclose(y.var(axis=-1), var / (var + 1e-5), rtol=1e-9)
    tt.gradcheck(F.layer_norm, x, r.standard_normal(D), r.standard_normal(D), rng=seed)

