"""What a ``gradcli run`` script shows, as Python and torch show it.

``print(a, b, sep=..., end=...)`` with Python's rules (``str`` of each value); the ``repr`` of
every bare expression statement whose value is not None (``x.grad`` on a line of its own
shows the gradient); f-strings, with torch's ``Tensor.__format__``; tensors as torch prints
them (``torchtext.tensor_repr``), with torch's node names in ``grad_fn=<...>``: where the
engine builds an operation from others, its last node is named after the op table's
``backward_name`` of the operation (``y[0] = ...`` shows ``CopySlices``, not the engine's
``WhereBackward0``). Each function takes the ``ScriptRun`` whose values it shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import engine as gc
from ..base import torch_text as torchtext
from ..lang import functions as F
from ..lang.ir import Call
from .steps import CONVERSIONS, ScriptError, Shown, Step

if TYPE_CHECKING:
    from .execute import ScriptRun


class _Size(tuple[int, ...]):
    """``torch.Size``: a tuple that prints as torch prints it."""

    def __repr__(self) -> str:
        return torchtext.size_repr(self)

    __str__ = __repr__


class _Printed:
    """A value that prints as ``text`` (a tensor, a dtype); ``kind`` is its type's name as
    Python's format() names it, ``item`` a one-element tensor's number, which an f-string
    formats (``f"{loss:.4f}"``) as torch's ``Tensor.__format__`` does."""

    def __init__(self, text: str, kind: str = "torch.dtype", item: Any = None):
        self.text, self.kind, self.item = text, kind, item

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def shown_value(
    run: ScriptRun, step: Step, shown: Shown, span: tuple[int, int] | None = None
) -> Any:
    """The Python value a shown item has: a literal, a tensor (as ``_Printed``), None, a
    number, a list, a ``torch.Size``, an f-string's text (``span``: the columns of the
    f-string it is in)."""
    if shown.fstring:
        span = span or shown.span
        return "".join(formatted(run, step, piece, span) for piece in shown.pieces)
    return printable(run, raw_value(run, step, shown))


def formatted(run: ScriptRun, step: Step, piece: Shown, span: tuple[int, int] | None) -> str:
    """One piece of an f-string: ``{value!r:spec}`` as Python formats it, a tensor as
    torch's ``Tensor.__format__`` (a one-element tensor as its number), its text charged
    to the budget before it is made; Python's errors with carets under ``span``, the
    f-string's columns."""
    value = shown_value(run, step, piece, span)
    if piece.conversion != -1:
        value = CONVERSIONS[piece.conversion](value)
    elif isinstance(value, _Printed) and value.item is not None:
        value = value.item
    if isinstance(value, (_Printed, _Size)) and piece.spec:
        kind = value.kind if isinstance(value, _Printed) else "torch.Size"
        raise ScriptError(
            step.statement,
            "TypeError",
            f"unsupported format string passed to {kind}.__format__",
            span,
        )
    run.text.formatted((step.statement, None if span is None else span[0]), value, piece.spec)
    try:
        return format(value, piece.spec)
    except (ValueError, TypeError) as exc:  # Python's, for this value and spec
        raise ScriptError(step.statement, type(exc).__name__, str(exc), span) from None


def raw_value(run: ScriptRun, step: Step, shown: Shown) -> Any:
    """The value of a shown item, as the engine has it."""
    if shown.ir is None:
        return shown.literal
    if shown.several:
        assert isinstance(shown.ir, Call)  # see check_results
        return results(run, step, shown.ir, shown.columns)
    value: Any = run.value(step, shown.ir, shown.columns)
    for access in shown.access:
        value = accessed(run, step, shown, value, access)
    return value


def results(run: ScriptRun, step: Step, call: Call, columns: dict[str, int]) -> _Printed:
    """Every result of ``call`` (its first), printed as torch prints them: a named
    tuple of torch.return_types, or a tuple."""
    op = F.OPS[call.op]
    options = call.params[:-1]
    if "count" in op.extra:  # split: as many as its input's shape makes
        operands = [
            [run.value(step, e, columns) for e in a]
            if isinstance(a, tuple)
            else run.value(step, a, columns)
            for a in call.args
            if a is not None
        ]
        count = op.extra["count"](*op.arranged(operands, options))
    else:
        count = len(op.outputs)
    texts = [
        printable(run, run.value(step, replace(call, params=(*options, (k, 0))), columns)).text
        for k in range(count)
    ]
    if op.extra.get("plain"):
        return _Printed(f"({', '.join(texts)}{',' if len(texts) == 1 else ''})")
    named = ",\n".join(f"{name}={text}" for name, text in zip(op.outputs, texts))
    return _Printed(f"torch.return_types.{op.extra.get('return_type', op.name)}(\n{named})")


def accessed(run: ScriptRun, step: Step, shown: Shown, value: Any, access: str) -> Any:
    if not isinstance(value, gc.Tensor):
        attribute = access.removesuffix("()")
        raise ScriptError(
            step.statement,
            "AttributeError",
            f"'{type(value).__name__}' object has no attribute '{attribute}'",
        )
    if access == "grad":
        return run.grad(value, shown.line)
    if access in ("shape", "size()"):
        return _Size(value.shape)
    if access == "dtype":
        return _Printed(torchtext.dtype_repr(value.dtype))
    if access == "item()":
        try:
            return torchtext.item(value.data)
        except ValueError as exc:
            raise ScriptError(step.statement, "RuntimeError", str(exc)) from None
    if access == "tolist()":
        return tolist(run, step, value)
    if access == "zero_()":
        value.data[...] = 0
        return value
    simple: dict[str, Callable[[gc.Tensor], Any]] = {
        "requires_grad": lambda t: t.requires_grad,
        "is_leaf": lambda t: t.is_leaf,
        "numel()": lambda t: t.numel(),
        "dim()": lambda t: t.dim(),
    }
    return simple[access](value)


def tolist(run: ScriptRun, step: Step, tensor: gc.Tensor) -> Any:
    """``tensor.tolist()``, charged with its text before it is made."""
    run.text.listed((step.statement, None), tensor.numel(), tensor.dtype.kind == "c")
    return torchtext.tolist(tensor.data)


def printable(run: ScriptRun, value: Any) -> Any:
    if isinstance(value, gc.Tensor):
        item = torchtext.item(value.data) if value.dim() == 0 else None
        return _Printed(tensor_text(run, value), "Tensor", item)
    if isinstance(value, tuple) and not isinstance(value, _Size):
        return tuple(printable(run, v) for v in value)
    return value


def tensor_text(run: ScriptRun, tensor: gc.Tensor) -> str:
    node = tensor.grad_fn
    name = None if node is None else run.node_names.get(node) or node.name()
    return torchtext.tensor_repr(
        tensor.data,
        requires_grad=tensor.requires_grad,
        grad_fn=name,
        default_dtype=run.default_dtype,
    )
