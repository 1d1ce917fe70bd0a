"""The library's tensors print as torch 2.13's do: ``repr(x)`` and ``str(x)`` are torch's text.

Each case builds the same tensor in gradcli's engine and in torch and compares the two texts
character for character: integers, floats, zeros beside other numbers (``0.0000``, not
``0.``), magnitudes that go to scientific notation, 0-d, empty, summarised large tensors,
``requires_grad`` and ``grad_fn``. The engine computes in float64 by default, as torch does
after ``torch.set_default_dtype(torch.float64)``, and in float32 inside
``default_dtype(float32)`` (``gradcli run``), as torch does by default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import gradcli as gc
from gradcli.engine.tensor import default_dtype

RANDOM = np.random.default_rng(28)
LONG, SQUARE = RANDOM.random(2000), RANDOM.random((40, 40)) * 100

# (label, how to build it from a module (gc or torch) and its dtypes: d.float (the one under
# test), d.int64, d.bool)
CASES: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("the issue's matrix", lambda m, d: m.tensor([[1.3818, 0.0], [0.0, 0.077]], dtype=d.float)),
    ("whole floats", lambda m, d: m.tensor([1.0, 2.0, -3.0], dtype=d.float)),
    ("negative zero", lambda m, d: m.tensor([-0.0, 1.5], dtype=d.float)),
    ("integers", lambda m, d: m.tensor([1, 20, -3], dtype=d.int64)),
    ("booleans", lambda m, d: m.tensor([True, False], dtype=d.bool)),
    ("mixed magnitudes", lambda m, d: m.tensor([1e-9, 3e7, 5.0], dtype=d.float)),
    ("a ratio over 1000", lambda m, d: m.tensor([0.5, 600.0], dtype=d.float)),
    ("nan and inf", lambda m, d: m.tensor([float("nan"), float("inf"), -1.25], dtype=d.float)),
    ("0-d", lambda m, d: m.tensor(3.5, dtype=d.float)),
    ("0-d whole", lambda m, d: m.tensor(8.0, dtype=d.float)),
    ("empty", lambda m, d: m.tensor([], dtype=d.float)),
    ("empty 2-d", lambda m, d: m.zeros(0, 3, dtype=d.float)),
    ("3-d", lambda m, d: m.tensor(np.arange(24.0).reshape(2, 3, 4) / 7, dtype=d.float)),
    ("wraps at 80", lambda m, d: m.tensor(np.linspace(-1, 1, 30), dtype=d.float)),
    ("summarised", lambda m, d: m.tensor(LONG, dtype=d.float)),
    ("summarised matrix", lambda m, d: m.tensor(SQUARE, dtype=d.float)),
    ("requires_grad", lambda m, d: m.tensor([1.0, 2.0], dtype=d.float, requires_grad=True)),
    ("grad_fn", lambda m, d: (m.tensor([1.0, 2.0], dtype=d.float, requires_grad=True) * 3).sum()),
    (
        "grad_fn of a matrix",
        lambda m, d: m.ones(2, 2, dtype=d.float, requires_grad=True) * m.tensor(0.1, dtype=d.float),
    ),
]


@dataclass
class Dtypes:
    float: Any
    int64: Any
    bool: Any


def _pair(case: Callable[[Any, Any], Any], torch: Any, dtype: str) -> tuple[str, str]:
    ours = case(gc, Dtypes(np.dtype(dtype), np.dtype(np.int64), np.dtype(np.bool_)))
    theirs = case(torch, Dtypes(getattr(torch, dtype), torch.int64, torch.bool))
    return repr(ours), repr(theirs)


@pytest.mark.parametrize("label", [label for label, _ in CASES])
def test_a_tensor_prints_as_torch_prints_it_in_float64(label):
    torch = pytest.importorskip("torch")
    case = dict(CASES)[label]
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        ours, theirs = _pair(case, torch, "float64")
    finally:
        torch.set_default_dtype(previous)
    assert ours == theirs


@pytest.mark.parametrize("label", [label for label, _ in CASES])
def test_a_tensor_prints_as_torch_prints_it_in_float32(label):
    torch = pytest.importorskip("torch")
    case = dict(CASES)[label]
    with default_dtype(np.float32):
        ours, theirs = _pair(case, torch, "float32")
    assert ours == theirs


def test_a_float32_tensor_beside_the_float64_default_names_its_dtype():
    """No torch needed: the text torch 2.13 prints under a float64 default, written out."""
    x = gc.tensor([[1.3818, 0.0], [0.0, 0.077]], dtype="float32")
    assert repr(x) == ("tensor([[1.3818, 0.0000],\n        [0.0000, 0.0770]], dtype=torch.float32)")
    assert str(x) == repr(x)
    y = gc.ones(2, requires_grad=True) * 2
    assert repr(y) == "tensor([2., 2.], grad_fn=<MulBackward0>)"
