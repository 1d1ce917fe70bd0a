"""Points stored in chunks, opened by their kind: a Zarr store (``zarr.py``), a Parquet
file or folder of Parquet parts (``parquet.py``), or a folder of .npy parts (``chunked.py``).
"""

from __future__ import annotations

from .base import Stored
from .chunked import read_parts


def read_stored(path: str) -> dict[str, Stored]:
    """``@points.zarr`` (``zarr.py``), ``@points.parquet`` or a folder of Parquet parts
    (``parquet.py``), or a folder of .npy parts."""
    from .parquet import is_parquet, read_parquet  # imported when points are read from them
    from .zarr import is_store, read_store

    if is_store(path):
        return dict(read_store(path))
    if is_parquet(path):
        return dict(read_parquet(path))
    return dict(read_parts(path))
