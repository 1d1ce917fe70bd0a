"""Text to ``ParsedProgram``: split, check against the whitelist, parse with sympy, translate."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from ..base import bounds, collector
from ..base.errors import GradcliError
from .ir import rename, version
from .program import Assignment, ParsedProgram
from .pytorch import FLOATING
from .validate import check_all, split_statements
from .values import LIKE


def parse_program(source: str) -> ParsedProgram:
    """Parse a whole program; raises ``GradcliError`` naming the statement at fault."""
    bounds.check_length(source, "the program")
    assignments = []
    defined: dict[str, int] = {}
    checked_all = [c for s in split_statements(source) for c in _guarded(s, check_all, s)]
    # imports sympy (only for text that passed the checks), hundreds of thousands of objects
    # the collector would scan again and again: paused meanwhile (base/collector.py)
    with collector.paused_for("sympy"):
        from .parse import to_ir, to_sympy

    later: dict[str, int] = {}
    for c in checked_all:
        if c.target is not None and not c.rebinds:
            later.setdefault(c.target, c.statement.number)
    backward = []
    results: dict[str, int] = {}  # the names torch.autograd.grad binds: where
    for checked in checked_all:
        statement = checked.statement
        bounds.tick(f"parsing statement {statement.number} of {len(checked_all)}")
        for name in checked.names:
            if name in results:
                raise statement.error(
                    f"{name!r} holds what torch.autograd.grad returned (statement "
                    f"{results[name]}), which a program takes only as its answer",
                    _column(statement, name),
                    "gradcli run SCRIPT computes with it (second derivatives with "
                    "create_graph=True)",
                )
            if name not in defined and later.get(name, 0) >= statement.number:
                raise statement.error(
                    f"{name!r} is used before it is assigned (in statement {later[name]})",
                    _column(statement, name),
                    "assign a name before using it, or rename the input",
                )
        if checked.backward is not None:
            backward.append(checked.backward)
        results.update(dict.fromkeys(checked.results, statement.number))
        if checked.target is not None:
            results.pop(checked.target, None)
        if checked.target is None:  # a PyTorch statement that assigns nothing
            continue
        if checked.rebinds and checked.target not in defined:
            raise statement.error(
                f"{checked.target!r} is written into before it is assigned",
                0,
                f"make it first, e.g. {checked.target} = torch.zeros(3)",
            )
        if checked.target in defined and not checked.rebinds:
            raise statement.error(
                f"{checked.target!r} is already assigned in statement {defined[checked.target]}",
                0,
                "give each assignment its own name",
            )
        defined.setdefault(checked.target, statement.number)
        constructor = checked.constructor
        if checked.dtype is not None and checked.dtype not in FLOATING and constructor:
            # an integer or boolean input: its dtype is part of its constructor's text
            constructor = f"{constructor[:-1]}{', ' if constructor[-2] != '(' else ''}"
            constructor += f"dtype={checked.dtype!r})"
        elif checked.dtype is not None:
            raise statement.error(
                "dtype= is not supported on an input yet",
                statement.text.find("dtype="),
                "gradcli runs in float64; give --dtype float32 for the whole run "
                "(gradcli run takes dtype=)",
            )
        if constructor is not None:
            _check_like(statement, constructor)
            assignments.append(Assignment(checked.target, statement, constructor=constructor))
        else:
            for made in checked.made:  # x + torch.eye(2): a constant, made first
                _check_like(statement, made.constructor)
                if made.dtype is not None:
                    raise _no_dtype(statement)
                assignments.append(Assignment(made.name, statement, constructor=made.constructor))
            ir = _guarded(statement, lambda c: to_ir(to_sympy(c)), checked)
            assignments.append(Assignment(checked.target, statement, ir, None, checked.columns))
    if not assignments:  # only imports, backward calls and prints
        last = checked_all[-1].statement
        raise last.error(
            "the program assigns nothing", 0, "write statements like: y = x + 2; out = mean(y)"
        )
    program = ParsedProgram(source, _versions(assignments), tuple(backward))
    _check_vectors_used_after_their_elements(program, checked_all)
    return program


def _no_dtype(statement) -> GradcliError:
    return statement.error(
        "dtype= is not supported on an input yet",
        statement.text.find("dtype="),
        "gradcli runs in float64; give --dtype float32 for the whole run "
        "(gradcli run takes dtype=)",
    )


def _check_like(statement, constructor: str) -> None:
    """A program's inputs are made before it runs: ``torch.zeros_like(x)``, shaped as a
    tensor the program computes, is for ``gradcli run``."""
    name = constructor.split("(", 1)[0]
    if name in LIKE:
        raise statement.error(
            f"torch.{name} is taken by gradcli run; a program makes its constants before it "
            "runs, so it writes the shape out",
            0,
            f"write torch.{LIKE[name]}(...) with the shape, or run the script with gradcli run",
        )


def _versions(assignments: list[Assignment]) -> tuple[Assignment, ...]:
    """Each value a name takes, under a name of its own: where PyTorch code writes into
    ``y`` (``y[0] = ...``), the values before the last are ``y#0``, ``y#1``, ..., and each
    statement reads the value its name had there."""
    bindings = Counter(a.target for a in assignments)
    seen: Counter[str] = Counter()
    current: dict[str, str] = {}
    renamed = []
    for a in assignments:
        expression = None if a.ir is None else rename(a.ir, current)
        number = seen[a.target]
        seen[a.target] += 1
        target = a.target if number == bindings[a.target] - 1 else version(a.target, number)
        current[a.target] = target
        renamed.append(replace(a, target=target, ir=expression))
    return tuple(renamed)


def _guarded(statement, step, argument):
    """``step(argument)``, with the limits of Python's parser reported as the user's error."""
    try:
        return step(argument)
    except (SyntaxError, RecursionError, MemoryError):
        raise statement.error(
            "the expression is nested too deeply or is too long to parse",
            hint="split it into several statements, e.g. s1 = a + b + c; s2 = s1 + d + e",
        ) from None


def _column(statement, name: str) -> int | None:
    """The column of the first use of ``name`` (a whole word) right of the ``=``."""
    start = statement.text.index("=") + 1
    match = re.compile(rf"\b{re.escape(name)}\b").search(statement.text, start)
    return match.start() if match else None


def _check_vectors_used_after_their_elements(program: ParsedProgram, checked_all) -> None:
    """A vector built from elements (``y0 = ...; y1 = ...``) is used only after all of them."""
    groups = program.groups()
    if not groups:
        return
    numbers = {c.target: c.statement.number for c in checked_all if c.target is not None}
    for checked in checked_all:
        statement = checked.statement
        for name in checked.names:
            if name not in groups:
                continue
            late = [e for e in groups[name] if e is not None and numbers[e] >= statement.number]
            if late:
                raise statement.error(
                    f"{name!r} is used before all its elements are assigned "
                    f"({late[0]} is assigned in statement {numbers[late[0]]})",
                    _column(statement, name),
                    f"use {name} after the last of its elements",
                )
