"""Checking program text against a whitelist before anything else reads it.

A program is statements ``name = expression`` separated by ``;`` or newlines, with ``#``
comments. Each statement is parsed by Python's ``ast`` (which only parses, never runs) and
every node is checked: numbers, names, ``+ - * / ** @``, unary minus, calls of known functions
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
import unicodedata
from dataclasses import dataclass

from .. import limits
from ..errors import GradcliError
from ..values import CONSTRUCTORS, quiet_parse
from . import functions as F

CONSTANTS = {"e", "pi"}
# x0, x12 (not x01: a leading zero would make y0 and y00 the same element)
_ELEMENT_NAME = re.compile(r"^([A-Za-z]\w*?)(0|[1-9]\d{0,8})$")  # up to 9 digits: x999999999

# Operators are re-emitted as calls, so that sympy keeps the program's structure exactly
# (its own Add and Mul would reorder, distribute and cancel terms: x - x would vanish).
_OPERATORS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.Pow: "pow",
    ast.MatMult: "matmul",
}
_DESCRIPTIONS = {
    ast.Attribute: "attribute access ('.')",
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.Compare: "a comparison",
    ast.BoolOp: "'and'/'or'",
    ast.IfExp: "an if-expression",
    ast.NamedExpr: "':='",
    ast.Starred: "'*' unpacking",
    ast.Await: "await",
    ast.JoinedStr: "a string",
    ast.FormattedValue: "a string",
    ast.Import: "an import",
    ast.ImportFrom: "an import",
    ast.Expr: "an expression with no `name =`",
    ast.AugAssign: "'+=' (write y2 = y + x)",
    ast.AnnAssign: "an annotation",
    ast.Delete: "'del'",
}


def describe(node: ast.AST) -> str:
    """A person's name for a syntax node that is not allowed."""
    if isinstance(node, ast.Constant):
        return "a string" if isinstance(node.value, (str, bytes)) else repr(node.value)
    if isinstance(node, ast.BinOp):
        return f"the operator {type(node.op).__name__}"
    if isinstance(node, ast.UnaryOp):
        return "'not'" if isinstance(node.op, ast.Not) else "'~'"
    return _DESCRIPTIONS.get(type(node), type(node).__name__)


@dataclass(frozen=True)
class Statement:
    """One ``name = expression`` as written, and where it stands in the program."""

    number: int  # 1-based position among the statements
    line: int  # 1-based line of the program
    text: str  # the statement, stripped

    @property
    def where(self) -> str:
        return f"statement {self.number} (line {self.line})"

    def error(self, message: str, column: int | None = None, hint: str | None = None):
        return GradcliError(message, where=self.where, source=self.text, column=column, hint=hint)


def split_statements(source: str) -> list[Statement]:
    """Statements in order: split at newlines and ``;``, ``#`` starts a comment."""
    statements = []
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


# Characters that look like operators but are not: the usual ones from word processors and
# mathematical text. (Full-width forms such as '＋' are found through NFKC.)
_LOOKALIKES = {
    "\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u2011": "-",
    "\u00d7": "*", "\u2217": "*", "\u22c5": "*", "\u00b7": "*", "\u2219": "*",
    "\u00f7": "/", "\u2215": "/", "\u2044": "/",
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
    "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u3000": " ",
}  # fmt: skip
# Bidirectional controls can make a line display otherwise than it reads ("Trojan Source"),
# even inside a comment: they are refused anywhere.
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def character_name(c: str) -> str:
    return f"U+{ord(c):04X} {unicodedata.name(c, 'a control character')}"


def _check_characters(line: str, number: int) -> None:
    """Refuse invisible characters, and characters that only look like operators.

    Letters of any script are allowed in names, as in Python (``α = 2*x``).
    """
    in_comment = False
    for column, c in enumerate(line):
        in_comment = in_comment or c == "#"
        if c.isascii() and (c.isprintable() or c == "\t"):
            continue
        if c in _BIDI or (not in_comment and (c in _LOOKALIKES or not ("a" + c).isidentifier())):
            meant = _LOOKALIKES.get(c) or unicodedata.normalize("NFKC", c)
            hint = (
                f"did you mean {meant!r}?"
                if meant != c and meant.isascii() and meant.isprintable()
                else "retype the line with plain characters"
            )
            invisible = not c.isprintable() or c in _BIDI
            kind = "an invisible character" if invisible else "the character"
            raise GradcliError(
                f"{kind} {character_name(c)} is not part of the language",
                where=f"line {number}, column {column + 1}",
                source=line.encode("unicode_escape").decode() if c in _BIDI else line,
                column=None if c in _BIDI else column,
                hint=hint,
            )


@dataclass(frozen=True)
class Checked:
    """A statement that passed the whitelist.

    Either ``expression`` (the plain text for sympy) or ``constructor`` (the text of a call
    such as ``randn(8, 10, requires_grad=True)`` that declares an input with a default).
    ``columns`` maps each function used to the column of its first use, for error carets.
    """

    statement: Statement
    target: str
    expression: str | None
    constructor: str | None
    names: tuple[str, ...]
    columns: dict[str, int]


def reserved(name: str) -> bool:
    return name in CONSTANTS or F.lookup(name) is not None or name in CONSTRUCTORS


def _suggest(name: str, choices) -> str | None:
    """A close match among ``choices``, ignoring case first (``SIN`` -> ``sin``)."""
    by_case = {c.lower(): c for c in sorted(choices)}
    close = difflib.get_close_matches(name.lower(), list(by_case), n=1, cutoff=0.6)
    return f"did you mean {by_case[close[0]]!r}?" if close else None


class _Checker:
    """Walks one statement's expression, raising on anything outside the whitelist."""

    def __init__(self, statement: Statement):
        self.statement = statement
        self.names: list[str] = []
        self.columns: dict[str, int] = {}
        self._utf8 = statement.text.encode("utf-8")

    def _chars(self, column: int) -> int:
        """``ast`` columns count UTF-8 bytes; carets count characters."""
        return len(self._utf8[:column].decode("utf-8", errors="ignore"))

    def fail(self, node: ast.AST, message: str, hint: str | None = None) -> GradcliError:
        column = self._chars(getattr(node, "col_offset", 0))
        return self.statement.error(message, column, hint)

    def note(self, function: str, column: int) -> None:
        self.columns.setdefault(function, self._chars(column))

    def expression(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return _number_text(node.value)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            function = _OPERATORS.get(type(node.op))
            if function is None:
                raise self.fail(
                    node, f"{describe(node)} is not allowed", "operators are + - * / ** and @"
                )
            left, right = self.expression(node.left), self.expression(node.right)
            self.note(function, self._operator_column(node))
            return f"{function}({left}, {right})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = _constant(node)
            if type(value) in (int, float):
                return _number_text(value)
            inner = self.expression(node.operand)
            if isinstance(node.op, ast.UAdd):
                return inner
            self.note("neg", node.col_offset)
            return f"neg({inner})"
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail(
                node,
                "a list is allowed only as the first argument of stack or cat",
                "write stack([a, b]); give list values with --x or -i",
            )
        raise self.fail(node, f"{describe(node)} is not allowed in an expression", _LANGUAGE_HINT)

    def _operator_column(self, node: ast.BinOp) -> int:
        between = self._utf8[node.left.end_col_offset : node.right.col_offset]
        stripped = between.lstrip(b" )")
        return node.left.end_col_offset + len(between) - len(stripped)

    def name(self, node: ast.Name) -> str:
        name = node.id
        if name.startswith("_"):
            raise self.fail(
                node,
                f"names may not start with '_' ({name!r})",
                "use letters, digits and '_' inside a name, like w_1",
            )
        if F.lookup(name) is not None or name in CONSTRUCTORS:
            raise self.fail(node, f"{name!r} is a function, not a value", f"call it: {name}(...)")
        if name not in CONSTANTS:
            self.names.append(name)
        return name

    def call(self, node: ast.Call) -> str:
        if not isinstance(node.func, ast.Name):
            if isinstance(node.func, ast.Attribute):
                raise self.fail(
                    node.func,
                    "attribute access ('.') is not allowed",
                    f"call functions by name: {node.func.attr}(x), not x.{node.func.attr}()",
                )
            raise self.fail(node, "only named functions can be called", _LANGUAGE_HINT)
        name = node.func.id
        function = F.lookup(name)
        if function is None:
            if name in CONSTRUCTORS:
                raise self.fail(
                    node,
                    f"{name}(...) makes an input: it must be the whole right-hand side",
                    f"write a separate statement, e.g. w = {name}(3)",
                )
            raise self.fail(
                node,
                f"unknown function {name!r}",
                _suggest(name, [*F.FUNCTIONS, *F.ALIASES]) or "see `gradcli functions`",
            )
        self.note(function.name, node.col_offset)
        arguments = self.bind(function, node)
        return f"{function.name}({', '.join(arguments)})"

    def bind(self, function: F.Function, node: ast.Call) -> list[str]:
        """Arguments in signature order as text; literals checked against their kind."""
        params = function.params
        bound: dict[str, ast.AST] = {}
        rest: list[ast.AST] = []
        for i, argument in enumerate(node.args):
            if isinstance(argument, ast.Starred):
                raise self.fail(
                    argument, "'*' unpacking is not allowed", "give the arguments one by one"
                )
            if i < len(params) and params[i].kind != F.SIZES:
                bound[params[i].name] = argument
            elif params and params[-1].kind == F.SIZES:
                rest.append(argument)
            else:
                raise self.fail(
                    argument,
                    f"{function.name} takes at most {len(params)} arguments",
                    f"it is {function.signature()}",
                )
        for keyword in node.keywords:
            known = [p.name for p in params if p.kind != F.SIZES]
            if keyword.arg is None:
                raise self.fail(
                    keyword.value,
                    "'**' unpacking is not allowed",
                    "give keywords one by one, e.g. sum(x, dim=0)",
                )
            if keyword.arg not in known:
                raise self.fail(
                    keyword.value,
                    f"unknown keyword argument {keyword.arg!r} for {function.name}",
                    _suggest(keyword.arg, known) or f"it is {function.signature()}",
                )
            if keyword.arg in bound:
                raise self.fail(keyword.value, f"{keyword.arg!r} is given twice")
            bound[keyword.arg] = keyword.value
        texts = []
        for param in params:
            if param.kind == F.SIZES:
                texts.extend(self.literal(a, F.INT, function) for a in rest)
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
        return texts

    def argument(self, node: ast.AST, param: F.Param, function: F.Function) -> str:
        if param.kind == F.TENSOR:
            return self.expression(node)
        if param.kind == F.TENSORS:
            if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
                raise self.fail(
                    node,
                    f"{function.name} needs a list of tensors",
                    f"write {function.name}([a, b])",
                )
            return f"_list({', '.join(self.expression(e) for e in node.elts)})"
        return self.literal(node, param.kind, function, param.name)

    def literal(self, node: ast.AST, kind: str, function: F.Function, name: str = "size") -> str:
        value = _constant(node)
        ok = {
            F.INT: isinstance(value, int) and not isinstance(value, bool),
            F.OPT_INT: value is None or (isinstance(value, int) and not isinstance(value, bool)),
            F.NUMBER: isinstance(value, (int, float)) and not isinstance(value, bool),
            F.OPT_NUMBER: value is None
            or (isinstance(value, (int, float)) and not isinstance(value, bool)),
            F.BOOL: isinstance(value, bool),
            F.REDUCTION: value in ("mean", "sum", "none"),
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

    def subscript(self, node: ast.Subscript) -> str:
        base = self.expression(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        self.note("getitem", node.value.end_col_offset)
        return f"_index({base}, {', '.join(self.index_item(i) for i in items)})"

    def index_item(self, node: ast.AST) -> str:
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
                "an index must be a whole number, a slice like 1:3, or ...",
                "write x[0], x[1, 2], x[:, 0] or x[-1]",
            )
        if abs(value) > _LARGEST_INT:
            raise self.fail(node, f"the index {value:.3g} is too large", "no array is that long")
        return str(value)


_LANGUAGE_HINT = (
    "expressions use numbers, names, + - * / ** @, parentheses, function calls like mean(z) "
    "and indexing like x[0] or x[:, 1]"
)
_NOT_CONSTANT = object()
_LARGEST_INT = 2**62  # a size, dim or index beyond this fits no array (nor a C integer)


def _constant(node: ast.AST):
    """The value of a literal number, -number, True/False, None or string; else a marker."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool, str, type(None)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _constant(node.operand)
        if type(value) in (int, float):
            return -value
    return _NOT_CONSTANT


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
        return f"_s_{value}"
    if isinstance(value, float) and math.isinf(value):
        # a literal too large for a float, like 1e400: repr gives 'inf', which would be a name
        return "_inf" if value > 0 else "(-_inf)"
    return repr(value)


def check(statement: Statement) -> Checked:
    """Parse one statement with ``ast`` and check every node against the whitelist."""
    try:
        tree = quiet_parse(statement.text, "exec")
    except SyntaxError as exc:
        message, hint = f"syntax error: {exc.msg}", _LANGUAGE_HINT
        if "nested" in exc.msg:
            hint = _SPLIT_HINT
        elif "Exceeds the limit" in exc.msg:  # Python reads at most 4,300 digits
            message = "a whole number of more than 4,300 digits"
            hint = "write it as a float, e.g. 1e5000 (which is inf)"
        raise statement.error(message, max((exc.offset or 1) - 1, 0), hint) from None
    except (RecursionError, MemoryError):  # Python's parser gives up on very deep nesting
        raise statement.error(
            "the expression is nested too deeply to parse", 0, _SPLIT_HINT
        ) from None
    _check_depth(statement, tree)
    body = tree.body
    if len(body) != 1 or not isinstance(body[0], ast.Assign):
        raise statement.error(
            "expected an assignment `name = expression`, found "
            + (describe(body[0]) if body else "nothing"),
            0,
            "write statements like: y = x + 2",
        )
    assign = body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
        raise statement.error(
            "the left-hand side must be a single name", 0, "write statements like: y = x + 2"
        )
    target = assign.targets[0].id
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
    value = assign.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in CONSTRUCTORS
    ):
        text = ast.get_source_segment(statement.text, value)
        return Checked(statement, target, None, text, (), {})
    checker = _Checker(statement)
    expression = checker.expression(value)
    return Checked(statement, target, expression, None, tuple(checker.names), checker.columns)


_SPLIT_HINT = "split it into several statements, e.g. s1 = a + b + c; s2 = s1 + d + e"


def _check_depth(statement: Statement, tree: ast.AST) -> None:
    """Refuse an expression whose operations nest deeper than ``--max-depth``.

    Walks the tree without recursion, so that no depth can overflow the walk itself; the
    checks after this one, and sympy's parser, recurse once per level.
    """
    limit = limits.current().max_depth
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
                    f"{_SPLIT_HINT}; or raise --max-depth (at most {limits.DEPTH_CEILING}, "
                    "where Python's parser, which sympy's runs on, stops)",
                )
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))


def element_of(name: str) -> tuple[str, int] | None:
    """``x12`` -> (``x``, 12): the seed's indexed style."""
    match = _ELEMENT_NAME.match(name)
    return (match.group(1), int(match.group(2))) if match else None
