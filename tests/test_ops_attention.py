"""ops/attention.py: masks, masking by selection, the fused attention op, heads; fully masked rows."""
import math

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer import ops

from helpers import keep_mask, param


def test_causal_and_padding_masks():
    np.testing.assert_array_equal(tt.causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    assert tt.causal_mask(3).dtype == bool
    keep = tt.padding_mask(np.array([[5, 6, 0], [7, 0, 0]]), pad_id=0)
    np.testing.assert_array_equal(keep, [[[True, True, False]], [[True, False, False]]])   # (B, 1, T)



def test_mask_sets_dropped_scores_to_minus_infinity(rng):
    scores = rng.standard_normal((3, 3))
    out = F.mask(scores, tt.causal_mask(3)).data
    assert np.isneginf(out[np.triu_indices(3, k=1)]).all()          # selection, not -1e9
    np.testing.assert_array_equal(out[np.tril_indices(3)], scores[np.tril_indices(3)])


def test_attention_masks_by_selection_even_with_huge_scores(rng):
    # adding the 0/-inf array selects: a kept score is unchanged (x + 0 = x) and a masked one is
    # exactly -inf. The masked score here is 1e30, which a finite penalty such as -1e9 would leave
    # the largest (1e30 - 1e9 == 1e30): row 0 would attend to the masked key alone
    q = np.array([[[1e15, 0.0], [1.0, 2.0]]])                       # (1, 2, 2)
    k = np.array([[[1.0, 1.0], [1e15, 3.0]]])                       # scores: row 0 [1e15, 1e30 masked]
    v = rng.standard_normal((1, 2, 3))
    keep = np.array([[True, False], [True, True]])
    _, probs = F.attention(q, k, v, keep, scale=1.0)
    expected, _ = ops.softmax_forward(np.where(keep, q @ k.swapaxes(-1, -2), -np.inf))
    np.testing.assert_array_equal(probs, expected)
    assert probs[0, 0, 0] == 1.0 and probs[0, 0, 1] == 0.0


def test_mask_backward_passes_the_gradient_where_kept(rng):
    # -inf outputs make finite differences of mask alone nan; the table checks mask + softmax
    keep = keep_mask(2, 3, 4)(rng)
    dout = rng.standard_normal((2, 3, 4))
    dscores, dkeep = ops.mask_backward(dout, ops.mask_forward(rng.standard_normal((2, 3, 4)), keep)[1])
    np.testing.assert_array_equal(dscores, np.where(keep, dout, 0.0))
    assert dkeep is None



def test_attention_probs_are_a_distribution_with_zeros_where_masked(rng):
    q, k, v = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 4, 6))
    keep = keep_mask(2, 3, 4)(rng)
    out, probs = F.attention(q, k, v, keep)
    assert out.shape == (2, 3, 6) and probs.shape == (2, 3, 4)
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-12)
    assert (probs[~keep] == 0).all()
    np.testing.assert_allclose(out.data, probs @ v, rtol=1e-12)



def test_causal_attention_does_not_leak_future_tokens(rng):
    q, k, v = (rng.standard_normal((1, 4, 3)) for _ in range(3))
    out, _ = F.attention(q, k, v, tt.causal_mask(4))
    k2, v2 = k.copy(), v.copy()
    k2[0, 3], v2[0, 3] = 100.0, 100.0              # change only the last position's key and value
    out2, _ = F.attention(q, k2, v2, tt.causal_mask(4))
    np.testing.assert_array_equal(out.data[0, :3], out2.data[0, :3])   # positions 0..2 never saw it
    assert not np.allclose(out.data[0, 3], out2.data[0, 3])



def test_split_and_merge_heads(rng):
    x = rng.standard_normal((2, 3, 6))                     # (B, T, d_model)
    heads = F.split_heads(x, 2).data                      # (B, h, T, d_k)
    assert heads.shape == (2, 2, 3, 3)
    np.testing.assert_array_equal(heads[:, 1], x[:, :, 3:])   # head 1 holds features 3..5
    np.testing.assert_array_equal(F.merge_heads(heads).data, x)



def test_fully_masked_attention_row_gives_zero_output_and_zero_finite_gradients(rng):
    q, k, v = (param(rng.standard_normal(shape)) for shape in [(2, 3, 5), (2, 4, 5), (2, 4, 6)])
    keep = keep_mask(2, 3, 4)(rng)
    keep[1, 2, :] = False                          # query 2 of batch 1 may attend to nothing
    with tt.Tape() as tape:
        out, probs = F.attention(q, k, v, keep)
    dout = rng.standard_normal(out.shape)
    tape.backward(out, dout)

    np.testing.assert_array_equal(probs[1, 2], 0.0)
    np.testing.assert_array_equal(out.data[1, 2], 0.0)
    for t in (q, k, v):
        assert np.isfinite(t.grad).all()
    np.testing.assert_array_equal(q.grad[1, 2], 0.0)
    # the empty query adds nothing to dk and dv: the same as dropping its upstream gradient
    dout[1, 2] = 0.0
    _, dk, dv, _ = ops.attention_backward(dout, ops.attention_forward(q.data, k.data, v.data, keep)[1])
    np.testing.assert_allclose(k.grad, dk, rtol=1e-12)
    np.testing.assert_allclose(v.grad, dv, rtol=1e-12)



def test_attention_from_primitives_equals_the_fused_op(rng):
    shapes = {"q": (2, 3, 5), "k": (2, 4, 5), "v": (2, 4, 6)}
    data = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    keep = keep_mask(2, 3, 4)(rng)
    keep[0, 1, :] = False                           # a fully masked row: both give zeros
    dout = rng.standard_normal((2, 3, 6))

    fused = {name: param(x) for name, x in data.items()}
    with tt.Tape() as tape:
        out_fused, probs_fused = F.attention(fused["q"], fused["k"], fused["v"], keep)
    tape.backward(out_fused, dout)

    built = {name: param(x) for name, x in data.items()}
    with tt.Tape() as tape:
        scores = F.matmul(built["q"], F.transpose(built["k"], (0, 2, 1)))   # (B, T_q, T_k)
        probs = F.softmax(F.mask(F.mul(scores, 1 / math.sqrt(5)), keep))
        out = F.matmul(probs, built["v"])                                 # (B, T_q, d_v)
    tape.backward(out, dout)

    np.testing.assert_allclose(out_fused.data, out.data, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(probs_fused, probs.data, rtol=1e-12, atol=1e-14)
    for name in shapes:
        np.testing.assert_allclose(fused[name].grad, built[name].grad, rtol=1e-10, atol=1e-13, err_msg=name)



def whole_batch_and_sliced(monkeypatch, q, k, v, keep, dout, cache_bytes):
    """(out, probs, dq, dk, dv) of the fast twin over the whole batch, and again with slices of at most cache_bytes."""
    results = []
    for budget in (math.inf, cache_bytes):
        monkeypatch.setattr(ops.attention_fast, "CACHE_BYTES", budget)
        out, cache = ops.attention_forward_fast(q, k, v, keep)
        results.append((out, cache[3], *ops.attention_backward_fast(dout, cache)[:3]))
    return results


def test_attention_in_slices_gives_the_whole_batchs_bits(rng, monkeypatch):
    for dtype, lead, keep_shape in ((np.float32, (7, 2), (9, 9)), (np.float64, (5, 3), (5, 1, 1, 9)),
                                    (np.float32, (6, 2), (6, 1, 9, 9))):
        q, k, v, dout = (rng.standard_normal(lead + (9, 4)).astype(dtype) for _ in range(4))
        keep = rng.random(keep_shape) < 0.7
        keep[..., 0] = True
        row_bytes = lead[1] * 9 * 9 * np.dtype(dtype).itemsize               # one sequence's scores
        for budget in (1, row_bytes, 2 * row_bytes + 1):                     # below a row, a row, two rows
            whole, sliced = whole_batch_and_sliced(monkeypatch, q, k, v, keep, dout, budget)
            for a, b in zip(whole, sliced):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_array_equal(a, b)


# The plain pair (ops/attention.py: what an edition blanks and the grader grades) and its fast twin
# (ops/attention_fast.py: what F.attention and so training run) give the same numbers, bit for bit, on every
# shape the tests and the tasks use: the grader's and the gradient checks' cases, the classroom model's, the
# text task's, a long sequence cut in slices; every kind of mask; float32 and float64.
TWIN_SHAPES = [((2, 3, 5), (2, 4, 5), (2, 4, 6), (2, 3, 4)), ((2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 5), (2, 1, 1, 3)),
               ((3, 4), (5, 4), (5, 2), None), ((2, 3, 4), (2, 3, 4), (2, 3, 5), (3, 3)),
               ((64, 4, 11, 16), (64, 4, 11, 16), (64, 4, 11, 16), (64, 1, 1, 11)),          # reverse: the encoder
               ((64, 4, 12, 16), (64, 4, 12, 16), (64, 4, 12, 16), (12, 12)),                # its decoder
               ((64, 4, 12, 16), (64, 4, 11, 16), (64, 4, 11, 16), (64, 1, 1, 11)),          # cross-attention
               ((32, 4, 32, 16), (32, 4, 32, 16), (32, 4, 32, 16), (32, 32)),                # text
               ((16, 4, 129, 16), (16, 4, 129, 16), (16, 4, 129, 16), (129, 129))]           # in slices


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("q_shape, k_shape, v_shape, keep_shape", TWIN_SHAPES,
                         ids=[str(shapes[0]) for shapes in TWIN_SHAPES])
def test_the_fast_twin_gives_the_plain_attentions_numbers_bit_for_bit(rng, dtype, q_shape, k_shape, v_shape,
                                                                       keep_shape):
    q, k, v = (rng.standard_normal(shape).astype(dtype) for shape in (q_shape, k_shape, v_shape))
    keep = None if keep_shape is None else rng.random(keep_shape) < 0.7
    if keep is not None and keep_shape[-1] == keep_shape[-2]:
        keep = np.tril(keep | np.eye(keep_shape[-1], dtype=bool))                # causal, a row fully kept
    plain_out, plain_cache = ops.attention_forward(q, k, v, keep)
    fast_out, fast_cache = ops.attention_forward_fast(q, k, v, keep)
    dout = rng.standard_normal(plain_out.shape).astype(dtype)
    plain = (plain_out, plain_cache[3], *ops.attention_backward(dout, plain_cache)[:3])
    fast = (fast_out, fast_cache[3], *ops.attention_backward_fast(dout, fast_cache)[:3])
    for name, a, b in zip(["out", "probs", "dq", "dk", "dv"], plain, fast):
        assert a.dtype == b.dtype == dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert plain_cache[4] == fast_cache[4]                                        # the same scale
    if q_shape[0] == 16:
        assert len(ops.attention_fast.cache_sized_rows(fast_cache[3])) > 1                # the long one: in slices


def test_the_models_train_with_the_fast_twin_and_the_tape_calls_it_attention(rng):
    """F.attention runs the fast twin (its record says "attention", as the op it is the twin of)."""
    q, k, v = (tt.Tensor(rng.standard_normal((2, 3, 4)), requires_grad=True) for _ in range(3))
    with tt.Tape() as tape:
        out, _ = F.attention(q, k, v)
    assert [record.name for record in tape.records] == ["attention"]
    assert tape.records[0].backward is ops.attention_backward_fast


def test_cache_sized_rows_cover_the_batch_evenly_within_the_budget(monkeypatch):
    monkeypatch.setattr(ops.attention_fast, "CACHE_BYTES", 1000)
    for batch, row_bytes in ((64, 4 * 11 * 11 * 4), (7, 100), (1, 5000), (13, 1000), (0, 100), (64, 160), (5, 400)):
        scores = np.empty((batch, row_bytes // 4), np.float32)[..., None]    # (B, row, 1): row_bytes a sequence
        slices = ops.attention_fast.cache_sized_rows(scores)
        covered = [list(range(batch))[s] for s in slices]
        assert [i for part in covered for i in part] == list(range(batch))   # every row once, in order
        rows = [len(part) for part in covered]
        assert len(set(rows[:-1])) <= 1 and rows[-1] <= rows[0]              # shared out evenly
        assert all(r * row_bytes < 1000 + row_bytes for r in rows)           # within the budget and a row
        assert len(slices) <= max(1, -(-batch * row_bytes // 1000))         # no more slices than the budget needs
    assert ops.attention_fast.cache_sized_rows(np.empty((5, 5))) == [slice(None)]   # (T_q, T_k): no batch to slice
