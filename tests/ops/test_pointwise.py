"""Programs that use the element-wise functions and activations, and the operators % and //,
give torch's answers through the command line; `gradcli functions` lists them."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

X = [0.3, -1.7, 2.4, -0.2]


def _program(x):
    h = F.gelu(x, approximate="tanh") * torch.logaddexp(x, torch.ones_like(x))
    h = h + (x % 0.7) * F.hardswish(x) + torch.lerp(x, x * x, 0.3) + torch.atan2(x, 2 + 0 * x)
    h = h + F.softplus(x, beta=2.0) - F.elu(x, alpha=0.5) * torch.fmod(x, -0.9)
    return (h + F.softmin(x, 0) + torch.xlogy(x * x, 1.5 + x.sin())).sum()


SOURCE = (
    "h = gelu(x, approximate='tanh') * logaddexp(x, 1); "
    "h2 = h + (x % 0.7) * hardswish(x) + lerp(x, x * x, 0.3) + atan2(x, 2); "
    "h3 = h2 + softplus(x, beta=2) - elu(x, alpha=0.5) * fmod(x, -0.9); "
    "y = sum(h3 + softmin(x, 0) + xlogy(x * x, 1.5 + sin(x)))"
)


def test_a_program_of_the_new_functions_gives_torchs_gradient(cli_json):
    document = cli_json("grad", "-e", SOURCE, "--x", ",".join(map(str, X)))
    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    y = _program(x)
    y.backward()
    np.testing.assert_allclose(document["values"]["y"], y.item(), rtol=1e-12)
    np.testing.assert_allclose(document["grads"]["x"], x.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_remainder_and_floor_division_have_pythons_signs(cli_json):
    document = cli_json(
        "eval",
        "-e",
        "q = x // -0.75; r = x % -0.75; y = q * -0.75 + r",
        "--x",
        ",".join(map(str, X)),
    )
    x = torch.tensor(X, dtype=torch.float64)
    np.testing.assert_array_equal(document["values"]["q"], torch.floor_divide(x, -0.75))
    np.testing.assert_array_equal(document["values"]["r"], torch.remainder(x, -0.75))
    np.testing.assert_array_equal(document["values"]["r"], [v % -0.75 for v in X])
    np.testing.assert_allclose(document["values"]["y"], X, rtol=1e-12)


def test_differentiating_through_floor_division_is_torchs_error(cli):
    result = cli("grad", "-e", "y = sum(x * (x // 2))", "--x", "1,3", "--no-cache")
    assert result.exit_code == 2
    assert "derivative for floor_divide is not implemented" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_approximation_is_refused_with_the_choices(cli):
    result = cli("eval", "-e", "y = gelu(x, approximate='erf')", "--x", "1", "--no-cache")
    assert result.exit_code == 2
    assert "approximate of gelu must be 'none' or 'tanh'" in result.stderr


def test_functions_lists_the_new_entries(cli):
    listing = cli("functions").stdout
    for signature in [
        "remainder(input, other)",
        "floor_divide(input, other)",
        "softplus(input, beta=1.0, threshold=20.0)",
        "gelu(input, approximate='none')",
        "hardtanh(input, min_val=-1.0, max_val=1.0)",
        "nan_to_num(input, nan=0.0, posinf=None, neginf=None)",
        "lerp(input, end, weight)",
        "glu(input, dim=-1)",
        "round(input, decimals=0)",
    ]:
        assert signature in listing, signature
    assert "the derivative at 0 is alpha" in listing  # elu's kink convention
