"""Helpers the whole-model tests share: the directional gradient check (the tiny config is conftest's)."""
import numpy as np
import pytest

import tinytransformer as tt


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
