"""GPT, the decoder-only model: gradients, causality, positions, determinism, bad input."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer.nn import GPT
from helpers import (tiny_config, analytic_gradients, assert_a_wrong_gradient_is_caught,
                     assert_gradients_along_random_directions, training_losses)

# next-token prediction: the targets are the inputs shifted by one; the second row ends in PAD (0)
IDS = np.array([[1, 3, 4, 5, 6], [1, 6, 5, 2, 0]])             # (2, 5)
TARGETS = np.array([[3, 4, 5, 6, 2], [6, 5, 2, 0, 0]])         # (2, 5)


def loss_of(model):
    return F.cross_entropy(model(IDS), TARGETS, ignore_index=tt.PAD)


@pytest.mark.parametrize("positions", ["learned", "sinusoidal"])
@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-LN", "post-LN"])
@pytest.mark.parametrize("tie_embeddings", [True, False], ids=["tied", "untied"])
def test_whole_model_gradient_along_random_directions(positions, norm_first, tie_embeddings):
    config = tiny_config(positions=positions, norm_first=norm_first, tie_embeddings=tie_embeddings,
                         activation="gelu")
    model = GPT(config, rng=0)
    grads = analytic_gradients(model, loss_of)
    assert all(g is not None for g in grads.values()), "every parameter gets a gradient"
    assert ("positions.table" in grads) == (positions == "learned")
    assert_gradients_along_random_directions(model, loss_of, grads)


def test_directional_check_catches_a_wrong_position_gradient():
    model = GPT(tiny_config(positions="learned"), rng=0)
    assert_a_wrong_gradient_is_caught(model, loss_of, "positions.table")


def test_learned_position_gradient_element_by_element():
    """Rows of the table past the sequence get no gradient; the rows used get every element's."""
    model = GPT(tiny_config(positions="learned"), rng=0)
    grads = analytic_gradients(model, loss_of)
    table = model.positions.table
    numeric = tt.numerical_gradient(lambda _: loss_of(model).data, table.data, np.array(1.0))
    np.testing.assert_allclose(grads["positions.table"], numeric, atol=1e-7, rtol=1e-5)
    assert np.all(grads["positions.table"][5:] == 0) and np.all(grads["positions.table"][:5] != 0)


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-LN", "post-LN"])
def test_gpt_is_causal(norm_first):
    model = GPT(tiny_config(norm_first=norm_first, positions="learned"), rng=0)
    logits = model(IDS).data                                       # (2, 5, V)
    for t in range(1, 5):
        changed = IDS.copy()
        changed[:, t:] = (changed[:, t:] + 1) % 7                  # every token from t on is different
        out = model(changed).data
        np.testing.assert_array_equal(out[:, :t], logits[:, :t])   # positions before t cannot see them
        assert not np.allclose(out[:, t], logits[:, t])            # position t does


def test_positions_matter():
    """With either kind of positions, swapping tokens 0 and 1 changes what position 2 predicts
    (attention itself is order-blind: only the positions tell them apart)."""
    swapped = IDS[:, [1, 0, 2, 3, 4]]
    for positions in ("learned", "sinusoidal"):
        model = GPT(tiny_config(positions=positions), rng=0)
        assert not np.allclose(model(swapped).data[:, 2], model(IDS).data[:, 2])


def test_learned_positions_are_a_table_added_to_the_tokens():
    model = GPT(tiny_config(positions="learned"), rng=0)
    x = np.zeros((2, 3, 8))
    np.testing.assert_array_equal(model.positions(x, offset=2).data[1], model.positions.table.data[2:5])
    assert model.positions.table.shape == (6, 8)


def test_same_seed_same_model_other_seed_differs():
    a, b, c = (GPT(tiny_config(positions="learned"), rng=seed) for seed in (0, 0, 1))
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(pa.data, pb.data, err_msg=name)
    assert not np.allclose(a(IDS).data, c(IDS).data)


def test_parameter_names():
    names = [name for name, _ in GPT(tiny_config(norm_first=True, positions="learned"), rng=0).named_parameters()]
    assert names[:2] == ["embed.table", "positions.table"]
    assert "layers.1.self_attn.W_q.W" in names and "final_norm.gamma" in names
    assert not any("cross_attn" in name or "encoder" in name for name in names)
    untied = [name for name, _ in GPT(tiny_config(tie_embeddings=False), rng=0).named_parameters()]
    assert untied[-2:] == ["output.W", "output.b"]


def test_attention_probs_are_causal():
    model = GPT(tiny_config(), rng=0)
    model(IDS)
    probs = model.attention_probs()
    assert list(probs) == ["layers.0.self_attn", "layers.1.self_attn"]
    assert probs["layers.0.self_attn"].shape == (2, 2, 5, 5)
    np.testing.assert_array_equal(np.triu(probs["layers.1.self_attn"], k=1), 0)


def test_dropout_follows_train_and_eval():
    model = GPT(tiny_config(dropout=0.5), rng=0)
    assert not np.allclose(model(IDS).data, model(IDS).data)
    model.eval()
    np.testing.assert_array_equal(model(IDS).data, GPT(tiny_config(), rng=0)(IDS).data)


def test_bad_input_gives_clear_errors():
    model = GPT(tiny_config(), rng=0)
    with pytest.raises(ValueError, match="GPT: ids token id 7 is outside"):
        model(np.array([[3, 7]]))
    with pytest.raises(TypeError, match="GPT: ids token ids must be an integer ndarray"):
        model(IDS.astype(np.float64))
    with pytest.raises(ValueError, match="GPT: ids has 7 positions but max_len is 6"):
        model(np.full((1, 7), 3))
    with pytest.raises(ValueError, match=r"GPT: ids ids must be \(B, T\)"):
        model(IDS[0])
    with pytest.raises(TypeError, match="GPT: config must be a TransformerConfig"):
        GPT({"vocab_size": 7})
    with pytest.raises(ValueError, match="positions must be one of"):
        tiny_config(positions="rotary")


def test_same_seed_same_losses_with_dropout():
    def make(seed):
        return GPT(tiny_config(dropout=0.2, positions="learned"), rng=seed)
    first = training_losses(make, loss_of, seed=3)
    assert training_losses(make, loss_of, seed=3) == first
    assert training_losses(make, loss_of, seed=4) != first
    assert first[-1] < first[0]                                     # the steps do train
