"""The memory budget and the deadline of one command: ``--max-memory`` and ``--timeout``.

``--max-elements`` bounds one tensor; the budget bounds the whole command. Every value a run
makes is kept until the command ends (for the backward pass, and for the results), so the
bytes of a run are the sum of its values' bytes, times ``FACTOR`` for their gradients in the
backward pass and the temporaries of the operations. Each value is charged before it is
allocated, from its element count (the op table's ``size``, see ``lang/program.py``): a run
that would go past the budget is refused before the value that crosses it exists. Batched
work (``--batch`` chunks, the blocks of a vectorized Jacobian) is cut into pieces that fit.

The deadline is checked between statements, chunks, passes and repetitions, never by
interrupting numpy in the middle of a call: at the limit, ``TimedOut`` says what the command
was doing and how far it got, and the command line exits 124 (as ``timeout(1)`` does).

The budget in force is module state, set for the length of one command by ``using``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import field

import numpy as np

from .errors import GradcliError
from .records import record

ELEMENT_BYTES = 8  # every value is read as float64 first; float32 runs need less
FACTOR = 2.5  # a run's values, their gradients in the backward pass, and temporaries
# the bytes one character of number text (a file, stdin) may take once read: the text, the
# Python numbers JSON or CSV makes of it, the array
TEXT_FACTOR = 16
FALLBACK = 2 * 10**9  # the budget where the available memory cannot be read
TIMED_OUT = 124  # the exit code, as timeout(1)'s
MIN_MEMORY = 10**6

_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "m": 10**6,
    "mb": 10**6,
    "g": 10**9,
    "gb": 10**9,
    "t": 10**12,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*")
SIZE_HINT = "write a size in bytes such as 2GB, 512MB, 1.5GiB or 1e9"


def parse_bytes(text: str, option: str = "--max-memory") -> int:
    """``2GB``, ``512MB``, ``1.5GiB``, ``1e9`` as a number of bytes (KB, MB, GB, TB are powers
    of 1000; KiB, MiB, GiB, TiB of 1024)."""
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise GradcliError(f"{option}: cannot read the size {text!r}", hint=SIZE_HINT)
    count = float(match.group(1)) * _UNITS[unit]
    if not math.isfinite(count) or count < MIN_MEMORY:
        raise GradcliError(
            f"{option} must be at least {format_bytes(MIN_MEMORY)}, got {text!r}", hint=SIZE_HINT
        )
    return int(min(count, 10**18))


def available_memory(meminfo: str = "/proc/meminfo") -> int | None:
    """The bytes the machine can give without swapping (Linux's MemAvailable), else the free
    physical pages; None where neither can be read."""
    try:
        with open(meminfo, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def default_memory() -> int:
    """Half of the memory available now, or ``FALLBACK`` where that cannot be read."""
    available = available_memory()
    return FALLBACK if not available else max(available // 2, MIN_MEMORY)


def format_bytes(count: float) -> str:
    """``1.2 GB``, ``350 MB``, ``12 KB`` (powers of 1000, as --max-memory reads them)."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if count >= size:
            value = count / size
            return f"{value:.1f} {unit}" if value < 100 else f"{value:,.0f} {unit}"
    return f"{int(count)} bytes"


def suggest(count: float) -> str:
    """A round size at least ``count``, to suggest as a new --max-memory."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6)):
        if count >= size:
            return f"{math.ceil(count / size)}{unit}"
    return "1MB"


@record(kw_only=False, eq=True)
class Budget:
    """How much memory a command may take, and when it must stop (None: never)."""

    max_memory: int = field(default_factory=default_memory)
    timeout: float | None = None
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.timeout is not None and not (math.isfinite(self.timeout) and self.timeout > 0):
            raise GradcliError(
                f"--timeout must be a number of seconds above 0, got {self.timeout}",
                hint="e.g. --timeout 60",
            )

    def left(self) -> float | None:
        """Seconds until the deadline (None: no deadline)."""
        if self.timeout is None:
            return None
        return self.timeout - (time.monotonic() - self.started)


_current = Budget()
# The widest element (complex128): ``refresh`` counts the engine's room at this many bytes
WIDEST_BYTES = 16
_engaged: list[Tally | None] = [None]  # the tally of the run whose values the engine makes
_doing = ["running the program"]  # what the command is doing, for the timeout's message


def current() -> Budget:
    """The budget in force."""
    return _current


@contextmanager
def using(budget: Budget) -> Iterator[None]:
    """Put ``budget`` in force for the body of the ``with``."""
    global _current
    previous, _current = _current, budget
    refresh()
    try:
        yield
    finally:
        _current = previous
        refresh()


def refresh() -> None:
    """Work the engine's ``ROOM`` (``room.py``) out again from the limits, the budget
    and the engaged tally in force."""
    from . import limits  # which read this module: imported when first needed
    from .room import ROOM

    room = min(limits.current().max_elements, _current.max_memory // WIDEST_BYTES)
    tally = _engaged[-1]
    if tally is not None:
        room = min(room, max(int(tally.left() // WIDEST_BYTES), 0))
    ROOM[0] = room


def engage(tally: Tally | None) -> Tally | None:
    """Make ``tally`` the one whose run the engine's values belong to (None: none), so that
    each value is checked, before it is allocated, against what the tally leaves; returns the
    one engaged before, to engage again afterwards (a call, not a ``with``: it runs for every
    operation of a program)."""
    previous = _engaged[-1]
    _engaged[-1] = tally
    refresh()
    return previous


def engaged() -> Tally | None:
    """The tally engaged (see ``engage``), or None."""
    return _engaged[-1]


class TimedOut(GradcliError):
    """The deadline of --timeout passed; the command line exits ``TIMED_OUT``."""


@contextmanager
def doing(what: str) -> Iterator[None]:
    """Say, for the length of the ``with``, what the command is doing (a timeout tells it)."""
    _doing.append(what)
    try:
        yield
    finally:
        _doing.pop()


def tick(progress: str = "") -> None:
    """Raise ``TimedOut`` when the deadline has passed. Called between statements, chunks,
    passes and repetitions; ``progress`` says how far the work under way has got."""
    left = _current.left()
    if left is None or left > 0:
        return
    where = f" ({progress})" if progress else ""
    raise TimedOut(
        f"timed out after {_current.timeout:g} s (--timeout) while {_doing[-1]}{where}",
        hint="raise --timeout, or give the command less work",
    )


def seconds_left(default: float) -> float:
    """``default`` seconds, or fewer when the deadline comes first (at least a millisecond:
    a timer of zero would never fire)."""
    left = _current.left()
    return default if left is None else max(min(default, left), 1e-3)


_charging: list[Tally] = []  # the tallies values are charged to as they are checked


@contextmanager
def charging(tally: Tally) -> Iterator[Tally]:
    """Charge every value checked in the body (``limits.check_elements``: the inputs, as
    they are built) to ``tally``."""
    _charging.append(tally)
    try:
        yield tally
    finally:
        _charging.pop()


def check_bytes(count: int, what: str, where: str | None = None) -> None:
    """Raise before allocating ``what`` when its ``count`` bytes alone exceed the budget, or
    take the values being charged (see ``charging``) past it."""
    if _charging:
        _charging[-1].charge(count, what, where)
        return
    _alone(count, what, where)


def _alone(count: int, what: str, where: str | None) -> None:
    limit = _current.max_memory
    if count > limit:
        raise GradcliError(
            f"{what} would need {format_bytes(count)} of memory; the budget is "
            f"{format_bytes(limit)} (--max-memory)",
            where=where,
            hint=f"raise it with --max-memory {suggest(count)}, or make the values smaller",
        )


class Tally:
    """The bytes of one run's values so far, each charged before it is allocated."""

    def __init__(self, held: int = 0):
        self.held = held

    def left(self) -> float:
        """The bytes one more value may take before the run's estimate (its values times
        ``FACTOR``) passes the budget."""
        return _current.max_memory / FACTOR - self.held

    def charge(self, count: int, what: str, where: str | None = None) -> None:
        """Count ``count`` more bytes for ``what``; raise when the run's estimate (its values
        so far, times ``FACTOR``) would exceed the budget."""
        _alone(count, what, where)
        self.held += count
        if self is _engaged[-1]:
            refresh()
        estimate = self.held * FACTOR
        limit = _current.max_memory
        if estimate > limit:
            raise GradcliError(
                f"with {what}, the run would need at least {format_bytes(estimate)} of memory "
                f"(its values reach {format_bytes(self.held)}, kept for the backward pass, "
                f"times {FACTOR:g} for the gradients and temporaries); the budget is "
                f"{format_bytes(limit)} (--max-memory)",
                where=where,
                hint=f"raise it with --max-memory {suggest(estimate)}, or make the values smaller",
            )


def elements_within(per_item: int, factor: float = FACTOR) -> int:
    """How many items of ``per_item`` elements (a point of a batch, a basis vector of a
    Jacobian) fit the budget at once, at least one."""
    return max(1, int(_current.max_memory // max(per_item * ELEMENT_BYTES * factor, 1)))


# The bytes one value takes while it is written as text, at most: JSON and CSV hold every
# value (as Python numbers, then text); a table shows at most 1,000 values of a tensor.
RENDERING_BYTES = {"json": 64, "csv": 256}


def _values_in(thing: object) -> int:
    """How many array elements a result holds, in its fields, dicts, tuples and lists."""
    if isinstance(thing, np.ndarray):
        return int(thing.size)
    if dataclasses.is_dataclass(thing) and not isinstance(thing, type):
        thing = [getattr(thing, f.name) for f in dataclasses.fields(thing)]
    elif isinstance(thing, dict):
        thing = list(thing.values())
    if isinstance(thing, (list, tuple)):
        return sum(_values_in(item) for item in thing)
    return 0


def check_rendering(result: object, fmt: str) -> None:
    """Refuse, before any of it is written, a result whose text in ``fmt`` would take the
    command past its budget."""
    per_value = RENDERING_BYTES.get(fmt)
    if per_value is None:
        return
    count = _values_in(result)
    _alone(count * per_value, f"writing {count:,} values as {fmt.upper()}", None)
