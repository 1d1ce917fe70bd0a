"""The operations of the op table that the engine's own code applies: ``stack`` (the function
transforms join their results with it), ``cat`` and ``sum_to`` (a custom function's
gradients). Their entries are declared in ``gradcli/ops``, whose modules import the engine, so
the engine does not import them back: the library lends them here as it is assembled
(``ops/library.py``), before any of them can be called.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .tensor import Tensor


class _Lent:
    """The operations lent, each under the name of this module's function that applies it."""

    stack: Callable[..., Tensor]
    cat: Callable[..., Tensor]
    sum_to: Callable[..., Tensor]


_LENT = _Lent()


def lend(
    stack: Callable[..., Tensor], cat: Callable[..., Tensor], sum_to: Callable[..., Tensor]
) -> None:
    """Take the operations the engine applies (the library's, as it is assembled)."""
    _LENT.stack, _LENT.cat, _LENT.sum_to = stack, cat, sum_to


def stack(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    """The op table's ``stack``: same-shaped tensors joined along a new dimension."""
    return _LENT.stack(tensors, dim)


def cat(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    """The op table's ``cat``: tensors joined along the existing dimension ``dim``."""
    return _LENT.cat(tensors, dim)


def sum_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """The op table's ``sum_to``: ``x`` summed down to ``shape``, broadcasting's reverse."""
    return _LENT.sum_to(x, shape)
