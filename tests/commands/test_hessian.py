"""hessian and hvp: second derivatives of a scalar output, against torch."""

from __future__ import annotations

import numpy as np
import pytest

ROSENBROCK = "f = (1 - x0)**2 + 100*(x1 - x0**2)**2"


def test_hessian_and_hvp_match_torch(cli_json):
    torch = pytest.importorskip("torch")
    x = [-1.2, 1.0]
    hessian = cli_json("hessian", "-e", ROSENBROCK, "--x", "-1.2,1")["hessian"]["x,x"]

    def f(xx):
        return (1 - xx[0]) ** 2 + 100 * (xx[1] - xx[0] ** 2) ** 2

    expected = torch.autograd.functional.hessian(f, torch.tensor(x, dtype=torch.float64))
    np.testing.assert_allclose(hessian, expected.numpy(), rtol=1e-10)
    assert hessian == [[1330.0, 480.0], [480.0, 200.0]]
    product = cli_json("hvp", "-e", ROSENBROCK, "--x", "-1.2,1", "--v", "0.5,-2")["hvp"]["x"]
    _, expected_hvp = torch.autograd.functional.hvp(
        f, torch.tensor(x, dtype=torch.float64), torch.tensor([0.5, -2.0], dtype=torch.float64)
    )
    np.testing.assert_allclose(product, expected_hvp.numpy(), rtol=1e-10)


def test_hessian_of_several_inputs_has_every_pair(cli_json):
    doc = cli_json("hessian", "-e", "f = sum(x * x * w)", "--x", "1,2", "-i", "w=3,4")
    assert set(doc["hessian"]) == {"x,x", "x,w", "w,x", "w,w"}
    assert doc["hessian"]["x,w"] == [[2.0, 0.0], [0.0, 4.0]]


def test_hessian_needs_a_scalar_output(cli):
    result = cli("hessian", "-e", "y = x * x", "--x", "1,2")
    assert result.exit_code == 2
    assert "hessian needs a scalar output" in result.stderr
