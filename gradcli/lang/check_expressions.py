"""The validator's walk of one expression: numbers, names, operators, comparisons, indexing.

``ExpressionChecker`` re-emits a checked expression in the plain form sympy's parser reads:
operators as calls (``a + b`` as ``add(a, b)``, ``@`` as ``matmul``), ``x[i]`` as
``_index(x, i)``, literals in a form no program can write (``_s_...`` strings, ``_imag``).
Anything outside the whitelist is an error naming what was written and what to write
instead. The calls are checked by ``check_calls.py``, the statements by ``validate.py``.
"""

from __future__ import annotations

import ast
import difflib
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

from ..base.errors import GradcliError
from . import functions as F
from . import pytorch, syntax
from .statement import Statement

CONSTANTS = {"e", "pi"}

# Operators are re-emitted as calls, so that sympy keeps the program's structure exactly
# (its own Add and Mul would reorder, distribute and cancel terms: x - x would vanish).
# Python's operators, as written: for messages
SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@",
    ast.BitXor: "^", ast.FloorDiv: "//", ast.Mod: "%", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitAnd: "&", ast.BitOr: "|", ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=",
    ast.Gt: ">", ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
    ast.NotIn: "not in",
}  # fmt: skip
# The comparisons of the language (not 'in' and 'is')
_COMPARED = {ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE}
# The operators gradcli has, and the operation each is: the op table's ``operator``
OPERATOR_FUNCTIONS = {f.operator: name for name, f in F.FUNCTIONS.items() if f.operator}
# Python's operators that gradcli does not have: (message, hint); {a} and {b} in the hint are
# the operands as written
_REFUSED_OPERATORS = {
    ast.LShift: (
        "'<<' (a bit shift) is not allowed",
        "to multiply by a power of 2, write {a} * 2 ** {b}",
    ),
    ast.RShift: (
        "'>>' (a bit shift) is not allowed",
        "to divide by a power of 2, write {a} / 2 ** {b}",
    ),
}
# '^' is exclusive or, of booleans; beside a number it is a power written as in mathematics
_POWER_HAT = "'^' is not a power in gradcli: powers are written **", "write {a} ** {b}"
_STRING = "a string is not allowed here", syntax.QUOTES_HINT
_BRACES = "braces {...} are not allowed", "a list is [a, b], and only inside stack or cat"
# Other syntax gradcli does not have: (message, hint)
REFUSED = {
    ast.Lambda: syntax.KEYWORDS["lambda"],
    ast.IfExp: syntax.KEYWORDS["if"],
    ast.ListComp: syntax.LOOP,
    ast.SetComp: syntax.LOOP,
    ast.DictComp: syntax.LOOP,
    ast.GeneratorExp: syntax.LOOP,
    ast.Dict: _BRACES,
    ast.Set: _BRACES,
    ast.NamedExpr: syntax.WALRUS,
    ast.Starred: ("'*' unpacking is not allowed", "give each value on its own"),
    ast.Await: ("'await' is not allowed", syntax.LANGUAGE_HINT),
    ast.Yield: ("'yield' is not allowed", syntax.LANGUAGE_HINT),
    ast.YieldFrom: ("'yield' is not allowed", syntax.LANGUAGE_HINT),
    ast.JoinedStr: _STRING,
    ast.FormattedValue: _STRING,
}
# Modules whose functions a person may qualify (np.sin(x)): gradcli calls them by name alone
MODULES = {"np", "numpy", "torch", "math", "cmath", "F", "nn", "functional", "sp", "sympy"}


def end_column(node: ast.expr) -> int:
    """The column just after ``node`` (``ast.parse`` sets it on every node it makes; its type
    allows None)."""
    return node.col_offset if node.end_col_offset is None else node.end_col_offset


@dataclass(frozen=True)
class Made:
    """A constructor inside an expression (``x + torch.eye(2)``, ``torch.zeros_like(x)``):
    a constant made before the expression is evaluated, which the expression reads as
    ``name`` (a name no program can write, see ``ir.constant_name``); ``constructor`` its text as
    the language writes it (``eye(2)``), ``dtype`` a dtype given, or None."""

    name: str
    constructor: str
    dtype: str | None = None


def closest(name: str, choices) -> str | None:
    """A close match among ``choices``, ignoring case first (``SIN`` -> ``sin``). The cutoff
    keeps a three-letter slip (``lgo`` -> ``log``, 0.67) and refuses a word that only shares
    letters with a name (``frobnicate`` and ``concat``, 0.62)."""
    by_case = {c.lower(): c for c in sorted(choices)}
    close = difflib.get_close_matches(name.lower(), list(by_case), n=1, cutoff=0.65)
    return by_case[close[0]] if close else None


def suggest(name: str, choices) -> str | None:
    close = closest(name, choices)
    return None if close is None else f"did you mean {close!r}?"


class ExpressionChecker(ABC):
    """Walks one statement's expression, raising on anything outside the whitelist: numbers,
    names, operators, comparisons and indexing here; the calls in ``check_calls.py``."""

    def __init__(self, statement: Statement, grads: bool = False):
        self.statement = statement
        self.grads = grads  # x.grad reads the name grad_name("x") (gradcli run)
        self.names: list[str] = []
        self.columns: dict[str, int] = {}
        self.made: list[Made] = []
        self._utf8 = statement.text.encode("utf-8")

    def _chars(self, column: int) -> int:
        """``ast`` columns count UTF-8 bytes; carets count characters."""
        return len(self._utf8[:column].decode("utf-8", errors="ignore"))

    def fail(self, node: ast.AST, message: str, hint: str | None = None) -> GradcliError:
        column = self._chars(getattr(node, "col_offset", 0))
        return self.statement.error(message, column, hint)

    def text(self, start: int, end: int | None) -> str:
        """The statement's text between two ``ast`` columns (UTF-8 bytes; None: to the end),
        stripped."""
        return self._utf8[start:end].decode("utf-8", errors="ignore").strip()

    def source(self, node: ast.expr | ast.keyword) -> str:
        return self.text(node.col_offset, node.end_col_offset)

    def arguments(self, call: ast.Call) -> list[str]:
        """The text of each argument of ``call``, keywords last."""
        return [self.source(a) for a in call.args] + [self.source(k) for k in call.keywords]

    def note(self, function: str, column: int) -> None:
        self.columns.setdefault(function, self._chars(column))

    def expression(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            if not isinstance(node.value, bool):
                return _number_text(node.value)
        if isinstance(node, ast.Constant) and isinstance(node.value, complex):
            # 2j: the product of a number and the imaginary unit, which the parser folds
            times = OPERATOR_FUNCTIONS["*"]
            return f"{times}({_number_text(node.value.imag)}, {IMAGINARY_UNIT})"
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            column = self._operator_column(node.left, node.right)
            function = OPERATOR_FUNCTIONS.get(SYMBOLS[type(node.op)])
            power = isinstance(node.op, ast.BitXor) and any(
                _numeric(side) for side in (node.left, node.right)
            )
            if function is None or power:
                message, hint = _POWER_HAT if power else _REFUSED_OPERATORS[type(node.op)]
                a, b = self.text(node.col_offset, column), self.text(column, node.end_col_offset)
                b = b.removeprefix(SYMBOLS[type(node.op)]).strip()
                raise self.statement.error(message, self._chars(column), hint.format(a=a, b=b))
            left, right = self.expression(node.left), self.expression(node.right)
            self.note(function, column)
            return f"{function}({left}, {right})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = literal_value(node)
            if type(value) in (int, float):
                return _number_text(value)
            inner = self.expression(node.operand)
            if isinstance(node.op, ast.UAdd):
                return inner
            negate = OPERATOR_FUNCTIONS["-x"]
            self.note(negate, node.col_offset)
            return f"{negate}({inner})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            invert = OPERATOR_FUNCTIONS["~"]
            self.note(invert, node.col_offset)
            return f"{invert}({self.expression(node.operand)})"
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARED for op in node.ops):
            return self.comparison(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Subscript):
            picked = _picked(node.slice)
            if isinstance(node.value, ast.Call) and picked is not None and self.several(node.value):
                return self.call(node.value, pick=picked)
            return self.subscript(node)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Call)
            and not (self.grads and node.attr == "grad")
            and node.attr not in F.PROPERTIES
            and self.several(node.value)
        ):  # max(x, 1).values (or a field it does not have)
            return self.call(node.value, pick=node.attr)
        if self.grads and isinstance(node, ast.Attribute) and node.attr == "grad":
            if isinstance(node.value, ast.Name):
                self.name(node.value)
                return grad_name(node.value.id)
        if isinstance(node, ast.Attribute) and node.attr in F.PROPERTIES:
            if pytorch.dotted(node.value) not in MODULES:  # x.T is transpose(x)
                name = ast.copy_location(ast.Name(F.PROPERTIES[node.attr].name, ast.Load()), node)
                return self.call(ast.copy_location(ast.Call(name, [node.value], []), node))
        if isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail(
                node,
                "a list is allowed only as the first argument of stack or cat",
                "write stack([a, b]); give list values with --x or -i",
            )
        raise self.refusal(node)

    def comparison(self, node: ast.Compare) -> str:
        """``a < b`` as ``lt(a, b)``; a chain ``a < b <= c`` as Python means it,
        ``(a < b) & (b <= c)``."""
        sides = [node.left, *node.comparators]
        texts = [self.expression(side) for side in sides]
        calls = []
        for op, (left, right), (a, b) in zip(
            node.ops, zip(sides, sides[1:]), zip(texts, texts[1:])
        ):
            function = OPERATOR_FUNCTIONS[SYMBOLS[type(op)]]
            self.note(function, self._operator_column(left, right))
            calls.append(f"{function}({a}, {b})")
        both = OPERATOR_FUNCTIONS["&"]  # of two comparisons: and
        joined = calls[0]
        for call in calls[1:]:
            joined = f"{both}({joined}, {call})"
        return joined

    def refusal(self, node: ast.AST) -> GradcliError:
        """The error for syntax outside the language, named as the user wrote it."""
        if isinstance(node, ast.Attribute):
            return self.fail(node, syntax.ATTRIBUTE, self.instead(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.fail(node, *syntax.KEYWORDS["not"])
        if isinstance(node, ast.BoolOp):
            return self.fail(
                node, *syntax.KEYWORDS["and" if isinstance(node.op, ast.And) else "or"]
            )
        if isinstance(node, ast.Compare):  # in, is
            at = next(i for i, op in enumerate(node.ops) if type(op) not in _COMPARED)
            sides = [node.left, *node.comparators]
            column = self._operator_column(sides[at], sides[at + 1])
            symbol = SYMBOLS[type(node.ops[at])]
            return self.statement.error(
                syntax.MEMBERSHIP.format(repr(symbol)), self._chars(column), syntax.COMPARE_HINT
            )
        if isinstance(node, ast.Constant):
            return self.fail(node, *_constant_refusal(node.value))
        message, hint = REFUSED.get(type(node), ("this is not allowed", syntax.LANGUAGE_HINT))
        return self.fail(node, message, hint)

    def instead(self, node: ast.Attribute, call: ast.Call | None = None) -> str:
        """What to write instead of ``np.sin(x)``, ``x.mena()``, ``x.where(...)`` or
        ``math.pi``."""
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        qualified = isinstance(root, ast.Name) and root.id in MODULES
        arguments = self.arguments(call) if call else []
        made = isinstance(node.value, ast.Call) and pytorch.is_constructor(
            getattr(node.value.func, "id", "")
        )
        if node.attr in F.PROPERTIES and call is None and not made:  # ones(2).T
            return f"write {F.PROPERTIES[node.attr].name}({self.source(node.value)})"
        if node.attr in CONSTANTS and call is None and qualified:
            return f"write {node.attr}"
        close = closest(node.attr, F.METHODS)
        if not qualified and call is not None and F.lookup(node.attr) is None and close:
            return f"did you mean {self.source(node.value)}.{close}(...)?"
        if F.lookup(node.attr) is None or call is None:
            return "see `gradcli functions` for what a program can call, by name"
        if not qualified:
            arguments.insert(0, self.source(node.value))
        written = f"{node.attr}({', '.join(arguments)})"
        return f"write {written}" if qualified else f"call functions by name: {written}"

    def _operator_column(self, left: ast.expr, right: ast.expr) -> int:
        end = end_column(left)
        between = self._utf8[end : right.col_offset]
        stripped = between.lstrip(b" )")
        return end + len(between) - len(stripped)

    def name(self, node: ast.Name) -> str:
        name = node.id
        if name.startswith("_"):
            raise self.fail(
                node,
                f"names may not start with '_' ({name!r})",
                "use letters, digits and '_' inside a name, like w_1",
            )
        if F.lookup(name) is not None or pytorch.is_constructor(name):
            raise self.fail(node, f"{name!r} is a function, not a value", f"call it: {name}(...)")
        if name not in CONSTANTS:
            self.names.append(name)
        return name

    def subscript(self, node: ast.Subscript) -> str:
        base = self.expression(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        self.note(F.OPERATORS["[]"].name, end_column(node.value))
        texts = [self.index_item(i) for i in items]
        if any(t.startswith("_tuple(") for t in texts):  # a list: x[:, [0, 2]]
            self.note(F.OPERATORS["[tensor]"].name, end_column(node.value))
        return f"_index({base}, {', '.join(texts)})"

    def index_item(self, node: ast.AST, tensors: bool = True) -> str:
        """One item of an index: a whole number, a slice, ``...``, None, a list of whole numbers
        (``x[:, [0, 2]]``) or, where ``tensors``, a tensor (``x[idx]``, ``x[x > 0]``)."""
        if isinstance(node, ast.List) and node.elts:
            values = [literal_value(e) for e in node.elts]
            if all(type(v) is int and abs(v) <= LARGEST_INT for v in values):
                return f"_tuple({', '.join(map(str, values))})"
            raise self.fail(
                node,
                "a list in an index must hold whole numbers",
                "write x[[0, 2]], or index by a tensor: x[idx]",
            )
        if (
            tensors
            and not isinstance(node, (ast.Slice, ast.Constant))
            and literal_value(node) is NOT_LITERAL
        ):
            self.note(
                F.OPERATORS["[tensor]"].name, node.col_offset if isinstance(node, ast.expr) else 0
            )
            return f"_titem({self.expression(node)})"
        if isinstance(node, ast.Slice):
            parts = [node.lower, node.upper, node.step]
            return "_slice({})".format(
                ", ".join("_none" if p is None else self.whole_number(p) for p in parts)
            )
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            return "_ellipsis"
        if isinstance(node, ast.Constant) and node.value is None:
            return "_newaxis"
        return self.whole_number(node)

    def whole_number(self, node: ast.AST) -> str:
        value = literal_value(node)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(
                node,
                "an index must be a whole number, a range like 1:3, ..., a list of whole "
                "numbers or a tensor",
                "write x[0], x[1, 2], x[:, 0], x[-1], x[[0, 2]], x[idx] or x[x > 0]",
            )
        if abs(value) > LARGEST_INT:
            raise self.fail(node, f"the index {value:.3g} is too large", "no array is that long")
        return str(value)

    @abstractmethod
    def call(self, node: ast.Call, pick: str | int | None = None, names: int = 0) -> str:
        """A call as text (see ``check_calls.CallChecker``)."""

    @abstractmethod
    def several(self, node: ast.Call) -> bool:
        """Whether ``node`` calls an operation that may give several results."""


NOT_LITERAL = object()

# The imaginary unit as the checked text names it (no program can write a name of '_')
IMAGINARY_UNIT = "_imag"
# A string reaches the parser as a name: the characters a name cannot hold are '_' codes
ENCODED = {"_": "_u", ",": "_c", "-": "_m", ">": "_g", ".": "_d", " ": "_w"}
LARGEST_INT = 2**62  # a size, dim or index beyond this fits no array (nor a C integer)


def literal_value(node: ast.AST):
    """The value of a literal number, -number, True/False, None or string; else a marker."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool, str, type(None)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = literal_value(node.operand)
        if type(value) in (int, float):
            return -value
    return NOT_LITERAL


def _numeric(node: ast.AST) -> bool:
    """Whether ``node`` is arithmetic on numbers alone (``2``, ``3 + 1``): never a boolean."""
    return all(
        isinstance(n, (ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop))
        or (isinstance(n, ast.Constant) and type(n.value) in (int, float, complex))
        for n in ast.walk(node)
    )


def _constant_refusal(value) -> tuple[str, str]:
    """(message, hint) for a literal that is not a real number."""
    if isinstance(value, (str, bytes)):
        return _STRING
    if value is None:
        return "None is not allowed here", "None is only for options, as in sum(x, dim=None)"
    if isinstance(value, bool):
        return f"{value} is not allowed here", "True and False are only for options: keepdim=True"
    return "'...' is not allowed here", "'...' is only for indexing, as in x[..., 0]"


def _number_text(value: int | float) -> str:
    """A number in an expression; -0.0 as neg(0.0), since sympy has no negative zero (the
    parser folds it back to -0.0)."""
    if isinstance(value, float) and value == 0 and math.copysign(1, value) < 0:
        return "neg(0.0)"
    return literal_text(value)


def literal_text(value) -> str:
    if value is None:
        return "_none"
    if isinstance(value, str):
        return "_s_" + "".join(ENCODED.get(c, c) for c in value)
    if isinstance(value, float) and math.isinf(value):
        # a literal too large for a float, like 1e400: repr gives 'inf', which would be a name
        return "_inf" if value > 0 else "(-_inf)"
    return repr(value)


def grad_name(name: str) -> str:
    """The name ``x.grad`` is read as where a statement may read gradients (``gradcli
    run``): one no program can write, since it starts with '_'."""
    return f"_grad_{name}"


def _picked(index: ast.expr) -> int | None:
    """The position ``[k]`` takes of a result (a whole number), else None."""
    value = literal_value(index)
    return value if type(value) is int else None
