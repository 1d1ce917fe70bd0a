"""--exact (exact numbers with sympy) and --symbolic without values (formulas, --shape).

The oracles: sympy's own ``diff`` of the formula written here by hand (independent of the
program's translation), and gradcli's float answer of the same command.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from gradcli.domains.exact import exact_value, program_constant


def _same(text: str, expected: sp.Expr) -> bool:
    """Whether gradcli's exact text is the number or formula ``expected``."""
    value = sp.sympify(text, locals={"x_0": X0, "x_1": X1, "x": X})
    return sp.simplify(value - expected) == 0


X0, X1, X = sp.symbols("x_0 x_1 x", real=True)
HAND = X0**2 * sp.log(X1) + sp.sin(X0 * X1)  # the program below, by hand
PROGRAM = "f = x0**2 * log(x1) + sin(x0 * x1)"
POINT = {X0: sp.Rational(1, 3), X1: sp.Integer(2)}


def _exact_and_floats(cli_json, *args, floats_at: str):
    """The command with --exact, and (the oracle) without it, at ``floats_at``: the point
    written as floats."""
    exact = cli_json(*args, "--exact")
    floats = cli_json(*args[:-1], floats_at)
    assert exact["exact"] is True and exact["warnings"] == []
    return exact, floats


def test_grad_is_sympys_derivative_at_the_exact_point(cli_json):
    exact, floats = _exact_and_floats(
        cli_json, "grad", "-e", PROGRAM, "--x", "1/3,2", floats_at=f"{1 / 3!r},2"
    )
    assert _same(exact["values"]["f"], HAND.subs(POINT))
    for k, symbol in enumerate((X0, X1)):
        assert _same(exact["grads"]["x"][k], sp.diff(HAND, symbol).subs(POINT))
    np.testing.assert_allclose(exact["numbers"]["grads"]["x"], floats["grads"]["x"], rtol=1e-14)
    np.testing.assert_allclose(exact["numbers"]["values"]["f"], floats["values"]["f"], rtol=1e-14)


def test_exact_numbers_are_simplified(cli_json):
    doc = cli_json("grad", "-e", "f = sin(x)**2", "--x", "pi/4", "--exact")
    assert doc["values"]["f"] == "1/2" and doc["grads"]["x"] == "1"
    doc = cli_json("eval", "-e", "y = sqrt(x) / 2", "--x", "2", "--exact")
    assert doc["values"]["y"] == "sqrt(2)/2"
    assert doc["numbers"]["values"]["y"] == pytest.approx(2**0.5 / 2, rel=1e-15)
    doc = cli_json("grad", "-e", "f = x * log(x)", "--x", "2", "--exact")
    assert _same(doc["grads"]["x"], sp.log(2) + 1)


def test_jacobian_and_hessian_are_exact(cli_json):
    exact, floats = _exact_and_floats(
        cli_json,
        "jacobian",
        "-e",
        "y = exp(x) / sum(exp(x))",
        "--x",
        "0,log(2)",
        floats_at=f"0,{math.log(2)!r}",
    )
    assert exact["values"]["y"] == ["1/3", "2/3"]
    assert exact["jacobian"]["x"] == [["2/9", "-2/9"], ["-2/9", "2/9"]]
    np.testing.assert_allclose(
        exact["numbers"]["jacobian"]["x"], floats["jacobian"]["x"], rtol=1e-12
    )
    exact, floats = _exact_and_floats(
        cli_json, "hessian", "-e", PROGRAM, "--x", "1/3,2", floats_at=f"{1 / 3!r},2"
    )
    block = exact["hessian"]["x,x"]
    for i, a in enumerate((X0, X1)):
        for j, b in enumerate((X0, X1)):
            assert _same(block[i][j], sp.diff(HAND, a, b).subs(POINT))
    np.testing.assert_allclose(
        exact["numbers"]["hessian"]["x,x"], floats["hessian"]["x,x"], rtol=1e-12
    )


def test_a_decimal_is_the_decimal_it_writes():
    assert exact_value("0.1", "x").item() == sp.Rational(1, 10)
    assert list(exact_value("1e-3, 2.5", "x")) == [sp.Rational(1, 1000), sp.Rational(5, 2)]
    assert program_constant(0.1) == (sp.Rational(1, 10), None)
    number, note = program_constant(float(np.pi / 2))
    assert number == sp.pi / 2 and "read as pi/2" in (note or "")


def test_decimal_inputs_and_program_numbers_stay_exact(cli_json):
    doc = cli_json("grad", "-e", "f = 0.5 * x**2 + 0.1", "--x", "0.1", "--exact")
    assert doc["values"]["f"] == "21/200" and doc["grads"]["x"] == "1/10"
    assert doc["exact"] is True


def test_a_float_input_is_said_and_stays_a_float(cli_json):
    doc = cli_json("eval", "-e", "y = 2 * x", "--x", "rand(2)", "--exact")
    assert doc["exact"] is False
    assert "x is not exact (its value came as floats)" in doc["warnings"]
    assert any(w.startswith("not exact (floats): ") for w in doc["warnings"])
    floats = cli_json("eval", "-e", "y = 2 * x", "--x", "rand(2)")
    np.testing.assert_allclose(doc["numbers"]["values"]["y"], floats["values"]["y"], rtol=1e-15)


def test_whole_numbers_of_a_constructor_are_exact(cli_json):
    doc = cli_json("grad", "-e", "f = sum(x**3) / 3", "--x", "ones(3)", "--exact")
    assert doc["values"]["f"] == "1" and doc["grads"]["x"] == ["1", "1", "1"]


def test_a_function_without_a_symbolic_form_falls_back_to_floats(cli_json):
    doc = cli_json("grad", "-e", "f = relu(x) * x", "--x", "1/2", "--exact")
    assert doc["grads"]["x"] == 1.0  # the float answer, said
    (warning,) = doc["warnings"]
    assert warning.startswith("not exact: relu has no symbolic form here")
    assert warning.endswith("the numbers are floats")


def test_gradient_formulas_without_values(cli_json):
    doc = cli_json("grad", "-e", "f = sum(x**3)", "--symbolic", "--shape", "x=2")
    assert doc["values"]["f"] == "x_0**3 + x_1**3"
    assert doc["grads"]["x"] == ["3*x_0**2", "3*x_1**2"]
    assert "numbers" not in doc and "exact" not in doc


def test_formulas_of_a_scalar_input_and_a_given_value(cli_json):
    doc = cli_json("grad", "-e", "f = a * sin(x)**2", "-i", "a=1/3", "--symbolic")
    assert list(doc["grads"]) == ["x"]
    assert _same(doc["grads"]["x"], sp.diff(sp.Rational(1, 3) * sp.sin(X) ** 2, X))


def test_jacobian_and_hessian_formulas(cli_json):
    doc = cli_json("jacobian", "-e", "y = x * x[0]", "--symbolic", "--shape", "x=2")
    assert doc["jacobian"]["x"] == [["2*x_0", "0"], ["x_1", "x_0"]]
    doc = cli_json("hessian", "-e", PROGRAM, "--symbolic", "--shape", "x=2")
    block = doc["hessian"]["x,x"]
    for i, a in enumerate((X0, X1)):
        for j, b in enumerate((X0, X1)):
            assert _same(block[i][j], sp.diff(HAND, a, b))


def test_exact_tables_and_csv(cli):
    done = cli("grad", "-e", "f = x**2 / 3", "--x", "sqrt(2)", "--exact")
    assert done.exit_code == 0, done.stderr
    assert "f (exact)  shape ()" in done.stdout and "2/3 ≈ 0.6667" in done.stdout
    assert "2*sqrt(2)/3 ≈ 0.9428" in done.stdout
    done = cli("grad", "-e", "f = x**2 / 3", "--x", "sqrt(2)", "--exact", "--format", "csv")
    assert done.stdout.splitlines() == [
        "tensor,exact,value",
        "f,2/3,0.6666666666666666",
        "x.grad,2*sqrt(2)/3,0.9428090415820634",
    ]
    done = cli("eval", "-e", "y = 2 * x", "--x", "rand(2)", "--exact")
    assert "y (with floats)  shape (2,)" in done.stdout
    done = cli("hessian", "-e", "f = sum(x**4)", "--symbolic", "--shape", "x=2")
    assert "d2f/dxdx (formulas)  shape (2, 2)" in done.stdout and "12*x_0**2" in done.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("grad", "-e", "f = x**2", "--exact"), "no value for the input 'x'"),
        (("grad", "-e", "f = x**2", "--x", "1/0", "--exact"), "not a finite real number"),
        (("grad", "-e", "f = x**2", "--x", "2**100", "--exact"), "the exponent 100"),
        (("grad", "-e", "f = x**2", "--symbolic", "--shape", "x=a"), "cannot read --shape"),
        (("grad", "-e", "f = x**2", "--shape", "z=2"), "program has no input 'z'"),
        (("jacobian", "-e", "y = x", "--x", "1", "--exact", "--transpose"), "--transpose"),
        (("grad", "-e", "f = x**2", "--x", "1", "--exact", "--repeat", "2"), "--repeat"),
        (("hessian", "-e", "f = x**2", "--x", "1", "--symbolic"), "every input has one"),
        (("grad", "-e", "f = relu(x)", "--symbolic"), "no formulas: relu has no symbolic"),
        (("grad", "-e", "y = x", "--symbolic", "--shape", "x=2"), "needs a scalar output"),
    ],
)
def test_bad_uses_are_refused_clearly(cli, args, message):
    done = cli(*args)
    assert done.exit_code == 2, done.stdout
    assert message in done.stderr and "Traceback" not in done.stderr


def test_help_shows_examples(cli):
    for command in ("eval", "grad", "jacobian", "hessian"):
        text = cli(command, "--help").stdout
        assert "--exact" in text and "Example: gradcli" in text
    assert "--shape" in cli("grad", "--help").stdout


@pytest.mark.parametrize(
    "program, x, value, grad",
    [
        ("f = log(x)", "0", -math.inf, math.inf),  # sympy: zoo
        ("f = log(x)", "-1", math.nan, -1.0),  # sympy: I*pi
        ("f = sqrt(x)", "-4", math.nan, math.nan),  # sympy: 2*I
        ("f = x / 0", "1", math.inf, math.inf),  # sympy: zoo
    ],
)
def test_a_number_that_is_not_finite_and_real_gives_the_float_answer(cli, program, x, value, grad):
    """Where sympy's exact answer is complex or zoo, the answer is PyTorch's floats (-inf,
    nan) with the float path's warnings, and --strict exits 1 as it does without --exact."""
    import json

    json_args = ("--format", "json", "--nonfinite", "string")
    result = cli("grad", "-e", program, "--x", x, "--exact", *json_args, "--strict")
    assert result.exit_code == 1, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert "exact" not in document
    assert "not a finite real number" in document["warnings"][0]
    assert len(document["warnings"]) > 1  # the float path's own warning about the statement
    for got, expected in [(document["values"]["f"], value), (document["grads"]["x"], grad)]:
        got = float(got)  # "-inf", "nan" are strings in JSON
        assert (math.isnan(got) and math.isnan(expected)) or got == expected


def _whole(text: str) -> Decimal:
    """A whole number's digits, read without Python's 4,300-digit limit on int(text)."""
    assert text.isdigit(), text[:40]
    return Decimal(text)


def test_an_exact_number_beyond_pythons_digit_limit_is_written_whole(cli_json):
    """(3/7)**6000 has 5,072 digits in its denominator, past the 4,300 of Python's int-to-str:
    written whole all the same, and its derivative too."""
    document = cli_json("grad", "-e", "y = x**6000", "--x", "3/7", "--exact")
    numerator, denominator = document["values"]["y"].split("/")
    assert (_whole(numerator), _whole(denominator)) == (Decimal(3**6000), Decimal(7**6000))
    derivative = Fraction(6000 * 3**5999, 7**5999)  # in lowest terms: 7 divides neither
    numerator, denominator = document["grads"]["x"].split("/")
    expected = (Decimal(derivative.numerator), Decimal(derivative.denominator))
    assert (_whole(numerator), _whole(denominator)) == expected
    assert document["numbers"]["values"]["y"] == 0.0  # beneath float64, as PyTorch gives it


def test_an_exact_number_longer_than_max_length_is_refused_with_its_size(cli):
    result = cli("eval", "--exact", "-e", "y = x**6000", "--x", "3/7", "--max-length", "5000")
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("error: the exact value of y has at least 7,93")
    assert "at most 5,000 characters (--max-length)" in result.stderr
    assert "hint: raise --max-length to at least 7,93" in result.stderr
    assert "leave out --exact for the float answer" in result.stderr


NAMED_LIKE_AN_ELEMENT = ("-e", "y = x * x_0", "--x", "1,2", "-i", "x_0=3", "--wrt", "x,x_0")


def test_an_element_of_x_and_an_input_named_like_it_are_two_symbols(cli_json):
    # sympy takes symbols of one name for one: x's first element, x_0, is not the input x_0
    floats = cli_json("jacobian", *NAMED_LIKE_AN_ELEMENT)
    assert floats["jacobian"] == {"x": [[3.0, 0.0], [0.0, 3.0]], "x_0": [1.0, 2.0]}
    exact = cli_json("jacobian", *NAMED_LIKE_AN_ELEMENT, "--exact")
    assert exact["numbers"]["jacobian"] == floats["jacobian"]
    formulas = cli_json("jacobian", *NAMED_LIKE_AN_ELEMENT, "--symbolic")["symbolic"]
    assert formulas == {"x": [["x_0", "0"], ["0", "x_0"]], "x_0": ["x_0_", "x_1"]}


def test_check_agrees_with_an_input_named_like_an_element(cli):
    result = cli("check", *NAMED_LIKE_AN_ELEMENT)
    assert result.exit_code == 0, result.stderr
    assert "all methods agree" in result.stdout and "no symbolic check" not in result.stderr


@pytest.mark.parametrize(
    ("shape", "why"),
    [
        ("x=-1", "the size '-1' is negative"),
        ("x=2,-3", "the size '-3' is negative"),
        ("x=0", "the size '0' leaves the input without elements"),
        ("x=a", "the size 'a' is not a whole number"),
        ("x=1.5", "the size '1.5' is not a whole number"),
        ("x", "it is not NAME=SIZES"),
        ("=3", "it is not NAME=SIZES"),
    ],
)
def test_a_bad_shape_says_what_a_shape_is(cli, shape, why):
    done = cli("grad", "-e", "f = sum(x**3)", "--symbolic", "--shape", shape)
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: cannot read --shape {shape!r}: {why}")
    assert "hint: a shape is NAME= followed by the sizes" in done.stderr
