"""The expression language: validate text, parse it with sympy, build a ``Program``.

``parse_program`` imports sympy; ``load_program`` goes through the parse cache first.
"""

from .cache import load_program
from .program import Assignment, Program


def parse_program(source: str) -> Program:
    """Parse ``source`` (no cache)."""
    from .build import parse_program as parse

    return parse(source)


__all__ = ["Assignment", "Program", "load_program", "parse_program"]
