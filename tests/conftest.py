"""Shared test setup: every test starts from the same random state."""

import numpy as np
import pytest

import gradcli as gc


@pytest.fixture(autouse=True)
def _seed_randomness():
    """Seed gradcli's generator (``gc.rand``/``gc.randn``) and numpy's global one."""
    gc.manual_seed(0)
    np.random.seed(0)
    yield
