"""The bounds of a script's run: steps, call depth, and the size of every value Python makes.

A script may loop forever (``while True``), recurse without end, or ask Python for a value
no machine holds (``' ' * 10**10``, ``10**10**10``, ``list(range(10**12))``). Each is
stopped before it runs away, as a ``GradcliError`` (exit 2) naming the limit:

- every statement run and every item a loop, comprehension or builtin takes is a step; a run
  takes at most ``--max-steps`` of them, and checks ``--timeout`` as it goes;
- the script's own calls nest at most ``MAX_CALLS`` deep;
- a string, list, tuple, dict or set is measured before it is made (``check_items``), against
  ``--max-elements`` and ``--max-memory``; an integer before an operation that could make it
  huge (``**``, ``<<``, ``*``), against ``MAX_INT_BITS``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ...base import bounds
from ...base.errors import GradcliError

MAX_STEPS = 20_000_000  # the default of --max-steps
MAX_CALLS = 150  # the script's calls nested in one another (Python's limit is 1,000)
MAX_INT_BITS = 1_000_000  # about 300,000 decimal digits
POINTER = 8  # the bytes of one item of a list or tuple (its pointer)
# the copies a string or list may pass through beside itself (the operands it is made of, a
# join, print's line, the bytes written): what --max-memory must hold
COPIES = 4
_TICK_EVERY = 1024  # steps between two looks at the clock (--timeout)


class Steps:
    """The steps of a run so far, against its limit."""

    def __init__(self, limit: int = MAX_STEPS):
        self.limit = limit
        self.taken = 0

    def step(self) -> None:
        """One more step; an error past the limit, and the deadline checked now and then."""
        self.taken += 1
        if self.taken & (_TICK_EVERY - 1) == 0:
            if self.taken > self.limit:
                raise GradcliError(
                    f"the script ran more than {self.limit:,} steps (statements and loop "
                    "iterations) without ending",
                    hint="a loop that does not end? raise the limit with --max-steps",
                )
            bounds.tick(f"{self.taken:,} steps")

    def ticking(self, items: Iterable[Any]) -> Iterator[Any]:
        """``items``, a step taken for each (so that a builtin that consumes an iterator,
        ``list(range(10**12))``, is bounded as a loop is)."""
        for item in items:
            self.step()
            yield item


def check_items(count: int, item_bytes: int, what: str) -> None:
    """Refuse a value of ``count`` items of ``item_bytes`` bytes before Python makes it."""
    limit = bounds.limits().max_elements
    if count > limit:
        raise GradcliError(
            f"{what} would have {count:,} items; the limit is {limit:,} (--max-elements)",
            hint="make it smaller, or raise --max-elements",
        )
    bounds.check_bytes(count * item_bytes * COPIES, what)


def char_bytes(text: str) -> int:
    """The bytes a character takes in a Python string holding ``text``'s characters."""
    widest = max(map(ord, text), default=0)
    return 1 if widest < 0x100 else 2 if widest < 0x10000 else 4


def check_int_bits(bits: int, what: str) -> None:
    """Refuse an integer of about ``bits`` bits before Python makes it."""
    if bits > MAX_INT_BITS:
        raise GradcliError(
            f"{what} would be an integer of about {bits:,} bits; gradcli run takes at most "
            f"{MAX_INT_BITS:,}",
            hint="use floats (2.0 ** 100) for numbers this large",
        )


def sized(value: Any) -> int | None:
    """The number of items of a string, list, tuple, dict, set or range; None otherwise."""
    if isinstance(value, (str, list, tuple, dict, set, frozenset, range, bytes)):
        return len(value)
    return None


def check_repeat(sequence: Any, times: Any) -> None:
    """``sequence * times`` (a string, list or tuple repeated) within the limits."""
    if isinstance(times, bool) or not isinstance(times, int) or times <= 0:
        return
    count = len(sequence) * times
    per = char_bytes(sequence) if isinstance(sequence, str) else POINTER
    check_items(count, per, f"{type(sequence).__name__} * {times:,}")


def check_concat(left: Any, right: Any) -> None:
    """``left + right`` of two strings, lists or tuples within the limits."""
    count = len(left) + len(right)
    per = char_bytes(left + right[:1]) if isinstance(left, str) else POINTER
    check_items(count, per, f"joining two of {type(left).__name__}")


def check_power(base: int, exponent: int) -> None:
    """``base ** exponent`` of integers within ``MAX_INT_BITS``."""
    if exponent > 0 and abs(base) > 1:
        check_int_bits(exponent * abs(base).bit_length(), f"{base} ** {exponent}")


def check_product(left: int, right: int) -> None:
    check_int_bits(left.bit_length() + right.bit_length(), "the product")


def check_shift(value: int, shift: int) -> None:
    if value and shift > 0:
        check_int_bits(value.bit_length() + shift, f"{value} << {shift}")
