"""CSV: tidy, one row per element, ``tensor,i0,i1,...,value``; numbers at full precision.

There are as many index columns as the highest rank among the result's arrays; an array of
lower rank leaves the rest blank, a scalar all of them. A Jacobian's index is the output's
followed by the input's (the input's first when transposed), a Hessian block's the first
input's followed by the second's. A gradient that is None is one row with a blank value.
Numbers are written as Python's ``repr``, which reads back to the same float; NaN and the
infinities as ``nan``, ``inf``, ``-inf``; ``--symbolic`` formulas as text. ``plot`` is one
column per series instead.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from ..compute import Result
from . import blocks


def full_precision(value) -> str:
    """A number as the shortest text that reads back to the same float; a formula as it is."""
    return value if isinstance(value, str) else repr(float(value))


def to_csv(result: Result) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if result.plot:  # one table: a column per series
        writer.writerow(list(result.plot))
        for row in zip(*result.plot.values()):
            writer.writerow([full_precision(v) for v in row])
        return buffer.getvalue().rstrip("\n")
    arrays = [(label, None if a is None else np.asarray(a)) for _, _, label, a in blocks(result)]
    rank = max((a.ndim for _, a in arrays if a is not None), default=0)
    writer.writerow(["tensor", *(f"i{k}" for k in range(rank)), "value"])
    for label, array in arrays:
        if array is None:
            writer.writerow([label, *[""] * rank, ""])
            continue
        for index in np.ndindex(array.shape):
            blank = [""] * (rank - len(index))
            writer.writerow([label, *index, *blank, full_precision(array[index])])
    return buffer.getvalue().rstrip("\n")
