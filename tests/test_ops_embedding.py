"""ops/embedding.py: the lookup and its scatter-add backward, the sinusoidal positions."""
import math

import numpy as np

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer import ops



def test_sinusoidal_positions_match_the_papers_formula_at_hand_computed_entries():
    # P[t, 2i] = sin(t / 10000^(2i/d_model)),  P[t, 2i+1] = cos(t / 10000^(2i/d_model))
    P = tt.sinusoidal_positions(4, 4)
    assert P.shape == (4, 4) and P.dtype == np.float64
    np.testing.assert_allclose(P[0], [0.0, 1.0, 0.0, 1.0], atol=1e-15)         # t = 0: sin 0, cos 0
    np.testing.assert_allclose(P[1], [0.8414709848, 0.5403023059,              # sin 1, cos 1
                                      0.0099998333, 0.9999500004], atol=1e-10)  # sin 0.01, cos 0.01
    np.testing.assert_allclose(P[3, :2], [0.1411200081, -0.9899924966], atol=1e-10)  # sin 3, cos 3
    np.testing.assert_allclose(P[2, 2], 0.0199986667, atol=1e-10)              # sin(2 / 10000^(2/4))



def test_sinusoidal_positions_odd_d_model_ends_with_a_sine_column():
    P = tt.sinusoidal_positions(2, 5)
    assert P.shape == (2, 5)
    np.testing.assert_allclose(P[1, 4], math.sin(1 / 10000 ** (4 / 5)), rtol=1e-12)



def test_positional_encoding_adds_the_positions(rng):
    x = rng.standard_normal((2, 3, 6))
    y = F.positional_encoding(x).data
    assert y.shape == x.shape                      # added, not concatenated
    np.testing.assert_allclose(y, x + tt.sinusoidal_positions(3, 6), rtol=1e-12)



def test_embedding_picks_rows(rng):
    table = rng.standard_normal((5, 3))
    ids = np.array([[4, 0], [4, 2]])
    out = F.embedding(ids, table).data
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out[1, 0], table[4])



def test_embedding_backward_with_repeated_ids_is_a_scatter_add(rng):
    ids = np.array([[3, 1, 3], [0, 3, 1]])          # id 3 three times, id 1 twice, id 2 never
    dout = rng.standard_normal((2, 3, 4))
    _, dtable = ops.embedding_backward(dout, ops.embedding_forward(ids, rng.standard_normal((5, 4)))[1])
    expected = np.zeros((5, 4))
    for b in range(2):
        for t in range(3):
            expected[ids[b, t]] += dout[b, t]
    np.testing.assert_allclose(dtable, expected, rtol=1e-12)
    np.testing.assert_array_equal(dtable[[2, 4]], 0.0)

