"""``jacobian --out``: the Jacobian written to a file instead of printed.

``J.npy`` holds the one dense block (one --wrt input); ``J.npz`` one array per --wrt input,
named after it, or for a sparse Jacobian its coordinates: ``rows``, ``cols``, ``values`` and
``shape`` (``NAME.rows``, ... for each input when there are several). Files are written
atomically (``files.atomic_output``), never over one of the command's inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import GradcliError
from .files import atomic_output
from .results import Jacobian

SUFFIXES = (".npy", ".npz")


def check_jacobian_out(path: str | None, fmt: str) -> None:
    """Fail before any work when --out cannot be written."""
    if path is None:
        return
    if not path.endswith(SUFFIXES):
        raise GradcliError(f"--out {path}: unknown file type", hint="use J.npy or J.npz")
    folder = Path(path).parent
    if not folder.is_dir():
        raise GradcliError(f"--out {path}: no such folder {folder}")


def arrays_of(result: Jacobian, path: str) -> dict[str, np.ndarray]:
    """The arrays ``path`` will hold (one for a .npy, by name for a .npz)."""
    if result.sparse:
        if not path.endswith(".npz"):
            raise GradcliError(
                f"--out {path}: a sparse Jacobian is written as coordinates (rows, cols, "
                "values, shape), which take a .npz",
                hint="use --out J.npz, or --mode dense for a dense J.npy",
            )
        several = len(result.sparse) > 1
        arrays = {}
        for name, coo in result.sparse.items():
            prefix = f"{name}." if several else ""
            arrays[prefix + "rows"] = np.asarray(coo.rows, dtype=np.int64)
            arrays[prefix + "cols"] = np.asarray(coo.cols, dtype=np.int64)
            arrays[prefix + "values"] = np.asarray(coo.values)
            arrays[prefix + "shape"] = np.asarray(coo.shape, dtype=np.int64)
        return arrays
    if path.endswith(".npz"):
        return dict(result.jacobians)
    if len(result.jacobians) != 1:
        names = ", ".join(result.jacobians)
        raise GradcliError(
            f"--out {path}: there are {len(result.jacobians)} Jacobians ({names})",
            hint="write them all with --out J.npz",
        )
    (array,) = result.jacobians.values()
    return {"": array}


def write_jacobian(result: Jacobian, path: str) -> None:
    """The result's warnings to stderr, its Jacobian to ``path``, and a line saying so."""
    from .notice import say
    from .render import warn

    warn(result)
    arrays = arrays_of(result, path)
    with atomic_output(path) as temporary:
        if path.endswith(".npz"):
            np.savez(temporary, **arrays)  # type: ignore[arg-type]
        else:
            np.save(temporary, arrays[""])
    what = "the non-zeros of the Jacobian" if result.sparse else "the Jacobian"
    say(f"wrote {what} of {result.output} to {path} ({result.mode})")
