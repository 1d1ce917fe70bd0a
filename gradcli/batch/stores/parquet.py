"""Points in Parquet files, and results written to one (``--batch @points.parquet`` or a
folder of Parquet parts, ``--out results.parquet``).

The columns are what a pandas or pyarrow user writes: a column of numbers per scalar input
(``a``, ``b``), a column per element of a vector input in gradcli's own spelling of elements
(``x0``, ``x1``, ... for ``x``), or a column of lists (nested for a matrix) holding each point's
value of an input. Rows are read a row group at a time (``Blocks``), by whoever replays them:
the files' paths are all a worker of a cluster is sent. Results are written the same way:
``values.y`` a column for a scalar, ``grads.x0``, ``grads.x1``, ... for a vector, a column of
fixed-size lists for more dimensions; one row group per chunk of points.

``pyarrow`` is an optional extra: ``pip install 'gradcli[parquet]'``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from ...base.bounds import format_bytes
from ...base.errors import GradcliError, optional_module
from ...base.files import note_input, put_in_place, refuse_input
from ...lang.statement import element_of
from .base import Blocks, ScratchOut, check_block, out_target

SUFFIX = ".parquet"
PANDAS_INDEX = re.compile(r"__index_level_\d+__")  # pandas' index, written as a column


def pyarrow() -> Any:
    """pyarrow's Parquet module, or the user's error naming the extra that installs it."""
    missing = "Parquet files need the pyarrow package, which is not installed"
    return optional_module("pyarrow.parquet", missing, "parquet")


def is_parquet(path: str) -> bool:
    """A Parquet file, or a folder of Parquet parts (``NAME.parquet/`` or a folder holding
    ``*.parquet`` files)."""
    if path.rstrip("/").lower().endswith(SUFFIX):
        return True
    return os.path.isdir(path) and any(p.suffix.lower() == SUFFIX for p in Path(path).iterdir())


class ParquetRows(Blocks):
    """One input's points: its ``columns`` of the Parquet ``files`` (taken one after another),
    read a row group at a time and shaped as points of ``shape``."""

    def __init__(self, files: list[str], groups: list[list[int]], columns, shape, lists: bool):
        self.files, self.columns, self.lists = files, list(columns), lists
        self.shape = (sum(map(sum, groups)), *shape)
        self.ndim = len(self.shape)
        self.dtype = np.dtype(float)
        self.groups = groups  # the rows of each row group of each file
        self.edges = [0]
        for rows in groups:
            for n in rows:
                self.edges.append(self.edges[-1] + n)

    def read(self, start: int, stop: int) -> np.ndarray:
        pieces, first = [], 0
        for path, rows in zip(self.files, self.groups):
            wanted = []
            for i, n in enumerate(rows):
                if start <= first < stop:
                    wanted.append(i)
                first += n
            if wanted:
                table = pyarrow().ParquetFile(path).read_row_groups(wanted, columns=self.columns)
                pieces.append(self._points(table, path))
        return np.concatenate(pieces) if len(pieces) > 1 else pieces[0]

    def _points(self, table: Any, path: str) -> np.ndarray:
        columns = [table.column(c) for c in self.columns]
        for name, column in zip(self.columns, columns):
            if column.null_count:
                raise GradcliError(
                    f"--batch ({path}): the column {name} has empty (null) cells",
                    hint="give every point a value",
                )
        if self.lists:
            return _nested(columns[0].combine_chunks(), self.shape[1:], self.columns[0], path)
        if self.ndim == 1:  # a scalar input
            return columns[0].to_numpy()
        return np.stack([c.to_numpy() for c in columns], axis=1)  # a column per element


def _nested(array: Any, shape: tuple[int, ...], name: str, path: str) -> np.ndarray:
    """A column of (nested) lists as an array of points of ``shape``."""
    import pyarrow.compute

    for size in shape:
        lengths = pyarrow.compute.list_value_length(array).to_numpy(zero_copy_only=False)
        if array.null_count or len(lengths) and not (lengths == size).all():
            raise GradcliError(
                f"--batch ({path}): the lists of the column {name} are not all of the shape "
                f"{shape}",
                hint="give every point of an input the same shape",
            )
        array = array.flatten()
    if array.null_count:
        raise GradcliError(f"--batch ({path}): the column {name} has empty (null) numbers")
    return array.to_numpy(zero_copy_only=False).reshape(-1, *shape)


def _kind(column: Any) -> tuple[int, Any]:
    """How deep a column's lists go (0: numbers), and the type of its numbers."""
    import pyarrow as pa

    depth, kind = 0, column.type
    while (
        pa.types.is_list(kind)
        or pa.types.is_large_list(kind)
        or (pa.types.is_fixed_size_list(kind))
    ):
        depth, kind = depth + 1, kind.value_type
    return depth, kind


def read_parquet(path: str) -> dict[str, ParquetRows]:
    """``@points.parquet`` (or a folder of parts, in the order of their names): the points of
    each input its columns give (see the module's docstring)."""
    import pyarrow as pa

    if os.path.isdir(path):
        files = sorted(str(p) for p in Path(path).iterdir() if p.suffix.lower() == SUFFIX)
        if not files:
            raise GradcliError(f"--batch: {path} holds no .parquet parts")
    else:
        files = [path]
    parquet = pyarrow()
    groups, schema, metas = [], None, []
    for file in files:
        where = f"--batch ({file})"
        if not os.path.isfile(file):
            raise GradcliError(f"--batch: no such file: {file}")
        note_input(file)
        try:
            meta = parquet.ParquetFile(file)
        except (OSError, pa.ArrowException) as exc:
            raise GradcliError(f"{where}: cannot read it as Parquet: {exc}") from None
        if schema is not None and not meta.schema_arrow.equals(schema):
            raise GradcliError(
                f"{where}: its columns are not those of {files[0]}",
                hint="give every part the same columns, of the same types",
            )
        schema = meta.schema_arrow
        metas.append(meta.metadata)
        groups.append([meta.metadata.row_group(i).num_rows for i in range(meta.num_row_groups)])
    assert schema is not None
    where = f"--batch ({path})"
    columns = {}
    for field in schema:
        if PANDAS_INDEX.fullmatch(field.name):
            continue
        depth, kind = _kind(field)
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise GradcliError(
                f"{where}: the column {field.name} holds {field.type}, not numbers",
                hint="write a column of numbers (or of lists of numbers) per input",
            )
        columns[field.name] = depth
    if not columns:
        raise GradcliError(f"{where}: no columns of numbers", hint="write a column per input")
    leaves = _leaves(schema, columns)
    for file, meta in zip(files, metas):
        for i in range(meta.num_row_groups):
            _check_row_group(file, i, meta.row_group(i), leaves)
    points = {}
    for name, columns_of in _inputs(columns).items():
        depth = columns[columns_of[0]]
        if depth:
            shape = _first_shape(files, groups, name, depth)
        else:
            shape = () if columns_of == [name] else (len(columns_of),)
        points[name] = ParquetRows(files, groups, columns_of, shape, depth > 0)
    return points


# the bytes of a number of each physical type of Parquet, as pyarrow holds it once read
WIDTHS = {"BOOLEAN": 1, "INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8, "INT96": 12}


def _leaves(schema: Any, columns: dict[str, int]) -> list[int]:
    """The indices of the Parquet (leaf) columns that hold the numbers of ``columns``, the
    columns read: a column of numbers, or of lists of numbers, is one leaf of its own."""
    import pyarrow as pa

    def count(kind: Any) -> int:
        if pa.types.is_struct(kind):
            return sum(count(kind.field(i).type) for i in range(kind.num_fields))
        if pa.types.is_map(kind):
            return count(kind.key_type) + count(kind.item_type)
        if pa.types.is_list(kind) or pa.types.is_large_list(kind):
            return count(kind.value_type)
        return count(kind.value_type) if pa.types.is_fixed_size_list(kind) else 1

    read, first = [], 0
    for field in schema:
        if field.name in columns:
            read.append(first)
        first += count(field.type)
    return read


def _check_row_group(file: str, index: int, group: Any, leaves: list[int]) -> None:
    """Refuse, before it is read, a row group whose numbers, as its metadata declares them,
    take more memory than the budget allows: a row group is read whole, and a highly
    compressible column (a constant, in a file of a few KB) can declare billions."""
    values = size = 0
    for leaf in leaves:
        column = group.column(leaf)
        count = column.num_values
        values += count
        # pyarrow's arrays (at least the uncompressed pages), then the points as float64
        size += max(column.total_uncompressed_size, count * WIDTHS.get(column.physical_type, 8))
    check_block(
        f"{file}, row group {index}",
        f"declares {group.num_rows:,} rows, {values:,} numbers in the columns read "
        f"({format_bytes(size)} decoded)",
        size + values * 8,
        "write the file in smaller row groups "
        "(pyarrow.parquet.write_table(..., row_group_size=10000))",
    )


def _inputs(columns: dict[str, int]) -> dict[str, list[str]]:
    """The input each column gives: its own, or (``x0``, ``x1``, ... and no ``x``) the vector
    ``x`` of the elements, in order."""
    vectors: dict[str, dict[int, str]] = {}
    for name, depth in columns.items():
        parts = element_of(name)
        if parts and not depth and parts[0] not in columns:
            vectors.setdefault(parts[0], {})[parts[1]] = name
    inputs = {}
    for name in columns:
        parts = element_of(name)
        elements = vectors.get(parts[0], {}) if parts else {}
        if parts and sorted(elements) == list(range(len(elements))) and name in elements.values():
            inputs[parts[0]] = [elements[i] for i in range(len(elements))]
        else:
            inputs[name] = [name]
    return inputs


def _first_shape(files, groups, name: str, depth: int) -> tuple[int, ...]:
    """The shape of the first point of a column of lists."""
    for file, rows in zip(files, groups):
        for i, n in enumerate(rows):
            if n:
                cell = pyarrow().ParquetFile(file).read_row_group(i, columns=[name])
                shape = np.shape(cell.column(name)[0].as_py())
                if len(shape) != depth:
                    raise GradcliError(
                        f"--batch ({file}): the first point of the column {name} is ragged",
                        hint="give every point of an input the same shape",
                    )
                return shape
    return (0,) * depth


def table(results: dict[str, np.ndarray]) -> Any:
    """Results as a table: a column for a scalar, one per element of a vector (``grads.x0``),
    a column of fixed-size lists for more dimensions."""
    import pyarrow as pa

    columns = {}
    for key, array in results.items():
        row = array.shape[1:]
        if len(row) == 1:
            columns.update({f"{key}{i}": pa.array(array[:, i]) for i in range(row[0])})
            continue
        column = pa.array(np.ascontiguousarray(array).reshape(-1))
        for size in reversed(row):
            column = pa.FixedSizeListArray.from_arrays(column, size)
        columns[key] = column
    return pa.table(columns)


class ParquetSink:
    """Where results are written: a Parquet file per chunk of points in ``folder``."""

    def __init__(self, folder: str):
        self.folder = folder

    def write(self, index: int, start: int, results: dict[str, np.ndarray]) -> None:
        final = os.path.join(self.folder, f"part-{index:06d}.parquet")
        pyarrow().write_table(table(results), final + ".partial")
        os.replace(final + ".partial", final)


class ParquetOut(ScratchOut):
    """``--out results.parquet``: the chunks written as parts under a temporary folder (by
    the workers of a cluster, each its own), put together in order into one file at the end,
    a row group a part (see ``batch.out.ChunkedOut``, whose interface it shares)."""

    def __init__(self, path: str, total: int, first: dict[str, np.ndarray], rows: int):
        self.total = total
        refuse_input(out_target(path))
        self.schema = table({k: a[:0] for k, a in first.items()}).schema
        super().__init__(path)
        self.sink = ParquetSink(self.scratch)

    def close(self, done: int, parts: int) -> None:
        """Finish --out with the first ``parts`` chunks."""
        parquet = pyarrow()
        final = os.path.join(self.scratch, "all.parquet")
        with self.finishing():
            with parquet.ParquetWriter(final, self.schema) as writer:
                for index in range(parts):
                    part = parquet.ParquetFile(
                        os.path.join(self.scratch, f"part-{index:06d}.parquet")
                    )
                    for group in range(part.num_row_groups):
                        writer.write_table(part.read_row_group(group))
            put_in_place(final, self.target)
