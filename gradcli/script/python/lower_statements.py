"""Lowering a script's statements to closures: ``Statements.module(tree)`` gives the script as
one function of the module's frame.

Each statement becomes a closure that runs it and says how control leaves it (None: on to the
next; ``BREAK``, ``CONTINUE``, ``RETURN``). Around each: the run's line (warnings name it), a
step (``--max-steps``), and, for an exception that leaves it, where (the traceback's frame;
a refusal's line and caret). At the top level of the script (and inside its ``if``, ``for``,
``while``, ``with`` and ``try``, not inside a function), a bare expression shows its value, as
Python's interactive interpreter shows it (each statement compiled in 'single' mode): the
way the tutorials' snippets are read and the corpus's record was made.

Classes are ``lower_classes.py``'s. Refused before anything runs: ``async``, ``match``, an import of
anything but torch's modules and ``math``, ``functools``, ``itertools``, ``operator``,
``collections``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from ...base.errors import GradcliError
from ...ops import library as gc
from . import numpy_values, objects, printing, tensors
from .classes import Class, is_instance
from .errors import SCRIPT_EXCEPTIONS, Place, at_line, engine_refusal, note
from .lower_classes import Classes
from .lower_expressions import BINARY, Closure, Expressions
from .lower_imports import Imports
from .lower_targets import Targets
from .operators import binary, index, iterate, truth
from .runtime import BREAK, CONTINUE, RETURN, Frame, Function, call
from .scopes import Scope, function_scope, module_scope

Statement = Callable[[Frame], Any]
Writer = Callable[[Frame, Any], None]

_NOT_YET = {
    ast.AsyncFunctionDef: "async functions",
    ast.AsyncFor: "async for loops",
    ast.AsyncWith: "async with blocks",
}


class Statements(Targets, Imports, Classes):
    """The lowering of a script's statements (``lines``: its source lines)."""

    def __init__(self, lines: list[str]):
        super().__init__(lines)
        self.qualifiers: list[str] = []  # where the block being lowered is (a qualified name)

    def module(self, tree: ast.Module) -> Statement:
        scope = module_scope(tree.body)
        expressions = Expressions(self.lines, scope, self)
        return self.block(tree.body, scope, expressions, True, "<module>")

    def block(
        self,
        body: list[ast.stmt],
        scope: Scope,
        expressions: Expressions,
        interactive: bool,
        function: str,
    ) -> Statement:
        lowered = [self.statement(s, scope, expressions, interactive, function) for s in body]
        if len(lowered) == 1:
            return lowered[0]

        def run_block(frame: Frame) -> Any:
            for statement in lowered:
                code = statement(frame)
                if code is not None:
                    return code
            return None

        return run_block

    def statement(
        self,
        node: ast.stmt,
        scope: Scope,
        expressions: Expressions,
        interactive: bool,
        function: str,
    ) -> Statement:
        method = getattr(self, f"lower_{type(node).__name__}", None)
        if method is None:
            what = _NOT_YET.get(type(node), f"the statement {type(node).__name__}")
            raise self.refuse(node, f"gradcli run does not take {what} yet")
        inner: Statement = method(node, scope, expressions, interactive, function)
        line = node.lineno
        source = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        target = _assigned_name(node)

        def run_statement(frame: Frame) -> Any:
            run = frame.run
            run.line = line
            run.target = target
            run.steps.step()
            try:
                return inner(frame)
            except GradcliError as error:
                span = getattr(error, "_gradcli_span", None)
                column = span[1][0] if span is not None and span[0] == line else None
                raise at_line(error, line, source, column) from None
            except gc.EngineError as exc:  # torch's exception, or a bound passed (exit 2)
                raise engine_refusal(exc, Place(run.depth, line, function), source) from None
            except Exception as exc:
                note(exc, run.depth, line, function)
                raise

        return run_statement

    # -- the statements
    def lower_Expr(self, node: ast.Expr, scope, expressions, interactive, function) -> Statement:
        value = expressions.lower(node.value)
        if not interactive:

            def evaluate(frame: Frame) -> None:
                value(frame)

            return evaluate

        def echo(frame: Frame) -> None:
            found = value(frame)
            if found is not None:
                run = frame.run
                run.out.write(printing.show(run, found) + "\n")

        return echo

    def lower_Assign(self, node: ast.Assign, scope, expressions, interactive, function):
        value = expressions.lower(node.value)
        writers = [self.target_writer(t, scope, expressions) for t in node.targets]
        if len(writers) == 1:
            writer = writers[0]

            def assign(frame: Frame) -> None:
                writer(frame, value(frame))

            return assign

        def assign_all(frame: Frame) -> None:
            found = value(frame)
            for each in writers:
                each(frame, found)

        return assign_all

    def lower_AnnAssign(self, node: ast.AnnAssign, scope, expressions, interactive, function):
        if node.value is None:
            return lambda frame: None
        value = expressions.lower(node.value)
        writer = self.target_writer(node.target, scope, expressions)
        return lambda frame: writer(frame, value(frame))

    def lower_AugAssign(self, node: ast.AugAssign, scope, expressions, interactive, function):
        symbol = BINARY[type(node.op)]
        operand = expressions.lower(node.value)
        target = node.target
        if isinstance(target, ast.Name):
            read = expressions.name_reader(target.id)
            write = self.name_writer(target.id, scope)

            def update(frame: Frame) -> None:
                write(frame, _updated(frame, read(frame), symbol, operand(frame)))

            return expressions.marked(node, update)  # type: ignore[arg-type]
        if isinstance(target, ast.Subscript):
            owner = expressions.lower(target.value)
            key = expressions.lower(target.slice)

            def update_item(frame: Frame) -> None:
                container, found = owner(frame), key(frame)
                new = _updated(frame, index(frame.run, container, found), symbol, operand(frame))
                if isinstance(container, gc.Tensor):
                    tensors.write(frame.run, container, found, new)
                    return
                else:
                    container[found] = new

            return update_item
        if isinstance(target, ast.Attribute):
            owner = expressions.lower(target.value)
            attribute = target.attr
            if attribute.startswith("__"):
                raise self.refuse(
                    target, "gradcli run does not write attributes starting with '__'"
                )

            def update_attribute(frame: Frame) -> None:
                held = owner(frame)
                run = frame.run
                new = _updated(frame, objects.get(run, held, attribute), symbol, operand(frame))
                objects.set_value(run, held, attribute, new)

            return update_attribute
        raise self.refuse(node, "gradcli run cannot update this target")

    def lower_If(self, node: ast.If, scope, expressions, interactive, function) -> Statement:
        test = expressions.lower(node.test)
        body = self.block(node.body, scope, expressions, interactive, function)
        orelse = (
            self.block(node.orelse, scope, expressions, interactive, function)
            if node.orelse
            else None
        )

        def branch(frame: Frame) -> Any:
            if truth(test(frame)):
                return body(frame)
            if orelse is not None:
                return orelse(frame)
            return None

        return branch

    def lower_While(self, node: ast.While, scope, expressions, interactive, function):
        test = expressions.lower(node.test)
        body = self.block(node.body, scope, expressions, interactive, function)
        orelse = (
            self.block(node.orelse, scope, expressions, interactive, function)
            if node.orelse
            else None
        )

        def loop(frame: Frame) -> Any:
            steps = frame.run.steps
            while truth(test(frame)):
                steps.step()
                code = body(frame)
                if code == BREAK:
                    return None
                if code == RETURN:
                    return RETURN
            if orelse is not None:
                return orelse(frame)
            return None

        return loop

    def lower_For(self, node: ast.For, scope, expressions, interactive, function) -> Statement:
        source = expressions.lower(node.iter)
        target = self.target_writer(node.target, scope, expressions)
        body = self.block(node.body, scope, expressions, interactive, function)
        orelse = (
            self.block(node.orelse, scope, expressions, interactive, function)
            if node.orelse
            else None
        )

        def loop(frame: Frame) -> Any:
            for item in iterate(frame.run, source(frame)):
                target(frame, item)
                code = body(frame)
                if code == BREAK:
                    return None
                if code == RETURN:
                    return RETURN
            if orelse is not None:
                return orelse(frame)
            return None

        return loop

    def lower_Break(self, node, scope, expressions, interactive, function) -> Statement:
        return lambda frame: BREAK

    def lower_Continue(self, node, scope, expressions, interactive, function) -> Statement:
        return lambda frame: CONTINUE

    def lower_Pass(self, node, scope, expressions, interactive, function) -> Statement:
        return lambda frame: None

    def lower_Global(self, node, scope, expressions, interactive, function) -> Statement:
        return lambda frame: None

    lower_Nonlocal = lower_Global

    def lower_Return(self, node: ast.Return, scope, expressions, interactive, function):
        if scope.kind in ("module", "class"):
            raise self.refuse(node, "'return' outside function")
        value = None if node.value is None else expressions.lower(node.value)

        def give(frame: Frame) -> int:
            frame.result = None if value is None else value(frame)
            return RETURN

        return give

    def lower_FunctionDef(self, node: ast.FunctionDef, scope, expressions, interactive, function):
        inner_scope = function_scope(node, scope)
        inner = Expressions(self.lines, inner_scope, self)
        self.qualifiers.extend((node.name, "<locals>"))
        try:
            body = self.block(node.body, inner_scope, inner, False, node.name)
        finally:
            del self.qualifiers[-2:]
        doc = ast.get_docstring(node)

        def run_body(frame: Frame) -> Any:
            return frame.result if body(frame) == RETURN else None

        parameters = expressions.parameters(node.args)
        decorators = [expressions.lower(d) for d in node.decorator_list]
        store = self.name_writer(node.name, scope)
        name = node.name
        qualname = ".".join([*self.qualifiers, name])

        def define(frame: Frame) -> None:
            applied = [d(frame) for d in decorators]
            made: Any = Function(name, parameters(frame), run_body, frame, doc)
            made.qualname = qualname
            for decorator in reversed(applied):
                made = call(decorator, (made,), {})
            store(frame, made)

        return define

    def lower_Assert(self, node: ast.Assert, scope, expressions, interactive, function):
        test = expressions.lower(node.test)
        message = None if node.msg is None else expressions.lower(node.msg)

        def check(frame: Frame) -> None:
            if not truth(test(frame)):
                if message is None:
                    raise AssertionError
                raise AssertionError(message(frame))

        return check

    def lower_With(self, node: ast.With, scope, expressions, interactive, function):
        managers = [
            (
                expressions.lower(item.context_expr),
                None
                if item.optional_vars is None
                else self.target_writer(item.optional_vars, scope, expressions),
            )
            for item in node.items
        ]
        body = self.block(node.body, scope, expressions, interactive, function)

        def within(frame: Frame, k: int) -> Any:
            if k == len(managers):
                return body(frame)
            value, target = managers[k]
            manager = value(frame)
            enter = getattr(type(manager), "enter", None)
            if enter is None:
                raise GradcliError(
                    f"gradcli run takes with blocks of torch's grad modes "
                    f"(no_grad, enable_grad, set_grad_enabled, inference_mode) and of "
                    f"torch.autograd.graph's hooks only, not "
                    f"{printing.show(frame.run, manager)[:60]}"
                )
            manager.enter()
            try:
                if target is not None:
                    target(frame, None)
                return within(frame, k + 1)
            finally:
                manager.exit()

        return lambda frame: within(frame, 0)

    def lower_Try(self, node: ast.Try, scope, expressions, interactive, function):
        body = self.block(node.body, scope, expressions, interactive, function)
        handlers = []
        for handler in node.handlers:
            kinds = None if handler.type is None else expressions.lower(handler.type)
            name = None if handler.name is None else self.name_writer(handler.name, scope)
            lowered = self.block(handler.body, scope, expressions, interactive, function)
            handlers.append((kinds, name, handler.name, lowered))
        orelse = (
            self.block(node.orelse, scope, expressions, interactive, function)
            if node.orelse
            else None
        )
        final = (
            self.block(node.finalbody, scope, expressions, interactive, function)
            if node.finalbody
            else None
        )

        def handle(frame: Frame) -> Any:
            try:
                code = body(frame)
            except GradcliError:
                raise
            except Exception as exc:
                if not isinstance(exc, SCRIPT_EXCEPTIONS):
                    raise
                run = frame.run
                for kinds, store, name, lowered in handlers:
                    if kinds is None or _matches(exc, kinds(frame)):
                        if store is not None:
                            store(frame, exc)
                        run.handling.append(exc)
                        try:
                            return lowered(frame)
                        finally:
                            run.handling.pop()
                            if name is not None:
                                (run.globals if scope.kind == "module" else frame.names).pop(
                                    name, None
                                )
                raise
            if orelse is not None:
                return orelse(frame)
            return code

        if final is None:
            return handle

        def handle_finally(frame: Frame) -> Any:
            try:
                return handle(frame)
            finally:
                final(frame)

        return handle_finally

    def lower_Raise(self, node: ast.Raise, scope, expressions, interactive, function):
        value = None if node.exc is None else expressions.lower(node.exc)

        def throw(frame: Frame) -> None:
            if value is None:
                handling = frame.run.handling
                if not handling:
                    raise RuntimeError("No active exception to reraise")
                raise handling[-1]
            found = value(frame)
            if isinstance(found, type) and found in SCRIPT_EXCEPTIONS:
                raise found()
            if isinstance(found, Class) and found.is_exception():  # raise Stop
                found = call(found, (), {})
            if isinstance(found, SCRIPT_EXCEPTIONS):
                raise found
            raise TypeError("exceptions must derive from BaseException")

        return throw


def _assigned_name(node: ast.stmt) -> str | None:
    """The name a statement assigns, when it is one name (its random numbers' generator)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Name):
            return target.id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _matches(exc: BaseException, kinds: Any) -> bool:
    listed = kinds if isinstance(kinds, tuple) else (kinds,)
    for kind in listed:
        if isinstance(kind, Class) and kind.is_exception():  # a script's exception class
            continue
        if not (isinstance(kind, type) and kind in SCRIPT_EXCEPTIONS):
            raise TypeError(
                "catching classes that do not inherit from BaseException is not allowed"
            )
    return any(
        is_instance(exc, kind) if isinstance(kind, Class) else isinstance(exc, kind)
        for kind in listed
    )


def _updated(frame: Frame, current: Any, symbol: str, operand: Any) -> Any:
    """``current symbol= operand``: a tensor changes in place, as torch's does."""
    if isinstance(current, gc.Tensor) and symbol in ("+", "-", "*", "/", "**"):
        return tensors.in_place(frame.run, current, symbol, operand)
    if isinstance(current, np.ndarray):
        return numpy_values.in_place(frame.run, current, symbol, operand)
    if isinstance(current, list) and symbol == "+":
        extra = list(iterate(frame.run, operand))
        from . import limits

        limits.check_items(len(current) + len(extra), limits.POINTER, "list")
        current.extend(extra)
        return current
    return binary(frame.run, symbol, current, operand)


__all__ = ["Statements", "Closure"]
