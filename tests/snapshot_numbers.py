"""Snapshots that hold on any machine: long numbers are stored rounded and compared at a tolerance.

Libraries may round the last bit of a float differently from one machine to another
(1.440012802614492 here, 1.4400128026144916 there). ``RoundedNumbers`` is syrupy's amber
format with every number of more than ``DIGITS`` significant digits rounded to ``DIGITS``;
two snapshots match when their text is the same and their numbers agree to ``RTOL``. Rounding
alone would not do: two values a bit apart can round to different 12-digit numbers, and a
matched snapshot is never rewritten, so ``--snapshot-update`` does not churn either.

Full precision is checked elsewhere, against torch (``torch_oracle``).
"""

from __future__ import annotations

import math
import re

from syrupy.extensions.amber import AmberSnapshotExtension

DIGITS = 12
RTOL = 1e-10
ATOL = 1e-12  # a sum that cancels to about 0 may end as 1e-17 on one machine and 0 on another

# A number standing alone: not part of a name (x_0, d2f, 2x3, \x1b) nor of a version (0.1.0).
NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?!\w|\.\d)")


def _rounded(match: re.Match) -> str:
    text = match.group(1)
    short = float(f"{float(text):.{DIGITS}g}")
    return repr(short) if short != float(text) else text


def round_numbers(text: str) -> str:
    """``text`` with each number of more than ``DIGITS`` significant digits rounded to them."""
    return NUMBER.sub(_rounded, text)


def numbers(text: str) -> list[float]:
    """The numbers standing alone in ``text``, in order."""
    return [float(n) for n in NUMBER.findall(text)]


def same_but_for_rounding(a: str, b: str) -> bool:
    """The same text around the numbers, and numbers equal to ``RTOL`` (or ``ATOL``)."""
    parts_a, parts_b = NUMBER.split(a), NUMBER.split(b)
    if len(parts_a) != len(parts_b) or parts_a[::2] != parts_b[::2]:
        return False
    return all(
        math.isclose(float(x), float(y), rel_tol=RTOL, abs_tol=ATOL)
        for x, y in zip(parts_a[1::2], parts_b[1::2])
    )


class RoundedNumbers(AmberSnapshotExtension):
    """Amber snapshots whose long numbers are rounded, matched by ``same_but_for_rounding``."""

    def serialize(self, data, **kwargs) -> str:
        return round_numbers(super().serialize(data, **kwargs))

    def matches(self, *, serialized_data, snapshot_data) -> bool:
        if not isinstance(serialized_data, str) or not isinstance(snapshot_data, str):
            return serialized_data == snapshot_data
        return same_but_for_rounding(serialized_data, snapshot_data)
