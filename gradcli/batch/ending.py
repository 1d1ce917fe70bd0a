"""How a batch stops before its end or ends badly: Ctrl-C, deferred until the chunk under way
is written whole (``Interrupted``), and check's methods disagreeing at some points
(``Disagreed``); shared by the batch in one process and on a cluster.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

import numpy as np

from .passes import Sections


class Interrupted(Exception):
    """Ctrl-C stopped a batch; ``done`` points had been written (or saved)."""

    def __init__(self, done: int, total: int, out: str | None):
        super().__init__(done)
        self.done, self.total, self.out = done, total, out

    def message(self) -> str:
        where = "" if self.out is None else f" to {self.out}"
        return f"interrupted: wrote {self.done} of {self.total} points{where}"


class Disagreed(Exception):
    """check's methods disagreed at the ``points`` named (the batch ran to its end)."""

    def __init__(self, points: list[int], total: int):
        super().__init__(points)
        self.points, self.total = points, total

    def message(self) -> str:
        shown = ", ".join(map(str, self.points[:10])) + (", ..." if len(self.points) > 10 else "")
        return (
            f"check: the methods disagree at {len(self.points)} of {self.total} points "
            f"({shown}): see check.agree and check.max_error of each"
        )


def disagreeing(first: int, sections: Sections) -> list[int]:
    """The numbers of the points of a chunk (from ``first``) where check's methods disagree."""
    agree = sections.get("check", {}).get("agree")
    return [] if agree is None else (first + np.flatnonzero(~np.asarray(agree))).tolist()


@contextmanager
def deferred_interrupts():
    """Ctrl-C while a chunk is written waits until its last line is out, so the output never
    ends inside a line. A first Ctrl-C lets the chunk under way finish; a second one stops the
    computation at once. Yields a function that tells whether Ctrl-C was pressed."""
    state = {"presses": 0, "writing": False}

    def handler(signum, frame):
        state["presses"] += 1
        if state["presses"] > 1 and not state["writing"]:
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield state  # signals reach the main thread only: nothing to defer
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)
