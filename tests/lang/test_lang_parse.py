"""parse: the IR of representative expressions (sympy must keep the program's structure)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcli.lang import parse_program
from gradcli.lang.ir import Call, Const, Index, Name

X, W, Z, A = Name("x"), Name("w"), Name("z"), Name("A")


def ir(source: str):
    return parse_program(source).assignments[-1].ir


@dataclass(frozen=True)
class Lit:
    """An option of a call, written among its operands as the program writes it."""

    value: object


def call(name, *args):
    operands = tuple(tuple(a) if isinstance(a, list) else a for a in args if not isinstance(a, Lit))
    return Call(name, operands, tuple(a.value for a in args if isinstance(a, Lit)))


def const(value):
    return Const(float(value))


lit = Lit


@pytest.mark.parametrize(
    "source, expected",
    [
        ("y = x - 2", call("sub", X, const(2))),
        ("y = 2 - x", call("sub", const(2), X)),
        ("y = x / 2", call("div", X, const(2))),
        ("y = 1 / x", call("div", const(1), X)),
        ("y = -x", call("neg", X)),
        ("y = +x", X),
        ("y = --x", call("neg", call("neg", X))),
        ("y = e**x", call("exp", X)),
        ("y = x**2", call("pow", X, const(2))),
        ("y = x**-1", call("pow", X, const(-1))),
        ("y = x**w", call("pow", X, W)),
        ("y = A @ x", call("matmul", A, X)),
        ("y = w * x", call("mul", W, X)),
        ("y = x * -1", call("mul", X, const(-1))),
        ("y = x + -2", call("add", X, const(-2))),
        ("y = -2 * x", call("mul", const(-2), X)),
        ("y = pi * x", call("mul", const(math.pi), X)),
        ("y = x * 1e-3", call("mul", X, const(1e-3))),
    ],
)
def test_operators(source, expected):
    assert ir(source) == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        # sympy's Add and Mul would flatten, reorder, distribute and cancel; none of that here
        ("y = x - x", call("sub", X, X)),
        ("y = -(x - x)", call("neg", call("sub", X, X))),
        ("y = -(x + w)", call("neg", call("add", X, W))),
        ("y = x + (w + 1)", call("add", X, call("add", W, const(1)))),
        ("y = (x + w) + 1", call("add", call("add", X, W), const(1))),
        ("y = (x + 1) - 1", call("sub", call("add", X, const(1)), const(1))),
        ("y = x * (w * z)", call("mul", X, call("mul", W, Z))),
        ("y = (x / w) / z", call("div", call("div", X, W), Z)),
        ("y = x / (w / z)", call("div", X, call("div", W, Z))),
        ("y = x - (w - z)", call("sub", X, call("sub", W, Z))),
        ("y = x - w - z", call("sub", call("sub", X, W), Z)),
        ("y = x ** 2 ** w", call("pow", X, call("pow", const(2), W))),
        ("y = -x ** 2", call("neg", call("pow", X, const(2)))),
        ("y = (-x) ** 2", call("pow", call("neg", X), const(2))),
        ("y = x / x", call("div", X, X)),
        ("y = 0 * x", call("mul", const(0), X)),
    ],
)
def test_structure_is_kept(source, expected):
    assert ir(source) == expected


@pytest.mark.parametrize(
    "source, value",
    [
        ("y = 2 * 3", 6.0),
        ("y = 2 ** 3", 8.0),
        ("y = 2 ** -1", 0.5),
        ("y = -(2 * 3)", -6.0),
        ("y = pi / 2", math.pi / 2),
        ("y = 0.1 + 0.2", 0.1 + 0.2),
        ("y = e ** 2", math.exp(2)),
        ("y = e", math.e),
        ("y = 1e400", math.inf),
        ("y = -1e400", -math.inf),
    ],
)
def test_arithmetic_on_numbers_is_a_number(source, value):
    assert ir(source) == Const(value)


def test_a_non_finite_constant_expression_is_left_to_the_run():
    assert ir("y = 1 / 0") == call("div", const(1), const(0))


def test_negative_zero_keeps_its_sign():
    """sympy has no -0.0; it goes through as neg(0.0), folded back: 1 / (x * -0.0) is -inf."""
    value = ir("y = x * -0.0").args[1].value
    assert value == 0 and math.copysign(1, value) == -1
    assert math.copysign(1, ir("y = -0.0").value) == -1


def test_float_literal_overflowing_to_inf_is_a_number_not_a_name():
    assert ir("y = x * 1e400") == call("mul", X, const(math.inf))
    assert ir("y = clamp(x, max=1e400, min=-1e400)") == call(  # bounds are operands
        "clamp", X, const(-math.inf), const(math.inf)
    )


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_literals_are_read_exactly(number):
    assert ir(f"y = x * {number!r}") == call("mul", X, Const(number))


@pytest.mark.parametrize(
    "source, expected",
    [
        ("y = x[0]", Index(X, (0,))),
        ("y = x[-1]", Index(X, (-1,))),
        ("y = x[1, 2]", Index(X, (1, 2))),
        ("y = x[1:3]", Index(X, (slice(1, 3, None),))),
        ("y = x[::-1]", Index(X, (slice(None, None, -1),))),
        ("y = x[:, 0]", Index(X, (slice(None, None, None), 0))),
        ("y = x[..., None]", Index(X, (Ellipsis, None))),
        ("y = x[0][1]", Index(Index(X, (0,)), (1,))),
        ("y = (x + w)[0]", Index(call("add", X, W), (0,))),
    ],
)
def test_indexing_and_slicing(source, expected):
    assert ir(source) == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("y = sum(x)", call("sum", X, lit(None), lit(False), lit(None))),
        ("y = sum(x, 1)", call("sum", X, lit(1), lit(False), lit(None))),
        ("y = sum(x, keepdim=True, dim=-1)", call("sum", X, lit(-1), lit(True), lit(None))),
        ("y = mean(input=x)", call("mean", X, lit(None), lit(False), lit(None))),
        ("y = sum(x, dtype=torch.float32)", call("sum", X, lit(None), lit(False), lit("float32"))),
        ("y = clamp(x, max=1)", call("clamp", X, None, const(1))),  # bounds may be tensors
        ("y = clamp(x, min=-0.5)", call("clamp", X, const(-0.5), None)),
        ("y = norm(x, p=1)", call("norm", X, lit(1), lit(None), lit(False))),
        (
            "y = cross_entropy(x, w, reduction='sum')",
            call("cross_entropy", X, W, lit("sum"), lit(-100), lit(0.0), None),  # weight None
        ),
        (
            "y = bce_with_logits(x, w)",
            call("binary_cross_entropy_with_logits", X, W, lit("mean"), None, None),
        ),
        ("y = softmax(x, dim=0)", call("softmax", X, lit(0), lit(None))),
        ("y = reshape(x, 2, -1)", call("reshape", X, lit(2), lit(-1))),
        ("y = transpose(x, 0, 1)", call("transpose", X, lit(0), lit(1))),
        ("y = stack([x, w])", call("stack", [X, W], lit(0))),
        (
            "y = cat([x, x + 1], dim=0)",
            call("cat", [X, call("add", X, const(1))], lit(0)),
        ),
        ("y = where(x, w, 0)", call("where", X, W, const(0))),
        # torch's *tensors: the tensors as arguments, or as one list or tuple
        ("y = meshgrid(x, w, indexing='xy')[1]", call("meshgrid", [X, W], lit("xy"), lit((1, 0)))),
        ("y = meshgrid([x, w])[0]", call("meshgrid", [X, W], lit(None), lit((0, 0)))),
        ("y = torch.meshgrid((x,))[0]", call("meshgrid", [X], lit(None), lit((0, 0)))),
    ],
)
def test_calls_keywords_and_defaults(source, expected):
    assert ir(source) == expected


def test_names_sympy_knows_are_plain_names():
    for name in (
        "Integer",
        "Float",
        "Symbol",
        "Mul",
        "Add",
        "Pow",
        "Rational",
        "S",
        "N",
        "I",
        "E",
        "Q",
        "O",
        "oo",
        "lambda_",
        "inf",
        "nan",
    ):
        assert ir(f"y = {name} * 2.5 + 1") == call(
            "add", call("mul", Name(name), const(2.5)), const(1)
        )


def test_the_ir_round_trips_through_json():
    import json

    from gradcli.lang import ParsedProgram

    program = parse_program("A = randn(2, 2)\ny = sum(A @ x[0:2] * 1e400, dim=0)")
    again = ParsedProgram.from_json(json.loads(json.dumps(program.to_json())))
    assert again == program
