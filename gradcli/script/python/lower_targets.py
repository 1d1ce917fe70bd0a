"""Lowering the targets of a script's statements: what stores a value into a name (local,
enclosing or global, as ``scopes.py`` decides), an attribute (``x.grad = None``), an item
(``y[0] = v``, a tensor written as torch writes it), or unpacks it (``a, *rest = values``,
Python's ValueError where the counts differ); and what ``del`` removes. ``Targets`` is a part
of ``lower_statements.Statements``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from ...ops import library as gc
from . import numpy_values, objects, tensors
from .classes import ScriptObject
from .errors import note_span
from .lower_expressions import Expressions, _span
from .operators import iterate
from .runtime import Frame
from .scopes import CLASS, FREE, GLOBAL, LOCAL, Scope

Writer = Callable[[Frame, Any], None]


class Targets:
    """Where a statement stores its values (see the module docstring)."""

    def __init__(self, lines: list[str]):
        self.lines = lines

    def refuse(self, node: ast.AST, message: str, hint: str | None = None) -> Exception:
        return Expressions(self.lines, Scope("module"), self).refuse(node, message, hint)

    def name_writer(self, name: str, scope: Scope) -> Writer:
        where, hops = scope.where(name)
        if scope.kind == "module" or where == GLOBAL:

            def global_(frame: Frame, value: Any) -> None:
                frame.run.globals[name] = value

            return global_
        if where == LOCAL or where == CLASS:

            def local(frame: Frame, value: Any) -> None:
                frame.names[name] = value

            return local
        assert where == FREE

        def free(frame: Frame, value: Any) -> None:
            held = frame
            for _ in range(hops):
                held = held.parent  # type: ignore[assignment]
            held.names[name] = value

        return free

    def target_writer(self, node: ast.expr, scope: Scope, expressions: Expressions) -> Writer:
        """What stores a value into an assignment's target."""
        if isinstance(node, ast.Name):
            return self.name_writer(node.id, scope)
        if isinstance(node, (ast.Tuple, ast.List)):
            return self._unpacker(node, scope, expressions)
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("__"):
                raise self.refuse(node, "gradcli run does not write attributes starting with '__'")
            owner = expressions.lower(node.value)
            attribute = node.attr

            def set_attribute(frame: Frame, value: Any) -> None:
                objects.set_value(frame.run, owner(frame), attribute, value)

            return set_attribute
        if isinstance(node, ast.Subscript):
            owner = expressions.lower(node.value)
            key = expressions.lower(node.slice)

            def set_item(frame: Frame, value: Any) -> None:
                container = owner(frame)
                found = key(frame)
                if isinstance(container, gc.Tensor):
                    tensors.write(frame.run, container, found, value)
                elif type(container) is np.ndarray:  # numpy's, the value's size bounded
                    numpy_values.write(frame.run, container, found, value)
                elif isinstance(container, (list, dict, ScriptObject)):
                    if isinstance(container, dict) and found not in container:
                        from . import limits

                        limits.check_items(len(container) + 1, limits.POINTER, "dict")
                    container[found] = value
                else:
                    raise TypeError(
                        f"'{type(container).__name__}' object does not support item assignment"
                    )

            return set_item
        if isinstance(node, ast.Starred):
            raise self.refuse(node, "starred assignment target must be in a list or tuple")
        raise self.refuse(node, f"gradcli run cannot assign to {type(node).__name__} yet")

    def _unpacker(self, node: ast.Tuple | ast.List, scope: Scope, exprs: Expressions) -> Writer:
        starred = [k for k, e in enumerate(node.elts) if isinstance(e, ast.Starred)]
        if len(starred) > 1:
            raise self.refuse(node, "multiple starred expressions in assignment")
        writers = [
            self.target_writer(e.value if isinstance(e, ast.Starred) else e, scope, exprs)
            for e in node.elts
        ]
        count = len(writers)
        star = starred[0] if starred else None
        line = node.lineno
        source = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        span = _span(node, source)

        def unpack(frame: Frame, value: Any) -> None:
            try:
                spread(frame, value)
            except ValueError as exc:
                note_span(exc, line, span)
                raise

        def spread(frame: Frame, value: Any) -> None:
            items = (
                list(iterate(frame.run, value)) if not isinstance(value, (tuple, list)) else value
            )
            if star is None:
                if len(items) != count:
                    if len(items) > count:
                        raise ValueError(f"too many values to unpack (expected {count})")
                    raise ValueError(
                        f"not enough values to unpack (expected {count}, got {len(items)})"
                    )
                for writer, item in zip(writers, items):
                    writer(frame, item)
                return
            after = count - star - 1
            if len(items) < count - 1:
                raise ValueError(
                    f"not enough values to unpack (expected at least {count - 1}, got {len(items)})"
                )
            for k in range(star):
                writers[k](frame, items[k])
            writers[star](frame, list(items[star : len(items) - after]))
            for k in range(after):
                writers[star + 1 + k](frame, items[len(items) - after + k])

        return unpack

    def _remover(
        self, node: ast.expr, scope: Scope, expressions: Expressions
    ) -> Callable[[Frame], Any]:
        if isinstance(node, ast.Name):
            name = node.id
            where, _ = scope.where(name)

            def remove(frame: Frame) -> None:
                names = (
                    frame.run.globals if where == GLOBAL or scope.kind == "module" else frame.names
                )
                if name not in names:
                    raise NameError(f"name '{name}' is not defined")
                del names[name]

            return remove
        if isinstance(node, ast.Subscript):
            owner, key = expressions.lower(node.value), expressions.lower(node.slice)

            def remove_item(frame: Frame) -> None:
                container = owner(frame)
                if not isinstance(container, (list, dict, ScriptObject)):
                    raise TypeError(
                        f"'{type(container).__name__}' object doesn't support item deletion"
                    )
                del container[key(frame)]

            return remove_item
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("__"):
                raise self.refuse(node, "gradcli run does not delete attributes starting with '__'")
            held, attribute = expressions.lower(node.value), node.attr

            def remove_attribute(frame: Frame) -> None:
                objects.delete_value(frame.run, held(frame), attribute)

            return remove_attribute
        if isinstance(node, (ast.Tuple, ast.List)):
            parts = [self._remover(e, scope, expressions) for e in node.elts]
            return lambda frame: [p(frame) for p in parts] and None
        raise self.refuse(node, "gradcli run deletes names, items and attributes only")

    def lower_Delete(self, node: ast.Delete, scope, expressions, interactive, function):
        removers = [self._remover(t, scope, expressions) for t in node.targets]

        def delete(frame: Frame) -> None:
            for remove in removers:
                remove(frame)

        return delete
