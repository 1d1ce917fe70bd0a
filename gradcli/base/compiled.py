"""Functions compiled by numba, the optional extra ``fast``: on first use, once per process
(numba caches the machine code on disk), or None where numba is not installed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


class Compiled:
    """``function`` compiled by ``numba.njit(**options)`` when first called for, or None
    where numba is not installed: ``Compiled(f, cache=True)()``."""

    def __init__(self, function: Callable[..., Any], **options: Any):
        self._function, self._options = function, options
        self._compiled: list[Callable[..., Any]] = []

    def __call__(self) -> Callable[..., Any] | None:
        if not self._compiled:
            try:
                import numba
            except ImportError:
                return None
            without_blas()
            self._compiled.append(numba.njit(**self._options)(self._function))
        return self._compiled[0]


def without_blas() -> None:
    """numba's array functions, imported by its first compilation or load from its cache,
    look for a BLAS (for ``np.dot`` and its kin, which no kernel here calls) by importing
    scipy.linalg: 0.2 to 0.3 s of CPU time, a tenth of a big batch's JSON lines. They are
    imported here with scipy.linalg unimportable, so they find none: a kernel that called
    ``np.dot`` would fail to compile (but where scipy.linalg was imported before). Nothing
    else changes: scipy.linalg imports as ever afterwards."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    sys.modules["scipy.linalg"] = None  # type: ignore[assignment]  # import raises ImportError
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        del sys.modules["scipy.linalg"]
