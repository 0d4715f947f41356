"""BERT, the encoder-only model: gradients with PAD, both directions, the [CLS] head, bad input."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer.nn import BERT
from helpers import (tiny_config, analytic_gradients, assert_a_wrong_gradient_is_caught,
                     assert_gradients_along_random_directions, training_losses)

# [CLS]-like first token 1; the second row ends in two PAD (0); masked-LM targets PAD (ignored) where not chosen
IDS = np.array([[1, 3, 6, 5, 4, 6], [1, 6, 5, 3, 0, 0]])       # (2, 6)
TARGETS = np.array([[0, 4, 0, 0, 3, 0], [0, 0, 4, 0, 0, 0]])   # (2, 6)
LABELS = np.array([2, 0])                                      # (2,) classes of the two rows


def mlm_loss(model):
    return F.cross_entropy(model(IDS), TARGETS, ignore_index=tt.PAD)


def classification_loss(model):
    return F.cross_entropy(model.classify(IDS), LABELS)


def config(**changes):
    return tiny_config(tt.BERTConfig, **{"positions": "learned", "n_classes": 3, **changes})


@pytest.mark.parametrize("loss_of", [mlm_loss, classification_loss], ids=["masked-LM", "classify"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("positions", ["learned", "sinusoidal"])
def test_whole_model_gradient_along_random_directions(loss_of, norm_first, positions):
    model = BERT(config(norm_first=norm_first, activation="gelu", positions=positions), rng=0)
    grads = analytic_gradients(model, loss_of)
    unused = {"classifier.W", "classifier.b"} if loss_of is mlm_loss else set()
    assert all((grads[name] is None) == (name in unused) for name in grads), "every used parameter has a gradient"
    assert_gradients_along_random_directions(model, loss_of, grads)


def test_directional_check_catches_a_wrong_classifier_gradient():
    model = BERT(config(), rng=0)
    assert_a_wrong_gradient_is_caught(model, classification_loss, "classifier.W")


def test_classifier_weight_gradient_matches_finite_differences():
    """The head's own weight, checked element by element (the whole-model check above takes directions)."""
    model = BERT(config(n_layers=1), rng=0)
    grads = analytic_gradients(model, classification_loss)
    numeric = tt.numerical_gradient(lambda _: classification_loss(model).data, model.classifier.W.data,
                                    np.array(1.0))
    np.testing.assert_allclose(grads["classifier.W"], numeric, atol=1e-7, rtol=1e-5)


def test_bert_sees_both_ways():
    model = BERT(config(), rng=0)
    logits = model(IDS).data
    changed = IDS.copy()
    changed[:, 3] = 2                                              # a later token changes ...
    out = model(changed).data
    assert not np.allclose(out[:, :3], logits[:, :3])              # ... the positions before it too
    assert not np.allclose(model.classify(changed).data, model.classify(IDS).data)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_trailing_pad_changes_no_real_position(norm_first):
    model = BERT(config(norm_first=norm_first, max_len=8), rng=0)
    logits, classes = model(IDS).data, model.classify(IDS).data
    padded = np.concatenate([IDS, np.zeros((2, 2), dtype=IDS.dtype)], axis=1)    # (2, 8): two more PAD
    np.testing.assert_allclose(model(padded).data[0, :6], logits[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model(padded).data[1, :4], logits[1, :4], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.classify(padded).data, classes, rtol=1e-12, atol=1e-12)
    real_token = padded.copy()
    real_token[1, 4] = 3                                           # a symbol instead of a PAD: it counts
    assert not np.allclose(model(real_token).data[1, :4], logits[1, :4])


def test_pad_is_never_attended_to():
    model = BERT(config(pad_id=5), rng=0)                          # PAD is whatever the config says
    model(IDS)
    probs = model.attention_probs()["encoder.1.self_attn"]         # (2, h, 6, 6)
    assert np.all(probs[0, :, :, 3] == 0)                          # IDS[0, 3] == 5 is PAD here
    assert np.all(probs[1, :, :, 2] == 0) and np.all(probs[1, :, :, 4:] > 0)


def test_parameter_names_and_the_tied_output():
    model = BERT(config(), rng=0)
    names = [name for name, _ in model.named_parameters()]
    assert names[:2] == ["embed.table", "positions.table"] and names[-2:] == ["classifier.W", "classifier.b"]
    assert "output.W" not in names and not any("decoder" in name for name in names)
    hidden = model.encode(IDS).data                                # (2, 6, d_model)
    np.testing.assert_allclose(model(IDS).data, hidden @ model.embed.table.data.T, rtol=1e-12, atol=1e-12)


def test_same_seed_same_model():
    a, b = BERT(config(), rng=4), BERT(config(), rng=4)
    np.testing.assert_array_equal(a.classify(IDS).data, b.classify(IDS).data)
    assert not np.allclose(a.classify(IDS).data, BERT(config(), rng=5).classify(IDS).data)


def test_bad_input_gives_clear_errors():
    model = BERT(config(), rng=0)
    with pytest.raises(ValueError, match="BERT: row 1 of ids has no real token"):
        model(np.array([[1, 3], [0, 0]]))
    with pytest.raises(ValueError, match="BERT: row 0 of ids has no real token"):
        model.classify(np.array([[0, 0, 0]]))
    with pytest.raises(ValueError, match="BERT: ids token id 9 is outside"):
        model(np.array([[1, 9]]))
    with pytest.raises(ValueError, match="BERT: ids has 7 positions but max_len is 6"):
        model(np.full((1, 7), 3))
    with pytest.raises(ValueError, match=r"BERT.classify: this model has no classification head.*n_classes"):
        BERT(tiny_config(tt.BERTConfig), rng=0).classify(IDS)
    with pytest.raises(ValueError, match="n_classes must be a positive integer"):
        tiny_config(tt.BERTConfig, n_classes=0)
    with pytest.raises(ValueError, match=r"pad_id must be a token id in \[0, vocab_size=7\)"):
        tiny_config(pad_id=7)


def test_same_seed_same_losses_with_dropout():
    def make(seed):
        return BERT(config(dropout=0.2), rng=seed)
    first = training_losses(make, classification_loss, seed=3)
    assert training_losses(make, classification_loss, seed=3) == first
    assert training_losses(make, classification_loss, seed=4) != first
    assert first[-1] < first[0]                                     # the steps do train


@pytest.mark.parametrize("pretrained_head", [None, 2], ids=["masked-LM only", "with a [CLS] head"])
@pytest.mark.parametrize("n_classes", [2, 3, None])
def test_classifier_from_copies_every_weight_but_the_cls_head(pretrained_head, n_classes):
    """Weights equal after transfer; a pretrained [CLS] head (another question) is never carried over."""
    pretrained = BERT(tiny_config(tt.BERTConfig, positions="learned", n_classes=pretrained_head), rng=1)
    model = tt.nn.classifier_from(pretrained, n_classes, rng=2, dropout=0.1)
    assert model.config.n_classes == n_classes and model.config.dropout == 0.1
    mine = dict(pretrained.named_parameters())
    for name, param in model.named_parameters():
        if name.startswith("classifier."):                          # new, drawn from rng
            fresh = dict(BERT(model.config, rng=2).named_parameters())[name]
            np.testing.assert_array_equal(param.data, fresh.data)
            if name == "classifier.W" and name in mine:             # (the biases both start at zero)
                assert not np.array_equal(param.data, mine[name].data)
        else:
            np.testing.assert_array_equal(param.data, mine[name].data)
            assert param.data is not mine[name].data                # a copy: fine-tuning leaves the source alone
    np.testing.assert_array_equal(model.eval()(IDS).data, pretrained.eval()(IDS).data)   # the same masked-LM output
