"""``jacobian --out``: the Jacobian written to a file instead of printed.

``J.npy`` holds the one dense block (one --wrt input); ``J.npz`` one array per --wrt input,
named after it, or for a sparse Jacobian its coordinates: ``rows``, ``cols``, ``values`` and
``shape`` (``NAME.rows``, ... for each input when there are several); of several outputs
(``--of y,z``), a .npz of every output's arrays, named ``y.x`` (``y.rows``, ``y.x.rows``).
Files are written
atomically (``files.atomic_output``), never over one of the command's inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..base.errors import GradcliError
from ..base.files import atomic_output
from ..results import Jacobian, Several

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


def arrays_of_each(result: Several, path: str) -> dict[str, np.ndarray]:
    """The arrays of several outputs' Jacobians, which take a .npz: each output's as
    ``arrays_of`` names them, after the output (``y.x``; ``y.rows`` when sparse)."""
    if not path.endswith(".npz"):
        raise GradcliError(
            f"--out {path}: there is a Jacobian for each of the outputs {result.output}",
            hint="write them all with --out J.npz",
        )
    return {
        f"{part.output}.{name}" if name else part.output: array
        for part in result.parts
        for name, array in arrays_of(part, path).items()  # type: ignore[arg-type]
    }


def write_jacobian(result: Jacobian | Several, path: str) -> None:
    """The result's warnings to stderr, its Jacobian to ``path``, and a line saying so."""
    from ..base.notice import say
    from ..render import warn

    warn(result)
    if isinstance(result, Several):
        arrays = arrays_of_each(result, path)
        with atomic_output(path) as temporary:
            np.savez(temporary, **arrays)  # type: ignore[arg-type]
        modes = "; ".join(f"{p.output}: {p.mode}" for p in result.parts)  # type: ignore[attr-defined]
        say(f"wrote the Jacobians of {result.output} to {path} ({modes})")
        return
    arrays = arrays_of(result, path)
    with atomic_output(path) as temporary:
        if path.endswith(".npz"):
            np.savez(temporary, **arrays)  # type: ignore[arg-type]
        else:
            np.save(temporary, arrays[""])
    what = "the non-zeros of the Jacobian" if result.sparse else "the Jacobian"
    say(f"wrote {what} of {result.output} to {path} ({result.mode})")
