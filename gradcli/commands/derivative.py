"""``gradcli derivative``: derivatives of any order of a scalar output, on the engine.

The k-th derivative is the engine's own gradient differentiated again, k times
(``engine.grad`` with ``create_graph``): each pass takes the one element it is by (``x`` or
``x[1]``), a scalar, and differentiates that by the next. A mixed partial d3f/dx2dz is the
sequence x, x, z. The Taylor coefficients f^(k)(x)/k! come from the same sequence along one
input. The work grows quickly with the order (each pass differentiates the graph of all
before it), so the order is at most ``MAX_ORDER``.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..base import bounds
from ..base.errors import GradcliError
from ..lang.validate import element_of
from ..ops import library as gc
from ..results import HigherDerivatives
from .compute import Bound, _scalar_output, output_of, real_numbers

MAX_ORDER = 10
_ELEMENT = re.compile(r"^\s*([^\W\d]\w*)\s*\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]\s*$")


def _element(bound: Bound, text: str) -> tuple[str, tuple[int, ...]]:
    """``x``, ``x[1]``, ``W[0,2]`` or ``x1`` (the element 1 of x) as (input, index)."""
    text = text.strip()
    match = _ELEMENT.match(text)
    if match:
        name, index = match.group(1), tuple(int(i) for i in match.group(2).split(","))
    elif text in bound.arrays:
        name, index = text, ()
    elif (parts := element_of(text)) is not None and parts[0] in bound.arrays:
        name, index = parts[0], (parts[1],)
    else:
        inputs = ", ".join(bound.arrays) or "none"
        raise GradcliError(
            f"--wrt names {text!r}, which is not an input of the program (or an element of one)",
            hint=f"its inputs are: {inputs}; name one, or an element as x[0]",
        )
    shape = bound.arrays[name].shape
    if index == () and len(shape) > 0 and math.prod(shape) != 1:
        raise GradcliError(
            f"--wrt {name}: {name} has shape {shape}, and a derivative is by one number",
            hint=f"name one element, e.g. --wrt {name}[{','.join('0' * len(shape))}]",
        )
    if index:
        if len(index) != len(shape) or any(i >= n for i, n in zip(index, shape)):
            raise GradcliError(
                f"--wrt {text}: the index {list(index)} is outside {name}'s shape {shape}",
                hint=f"give {len(shape)} indices within {shape}",
            )
    elif shape:
        index = (0,) * len(shape)
    if bound.arrays[name].dtype.kind != "f":
        raise GradcliError(
            f"--wrt {name}: {name} is an integer tensor, which has no derivative",
            hint="write its numbers as floats to differentiate it",
        )
    return name, index


def sequence(bound: Bound, wrt: list[str] | None, order: int | None) -> list[str]:
    """The inputs to differentiate by, in turn: ``wrt`` as given, or its one name (or the
    program's one differentiated input) ``order`` times."""
    if wrt is None:
        candidates = [n for n in bound.arrays if bound.requires_grad[n]]
        if len(candidates) != 1:
            found = ", ".join(candidates) or "none"
            raise GradcliError(
                f"name the inputs to differentiate by with --wrt (the inputs that require "
                f"grad: {found})",
                hint="e.g. --order 3 --wrt x,x,z for d3f/dx2dz, or --order 5 --wrt x",
            )
        wrt = candidates
    if order is None:
        order = len(wrt)
    if len(wrt) == 1:
        wrt = wrt * order
    if len(wrt) != order:
        raise GradcliError(
            f"--order {order} but --wrt names {len(wrt)} inputs",
            hint=f"name one input (differentiated {order} times) or {order} of them in turn",
        )
    if not 1 <= order <= MAX_ORDER:
        raise GradcliError(
            f"--order {order} is outside 1 to {MAX_ORDER}",
            hint=f"the work grows quickly with the order: give at most {MAX_ORDER}",
        )
    return wrt


def derivative(
    bound: Bound,
    of: str | None,
    wrt: list[str] | None = None,
    order: int | None = None,
    taylor: bool = False,
) -> HigherDerivatives:
    """The derivatives of the scalar output by each prefix of the ``wrt`` sequence; with
    ``taylor``, the Taylor coefficients along its one input."""
    for name, array in bound.arrays.items():
        real_numbers(name, array)
    names = sequence(bound, wrt, order)
    elements = [_element(bound, n) for n in names]
    labels = tuple(
        n if not i or bound.arrays[n].ndim == 0 else f"{n}[{','.join(map(str, i))}]"
        for n, i in elements
    )
    if taylor and len(set(labels)) != 1:
        raise GradcliError(
            "--taylor expands along one input, but --wrt names several",
            hint="give one input (or element): --taylor --order 6 --wrt x",
        )
    used = {n for n, _ in elements}
    leaves = {n: gc.Tensor(array, requires_grad=n in used) for n, array in bound.arrays.items()}
    env = bound.run(leaves)
    name, out = output_of(bound, env, of)
    _scalar_output(name, out, "derivative")

    def passes() -> np.ndarray:
        values = np.zeros(len(elements))
        current: gc.Tensor | None = out.reshape(())
        for k, (input_name, index) in enumerate(elements):
            bounds.tick(f"derivative of order {k + 1}")
            if current is None or not current.requires_grad:
                break  # a constant: this derivative and the later ones are 0
            (gradient,) = gc.grad(current, leaves[input_name], create_graph=True, allow_unused=True)
            if gradient is None:
                break
            current = gradient[index] if index else gradient.reshape(())
            values[k] = float(current.data)
        return values

    values = bound.engine(passes)
    coefficients = None
    if taylor:
        series = [float(out.data.reshape(())), *values]
        coefficients = np.array([c / math.factorial(k) for k, c in enumerate(series)])
    return HigherDerivatives(
        output=name,
        value=out.data,
        wrt=labels,
        derivatives=values,
        taylor=coefficients,
        warnings=bound.messages(),
    )
