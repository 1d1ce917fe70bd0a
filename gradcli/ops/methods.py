"""Tensor operators and methods (``a + b``, ``x.sum()``, ``x[0]``, ``x.T``), from the op table.

Each entry's ``methods`` become methods of ``Tensor`` and its ``operator`` the operator's
special methods (with the reflected one, so ``2 * x`` works); ``extra["property"]`` names a
property (``x.T``); a spelling torch names its node by (``x.t()``) names it (``naming``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.tensor import Tensor
from .naming import spelled
from .table import OPS

# An operator as the table writes it -> Python's special methods for it (and its reflection).
_SPECIAL = {
    "+": ("__add__", "__radd__"),
    "-": ("__sub__", "__rsub__"),
    "*": ("__mul__", "__rmul__"),
    "/": ("__truediv__", "__rtruediv__"),
    "**": ("__pow__", "__rpow__"),
    "@": ("__matmul__", "__rmatmul__"),
    "%": ("__mod__", "__rmod__"),
    "//": ("__floordiv__", "__rfloordiv__"),
    "-x": ("__neg__",),
    "==": ("__eq__",),  # the reflection of a == b is b == a, which Python tries itself
    "!=": ("__ne__",),
    "<": ("__lt__",),  # 2 < x is x > 2: Python reflects comparisons itself
    "<=": ("__le__",),
    ">": ("__gt__",),
    ">=": ("__ge__",),
    "&": ("__and__", "__rand__"),
    "|": ("__or__", "__ror__"),
    "^": ("__xor__", "__rxor__"),
    "~": ("__invert__",),
    "[]": ("__getitem__",),
}


def _reflected(function: Callable[..., Any]) -> Callable[[Any, Any], Any]:
    return lambda self, other: function(other, self)


def attach() -> None:
    """Give ``Tensor`` the methods, operators and properties of every entry with a call."""
    for op in OPS.values():
        if op.call is None:
            continue
        for method in op.methods:
            setattr(Tensor, method, spelled(op, method))
        if op.operator in _SPECIAL:  # not the element vector, which Python does not write
            special, *reflection = _SPECIAL[op.operator]
            # an operator's call, where it is not the public one (add without alpha); where
            # that is an element-wise entry's plain call, apply_two itself (``_direct``)
            call = op.extra.get("operator_call", op.call)
            plain, direct = op.extra.get("direct", (None, None))
            call = direct if call is plain else call
            setattr(Tensor, special, call)
            for name in reflection:  # 2 - x: torch's rsub(x, 2), where the entry says
                setattr(Tensor, name, op.extra.get("reflected_call") or _reflected(call))
        if "property" in op.extra:
            setattr(Tensor, op.extra["property"], property(spelled(op, op.extra["property"])))
    setattr(Tensor, "__pos__", lambda self: self)  # noqa: B010 - +x is x
