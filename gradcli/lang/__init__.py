"""The expression language: validate text, parse it with sympy, build a ``Program``."""

from .build import parse_program
from .program import Assignment, Program

__all__ = ["Assignment", "Program", "parse_program"]
