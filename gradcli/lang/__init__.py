"""The expression language: validate text, parse it with sympy, build a ``ParsedProgram``.

``parse_program`` imports sympy; ``load_program`` goes through the parse cache first.
"""

from .cache import load_program
from .program import Assignment, ParsedProgram


def parse_program(source: str) -> ParsedProgram:
    """Parse ``source`` (no cache)."""
    from .build import parse_program as parse

    return parse(source)


__all__ = ["Assignment", "ParsedProgram", "load_program", "parse_program"]
