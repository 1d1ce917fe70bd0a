"""Complex numbers in the test table.

``REAL_ROWS``: the rows of ``engine_optable.OPS`` for the complex entries (complex, real, imag,
conj, angle, polar, view_as_real, view_as_complex): real functions of real inputs that go
through the entry, so the real sweep (finite differences, second order, torch, batched replay)
holds them to account, the inputs being the real and imaginary parts.

``COMPLEX_ROWS``: one row per entry that takes complex operands, on complex inputs, for
``test_engine_complex.py``: the gradient of a real function of the result against torch 2.13
and against finite differences along the real and the imaginary parts.
Each function is written once, for a module ``m`` (gradcli's engine or torch: the same
spellings).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import gradcli as gc


def torch_module() -> Any:
    """torch, or a skip of the test that asked (tests using it are marked ``torch``)."""
    return pytest.importorskip("torch")


def _parts(m: Any, z: Any) -> Any:
    """A real function of a complex tensor that reads both of its parts."""
    return m.real(z) + 2 * m.imag(z)


def _both(function: Callable[..., Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``function(m, *inputs)`` as gradcli's row and torch's counterpart."""

    def engine(*xs: Any) -> Any:
        return function(gc, *xs)

    def torch(*xs: Any) -> Any:
        return function(torch_module(), *xs)

    return engine, torch


# -- real functions of real inputs, through each complex entry ----------------------------------

REAL_FUNCTIONS: dict[str, tuple[Callable[..., Any], str, tuple[str, ...]]] = {
    # name: (function of m and the inputs, spec ("broadcast" or "same"), primitives exercised)
    "complex": (
        lambda m, a, b: _parts(m, m.complex(a, b) * m.complex(b, a)),
        "broadcast",
        ("complex", "real", "imag", "mul"),
    ),
    "real": (lambda m, a, b: m.real(m.sin(m.complex(a, b))), "broadcast", ("real", "sin")),
    "imag": (lambda m, a, b: m.imag(m.exp(m.complex(a, b))), "broadcast", ("imag", "exp")),
    "conj": (
        lambda m, a, b: _parts(m, m.conj(m.complex(a, b)) * m.complex(b, a)),
        "broadcast",
        ("conj",),
    ),
    "angle": (lambda m, a, b: m.angle(m.complex(a, b)), "broadcast", ("angle",)),
    "polar": (lambda m, r, theta: _parts(m, m.polar(r, theta)), "broadcast", ("cos", "sin")),
    "view_as_real": (
        lambda m, a, b: m.view_as_real(m.complex(a, b) * m.complex(a, b)),
        "same",
        ("view_as_real",),
    ),
    "view_as_complex": (
        lambda m, a, b: _parts(m, m.view_as_complex(m.stack([a, b], -1)) * m.complex(b, a)),
        "same",
        ("view_as_complex", "stack"),
    ),
}


# -- complex inputs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ComplexRow:
    """``fn(m, *inputs)`` on complex inputs of ``shapes``; ``right``: the inputs keep a real
    part >= 0.3, away from the branch cut of log, sqrt and angle on the negative real axis."""

    name: str
    fn: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...] = ((2, 3),)
    right: bool = False


COMPLEX_ROWS: list[ComplexRow] = [
    ComplexRow("add", lambda m, a, b: a + b, ((2, 3), (3,))),
    ComplexRow("sub", lambda m, a, b: a - b, ((2, 3), (2, 1))),
    ComplexRow("rsub", lambda m, a, b: m.rsub(a, b), ((2, 3), (2, 1))),
    ComplexRow("mul", lambda m, a, b: a * b, ((2, 3), (3,))),
    ComplexRow("div", lambda m, a, b: a / b, ((2, 3), (2, 3)), right=True),
    ComplexRow("pow", lambda m, a: a**3),
    ComplexRow("neg", lambda m, a: -a),
    ComplexRow("reciprocal", lambda m, a: m.reciprocal(a), right=True),
    ComplexRow("exp", lambda m, a: m.exp(a)),
    ComplexRow("log", lambda m, a: m.log(a), right=True),
    ComplexRow("sqrt", lambda m, a: m.sqrt(a), right=True),
    ComplexRow("sin", lambda m, a: m.sin(a)),
    ComplexRow("cos", lambda m, a: m.cos(a)),
    ComplexRow("tanh", lambda m, a: m.tanh(a)),
    ComplexRow("sigmoid", lambda m, a: m.sigmoid(a)),
    ComplexRow("sum", lambda m, a: m.sum(a * a, 1)),
    ComplexRow("mean", lambda m, a: m.mean(a * a, 0)),
    ComplexRow("matmul", lambda m, a, b: a @ b, ((2, 3), (3, 2))),
    ComplexRow("reshape", lambda m, a: m.reshape(a * a, (3, 2))),
    ComplexRow("transpose", lambda m, a: m.transpose(a * a, 0, 1)),
    ComplexRow("getitem", lambda m, a: (a * a)[1, 1:]),
    ComplexRow("stack", lambda m, a, b: m.stack([a, a * b], 0), ((2, 3), (2, 3))),
    ComplexRow("cat", lambda m, a, b: m.cat([a, a * b], 1), ((2, 3), (2, 3))),
    ComplexRow("where", lambda m, a, b: m.where(m.real(a) > 0, a * b, b), ((2, 3), (2, 3))),
    ComplexRow("expand", lambda m, a: (a * a).expand(2, 2, 3)),
    ComplexRow("abs", lambda m, a: m.abs(a * a)),
    ComplexRow("detach", lambda m, a: m.detach(a) * a),
    ComplexRow("to", lambda m, a: m.real(a).to(m.complex128) * a.to(m.complex128)),
    ComplexRow("real", lambda m, a: m.real(a * a)),
    ComplexRow("imag", lambda m, a: m.imag(a * a)),
    ComplexRow("conj", lambda m, a, b: m.conj(a) * b, ((2, 3), (2, 3))),
    ComplexRow("angle", lambda m, a: m.angle(a), right=True),
    ComplexRow("view_as_real", lambda m, a: m.view_as_real(a * a)),
    ComplexRow("view_as_complex", lambda m, a: m.view_as_complex(m.view_as_real(a) * 2) * a),
    ComplexRow("complex", lambda m, a: m.complex(m.real(a) * m.imag(a), m.real(a) - m.imag(a)) * a),
    ComplexRow("polar", lambda m, a: m.polar(m.abs(a), m.angle(a)) * a, right=True),
]
