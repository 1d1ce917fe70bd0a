"""What every store of points and of results shares: the array-likes of rows read from files
(``Stored``, and ``Blocks`` for stores read a block at a time), the memory check of a block,
and where ``--out`` goes (its format by suffix, its target, the folder renamed onto it, the
scratch folder it is written in).
"""

from __future__ import annotations

import bisect
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...base import bounds
from ...base.errors import GradcliError
from ...base.files import new_mode, refuse_folder


class Stored:
    """Rows read from files by their paths (a worker of a cluster reads them itself)."""

    shape: tuple[int, ...]

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: int | slice) -> np.ndarray:
        raise NotImplementedError


class Blocks(Stored):
    """Rows stored in blocks that are read whole (a Zarr chunk, a Parquet row group): a
    slice reads the blocks it covers, and the last blocks read are kept for the next slice,
    so that chunks of rows smaller than a block do not read it again and again. ``edges``:
    where each block starts, and the end."""

    edges: list[int]
    dtype: Any

    def read(self, start: int, stop: int) -> np.ndarray:
        """The rows from ``start`` to ``stop``, both at edges of blocks."""
        raise NotImplementedError

    def __getitem__(self, index: int | slice) -> np.ndarray:
        if isinstance(index, int):
            return self[index : index + 1][0]
        start, stop, _ = index.indices(len(self))
        stop = max(start, stop)
        if start == stop:
            return np.zeros((0, *self.shape[1:]), self.dtype)
        kept = getattr(self, "_kept", None)
        if kept is None or not kept[0] <= start < stop <= kept[1]:
            first = self.edges[bisect.bisect_right(self.edges, start) - 1]
            last = self.edges[bisect.bisect_left(self.edges, stop)]
            kept = self._kept = (first, last, self.read(first, last))
        return kept[2][start - kept[0] : stop - kept[0]]

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}


def check_block(where: str, declared: str, need: int, smaller: str) -> None:
    """Refuse, before any of it is read, a block of stored points (a Zarr chunk, a Parquet
    row group) whose reading alone would take more than the memory budget: ``need`` bytes,
    from what the file ``declared`` of its size (``where``: which file and block)."""
    limit = bounds.budget().max_memory
    if need > limit:
        raise GradcliError(
            f"--batch ({where}) {declared}; reading it would need {bounds.format_bytes(need)} "
            f"of memory, and the budget is {bounds.format_bytes(limit)} (--max-memory)",
            hint=f"raise the budget with --max-memory {bounds.suggest(need)}, or {smaller}",
        )


def is_folder(path: str) -> bool:
    """--out DIR/ (or an existing folder, not a Zarr store): each result a folder of .npy
    parts."""
    return storage_of(path) is None and (path.endswith(("/", os.sep)) or os.path.isdir(path))


def storage_of(path: str) -> str | None:
    """The chunked format --out names by its suffix: ``zarr``, ``parquet``, or None."""
    name = path.rstrip("/").lower()
    return next((kind for kind in ("zarr", "parquet") if name.endswith(f".{kind}")), None)


def out_target(path: str) -> str:
    """The file or folder --out names, absolute, its links resolved: what is replaced."""
    return os.path.realpath(path.rstrip("/") or path)


def replace_folder(new: str, path: str) -> None:
    """Rename the folder ``new`` onto the folder --out ``path`` names (``out_target``),
    which may exist: a folder gradcli wrote, moved aside then removed, or an empty one
    (``files.refuse_folder`` refuses any other, checked again here as the folder may have
    changed while the batch ran). ``new`` takes the mode of the folder it replaces, or the
    mode ``mkdir`` gives a new folder."""
    target = out_target(path)
    refuse_folder(path)
    old = None
    mode = new_mode(0o777)
    if os.path.lexists(target):
        if not os.path.isdir(target):
            raise GradcliError(f"--out {path}: a file of that name is in the way")
        mode = stat.S_IMODE(os.stat(target).st_mode)
        old = tempfile.mkdtemp(prefix=".gradcli-", suffix=".old", dir=os.path.dirname(target))
        os.replace(target, os.path.join(old, "previous"))
    os.chmod(new, mode)
    os.replace(new, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


class ScratchOut:
    """An --out written in a scratch folder beside its target (by this process, or by the
    workers of a cluster), moved onto the target at the end (see ``batch.out.ChunkedOut``,
    ``zarr.ZarrOut``, ``parquet.ParquetOut``)."""

    def __init__(self, path: str):
        self.path = path
        self.target = out_target(path)
        parent = os.path.dirname(self.target)
        self.scratch = tempfile.mkdtemp(prefix=".gradcli-", suffix=".tmp", dir=parent)

    @contextmanager
    def finishing(self) -> Iterator[None]:
        """The end of --out: an ``OSError`` is the user's error, naming --out; the scratch
        folder goes, however it ends."""
        try:
            yield
        except OSError as exc:
            raise GradcliError(f"--out {self.path}: cannot write: {exc}") from None
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove the scratch folder and whatever is left in it."""
        shutil.rmtree(self.scratch, ignore_errors=True)
