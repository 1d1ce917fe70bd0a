"""Where a batch's results go: the ``--out`` writers, one process's (``OutFile``: .npy or .npz
written chunk by chunk) and the chunked ones a cluster's workers fill (``ChunkedOut``: .npy,
.npz or a folder of parts; ``stores``' Zarr and Parquet writers), and ``FolderOut``, which
writes a folder, Zarr or Parquet --out in one process as a cluster writes it. Each writes
under a temporary name renamed onto --out at the end, and closed early keeps the points done.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ..base.errors import GradcliError
from ..base.files import atomic_output, mark_output, put_in_place, refuse_folder, refuse_input
from ..results import Points
from .passes import Sections
from .stores.base import ScratchOut, is_folder, replace_folder, storage_of


def check_out_path(path: str) -> None:
    """Fail before any work when --out cannot be written."""
    kind = storage_of(path)
    if kind == "zarr":
        from .stores.zarr import zarr

        zarr()  # the extra is installed, before any work
    elif kind == "parquet":
        from .stores.parquet import pyarrow

        pyarrow()
    if not (is_folder(path) or kind or path.endswith((".npy", ".npz"))):
        raise GradcliError(
            f"--out {path}: unknown file type",
            hint="use .npy, .npz, .zarr or .parquet, or DIR/ for a folder of .npy parts",
        )
    folder = Path(path.rstrip("/") or path).parent  # a folder's, or a Zarr store's, parent
    if not folder.is_dir():
        raise GradcliError(f"--out {path}: no such folder {folder}")


def refuse_out(path: str) -> None:
    """Refuse an --out that is one of the command's inputs (those read so far), or a folder
    gradcli may not replace (``files.refuse_folder``)."""
    refuse_input(path.rstrip("/") or path)
    if is_folder(path) or storage_of(path) == "zarr":
        refuse_folder(path)


def out_arrays(chunk: Points) -> dict[str, np.ndarray]:
    """A chunk's results as --out names them: ``SECTION.NAME`` (``values.y``, ``grads.x``,
    ``jacobian.x``, ``hessian.x,w``, ``check.agree``)."""
    return {
        f"{section}.{k}": np.asarray(a)
        for section, arrays in chunk.sections.items()
        for k, a in arrays.items()
    }


def sections_of(arrays: dict[str, np.ndarray]) -> Sections:
    """``out_arrays``' names read back into sections."""
    sections: Sections = {}
    for key, array in arrays.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, {})[name] = array
    return sections


def npy_header(shape: tuple[int, ...], dtype: np.dtype, length: int = 0) -> bytes:
    """A .npy (version 1.0) header for an array of ``shape`` and ``dtype``, padded with spaces
    to a multiple of 64 bytes and to at least ``length``: a header written for the final
    shape can be rewritten in place for fewer points."""
    text = repr(
        {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    )
    magic = b"\x93NUMPY\x01\x00"
    size = max(len(magic) + 2 + len(text) + 1, length)
    size += -size % 64
    padded = text.ljust(size - len(magic) - 2 - 1) + "\n"
    return magic + (len(padded)).to_bytes(2, "little") + padded.encode("latin-1")


def main_results(path: str, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What ``--out results.npy`` holds: the command's one result (the gradient, the
    Jacobian, ...; the values, for eval); several are refused, for a .npz."""
    main = [k for k in arrays if not k.startswith("values.")] or list(arrays)
    if len(main) != 1:
        raise GradcliError(
            f"--out {path}: there are {len(main)} results ({', '.join(main)})",
            hint="write them all with --out results.npz",
        )
    return {main[0]: arrays[main[0]]}


def zip_parts(target: str, parts: dict[str, str]) -> None:
    """A .npz archive of .npy files, one member a result (each read from its file in blocks)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for key, path in parts.items():
            z.write(path, f"{key}.npy")


@dataclass
class _Part:
    """One result of --out, as a .npy file being written."""

    path: str
    file: BinaryIO
    dtype: np.dtype
    row: tuple[int, ...]  # the shape of one point's result
    header: int  # the length of its header, kept when it is rewritten


class OutFile:
    """--out written chunk by chunk, so that memory stays bounded by the chunk whatever the
    number of points: each result is a .npy whose header holds its final shape, its rows
    appended as they come (``.npz``: one such file a result, put into the archive one at a
    time at the end). Closed early (Ctrl-C, --timeout), it holds the points done."""

    def __init__(self, path: str, total: int):
        self.path, self.total, self.done = path, total, 0
        self.parts: dict[str, _Part] = {}
        # the file is written under a temporary name, renamed onto --out when it is complete
        self.output = contextlib.ExitStack()
        self.target = path

    def _open(self, arrays: dict[str, np.ndarray]) -> None:
        if not self.path.endswith(".npz"):
            arrays = main_results(self.path, arrays)
        self.target = self.output.enter_context(atomic_output(self.path))
        folder = os.path.dirname(os.path.abspath(self.target))
        for key, array in arrays.items():
            if self.path.endswith(".npz"):
                handle, path = tempfile.mkstemp(".npy", ".gradcli-", folder)
                file = os.fdopen(handle, "wb")
            else:
                path, file = self.target, open(self.target, "wb")  # noqa: SIM115 - see close()
            header = npy_header((self.total, *array.shape[1:]), array.dtype)
            self.parts[key] = _Part(path, file, array.dtype, array.shape[1:], len(header))
            file.write(header)

    def write(self, chunk: Points) -> None:
        """Append the chunk's points to every result."""
        arrays = out_arrays(chunk)
        try:
            if not self.parts:
                self._open(arrays)
            for key, part in self.parts.items():
                np.ascontiguousarray(arrays[key], dtype=part.dtype).tofile(part.file)
        except OSError as exc:
            self.discard()
            raise GradcliError(f"--out {self.path}: cannot write: {exc}") from None
        self.done += len(next(iter(arrays.values())))

    def close(self) -> None:
        """Finish the file: its arrays hold the points written (all of them, unless the
        batch stopped early)."""
        try:
            for part in self.parts.values():
                if self.done < self.total:  # the header says how many points there are
                    part.file.seek(0)
                    part.file.write(npy_header((self.done, *part.row), part.dtype, part.header))
                    rows = self.done * math.prod(part.row) * part.dtype.itemsize
                    part.file.truncate(part.header + rows)
                part.file.close()
            if self.path.endswith(".npz") and self.parts:
                zip_parts(self.target, {key: part.path for key, part in self.parts.items()})
        except OSError as exc:
            self.discard()
            raise GradcliError(f"--out {self.path}: cannot write: {exc}") from None
        self.discard(keep=True)
        self.output.close()  # the file complete: renamed onto --out

    def discard(self, keep: bool = False) -> None:
        """Close and remove the parts of a .npz (and, unless ``keep``, the file half written,
        leaving --out as it was)."""
        for part in self.parts.values():
            with contextlib.suppress(OSError):  # a full disk fails the flush of the close too
                part.file.close()
            if part.path != self.target:
                with contextlib.suppress(OSError):
                    os.remove(part.path)
        self.parts = {}
        if not keep:
            abandoned = GradcliError(f"--out {self.path}: not written")
            self.output.__exit__(GradcliError, abandoned, None)  # removes the temporary file


#: The chunks of points a task takes (each replayed on its own, as in one process): more
#: than one, so that a task's own cost (milliseconds of scheduling and transfer) is small
#: beside its work.
TASKS = 16


@dataclasses.dataclass
class NpySink:
    """Where workers write results: each result's .npy file (written at the chunk's rows), or
    a folder that gets a part per chunk for each result; None: back to the client."""

    files: dict[str, tuple[str, int, int]]  # result -> (path, header bytes, bytes per point)
    folder: str | None

    def write(self, index: int, start: int, results: dict[str, np.ndarray]) -> None:
        if self.folder is not None:
            for key, array in results.items():
                final = os.path.join(self.folder, key, f"part-{index:06d}.npy")
                partial = final + ".partial"
                with open(partial, "wb") as f:
                    np.save(f, np.ascontiguousarray(array))
                os.replace(partial, final)
            return
        for key, (path, header, row) in self.files.items():
            with open(path, "r+b") as f:
                f.seek(header + start * row)
                f.write(np.ascontiguousarray(results[key]).tobytes())


class ChunkedOut(ScratchOut):
    """--out written by the workers: ``.npy``/``.npz`` files made here with their final
    headers, filled at each chunk's rows, or a folder (``--out DIR/``) of parts, one per chunk
    and result (``DIR/grads.x/part-000000.npy``, ...). Everything is written under temporary
    names, renamed onto --out at the end; closed early, it holds the chunks done from the
    first on."""

    def __init__(self, path: str, total: int, first: dict[str, np.ndarray]):
        self.total = total
        self.is_folder = is_folder(path)
        refuse_input(path.rstrip("/") or path)
        keys = first if self.is_folder or path.endswith(".npz") else main_results(path, first)
        self.rows = {k: (first[k].shape[1:], first[k].dtype) for k in keys}
        super().__init__(path)
        files = {}
        try:
            for key, (row, dtype) in self.rows.items():
                if self.is_folder:
                    os.mkdir(os.path.join(self.scratch, key))
                    continue
                part = os.path.join(self.scratch, f"{key}.npy")
                header = npy_header((total, *row), dtype)
                point = int(np.prod(row, dtype=np.int64)) * dtype.itemsize
                with open(part, "wb") as f:
                    f.write(header)
                    f.truncate(len(header) + total * point)
                files[key] = (part, len(header), point)
        except OSError as exc:  # a full disk: nothing left behind
            self.discard()
            raise GradcliError(f"--out {path}: cannot write: {exc}") from None
        self.sink = NpySink(files, self.scratch if self.is_folder else None)

    def close(self, done: int, parts: int) -> None:
        """Finish --out with the first ``done`` points (the first ``parts`` chunks). What is
        kept is moved (or, stopped early, copied) out of the scratch folder, which is removed:
        a worker still busy with a cancelled task writes only there."""
        kept = tempfile.mkdtemp(prefix=".gradcli-", suffix=".tmp", dir=os.path.dirname(self.target))
        try:
            with self.finishing():
                self._finish(kept, done, parts)
        finally:
            shutil.rmtree(kept, ignore_errors=True)

    def _finish(self, kept: str, done: int, parts: int) -> None:
        """Put what is kept together in the folder ``kept``, then onto --out."""
        if self.is_folder:
            for key in self.rows:
                os.mkdir(os.path.join(kept, key))
                for name in os.listdir(os.path.join(self.scratch, key)):
                    if name.endswith(".npy") and int(name[5:11]) < parts:
                        os.replace(*(os.path.join(f, key, name) for f in (self.scratch, kept)))
            mark_output(kept, list(self.rows), done)
            replace_folder(kept, self.path)
            return
        paths = {}
        for key, (part, header, point) in self.sink.files.items():
            paths[key] = part
            if done < self.total:
                paths[key] = os.path.join(kept, f"{key}.npy")
                row, dtype = self.rows[key]
                with open(part, "rb") as source, open(paths[key], "wb") as copy:
                    copy.write(npy_header((done, *row), dtype))
                    source.seek(header)
                    _copy(source, copy, done * point)
        final = os.path.join(kept, "all.npz")
        if self.path.endswith(".npz"):
            zip_parts(final, paths)
        else:
            (final,) = paths.values()
        put_in_place(final, self.target)


def _copy(source: Any, target: Any, size: int) -> None:
    """The next ``size`` bytes of ``source`` written to ``target``, a block at a time."""
    while size > 0:
        block = source.read(min(size, 1 << 22))
        if not block:
            raise OSError(f"{source.name} is cut short")
        target.write(block)
        size -= len(block)


def block_rows(points: dict[str, Any]) -> int | None:
    """The rows of a Zarr chunk of the points (of the first input in a Zarr store): the
    chunks of a Zarr --out along the points, which are then chunked like the input."""
    from .stores.zarr import ZarrRows

    return next((a.rows for a in points.values() if isinstance(a, ZarrRows)), None)


def chunked_out(path: str, total: int, first: dict[str, np.ndarray], rows: int) -> Any:
    """The --out that chunks are written into, in its format: a Zarr group, a Parquet file
    (both in blocks of ``rows`` points), or .npy, .npz, DIR/ (``ChunkedOut``)."""
    kind = storage_of(path)
    if kind == "zarr":
        from .stores.zarr import ZarrOut

        return ZarrOut(path, total, first, rows)
    if kind == "parquet":
        from .stores.parquet import ParquetOut

        return ParquetOut(path, total, first, rows)
    return ChunkedOut(path, total, first)


class FolderOut:
    """``--out DIR/``, ``.zarr`` or ``.parquet`` in one process: the chunks written as a
    cluster's workers write them. For Zarr and Parquet, the chunks are gathered into blocks
    of ``rows`` points (the points' Zarr chunks, else a cluster's task of ``TASKS`` chunks),
    so that the output is chunked as a cluster writes it, and Zarr's chunks written whole."""

    def __init__(self, path: str, total: int, rows: int | None = None):
        self.path, self.total, self.rows = path, total, rows
        self.out: Any = None  # ChunkedOut, ZarrOut or ParquetOut
        self.done = self.parts = 0
        self.gathers = storage_of(path) is not None
        self.pending: list[dict[str, np.ndarray]] = []
        self.waiting = 0  # the points pending

    def write(self, chunk: Any) -> None:
        arrays = out_arrays(chunk)
        size = len(next(iter(arrays.values())))
        if self.out is None:  # cleans up after itself
            self.rows = self.rows or TASKS * size
            self.out = chunked_out(self.path, self.total, arrays, self.rows)
        if not self.gathers:
            self._put(arrays)
            return
        self.pending.append(arrays)
        self.waiting += size
        self._flush()

    def _flush(self, last: bool = False) -> None:
        """Write the pending points that fill a block (``last``: all of them)."""
        assert self.rows is not None
        while self.waiting and (last or self.waiting >= self.rows - self.done % self.rows):
            size = min(self.waiting, self.rows - self.done % self.rows)
            pending = {k: np.concatenate([p[k] for p in self.pending]) for k in self.pending[0]}
            self._put({k: a[:size] for k, a in pending.items()})
            self.waiting -= size
            self.pending = [{k: a[size:] for k, a in pending.items()}] if self.waiting else []

    def _put(self, arrays: dict[str, np.ndarray]) -> None:
        try:
            self.out.sink.write(self.parts, self.done, arrays)
        except OSError as exc:
            self.discard()
            raise GradcliError(f"--out {self.path}: cannot write: {exc}") from None
        self.parts += 1
        self.done += len(next(iter(arrays.values())))

    def close(self) -> None:
        if self.out is not None:
            self._flush(last=True)
            self.out.close(self.done, self.parts)

    def discard(self) -> None:
        if self.out is not None:
            self.out.discard()
