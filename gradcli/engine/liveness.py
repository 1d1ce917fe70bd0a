"""Liveness of a tape's slots: which steps its outputs need, and which step reads each slot
last (where a replay may let the slot's value go). Steps are given as the slots each reads,
so that the traced tape, a generated function's calls and a batched program share one
reckoning."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import filterfalse
from typing import Any, TypeVar

#: a step of a tape or of a program: a tuple holding the slots it reads and the one it makes
Step = TypeVar("Step", bound=tuple[Any, ...])


def last_reads(reads: Sequence[tuple[int, ...]], keep: set[int]) -> list[tuple[int, ...]]:
    """For each step (the slots it reads, in order), the slots it is the last to read, those
    in ``keep`` aside: what a replay may let go of right after that step."""
    kept = set(keep)
    unkept = kept.__contains__  # read by filterfalse: no comprehension's frame
    last: list[tuple[int, ...]] = []
    for args in reversed(reads):
        last.append(tuple(filterfalse(unkept, dict.fromkeys(args))))
        kept.update(args)
    last.reverse()
    return last


def needed(
    steps: Sequence[Step], outputs: Sequence[int], reads: int = 2, result: int = 4
) -> tuple[list[Step], set[int]]:
    """The steps (each reading the slots ``step[reads]``, making the slot ``step[result]``)
    that some output needs, in order, and the slots the outputs need: the outputs and what
    those steps read."""
    wanted = set(outputs)
    kept = []
    for step in reversed(steps):
        if step[result] in wanted:
            kept.append(step)
            wanted.update(step[reads])
    kept.reverse()
    return kept, wanted


def needed_last(
    steps: Sequence[Step], outputs: Sequence[int], keep: set[int], reads: int = 2, result: int = 4
) -> tuple[list[Step], list[tuple[int, ...]]]:
    """``needed``'s steps, and for each of them ``last_reads``'s slots (``keep`` aside), in
    one pass over the steps from the last."""
    wanted = set(outputs)
    kept = set(keep)
    unkept = kept.__contains__
    found: list[Step] = []
    last: list[tuple[int, ...]] = []
    for step in reversed(steps):
        if step[result] in wanted:
            args = step[reads]
            found.append(step)
            wanted.update(args)
            last.append(tuple(filterfalse(unkept, dict.fromkeys(args))))
            kept.update(args)
    found.reverse()
    last.reverse()
    return found, last
