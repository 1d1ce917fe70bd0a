"""The limits that keep any input from eating the machine: sizes, text length, nesting depth.

Each limit has a command-line option (``--max-elements``, ``--max-length``, ``--max-depth``)
and every error that enforces one names the option that raises it. The limits in force are
module state, set for the length of one command by ``using``; everything that allocates or
parses reads them through ``current()``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from . import budget
from .errors import GradcliError
from .records import record

# Python's own parser, which sympy's parser runs on, stops near 200 nested brackets; each
# nested operation becomes one bracket in the text sympy reads, so this is as deep as it goes.
DEPTH_CEILING = 190
LARGEST = 10**15  # a limit beyond any machine's memory, and within a C integer


@record(kw_only=False, eq=True)
class Limits:
    """How large an input may be, and how much text the parser reads."""

    max_elements: int = 50_000_000  # of any tensor: input, intermediate or result
    max_length: int = 100_000  # characters of a program, or of one value's text
    max_depth: int = 100  # operations nested in one another in one expression

    def __post_init__(self) -> None:
        for name, high in (
            ("max_elements", LARGEST),
            ("max_length", LARGEST),
            ("max_depth", DEPTH_CEILING),
        ):
            value = getattr(self, name)
            option = "--" + name.replace("_", "-")
            if not 1 <= value <= high:
                raise GradcliError(
                    f"{option} must be between 1 and {high:,}, got {value}",
                    hint=f"e.g. {option} {getattr(Limits, name)} (the default)",
                )


_current = Limits()


def current() -> Limits:
    """The limits in force."""
    return _current


@contextmanager
def using(limits: Limits) -> Iterator[None]:
    """Put ``limits`` in force for the body of the ``with``."""
    global _current
    previous, _current = _current, limits
    budget.refresh()
    try:
        yield
    finally:
        _current = previous
        budget.refresh()


def check_elements(count: int, what: str, where: str | None = None) -> None:
    """Raise before allocating ``what`` when it would have more elements than allowed."""
    limit = _current.max_elements
    if count > limit:
        if count < 10**12:
            told, hint = f"{count:,}", f"raise it with --max-elements {round_up(count)}, or "
        else:  # more than any machine holds: no point suggesting a limit
            told, hint = f"about 10^{int(count.bit_length() * math.log10(2))}", ""
        raise GradcliError(
            f"{what} would have {told} elements; the limit is {limit:,}",
            where=where,
            hint=hint + "make the values smaller",
        )
    budget.check_bytes(count * budget.ELEMENT_BYTES, what, where)


budget.refresh()


def check_length(text: str | int, what: str, at_least: bool = False) -> None:
    """Raise when ``text`` (or a text of that many characters, or of ``at_least`` that many)
    is longer than the parser is allowed to read."""
    length = text if isinstance(text, int) else len(text)
    limit = _current.max_length
    if length > limit:
        about = "at least " if at_least else ""
        raise GradcliError(
            f"{what} is {about}{length:,} characters long; the limit is {limit:,}",
            hint=f"raise it with --max-length {round_up(length)}; give large values "
            "as files (@x.npy)",
        )


def round_up(count: int) -> int:
    """A round number at least ``count``, to suggest as a new limit."""
    step: int = 10 ** max(len(str(count)) - 2, 0)
    return math.ceil(count / step) * step
