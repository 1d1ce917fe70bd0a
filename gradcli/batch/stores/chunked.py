"""Points in .npy files, read a chunk of rows at a time: a .npy file and a folder of .npy
parts (Zarr arrays and Parquet files: ``zarr.py``, ``parquet.py``); and the cut of the points
into chunks that each read whole parts and blocks. Each store is an
array-like of rows (``shape``, ``len``, slicing) that reads only the rows asked for, so memory
stays bounded by the chunk whatever the number of points, and that is small to send to
another process (it holds paths, not values).
"""

from __future__ import annotations

import bisect
import math
import os
from pathlib import Path

import numpy as np

from ...base.errors import GradcliError
from ...lang.values import mapped_header
from .base import Blocks, Stored


class NpyRows(Stored):
    """The rows of a .npy file, read from the file when sliced (the file stays closed)."""

    def __init__(self, path: str, name: str = "--batch"):
        self.path = os.path.abspath(path)
        shape, self.dtype, self.offset, fortran = mapped_header(path, name)
        if fortran and len(shape) > 1:  # rows are not contiguous: map it, numpy gathers them
            self.mapped: np.ndarray | None = np.load(path, mmap_mode="r", allow_pickle=False)
        else:
            self.mapped = None
        self.shape = shape
        self.ndim = len(shape)
        self.row = math.prod(shape[1:])

    def __getitem__(self, index: int | slice) -> np.ndarray:
        if isinstance(index, int):
            return self[index : index + 1][0]
        start, stop, _ = index.indices(len(self))
        stop = max(start, stop)
        if self.mapped is not None:
            return np.array(self.mapped[start:stop])
        with open(self.path, "rb") as f:
            f.seek(self.offset + start * self.row * self.dtype.itemsize)
            values = np.fromfile(f, self.dtype, (stop - start) * self.row)
        if len(values) != (stop - start) * self.row:
            raise GradcliError(
                f"--batch: {self.path} is cut short (rows {start} to {stop} are not all there)",
                hint="its header promises more rows than the file holds: write it again",
            )
        return values.reshape((stop - start, *self.shape[1:]))


class Parts(Stored):
    """The rows of several .npy files, one after another, as one array of rows."""

    def __init__(self, parts: list[NpyRows], where: str):
        rows = {p.shape[1:] for p in parts}
        if len(rows) != 1:
            raise GradcliError(
                f"--batch: the parts in {where} hold points of different shapes "
                f"({', '.join(map(str, sorted(rows)))})",
                hint="give every part the same shape after its first dimension",
            )
        self.parts = parts
        self.starts = np.cumsum([0] + [len(p) for p in parts]).tolist()
        self.shape = (self.starts[-1], *rows.pop())
        self.ndim = len(self.shape)

    def __getitem__(self, index: int | slice) -> np.ndarray:
        if isinstance(index, int):
            return self[index : index + 1][0]
        start, stop, _ = index.indices(len(self))
        pieces = [
            part[max(start, first) - first : min(stop, first + len(part)) - first]
            for part, first in zip(self.parts, self.starts)
            if first < stop and first + len(part) > start
        ]
        if not pieces:
            return np.zeros((0, *self.shape[1:]), self.parts[0].dtype)
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def bounds(self) -> list[int]:
        """Where each part starts (and the end): a chunk is best read within one part."""
        return list(self.starts)


def read_parts(folder: str) -> dict[str, Parts]:
    """``@DIR``: the points in a folder of .npy parts, taken in the order of their names: the
    points of x, or, when the folder holds folders, the points of the input each is named
    after (``DIR/x/*.npy``, ``DIR/w/*.npy``)."""
    root = Path(folder)
    inputs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    groups = {p.name: p for p in inputs} if inputs else {"x": root}
    points = {}
    for name, where in groups.items():
        files = sorted(p for p in where.iterdir() if p.suffix.lower() == ".npy")
        if not files:
            raise GradcliError(
                f"--batch: {where} holds no .npy parts",
                hint="write the points as DIR/part-0.npy, DIR/part-1.npy, ... "
                "(or DIR/NAME/part-0.npy for each input NAME)",
            )
        parts = [NpyRows(str(f), f"--batch ({f})") for f in files]
        for part in parts:
            if part.ndim == 0:
                raise GradcliError(f"--batch: {part.path} holds one number, not rows of points")
        points[name] = Parts(parts, str(where))
    return points


def chunks(points: dict, total: int, size: int, align: int | None = None) -> list[tuple[int, int]]:
    """The (start, stop) of each chunk of about ``size`` points: cut where the parts of the
    points are cut, so that a chunk is read from one file where it can be, and made of whole
    blocks (Zarr chunks, Parquet row groups), one at least, so that no two chunks read one.
    ``align``: the rows of a block of the output (a Zarr --out), which each chunk then holds
    whole instead, so that no two chunks write one."""
    cuts = {0, total}
    blocks: set[int] = set()
    for array in points.values():
        if isinstance(array, Parts) and align is None:
            cuts.update(array.bounds())
        elif isinstance(array, Blocks):
            blocks.update(array.edges)
    if align is not None:
        blocks = set(range(0, total, align))
    edges = sorted(c for c in cuts if 0 <= c <= total)
    spans = []
    for start, stop in zip(edges, edges[1:]):
        if not blocks:
            spans += [(s, min(s + size, stop)) for s in range(start, stop, size)]
            continue
        inner = sorted({b for b in blocks if start < b < stop} | {stop})
        while start < stop:  # the farthest edge within size, else the next one
            within = bisect.bisect_right(inner, start + size) - 1
            end = inner[within] if within >= 0 and inner[within] > start else inner[0]
            spans.append((start, end))
            start = end
            inner = inner[bisect.bisect_right(inner, start) :]
    return spans
