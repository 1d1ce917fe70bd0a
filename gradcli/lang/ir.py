"""The program's typed IR, and the one interpreter that walks it.

A validated statement's sympy tree becomes these nodes once (``parse.to_ir``):

    Const(2.0)                              a number
    Name("x")                               a name
    Call("mean", (Name("x"),), (0, False))  an operation of the op table: its tensor
                                            operands (a tuple of nodes for a list argument,
                                            as in stack([a, b]); None for an operand left
                                            out, as linear's bias), then its options in
                                            signature order (dims, flags, a reduction)
    Index(Name("x"), (0, slice(1, None, None), ..., None))
                                            x[0, 1:, ..., None]

``evaluate(node, domain)`` is the only walk over a tree: the domain says what a value is
(engine tensors for numbers, object arrays of sympy formulas, program text, the names read,
the steps of ``explain``) by making the value of each node from its operands' values.

Nodes are plain data: ``to_json``/``from_json`` carry them through the parse cache.
"""

from __future__ import annotations

import re
from collections.abc import Container
from types import EllipsisType
from typing import Protocol, TypeVar, Union, cast

from ..base.records import record

IndexItem = Union[int, slice, EllipsisType, None]  # noqa: UP007 - None is a new axis
# An option's value: a dim, p, a flag, a reduction, or an index item (y[0:2] = ...)
Option = Union[int, float, bool, str, None, slice, EllipsisType, tuple[int, ...]]  # noqa: UP007


@record(kw_only=False, eq=True)
class Const:
    """A number written in the program (or folded from arithmetic on numbers): a whole number
    written as one is an int (with an integer tensor, ``idx + 1`` stays an integer); ``2j``
    and ``1 + 2j`` are complex numbers."""

    value: float | int | complex


@record(kw_only=False, eq=True)
class Name:
    """A name: an input, an assigned name, or an element ``x0`` of a vector."""

    name: str


@record(kw_only=False, eq=True)
class Call:
    """``op(*args, *params)``: tensor operands first, then options, as the op table's
    signature orders them (the validator fills in every default)."""

    op: str
    args: tuple[Operand, ...]
    params: tuple[Option, ...] = ()


@record(kw_only=False, eq=True)
class Index:
    """``base[items]``, numpy's basic indexing."""

    base: Node
    items: tuple[IndexItem, ...]


Node = Union[Const, Name, Call, Index]  # noqa: UP007 - aliases run on Python 3.10
# an operand: a node, a list argument's nodes, or None for an operand left out (bias=None)
Operand = Union[Node, tuple[Node, ...], None]  # noqa: UP007

V = TypeVar("V")


class Domain(Protocol[V]):
    """What a value is: each method makes one node's value from its operands' values (a list
    for a list argument, None for an operand left out)."""

    def const(self, node: Const) -> V: ...

    def name(self, node: Name) -> V: ...

    def index(self, node: Index, base: V) -> V: ...

    def call(self, node: Call, args: list[V | list[V] | None]) -> V: ...


def evaluate(node: Node, domain: Domain[V]) -> V:
    """The value of ``node`` in ``domain``: operands first, left to right."""
    if isinstance(node, Const):
        return domain.const(node)
    if isinstance(node, Name):
        return domain.name(node)
    if isinstance(node, Index):
        return domain.index(node, evaluate(node.base, domain))
    args: list[V | list[V] | None] = [
        None
        if arg is None
        else [evaluate(item, domain) for item in arg]
        if isinstance(arg, tuple)
        else evaluate(arg, domain)
        for arg in node.args
    ]
    return domain.call(node, args)


def operands(node: Call, args: list[V | list[V] | None]) -> list[V]:
    """A call's operand values in order, the items of a list argument in its place (an
    operand left out has none)."""
    found: list[V] = []
    for arg, value in zip(node.args, args):
        if arg is not None:
            found.extend(cast("list[V]", value) if isinstance(arg, tuple) else [cast(V, value)])
    return found


class Names:
    """The domain of the names a tree reads, in order of use (with repeats)."""

    def const(self, node: Const) -> list[str]:
        return []

    def name(self, node: Name) -> list[str]:
        return [node.name]

    def index(self, node: Index, base: list[str]) -> list[str]:
        return base

    def call(self, node: Call, args: list[list[str] | list[list[str]] | None]) -> list[str]:
        parts: list[list[str]] = operands(node, args)
        return [name for part in parts for name in part]


def names(node: Node) -> list[str]:
    """The names ``node`` reads, each once, in order of first use."""
    used: list[str] = evaluate(node, Names())
    return list(dict.fromkeys(used))


class Operations(Names):
    """The domain of the operations a tree calls, in order of evaluation (with repeats)."""

    def name(self, node: Name) -> list[str]:
        return []

    def call(self, node: Call, args: list[list[str] | list[list[str]] | None]) -> list[str]:
        return [*super().call(node, args), node.op]


def operations(node: Node) -> list[str]:
    """The operations ``node`` calls, each once, in order of first call."""
    used: list[str] = evaluate(node, Operations())
    return list(dict.fromkeys(used))


class Renamed:
    """The domain of the same tree with some names replaced (``names``: old -> new)."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    def const(self, node: Const) -> Node:
        return node

    def name(self, node: Name) -> Node:
        return Name(self.names.get(node.name, node.name))

    def index(self, node: Index, base: Node) -> Node:
        return Index(base, node.items)

    def call(self, node: Call, args: list[Node | list[Node] | None]) -> Node:
        operands = tuple(tuple(a) if isinstance(a, list) else a for a in args)
        return Call(node.op, operands, node.params)


def rename(node: Node, names: dict[str, str]) -> Node:
    """``node`` reading ``names[n]`` wherever it read ``n``."""
    return evaluate(node, Renamed(names)) if names else node


# A name's earlier value in a program where PyTorch code writes into it (y[0] = ...): y#0,
# y#1, ... ('#' starts a comment in a program, so no program can write such a name)
_VERSION = re.compile(r"[A-Za-z_]\w*#\d+")


def version(name: str, number: int) -> str:
    return f"{name}#{number}"


def is_version(name: str) -> bool:
    """Whether ``name`` is an earlier value of a name, which results do not show."""
    return _VERSION.fullmatch(name) is not None


_CONSTANT = re.compile(r"_c\d+_\d+_\d+")


def constant_name(statement: int, line: int, column: int) -> str:
    """The name of the constant a constructor inside an expression makes (``x +
    torch.eye(2)``), at a line and column of a statement: '_' starts it, so no program can
    write one."""
    return f"_c{statement}_{line}_{column}"


def is_constant(name: str) -> bool:
    """Whether ``name`` is that of a constant made inside an expression."""
    return _CONSTANT.fullmatch(name) is not None


def unseen(name: str) -> bool:
    """Whether results do not show ``name``: an earlier value of a name, or a constant made
    inside an expression."""
    return is_version(name) or is_constant(name)


# -- the parse cache's JSON -------------------------------------------------------------------
def to_json(node: Node) -> list[object]:
    """``["const", 2.0]`` (a complex number ``["const", [re, im]]``), ``["ref", "x"]``,
    ``["call", op, [args], [params]]`` (a list argument as ``["list", [...]]``, an operand
    left out as null), ``["index", base, [items]]`` (a slice as ``[start, stop, step]``,
    ``...`` as ``"..."``)."""
    if isinstance(node, Const):
        if isinstance(node.value, complex):
            return ["const", [node.value.real, node.value.imag]]  # a complex number
        return ["const", node.value]
    if isinstance(node, Name):
        return ["ref", node.name]
    if isinstance(node, Index):
        return ["index", to_json(node.base), [_item_json(i) for i in node.items]]
    args = [
        None
        if a is None
        else ["list", [to_json(i) for i in a]]
        if isinstance(a, tuple)
        else to_json(a)
        for a in node.args
    ]
    return ["call", node.op, args, [_option_json(p) for p in node.params]]


def _option_json(option: Option) -> object:
    """An option as JSON: a slice as {"slice": [start, stop, step]}, ... as {"ellipsis": 1}
    (a string option stays a string)."""
    if isinstance(option, slice):
        return {"slice": [option.start, option.stop, option.step]}
    if isinstance(option, tuple):  # dims
        return list(option)
    return {"ellipsis": 1} if option is Ellipsis else option


def _option_from_json(data: object) -> Option:
    if isinstance(data, dict) and set(data) == {"slice"}:
        return _item_from_json(data["slice"])
    if data == {"ellipsis": 1}:
        return Ellipsis
    if data is None or isinstance(data, (int, float, bool, str)):
        return data
    if isinstance(data, list) and all(_is_whole(d) for d in data):
        return tuple(data)
    raise ValueError(f"not an option: {data!r}")


def _item_json(item: IndexItem) -> object:
    if isinstance(item, slice):
        return [item.start, item.stop, item.step]
    return "..." if item is Ellipsis else item


def from_json(data: object, ops: Container[str]) -> Node:
    """The node ``to_json`` wrote; ValueError for anything else, or a call of an operation
    not in ``ops``."""
    if not isinstance(data, list) or not data:
        raise ValueError(f"not an IR node: {data!r}")
    kind, rest = data[0], data[1:]
    if kind == "const" and len(rest) == 1 and _is_number(rest[0]):
        return Const(rest[0] if _is_whole(rest[0]) else float(rest[0]))
    if kind == "const" and len(rest) == 1 and isinstance(rest[0], list) and len(rest[0]) == 2:
        if all(_is_number(part) for part in rest[0]):  # [real, imag]
            return Const(complex(*rest[0]))
    if kind == "ref" and len(rest) == 1 and isinstance(rest[0], str) and _is_name(rest[0]):
        return Name(rest[0])
    if kind == "index" and len(rest) == 2 and isinstance(rest[1], list):
        return Index(from_json(rest[0], ops), tuple(_item_from_json(i) for i in rest[1]))
    if kind == "call" and len(rest) == 3 and rest[0] in ops:
        op, args, params = rest
        if isinstance(args, list) and isinstance(params, list):
            options = tuple(_option_from_json(p) for p in params)
            return Call(op, tuple(_operand_from_json(a, ops) for a in args), options)
    raise ValueError(f"not an IR node: {data!r}")


def _is_name(text: str) -> bool:
    return text.isidentifier() or is_version(text)


def _operand_from_json(data: object, ops: Container[str]) -> Operand:
    if data is None:
        return None
    if isinstance(data, list) and len(data) == 2 and data[0] == "list":
        if isinstance(data[1], list):
            return tuple(from_json(item, ops) for item in data[1])
    return from_json(data, ops)


def _item_from_json(data: object) -> IndexItem:
    if data is None or (isinstance(data, int) and not isinstance(data, bool)):
        return data
    if data == "...":
        return Ellipsis
    if isinstance(data, list) and len(data) == 3 and all(_is_whole(v) or v is None for v in data):
        return slice(*data)
    raise ValueError(f"not an index: {data!r}")


def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
