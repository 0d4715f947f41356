"""Every op: its backward against finite differences, its forward against an
independent formula, its behaviour at the edges, and its errors on bad input.

Gradient checks follow DESIGN.md: float64, central differences (eps=1e-6)
projected onto a random upstream gradient, pass = allclose(analytic, numeric,
atol=1e-5, rtol=1e-3). Agreeing float64 gradients have a relative error
around 1e-7 or less.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer import ops
from tinytransformer.gradcheck_every_op import CHECKS

ATOL, RTOL = 1e-5, 1e-3     # DESIGN.md's gradient-check tolerances


def first(result):
    """An op may return (out, extras): the first output is the differentiated one."""
    return result[0] if isinstance(result, tuple) else result


def is_float_array(x):
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def Tensor64(data):
    """A float64 Tensor that collects a gradient."""
    return tt.Tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


# ---------------------------------------------------------------------------
# Gradients: one finite-difference check per op (the table of
# `python -m tinytransformer gradcheck`), through the Tensor-level API.

@pytest.mark.parametrize("check", CHECKS, ids=[check.name for check in CHECKS])
def test_backward_matches_finite_differences(check):
    rng = np.random.default_rng(0)
    inputs = check.make_inputs(rng)
    float_inputs = [name for name, x in inputs.items() if is_float_array(x)]
    assert float_inputs, "every op has at least one input to differentiate"
    assert all(inputs[name].dtype == np.float64 for name in float_inputs)

    results = tt.gradcheck(check.fn, *inputs.values(), names=list(inputs), rng=rng)

    assert [r.name for r in results] == float_inputs          # every float input is checked
    for r in results:
        assert r.passed and r.max_abs_error < ATOL, r


# ---------------------------------------------------------------------------
# Gradients of the pure NumPy pairs, called directly (no Tensor, no Tape), on
# variants the table above does not cover. Each also checks the contract: one
# gradient per input (None for ids, masks and a missing bias), and backward
# writes into neither dout nor the cache.

def arrays_in(cache):
    if isinstance(cache, np.ndarray):
        return [cache]
    if isinstance(cache, tuple):
        return [a for item in cache for a in arrays_in(item)]
    return []


def normal(*shape):
    return lambda r: r.standard_normal(shape)


def keep_mask(*shape):
    def make(r):
        keep = r.random(shape) > 0.4
        keep[..., 0] = True
        return keep
    return make


PAIRS = {
    "linear without bias": (ops.linear_forward, ops.linear_backward,
                            [normal(3, 5), normal(5, 4), lambda r: None], {}),
    "linear on 4-D x": (ops.linear_forward, ops.linear_backward,
                        [normal(2, 2, 3, 5), normal(5, 4), normal(4)], {}),
    "gelu on a wide range": (ops.gelu_forward, ops.gelu_backward,
                             [lambda r: 3 * r.standard_normal((3, 5))], {}),
    "softmax over axis 0": (ops.softmax_forward, ops.softmax_backward, [normal(2, 3, 5)], {"axis": 0}),
    "log_softmax over axis 1": (ops.log_softmax_forward, ops.log_softmax_backward,
                                [normal(2, 3, 5)], {"axis": 1}),
    "layer_norm 2-D, eps=1e-3": (ops.layer_norm_forward, ops.layer_norm_backward,
                                 [normal(3, 5), normal(5), normal(5)], {"eps": 1e-3}),
    "attention, no mask, scale=0.5": (ops.attention_forward, ops.attention_backward,
                                      [normal(2, 3, 5), normal(2, 4, 5), normal(2, 4, 6), lambda r: None],
                                      {"scale": 0.5}),
    "attention, padding-shaped mask": (ops.attention_forward, ops.attention_backward,
                                       [normal(2, 3, 5), normal(2, 4, 5), normal(2, 4, 6), keep_mask(2, 1, 4)],
                                       {}),
    "embedding": (ops.embedding_forward, ops.embedding_backward,
                  [lambda r: np.array([[1, 1, 4], [0, 1, 2]]), normal(5, 3)], {}),
    "cross_entropy, plain": (ops.cross_entropy_forward, ops.cross_entropy_backward,
                             [normal(4, 5), lambda r: np.array([0, 4, 2, 2])], {}),
    "cross_entropy, label_smoothing=1": (ops.cross_entropy_forward, ops.cross_entropy_backward,
                                         [normal(4, 5), lambda r: np.array([0, 4, 2, 2])],
                                         {"label_smoothing": 1.0}),
    "cross_entropy, ignore_index=-100": (ops.cross_entropy_forward, ops.cross_entropy_backward,
                                         [normal(2, 3, 5), lambda r: np.array([[1, -100, 4], [-100, 3, 0]])],
                                         {"ignore_index": -100, "label_smoothing": 0.2}),
    "positional_encoding, odd d_model": (ops.positional_encoding_forward, ops.positional_encoding_backward,
                                         [normal(2, 3, 5)], {}),
    "split_heads into 3": (ops.split_heads_forward, ops.split_heads_backward, [normal(2, 4, 6)], {"n_heads": 3}),
    "merge_heads of 3": (ops.merge_heads_forward, ops.merge_heads_backward, [normal(2, 3, 4, 2)], {}),
    "add, both broadcast": (ops.add_forward, ops.add_backward, [normal(2, 1, 5), normal(3, 1)], {}),
    "matmul, a broadcast": (ops.matmul_forward, ops.matmul_backward, [normal(1, 3, 5), normal(2, 5, 4)], {}),
    "sum of everything": (ops.sum_forward, ops.sum_backward, [normal(2, 3, 5)], {}),
    "sum, axis=-1, keepdims": (ops.sum_forward, ops.sum_backward, [normal(2, 3, 5)],
                               {"axis": -1, "keepdims": True}),
    "mean over (0, 2)": (ops.mean_forward, ops.mean_backward, [normal(2, 3, 5)], {"axis": (0, 2)}),
    "reshape with -1": (ops.reshape_forward, ops.reshape_backward, [normal(2, 3, 5)], {"shape": (-1, 5)}),
    "transpose, default (reversed axes)": (ops.transpose_forward, ops.transpose_backward, [normal(2, 3, 5)], {}),
}


@pytest.mark.parametrize("forward, backward, makers, options", PAIRS.values(), ids=PAIRS.keys())
def test_pair_backward_matches_finite_differences(forward, backward, makers, options, rng):
    inputs = [make(rng) for make in makers]
    out, cache = forward(*inputs, **options)
    dout = rng.standard_normal(first(out).shape)
    saved = [a.copy() for a in [dout, *arrays_in(cache)]]

    grads = backward(dout, cache)

    assert all(np.array_equal(a, b) for a, b in zip(saved, [dout, *arrays_in(cache)])), \
        "backward wrote into dout or the cache"
    assert len(grads) == len(inputs)
    for i, (x, grad) in enumerate(zip(inputs, grads)):
        if not is_float_array(x):
            assert grad is None                  # ids, masks, a missing bias: no gradient
            continue

        def f(x_i, i=i):
            return first(forward(*inputs[:i], x_i, *inputs[i + 1:], **options)[0])

        numeric = tt.numerical_gradient(f, x.copy(), dout)
        assert grad.shape == x.shape
        np.testing.assert_allclose(grad, numeric, atol=ATOL, rtol=RTOL)


# ---------------------------------------------------------------------------
# Forward values against independent formulas and hand-computed numbers.

def test_softmax_is_positive_and_sums_to_one_along_its_axis(rng):
    x = 3 * rng.standard_normal((2, 3, 5))
    for axis in (-1, 0, 1):
        y = F.softmax(x, axis=axis).data
        assert (y > 0).all()
        np.testing.assert_allclose(y.sum(axis=axis), 1.0, rtol=1e-12)
        np.testing.assert_allclose(y, np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True), rtol=1e-12)


def test_softmax_and_log_softmax_hand_computed():
    x = np.log(np.array([1.0, 2.0, 3.0]))          # e^x = 1, 2, 3
    np.testing.assert_allclose(F.softmax(x).data, [1 / 6, 2 / 6, 3 / 6], rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(x).data, np.log([1 / 6, 2 / 6, 3 / 6]), rtol=1e-12)


def test_log_softmax_equals_log_of_softmax_for_moderate_logits(rng):
    x = rng.standard_normal((2, 3, 5))
    np.testing.assert_allclose(F.log_softmax(x, axis=1).data, np.log(F.softmax(x, axis=1).data), rtol=1e-12)


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


def cross_entropy_by_hand(logits, targets, ignore_index, label_smoothing):
    """One position at a time: -sum_v q_v log p_v, q = (1 - eps) one_hot + eps / V; mean over counted."""
    V = logits.shape[-1]
    losses = []
    for z, c in zip(logits.reshape(-1, V), targets.reshape(-1)):
        if c == ignore_index:
            continue
        log_p = z - np.log(np.sum(np.exp(z)))
        q = np.full(V, label_smoothing / V)
        q[c] += 1 - label_smoothing
        losses.append(-np.sum(q * log_p))
    return np.mean(losses)


@pytest.mark.parametrize("ignore_index, label_smoothing", [(None, 0.0), (0, 0.0), (None, 0.1), (0, 0.1), (0, 1.0)])
def test_cross_entropy_matches_the_formula(ignore_index, label_smoothing, rng):
    logits = rng.standard_normal((2, 3, 5))
    targets = np.array([[1, 0, 4], [2, 3, 0]])
    loss = F.cross_entropy(logits, targets, ignore_index=ignore_index, label_smoothing=label_smoothing)
    assert loss.shape == ()
    expected = cross_entropy_by_hand(logits, targets, ignore_index, label_smoothing)
    np.testing.assert_allclose(loss.data, expected, rtol=1e-12)


def test_cross_entropy_of_uniform_logits_is_log_V():
    loss = F.cross_entropy(np.zeros((4, 7)), np.array([0, 3, 6, 2]))
    np.testing.assert_allclose(loss.data, math.log(7), rtol=1e-12)


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


def test_mask_backward_passes_the_gradient_where_kept(rng):
    # -inf outputs make finite differences of mask alone nan; the table checks mask + softmax
    keep = keep_mask(2, 3, 4)(rng)
    dout = rng.standard_normal((2, 3, 4))
    dscores, dkeep = ops.mask_backward(dout, ops.mask_forward(rng.standard_normal((2, 3, 4)), keep)[1])
    np.testing.assert_array_equal(dscores, np.where(keep, dout, 0.0))
    assert dkeep is None


def test_attention_weights_are_a_distribution_with_zeros_where_masked(rng):
    q, k, v = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 4, 6))
    keep = keep_mask(2, 3, 4)(rng)
    out, weights = F.attention(q, k, v, keep)
    assert out.shape == (2, 3, 6) and weights.shape == (2, 3, 4)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-12)
    assert (weights[~keep] == 0).all()
    np.testing.assert_allclose(out.data, weights @ v, rtol=1e-12)


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


def test_embedding_picks_rows(rng):
    table = rng.standard_normal((5, 3))
    ids = np.array([[4, 0], [4, 2]])
    out = F.embedding(ids, table).data
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out[1, 0], table[4])


# ---------------------------------------------------------------------------
# Stability: large logits, constant rows, fully masked rows.

def test_softmax_and_log_softmax_of_huge_logits_stay_finite_and_correct():
    x = np.array([[1e4, -1e4, 0.0], [1e4, 1e4, 1e4], [-1e4, -1e4, -1e4]])
    np.testing.assert_allclose(F.softmax(x).data, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [1 / 3, 1 / 3, 1 / 3]],
                               atol=1e-15)
    np.testing.assert_allclose(F.log_softmax(x).data[0], [0.0, -2e4, -1e4], atol=1e-12)
    assert np.isfinite(F.log_softmax(x).data).all()


def test_softmax_backward_of_huge_logits_is_finite(rng):
    x = Tensor64(np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]]))
    with tt.Tape() as tape:
        y = F.log_softmax(F.softmax(x) * 1.0 + 0.5)
    tape.backward(y, rng.standard_normal(y.shape))
    assert np.isfinite(x.grad).all()


def test_cross_entropy_of_huge_logits_is_finite_and_correct():
    logits = Tensor64([[1e4, -1e4, 0.0], [1e4, -1e4, 0.0]])       # log p = [0, -2e4, -1e4] in both rows
    with tt.Tape() as tape:
        loss = F.cross_entropy(logits, np.array([0, 1]), label_smoothing=0.3)
    tape.backward(loss)
    q = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1]])               # (1 - 0.3) one_hot + 0.3 / 3
    np.testing.assert_allclose(loss.data, (0.1 * 3e4 + (0.8 * 2e4 + 0.1 * 1e4)) / 2, rtol=1e-12)
    np.testing.assert_allclose(logits.grad, ([[1, 0, 0], [1, 0, 0]] - q) / 2, atol=1e-12)   # (p - q) / n


def test_layer_norm_on_a_constant_row_is_finite(rng):
    x = Tensor64(np.full((2, 5), 3.0))
    gamma, beta = Tensor64(rng.standard_normal(5)), Tensor64(rng.standard_normal(5))
    with tt.Tape() as tape:
        y = F.layer_norm(x, gamma, beta)
    tape.backward(y, rng.standard_normal((2, 5)))
    np.testing.assert_allclose(y.data, np.broadcast_to(beta.data, (2, 5)), atol=1e-12)   # xhat = 0
    for t in (x, gamma, beta):
        assert np.isfinite(t.grad).all()
    np.testing.assert_allclose(gamma.grad, 0.0, atol=1e-12)                              # dgamma = sum dy * xhat


def test_fully_masked_attention_row_gives_zero_output_and_zero_finite_gradients(rng):
    q, k, v = (Tensor64(rng.standard_normal(shape)) for shape in [(2, 3, 5), (2, 4, 5), (2, 4, 6)])
    keep = keep_mask(2, 3, 4)(rng)
    keep[1, 2, :] = False                          # query 2 of batch 1 may attend to nothing
    with tt.Tape() as tape:
        out, weights = F.attention(q, k, v, keep)
    dout = rng.standard_normal(out.shape)
    tape.backward(out, dout)

    np.testing.assert_array_equal(weights[1, 2], 0.0)
    np.testing.assert_array_equal(out.data[1, 2], 0.0)
    for t in (q, k, v):
        assert np.isfinite(t.grad).all()
    np.testing.assert_array_equal(q.grad[1, 2], 0.0)
    # the empty query adds nothing to dk and dv: the same as dropping its upstream gradient
    dout[1, 2] = 0.0
    _, dk, dv, _ = ops.attention_backward(dout, ops.attention_forward(q.data, k.data, v.data, keep)[1])
    np.testing.assert_allclose(k.grad, dk, rtol=1e-12)
    np.testing.assert_allclose(v.grad, dv, rtol=1e-12)


# ---------------------------------------------------------------------------
# Embedding backward is a scatter-add; dropout is seeded and inverted.

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


def test_dropout_same_seed_gives_the_same_mask_bit_for_bit(rng):
    x = rng.standard_normal((4, 50))
    a = F.dropout(x, 0.3, np.random.default_rng(5)).data
    b = F.dropout(x, 0.3, np.random.default_rng(5)).data
    c = F.dropout(x, 0.3, np.random.default_rng(6)).data
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


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
    x = Tensor64(rng.standard_normal((3, 6)))
    with tt.Tape() as tape:
        y = F.dropout(x, 0.5, np.random.default_rng(1))
    dout = rng.standard_normal((3, 6))
    tape.backward(y, dout)
    np.testing.assert_allclose(x.grad, dout * y.data / x.data, rtol=1e-12)   # 0 or dout / (1 - p)


# ---------------------------------------------------------------------------
# Attention built from primitives equals the fused op, forward and gradients.

def test_attention_from_primitives_equals_the_fused_op(rng):
    shapes = {"q": (2, 3, 5), "k": (2, 4, 5), "v": (2, 4, 6)}
    data = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    keep = keep_mask(2, 3, 4)(rng)
    keep[0, 1, :] = False                           # a fully masked row: both give zeros
    dout = rng.standard_normal((2, 3, 6))

    fused = {name: Tensor64(x) for name, x in data.items()}
    with tt.Tape() as tape:
        out_fused, weights_fused = F.attention(fused["q"], fused["k"], fused["v"], keep)
    tape.backward(out_fused, dout)

    built = {name: Tensor64(x) for name, x in data.items()}
    with tt.Tape() as tape:
        scores = F.matmul(built["q"], F.transpose(built["k"], (0, 2, 1)))   # (B, T_q, T_k)
        weights = F.softmax(F.mask(F.mul(scores, 1 / math.sqrt(5)), keep))
        out = F.matmul(weights, built["v"])                                 # (B, T_q, d_v)
    tape.backward(out, dout)

    np.testing.assert_allclose(out_fused.data, out.data, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(weights_fused, weights.data, rtol=1e-12, atol=1e-14)
    for name in shapes:
        np.testing.assert_allclose(fused[name].grad, built[name].grad, rtol=1e-10, atol=1e-13, err_msg=name)


# ---------------------------------------------------------------------------
# Property tests: random shapes and values (derandomized, so every run is the same).

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


# ---------------------------------------------------------------------------
# Bad input: a clear error naming the op and the problem, before any arithmetic.

x235, W54, b4 = np.zeros((2, 3, 5)), np.zeros((5, 4)), np.zeros(4)
q235, k245, v246 = np.zeros((2, 3, 5)), np.zeros((2, 4, 5)), np.zeros((2, 4, 6))
logits235 = np.zeros((2, 3, 5))
targets23 = np.array([[1, 0, 4], [2, 3, 0]])
table75 = np.zeros((7, 5))

BAD_INPUTS = {
    "linear: x features != W rows": (
        lambda: F.linear(x235, np.zeros((4, 3))), ValueError, r"linear: x has 5 features .* W expects 4"),
    "linear: bias of the wrong shape": (
        lambda: F.linear(x235, W54, np.zeros(5)), ValueError, r"linear: b must have shape \(4,\)"),
    "linear: W not 2-D": (
        lambda: F.linear(x235, np.zeros(5)), ValueError, r"linear: W must be 2-D"),
    "attention: d_k of q and k differ": (
        lambda: F.attention(np.zeros((2, 3, 4)), np.zeros((2, 4, 3)), v246), ValueError,
        r"attention: q has d_k=4 but k has d_k=3"),
    "attention: k and v lengths differ": (
        lambda: F.attention(q235, k245, np.zeros((2, 5, 6))), ValueError,
        r"attention: k has 4 positions \(T_k\) but v has 5"),
    "attention: mask of the wrong shape": (
        lambda: F.attention(q235, k245, v246, np.ones((3, 3), dtype=bool)), ValueError,
        r"attention: mask of shape \(3, 3\) does not broadcast to scores of shape \(2, 3, 4\)"),
    "attention: mask not boolean": (
        lambda: F.attention(q235, k245, v246, np.ones((3, 4))), TypeError,
        r"attention: the mask must be a boolean ndarray .* got float64"),
    "attention: different batch axes": (
        lambda: F.attention(q235, np.zeros((3, 4, 5)), np.zeros((3, 4, 6))), ValueError,
        r"attention: q, k, v must share their leading \(batch, head\) axes"),
    "split_heads: d_model not divisible by n_heads": (
        lambda: F.split_heads(x235, 2), ValueError, r"split_heads: d_model=5 is not divisible by n_heads=2"),
    "mask: mask of the wrong shape": (
        lambda: F.mask(np.zeros((3, 4)), np.ones((4, 3), dtype=bool)), ValueError,
        r"mask: mask of shape \(4, 3\) does not broadcast"),
    "mask: mask not boolean": (
        lambda: F.mask(np.zeros((3, 3)), np.tril(np.ones((3, 3), dtype=int))), TypeError,
        r"mask: the mask must be a boolean ndarray"),
    "embedding: id too large": (
        lambda: F.embedding(np.array([[1, 7]]), table75), IndexError, r"embedding: token id 7 is outside \[0, 7\)"),
    "embedding: negative id": (
        lambda: F.embedding(np.array([[-1, 2]]), table75), IndexError, r"embedding: token id -1 is outside \[0, 7\)"),
    "embedding: ids not integers": (
        lambda: F.embedding(np.array([[1.0, 2.0]]), table75), TypeError,
        r"embedding: token ids must be an integer ndarray, got float64"),
    "embedding: ids a list": (
        lambda: F.embedding([1, 2], table75), TypeError, r"embedding: token ids must be an integer ndarray, got list"),
    "cross_entropy: target too large": (
        lambda: F.cross_entropy(logits235, np.array([[1, 0, 5], [2, 3, 0]])), IndexError,
        r"cross_entropy: target 5 is outside \[0, 5\)"),
    "cross_entropy: negative target": (
        lambda: F.cross_entropy(logits235, np.array([[1, -1, 4], [2, 3, 0]])), IndexError,
        r"cross_entropy: target -1 is outside \[0, 5\)"),
    "cross_entropy: targets of the wrong shape": (
        lambda: F.cross_entropy(logits235, np.array([1, 0, 4])), ValueError,
        r"cross_entropy: targets must have shape \(2, 3\) .* got \(3,\)"),
    "cross_entropy: targets not integers": (
        lambda: F.cross_entropy(logits235, targets23.astype(float)), TypeError,
        r"cross_entropy: targets must be an integer ndarray, got float64"),
    "cross_entropy: every target ignored": (
        lambda: F.cross_entropy(logits235, np.zeros((2, 3), dtype=int), ignore_index=0), ValueError,
        r"cross_entropy: every target equals ignore_index"),
    "cross_entropy: label_smoothing above 1": (
        lambda: F.cross_entropy(logits235, targets23, label_smoothing=1.5), ValueError,
        r"cross_entropy: label_smoothing must be in \[0, 1\], got 1.5"),
    "cross_entropy: label_smoothing below 0": (
        lambda: F.cross_entropy(logits235, targets23, label_smoothing=-0.1), ValueError,
        r"cross_entropy: label_smoothing must be in \[0, 1\], got -0.1"),
    "layer_norm: gamma of the wrong shape": (
        lambda: F.layer_norm(x235, np.ones(4), np.zeros(5)), ValueError,
        r"layer_norm: gamma must have shape \(5,\) .* got \(4,\)"),
    "layer_norm: beta of the wrong shape": (
        lambda: F.layer_norm(x235, np.ones(5), np.zeros((1, 5))), ValueError,
        r"layer_norm: beta must have shape \(5,\) .* got \(1, 5\)"),
    "layer_norm: eps not positive": (
        lambda: F.layer_norm(x235, np.ones(5), np.zeros(5), eps=0.0), ValueError,
        r"layer_norm: eps must be positive, got 0.0"),
    "dropout: p = 1": (
        lambda: F.dropout(x235, 1.0, np.random.default_rng(0)), ValueError, r"dropout: p must be in \[0, 1\), got 1.0"),
    "dropout: p < 0": (
        lambda: F.dropout(x235, -0.1, np.random.default_rng(0)), ValueError,
        r"dropout: p must be in \[0, 1\), got -0.1"),
    "dropout: p > 1, even when not training": (
        lambda: F.dropout(x235, 1.5, np.random.default_rng(0), training=False), ValueError, r"dropout: p must be in"),
    "dropout: rng not a Generator": (
        lambda: F.dropout(x235, 0.1, 0), TypeError, r"dropout: rng must be an np.random.Generator"),
    "matmul: inner sizes differ": (
        lambda: F.matmul(x235, np.zeros((4, 3))), ValueError, r"matmul: a is \(2, 3, 5\) and b is \(4, 3\)"),
    "reshape: wrong number of elements": (
        lambda: F.reshape(x235, (4, 4)), ValueError, r"reshape: cannot reshape \(2, 3, 5\) \(30 elements\)"),
    "mixed dtypes in add": (
        lambda: F.add(np.zeros(3, np.float32), np.zeros(3)), TypeError,
        r"add: inputs must share one dtype, got float32 and float64"),
    "mixed dtypes in linear": (
        lambda: F.linear(x235.astype(np.float32), W54), TypeError,
        r"linear: inputs must share one dtype, got float32 and float64 \(W\)"),
    "mixed dtypes in attention": (
        lambda: F.attention(q235, k245.astype(np.float32), v246), TypeError,
        r"attention: inputs must share one dtype, got float64 and float32 \(k\)"),
    "mixed dtypes in layer_norm": (
        lambda: F.layer_norm(x235.astype(np.float32), np.ones(5), np.zeros(5)), TypeError,
        r"layer_norm: inputs must share one dtype"),
    "integers where floats are needed": (
        lambda: F.softmax(np.arange(3)), TypeError, r"softmax: x must hold floating-point numbers, got dtype int"),
    "padding_mask: ids not integers": (
        lambda: tt.padding_mask(np.zeros((2, 3)), 0), TypeError, r"padding_mask: token ids must be an integer"),
}


@pytest.mark.parametrize("call, error, message", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()
