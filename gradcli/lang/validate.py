"""Checking program text against a whitelist before anything else reads it.

A program is statements ``name = expression`` separated by ``;`` or newlines, with ``#``
comments. Each statement is parsed by Python's ``ast`` (which only parses, never runs) and
every node is checked: numbers, names, ``+ - * / // % ** @``, unary minus, calls of known functions
with known keywords, indexing and slicing. Anything else (attributes, dunder names, strings,
lambdas, comprehensions, imports) is rejected here, so the text handed on to sympy's parser
is plain arithmetic and calls. The checked statement is re-emitted in that plain form:
operators as calls (``a + b`` as ``add(a, b)``, ``@`` as ``matmul``), ``x[i]`` as
``_index(x, i)``, keywords as positional arguments.
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from keyword import kwlist
from typing import TypeVar

from ..base import bounds
from ..base.errors import GradcliError
from . import functions as F
from . import pytorch, syntax
from .ir import constant_name
from .statement import Statement, element_of  # noqa: F401 - element_of: for its importers
from .values import CONSTRUCTORS, LIKE, quiet_parse, whole_constructor

T = TypeVar("T")
CONSTANTS = {"e", "pi"}

# Operators are re-emitted as calls, so that sympy keeps the program's structure exactly
# (its own Add and Mul would reorder, distribute and cancel terms: x - x would vanish).
# Python's operators, as written: for messages
_SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@",
    ast.BitXor: "^", ast.FloorDiv: "//", ast.Mod: "%", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitAnd: "&", ast.BitOr: "|", ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=",
    ast.Gt: ">", ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
    ast.NotIn: "not in",
}  # fmt: skip
# The comparisons of the language (not 'in' and 'is')
_COMPARED = {ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE}
# The operators gradcli has, and the operation each is: the op table's ``operator``
_OPERATOR_FUNCTIONS = {f.operator: name for name, f in F.FUNCTIONS.items() if f.operator}
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
_REFUSED = {
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
# Python's statements that can start a line, and what a program does instead
_STATEMENT_WORDS = set(kwlist) - {"True", "False", "None", "and", "or", "not", "in", "is"}
_STATEMENT_HINTS = {
    "if": f"a program has no control flow; {syntax.WHERE_HINT}",
    "for": syntax.LOOP[1],
    "while": syntax.LOOP[1],
    "def": syntax.STEPS_HINT,
    "lambda": syntax.STEPS_HINT,
    "return": "the output is the last name assigned (or the one --of names)",
    "import": "nothing needs importing: `gradcli functions` lists what a program can call",
    "from": "nothing needs importing: `gradcli functions` lists what a program can call",
}
# Modules whose functions a person may qualify (np.sin(x)): gradcli calls them by name alone
_MODULES = {"np", "numpy", "torch", "math", "cmath", "F", "nn", "functional", "sp", "sympy"}


def describe(node: ast.stmt | None, text: str) -> str:
    """A person's name for a statement that is not an assignment, ``text`` as written (None:
    one that Python could not parse)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "an import"
    if isinstance(node, ast.Expr):
        return "an expression with no `name =`"
    if isinstance(node, ast.AugAssign):
        symbol = _SYMBOLS[type(node.op)]
        return f"'{symbol}=' (write y2 = y {symbol} x)"
    if isinstance(node, ast.AnnAssign):
        return "an annotation"
    word = _leading_word(text)
    return f"{'an' if word[0] in 'aeiou' else 'a'} '{word}' statement" if word else "a statement"


def _end(node: ast.expr) -> int:
    """The column just after ``node`` (``ast.parse`` sets it on every node it makes; its type
    allows None)."""
    return node.col_offset if node.end_col_offset is None else node.end_col_offset


def _leading_word(text: str) -> str | None:
    """The Python keyword that starts a statement such as ``if x: ...``, or None."""
    match = re.match(r"[a-z]+\b", text)
    return match.group() if match and match.group() in _STATEMENT_WORDS else None


def split_statements(source: str) -> list[Statement]:
    """Statements in order: split at newlines and ``;``, ``#`` starts a comment."""
    statements: list[Statement] = []
    # lines end at \n only (splitlines would also break at \v, \f or U+2028, which are
    # refused below, and the line numbers would no longer be the editor's)
    for line_number, line in enumerate(source.split("\n"), start=1):
        line = line.removesuffix("\r")
        _check_characters(line, line_number)
        code = line.split("#", 1)[0]
        for part in code.split(";"):
            text = part.strip()
            if text:
                statements.append(Statement(len(statements) + 1, line_number, text))
    if not statements:
        raise GradcliError(
            "the program is empty", hint="write statements like: y = x + 2; out = mean(y)"
        )
    return statements


# Bidirectional controls can make a line display otherwise than it reads ("Trojan Source"),
# even inside a comment: they are refused anywhere.
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def _check_characters(line: str, number: int) -> None:
    """Refuse invisible characters, and characters that only look like operators.

    Letters of any script are allowed in names, as in Python (``α = 2*x``).
    """
    in_comment = False
    for column, c in enumerate(line):
        in_comment = in_comment or c == "#"
        if c.isascii() and (c.isprintable() or c == "\t"):
            continue
        if c in _BIDI or (
            not in_comment and (c in syntax.LOOKALIKES or not ("a" + c).isidentifier())
        ):
            invisible = not c.isprintable() or c in _BIDI
            kind = "an invisible character" if invisible else "the character"
            raise GradcliError(
                f"{kind} {syntax.character_name(c)} is not part of the language",
                where=f"line {number}, column {column + 1}",
                source=line.encode("unicode_escape").decode() if c in _BIDI else line,
                column=None if c in _BIDI else column,
                hint=syntax.character_hint(line, column),
            )


@dataclass(frozen=True)
class Checked:
    """A statement that passed the whitelist.

    Either ``expression`` (the plain text for sympy) or ``constructor`` (the text of a call
    such as ``randn(8, 10, requires_grad=True)`` that declares an input with a default), or
    neither for a PyTorch statement that assigns nothing (``target`` None: an import, a
    ``y.backward(v)``, whose ``backward`` says what it asks, or a ``print``).
    ``columns`` maps each function used to the column of its first use, for error carets.
    """

    statement: Statement
    target: str | None
    expression: str | None
    constructor: str | None
    names: tuple[str, ...]
    columns: dict[str, int]
    backward: pytorch.Backward | None = None
    rebinds: bool = False  # y[0] = ...: the target takes a new value, made from its last
    dtype: str | None = None  # a constructor's dtype=torch.float64 ("float64")
    results: tuple[str, ...] = ()  # g, = torch.autograd.grad(...): the names it binds
    made: tuple[Made, ...] = ()  # the constants its constructors make (x + torch.eye(2))


@dataclass(frozen=True)
class Made:
    """A constructor inside an expression (``x + torch.eye(2)``, ``torch.zeros_like(x)``):
    a constant made before the expression is evaluated, which the expression reads as
    ``name`` (a name no program can write, see ``ir.constant_name``); ``constructor`` its text as
    the language writes it (``eye(2)``), ``dtype`` a dtype given, or None."""

    name: str
    constructor: str
    dtype: str | None = None


def reserved(name: str) -> bool:
    return name in CONSTANTS or F.lookup(name) is not None or pytorch.is_constructor(name)


def _closest(name: str, choices) -> str | None:
    """A close match among ``choices``, ignoring case first (``SIN`` -> ``sin``)."""
    by_case = {c.lower(): c for c in sorted(choices)}
    close = difflib.get_close_matches(name.lower(), list(by_case), n=1, cutoff=0.6)
    return by_case[close[0]] if close else None


def _suggest(name: str, choices) -> str | None:
    close = _closest(name, choices)
    return None if close is None else f"did you mean {close!r}?"


class _Checker:
    """Walks one statement's expression, raising on anything outside the whitelist."""

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
            times = _OPERATOR_FUNCTIONS["*"]
            return f"{times}({_number_text(node.value.imag)}, {IMAGINARY_UNIT})"
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            column = self._operator_column(node.left, node.right)
            function = _OPERATOR_FUNCTIONS.get(_SYMBOLS[type(node.op)])
            power = isinstance(node.op, ast.BitXor) and any(
                _numeric(side) for side in (node.left, node.right)
            )
            if function is None or power:
                message, hint = _POWER_HAT if power else _REFUSED_OPERATORS[type(node.op)]
                a, b = self.text(node.col_offset, column), self.text(column, node.end_col_offset)
                b = b.removeprefix(_SYMBOLS[type(node.op)]).strip()
                raise self.statement.error(message, self._chars(column), hint.format(a=a, b=b))
            left, right = self.expression(node.left), self.expression(node.right)
            self.note(function, column)
            return f"{function}({left}, {right})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = _constant(node)
            if type(value) in (int, float):
                return _number_text(value)
            inner = self.expression(node.operand)
            if isinstance(node.op, ast.UAdd):
                return inner
            negate = _OPERATOR_FUNCTIONS["-x"]
            self.note(negate, node.col_offset)
            return f"{negate}({inner})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            invert = _OPERATOR_FUNCTIONS["~"]
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
            if pytorch.dotted(node.value) not in _MODULES:  # x.T is transpose(x)
                name = ast.copy_location(ast.Name(F.PROPERTIES[node.attr].name, ast.Load()), node)
                return self.call(ast.copy_location(ast.Call(name, [node.value], []), node))
        if isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail(
                node,
                "a list is allowed only as the first argument of stack or cat",
                "write stack([a, b]); give list values with --x or -i",
            )
        raise self.refusal(node)

    def resolved(self, node: ast.Call) -> tuple[F.Function | None, ast.Call]:
        """The function ``node`` calls (None: none gradcli has), and the call as a plain
        one (``x.max(1)`` as ``max(x, 1)``)."""
        func = node.func
        if isinstance(func, ast.Attribute):
            prefix = pytorch.dotted(func.value)
            if prefix in F.TORCH_MODULES:
                function = F.lookup(func.attr)
            else:
                function = F.METHODS.get(func.attr) if prefix not in _MODULES else None
            if function is not None:
                node = self.torch_call(node, func)
        else:
            function = F.lookup(func.id) if isinstance(func, ast.Name) else None
        return function, node

    def several(self, node: ast.Call) -> bool:
        """Whether ``node`` calls an operation that may give several results (checked as a
        call when it is taken apart)."""
        function, _ = self.resolved(node)
        return function is not None and bool(function.outputs or "count" in function.extra)

    def gives_several(self, node: ast.Call) -> bool:
        """Whether this call gives several results (max(x, 1) does, max(x) does not)."""
        function, plain = self.resolved(node)
        if function is None:
            return False
        function, plain = self.overload(function, plain)
        return self.results(function, plain) is not None

    def comparison(self, node: ast.Compare) -> str:
        """``a < b`` as ``lt(a, b)``; a chain ``a < b <= c`` as Python means it,
        ``(a < b) & (b <= c)``."""
        sides = [node.left, *node.comparators]
        texts = [self.expression(side) for side in sides]
        calls = []
        for op, (left, right), (a, b) in zip(
            node.ops, zip(sides, sides[1:]), zip(texts, texts[1:])
        ):
            function = _OPERATOR_FUNCTIONS[_SYMBOLS[type(op)]]
            self.note(function, self._operator_column(left, right))
            calls.append(f"{function}({a}, {b})")
        both = _OPERATOR_FUNCTIONS["&"]  # of two comparisons: and
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
            symbol = _SYMBOLS[type(node.ops[at])]
            return self.statement.error(
                syntax.MEMBERSHIP.format(repr(symbol)), self._chars(column), syntax.COMPARE_HINT
            )
        if isinstance(node, ast.Constant):
            return self.fail(node, *_constant_refusal(node.value))
        message, hint = _REFUSED.get(type(node), ("this is not allowed", syntax.LANGUAGE_HINT))
        return self.fail(node, message, hint)

    def instead(self, node: ast.Attribute, call: ast.Call | None = None) -> str:
        """What to write instead of ``np.sin(x)``, ``x.mena()``, ``x.where(...)`` or
        ``math.pi``."""
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        qualified = isinstance(root, ast.Name) and root.id in _MODULES
        arguments = self.arguments(call) if call else []
        made = isinstance(node.value, ast.Call) and pytorch.is_constructor(
            getattr(node.value.func, "id", "")
        )
        if node.attr in F.PROPERTIES and call is None and not made:  # ones(2).T
            return f"write {F.PROPERTIES[node.attr].name}({self.source(node.value)})"
        if node.attr in CONSTANTS and call is None and qualified:
            return f"write {node.attr}"
        close = _closest(node.attr, F.METHODS)
        if not qualified and call is not None and F.lookup(node.attr) is None and close:
            return f"did you mean {self.source(node.value)}.{close}(...)?"
        if F.lookup(node.attr) is None or call is None:
            return "see `gradcli functions` for what a program can call, by name"
        if not qualified:
            arguments.insert(0, self.source(node.value))
        written = f"{node.attr}({', '.join(arguments)})"
        return f"write {written}" if qualified else f"call functions by name: {written}"

    def _operator_column(self, left: ast.expr, right: ast.expr) -> int:
        end = _end(left)
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

    def call(self, node: ast.Call, pick: str | int | None = None, names: int = 0) -> str:
        """A call as text; ``pick`` the result taken of an operation with several (a field,
        or a position), by one of ``names`` names that unpack them (0: taken alone)."""
        if isinstance(node.func, ast.Attribute):
            node = self.torch_call(node, node.func)
        factor = isinstance(node.func, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript)) or (
            isinstance(node.func, ast.Constant) and type(node.func.value) in (int, float)
        )
        if factor or (isinstance(node.func, ast.Name) and node.func.id in CONSTANTS):
            # 2(x + 1), (x + 1)(x - 1), pi(x): a product without its '*'
            paren = self._utf8.index(b"(", node.func.end_col_offset)
            first, second = self.text(node.col_offset, paren), self.text(paren, node.end_col_offset)
            raise self.statement.error(*syntax.product(first, second, self._chars(paren)))
        if not isinstance(node.func, ast.Name):
            raise self.fail(node, "only named functions can be called", syntax.LANGUAGE_HINT)
        name = node.func.id
        function = F.lookup(name)
        if function is None:
            if pytorch.is_constructor(name):
                return self.constant(name, node)
            raise self.fail(
                node,
                f"unknown function {name!r}",
                self.known_as(name, node)
                or _suggest(name, [*F.FUNCTIONS, *F.ALIASES])
                or "see `gradcli functions`",
            )
        function, node = self.overload(function, node)
        output = self.output(function, node, pick, names)
        self.note(function.name, node.col_offset)
        arguments = self.bind(function, node, output)
        return f"{function.name}({', '.join(arguments)})"

    def overload(self, function: F.Function, node: ast.Call) -> tuple[F.Function, ast.Call]:
        """torch's max(x, other) is maximum(x, other): the operation the entry names as its
        ``binary`` form, where the second argument is a tensor (not a dim)."""
        binary = function.extra.get("binary")
        if binary is None:
            return function, node
        second = node.args[1] if len(node.args) > 1 else None
        other = any(k.arg == "other" for k in node.keywords)
        if other or (second is not None and type(_constant(second)) is not int):
            pairwise = F.lookup(binary)
            assert pairwise is not None
            return pairwise, node
        return function, node

    def results(self, function: F.Function, node: ast.Call) -> int | None:
        """How many results this call of ``function`` gives: None for one tensor, 0 for as
        many as its input's shape makes (split)."""
        if "count" in function.extra:
            return 0
        if not function.outputs:
            return None
        unless = function.extra.get("several_unless_none")
        if unless is not None:
            names = [p.name for p in function.params]
            given = {k.arg: k.value for k in node.keywords}
            given.update(zip(names, node.args))
            if unless not in given or _constant(given[unless]) is None:
                return None
        return len(function.outputs)

    def output(
        self, function: F.Function, node: ast.Call, pick: str | int | None, names: int
    ) -> tuple[int, int]:
        """(k, names) for the result ``pick`` (a field such as "values", or a position) of a
        call, taken by one of ``names`` names (0: taken alone); an operation with several
        results must be unpacked or have one picked, one with one result must not."""
        count = self.results(function, node)
        written = self.source(node)
        if count is None:
            if pick is None:
                return (0, 0)
            what = f".{pick}" if isinstance(pick, str) else f"[{pick}]"
            raise self.fail(
                node,
                f"{written} gives one tensor: it has no {what}"
                if not names
                else f"{written} gives one tensor, which cannot be unpacked into {names} names",
                _ONE_RESULT_HINT,
            )
        fields = function.outputs
        plain = function.extra.get("plain", False)
        several = f"{count} tensors" if count else "a tuple of tensors"
        shown = f" ({', '.join(fields)})" if fields and not plain else ""
        if pick is None:
            take = ", ".join(fields) if fields and not plain else "a, b"
            one = f"{written}.{fields[0]}" if fields and not plain else f"{written}[0]"
            binary = function.extra.get("binary")
            pairwise = "" if binary is None else f"; the {binary} of two tensors is {binary}(a, b)"
            raise self.fail(
                node,
                f"{written} gives {several}{shown}, not one tensor",
                f"unpack them ({take} = {written}) or take one ({one}){pairwise}",
            )
        if isinstance(pick, str):
            if plain or pick not in fields:
                raise self.fail(
                    node,
                    f"{written} has no field {pick!r}",
                    f"it gives {several}{shown}; take one with "
                    + ("[0]" if plain else " or ".join(f".{f}" for f in fields)),
                )
            return (fields.index(pick), 0)
        if count and names and names != count:
            few = names > count
            raise self.fail(
                node,
                f"{'not enough' if few else 'too many'} values to unpack (expected {names}"
                + (f", got {count})" if few else ")"),
                f"{written} gives {several}{shown}",
            )
        if count and not -count <= pick < count:
            raise self.fail(node, f"{written} gives {several}: there is no [{pick}]")
        return (pick % count if count else pick, names)

    def checked(self, target: str | None, expression: str, rebinds: bool = False) -> Checked:
        """The statement checked, ``expression`` its text for sympy."""
        return Checked(
            self.statement,
            target,
            expression,
            None,
            tuple(self.names),
            self.columns,
            rebinds=rebinds,
            made=tuple(self.made),
        )

    def constant(self, name: str, node: ast.Call) -> str:
        """A constructor inside an expression (``x + torch.eye(2)``): a constant, which the
        expression reads by its name (see ``Made``); a constructor that declares an input
        (``requires_grad=True``) must be a statement of its own."""
        for keyword in node.keywords:
            if keyword.arg == "requires_grad" and _constant(keyword.value) is not False:
                raise self.fail(
                    node,
                    f"{name}(..., requires_grad=True) makes an input: it must be the whole "
                    "right-hand side",
                    f"write a separate statement, e.g. w = torch.{name}(3, requires_grad=True)",
                )
        try:
            source = pytorch.like_source(node)
            dtype = pytorch.dtype(node)
        except pytorch.Refused as exc:
            raise _refused(self.statement, exc) from None
        if source is not None:
            self.name(source)
        arguments = [self.source(a) for a in node.args]
        arguments += [self.source(k) for k in node.keywords if k.arg != "dtype"]
        hidden = constant_name(self.statement.number, node.lineno, node.col_offset)
        made = Made(hidden, f"{name}({', '.join(arguments)})", dtype)
        self.made.append(made)
        return made.name

    def torch_call(self, node: ast.Call, attribute: ast.Attribute) -> ast.Call:
        """PyTorch's spellings as a plain call: ``torch.sin(x)``, ``F.relu(x)`` and
        ``torch.nn.functional.mse_loss(a, b)`` call the function by its name, a method
        ``x.sum(dim=0)`` calls it with ``x`` first."""
        prefix = pytorch.dotted(attribute.value)
        if prefix in F.TORCH_MODULES:
            known = F.lookup(attribute.attr)
            if known is None and not pytorch.is_constructor(attribute.attr):
                raise self.fail(
                    attribute,
                    f"{prefix}.{attribute.attr} is not an operation gradcli has",
                    _suggest(attribute.attr, [*F.FUNCTIONS, *F.ALIASES])
                    or "see `gradcli functions` for the operations gradcli has",
                )
            if known is not None:
                self.in_torch(attribute, prefix)
            other = None if known is None else known.extra.get("linalg_only")
            if other is not None and prefix != "torch.linalg":  # torch.svd is not linalg.svd
                raise self.fail(attribute, f"{prefix}.{attribute.attr} {other[0]}", other[1])
            function = ast.copy_location(ast.Name(attribute.attr, ast.Load()), attribute)
            return ast.copy_location(ast.Call(function, node.args, node.keywords), node)
        method = F.METHODS.get(attribute.attr)
        if method is None and self.grads and prefix not in _MODULES and F.lookup(attribute.attr):
            message = f"'Tensor' object has no attribute '{attribute.attr}'"  # x.cbrt()
            raise pytorch.Missing("AttributeError", message, attribute)
        if method is None or prefix in _MODULES:
            raise self.fail(attribute, syntax.ATTRIBUTE, self.instead(attribute, node))
        function = ast.copy_location(ast.Name(method.name, ast.Load()), attribute)
        arguments = [attribute.value, *node.args]
        fixed = method.extra.get("dtype_methods", {}).get(attribute.attr)
        if fixed is not None:  # x.long(): to(x, 'int64')
            if node.args or node.keywords:
                raise self.fail(node, f".{attribute.attr}() takes no arguments", "write x.long()")
            arguments.append(ast.copy_location(ast.Constant(fixed), attribute))
        return ast.copy_location(ast.Call(function, arguments, node.keywords), node)

    def in_torch(self, attribute: ast.Attribute, prefix: str) -> None:
        """Refuse ``torch.cbrt`` or ``F.sin``, a function of the language that PyTorch 2.13
        does not have in that module: for ``gradcli run``, torch's AttributeError when the
        statement runs (``pytorch.Missing``), for a program an error saying where it is."""
        module = pytorch.MODULE_OF.get(prefix, prefix)
        name = attribute.attr
        if name in pytorch.torch_has()[module]:
            return
        if self.grads:  # gradcli run: Python raises it there
            message = f"module '{module}' has no attribute '{name}'"
            raise pytorch.Missing("AttributeError", message, attribute)
        where = pytorch.where_torch_has(name)
        hint = (
            f"PyTorch's is {' or '.join(f'{m}.{name}' for m in where)}; or write {name}(...)"
            if where
            else f"{name} is gradcli's own: write {name}(...)"
        )
        raise self.fail(attribute, f"PyTorch 2.13 has no {module}.{name}", hint)

    def known_as(self, name: str, node: ast.Call) -> str | None:
        """How gradcli writes a function known from mathematics or numpy: ``ln(x)`` is
        ``log(x)``; None for other names."""
        joined = ", ".join(self.arguments(node))
        written = _KNOWN_AS.get(name)
        return None if written is None else "write " + written.format(joined)

    def bind(
        self, function: F.Function, node: ast.Call, output: tuple[int, int] = (0, 0)
    ) -> list[str]:
        """Arguments in signature order as text; literals checked against their kind;
        ``output`` is which result of an operation with several the call gives (see
        ``F.OUTPUT``)."""
        params = tuple(p for p in function.params if p.kind != F.OUTPUT)
        if function.extra.get("varargs"):  # torch's *tensors: meshgrid(a, b) is meshgrid([a, b])
            node = _gathered(node)
        bound: dict[str, ast.AST] = {}
        rest: list[ast.AST] = []
        positional = function.extra.get("positional")  # torch's order, where it is not ours
        for i, argument in enumerate(node.args):
            if isinstance(argument, ast.Starred):
                raise self.fail(argument, *_REFUSED[ast.Starred])
            if positional is not None:
                if i >= len(positional):
                    legacy = any(p.name == "reduction" for p in params)
                    raise self.fail(
                        argument,
                        f"{function.name} takes {len(positional)} positional arguments, as "
                        f"torch's ({', '.join(positional)}); name the others"
                        + (
                            " (torch reads the next one as its deprecated size_average: "
                            f'{function.name}(..., "sum") is the mean there, not the sum)'
                            if legacy
                            else ""
                        ),
                        f"it is {function.signature()}"
                        + ("; e.g. reduction='sum'" if legacy else ""),
                    )
                bound[positional[i]] = argument
            elif i < len(params) and params[i].kind not in _REST:
                bound[params[i].name] = argument
            elif params and params[-1].kind in _REST:
                rest.append(argument)
            else:
                raise self.fail(
                    argument,
                    f"{function.name} has no {_ordinal(i + 1)} argument",
                    f"it is {function.signature()}",
                )
        varargs = function.extra.get("varargs")  # its tensors are never named, as torch's
        for keyword in node.keywords:
            known = [
                p.name
                for p in params
                if p.kind not in _REST and not (varargs and p.kind == F.TENSORS)
            ]
            if keyword.arg is None:
                raise self.fail(
                    keyword.value,
                    "'**' unpacking is not allowed",
                    "name each argument on its own, e.g. sum(x, dim=0)",
                )
            if keyword.arg not in known:
                raise self.fail(
                    keyword.value,
                    f"{function.name} has no argument named {keyword.arg!r}",
                    _suggest(keyword.arg, known) or f"it is {function.signature()}",
                )
            if keyword.arg in bound:
                raise self.fail(keyword.value, f"{keyword.arg!r} is given twice")
            bound[keyword.arg] = keyword.value
        texts: list[str] = []
        if len(rest) == 1 and isinstance(rest[0], (ast.Tuple, ast.List)):  # reshape(x, (2, 3))
            rest = list(rest[0].elts)
        for param in params:
            if param.kind == F.SIZES:
                texts.extend(self.literal(a, F.INT, function) for a in rest)
            elif param.kind == F.VAR_TENSORS:  # einsum(equation, a, b)
                if not rest:
                    raise self.fail(
                        node,
                        f"{function.name} needs at least one tensor after its {params[0].name}",
                        f"it is {function.signature()}",
                    )
                texts.extend(self.expression(a) for a in rest)
            elif param.name in bound:
                texts.append(self.argument(bound[param.name], param, function))
            elif param.default is F.REQUIRED:
                raise self.fail(
                    node,
                    f"{function.name} is missing its argument {param.name!r}",
                    f"it is {function.signature()}",
                )
            else:
                texts.append(_literal_text(param.default))
        if len(params) < len(function.params):
            texts.append(f"_tuple({output[0]}, {output[1]})")
        return texts

    def argument(self, node: ast.AST, param: F.Param, function: F.Function) -> str:
        if param.kind == F.TENSOR:
            return self.expression(node)
        if param.kind == F.OPT_TENSOR:  # linear(x, w, None): an operand left out
            return "_none" if _constant(node) is None else self.expression(node)
        if param.kind == F.TENSORS:
            if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
                varargs = function.extra.get("varargs")
                listed = isinstance(node, (ast.List, ast.Tuple))
                raise self.fail(
                    node,
                    f"{function.name} needs "
                    + ("at least one tensor" if varargs and listed else "a list of tensors"),
                    f"write {function.name}(a, b) or {function.name}([a, b])"
                    if varargs
                    else f"write {function.name}([a, b])",
                )
            return f"_list({', '.join(self.expression(e) for e in node.elts)})"
        return self.literal(node, param.kind, function, param.name)

    def literal(self, node: ast.AST, kind: str, function: F.Function, name: str = "size") -> str:
        if kind == F.EQUATION:
            return self.equation(node, function, name)
        listed = kind in (F.DIMS, F.INTS, F.SECTIONS)
        if listed and isinstance(node, (ast.Tuple, ast.List)):  # dim=(0, 1), split(x, [1, 2])
            dims = [_constant(e) for e in node.elts]
            if not dims or not all(type(d) is int and abs(d) <= _LARGEST_INT for d in dims):
                raise self.fail(
                    node,
                    f"{name} of {function.name} must be {kind}",
                    f"it is {function.signature()}",
                )
            return f"_tuple({', '.join(map(str, dims))})"
        if kind == F.DTYPE:  # torch.long, long or 'int64'
            written = _constant(node)
            dotted = pytorch.dotted(node) if isinstance(node, ast.expr) else None
            name = (written if isinstance(written, str) else dotted or "").removeprefix("torch.")
            if name not in F.DTYPE_NAMES:
                raise self.fail(
                    node,
                    f"{name} of {function.name} must be {kind}",
                    f"it is {function.signature()}",
                )
            return _literal_text(F.DTYPE_NAMES[name])
        value = _constant(node)
        ok = {
            F.INT: isinstance(value, int) and not isinstance(value, bool),
            F.OPT_INT: value is None or (isinstance(value, int) and not isinstance(value, bool)),
            F.DIMS: value is None or (isinstance(value, int) and not isinstance(value, bool)),
            F.INTS: isinstance(value, int) and not isinstance(value, bool),
            F.PAD_MODE: value in F.PAD_MODES,
            F.SECTIONS: isinstance(value, int) and not isinstance(value, bool),
            F.NUMBER: isinstance(value, (int, float)) and not isinstance(value, bool),
            F.OPT_NUMBER: value is None
            or (isinstance(value, (int, float)) and not isinstance(value, bool)),
            F.BOOL: isinstance(value, bool),
            F.REDUCTION: value in F.REDUCTIONS,
            F.APPROXIMATE: value in F.APPROXIMATIONS,
            F.NORM_ORD: value in ("fro", "nuc")
            or (isinstance(value, (int, float)) and not isinstance(value, bool)),
            F.KL_REDUCTION: value in F.KL_REDUCTIONS,
            F.UPLO: value in F.UPLOS,
            F.QR_MODE: value in F.QR_MODES,
            F.INDEXING: value is None or value in F.INDEXINGS,
        }[kind]
        if value is _NOT_CONSTANT or not ok:
            raise self.fail(
                node, f"{name} of {function.name} must be {kind}", f"it is {function.signature()}"
            )
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _LARGEST_INT:
            raise self.fail(
                node, f"{name} of {function.name} is too large ({value:.3g})", "no array has it"
            )
        return _literal_text(value)

    def equation(self, node: ast.AST, function: F.Function, name: str) -> str:
        """einsum's equation: a string of letters, ',', '->', '...' and spaces only, which
        reaches the parser encoded as a name (never as a string sympy could evaluate)."""
        value = _constant(node)
        if not isinstance(value, str):
            raise self.fail(
                node,
                f"{name} of {function.name} must be {F.EQUATION}",
                "write it in quotes, e.g. einsum('ij,jk->ik', a, b)",
            )
        bad = _EQUATION_OUTSIDE.search(value.replace("->", "").replace("...", ""))
        if bad is not None or value.count("->") > 1:
            what = f"the character {bad.group()!r}" if bad else "'->' more than once"
            raise self.fail(
                node,
                f"{name} of {function.name} has {what}: it must be {F.EQUATION}",
                "write it as 'ij,jk->ik' ('...' for the dims the letters do not name)",
            )
        return _literal_text(value)

    def subscript(self, node: ast.Subscript) -> str:
        base = self.expression(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        self.note(F.OPERATORS["[]"].name, _end(node.value))
        texts = [self.index_item(i) for i in items]
        if any(t.startswith("_tuple(") for t in texts):  # a list: x[:, [0, 2]]
            self.note(F.OPERATORS["[tensor]"].name, _end(node.value))
        return f"_index({base}, {', '.join(texts)})"

    def index_item(self, node: ast.AST, tensors: bool = True) -> str:
        """One item of an index: a whole number, a slice, ``...``, None, a list of whole numbers
        (``x[:, [0, 2]]``) or, where ``tensors``, a tensor (``x[idx]``, ``x[x > 0]``)."""
        if isinstance(node, ast.List) and node.elts:
            values = [_constant(e) for e in node.elts]
            if all(type(v) is int and abs(v) <= _LARGEST_INT for v in values):
                return f"_tuple({', '.join(map(str, values))})"
            raise self.fail(
                node,
                "a list in an index must hold whole numbers",
                "write x[[0, 2]], or index by a tensor: x[idx]",
            )
        if (
            tensors
            and not isinstance(node, (ast.Slice, ast.Constant))
            and _constant(node) is _NOT_CONSTANT
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
        value = _constant(node)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(
                node,
                "an index must be a whole number, a range like 1:3, ..., a list of whole "
                "numbers or a tensor",
                "write x[0], x[1, 2], x[:, 0], x[-1], x[[0, 2]], x[idx] or x[x > 0]",
            )
        if abs(value) > _LARGEST_INT:
            raise self.fail(node, f"the index {value:.3g} is too large", "no array is that long")
        return str(value)


# How gradcli writes functions known from mathematics or numpy ({} is the arguments)
_KNOWN_AS = {
    "ln": "log({})",
    "arcsin": "asin({})",
    "arccos": "acos({})",
    "arctan": "atan({})",
    "sgn": "sign({})",
    "fabs": "abs({})",
}
_NOT_CONSTANT = object()
_REST = (F.SIZES, F.VAR_TENSORS)  # kinds that take the rest of the positional arguments
_EQUATION_OUTSIDE = re.compile(r"[^A-Za-z, ]")  # once '->' and '...' are taken out
# The imaginary unit as the checked text names it (no program can write a name of '_')
IMAGINARY_UNIT = "_imag"
# A string reaches the parser as a name: the characters a name cannot hold are '_' codes
ENCODED = {"_": "_u", ",": "_c", "-": "_m", ">": "_g", ".": "_d", " ": "_w"}
_LARGEST_INT = 2**62  # a size, dim or index beyond this fits no array (nor a C integer)


def _gathered(node: ast.Call) -> ast.Call:
    """A call of an operation that takes torch's ``*tensors``, its tensors as the one list it
    may also be given: ``meshgrid(a, b)`` as ``meshgrid([a, b])``."""
    args = node.args
    if len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
        return node
    listed = ast.copy_location(ast.List(list(args), ast.Load()), args[0] if args else node)
    if args:
        listed.end_lineno, listed.end_col_offset = args[-1].end_lineno, args[-1].end_col_offset
    return ast.copy_location(ast.Call(node.func, [listed], node.keywords), node)


def _constant(node: ast.AST):
    """The value of a literal number, -number, True/False, None or string; else a marker."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool, str, type(None)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _constant(node.operand)
        if type(value) in (int, float):
            return -value
    return _NOT_CONSTANT


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


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def _number_text(value: int | float) -> str:
    """A number in an expression; -0.0 as neg(0.0), since sympy has no negative zero (the
    parser folds it back to -0.0)."""
    if isinstance(value, float) and value == 0 and math.copysign(1, value) < 0:
        return "neg(0.0)"
    return _literal_text(value)


def _literal_text(value) -> str:
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


def check(statement: Statement, grads: bool = False) -> Checked:
    """Parse one statement with ``ast`` and check every node against the whitelist;
    ``grads``: ``x.grad`` may be read (as the name ``grad_name("x")``)."""
    try:
        tree = quiet_parse(statement.text, "exec")
    except SyntaxError as exc:
        if _leading_word(statement.text) is not None:  # if x, for i in x: without a body
            raise _not_an_assignment(statement, None) from None
        if "=" not in statement.text:
            raise statement.error(
                "expected an assignment `name = expression`, found no '='",
                0,
                syntax.STATEMENT_HINT,
            ) from None
        message, column, hint = syntax.explain(statement.text, exc, _CALLED)
        if hint is None:
            hint = _SPLIT_HINT if "nested" in message else syntax.LANGUAGE_HINT
        raise statement.error(message, column, hint) from None
    except (RecursionError, MemoryError):  # Python's parser gives up on very deep nesting
        raise statement.error(
            "the expression is nested too deeply to parse", 0, _SPLIT_HINT
        ) from None
    _check_depth(statement, tree)
    body = tree.body
    if len(body) == 1:
        asked = _grad_of(statement, body[0]) or _in_place(statement, body[0], grads)
        if asked is not None:
            return asked
    if len(body) == 1 and not isinstance(body[0], ast.Assign):
        done = _pytorch_statement(statement, body[0])
        if done is not None:
            return done
    if len(body) != 1 or not isinstance(body[0], ast.Assign):
        raise _not_an_assignment(statement, body[0])
    assign = body[0]
    place = assign.targets[0]
    if isinstance(place, ast.Subscript) and isinstance(place.value, ast.Name):
        return _item_assignment(statement, place.value, place.slice, assign.value, grads)
    if len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
        raise statement.error(
            "the left-hand side must be a single name, or names that unpack the tensors of "
            "max(x, dim), sort, topk, split, ...",
            0,
            syntax.STATEMENT_HINT,
        )
    target = _target(statement, assign.targets[0].id)
    value = assign.value
    try:
        made = pytorch.constructor(value, statement.text)
        dtype = None if made is None else pytorch.dtype(value)
        if made is not None and dtype is None and whole_constructor(_call_of(made)):
            dtype = "int64"  # torch.tensor([0, 2]), torch.arange(3): int64, as in torch
        plain = (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and pytorch.is_constructor(value.func.id)
        )
        taken = isinstance(value, ast.Call) and (made is not None or plain)
        source = pytorch.like_source(value) if isinstance(value, ast.Call) and taken else None
    except pytorch.Refused as exc:
        raise _refused(statement, exc) from None
    read = () if source is None else (source.id,)
    if made is not None:  # x = torch.ones(2, requires_grad=True)
        return Checked(statement, target, None, made, read, {}, dtype=dtype)
    if plain:
        text = ast.get_source_segment(statement.text, value)
        return Checked(statement, target, None, text, read, {})
    checker = _Checker(statement, grads)
    expression = checker.expression(value)
    return checker.checked(target, expression)


def check_all(statement: Statement, grads: bool = False) -> list[Checked]:
    """``check``, and a statement that unpacks the tensors of an operation with several
    results (``values, indices = max(x, 1)``) as one checked assignment per name, each
    calling the operation for its own result."""
    try:
        tree = quiet_parse(statement.text, "exec")
    except (SyntaxError, RecursionError, MemoryError):
        return [check(statement, grads)]  # check says what is wrong
    body = tree.body
    if len(body) == 1 and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1:
        place = body[0].targets[0]
        # gx, gw = torch.autograd.grad(...) is check's own (its outputs are the gradients)
        if isinstance(place, (ast.Tuple, ast.List)) and not pytorch.is_grad_call(body[0].value):
            _check_depth(statement, tree)
            return _unpacking(statement, place, body[0].value, grads)
    return [check(statement, grads)]


def _unpacking(
    statement: Statement, place: ast.Tuple | ast.List, value: ast.expr, grads: bool
) -> list[Checked]:
    names = []
    for element in place.elts:
        if not isinstance(element, ast.Name):
            raise statement.error(
                "only names can take the tensors unpacked",
                element.col_offset,
                "write values, indices = max(x, 1)",
            )
        names.append(_target(statement, element.id))
    if len(set(names)) < len(names):
        raise statement.error(
            "a name is given twice on the left-hand side", 0, "give each tensor its own name"
        )
    if not isinstance(value, ast.Call) or not _Checker(statement).several(value):
        raise statement.error(
            f"only an operation that gives several tensors can be unpacked into {len(names)} names",
            value.col_offset,
            _ONE_RESULT_HINT,
        )
    checked = []
    for k, name in enumerate(names):
        checker = _Checker(statement, grads)
        expression = checker.call(value, pick=k, names=len(names))
        checked.append(checker.checked(name, expression))
    return checked


def _target(statement: Statement, target: str) -> str:
    """``target``, a name a statement may assign."""
    if target.startswith("_") or reserved(target):
        raise statement.error(
            f"{target!r} cannot be assigned: "
            + (
                "names may not start with '_'"
                if target.startswith("_")
                else "it is a built-in name"
            ),
            0,
            "choose another name, e.g. y1 or w_2",
        )
    return target


_CALLED = frozenset([*F.FUNCTIONS, *F.ALIASES, *CONSTRUCTORS, *LIKE])
_ONE_RESULT_HINT = "only operations such as max(x, dim), sort, topk and split give several tensors"


def _picked(index: ast.expr) -> int | None:
    """The position ``[k]`` takes of a result (a whole number), else None."""
    value = _constant(index)
    return value if type(value) is int else None


def check_expression(statement: Statement, node: ast.expr) -> Checked:
    """One expression of ``statement`` (``node``, parsed from its text), checked as the
    right-hand side of an assignment is (reading ``x.grad`` too): what ``gradcli run`` shows
    of ``print(x * 2)``."""
    _check_depth(statement, node)
    checker = _Checker(statement, grads=True)
    return checker.checked(None, checker.expression(node))


def check_results(statement: Statement, node: ast.expr) -> Checked | None:
    """For an expression that calls an operation with several results (what ``gradcli run``
    shows of ``torch.max(x, 1)``), its first result checked as ``check_expression`` would;
    None for any other expression."""
    checker = _Checker(statement, grads=True)
    if not isinstance(node, ast.Call) or not checker.gives_several(node):
        return None
    _check_depth(statement, node)
    expression = checker.call(node, pick=0)
    return Checked(
        statement,
        None,
        expression,
        None,
        tuple(checker.names),
        checker.columns,
        made=tuple(checker.made),
    )


def _call_of(constructor: str) -> ast.Call:
    call = ast.parse(constructor, mode="eval").body
    assert isinstance(call, ast.Call)  # a constructor's text is a call
    return call


def check_characters(source: str) -> None:
    """Refuse invisible characters and lookalikes of operators anywhere in ``source``."""
    for number, line in enumerate(source.split("\n"), start=1):
        _check_characters(line.removesuffix("\r"), number)


def _item_assignment(
    statement: Statement, name: ast.Name, index: ast.expr, value: ast.expr, grads: bool
) -> Checked:
    """``y[0] = expression`` (PyTorch's item and slice assignment): ``y`` again, written at
    the index; ``rebinds`` tells the builder that ``y`` takes a new value here."""
    checker = _Checker(statement, grads)
    base = checker.name(name)
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    written = checker.expression(value)
    checker.note(F.OPERATORS["[]="].name, name.col_offset)
    where = ", ".join(checker.index_item(i) for i in items)  # y[x > 0] = 0: index_put_
    return checker.checked(base, f"_setitem({base}, {written}, {where})", rebinds=True)


def _pytorch_statement(statement: Statement, node: ast.stmt) -> Checked | None:
    """An import, ``y.backward(v)`` or a ``print`` of PyTorch code, or None (see pytorch.py)."""
    try:
        pytorch.setting(node)
        if pytorch.is_import(node) or pytorch.shows(node) or pytorch.retains(node):
            return Checked(statement, None, None, None, (), {})
        zeroed = pytorch.zero_grad(node)
        if zeroed is not None:  # x.grad.zero_()
            reset = pytorch.Backward(zeroed, None, False, zero_grad=True)
            return Checked(statement, None, None, None, (zeroed,), {}, reset)
        call = pytorch.backward(node)
    except pytorch.Refused as exc:
        raise _refused(statement, exc) from None
    if call is None:
        return None
    names = (call.output,) if call.gradient is None else (call.output, call.gradient)
    return Checked(statement, None, None, None, names, {}, call)


def _grad_of(statement: Statement, node: ast.stmt) -> Checked | None:
    """``torch.autograd.grad(...)`` as a statement (see pytorch.py), or None."""
    asked = _reading(statement, pytorch.grad_of, node)
    if asked is None:
        return None
    call, bound = asked
    assert call.inputs is not None  # the inputs of a torch.autograd.grad
    names = (call.output, *filter(None, [call.gradient]), *call.inputs)
    return Checked(statement, None, None, None, names, {}, call, results=bound)


def _in_place(statement: Statement, node: ast.stmt, grads: bool) -> Checked | None:
    """``y += e``, ``y.add_(e)``, ``y.zero_()``: ``y`` again, made from its last value (as
    ``y[0] = e`` is), or None for another statement."""
    change = _reading(statement, pytorch.in_place, node)
    if change is None:
        return None
    checker = _Checker(statement, grads)
    base = checker.name(change.target)
    if reserved(base):
        raise statement.error(f"{base!r} cannot be assigned: it is a built-in name", 0)
    if change.symbol is None:  # every element written, as y[...] = 0 writes
        function = F.OPERATORS["[]="].name
        expression = f"_setitem({base}, 0, _ellipsis)"
    else:
        assert change.operand is not None  # an operator's operand
        function = _OPERATOR_FUNCTIONS[change.symbol]
        expression = f"{function}({base}, {checker.expression(change.operand)})"
    checker.note(function, change.target.col_offset)
    return checker.checked(base, expression, rebinds=True)


def _reading(statement: Statement, read: Callable[[ast.stmt], T], node: ast.stmt) -> T:
    """``read(node)`` (a reader of pytorch.py), its refusal as the statement's error."""
    try:
        return read(node)
    except pytorch.Refused as exc:
        raise _refused(statement, exc) from None


def _refused(statement: Statement, refused: pytorch.Refused) -> GradcliError:
    column = getattr(refused.node, "col_offset", 0)
    characters = len(statement.text.encode()[:column].decode(errors="ignore"))
    return statement.error(refused.message, characters, refused.hint)


def _not_an_assignment(statement: Statement, node: ast.stmt | None) -> GradcliError:
    """The error for a statement that assigns nothing (``x + 1``, ``import os``, ``y == x``);
    ``node`` is None where Python could not parse it (``if x`` without its ':')."""
    text = statement.text
    hint = _STATEMENT_HINTS.get(_leading_word(text) or "", syntax.STATEMENT_HINT)
    if isinstance(node, ast.Expr):
        value = node.value
        if (
            isinstance(value, ast.Compare)
            and isinstance(value.ops[0], ast.Eq)
            and isinstance(value.left, ast.Name)
            and len(value.ops) == 1
        ):
            equals = text.index("==")
            return statement.error(
                "'==' compares, and a statement assigns",
                equals,
                f"to assign, write {value.left.id} = {text[equals + 2 :].strip()}",
            )
        refused = _REFUSED.get(type(value))
        hint = refused[1] if refused else f"give it a name: y = {text}"
    return statement.error(
        f"expected an assignment `name = expression`, found {describe(node, text)}", 0, hint
    )


_SPLIT_HINT = "split it into several statements, e.g. s1 = a + b + c; s2 = s1 + d + e"


def _check_depth(statement: Statement, tree: ast.AST) -> None:
    """Refuse an expression whose operations nest deeper than ``--max-depth``.

    Walks the tree without recursion, so that no depth can overflow the walk itself; the
    checks after this one, and sympy's parser, recurse once per level.
    """
    limit = bounds.limits().max_depth
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr) and not isinstance(node, (ast.Name, ast.Constant)):
            depth += 1
            if depth > limit:
                column = len(statement.text.encode()[: node.col_offset].decode(errors="ignore"))
                raise statement.error(
                    f"the expression nests operations more than {limit} deep",
                    column,
                    f"{_SPLIT_HINT}; or raise --max-depth (at most {bounds.DEPTH_CEILING}, "
                    "where Python's parser, which sympy's runs on, stops)",
                )
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
