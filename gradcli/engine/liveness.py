"""Liveness of a tape's slots: which steps its outputs need, and which step reads each slot
last (where a replay may let the slot's value go). Steps are given as the slots each reads,
so that the traced tape, a generated function's calls and a batched program share one
reckoning."""

from __future__ import annotations

from collections.abc import Sequence


def last_reads(reads: Sequence[tuple[int, ...]], keep: set[int]) -> list[tuple[int, ...]]:
    """For each step (the slots it reads, in order), the slots it is the last to read, those
    in ``keep`` aside: what a replay may let go of right after that step."""
    kept = set(keep)
    last: list[tuple[int, ...]] = []
    for args in reversed(reads):
        last.append(tuple([a for a in dict.fromkeys(args) if a not in kept]))
        kept.update(args)
    last.reverse()
    return last


def needed(
    reads: Sequence[tuple[int, ...]], results: Sequence[int], outputs: Sequence[int]
) -> list[int]:
    """The indices, in order, of the steps (each reading ``reads[i]``, making ``results[i]``)
    that some output needs."""
    wanted = set(outputs)
    kept = []
    for index in reversed(range(len(reads))):
        if results[index] in wanted:
            kept.append(index)
            wanted.update(reads[index])
    kept.reverse()
    return kept
