"""Which names of a block are its own, as Python decides it before the block runs.

A name assigned anywhere in a function (a target, a ``for`` variable, a ``def``, an
``import``, an ``except ... as``, a ``with ... as``, a parameter) is local to it for its whole
body, unless the function says ``global`` or ``nonlocal``; a name read but not assigned is
looked up in the enclosing functions, then the module, then the builtins. A comprehension is
a function of its own whose locals are its ``for`` targets. ``Scope`` holds that for one
block; ``Scope.where`` answers, for a name read, where it lives.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

LOCAL, FREE, GLOBAL, CLASS = "local", "free", "global", "class"


@dataclass
class Scope:
    """One block's names: ``module`` (the script itself), a function or a comprehension.

    ``own``: the names local to it; ``declared_global``/``declared_nonlocal``: its
    ``global`` and ``nonlocal`` statements; ``parent``: the scope it is written in."""

    kind: str  # "module", "function", "comprehension" or "class"
    parent: Scope | None = None
    own: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    first: str | None = None  # a function's first positional parameter (super()'s instance)

    def where(self, name: str) -> tuple[str, int]:
        """Where ``name`` lives, read in this scope: (LOCAL, 0), (FREE, hops to the frame
        that holds it), (GLOBAL, 0), or (CLASS, 0) for a name a class body assigns (its
        namespace, then the globals). The functions of a class body do not see its names:
        a class's scope is passed over (its frame counted) as Python passes it over."""
        if self.kind == "module" or name in self.declared_global:
            return GLOBAL, 0
        if name in self.own and name not in self.declared_nonlocal:
            return (CLASS if self.kind == "class" else LOCAL), 0
        hops, scope = 1, self.parent
        while scope is not None and scope.kind != "module":
            if scope.kind == "class":
                hops, scope = hops + 1, scope.parent
                continue
            if name in scope.own and name not in scope.declared_nonlocal:
                if name in scope.declared_global:
                    return GLOBAL, 0
                return FREE, hops
            hops, scope = hops + 1, scope.parent
        return GLOBAL, 0


def function_scope(node: ast.FunctionDef | ast.Lambda, parent: Scope) -> Scope:
    """The scope of a ``def`` or ``lambda``: its parameters and what its body assigns."""
    scope = Scope("function", parent)
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    scope.first = positional[0].arg if positional else None
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        scope.own.add(arg.arg)
    for rest in (args.vararg, args.kwarg):
        if rest is not None:
            scope.own.add(rest.arg)
    body = [node.body] if isinstance(node, ast.Lambda) else node.body
    for statement in body:
        _Assigned(scope).visit(statement)
    scope.own -= scope.declared_global
    return scope


def class_scope(node: ast.ClassDef, parent: Scope) -> Scope:
    """The scope of a class body: the names it assigns (the class's namespace)."""
    scope = Scope("class", parent)
    for statement in node.body:
        _Assigned(scope).visit(statement)
    scope.own -= scope.declared_global
    return scope


def comprehension_scope(node: ast.expr, parent: Scope) -> Scope:
    """The scope of a comprehension: the names its ``for`` clauses bind."""
    scope = Scope("comprehension", parent)
    assert isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
    for generator in node.generators:
        _Assigned(scope).visit(generator.target)
    return scope


def module_scope(body: list[ast.stmt]) -> Scope:
    """The script's own scope (its names are the globals)."""
    scope = Scope("module")
    for statement in body:
        _Assigned(scope).visit(statement)
    return scope


class _Assigned(ast.NodeVisitor):
    """Collects the names a block binds, not descending into nested functions,
    lambdas, classes or comprehensions (their names are their own)."""

    def __init__(self, scope: Scope):
        self.scope = scope

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.scope.own.add(node.id)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.scope.own.add(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.visit(default)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.own.add(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.visit(default)

    def _comprehension(self, node: ast.expr) -> None:
        generators = getattr(node, "generators", [])
        if generators:  # the first iterable is evaluated in the enclosing scope
            self.visit(generators[0].iter)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.scope.own.add(node.target.id)
        self.visit(node.value)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            self.scope.own.add(bound)

    visit_ImportFrom = visit_Import  # type: ignore[assignment]

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.scope.own.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.declared_global.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.declared_nonlocal.update(node.names)
