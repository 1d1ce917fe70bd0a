"""``record``: ``@dataclass(frozen=True, kw_only=True, eq=False)`` at a fraction of its cost.

``dataclass`` writes a class's ``__init__``, ``__repr__``, ``__setattr__`` and ``__delattr__``
as source text and compiles them while the module is imported: over a millisecond a frozen
class on this project's machine, at every start of gradcli (``results`` defines a dozen). A
record's four methods are written once, here, and read the class's fields; ``dataclass``
itself only collects the fields. A record is still a dataclass: ``dataclasses.fields``,
``replace``, ``asdict`` and ``is_dataclass`` take it, its instances cannot be changed
(``FrozenInstanceError``), and a frozen dataclass may derive from it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_):  # what type checkers read; nothing to do as it runs
        return lambda decorator: decorator


T = TypeVar("T")
_MISSING = dataclasses.MISSING


def _init(self, **values: Any) -> None:
    missing = []
    for f in dataclasses.fields(self):
        if f.name in values:
            value = values.pop(f.name)
        elif f.default is not _MISSING:
            value = f.default
        elif f.default_factory is not _MISSING:
            value = f.default_factory()
        else:
            missing.append(repr(f.name))
            continue
        object.__setattr__(self, f.name, value)
    name = f"{type(self).__qualname__}.__init__()"
    if missing:  # in Python's own words for a function's missing arguments
        listed = (
            " and ".join(missing)
            if len(missing) < 3
            else ", and ".join([", ".join(missing[:-1]), missing[-1]])
        )
        count = f"{len(missing)} required keyword-only argument{'s' * (len(missing) > 1)}"
        raise TypeError(f"{name} missing {count}: {listed}")
    if values:
        raise TypeError(f"{name} got an unexpected keyword argument {next(iter(values))!r}")


def _repr(self) -> str:
    shown = ", ".join(
        f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr
    )
    return f"{type(self).__qualname__}({shown})"


def _setattr(self, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


@dataclass_transform(
    kw_only_default=True,
    frozen_default=True,
    eq_default=False,
    field_specifiers=(dataclasses.field,),
)
def record(cls: type[T]) -> type[T]:
    """The class as a frozen dataclass whose fields are keyword-only, compared by identity."""
    # Collected as a plain dataclass (which compiles nothing), then marked frozen: what
    # dataclass checks when a class derives from it (frozen from frozen only). Its record
    # bases are unmarked meanwhile, since a plain dataclass may not derive from a frozen one.
    bases = [vars(b)["__dataclass_params__"] for b in cls.__mro__[1:] if _is_record(b)]
    for params in bases:
        params.frozen = False
    try:
        cls = dataclasses.dataclass(init=False, repr=False, eq=False, kw_only=True)(cls)
    finally:
        for params in bases:
            params.frozen = True
    cls.__init__ = _init  # type: ignore[misc,method-assign]
    cls.__repr__ = _repr  # type: ignore[method-assign,assignment]
    cls.__setattr__ = _setattr  # type: ignore[method-assign,assignment]
    cls.__delattr__ = _delattr  # type: ignore[method-assign,assignment]
    cls.__dataclass_params__.frozen = True  # type: ignore[attr-defined]
    return cls


def _is_record(cls: type) -> bool:
    return vars(cls).get("__init__") is _init
