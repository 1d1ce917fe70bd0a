"""Comparisons, masks and logical operations through the command line, against torch: their
values (booleans shown as True/False, JSON true/false, CSV true/false), the gradients of
programs that use them, and the refusals of what has no gradient."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = [0.5, -1.5, 2.0, 0.0, -0.25]


def _x(requires_grad: bool = True):
    return torch.tensor(X, dtype=torch.float64, requires_grad=requires_grad)


def _grad(cli_json, source: str, torch_program) -> None:
    document = cli_json("grad", "-e", source, "--x", ",".join(map(str, X)), "--no-cache")
    x = _x()
    out = torch_program(x)
    out.backward()
    np.testing.assert_allclose(document["values"]["y"], out.item(), rtol=1e-12)
    np.testing.assert_allclose(document["grads"]["x"], x.grad.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize(
    ("source", "program"),
    [
        ("y = sum(where(x > 0, x, 0) ** 2)", lambda x: (torch.where(x > 0, x, 0) ** 2).sum()),
        ("y = sum(x * (x > 0) * x)", lambda x: (x * (x > 0) * x).sum()),  # relu, and at 0
        ("y = sum(masked_fill(x, x < 0, 2) * x)", lambda x: (x.masked_fill(x < 0, 2) * x).sum()),
        ("y = sum(x * any(x > 1))", lambda x: (x * torch.any(x > 1)).sum()),
        ("y = sum(x * all(x > 1))", lambda x: (x * torch.all(x > 1)).sum()),
        (
            "y = sum(where(-1 < x <= 0.5, exp(x), x ** 2))",
            lambda x: torch.where((-1 < x) & (x <= 0.5), x.exp(), x**2).sum(),
        ),
        (
            "y = sum(x * ((x > 0) ^ (x < 1)) + x * ~(x == 0) + x * ((x < 0) | (x >= 2)))",
            lambda x: (x * ((x > 0) ^ (x < 1)) + x * ~(x == 0) + x * ((x < 0) | (x >= 2))).sum(),
        ),
        (
            "y = sum(x.masked_fill(torch.isclose(x, 0.5 * x + 1, atol=0.1), 0) * x)",
            lambda x: (x.masked_fill(torch.isclose(x, 0.5 * x + 1, atol=0.1), 0) * x).sum(),
        ),
    ],
    ids=["where", "relu", "masked_fill", "any", "all", "chain", "bitwise", "isclose"],
)
def test_programs_with_masks_give_torchs_gradient(cli_json, source, program):
    _grad(cli_json, source, program)


def test_any_of_a_comparison_is_a_boolean_in_every_format(cli, cli_json):
    source = "m = x > 1; y = any(m)"
    document = cli_json("eval", "-e", source, "--x", ",".join(map(str, X)))
    x = _x(False)
    assert document["values"]["m"] == (x > 1).tolist() == [False, False, True, False, False]
    assert document["values"]["y"] is torch.any(x > 1).item() is True
    table = cli("eval", "-e", source, "--x", ",".join(map(str, X)))
    assert table.exit_code == 0 and "True" in table.stdout and "False" in table.stdout
    csv = cli("eval", "-e", source, "--x", "1,2", "--format", "csv").stdout.splitlines()
    assert "values.m,0,false" in csv and "values.m,1,true" in csv and "values.y,,true" in csv


def test_a_boolean_output_has_no_gradient(cli):
    result = cli("grad", "-e", "y = x > 0", "--x", "1,-2", "--no-cache")
    assert result.exit_code == 2
    assert "y is a boolean, which carries no gradient" in result.stderr
    assert "element 0 of tensors does not require grad" in result.stderr


def test_explain_gives_a_comparison_derivative_zero(cli_json):
    document = cli_json("explain", "-e", "y = x * (x > 0)", "--x", "0.5,-1", "--v", "1,1")
    (row,) = document["explain"]["backward"]
    (local,) = row["local"]
    assert local["value"] == [1.0, 0.0]
    assert "Piecewise" in local["formula"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("y = x ^ 2", "'^' is not a power in gradcli"),
        ("y = x ^ x", "'^' (bitwise_xor) takes boolean tensors"),
        ("y = ~x", "'~' (bitwise_not) takes boolean tensors"),
        ("y = (x > 0) - (x < 1)", "Subtraction, the `-` operator, with two bool tensors"),
        ("y = -(x > 0)", "Negation, the `-` operator, on a bool tensor"),
        ("y = masked_fill(x, x, 0)", "masked_fill only supports boolean masks"),
        ("y = x < 1 in x", "'in' is not a comparison of the language"),
    ],
)
def test_refusals(cli, source, message):
    result = cli("eval", "-e", source, "--x", "1,-2", "--no-cache")
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_compiled_batches_replay_comparisons(cli, tmp_path):
    """--batch replays the traced program at each point: the masks are recomputed there."""
    points = np.array([[0.5, -1.0], [-2.0, 3.0], [1.0, 1.0]])
    np.save(tmp_path / "p.npy", points)
    source = "y = sum(where(x > 0, x * x, -x) + masked_fill(x, x < 0, 2) * any(x > 2))"
    result = cli("grad", "-e", source, "--x", "1,1", "--batch", f"@{tmp_path}/p.npy")
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == len(points)
    for point, line in zip(points, lines):
        x = torch.tensor(point, requires_grad=True)
        y = (torch.where(x > 0, x * x, -x) + x.masked_fill(x < 0, 2) * torch.any(x > 2)).sum()
        y.backward()
        np.testing.assert_allclose(line["values"]["y"], y.item())
        np.testing.assert_allclose(line["grads"]["x"], x.grad.numpy())


def test_functions_lists_the_comparisons(cli):
    listing = cli("functions").stdout
    for name in ("eq", "gt", "logical_and", "isclose", "masked_fill", "heaviside", "any"):
        assert name in listing


def test_explain_shows_a_boolean_step_as_true_and_false(cli):
    done = cli("explain", "-e", "m = x > 0; y = sum(where(m, x, 0) * x)", "--x", "1,-2,3")
    assert done.exit_code == 0, done.stderr
    assert "[True, False, True]" in done.stdout
