"""The text a ``gradcli run`` script builds, bounded by ``--max-memory`` before it is built.

A script builds text only by printing: ``print``'s values, the ``repr`` of a bare expression,
f-strings (``f"{loss:>12.4f}"``) and ``x.tolist()``. The script's own literals are as long as
its text (``--max-length``); what can outgrow it is a format spec's width or precision
(``f"{x.item():>1500000000}"`` asks for 1.5 GB) and the list of a large tensor. Each is
measured, at most, before Python makes it: that many characters, at the bytes a character
takes in Python's strings, times the copies the text passes through on its way out (the piece,
the joined f-string, ``print``'s line, the bytes written), beside the script's values.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from ..base import bounds
from ..lang.statement import Statement

Place = tuple[Statement, int | None]  # where an error points: a statement, and a column

# The copies of a text on its way out: the piece, the f-string joined, print's line, the
# bytes written to stdout
COPIES = 4
# A float's text at most, in any format without a width or precision: 309 digits before
# the point ('f' of 1e308), grouped by 3 (',' or '_'), a sign, a point, an exponent, '%'
FLOAT_TEXT = 430
# What one element of x.tolist() prints as, at most, with its ', ': a float's repr is at
# most 24 characters (-2.2250738585072014e-308), a complex one twice that in parentheses
ELEMENT_TEXT = {"c": 54, "other": 26}
LIST_ITEM = 32  # the bytes of one Python number in a list: its pointer and the object
_NUMBER = re.compile(r"[0-9]+")


def _char_bytes(text: str) -> int:
    """The bytes a character takes in a Python string holding ``text``'s characters."""
    widest = max(map(ord, text), default=0)
    return 1 if widest < 0x100 else 2 if widest < 0x10000 else 4


def _base_length(value: Any) -> int | None:
    """At most how many characters ``format(value, spec)`` makes besides the spec's width
    and precision; None for a value whose format takes no spec (Python's TypeError)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, int):  # bool too; binary with '_' every 4 digits is the longest
        return value.bit_length() * 5 // 4 + 4
    if isinstance(value, float):
        return FLOAT_TEXT
    if isinstance(value, complex):
        return 2 * FLOAT_TEXT
    return None


def _small(spec: str) -> str:
    """``spec`` with every number in it made small, keeping its form (``>1500000000`` reads
    as ``>1``, ``.0f`` stays, ``05`` reads as ``01``): Python parses it as it parses ``spec``,
    and raises the same errors, without making anything large."""

    def shrink(match: re.Match[str]) -> str:
        digits = match.group()
        return digits if digits == "0" else ("0" if digits[0] == "0" else "") + "1"

    return _NUMBER.sub(shrink, spec)


def format_length(value: Any, spec: str) -> int | None:
    """At most how many characters ``format(value, spec)`` makes, or None when Python
    refuses ``spec`` for ``value`` before making anything (an unknown format code, a number
    beyond ``sys.maxsize``, a value that takes no spec): formatting then only raises."""
    base = _base_length(value)
    if base is None:
        return None
    numbers = [m.group() for m in _NUMBER.finditer(spec)]
    if any(len(n) > 19 or int(n) > sys.maxsize for n in numbers):
        return None  # ValueError: Too many decimal digits in format string
    try:
        format(value, _small(spec))
    except (ValueError, TypeError):
        return None
    return base + sum(int(n) for n in numbers) + 8  # a sign, a prefix, a point, '%'


class TextBudget:
    """The text one statement builds, charged before each piece of it is made."""

    def __init__(self, tally: bounds.Tally):
        self.tally = tally  # the script's values, kept beside the text
        self.held = 0  # the bytes of this statement's text so far, with its copies

    def restart(self) -> None:
        """A new statement: its text is new (the last one's was written and freed)."""
        self.held = 0

    def charge(self, at: Place, characters: int, char_bytes: int, what: str, hint: str) -> None:
        """Count ``characters`` more of text; raise ``GradcliError`` (exit 2) at ``at`` (a
        statement and a column) when they take the script past ``--max-memory``."""
        need = characters * char_bytes * COPIES
        values = int(self.tally.held * bounds.FACTOR)
        limit = bounds.budget().max_memory
        if values + self.held + need > limit:
            beside = f", beside the script's {bounds.format_bytes(values)} of values"
            statement, column = at
            raise statement.error(
                f"{what} makes up to {characters:,} characters: {bounds.format_bytes(need)} "
                f"of memory with the copies printing makes{beside if values else ''}; the "
                f"budget is {bounds.format_bytes(limit)} (--max-memory)",
                column,
                hint,
            )
        self.held += need

    def formatted(self, at: Place, value: Any, spec: str) -> None:
        """Charge ``format(value, spec)`` (an f-string's ``{value:spec}``) before it is
        made."""
        length = format_length(value, spec)
        if length is None:
            return
        written = value if isinstance(value, str) else ""
        self.charge(
            at,
            length,
            _char_bytes(spec + written),
            f"formatting with the spec {spec!r}",
            "write a smaller width or precision, or raise --max-memory",
        )

    def listed(self, at: Place, elements: int, complex_: bool) -> None:
        """Charge ``x.tolist()`` of ``elements`` numbers, and its text, before it is made."""
        per = ELEMENT_TEXT["c" if complex_ else "other"]
        self.charge(
            at,
            elements * (per + LIST_ITEM // COPIES),
            1,
            f"tolist() of {elements:,} elements",
            "print a part of it (x[:10].tolist()) or the tensor itself (torch summarizes it), "
            "or raise --max-memory",
        )
