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

from ..results import (
    HVP,
    JVP,
    VJP,
    Check,
    Explanation,
    Grads,
    Hessian,
    Jacobian,
    Plot,
    Several,
    Values,
)
from . import Options, blocks, renders


def full_precision(value) -> str:
    """A number as the shortest text that reads back to the same float; a boolean as true or
    false; an integer whole; a complex number as Python writes it, (1+2j); a formula as it
    is."""
    if isinstance(value, (complex, np.complexfloating)):
        return repr(complex(value))
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):  # an integer tensor's element
        return str(int(value))
    return value if isinstance(value, str) else repr(float(value))


def _write(file, rows) -> None:
    """The rows as CSV, ending in one newline."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    file.write(buffer.getvalue().rstrip("\n") + "\n")


@renders("csv", Values, Grads, VJP, Jacobian, JVP, Hessian, HVP, Check, Explanation, Several)
def tidy(result, file, options: Options) -> None:
    """One row per element of every array of ``result``."""
    arrays = [(b.label, None if b.array is None else np.asarray(b.array)) for b in blocks(result)]
    rank = max((a.ndim for _, a in arrays if a is not None), default=0)
    rows = [["tensor", *(f"i{k}" for k in range(rank)), "value"]]
    for label, array in arrays:
        if array is None:
            rows.append([label, *[""] * rank, ""])
            continue
        for index in np.ndindex(array.shape):
            blank = [""] * (rank - len(index))
            rows.append([label, *index, *blank, full_precision(array[index])])
    _write(file, rows)


@renders("csv", Plot)
def columns(result: Plot, file, options: Options) -> None:
    """One table: a column per series, a row per position."""
    series = result.series
    rows = [list(series)]
    rows += [[full_precision(v) for v in row] for row in zip(*series.values())]
    _write(file, rows)
