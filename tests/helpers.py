"""Helpers the test files share: small configs, input makers, bounds, and the whole-model gradient check.

    from helpers import tiny_config, param, normal, keep_mask, assert_gradients_along_random_directions
"""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.tasks import masked_lm


def param(data, dtype=np.float64):
    """A Tensor of data (float64 unless dtype says otherwise) that collects a gradient."""
    return tt.Tensor(np.asarray(data, dtype=dtype), requires_grad=True)


def normal(*shape):
    """A maker of standard normal arrays of shape: normal(2, 3)(rng) -> (2, 3) array."""
    return lambda rng: rng.standard_normal(shape)


def keep_mask(*shape, empty_row=None):
    """A maker of random keep-masks (True = may attend) with at least one kept key per query row.

    empty_row, an index into the leading axes, makes that query row attend to nothing.
    """
    def make(rng):
        keep = rng.random(shape) > 0.4
        keep[..., 0] = True
        if empty_row is not None:
            keep[empty_row] = False
        return keep
    return make


def binomial_bounds(n, p, z=5.0):
    """n * p +- z binomial standard deviations: a seeded draw outside it is a wrong rule, not bad luck."""
    sd = np.sqrt(n * p * (1 - p))
    return n * p - z * sd, n * p + z * sd


def decoding_config(**changes):
    """Random weights, vocabulary 13, max_len 12, float64: long sequences that rarely hit EOS, for
    comparing decoding with and without the key/value cache."""
    return tiny_config(vocab_size=13, d_model=16, n_heads=4, d_ff=24, max_len=12, **changes)


def tiny_config(family=tt.TransformerConfig, **changes):
    """A config of the family (TransformerConfig, BERTConfig, VisionConfig) with small unequal sizes, float64,
    no dropout: for exact comparisons."""
    fields = dict(d_model=8, n_heads=2, n_layers=2, d_ff=12, max_len=6, dropout=0.0, dtype="float64")
    if issubclass(family, tt.TransformerConfig):
        fields["vocab_size"] = 7
    return family(**{**fields, **changes})


def analytic_gradients(model, loss_of):
    """{name: dL/dp} for every parameter, by the tape; loss_of(model) -> scalar Tensor."""
    model.zero_grad()
    with tt.Tape() as tape:
        loss = loss_of(model)
    tape.backward(loss)
    return {name: p.grad for name, p in model.named_parameters()}


def directional_check(model, loss_of, grads, rng, eps=1e-6):
    """(analytic, numeric) derivative of the loss along a random direction in parameter space.

    analytic = sum over parameters of <dL/dp, direction_p>;
    numeric = (L(p + eps * direction) - L(p - eps * direction)) / (2 eps).
    """
    params = dict(model.named_parameters())
    direction = {name: rng.standard_normal(p.shape) for name, p in params.items()}
    analytic = sum(float(np.sum(grads[name] * direction[name])) for name in params)

    def loss_moved(sign):
        for name, p in params.items():
            p.data = p.data + sign * eps * direction[name]
        value = float(loss_of(model).data)
        for name, p in params.items():
            p.data = p.data - sign * eps * direction[name]
        return value

    return analytic, (loss_moved(+1) - loss_moved(-1)) / (2 * eps)


def assert_gradients_along_random_directions(model, loss_of, grads, n_directions=3, seed=1):
    """The tape's gradients (None: a parameter the loss does not use, so 0) agree with finite
    differences along n random directions, to a relative error of 1e-6."""
    grads = {name: np.zeros(p.shape) if grads[name] is None else grads[name]
             for name, p in model.named_parameters()}
    rng = np.random.default_rng(seed)
    for _ in range(n_directions):
        analytic, numeric = directional_check(model, loss_of, grads, rng)
        assert analytic == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def assert_a_wrong_gradient_is_caught(model, loss_of, name):
    """The check above can fail: one parameter's gradient 1% off is noticed."""
    grads = analytic_gradients(model, loss_of)
    grads[name] = grads[name] * 1.01
    analytic, numeric = directional_check(model, loss_of, grads, np.random.default_rng(1))
    assert analytic != pytest.approx(numeric, rel=1e-6, abs=1e-8)


def training_losses(make_model, loss_of, seed, steps=3):
    """The losses of a few Adam steps of make_model(seed), dropout on: what 'same seed, same run' compares."""
    model = make_model(seed)
    optimizer = tt.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        model.zero_grad()
        with tt.Tape() as tape:
            loss = loss_of(model)
        tape.backward(loss)
        optimizer.step()
        losses.append(float(loss.data))
    return losses


def tiny_bert(**changes):
    """A tiny BERT (tiny_config) for 4 symbols and halves of up to 4: BERT_STYLE's learned positions and GELU."""
    return tt.nn.BERT(tiny_config(tt.BERTConfig, vocab_size=masked_lm.vocab_size_for(4), max_len=9, positions="learned",
                                  activation="gelu", **changes), rng=0)
