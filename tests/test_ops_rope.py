"""ops/rope.py: rotary position embedding turns pairs by their angles, keeps lengths, and makes q . k depend
on the offset between positions only; its backward is the inverse rotation."""

import numpy as np
import pytest

from tinytransformer import functional as F, ops


def test_rope_turns_each_pair_by_position_times_its_frequency(rng):
    x = rng.standard_normal((3, 6))                       # T = 3, d_k = 6: pairs (0, 1), (2, 3), (4, 5)
    out = F.rope(x, np.array([0, 1, 5])).data
    for t, p in enumerate([0, 1, 5]):
        for i in range(3):
            angle = p * 10000.0 ** (-2 * i / 6)
            c, s = np.cos(angle), np.sin(angle)
            np.testing.assert_allclose(out[t, 2 * i], c * x[t, 2 * i] - s * x[t, 2 * i + 1], rtol=1e-12)
            np.testing.assert_allclose(out[t, 2 * i + 1], s * x[t, 2 * i] + c * x[t, 2 * i + 1], rtol=1e-12)
    np.testing.assert_array_equal(out[0], x[0])             # position 0: no rotation at all


def test_rope_keeps_every_pairs_length(rng):
    x = rng.standard_normal((2, 4, 8))
    out = F.rope(x, np.array([3, 1, 4, 100])).data
    pair_lengths = lambda a: np.hypot(a[..., 0::2], a[..., 1::2])         # noqa: E731
    np.testing.assert_allclose(pair_lengths(out), pair_lengths(x), rtol=1e-12)


def test_q_dot_k_after_rope_depends_only_on_the_offset_between_positions(rng):
    q, k = rng.standard_normal(8), rng.standard_normal(8)
    def score(m, n):
        return float(F.rope(q[None], np.array([m])).data[0] @ F.rope(k[None], np.array([n])).data[0])
    for offset in (0, 1, 3, -2):
        scores = [score(m, m + offset) for m in (0, 5, 17, 60)]
        np.testing.assert_allclose(scores, scores[0], rtol=1e-9)
    assert abs(score(0, 1) - score(0, 3)) > 1e-3                          # and the offset does matter


def test_rope_backward_is_the_inverse_rotation(rng):
    x, positions = rng.standard_normal((2, 5, 4)), np.array([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]])
    out, cache = ops.rope_forward(x, positions)
    dx, dpositions = ops.rope_backward(out, cache)        # the inverse rotation of the output is x again
    np.testing.assert_allclose(dx, x, rtol=1e-12, atol=1e-15)
    assert dpositions is None


def test_positions_broadcast_over_heads_and_float32_stays_float32(rng):
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)            # (B, h, T, d_k)
    positions = np.array([[0, 1, 2, 3], [4, 5, 6, 7]])                   # (B, T)
    out = F.rope(x, positions[:, None, :]).data                         # (B, 1, T) over the heads
    assert out.dtype == np.float32
    for b in range(2):
        np.testing.assert_allclose(out[b], F.rope(x[b], positions[b]).data, rtol=1e-6)
    with pytest.raises(ValueError, match=r"rope: positions of shape \(2, 4\) do not broadcast"):
        F.rope(x, positions)                              # (B, T) against (B, h, T): the heads axis is missing


def test_theta_sets_the_slowest_frequency(rng):
    x = rng.standard_normal((1, 4))
    out = F.rope(x, np.array([2]), theta=100.0).data
    angle = 2 * 100.0 ** (-2 / 4)                                        # pair 1: 2 * theta^(-2/4) = 0.2
    np.testing.assert_allclose(out[0, 2], np.cos(angle) * x[0, 2] - np.sin(angle) * x[0, 3], rtol=1e-12)
