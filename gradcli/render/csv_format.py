"""CSV: one block per array, a header line naming it, a blank line between blocks."""

from __future__ import annotations

import csv
import io

import numpy as np

from ..compute import Result
from . import blocks, cell, format_number


def _rows(array: np.ndarray) -> np.ndarray:
    if array.ndim == 0:
        return array.reshape(1, 1)
    if array.ndim == 1:
        return array.reshape(1, -1)
    return array.reshape(int(np.prod(array.shape[:-1])), array.shape[-1])


def to_csv(result: Result, precision: int) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if result.plot:  # one table: a column per series
        writer.writerow(list(result.plot))
        for row in zip(*result.plot.values()):
            writer.writerow([format_number(float(v), precision) for v in row])
        return buffer.getvalue().rstrip("\n")
    for i, (_, _, label, array) in enumerate(blocks(result)):
        if i:
            buffer.write("\n")
        shape = "None" if array is None else "x".join(str(n) for n in array.shape) or "scalar"
        writer.writerow([label, shape])
        if array is None:
            writer.writerow(["None"])
            continue
        array = np.asarray(array)
        rows = _rows(array if array.dtype == object else array.astype(float))
        for row in rows:
            writer.writerow([cell(v, precision) for v in row])
    return buffer.getvalue().rstrip("\n")
