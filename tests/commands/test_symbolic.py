"""grad --symbolic at a point: the gradient's formulas, against sympy, and why there are none."""

from __future__ import annotations

import sympy as sp

ROSENBROCK = "f = (1 - x0)**2 + 100*(x1 - x0**2)**2"


def test_symbolic_gradient_equals_sympy(cli_json):
    doc = cli_json("grad", "-e", ROSENBROCK, "--x", "-1.2,1", "--symbolic")
    x0, x1 = sp.symbols("x_0 x_1", real=True)
    f = (1 - x0) ** 2 + 100 * (x1 - x0**2) ** 2
    for formula, symbol in zip(doc["symbolic"]["x"], (x0, x1)):
        parsed = sp.sympify(formula, locals={"x_0": x0, "x_1": x1})
        assert sp.simplify(parsed - sp.diff(f, symbol)) == 0


def test_symbolic_says_why_not(cli):
    result = cli("grad", "-f", "samples/neural_network.gc", "--symbolic")
    assert result.exit_code == 0
    assert "no symbolic form: the inputs have 90 elements" in result.stderr
