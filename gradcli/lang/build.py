"""Text to ``Program``: split, check against the whitelist, parse with sympy, translate."""

from __future__ import annotations

from .parse import to_ir, to_sympy
from .program import Assignment, Program
from .validate import check, split_statements


def parse_program(source: str) -> Program:
    """Parse a whole program; raises ``GradcliError`` naming the statement at fault."""
    assignments = []
    defined: dict[str, int] = {}
    checked_all = [check(s) for s in split_statements(source)]
    later = {c.target: c.statement.number for c in checked_all}
    for checked in checked_all:
        statement = checked.statement
        for name in checked.names:
            if name not in defined and later.get(name, 0) >= statement.number:
                column = statement.text.find(name, statement.text.index("=") + 1)
                raise statement.error(
                    f"{name!r} is used before it is assigned (in statement {later[name]})",
                    column if column >= 0 else None,
                    "assign a name before using it, or rename the input",
                )
        if checked.target in defined:
            raise statement.error(
                f"{checked.target!r} is already assigned in statement {defined[checked.target]}",
                0,
                "give each assignment its own name",
            )
        defined[checked.target] = statement.number
        if checked.constructor is not None:
            assignments.append(
                Assignment(checked.target, statement, constructor=checked.constructor)
            )
        else:
            ir = to_ir(to_sympy(checked))
            assignments.append(
                Assignment(checked.target, statement, ir, None, checked.expression, checked.columns)
            )
    return Program(source, tuple(assignments))
