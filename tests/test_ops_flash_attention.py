"""ops/flash_attention.py: tiled attention equals the ordinary op, forward and backward, on every shape and mask."""
import tracemalloc

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer import ops
from tinytransformer.gradcheck import PASS_ERROR

from helpers import keep_mask


def causal(T_q, T_k):
    return lambda rng: tt.causal_mask(T_q, T_k - T_q)


def with_empty_row(*shape):
    return keep_mask(*shape, empty_row=(1, 2))


# Every shape and mask the ordinary op's tests use (test_ops_attention.py, the grader's cases, the parity and
# gradient-check tables), and a few longer ones where blocks do not divide T: (q, k, v shapes, keep maker, scale).
SHAPES = {
    "masked, an empty row": ((2, 3, 5), (2, 4, 5), (2, 4, 6), with_empty_row(2, 3, 4), None),
    "heads, causal": ((2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 5), causal(3, 3), None),
    "2-D, no mask, scale 0.5": ((3, 4), (5, 4), (5, 2), None, 0.5),
    "padding-shaped mask": ((2, 3, 5), (2, 4, 5), (2, 4, 6), keep_mask(2, 1, 4), None),
    "heads, causal, scale 0.3": ((2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 5), causal(3, 3), 0.3),
    "causal, one head": ((1, 4, 3), (1, 4, 3), (1, 4, 3), causal(4, 4), None),
    "sliced batch, (T, T) mask": ((7, 2, 9, 4), (7, 2, 9, 4), (7, 2, 9, 4), keep_mask(9, 9), None),
    "sliced batch, (B, 1, 1, T) mask": ((5, 3, 9, 4), (5, 3, 9, 4), (5, 3, 9, 4), keep_mask(5, 1, 1, 9), None),
    "sliced batch, (B, 1, T, T) mask": ((6, 2, 9, 4), (6, 2, 9, 4), (6, 2, 9, 4), keep_mask(6, 1, 9, 9), None),
    "decoding: 3 queries after 8 cached keys": ((2, 2, 3, 4), (2, 2, 11, 4), (2, 2, 11, 4), causal(3, 11), None),
    "a 1-D mask over the keys": ((2, 3, 5), (2, 4, 5), (2, 4, 6), lambda rng: np.array([True, False, True, True]),
                                 None),
    "long, T_q != T_k, an empty row": ((2, 3, 37, 8), (2, 3, 45, 8), (2, 3, 45, 6), with_empty_row(2, 3, 37, 45),
                                       None),
}
BLOCKS = [(1, 1), (2, 3), (4, 4), (5, 7), (64, 64)]     # a row at a time, blocks that do not divide T, one tile


def make(rng, shapes, dtype=np.float64):
    *arrays, keep, scale = shapes
    q, k, v = (rng.standard_normal(shape).astype(dtype) for shape in arrays)
    return q, k, v, None if keep is None else keep(rng), scale


def both(q, k, v, keep, scale, dout, block_q, block_k):
    """(out, dq, dk, dv) of the ordinary op and of the tiled one."""
    out, cache = ops.attention_forward(q, k, v, keep, scale)
    tiled, tiled_cache = ops.flash_attention_forward(q, k, v, keep, scale, block_q=block_q, block_k=block_k)
    return ((out, *ops.attention_backward(dout, cache)[:3]),
            (tiled, *ops.flash_attention_backward(dout, tiled_cache)[:3]))


@pytest.mark.parametrize("dtype, rtol, atol", [(np.float64, 1e-12, 1e-13), (np.float32, 2e-5, 2e-6)])
@pytest.mark.parametrize("name", SHAPES)
def test_equals_the_ordinary_op_forward_and_every_gradient(name, dtype, rtol, atol, rng):
    q, k, v, keep, scale = make(rng, SHAPES[name], dtype)
    dout = rng.standard_normal(q.shape[:-1] + v.shape[-1:]).astype(dtype)
    for block_q, block_k in BLOCKS:
        ordinary, tiled = both(q, k, v, keep, scale, dout, block_q, block_k)
        for what, a, b in zip(("out", "dq", "dk", "dv"), ordinary, tiled):
            assert b.dtype == dtype and b.shape == a.shape, what
            assert np.isfinite(b).all(), what
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=f"{what}, blocks {block_q, block_k}")


@pytest.mark.parametrize("name", ["masked, an empty row", "heads, causal", "2-D, no mask, scale 0.5",
                                  "long, T_q != T_k, an empty row"])
def test_gradients_match_finite_differences(name, rng):
    q, k, v, keep, scale = make(rng, SHAPES[name])
    if q.shape[-2] > 5:                       # the long case: one sequence and head, 11 queries and 13 keys
        q, k, v, keep = q[1:, 1:, :11], k[1:, 1:, :13], v[1:, 1:, :13], keep[1:, 1:, :11, :13]
    results = tt.gradcheck(lambda q, k, v: F.flash_attention(q, k, v, keep, scale, block_q=2, block_k=3),
                           q, k, v, names=["q", "k", "v"], rng=rng)
    for r in results:
        assert r.passed and r.relative_error < 1e-8, r


def test_a_fully_masked_row_gives_zero_output_and_zero_gradients(rng):
    q, k, v, keep, _ = make(rng, SHAPES["masked, an empty row"])
    out, cache = ops.flash_attention_forward(q, k, v, keep, block_q=2, block_k=3)
    dq, dk, dv, dkeep = ops.flash_attention_backward(rng.standard_normal(out.shape), cache)
    np.testing.assert_array_equal(out[1, 2], 0.0)
    np.testing.assert_array_equal(dq[1, 2], 0.0)
    assert cache[4][1, 2] == 0.0 and np.isfinite(cache[4]).all()         # L of the empty row: 0, not -inf
    assert dkeep is None


def test_every_key_masked_everywhere_is_zeros_not_nan(rng):
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 4))
    out, cache = ops.flash_attention_forward(q, k, v, np.zeros((3, 5), bool), block_q=2, block_k=2)
    grads = ops.flash_attention_backward(rng.standard_normal(out.shape), cache)
    for a in (out, *grads[:3]):
        np.testing.assert_array_equal(a, 0.0)


def test_tiles_the_mask_drops_whole_are_skipped(rng, monkeypatch):
    """A causal mask over 8 positions in tiles of 2 x 2: the 6 tiles above the diagonal are never computed."""
    computed = []
    tile_scores = ops.flash_attention.tile_scores
    monkeypatch.setattr(ops.flash_attention, "tile_scores",
                        lambda q, k, tile_keep, scale, rows, cols: computed.append((rows.start, cols.start)) or
                        tile_scores(q, k, tile_keep, scale, rows, cols))
    q, k, v = (rng.standard_normal((2, 8, 4)) for _ in range(3))
    out, cache = ops.flash_attention_forward(q, k, v, tt.causal_mask(8), block_q=2, block_k=2)
    ops.flash_attention_backward(rng.standard_normal(out.shape), cache)
    below = [(i, j) for i in range(0, 8, 2) for j in range(0, 8, 2) if j <= i]
    assert sorted(computed) == sorted(2 * below)                          # forward and backward, 10 tiles each


def test_huge_scores_stay_finite(rng):
    # the running max keeps every exponent <= 0: scores of 1e4 would overflow e^s in float32 and float64
    q, k, v = (100 * rng.standard_normal((2, 9, 4)) for _ in range(3))
    ordinary, tiled = both(q, k, v, None, 1.0, rng.standard_normal((2, 9, 4)), 2, 2)
    for a, b in zip(ordinary, tiled):
        assert np.isfinite(b).all()
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)


def test_backward_writes_into_neither_dout_nor_the_cache(rng):
    q, k, v, keep, _ = make(rng, SHAPES["masked, an empty row"])
    out, cache = ops.flash_attention_forward(q, k, v, keep, block_q=2, block_k=3)
    dout = rng.standard_normal(out.shape)
    saved = [dout.copy()] + [a.copy() for a in cache if isinstance(a, np.ndarray)]
    ops.flash_attention_backward(dout, cache)
    for before, after in zip(saved, [dout] + [a for a in cache if isinstance(a, np.ndarray)]):
        np.testing.assert_array_equal(before, after)


def relative_errors(q, k, v, keep, wrong_cache, rng):
    """The relative error of each gradient the backward gives on wrong_cache, against finite differences."""
    out, cache = ops.flash_attention_forward(q, k, v, keep, block_q=2, block_k=2)
    dout = rng.standard_normal(out.shape)
    grads = ops.flash_attention_backward(dout, wrong_cache(cache))
    errors = []
    for i, x in enumerate((q, k, v)):
        def f(x_i, i=i):
            inputs = [q, k, v]
            inputs[i] = x_i
            return ops.flash_attention_forward(*inputs, keep, block_q=2, block_k=2)[0]
        errors.append(tt.relative_error(grads[i], tt.numerical_gradient(f, x.copy(), dout)))
    return errors


def test_a_wrong_backward_is_caught(rng):
    """Two classic mistakes, made by handing the backward a wrong cache: L saved before the last key block, and
    D computed from an output never divided by the row's sum. The same check passes the right cache."""
    q, k, v = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 7, 4)), rng.standard_normal((2, 7, 3))
    keep = keep_mask(2, 5, 7)(rng)

    def L_before_the_last_block(cache):
        _, early = ops.flash_attention_forward(q, k[:, :6], v[:, :6], keep[..., :6], block_q=2, block_k=2)
        return cache[:4] + (early[4],) + cache[5:]                        # L of keys 0..5: key block 3 left out

    def output_not_divided(cache):
        L = cache[4]
        return cache[:3] + (cache[3] * np.exp(L)[..., None],) + cache[4:]  # D from a wrong output

    assert max(relative_errors(q, k, v, keep, lambda cache: cache, rng)) < 1e-8
    for wrong in (L_before_the_last_block, output_not_divided):
        assert max(relative_errors(q, k, v, keep, wrong, rng)) > 100 * PASS_ERROR, wrong.__name__


def test_memory_is_one_tile_not_the_whole_array():
    """Peak memory of the forward and backward at T = 512: the ordinary op holds (T, T) probabilities, the tiled
    one tiles of (block_q, block_k) only."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 512, 8)).astype(np.float32) for _ in range(3))
    keep = tt.causal_mask(512)

    def peak(forward, backward, **options):
        tracemalloc.start()
        out, cache = forward(q, k, v, keep, **options)
        backward(out, cache)
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top

    whole = 512 * 512 * 4                                                 # one (T, T) float32 array: 1 MiB
    assert peak(ops.attention_forward, ops.attention_backward) > whole
    assert peak(ops.flash_attention_forward, ops.flash_attention_backward, block_q=64, block_k=64) < whole / 4


@pytest.mark.parametrize("change, message", [
    (dict(block_q=0), "flash_attention: block_q must be an integer >= 1, got 0"),
    (dict(block_k=2.5), "flash_attention: block_k must be an integer >= 1, got 2.5"),
    (dict(k=np.zeros((2, 4, 3))), "flash_attention: q has d_k=5 but k has d_k=3"),
    (dict(keep=np.ones((3, 3), bool)), r"flash_attention: mask of shape \(3, 3\) does not broadcast"),
    (dict(scale=float("nan")), "flash_attention: scale must be a finite number, got nan"),
])
def test_bad_input_is_refused_in_one_line(change, message, rng):
    inputs = dict(q=rng.standard_normal((2, 3, 5)), k=rng.standard_normal((2, 4, 5)), v=rng.standard_normal((2, 4, 6)))
    with pytest.raises(ValueError, match=message):
        ops.flash_attention_forward(**{**inputs, **change})


def test_functional_flash_attention_on_the_tape_equals_attention(rng):
    q, k, v = (tt.Tensor(rng.standard_normal((2, 2, 6, 4)), requires_grad=True) for _ in range(3))
    dout = rng.standard_normal((2, 2, 6, 4))
    grads = []
    for fn in (lambda: F.attention(q, k, v, tt.causal_mask(6))[0],
               lambda: F.flash_attention(q, k, v, tt.causal_mask(6), block_q=4, block_k=4)):
        for t in (q, k, v):
            t.grad = None
        with tt.Tape() as tape:
            out = fn()
        tape.backward(out, dout)
        grads.append([out.data] + [t.grad for t in (q, k, v)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-13)
