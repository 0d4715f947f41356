"""Fixtures and helpers shared by the test files.

Test files import the helpers directly: `from conftest import binomial_bounds, keep_mask, normal, param, tiny_config` (and decoding_config).
"""
import numpy as np
import pytest

import tinytransformer as tt


@pytest.fixture
def rng():
    """A seeded Generator: every test draws the same numbers on every run."""
    return np.random.default_rng(0)


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


def tiny_config(**changes):
    """A Transformer config with small unequal sizes, float64, no dropout: for exact comparisons."""
    fields = dict(vocab_size=7, d_model=8, n_heads=2, n_layers=2, d_ff=12, max_len=6, dropout=0.0,
                  dtype="float64")
    return tt.TransformerConfig(**{**fields, **changes})
