"""attention="flash": every model with the tiled attention op gives the ordinary op's numbers, decodes with its key/value
cache, and trains as it does; the default stays the ordinary op."""
import dataclasses

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer.tasks import make_task

from helpers import analytic_gradients, assert_gradients_along_random_directions, decoding_config, tiny_config, \
    tiny_bert

IDS = np.array([[1, 3, 4, 5, 6], [1, 6, 5, 2, 0]])             # (2, 5), the second row ends in PAD
TARGETS = np.array([[3, 4, 5, 6, 2], [6, 5, 2, 0, 0]])


def transformer_loss(model):
    return F.cross_entropy(model(IDS, IDS[:, :4]), TARGETS[:, :4], ignore_index=tt.PAD)


def gpt_loss(model):
    return F.cross_entropy(model(IDS), TARGETS, ignore_index=tt.PAD)


def bert_loss(model):
    return F.cross_entropy(model(IDS % model.config.vocab_size), TARGETS % model.config.vocab_size,
                           ignore_index=tt.PAD)


def tiny_transformer(**changes):
    return tt.nn.Transformer(tiny_config(**changes), rng=0)


def tiny_gpt(**changes):
    return tt.nn.GPT(tiny_config(**changes), rng=0)


MODELS = {"Transformer": (tiny_transformer, transformer_loss), "GPT": (tiny_gpt, gpt_loss),
          "BERT": (tiny_bert, bert_loss)}


def test_the_default_is_the_ordinary_op():
    assert tt.TransformerConfig(7).attention == "ordinary"
    with pytest.raises(ValueError, match=r"attention must be one of \['ordinary', 'flash'\], got 'tiled'"):
        tt.TransformerConfig(7, attention="tiled")


@pytest.mark.parametrize("family", MODELS)
def test_every_model_gives_the_ordinary_ops_loss_and_gradients(family):
    make, loss_of = MODELS[family]
    ordinary, flash = make(), make(attention="flash")
    expected = analytic_gradients(ordinary, loss_of)
    found = analytic_gradients(flash, loss_of)
    np.testing.assert_allclose(loss_of(flash).data, loss_of(ordinary).data, rtol=1e-12)
    assert expected.keys() == found.keys()
    for name in expected:
        np.testing.assert_allclose(found[name], expected[name], rtol=1e-9, atol=1e-12, err_msg=name)
    assert all(probs is None for probs in flash.attention_probs().values())      # the tiles keep none
    assert all(probs is not None for probs in ordinary.attention_probs().values())


@pytest.mark.parametrize("family", ["GPT", "Transformer"])
def test_whole_model_gradient_along_random_directions(family):
    make, loss_of = MODELS[family]
    model = make(attention="flash", positions="rope", norm_first=True)
    assert_gradients_along_random_directions(model, loss_of, analytic_gradients(model, loss_of))


@pytest.mark.parametrize("model_class", [tt.nn.GPT, tt.nn.Transformer])
def test_decoding_with_the_cache_equals_decoding_without_it_and_the_ordinary_op(model_class):
    prompt = np.array([[1, 5, 6], [1, 4, 4]])
    found = {}
    for attention in ("ordinary", "flash"):
        model = model_class(decoding_config(attention=attention, positions="rope"), rng=3)
        model.eval()
        found[attention] = [tt.decode.greedy(model, prompt, max_len=9, use_cache=use) for use in (True, False)]
    np.testing.assert_array_equal(found["flash"][0], found["flash"][1])
    np.testing.assert_array_equal(found["flash"][0], found["ordinary"][0])


@pytest.mark.slow
def test_the_classroom_gpt_trains_with_it_as_with_the_ordinary_op():
    """The classroom GPT on the addition task, 40 steps of float32 training: the two ops' losses agree to a
    rounding that training amplifies (measured: 1.1e-7 apart at most), and they fall."""
    task = make_task("addition")
    runs = {attention: tt.train.train(dataclasses.replace(task.config(), attention=attention), task, steps=40,
                                      eval_every=1000, progress=False)
            for attention in ("ordinary", "flash")}
    ordinary, flash = (np.array(runs[a].losses) for a in ("ordinary", "flash"))
    assert runs["flash"].model.config.attention == "flash"
    assert flash[-5:].mean() < 0.7 * flash[:5].mean()
    np.testing.assert_allclose(flash, ordinary, rtol=1e-4)
