"""What a script's values show: ``repr``, ``str`` and ``format`` as Python and torch give them.

Python's own values show as Python shows them, containers item by item with these rules
(a list of tensors shows each tensor as torch does). A tensor shows as torch prints it, with
the run's print options and default dtype, and torch's node name in ``grad_fn=<...>``: where
the engine builds an operation from others, its last node is named after the op table's
``backward_name`` of the operation the script called (``Run.node_names``). The text of a
format spec is charged to ``--max-memory`` before it is made (``format_size.py``).
"""

from __future__ import annotations

import collections
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from ...base import torch_text as torchtext
from ...engine.forward_ad import UnpackedDualTensor
from ...nn import UninitializedParameter
from ...ops import library as gc

if TYPE_CHECKING:
    from .runtime import Run


class Size(tuple):  # type: ignore[type-arg]
    """``torch.Size``: a tuple of ints that prints as torch prints it."""

    python_name = "torch.Size"

    def __repr__(self) -> str:
        return torchtext.size_repr(self)

    __str__ = __repr__

    def numel(self) -> int:
        count = 1
        for n in self:
            count *= n
        return count


class ReturnTypes(tuple):  # type: ignore[type-arg]
    """A named tuple of ``torch.return_types`` (``torch.max(x, 1)``): ``values``,
    ``indices``."""

    fields: tuple[str, ...] = ()
    kind = ""
    python_name = "torch.return_types"

    def __new__(cls, kind: str, fields: tuple[str, ...], items: tuple[Any, ...]) -> ReturnTypes:
        made = super().__new__(cls, items)
        made.fields, made.kind = fields, kind
        return made

    def field(self, name: str) -> Any:
        return self[self.fields.index(name)]


def tensor_text(run: Run, tensor: gc.Tensor) -> str:
    node = tensor.grad_fn
    name = None if node is None else run.node_names.get(node) or node.name()
    tangent = tensor.tangent  # a dual tensor of forward_ad's level (its end takes it away)
    return torchtext.tensor_repr(
        tensor.data,
        requires_grad=tensor.requires_grad,
        grad_fn=name,
        options=run.print_options,
        default_dtype=run.default_dtype,
        tangent=None
        if tangent is None
        else show(run, tangent.data.item() if tangent.ndim == 0 else tangent),
    )


def show(run: Run, value: Any) -> str:
    """``repr(value)``."""
    if isinstance(value, gc.Tensor):
        if type(value) is gc.Tensor:
            return tensor_text(run, value)
        if isinstance(value, UninitializedParameter):
            return repr(value)
        return "Parameter containing:\n" + tensor_text(run, value)
    kind = type(value)
    if kind is list:
        run.steps.step()
        return "[" + ", ".join(show(run, item) for item in value) + "]"
    if kind is ReturnTypes:
        named = ",\n".join(f"{f}={show(run, v)}" for f, v in zip(value.fields, value))
        return f"torch.return_types.{value.kind}(\n{named})"
    if kind is UnpackedDualTensor:
        return f"UnpackedDualTensor(primal={show(run, value[0])}, tangent={show(run, value[1])})"
    if kind is tuple:
        run.steps.step()
        inner = ", ".join(show(run, item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if kind is dict:
        run.steps.step()
        return "{" + ", ".join(f"{show(run, k)}: {show(run, v)}" for k, v in value.items()) + "}"
    if kind is collections.OrderedDict:  # a state dict: as Python shows it
        run.steps.step()
        if not value:
            return "OrderedDict()"
        if sys.version_info >= (3, 12):
            pairs = ", ".join(f"{show(run, k)}: {show(run, v)}" for k, v in value.items())
            return f"OrderedDict({{{pairs}}})"
        pairs = ", ".join(f"({show(run, k)}, {show(run, v)})" for k, v in value.items())
        return f"OrderedDict([{pairs}])"
    if kind is set or kind is frozenset:
        if not value:
            return "set()" if kind is set else "frozenset()"
        inner = "{" + ", ".join(show(run, item) for item in value) + "}"
        return inner if kind is set else f"frozenset({inner})"
    if isinstance(value, BaseException):
        args = value.args
        inner = show(run, args[0]) if len(args) == 1 else ", ".join(show(run, a) for a in args)
        return f"{type(value).__name__}({inner})"
    library = run.library_classes.get(kind)  # a scheduler: torch's class in Python's form
    if library is not None and kind.__repr__ is object.__repr__:
        return f"<{library.path} object at 0x{id(value):x}>"
    return repr(value)


def text(run: Run, value: Any) -> str:
    """``str(value)``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (np.ndarray, np.generic, np.dtype)):  # numpy's own (print(a): [[1. 2.]])
        return str(value)
    if getattr(type(value), "python_name", None) and type(value).__str__ is not object.__str__:
        return str(value)  # torch.device('cpu') prints as cpu
    if isinstance(value, BaseException):
        args = value.args
        if type(value).__module__.startswith("numpy"):  # numpy's words from its own args
            return str(value)
        if isinstance(value, KeyError) and len(args) == 1:
            return show(run, args[0])
        return text(run, args[0]) if len(args) == 1 else show(run, args) if args else ""
    return show(run, value)


def formatted(run: Run, value: Any, spec: str, column: int | None = None) -> str:
    """``format(value, spec)``: a tensor as torch's ``Tensor.__format__`` (a one-element one
    as its number), other values of ours take only the empty spec, as Python's objects."""
    if isinstance(value, gc.Tensor) and type(value) is not gc.Tensor:  # a Parameter
        if spec:
            raise TypeError(f"unsupported format string passed to {_format_name(value)}.__format__")
        return show(run, value)
    if isinstance(value, gc.Tensor):
        if value.dim() == 0:
            value = torchtext.item(value.data)
        elif spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        else:
            return tensor_text(run, value)
    if isinstance(value, (int, float, complex, str)):
        run.text.formatted((run.statement(), column), value, spec)
        return format(value, spec)
    if spec:
        raise TypeError(f"unsupported format string passed to {_format_name(value)}.__format__")
    return text(run, value)


def _format_name(value: Any) -> str:
    named = getattr(type(value), "python_name", None)
    if isinstance(named, str):
        return named
    return type(value).__name__
