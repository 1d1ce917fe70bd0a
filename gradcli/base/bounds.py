"""The bounds of one command: how large an input may be (``--max-elements``), how much text
the parser reads (``--max-length``), how deep expressions nest (``--max-depth``), how much
memory the whole command may take (``--max-memory``) and when it must stop (``--timeout``).

``--max-elements`` bounds one tensor; the budget bounds the whole command. Every value a run
makes is kept until the command ends (for the backward pass, and for the results), so the
bytes of a run are the sum of its values' bytes, times ``FACTOR`` for their gradients in the
backward pass and the temporaries of the operations. Each value is charged before it is
allocated, from its element count (the op table's ``size``, see ``lang/program.py``): a run
that would go past the budget is refused before the value that crosses it exists. Batched
work (``--batch`` chunks, the blocks of a vectorized Jacobian) is cut into pieces that fit.
Every error that enforces a bound names the option that raises it.

The deadline is checked between statements, chunks, passes and repetitions, never by
interrupting numpy in the middle of a call: at the limit, ``TimedOut`` says what the command
was doing and how far it got, and the command line exits 124 (as ``timeout(1)`` does).
(``deadline.py`` bounds one call of sympy's, which offers no such points, by a watchdog.)

The ``Limits`` and the ``Budget`` in force are module state, set for the length of one
command by ``using``; everything that allocates, parses or runs long reads them through
``limits()`` and ``budget()``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import field
from typing import Any

import numpy as np

from .errors import GradcliError
from .records import record

# -- sizes, text and depth ------------------------------------------------------------------

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


# -- memory and time ------------------------------------------------------------------------

ELEMENT_BYTES = 8  # every value is read as float64 first; float32 runs need less
FACTOR = 2.5  # a run's values, their gradients in the backward pass, and temporaries
# the bytes one character of number text (a file, stdin) may take once read: the text, the
# Python numbers JSON or CSV makes of it, the array
TEXT_FACTOR = 16
FALLBACK = 2 * 10**9  # the budget where the available memory cannot be read
SLACK = 64  # the values a meter holds move the engine's room in steps of 1/SLACK of the budget
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


# -- the bounds in force --------------------------------------------------------------------

# each kind of bound (``Limits``, ``Budget``) -> the one in force
_in_force: dict[type, Any] = {Limits: Limits(), Budget: Budget()}
# The widest element (complex128): ``refresh`` counts the engine's room at this many bytes
WIDEST_BYTES = 16
_rooms: list[list[int]] = []  # the engine's ROOM (``engine.sizes``), kept up to date
_engaged: list[Tally | None] = [None]  # the tally of the run whose values the engine makes
_doing = ["running the program"]  # what the command is doing, for the timeout's message


def limits() -> Limits:
    """The limits in force."""
    found: Limits = _in_force[Limits]  # (typed so, not by ``cast``: a call less, often made)
    return found


def budget() -> Budget:
    """The budget in force."""
    found: Budget = _in_force[Budget]
    return found


@contextmanager
def using(*bounds: Limits | Budget) -> Iterator[None]:
    """Put ``bounds`` (``Limits``, a ``Budget``, or both) in force for the body of the
    ``with``; the others stay as they are."""
    previous = {type(b): _in_force[type(b)] for b in bounds}
    _in_force.update((type(b), b) for b in bounds)
    refresh()
    try:
        yield
    finally:
        _in_force.update(previous)
        refresh()


def keep_room(room: list[int]) -> None:
    """Keep ``room[0]`` (the engine's ``ROOM``, which ``engine.sizes`` hands over when it
    first needs it: this module imports nothing of the engine) at the most elements a value
    may have without a closer look, from now on."""
    if not any(r is room for r in _rooms):
        _rooms.append(room)
    refresh()


def refresh() -> None:
    """Work the engine's room (see ``keep_room``) out again from the limits, the budget and
    the engaged tally in force: the least of --max-elements, the budget alone and what the
    tally leaves, at the widest element's bytes."""
    memory = _in_force[Budget].max_memory  # read once: it runs twice an operation of a run
    room = min(_in_force[Limits].max_elements, memory // WIDEST_BYTES)
    tally = _engaged[-1]
    if tally is not None:  # what the tally leaves (``Tally.left``, inline)
        room = min(room, max(int((memory / FACTOR - tally.held) // WIDEST_BYTES), 0))
        tally.step = memory / (SLACK * FACTOR)
    for kept in _rooms:
        kept[0] = room


def engage(tally: Tally | None) -> Tally | None:
    """Make ``tally`` the one whose run the engine's values belong to (None: none), so that
    each value is checked, before it is allocated, against what the tally leaves; returns the
    one engaged before, to engage again afterwards (a call, not a ``with``: it runs for every
    operation of a program)."""
    previous = _engaged[-1]
    if tally is previous:  # a run's every call, inside its meter: the room is kept already
        return previous
    _engaged[-1] = tally
    refresh()
    return previous


def engaged() -> Tally | None:
    """The tally engaged (see ``engage``), or None."""
    return _engaged[-1]


# -- the deadline ---------------------------------------------------------------------------


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
    left = budget().left()
    if left is None or left > 0:
        return
    where = f" ({progress})" if progress else ""
    raise TimedOut(
        f"timed out after {budget().timeout:g} s (--timeout) while {_doing[-1]}{where}",
        hint="raise --timeout, or give the command less work",
    )


def seconds_left(default: float) -> float:
    """``default`` seconds, or fewer when the deadline comes first (at least a millisecond:
    a timer of zero would never fire)."""
    left = budget().left()
    return default if left is None else max(min(default, left), 1e-3)


# -- the memory a run's values take ----------------------------------------------------------

_charging: list[Tally] = []  # the tallies values are charged to as they are checked


@contextmanager
def charging(tally: Tally) -> Iterator[Tally]:
    """Charge every value checked in the body (``check_elements``: the inputs, as
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
    limit = budget().max_memory
    if count > limit:
        raise GradcliError(
            f"{what} would need {format_bytes(count)} of memory; the budget is "
            f"{format_bytes(limit)} (--max-memory)",
            where=where,
            hint=f"raise it with --max-memory {suggest(count)}, or make the values smaller",
        )


class _Held(weakref.ref[Any]):
    """A weak reference to a value a tally holds, carrying the value's key in the tally and
    its bytes: one object made a value, all of them calling back the tally's one bound
    ``_release`` (a ``functools.partial`` of the key, made for each, was a second object)."""

    __slots__ = ("key", "count")
    key: int
    count: int


class Tally:
    """The bytes of one run's values so far, each charged before it is allocated: for good
    (``charge``: what the run keeps to its end), or while the value lives (``hold``: what a
    run's meter counts of the engine's values, ``engine/meter.py``)."""

    def __init__(self, held: int = 0):
        self.held = held
        # the values held while they live, by id: a weak reference to each, with its bytes
        self.live: dict[int, _Held] = {}
        self.moved = 0  # the bytes held or released since the engine's room was worked out
        # how far they may move before the room is worked out again (``refresh`` keeps it)
        self.step = budget().max_memory / (SLACK * FACTOR)
        self._gone = self._release  # every hold's callback, bound once

    def hold(self, owner: Any, count: int) -> None:
        """Count ``count`` bytes while ``owner`` lives (it was checked before it was made
        against what the tally left: the engine's room); released when it is freed.

        The engine's room is worked out again once the values held or released since it
        last was come to ``1/SLACK`` of what the budget allows (not at every value: the
        meter counts every operation's), so the budget may be passed by that much at most."""
        key = id(owner)
        live = self.live
        if key in live:
            return
        held = live[key] = _Held(owner, self._gone)
        held.key = key
        held.count = count
        self.held += count
        self._moved(count)

    def _release(self, held: _Held) -> None:
        """``hold``'s end, when the value is freed."""
        key = held.key
        live = self.live
        if live.get(key) is held:
            del live[key]
            self.held -= held.count
            self._moved(held.count)

    def _moved(self, count: int) -> None:
        moved = self.moved + count
        if moved > self.step and self is _engaged[-1]:
            self.moved = 0
            refresh()
        else:
            self.moved = moved

    def keep(self, owner: Any) -> bool:
        """Charge ``owner`` for good if it is held (the run keeps it to its end, as it
        keeps every value a statement makes); whether it was."""
        return self.live.pop(id(owner), None) is not None

    def left(self) -> float:
        """The bytes one more value may take before the run's estimate (its values times
        ``FACTOR``) passes the budget."""
        return budget().max_memory / FACTOR - self.held

    def charge(self, count: int, what: str, where: str | None = None) -> None:
        """Count ``count`` more bytes for ``what``; raise when the run's estimate (its values
        so far, times ``FACTOR``) would exceed the budget."""
        limit = _in_force[Budget].max_memory
        if count > limit:  # ``_alone``'s refusal
            _alone(count, what, where)
        self.held += count
        if self is _engaged[-1]:
            refresh()
        estimate = self.held * FACTOR
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
    return max(1, int(budget().max_memory // max(per_item * ELEMENT_BYTES * factor, 1)))


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


# -- the checks of sizes and text ----------------------------------------------------------


def check_elements(count: int, what: str, where: str | None = None) -> None:
    """Raise before allocating ``what`` when it would have more elements than allowed."""
    limit = limits().max_elements
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
    check_bytes(count * ELEMENT_BYTES, what, where)


def check_length(text: str | int, what: str, at_least: bool = False) -> None:
    """Raise when ``text`` (or a text of that many characters, or of ``at_least`` that many)
    is longer than the parser is allowed to read."""
    length = text if isinstance(text, int) else len(text)
    limit = limits().max_length
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
