"""Checking program text against a whitelist before anything else reads it.

A program is statements ``name = expression`` separated by ``;`` or newlines, with ``#``
comments. Each statement is parsed by Python's ``ast`` (which only parses, never runs) and
every node is checked: numbers, names, ``+ - * / // % ** @``, unary minus, calls of known functions
with known keywords, indexing and slicing. Anything else (attributes, dunder names, strings,
lambdas, comprehensions, imports) is rejected here, so the text handed on to sympy's parser
is plain arithmetic and calls. The checked statement is re-emitted in that plain form:
operators as calls (``a + b`` as ``add(a, b)``, ``@`` as ``matmul``), ``x[i]`` as
``_index(x, i)``, keywords as positional arguments.

This module splits a program into statements and checks each statement's form (an
assignment, names unpacking several results, ``y[0] = ...``, ``y += e``, PyTorch's
statements); the walk of an expression is ``check_expressions.py`` (numbers, names,
operators, indexing) and ``check_calls.py`` (calls and their arguments).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from keyword import kwlist
from typing import TypeVar

from ..base import bounds
from ..base.errors import GradcliError
from . import functions as F
from . import pytorch, syntax
from .check_calls import ONE_RESULT_HINT, CallChecker
from .check_expressions import (
    CONSTANTS,
    OPERATOR_FUNCTIONS,
    REFUSED,
    SYMBOLS,
    Made,
)
from .statement import Statement, element_of  # noqa: F401 - element_of: for its importers
from .values import CONSTRUCTORS, LIKE, quiet_parse, whole_constructor

T = TypeVar("T")

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


def describe(node: ast.stmt | None, text: str) -> str:
    """A person's name for a statement that is not an assignment, ``text`` as written (None:
    one that Python could not parse)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "an import"
    if isinstance(node, ast.Expr):
        return "an expression with no `name =`"
    if isinstance(node, ast.AugAssign):
        symbol = SYMBOLS[type(node.op)]
        return f"'{symbol}=' (write y2 = y {symbol} x)"
    if isinstance(node, ast.AnnAssign):
        return "an annotation"
    word = _leading_word(text)
    return f"{'an' if word[0] in 'aeiou' else 'a'} '{word}' statement" if word else "a statement"


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
    backward: pytorch.BackwardCall | None = None
    rebinds: bool = False  # y[0] = ...: the target takes a new value, made from its last
    dtype: str | None = None  # a constructor's dtype=torch.float64 ("float64")
    results: tuple[str, ...] = ()  # g, = torch.autograd.grad(...): the names it binds
    made: tuple[Made, ...] = ()  # the constants its constructors make (x + torch.eye(2))


def reserved(name: str) -> bool:
    return name in CONSTANTS or F.lookup(name) is not None or pytorch.is_constructor(name)


def _checked(
    checker: CallChecker, target: str | None, expression: str, rebinds: bool = False
) -> Checked:
    """The statement ``checker`` walked, checked; ``expression`` its text for sympy."""
    return Checked(
        checker.statement,
        target,
        expression,
        None,
        tuple(checker.names),
        checker.columns,
        rebinds=rebinds,
        made=tuple(checker.made),
    )


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
        # zeros_like(x): an operation of the table, computed from x (not an input made first)
        made = None if _an_operation(value) else pytorch.constructor(value, statement.text)
        dtype = None if made is None else pytorch.dtype(value)
        if made is not None and dtype is None and whole_constructor(_call_of(made)):
            dtype = "int64"  # torch.tensor([0, 2]), torch.arange(3): int64, as in torch
        plain = (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and pytorch.is_constructor(value.func.id)
            and not _an_operation(value)
        )
        taken = isinstance(value, ast.Call) and (made is not None or plain)
        source = pytorch.like_source(value) if isinstance(value, ast.Call) and taken else None
    except pytorch.Refused as exc:
        raise exc.error(statement) from None
    read = () if source is None else (source.id,)
    if made is not None:  # x = torch.ones(2, requires_grad=True)
        return Checked(statement, target, None, made, read, {}, dtype=dtype)
    if plain:
        text = ast.get_source_segment(statement.text, value)
        return Checked(statement, target, None, text, read, {})
    checker = CallChecker(statement, grads)
    expression = checker.expression(value)
    return _checked(checker, target, expression)


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
    if not isinstance(value, ast.Call) or not CallChecker(statement).several(value):
        raise statement.error(
            f"only an operation that gives several tensors can be unpacked into {len(names)} names",
            value.col_offset,
            ONE_RESULT_HINT,
        )
    checked = []
    for k, name in enumerate(names):
        checker = CallChecker(statement, grads)
        expression = checker.call(value, pick=k, names=len(names))
        checked.append(_checked(checker, name, expression))
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


def _an_operation(value: ast.expr) -> bool:
    """Whether ``value`` calls a constructor that is also an operation of the table
    (``zeros_like(x)``, ``torch.ones_like(x)``), which a program computes where it stands;
    with ``requires_grad=True`` it makes an input (a leaf), as a constructor does."""
    if not isinstance(value, ast.Call) or any(k.arg == "requires_grad" for k in value.keywords):
        return False
    func = value.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return pytorch.is_constructor(name) and F.lookup(name) is not None


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
    checker = CallChecker(statement, grads)
    base = checker.name(name)
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    written = checker.expression(value)
    checker.note(F.OPERATORS["[]="].name, name.col_offset)
    where = ", ".join(checker.index_item(i) for i in items)  # y[x > 0] = 0: index_put_
    return _checked(checker, base, f"_setitem({base}, {written}, {where})", rebinds=True)


def _pytorch_statement(statement: Statement, node: ast.stmt) -> Checked | None:
    """An import, ``y.backward(v)`` or a ``print`` of PyTorch code, or None (see pytorch.py)."""
    try:
        pytorch.setting(node)
        if pytorch.is_import(node) or pytorch.shows(node) or pytorch.retains(node):
            return Checked(statement, None, None, None, (), {})
        zeroed = pytorch.zero_grad(node)
        if zeroed is not None:  # x.grad.zero_()
            reset = pytorch.BackwardCall(zeroed, None, False, zero_grad=True)
            return Checked(statement, None, None, None, (zeroed,), {}, reset)
        call = pytorch.backward(node)
    except pytorch.Refused as exc:
        raise exc.error(statement) from None
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
    checker = CallChecker(statement, grads)
    base = checker.name(change.target)
    if reserved(base):
        raise statement.error(f"{base!r} cannot be assigned: it is a built-in name", 0)
    if change.symbol is None:  # every element written, as y[...] = 0 writes
        function = F.OPERATORS["[]="].name
        expression = f"_setitem({base}, 0, _ellipsis)"
    else:
        assert change.operand is not None  # an operator's operand
        function = OPERATOR_FUNCTIONS[change.symbol]
        expression = f"{function}({base}, {checker.expression(change.operand)})"
    checker.note(function, change.target.col_offset)
    return _checked(checker, base, expression, rebinds=True)


def _reading(statement: Statement, read: Callable[[ast.stmt], T], node: ast.stmt) -> T:
    """``read(node)`` (a reader of pytorch.py), its refusal as the statement's error."""
    try:
        return read(node)
    except pytorch.Refused as exc:
        raise exc.error(statement) from None


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
        refused = REFUSED.get(type(value))
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
