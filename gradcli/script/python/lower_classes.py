"""Lowering a script's ``class`` statements (``classes.py`` is what they make). ``Classes`` is a
part of ``lower_statements.Statements``.

The class body is lowered as a block of its own scope (``scopes.class_scope``); when the
``class`` statement runs, its bases are evaluated, the body runs in a ``ClassFrame`` whose
names become the namespace, the ``Class`` is made and its decorators applied. Refused before
the script runs: ``metaclass=`` and other class keywords, and a special method (or a name
with two leading underscores) that gradcli would not honour (``__getattr__``,
``__init_subclass__``, ...).
"""

from __future__ import annotations

import ast
from typing import Any

from ...base.errors import GradcliError
from .classes import IGNORED, OBJECT, SPECIAL, Class, ClassFrame, as_base, library_base
from .errors import SCRIPT_EXCEPTIONS
from .lower_expressions import Expressions
from .runtime import Frame, call
from .scopes import class_scope


class Classes:
    """The ``class`` statement of ``Statements`` (which gives ``block``, ``name_writer`` and
    ``refuse``)."""

    lines: list[str]
    qualifiers: list[str]  # the qualified name of the block being lowered, as parts

    def lower_ClassDef(self, node: ast.ClassDef, scope, expressions, interactive, function):
        if node.keywords:
            raise self.refuse(  # type: ignore[attr-defined]
                node.keywords[0].value,
                f"gradcli run does not take class keywords ({node.keywords[0].arg}=) yet",
                "write the class with its bases alone: class Net(nn.Module):",
            )
        for base in node.bases:
            if isinstance(base, ast.Starred):
                raise self.refuse(base, "gradcli run takes the bases of a class by name")  # type: ignore[attr-defined]
        for statement in node.body:
            for name, where in _defined(statement):
                if name.startswith("__") and name not in SPECIAL and name not in IGNORED:
                    raise self.refuse(  # type: ignore[attr-defined]
                        where,
                        f"gradcli run does not honour {name} in a class",
                        "a class of a script may define __init__, __call__, __repr__, "
                        "__len__, __getitem__, __iter__, __eq__ and the arithmetic ones",
                    )
        qualname = ".".join([*self.qualifiers, node.name])
        inner_scope = class_scope(node, scope)
        inner = Expressions(self.lines, inner_scope, self)
        self.qualifiers.append(node.name)
        try:
            body = self.block(node.body, inner_scope, inner, False, node.name)  # type: ignore[attr-defined]
        finally:
            self.qualifiers.pop()
        bases = [expressions.lower(b) for b in node.bases]
        decorators = [expressions.lower(d) for d in node.decorator_list]
        store = self.name_writer(node.name, scope)  # type: ignore[attr-defined]
        name = node.name

        def define(frame: Frame) -> None:
            run = frame.run
            applied = [d(frame) for d in decorators]
            found = tuple(_base(b(frame), name) for b in bases)
            namespace: dict[str, Any] = {}
            inside = ClassFrame(namespace, frame, run)
            body(inside)
            made: Any = Class(run, name, qualname, found or (OBJECT,), namespace)
            inside.owner = made
            for decorator in reversed(applied):
                made = call(decorator, (made,), {})
            store(frame, made)

        return define


def _base(value: Any, name: str) -> Any:
    """A base of a class as the script gave it: a script class, ``object``, or one of the
    library's classes."""
    if isinstance(value, Class):
        return value
    if getattr(value, "kind", None) is object:  # the builtin object
        return OBJECT
    library = as_base(value)  # torch.nn.Module, torch.autograd.Function, a layer
    if library is not None:
        return library
    if isinstance(value, type) and value in SCRIPT_EXCEPTIONS:  # class Stop(Exception)
        return library_base(value, value.__name__)
    from .runtime import type_name

    shown = repr(value) if type_name(value) == "type" else f"a {type_name(value)}"
    raise GradcliError(
        f"gradcli run does not take {shown} as a base of class {name} yet",
        hint="a class of a script derives from the script's classes, object, "
        "torch.nn.Module, torch.autograd.Function or an exception",
    )


def _defined(statement: ast.stmt) -> list[tuple[str, ast.AST]]:
    """The names a statement of a class body defines directly (a ``def``, an assignment)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(statement.name, statement)]
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    return [(n.id, n) for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
