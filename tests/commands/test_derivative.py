"""gradcli derivative: any order, mixed partials and Taylor coefficients on the engine
(nested differentiation), checked against sympy's diff of the formula written by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sympy as sp

x, z = sp.symbols("x z", real=True)


def _sympy(formula: sp.Expr, sequence: list[sp.Symbol], point: dict) -> list[float]:
    """The derivatives by each prefix of ``sequence``, at ``point``: the oracle."""
    found, current = [], formula
    for symbol in sequence:
        current = sp.diff(current, symbol)
        found.append(float(current.subs(point).evalf(30)))
    return found


@pytest.mark.parametrize(
    "program, formula, at",
    [
        ("f = sin(x) * exp(x)", sp.sin(x) * sp.exp(x), 1.0),
        ("f = tanh(x)", sp.tanh(x), 0.5),
        ("f = 1 / (1 + x**2)", 1 / (1 + x**2), 0.3),
        ("f = log1p(x) * sqrt(x)", sp.log(1 + x) * sp.sqrt(x), 2.0),
        ("f = sigmoid(x)", 1 / (1 + sp.exp(-x)), -0.7),
    ],
)
def test_every_order_along_one_input_is_sympys(cli_json, program, formula, at):
    order = 8
    doc = cli_json("derivative", "-e", program, "--x", repr(at), "--order", order)
    expected = _sympy(formula, [x] * order, {x: at})
    got = [d["value"] for d in doc["derivatives"]]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    assert [d["order"] for d in doc["derivatives"]] == list(range(1, order + 1))
    assert doc["derivatives"][2]["name"] == "d3f/dx3"


def test_a_mixed_partial_takes_the_inputs_in_turn(cli_json):
    program = "f = x**3 * z**2 + sin(x * z)"
    formula = x**3 * z**2 + sp.sin(x * z)
    doc = cli_json(
        "derivative", "-e", program, "--x", "2", "-i", "z=0.5", "--order", "3", "--wrt", "x,x,z"
    )
    expected = _sympy(formula, [x, x, z], {x: 2, z: sp.Rational(1, 2)})
    np.testing.assert_allclose([d["value"] for d in doc["derivatives"]], expected, rtol=1e-12)
    assert [d["name"] for d in doc["derivatives"]] == ["df/dx", "d2f/dx2", "d3f/dx2dz"]
    assert doc["derivatives"][-1]["wrt"] == ["x", "x", "z"]


def test_an_element_of_a_vector_input(cli_json):
    doc = cli_json(
        "derivative", "-e", "f = sum(exp(x) * x)", "--x", "0.5,1", "--order", "4", "--wrt", "x[1]"
    )
    expected = _sympy(sp.exp(x) * x, [x] * 4, {x: 1})
    np.testing.assert_allclose([d["value"] for d in doc["derivatives"]], expected, rtol=1e-12)
    assert doc["derivatives"][1]["name"] == "d2f/dx[1]^2"
    same = cli_json(
        "derivative", "-e", "f = sum(exp(x) * x)", "--x", "0.5,1", "--order", "4", "--wrt", "x1"
    )
    assert same["derivatives"] == doc["derivatives"]


def test_past_a_polynomials_degree_the_derivatives_are_zero(cli_json):
    doc = cli_json("derivative", "-e", "f = x**2 + 3*x", "--x", "1", "--order", "4")
    assert [d["value"] for d in doc["derivatives"]] == [5.0, 2.0, 0.0, 0.0]


def test_taylor_coefficients_up_to_order_ten(cli_json):
    doc = cli_json("derivative", "-e", "f = exp(x)", "--x", "0", "--order", "10", "--taylor")
    np.testing.assert_allclose(doc["taylor"], [1 / math.factorial(k) for k in range(11)])
    at = sp.Rational(1, 2)
    formula = 1 / (1 - x)
    doc = cli_json("derivative", "-e", "f = 1 / (1 - x)", "--x", "0.5", "--order", "6", "--taylor")
    series = sp.series(formula, x, at, 7).removeO()
    h = sp.Symbol("h")
    shifted = sp.expand(series.subs(x, at + h))
    expected = [float(shifted.coeff(h, k)) for k in range(7)]
    np.testing.assert_allclose(doc["taylor"], expected, rtol=1e-12)


def test_against_torch_nested_autograd(cli_json):
    torch = pytest.importorskip("torch")
    doc = cli_json("derivative", "-e", "f = cos(x) * x**3", "--x", "0.8", "--order", "5")
    t = torch.tensor(0.8, dtype=torch.float64, requires_grad=True)
    current, expected = torch.cos(t) * t**3, []
    for _ in range(5):
        (current,) = torch.autograd.grad(current, t, create_graph=True)
        expected.append(current.item())
    np.testing.assert_allclose([d["value"] for d in doc["derivatives"]], expected, rtol=1e-12)


def test_table_and_csv(cli):
    done = cli("derivative", "-e", "f = x**3 * z**2", "--x", "2", "-i", "z=3", "--wrt", "x,x,z")
    assert done.exit_code == 0, done.stderr
    assert "derivatives of f by x, z" in done.stdout
    assert "d3f/dx2dz" in done.stdout and "72" in done.stdout
    done = cli("derivative", "-e", "f = exp(x)", "--x", "0", "--order", "2", "--taylor")
    assert "coefficient f^(k)/k!" in done.stdout
    done = cli("derivative", "-e", "f = x**4", "--x", "1", "--order", "2", "--format", "csv")
    assert done.stdout.splitlines() == [
        "order,derivative,value",
        "1,df/dx,4.0",
        "2,d2f/dx2,12.0",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (("-e", "f = x * z", "--x", "1", "-i", "z=2", "--order", "2"), "name the inputs"),
        (("-e", "f = sum(x)", "--x", "1,2", "--order", "2", "--wrt", "x"), "has shape (2,)"),
        (("-e", "f = x", "--x", "1", "--order", "11"), "outside 1 to 10"),
        (("-e", "f = x", "--x", "1", "--order", "3", "--wrt", "x,x"), "--order 3 but --wrt"),
        (("-e", "y = x * 2", "--x", "1,2", "--wrt", "x[0]"), "needs a scalar output"),
        (("-e", "f = x * z", "--x", "1", "-i", "z=2", "--wrt", "x,z", "--taylor"), "one input"),
        (("-e", "f = sum(x)", "--x", "1,2", "--wrt", "x[5]"), "outside x's shape"),
        (("-e", "f = x", "--x", "1", "--wrt", "w"), "not an input of the program"),
    ],
)
def test_bad_uses_are_refused_clearly(cli, args, message):
    done = cli("derivative", *args)
    assert done.exit_code == 2, done.stdout
    assert message in done.stderr and "Traceback" not in done.stderr


def test_help_shows_examples(cli):
    text = cli("derivative", "--help").stdout
    assert "--order" in text and "--taylor" in text and "Example: gradcli derivative" in text


def test_derivatives_zeros_keep_their_sign_as_grads_and_torchs_do(cli_json):
    """The JSON of every command keeps the sign of a zero (IEEE's, which torch computes and
    prints as -0.): derivative's first derivative is grad's, to the sign."""
    torch = pytest.importorskip("torch")
    x = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    (expected,) = torch.autograd.grad(-(x**2), x)
    args = ("-e", "f = -(x**2)", "--x", "0")
    derivative = cli_json("derivative", *args, "--order", "2")["derivatives"]
    grad = cli_json("grad", *args)["grads"]["x"]
    first = derivative[0]["value"]
    assert json.dumps(first) == json.dumps(grad) == json.dumps(expected.item()) == "-0.0"
    assert derivative[1]["value"] == -2.0
