"""Functions compiled by numba, the optional extra ``fast``: on first use, once per process
(numba caches the machine code on disk), or None where numba is not installed."""

from __future__ import annotations

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
            self._compiled.append(numba.njit(**self._options)(self._function))
        return self._compiled[0]
