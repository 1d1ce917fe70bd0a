"""Lowering a script's comprehensions and generator expressions (``[f(x) for x in xs if
p(x)]``, ``{k: v for ...}``, ``(x for x in xs)``): each is a function of its own, its ``for``
names local to it, its first iterable evaluated where it is written; every item a step of the
run, a list or set it makes bounded as it grows. ``Comprehensions`` is a part of
``lower_expressions.Expressions``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from . import limits
from .operators import iterate, truth
from .runtime import Frame
from .scopes import comprehension_scope

Closure = Callable[[Frame], Any]


class Comprehensions:
    """The comprehensions of ``Expressions`` (which gives ``lower``, ``lines``, ``scope``,
    ``statements`` and ``refuse``)."""

    lines: list[str]
    scope: Any
    statements: Any

    def lower(self, node: Any) -> Any:  # Expressions'
        raise NotImplementedError

    def refuse(self, node: Any, message: str, hint: str | None = None) -> Exception:
        raise NotImplementedError

    def _comprehension(self, node: Any, element: Any) -> Any:
        """The pieces of a comprehension: its first iterable (in this scope), and a function
        that gives its items in its own frame."""
        scope = comprehension_scope(node, self.scope)
        inner = type(self)(self.lines, scope, self.statements)  # type: ignore[call-arg]
        first = self.lower(node.generators[0].iter)
        clauses = []
        for k, generator in enumerate(node.generators):
            if generator.is_async:
                raise self.refuse(node, "gradcli run does not take async comprehensions")
            source = None if k == 0 else inner.lower(generator.iter)
            target = self.statements.target_writer(generator.target, scope, inner)
            conditions = [inner.lower(c) for c in generator.ifs]
            clauses.append((source, target, conditions))
        produce = element(inner)

        def items(frame: Frame, iterable: Any) -> Any:
            own = Frame({}, frame, frame.run)

            def walk(k: int, values: Any) -> Any:
                source, target, conditions = clauses[k]
                for value in iterate(own.run, values):
                    target(own, value)
                    if all(truth(c(own)) for c in conditions):
                        if k + 1 == len(clauses):
                            yield produce(own)
                        else:
                            next_source = clauses[k + 1][0]
                            assert next_source is not None
                            yield from walk(k + 1, next_source(own))

            return walk(0, iterable)

        return first, items

    def lower_ListComp(self, node: ast.ListComp) -> Closure:
        first, items = self._comprehension(node, lambda inner: inner.lower(node.elt))
        return lambda frame: _bounded_list(frame, items(frame, first(frame)))

    def lower_SetComp(self, node: ast.SetComp) -> Closure:
        first, items = self._comprehension(node, lambda inner: inner.lower(node.elt))
        return lambda frame: set(_bounded_list(frame, items(frame, first(frame))))

    def lower_GeneratorExp(self, node: ast.GeneratorExp) -> Closure:
        first, items = self._comprehension(node, lambda inner: inner.lower(node.elt))
        return lambda frame: items(frame, first(frame))

    def lower_DictComp(self, node: ast.DictComp) -> Closure:
        def pair(inner: Any) -> Closure:
            key, value = inner.lower(node.key), inner.lower(node.value)
            return lambda frame: (key(frame), value(frame))

        first, items = self._comprehension(node, pair)
        return lambda frame: dict(_bounded_list(frame, items(frame, first(frame))))


def _bounded_list(frame: Frame, items: Any) -> list[Any]:
    found: list[Any] = []
    limit = 1 << 16
    for item in items:
        found.append(item)
        if len(found) >= limit:
            limits.check_items(len(found), limits.POINTER, "the comprehension")
            limit <<= 1
    return found
