"""Fixtures shared by the test files (the helpers they import are in helpers.py)."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded Generator: every test draws the same numbers on every run."""
    return np.random.default_rng(0)


def pytest_collection_modifyitems(items):
    """A test that executes a notebook or builds the book is slow by its nature: `pytest -m "not slow"`, the
    fast loop, leaves it out with the tests marked slow one by one."""
    for item in items:
        if item.get_closest_marker("notebook") or item.get_closest_marker("site"):
            item.add_marker(pytest.mark.slow)
