"""Python's operators on a script's values: tensors through the op table, the rest as Python.

A tensor operand sends ``a + b``, ``-x``, ``a < b``, ``x[i]`` to the engine's call of the
operator's entry (``F.OPERATORS``), through ``calls.apply`` (the run's memory, torch's
errors and node names). Python's own values use Python's operators, after the checks that
keep their size bounded (``limits.py``): ``' ' * 10**10``, ``2 ** 10**10``, ``1 << 10**10``.
Iterating a value goes through ``iterate``: a tensor by its first dimension, anything else as
Python iterates it, a step taken for each item.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ...lang import functions as F
from ...ops import library as gc
from . import classes, library_objects, limits, numpy_values
from .calls import apply, call_op
from .classes import ScriptObject

if TYPE_CHECKING:
    from .runtime import Run

_PYTHON: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "@": operator.matmul,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_SEQUENCES = (str, list, tuple)
_NUMPY = (np.ndarray, np.generic)


def binary(run: Run, symbol: str, left: Any, right: Any) -> Any:
    """``left symbol right``."""
    if isinstance(left, ScriptObject) or isinstance(right, ScriptObject):
        return classes.binary(symbol, left, right)
    if isinstance(left, _NUMPY) or isinstance(right, _NUMPY):
        return numpy_values.binary(run, symbol, left, right, _PYTHON[symbol])
    if isinstance(left, gc.Tensor) or isinstance(right, gc.Tensor):  # a Parameter too
        op = F.OPERATORS.get(symbol)
        if op is None or op.call is None:
            return _PYTHON[symbol](left, right)  # a tensor's own (<<): refused by Python
        if not isinstance(left, gc.Tensor):
            if symbol in ("==", "!=", "<", "<=", ">", ">="):
                flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(symbol, symbol)
                op = F.OPERATORS[flipped]
                return apply(run, op, op.call, [right, left])  # type: ignore[arg-type]
            if not isinstance(left, (int, float, complex, bool)):
                return _PYTHON[symbol](left, right)
            return _reflected(run, symbol, left, right)
        return apply(run, op, op.call, [left, right])  # type: ignore[arg-type]
    if symbol == "*":
        if isinstance(left, _SEQUENCES) and isinstance(right, int):
            limits.check_repeat(left, right)
        elif isinstance(right, _SEQUENCES) and isinstance(left, int):
            limits.check_repeat(right, left)
        elif type(left) is int and type(right) is int:
            limits.check_product(left, right)
    elif symbol == "+" and isinstance(left, _SEQUENCES) and type(left) is type(right):
        limits.check_concat(left, right)
    elif symbol == "**" and type(left) is int and type(right) is int:
        limits.check_power(left, right)
    elif symbol == "<<" and type(left) is int and type(right) is int:
        limits.check_shift(left, right)
    elif symbol == "%" and type(left) is str:
        _check_percent(left, right)
    return _PYTHON[symbol](left, right)


def _reflected(run: Run, symbol: str, number: Any, tensor: gc.Tensor) -> Any:
    """``number symbol tensor`` as torch's reflected method computes it: ``2 * x`` and
    ``2 + x`` are ``x * 2`` and ``x + 2`` (the tensor the node's first input), ``2 / x`` is
    ``x.reciprocal() * 2`` (its bits, and its two nodes), ``2 - x`` is ``torch.rsub(x, 2)``."""
    if symbol in ("+", "*"):
        number, tensor = tensor, number  # type: ignore[assignment]
    elif symbol == "/":
        reciprocal, to = F.lookup("reciprocal"), F.lookup("to")
        assert reciprocal is not None and to is not None
        if tensor.dtype.kind in "biu":  # torch's reciprocal of whole numbers is floating
            tensor = call_op(run, to, "to", (tensor, run.default_dtype.name), {})
        tensor = apply(run, reciprocal, reciprocal.call, [tensor])  # type: ignore[arg-type]
        number, tensor, symbol = tensor, number, "*"  # type: ignore[assignment]
    elif symbol == "-":  # torch's rsub(x, 2): its node RsubBackward1
        rsub = F.lookup("rsub")
        assert rsub is not None
        return apply(run, rsub, rsub.call, [tensor, number, 1])  # type: ignore[arg-type]
    op = F.OPERATORS[symbol]
    return apply(run, op, op.call, [number, tensor])  # type: ignore[arg-type]


def _check_percent(template: str, values: Any) -> None:
    """``template % values`` within the limits: its widths and precisions written out."""
    import re

    from ...base.errors import GradcliError

    if "*" in template:
        raise GradcliError(
            "gradcli run takes %-formatting with widths written out (no '*')",
            hint="write the width itself, or use an f-string",
        )
    widths = sum(int(n) for n in re.findall(r"[0-9]+", template))
    count = len(values) if isinstance(values, tuple) else 1
    limits.check_items(len(template) + widths + 64 * count, 4, "the %-formatted string")


def unary(run: Run, symbol: str, value: Any) -> Any:
    """``-value``, ``+value``, ``~value``."""
    if isinstance(value, gc.Tensor):
        if symbol == "+":
            return value
        op = F.OPERATORS["-x" if symbol == "-" else "~"]
        return apply(run, op, op.call, [value])  # type: ignore[arg-type]
    if symbol == "-":
        return -value
    if symbol == "+":
        return +value
    return ~value


def index(run: Run, value: Any, key: Any) -> Any:
    """``value[key]``."""
    if isinstance(value, gc.Tensor):
        op = F.OPERATORS["[]"]
        key = _tensor_index(key)
        try:
            return apply(run, op, op.call, [value, key])  # type: ignore[arg-type]
        except RuntimeError as exc:
            raise IndexError(str(exc)) from None
    return value[key]


def _tensor_index(key: Any) -> Any:
    """An index as the engine takes it: lists of ints as arrays, tuples as they are."""
    if isinstance(key, tuple):
        return tuple(_tensor_index_item(k) for k in key)
    return _tensor_index_item(key)


def _tensor_index_item(item: Any) -> Any:
    if isinstance(item, list):
        return gc.tensor(item)
    if isinstance(item, bool):
        return item
    return item


def iterate(run: Run, value: Any) -> Iterator[Any]:
    """The items of ``value`` as a ``for`` takes them, a step for each."""
    if isinstance(value, gc.Tensor):
        if value.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        unbind = F.lookup("unbind")  # torch's Tensor.__iter__ is iter(self.unbind(0))
        assert unbind is not None
        return run.steps.ticking(call_op(run, unbind, "unbind", (value,), {}))
    if isinstance(value, library_objects.LOADERS):  # a DataLoader's batches
        return run.steps.ticking(library_objects.iterated(run, value))
    return run.steps.ticking(value)


def truth(value: Any) -> bool:
    """``bool(value)``: a tensor of one element by its value, torch's error for more."""
    if isinstance(value, gc.Tensor):
        if value.numel() != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if value.numel() > 1
                else "Boolean value of Tensor with no values is ambiguous"
            )
        return bool(value.data.reshape(-1)[0])
    return bool(value)


def contains(run: Run, container: Any, item: Any) -> bool:
    """``item in container``."""
    if isinstance(container, gc.Tensor):
        if isinstance(item, gc.Tensor):
            return bool((container.data == item.data).any())
        return bool((container.data == item).any())
    if isinstance(container, (list, tuple)) and any(isinstance(v, gc.Tensor) for v in container):
        return any(v is item or truth(binary(run, "==", v, item)) for v in container)
    return item in container
