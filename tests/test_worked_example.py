"""worked_example.py: the course's 3-input self-attention example, computed by hand."""
import numpy as np

import tinytransformer as tt
from tinytransformer.course import worked_example as example


def test_worked_example_gives_the_hand_computed_attention_outputs():
    # Q = X W_q, K = X W_k, V = X W_v, then softmax(Q K^T) V without the 1/sqrt(d_k) scale,
    # as the example is usually worked by hand
    Q, K, V = (example.X @ W for W in (example.W_Q, example.W_K, example.W_V))
    np.testing.assert_array_equal(Q[0], [1, 0, 2])
    np.testing.assert_array_equal(K @ Q[0], [2, 4, 4])            # scores of input 1
    out, probs = tt.functional.attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(probs[0], [0.0634, 0.4683, 0.4683], atol=1e-4)
    np.testing.assert_allclose(out.data, [[1.9366, 6.6831, 1.5951],
                                          [2.0000, 7.9640, 0.0540],   # 1.999994 rounds to 2.0000
                                          [1.9997, 7.7599, 0.3584]], atol=1e-4)
