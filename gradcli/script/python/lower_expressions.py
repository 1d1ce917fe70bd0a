"""Lowering a script's expressions to closures: ``Expressions.lower(node)`` gives a function
of the frame that computes the node's value as Python would, in Python's order.

What gradcli does not take is refused here, before anything runs, with the line and a caret:
an attribute whose name starts with two underscores (``x.__dict__``; ``x.__class__`` and a
class's ``__name__`` are read), ``await``/``yield``,
bytes. Every attribute read goes through ``objects.get`` (a whitelist per kind of value),
every call through ``runtime.call`` (only what a script may call), every operator through
``operators.py`` (tensors to the op table, Python's values bounded).

A call, an operator, an attribute or a subscript that raises records its columns on the
exception (``errors.note_span``), for Python's carets in the traceback.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from . import objects, printing
from .classes import SPECIAL, zero_argument_super
from .errors import note_span, refusal
from .lower_comprehensions import Comprehensions
from .operators import binary, contains, index, iterate, truth, unary
from .runtime import Frame, Function, Parameters, call
from .scopes import CLASS, FREE, GLOBAL, LOCAL, Scope, function_scope

Closure = Callable[[Frame], Any]

BINARY = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
_COMPARE = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}
_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
# Python's builtins that reach files, code or the interpreter: refused where a script reads one
OUT_OF_REACH = frozenset(
    "eval exec compile open globals locals vars dir breakpoint help exit quit "
    "memoryview bytearray bytes".split()
)
_REFUSED = {
    ast.Await: "await",
    ast.Yield: "yield (generators)",
    ast.YieldFrom: "yield from (generators)",
}


class Expressions(Comprehensions):
    """The lowering of the expressions of one block (``scope``: where its names live)."""

    def __init__(self, lines: list[str], scope: Scope, statements: Any):
        self.lines, self.scope = lines, scope
        self.statements = statements  # what lowers a function's body (lower_statements)

    # -- errors
    def refuse(self, node: ast.AST, message: str, hint: str | None = None) -> Exception:
        line = getattr(node, "lineno", 1)
        source = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        column = _characters(source, getattr(node, "col_offset", 0))
        return refusal(message, line, source, column, hint)

    def marked(self, node: ast.expr, run: Closure) -> Closure:
        """``run``, recording ``node``'s columns on an exception that leaves it."""
        if node.end_lineno != node.lineno or node.end_col_offset is None:
            return run
        line = node.lineno
        source = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        span = _span(node, source)

        def marking(frame: Frame) -> Any:
            try:
                return run(frame)
            except Exception as exc:
                note_span(exc, line, span)
                raise

        return marking

    # -- the lowering
    def lower(self, node: ast.expr) -> Closure:
        method = getattr(self, f"lower_{type(node).__name__}", None)
        if method is None:
            what = _REFUSED.get(type(node), f"the expression {type(node).__name__}")
            raise self.refuse(node, f"gradcli run does not take {what} yet")
        made: Closure = method(node)
        return made

    def lower_Constant(self, node: ast.Constant) -> Closure:
        value = node.value
        if isinstance(value, bytes):
            raise self.refuse(node, "gradcli run does not take bytes yet")
        return lambda frame: value

    def lower_Name(self, node: ast.Name) -> Closure:
        name = node.id
        if name.startswith("__") and name != "__name__" and not self._special_in_class(name):
            raise self.refuse(
                node,
                f"gradcli run does not take names that start with '__' ({name!r})",
                "a script's own names are plain (x, w_2, loss)",
            )
        if name in OUT_OF_REACH and self.scope.where(name)[0] == GLOBAL:
            root = self.scope
            while root.parent is not None:
                root = root.parent
            if name not in root.own:
                raise self.refuse(
                    node,
                    f"gradcli run does not take {name}(): files, code and the interpreter's "
                    "internals are out of a script's reach",
                    "gradcli run takes the builtins a tutorial uses (print, len, range, ...)",
                )
        return self.name_reader(name)

    def _special_in_class(self, name: str) -> bool:
        """A special method read by its name in the class body defining it
        (``__rmul__ = __mul__``)."""
        return self.scope.kind == "class" and name in SPECIAL and name in self.scope.own

    def name_reader(self, name: str) -> Closure:
        where, hops = self.scope.where(name)
        if where == LOCAL:

            def local(frame: Frame) -> Any:
                try:
                    return frame.names[name]
                except KeyError:
                    raise UnboundLocalError(
                        f"cannot access local variable '{name}' where it is not associated "
                        "with a value"
                    ) from None

            return local
        if where == FREE:

            def free(frame: Frame) -> Any:
                held = frame
                for _ in range(hops):
                    held = held.parent  # type: ignore[assignment]
                try:
                    return held.names[name]
                except KeyError:
                    raise NameError(
                        f"cannot access free variable '{name}' where it is not associated "
                        "with a value in enclosing scope"
                    ) from None

            return free
        if where == CLASS:  # a class body's own name: its namespace, else the globals

            def in_class(frame: Frame) -> Any:
                found = frame.names.get(name, _MISSING)
                return global_(frame) if found is _MISSING else found

            return in_class

        def global_(frame: Frame) -> Any:
            run = frame.run
            found = run.globals.get(name, _MISSING)
            if found is _MISSING:
                found = run.builtins.get(name, _MISSING)
                if found is _MISSING:
                    raise NameError(f"name '{name}' is not defined")
            return found

        return global_

    def lower_Attribute(self, node: ast.Attribute) -> Closure:
        attribute = node.attr
        dunder = attribute.startswith("__") and attribute not in objects.DUNDERS
        if dunder and attribute not in SPECIAL:
            raise self.refuse(
                node,
                f"gradcli run does not read attributes whose names start with '__' ({attribute!r})",
                "scripts read torch's attributes (x.grad, x.shape), not Python's internals",
            )
        value = self.lower(node.value)
        get = objects.get
        return self.marked(node, lambda frame: get(frame.run, value(frame), attribute))

    def lower_Subscript(self, node: ast.Subscript) -> Closure:
        value = self.lower(node.value)
        key = self.lower(node.slice)
        return self.marked(node, lambda frame: index(frame.run, value(frame), key(frame)))

    def lower_Slice(self, node: ast.Slice) -> Closure:
        parts = [None if p is None else self.lower(p) for p in (node.lower, node.upper, node.step)]
        lower, upper, step = parts

        def make(frame: Frame) -> slice:
            return slice(
                None if lower is None else _index_value(lower(frame)),
                None if upper is None else _index_value(upper(frame)),
                None if step is None else _index_value(step(frame)),
            )

        return make

    def lower_Call(self, node: ast.Call) -> Closure:
        if _is_bare_super(node, self.scope):
            return self.marked(node, _zero_argument_super(self, node))
        function = self.lower(node.func)
        arguments = self.arguments(node.args, node.keywords)
        return self.marked(node, lambda frame: call(function(frame), *arguments(frame)))

    def arguments(
        self, args: list[ast.expr], keywords: list[ast.keyword]
    ) -> Callable[[Frame], tuple[tuple[Any, ...], dict[str, Any]]]:
        """The positional and keyword arguments of a call, ``*`` and ``**`` unpacked."""
        plain = not any(isinstance(a, ast.Starred) for a in args) and all(
            k.arg is not None for k in keywords
        )
        if plain:
            values = [self.lower(a) for a in args]
            named = [(k.arg, self.lower(k.value)) for k in keywords]
            if not named:
                return lambda frame: (tuple(v(frame) for v in values), {})
            return lambda frame: (
                tuple(v(frame) for v in values),
                {name: v(frame) for name, v in named},  # type: ignore[misc]
            )
        parts = [
            (isinstance(a, ast.Starred), self.lower(a.value if isinstance(a, ast.Starred) else a))
            for a in args
        ]
        keyword_parts = [(k.arg, self.lower(k.value)) for k in keywords]

        def gather(frame: Frame) -> tuple[tuple[Any, ...], dict[str, Any]]:
            positional: list[Any] = []
            for starred, value in parts:
                if starred:
                    positional.extend(iterate(frame.run, value(frame)))
                else:
                    positional.append(value(frame))
            named: dict[str, Any] = {}
            for name, value in keyword_parts:
                given = value(frame)
                if name is None:
                    if not isinstance(given, dict):
                        raise TypeError("argument after ** must be a mapping")
                    for key, item in given.items():
                        if key in named:
                            raise TypeError(f"got multiple values for keyword argument '{key}'")
                        named[key] = item
                else:
                    named[name] = given
            return tuple(positional), named

        return gather

    def lower_BinOp(self, node: ast.BinOp) -> Closure:
        symbol = BINARY[type(node.op)]
        left, right = self.lower(node.left), self.lower(node.right)
        return self.marked(node, lambda frame: binary(frame.run, symbol, left(frame), right(frame)))

    def lower_UnaryOp(self, node: ast.UnaryOp) -> Closure:
        operand = self.lower(node.operand)
        if isinstance(node.op, ast.Not):
            return lambda frame: not truth(operand(frame))
        symbol = _UNARY[type(node.op)]
        return self.marked(node, lambda frame: unary(frame.run, symbol, operand(frame)))

    def lower_BoolOp(self, node: ast.BoolOp) -> Closure:
        values = [self.lower(v) for v in node.values]
        if isinstance(node.op, ast.And):

            def both(frame: Frame) -> Any:
                value = None
                for each in values:
                    value = each(frame)
                    if not truth(value):
                        return value
                return value

            return both

        def either(frame: Frame) -> Any:
            value = None
            for each in values:
                value = each(frame)
                if truth(value):
                    return value
            return value

        return either

    def lower_Compare(self, node: ast.Compare) -> Closure:
        first = self.lower(node.left)
        rest = [(type(op), self.lower(c)) for op, c in zip(node.ops, node.comparators)]

        def compare(frame: Frame) -> Any:
            run = frame.run
            left = first(frame)
            result: Any = True
            for k, (kind, lowered) in enumerate(rest):
                right = lowered(frame)
                if kind in _COMPARE:
                    result = binary(run, _COMPARE[kind], left, right)
                elif kind is ast.Is:
                    result = left is right
                elif kind is ast.IsNot:
                    result = left is not right
                elif kind is ast.In:
                    result = contains(run, right, left)
                else:
                    result = not contains(run, right, left)
                if k < len(rest) - 1 and not truth(result):
                    return result
                left = right
            return result

        return self.marked(node, compare)

    def lower_IfExp(self, node: ast.IfExp) -> Closure:
        test, body, orelse = self.lower(node.test), self.lower(node.body), self.lower(node.orelse)
        return lambda frame: body(frame) if truth(test(frame)) else orelse(frame)

    def _items(self, elements: list[ast.expr]) -> Callable[[Frame], list[Any]]:
        if not any(isinstance(e, ast.Starred) for e in elements):
            values = [self.lower(e) for e in elements]
            return lambda frame: [v(frame) for v in values]
        parts = [
            (isinstance(e, ast.Starred), self.lower(e.value if isinstance(e, ast.Starred) else e))
            for e in elements
        ]

        def gather(frame: Frame) -> list[Any]:
            found: list[Any] = []
            for starred, value in parts:
                if starred:
                    found.extend(iterate(frame.run, value(frame)))
                else:
                    found.append(value(frame))
            return found

        return gather

    def lower_Tuple(self, node: ast.Tuple) -> Closure:
        items = self._items(node.elts)
        return lambda frame: tuple(items(frame))

    def lower_List(self, node: ast.List) -> Closure:
        return self._items(node.elts)

    def lower_Set(self, node: ast.Set) -> Closure:
        items = self._items(node.elts)
        return lambda frame: set(items(frame))

    def lower_Dict(self, node: ast.Dict) -> Closure:
        pairs = [
            (None if k is None else self.lower(k), self.lower(v))
            for k, v in zip(node.keys, node.values)
        ]

        def make(frame: Frame) -> dict[Any, Any]:
            made: dict[Any, Any] = {}
            for key, value in pairs:
                if key is None:
                    made.update(value(frame))
                else:
                    made[key(frame)] = value(frame)
            return made

        return make

    def lower_NamedExpr(self, node: ast.NamedExpr) -> Closure:
        value = self.lower(node.value)
        store = self.statements.name_writer(node.target.id, self.scope)

        def assign(frame: Frame) -> Any:
            found = value(frame)
            store(frame, found)
            return found

        return assign

    def lower_JoinedStr(self, node: ast.JoinedStr) -> Closure:
        parts: list[Closure] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(_literal(str(value.value)))
            else:
                assert isinstance(value, ast.FormattedValue)  # what an f-string holds
                parts.append(self.lower_FormattedValue(value))
        return self.marked(node, lambda frame: "".join(p(frame) for p in parts))

    def lower_FormattedValue(self, node: ast.FormattedValue) -> Closure:
        value = self.lower(node.value)
        spec = None if node.format_spec is None else self.lower(node.format_spec)
        conversion = node.conversion
        column = node.col_offset

        def piece(frame: Frame) -> str:
            run = frame.run
            found = value(frame)
            if conversion == ord("r"):
                found = printing.show(run, found)
            elif conversion == ord("s"):
                found = printing.text(run, found)
            elif conversion == ord("a"):
                found = ascii(printing.show(run, found))
            return printing.formatted(run, found, "" if spec is None else spec(frame), column)

        return piece

    def lower_Lambda(self, node: ast.Lambda) -> Closure:
        scope = function_scope(node, self.scope)
        inner = Expressions(self.lines, scope, self.statements)
        body = inner.lower(node.body)
        parameters = self.parameters(node.args)

        def make(frame: Frame) -> Function:
            return Function("<lambda>", parameters(frame), body, frame, line=node.lineno)

        return make

    def parameters(self, args: ast.arguments) -> Callable[[Frame], Parameters]:
        """The parameters of a ``def`` or ``lambda``, their defaults evaluated when it runs."""
        defaults = [self.lower(d) for d in args.defaults]
        keyword_defaults = [
            (a.arg, self.lower(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d
        ]
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        keyword_only = [a.arg for a in args.kwonlyargs]
        varargs = None if args.vararg is None else args.vararg.arg
        varkw = None if args.kwarg is None else args.kwarg.arg
        posonly = len(args.posonlyargs)

        def make(frame: Frame) -> Parameters:
            return Parameters(
                positional,
                posonly,
                tuple(d(frame) for d in defaults),
                keyword_only,
                {name: d(frame) for name, d in keyword_defaults},
                varargs,
                varkw,
            )

        return make

    def lower_Starred(self, node: ast.Starred) -> Closure:
        raise self.refuse(node, "can't use starred expression here")


_MISSING = object()


def _zero_argument_super(expressions: Expressions, node: ast.Call) -> Closure:
    """``super()`` in a method: the method's class and its first argument."""
    scope = expressions.scope
    if scope.kind != "function" or scope.parent is None or scope.parent.kind != "class":
        raise expressions.refuse(
            node,
            "gradcli run takes super() without arguments directly in a method only",
            "name them: super(Class, self)",
        )
    first = scope.first
    return lambda frame: zero_argument_super(frame, 1, first)


def _is_bare_super(node: ast.Call, scope: Scope) -> bool:
    """Whether ``node`` is ``super()`` with Python's builtin ``super``."""
    if not (isinstance(node.func, ast.Name) and node.func.id == "super"):
        return False
    if node.args or node.keywords or scope.where("super")[0] != GLOBAL:
        return False
    root = scope
    while root.parent is not None:
        root = root.parent
    return "super" not in root.own


def _literal(text: str) -> Closure:
    return lambda frame: text


def _index_value(value: Any) -> Any:
    """A slice bound: a 0-d integer tensor as its number (x[:n] with n a tensor)."""
    from ...ops import library as gc

    if isinstance(value, gc.Tensor) and value.ndim == 0:
        return value.data.item()
    return value


def _characters(text: str, column: int) -> int:
    """The characters of ``text`` before Python's ``column`` (which counts UTF-8 bytes)."""
    return len(text.encode()[:column].decode(errors="ignore"))


def _span(node: ast.expr, source: str) -> tuple[int, int, int, int]:
    """The columns of ``node`` in its line (start, end) and Python's anchors of its carets
    (the operator of a binary operation, the brackets of a subscript; else the whole)."""
    start = _characters(source, node.col_offset)
    end = _characters(source, node.end_col_offset or node.col_offset)
    left, right = start, end
    if isinstance(node, ast.BinOp) and node.left.end_col_offset is not None:
        after = _characters(source, node.left.end_col_offset)
        before = _characters(source, node.right.col_offset)
        between = source[after:before]
        left = after + len(between) - len(between.lstrip())
        right = left + 1
        if right < before and not source[right].isspace() and source[right] not in "([":
            right += 1
    elif isinstance(node, ast.Subscript) and node.value.end_col_offset is not None:
        left = _characters(source, node.value.end_col_offset)
        right = _characters(source, node.slice.end_col_offset or 0) + 1
    return start, end, left, right
