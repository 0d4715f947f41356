"""GPT, the decoder-only model: gradients, causality, positions, determinism, bad input."""
import dataclasses

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


# The modern block: TransformerConfig.llama_style (pre-norm RMSNorm, SwiGLU, rotary positions, no biases)

def llama_config(**changes):
    return tt.TransformerConfig.llama_style(vocab_size=7, d_model=8, n_heads=2, n_layers=2, max_len=6,
                                            dtype="float64", **changes)


@pytest.mark.parametrize("tie_embeddings", [True, False], ids=["tied", "untied"])
def test_llama_style_whole_model_gradient_along_random_directions(tie_embeddings):
    model = GPT(llama_config(tie_embeddings=tie_embeddings), rng=0)
    grads = analytic_gradients(model, loss_of)
    assert all(g is not None for g in grads.values()), "every parameter gets a gradient"
    assert "layers.0.feed_forward.linear3.W" in grads and not any(name.endswith(".b") for name in grads)
    assert_gradients_along_random_directions(model, loss_of, grads)
    assert_a_wrong_gradient_is_caught(model, loss_of, "layers.1.feed_forward.linear3.W")


@pytest.mark.parametrize("changes", [dict(norm="rms", norm_first=False), dict(activation="swiglu", bias=False),
                                     dict(positions="rope", norm_first=True), dict(bias=False, norm_first=True)],
                         ids=["rms post-norm", "swiglu", "rope", "no bias, LayerNorm"])
def test_each_modern_part_alone_gradient_along_random_directions(changes):
    model = GPT(tiny_config(**changes), rng=0)
    grads = analytic_gradients(model, loss_of)
    assert all(g is not None for g in grads.values())
    assert_gradients_along_random_directions(model, loss_of, grads)


def test_llama_style_is_the_modern_block_and_changes_override():
    c = tt.TransformerConfig.llama_style(vocab_size=11)
    assert (c.norm_first, c.norm, c.activation, c.positions, c.bias, c.dropout) == (True, "rms", "swiglu", "rope",
                                                                                    False, 0.0)
    assert c.d_ff == 171                                    # 2/3 of 4 * 64 = 170.67, rounded
    assert tt.TransformerConfig.llama_style(vocab_size=11, d_model=32, n_heads=2).d_ff == 85
    assert tt.TransformerConfig.llama_style(vocab_size=11, d_ff=100).d_ff == 100


def test_the_modern_block_is_written_once_for_llama_style_and_the_text_task():
    """One set of fields, MODERN_BLOCK; llama_style and --block modern differ only in the FeedForward width
    their SwiGLU matches (4 d_model: 171; the classroom d_ff: 85) and dropout (the task's is the classroom's 0)."""
    from tinytransformer.nn.config import MODERN_BLOCK
    from tinytransformer.tasks import make_task
    llama = dataclasses.asdict(tt.TransformerConfig.llama_style(vocab_size=11))
    modern = dataclasses.asdict(make_task("text", block="modern").config())
    assert all(llama[field] == modern[field] == value for field, value in MODERN_BLOCK.items())
    assert (llama["d_ff"], modern["d_ff"]) == (171, 85) and llama["dropout"] == modern["dropout"] == 0.0


@pytest.mark.parametrize("field, value", [("positions", "foo"), ("norm", "batch"), ("activation", "swish")])
def test_a_value_set_after_the_config_was_made_is_refused_when_the_model_is_built(field, value):
    """Configs are checked when made; a field changed afterwards is checked again by every model, in the same
    line, never built into a model without positions (or another part) in silence."""
    for model_class in (GPT, tt.nn.Transformer, tt.nn.BERT):
        config = tiny_config(model_class.config_class)
        setattr(config, field, value)
        with pytest.raises(ValueError, match=rf"{model_class.config_class.__name__}: {field} must be one of .*, "
                                             rf"got '{value}'$"):
            model_class(config)
    vision = tiny_config(tt.VisionConfig, patch_pixels=4, n_classes=3)
    setattr(vision, field, value)
    with pytest.raises(ValueError, match=f"VisionConfig: {field} must be one of"):
        tt.nn.VisionTransformer(vision)


def test_llama_style_gpt_is_causal_and_has_no_position_table():
    model = GPT(llama_config(), rng=0)
    assert model.positions is None and model.layers[0].self_attn.rope
    ids = np.array([[1, 3, 4, 5, 6]])
    changed = ids.copy()
    changed[0, 3:] = [2, 2]
    np.testing.assert_array_equal(model(ids).data[:, :3], model(changed).data[:, :3])
    assert np.abs(model(ids).data[:, 3:] - model(changed).data[:, 3:]).max() > 1e-6


def test_rope_is_the_only_position_information():
    """Nothing is added to the tokens, yet the last position tells 3 4 5 6 from 4 3 5 6: its keys are turned.
    (One layer: with two, the causal mask alone tells order, through what the earlier positions saw.)"""
    model = GPT(tiny_config(positions="rope", norm_first=True, n_layers=1), rng=0)
    assert model.positions is None
    last = [model(x).data[0, -1] for x in (np.array([[3, 4, 5, 6]]), np.array([[4, 3, 5, 6]]))]
    assert np.abs(last[0] - last[1]).max() > 1e-6
    model.layers[0].self_attn.rope = False                                     # no positions at all
    last = [model(x).data[0, -1] for x in (np.array([[3, 4, 5, 6]]), np.array([[4, 3, 5, 6]]))]
    np.testing.assert_allclose(last[0], last[1], rtol=1e-12)                  # a bag of tokens


def test_bad_modern_settings_are_refused():
    with pytest.raises(ValueError, match=r"norm must be one of \['layer', 'rms'\], got 'batch'"):
        tiny_config(norm="batch")
    with pytest.raises(ValueError, match=r"activation must be one of \['relu', 'gelu', 'swiglu'\], got 'swish'"):
        tiny_config(activation="swish")
    with pytest.raises(ValueError, match=r"bias must be True or False, got 'no'"):
        tiny_config(bias="no")
    with pytest.raises(ValueError, match=r"rope turns pairs of numbers, so d_k = d_model / n_heads must be even, got 3"):
        tiny_config(d_model=6, n_heads=2, positions="rope")
