"""jvp: forward mode J t, against torch."""

from __future__ import annotations

import numpy as np
import pytest


def test_jvp_matches_torch(cli_json):
    torch = pytest.importorskip("torch")
    program = "y = tanh(W @ x) * sum(x**2)"
    x, t = [0.5, -1.0, 2.0], [1.0, 0.5, -0.25]
    w = [[0.1, 0.2, 0.3], [-0.4, 0.5, 0.6]]
    doc = cli_json("jvp", "-e", program, "--x", str(x), "-i", f"W={w}", "--t", str(t))
    W = torch.tensor(w, dtype=torch.float64)

    def f(xx):
        return torch.tanh(W @ xx) * (xx**2).sum()

    _, expected = torch.func.jvp(
        f, (torch.tensor(x, dtype=torch.float64),), (torch.tensor(t, dtype=torch.float64),)
    )
    np.testing.assert_allclose(doc["jvp"]["y"], expected.numpy(), rtol=1e-10)


def test_jvp_tangent_for_a_named_input_others_zero(cli_json):
    doc = cli_json("jvp", "-e", "y = x * w", "--x", "1,2", "-i", "w=3,4", "--t", "w=1,0")
    assert doc["jvp"]["y"] == [1.0, 0.0]
