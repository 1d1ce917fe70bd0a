"""Small functions of PyTorch scripts, inlined where they are called (never run as Python).

``def f(x, w): h = x * w; return h.sum()`` (simple assignments, then one ``return``) and
``f = lambda x: x ** 2`` define a function; a later ``f(a, b)`` in any expression is replaced,
in the statement's syntax tree, by the function's result with its parameters replaced by the
argument expressions, each local name by its expression. The statement then goes through the
whitelist as if it had been written out. Names the function does not bind are the script's,
read where it is called, as Python reads a global when the function runs. A function that
calls itself, directly or not, is stopped at ``MAX_DEPTH`` nested calls with a clear error.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from .validate import Statement, reserved

MAX_DEPTH = 32  # nested calls of the script's functions in one statement
MAX_NODES = 20_000  # syntax nodes of one inlined call


@dataclass(frozen=True)
class Function:
    """A function of the script: its parameters, its local assignments in order, and the
    expression it returns (nodes of the definition's own tree)."""

    name: str
    parameters: tuple[str, ...]
    local: tuple[tuple[str, ast.expr], ...]
    result: ast.expr


class Functions:
    """The functions a script has defined so far, and the inlining of their calls."""

    def __init__(self) -> None:
        self.defined: dict[str, Function] = {}

    def define(self, node: ast.stmt, statement: Statement) -> bool:
        """Take ``node`` as a definition (``def`` or ``f = lambda ...``), or return False."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = _from_def(node, statement)
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Lambda)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            parameters = _parameters(node.value.args, statement, node.targets[0].id)
            function = Function(node.targets[0].id, parameters, (), node.value.body)
        else:
            self.defined.pop(_assigned(node) or "", None)  # f = ... is no longer a function
            return False
        if reserved(function.name) or function.name.startswith("_"):
            raise statement.error(f"{function.name!r} cannot be a function's name here", 0)
        self.defined[function.name] = function
        return True

    def expand(self, node: ast.stmt, statement: Statement) -> ast.stmt:
        """``node`` with every call of a defined function inlined (``node`` itself when it
        calls none)."""
        if not self.defined or not any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in self.defined
            for n in ast.walk(node)
        ):
            return node
        return _Inliner(self.defined, statement, 0).visit(copy.deepcopy(node))

    def given(self, node: ast.expr, statement: Statement) -> Function:
        """The function ``node`` hands on (``jacobian(f, x)``): a defined function's name, or
        a lambda."""
        if isinstance(node, ast.Lambda):
            return Function("<lambda>", _parameters(node.args, statement, "lambda"), (), node.body)
        if isinstance(node, ast.Name) and node.id in self.defined:
            return self.defined[node.id]
        raise statement.error(
            "the function handed on must be one the script defines (def f(x): ...), or a lambda",
            node.col_offset,
            "write def f(x): return ..., then jacobian(f, x)",
        )

    def body(self, function: Function, statement: Statement) -> ast.expr:
        """What ``function`` returns, over its parameters: its local names replaced by their
        expressions, the calls of other functions inlined."""
        bound: dict[str, ast.expr] = {}
        for name, value in function.local:
            bound[name] = _Bind(bound).visit(copy.deepcopy(value))
        result = _Bind(bound).visit(copy.deepcopy(function.result))
        expanded = self.expand(ast.Expr(result), statement)
        assert isinstance(expanded, ast.Expr)  # an expression statement stays one
        return expanded.value


def _assigned(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    return None


def _from_def(node: ast.FunctionDef | ast.AsyncFunctionDef, statement: Statement) -> Function:
    if isinstance(node, ast.AsyncFunctionDef) or node.decorator_list or node.returns:
        raise statement.error(
            f"gradcli run takes plain functions: def {node.name}(x): ... return ...",
            0,
            "leave out async, decorators and annotations",
        )
    parameters = _parameters(node.args, statement, node.name)
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # a docstring
    local: list[tuple[str, ast.expr]] = []
    hint = "a function is simple assignments (h = x * w), then one return"
    for i, item in enumerate(body):
        last = i == len(body) - 1
        if last and isinstance(item, ast.Return) and item.value is not None:
            return Function(node.name, parameters, tuple(local), item.value)
        name = _assigned(item)
        if name is None or last:
            line = statement.line + item.lineno - node.lineno  # the script's line
            raise statement.error(
                f"{node.name}: gradcli run takes a function that ends with return <expression>"
                if last
                else f"{node.name}: line {line} is not an assignment to a name",
                0,
                hint,
            )
        assert isinstance(item, ast.Assign)  # see _assigned
        local.append((name, item.value))
    raise statement.error(f"{node.name}: the function returns nothing", 0, hint)


def _parameters(arguments: ast.arguments, statement: Statement, name: str) -> tuple[str, ...]:
    if (
        arguments.vararg
        or arguments.kwarg
        or arguments.kwonlyargs
        or arguments.defaults
        or arguments.posonlyargs
    ):
        raise statement.error(
            f"{name}: gradcli run takes a function's parameters as plain names",
            0,
            "write def f(x, w): ..., without defaults, *args or **kwargs",
        )
    return tuple(a.arg for a in arguments.args)


class _Inliner(ast.NodeTransformer):
    """Replaces each call of a defined function by its result, ``depth`` calls deep."""

    def __init__(self, defined: dict[str, Function], statement: Statement, depth: int):
        self.defined, self.statement, self.depth = defined, statement, depth

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)  # the arguments first: f(g(x))
        if not isinstance(node.func, ast.Name) or node.func.id not in self.defined:
            return node
        function = self.defined[node.func.id]
        if self.depth >= MAX_DEPTH:
            raise self.statement.error(
                f"{function.name} calls functions more than {MAX_DEPTH} deep (does it call "
                "itself?)",
                0,
                "gradcli inlines each call: a function may not call itself",
            )
        bound = self.arguments(function, node)
        for name, value in function.local:
            bound[name] = self.inlined(value, bound)
        result = self.inlined(function.result, bound)
        if sum(1 for _ in ast.walk(result)) > MAX_NODES:
            raise self.statement.error(
                f"{function.name}: inlined, the expression grows beyond {MAX_NODES} parts",
                0,
                "call the functions on names: h = g(x); y = f(h)",
            )
        return ast.copy_location(result, node)

    def arguments(self, function: Function, call: ast.Call) -> dict[str, ast.expr]:
        """Each parameter's argument expression; an error like Python's for a mismatch."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            raise self.statement.error(f"{function.name}: * and ** arguments are not taken", 0)
        bound = dict(zip(function.parameters, call.args))
        for keyword in call.keywords:
            if keyword.arg not in function.parameters or keyword.arg in bound:
                raise self.statement.error(
                    f"{function.name}() got an unexpected or repeated argument {keyword.arg!r}",
                    0,
                    f"it takes {', '.join(function.parameters) or 'no arguments'}",
                )
            bound[str(keyword.arg)] = keyword.value
        if len(call.args) > len(function.parameters) or len(bound) != len(function.parameters):
            raise self.statement.error(
                f"{function.name}() takes {len(function.parameters)} arguments "
                f"({', '.join(function.parameters)}), and was given "
                f"{len(call.args) + len(call.keywords)}",
                0,
            )
        return bound

    def inlined(self, expression: ast.expr, bound: dict[str, ast.expr]) -> ast.expr:
        """``expression`` of the function's body with its names bound, its calls inlined."""
        replaced = _Bind(bound).visit(copy.deepcopy(expression))
        done = _Inliner(self.defined, self.statement, self.depth + 1).visit(replaced)
        assert isinstance(done, ast.expr)  # an expression's nodes become expressions
        return done


class _Bind(ast.NodeTransformer):
    """Replaces each name of ``bound`` by (a copy of) its expression."""

    def __init__(self, bound: dict[str, ast.expr]):
        self.bound = bound

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.bound:
            return copy.deepcopy(self.bound[node.id])
        return node
