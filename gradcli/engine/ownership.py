"""Whether an array is held by one owner alone, told by reference counts: what lets the reverse
pass make the array a rule computed a leaf's gradient, instead of a copy, as torch's
AccumulateGrad steals a gradient no one else holds."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np


class Ownership:
    """``owned(holder)``: whether ``holder`` (an object with the array in ``.data``) and its
    array have no more references than a probe held the same way had: the array owns its
    memory, is writeable, and nothing else (a view, a second holder, a caller's name) refers
    to it or to its holder. The counts depend on the interpreter and on the calls that reach
    ``owned``, so they are measured through those very calls (``calibrate``), not assumed;
    until then nothing is owned."""

    __slots__ = ("limits", "counts")

    def __init__(self) -> None:
        self.limits: tuple[int, int] | None = None
        self.counts: list[int] = []  # the probe's, while calibrating

    def owned(self, holder: Any) -> bool:
        data = holder.data
        limits = self.limits
        if limits is None:  # the probe (or a call before it): count, and own nothing
            self.counts[:] = (sys.getrefcount(data), sys.getrefcount(holder))
            return False
        return (
            type(data) is np.ndarray
            and data.base is None
            and data.flags.writeable
            and data.flags.owndata
            and sys.getrefcount(data) <= limits[0]
            and sys.getrefcount(holder) <= limits[1]
        )

    def calibrate(self, probe: Callable[[], None]) -> None:
        """Run ``probe``, which reaches ``owned`` through the caller's own calls with a holder
        and an array held nowhere else, and take its counts as the limits."""
        probe()
        array_references, holder_references = self.counts
        self.limits = (array_references, holder_references)
