"""Points in a Zarr store, and results written to one (``--batch @points.zarr``,
``--out results.zarr``).

A Zarr array is the points of x (its first axis the points); a Zarr group holds one array per
input, named after it, as a .npz does. Rows are read a Zarr chunk at a time (``Blocks``), by
whoever replays them: the store's path is all a worker of a cluster is sent. Results go to a
group of one array per result (``values.y``, ``grads.x``), chunked along the points like the
points' store, so that the workers of a cluster each write whole chunks.

``zarr`` is an optional extra: ``pip install 'gradcli[zarr]'``.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ...base.bounds import format_bytes
from ...base.errors import GradcliError, optional_module
from ...base.files import manifest, note_input, refuse_input
from .base import Blocks, ScratchOut, check_block, out_target, replace_folder

SUFFIX = ".zarr"


def zarr() -> Any:
    """The zarr package, or the user's error naming the extra that installs it."""
    return optional_module(
        "zarr", "Zarr stores need the zarr package, which is not installed", "zarr"
    )


def is_store(path: str) -> bool:
    """A path that names a Zarr store: ``NAME.zarr``, or a folder with Zarr's metadata."""
    if path.rstrip("/").lower().endswith(SUFFIX):
        return True
    return any(os.path.exists(os.path.join(path, m)) for m in ("zarr.json", ".zarray", ".zgroup"))


class ZarrRows(Blocks):
    """The rows of one Zarr array (``key`` inside the group at ``path``, or the array at
    ``path`` itself), read a chunk of rows at a time."""

    def __init__(self, path: str, key: str | None, array: Any):
        self.path, self.key = os.path.abspath(path), key
        self.shape, self.dtype = tuple(array.shape), np.dtype(array.dtype)
        self.ndim = len(self.shape)
        self.chunks = tuple(int(n) for n in array.chunks)
        self.rows = self.chunks[0] if self.ndim else 1
        self.edges = [*range(0, self.shape[0] if self.ndim else 0, self.rows), len(self)]

    def __len__(self) -> int:
        return self.shape[0] if self.ndim else 0

    def read(self, start: int, stop: int) -> np.ndarray:
        array = getattr(self, "_array", None)
        if array is None:
            array = self._array = zarr().open_array(self.path, path=self.key or "", mode="r")
        return np.asarray(array[start:stop])


def read_store(path: str) -> dict[str, ZarrRows]:
    """``@points.zarr``: an array (the points of x) or a group (an array per input)."""
    where = f"--batch ({path})"
    if not os.path.isdir(path):
        raise GradcliError(f"--batch: no such Zarr store: {path}", hint="give a folder NAME.zarr")
    note_input(path)
    try:
        node = zarr().open(path, mode="r")
        if hasattr(node, "arrays"):
            arrays = {name: ZarrRows(path, name, a) for name, a in node.arrays()}
        else:
            arrays = {"x": ZarrRows(path, None, node)}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise GradcliError(
            f"{where}: cannot read the Zarr store: {exc}",
            hint="write it with zarr.create_array (the points of x) or a group of arrays",
        ) from None
    if not arrays:
        raise GradcliError(f"{where}: the Zarr group holds no arrays", hint="one array per input")
    for name, rows in arrays.items():
        _check_chunks(path, name, rows)
    for name, rows in arrays.items():
        if rows.dtype.kind not in "biuf":
            raise GradcliError(
                f"{where}: the array {name} holds {rows.dtype}, not numbers",
                hint="store the points as integers or floats",
            )
        if rows.ndim == 0:
            raise GradcliError(f"{where}: the array {name} holds one number, not rows of points")
    return arrays


def _check_chunks(path: str, name: str, rows: ZarrRows) -> None:
    """Refuse an array whose chunks, as its metadata declares them, take more memory than
    the budget allows to read: a whole chunk is decoded at once, and a block of rows is read
    whole (an 8 KB store of metadata alone can declare chunks of gigabytes)."""
    chunk = math.prod(rows.chunks) * rows.dtype.itemsize
    block = min(rows.rows, len(rows)) * math.prod(rows.shape[1:]) * rows.dtype.itemsize
    check_block(
        f"{path}, a chunk of the array {name}",
        f"is declared by its metadata as shape {rows.chunks} of {rows.dtype} "
        f"({format_bytes(chunk)})",
        chunk + block,
        "write the store with smaller chunks along the points "
        "(zarr.create_array(..., chunks=(10000, ...)))",
    )


class ZarrSink:
    """Where results are written: the arrays of the group at ``path``, each at the rows of
    a chunk of points (whole chunks of the arrays, bar the last)."""

    def __init__(self, path: str):
        self.path = path

    def write(self, index: int, start: int, results: dict[str, np.ndarray]) -> None:
        group = zarr().open_group(self.path, mode="r+")
        for key, values in results.items():
            group[key][start : start + len(values)] = values


class ZarrOut(ScratchOut):
    """``--out results.zarr``: a group made here with an array per result at its final
    shape, filled by the chunks (see ``batch.out.ChunkedOut``, whose interface it shares),
    under a temporary name renamed onto --out at the end; closed early, its arrays are cut to
    the points done."""

    def __init__(self, path: str, total: int, first: dict[str, np.ndarray], rows: int):
        self.total, self.rows = total, rows
        refuse_input(out_target(path))
        super().__init__(path)
        store = os.path.join(self.scratch, os.path.basename(self.target))
        try:
            group = zarr().open_group(store, mode="w")
            for key, array in first.items():
                row = array.shape[1:]
                group.create_array(
                    key,
                    shape=(total, *row),
                    chunks=(max(1, min(rows, total)), *row),
                    dtype=array.dtype,
                )
        except OSError as exc:
            self.discard()
            raise GradcliError(f"--out {path}: cannot write: {exc}") from None
        self.sink = ZarrSink(store)

    def close(self, done: int, parts: int) -> None:
        """Finish --out with the first ``done`` points."""
        with self.finishing():
            group = zarr().open_group(self.sink.path, mode="r+")
            if done < self.total:
                for _, array in group.arrays():
                    array.resize((done, *array.shape[1:]))
            # gradcli's manifest, which lets a later --out replace the store
            group.attrs["gradcli"] = manifest([k for k, _ in group.arrays()], done)
            replace_folder(self.sink.path, self.path)
