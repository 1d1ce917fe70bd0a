"""``torch.autograd.forward_ad`` on the engine's forward mode: ``dual_level`` (a context
manager and decorator), ``make_dual``, ``unpack_dual`` (a named tuple ``.primal``,
``.tangent``), ``enter_dual_level`` and ``exit_dual_level``, with torch's errors.

Inside a dual level every operation computes its output's tangent from its inputs' (each
primitive's forward rule, ``Tensor.tangent``); the level's end takes the tangents away, as
torch's does. One level at a time, as in torch.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, NamedTuple

from ..base.engine_errors import DomainError, GradError
from ..base.torch_text import dtype_repr
from .tensor import Tensor, _forward_mode, _Mode


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` gives: the primal, and the tangent (None without one)."""

    primal: Tensor
    tangent: Tensor | None


class _State:
    """The level entered (-1: none) and what ends it."""

    level = -1
    forward: AbstractContextManager[None] | None = None
    holders: Any = None


def enter_dual_level() -> int:
    """Enter a dual level (forward mode runs) and give its number; torch's error if one is
    entered already."""
    if _State.level >= 0:
        raise GradError("Nested forward mode AD is not supported at the moment")
    forward = _forward_mode(True)
    forward.__enter__()
    _State.forward, _State.holders = forward, _Mode.tangent_holders
    _Mode.tangent_holders = []
    _State.level = 0
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the dual level: forward mode stops and every tangent made in it is taken away."""
    if level is None:
        level = _State.level
    if level != _State.level or level < 0:
        raise GradError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    for held in _Mode.tangent_holders or ():
        tensor = held()
        if tensor is not None:
            tensor.tangent = None
    _Mode.tangent_holders = _State.holders
    assert _State.forward is not None  # entered with the level
    _State.forward.__exit__(None, None, None)
    _State.forward = None
    _State.level = -1


class dual_level:  # noqa: N801 - torch's name
    """``with dual_level():`` runs the block in forward mode (also a decorator)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        exit_dual_level()

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with dual_level():
                return func(*args, **kwargs)

        return wrapper


def check_dual(primal: Tensor, tangent: Tensor) -> None:
    """torch's errors for a primal and tangent that cannot make a dual tensor."""
    for what, value in (("primal", primal), ("tangent", tangent)):
        if value.dtype.kind not in "fc":
            raise DomainError(
                f"Expected {what} to be floating point or complex, but got: "
                f"{dtype_repr(value.dtype)}"
            )
    if tangent.shape != primal.shape:
        raise GradError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(primal.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent``: what the operations on it differentiate in
    forward mode."""
    if (_State.level if level is None else level) < 0:
        raise GradError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    check_dual(tensor, tangent)
    dual = tensor[...]
    dual.tangent = tangent
    assert _Mode.tangent_holders is not None  # inside the level
    _Mode.tangent_holders.append(weakref.ref(dual))
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: a view without the tangent, and the tangent (None
    outside a level or where there is none)."""
    if (_State.level if level is None else level) < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = tensor.tangent
    with _forward_mode(False):
        primal = tensor[...]
    return UnpackedDualTensor(primal, tangent)
