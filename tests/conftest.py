"""Fixtures shared by the test files (the helpers they import are in helpers.py)."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded Generator: every test draws the same numbers on every run."""
    return np.random.default_rng(0)
