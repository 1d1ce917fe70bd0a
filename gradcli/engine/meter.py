"""A run's meter: every value the engine makes while it is on counted against the run's memory
tally (``--max-memory``) for as long as the value lives.

Why here: whatever a script reaches in the engine (an operation, a backward pass, the
transforms of ``torch.func``, nested ``jacfwd(jacfwd(f))``, a ``vmap`` run slice by slice)
makes its values through the primitives' ``apply``, which checks each value against the
engine's room before allocating it (``sizes.py``). That check alone bounds one value, not
their sum: a transform that keeps thousands of values below the room each (the graph of a
Jacobian's every column) grew without bound. With the meter on, ``apply`` also tells the
meter of each value it made (``sizes.METER``, one test on the path ``apply`` takes anyway for
tracers and forward mode); the meter holds its bytes in the tally until the value is freed,
which shrinks the room the next value is checked against (worked out again in steps of
1/64 of the budget, ``bounds.SLACK``: not at every operation). So a run that keeps too many
values at once is refused (``SizeError``, exit 2) before the value that would cross its
budget exists, whichever code made them, and one that frees them as it goes is not.

A statement's results stay charged for good, as before (the run keeps them: ``calls.apply``
turns their hold into a charge, ``Tally.keep``); the meter adds what lives inside the calls
a script cannot see into. Views are counted as copies, so the count errs high. Where no
meter is on (the commands, the library called from Python) each value is checked alone, as
before, and ``apply`` pays nothing more: its one test is the ``watching`` it made anyway.

The few values the engine's transforms make outside a primitive (their basis vectors and
zeros) are made by ``zeros``, checked and held the same way.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..base import bounds
from . import sizes
from .sizes import METER, ROOM, stored
from .tensor import Tensor, _Mode


@contextmanager
def metering(tally: bounds.Tally) -> Iterator[bounds.Tally]:
    """Meter the engine's values into ``tally`` (engaged: the room is what it leaves) for
    the length of the ``with``."""

    hold = tally.hold

    def made(value: Tensor) -> None:  # every value of the run: stored(data), inline
        data = value.data
        count = data.size if 0 not in data.strides else stored(data)
        hold(value, count * data.itemsize)

    previous, engaged = METER[0], bounds.engage(tally)
    METER[0] = made
    _Mode.rewatch()  # the one rule of what apply watches for (tensor.py)
    try:
        yield tally
    finally:
        METER[0] = previous
        _Mode.rewatch()
        bounds.engage(engaged)


def metered(value: Tensor) -> Tensor:
    """``value`` (made outside a primitive), told to the meter if one is on."""
    meter = METER[0]
    if meter is not None:
        meter(value)
    return value


def zeros(shape: Sequence[int], dtype: Any, name: str, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros, checked against the room before it is made and metered."""
    return metered(Tensor(sizes.full(shape, 0, dtype, name), requires_grad=requires_grad))


def fits(elements: int) -> bool:
    """Whether ``elements`` more elements fit in the room the run leaves (what a replay of a
    traced pass, which no meter sees, checks before it runs)."""
    if ROOM[0] < 0:
        bounds.keep_room(ROOM)
    return elements <= ROOM[0]


def foresee(what: str, count: int) -> None:
    """Refuse, before any of it is computed, a value of ``count`` elements that a transform
    will make from pieces (a Jacobian's outputs times inputs, vmap's batch times one slice's
    result): the pieces are metered as they are made, but a whole that cannot fit is told at
    once, without the work."""
    sizes.refuse_over(what, count, what=what)
