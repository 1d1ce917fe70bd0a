"""``record``: ``@dataclass(frozen=True, kw_only=True, eq=False)`` at a fraction of its cost.

``dataclass`` writes a class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__`` and ``__delattr__`` as source text and compiles them while the module is
imported: about half a millisecond a frozen class on this project's machine, at every start
of gradcli (``results``, the IR, the options of a run define two dozen). A record's methods
are written once, here, and read the class's fields; ``dataclass`` itself only collects the
fields. Its ``__init__`` is a loop over the fields, slower than the one ``dataclass`` writes
(about a microsecond a call): for the classes of a command's options and its program, not for
classes made in bulk (the op table's entries and their parameters stay dataclasses). A record
is still a dataclass: ``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass``
take it, a frozen one cannot be changed (``FrozenInstanceError``), and a frozen dataclass may
derive from it.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_):  # what type checkers read; nothing to do as it runs
        return lambda decorator: decorator


T = TypeVar("T")
_MISSING = dataclasses.MISSING


def _init(self, *args: Any, **values: Any) -> None:
    cls = type(self)
    fields = cls.__record_fields__
    if len(args) > cls.__record_positional__:  # in Python's own words, self counted
        most = cls.__record_positional__ + 1
        least = 1 + sum(
            f.default is _MISSING and f.default_factory is _MISSING for f in fields[: most - 1]
        )
        takes = f"{most}" if least == most else f"from {least} to {most}"
        raise TypeError(
            f"{cls.__qualname__}.__init__() takes {takes} positional argument"
            f"{'s' * (most > 1)} but {len(args) + 1} were given"
        )
    missing = []
    for index, f in enumerate(fields):
        if index < len(args):
            if f.name in values:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got multiple values for argument {f.name!r}"
                )
            value = args[index]
        elif f.name in values:
            value = values.pop(f.name)
        elif f.default is not _MISSING:
            value = f.default
        elif f.default_factory is not _MISSING:
            value = f.default_factory()
        else:
            missing.append(repr(f.name))
            continue
        object.__setattr__(self, f.name, value)
    name = f"{cls.__qualname__}.__init__()"
    if values:  # Python names an unknown argument before a missing one
        raise TypeError(f"{name} got an unexpected keyword argument {next(iter(values))!r}")
    if missing:  # in Python's own words for a function's missing arguments
        listed = (
            " and ".join(missing)
            if len(missing) < 3
            else ", and ".join([", ".join(missing[:-1]), missing[-1]])
        )
        kind = "keyword-only " if not cls.__record_positional__ else "positional "
        count = f"{len(missing)} required {kind}argument{'s' * (len(missing) > 1)}"
        raise TypeError(f"{name} missing {count}: {listed}")
    if cls.__record_post_init__ is not None:
        cls.__record_post_init__(self)


def _repr(self) -> str:
    shown = ", ".join(
        f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr
    )
    return f"{type(self).__qualname__}({shown})"


def _eq(self, other: Any) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    values = type(self).__record_values__
    return bool(values(self) == values(other))


def _hash(self) -> int:
    return hash(type(self).__record_hashed__(self))


def _setattr(self, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(
    *, kw_only: bool = True, frozen: bool = True, eq: bool = False
) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(
    kw_only_default=True,
    frozen_default=True,
    eq_default=False,
    field_specifiers=(dataclasses.field,),
)
def record(
    cls: type[T] | None = None, /, *, kw_only: bool = True, frozen: bool = True, eq: bool = False
) -> Any:
    """The class as a dataclass whose methods are written once, here, for every record: by
    default frozen, its fields keyword-only, compared by identity (``@record``); with
    ``kw_only=False`` its fields may be given by position, with ``eq=True`` it compares (and,
    frozen, hashes) by its fields' values, with ``frozen=False`` its fields may be assigned,
    as ``dataclass``'s options do. ``__post_init__`` runs after ``__init__``."""

    def make(cls: type[T]) -> type[T]:
        # Collected as a plain dataclass (which compiles nothing), then marked frozen: what
        # dataclass checks when a class derives from it (frozen from frozen only). Its record
        # bases are unmarked meanwhile, since a plain dataclass may not derive from a frozen
        # one.
        bases = [vars(b)["__dataclass_params__"] for b in cls.__mro__[1:] if _is_record(b)]
        for params in bases:
            params.frozen = False
        try:
            cls = dataclasses.dataclass(init=False, repr=False, eq=False, kw_only=kw_only)(cls)
        finally:
            for params in bases:
                params.frozen = True
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        # the fields compared and hashed, as dataclass chooses them (compare=, hash=)
        compared = tuple(f.name for f in fields if f.compare)
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        attributes: dict[str, Any] = {
            "__init__": _init,
            "__repr__": _repr,
            "__record_fields__": fields,
            "__record_positional__": 0 if kw_only else len(fields),
            "__record_post_init__": getattr(cls, "__post_init__", None),
            "__record_values__": _values_of(compared),
            "__record_hashed__": _values_of(hashed),
        }
        if eq:
            attributes["__eq__"] = _eq
            attributes["__hash__"] = _hash if frozen else None
        if frozen:
            attributes["__setattr__"] = _setattr
            attributes["__delattr__"] = _delattr
        for name, value in attributes.items():
            setattr(cls, name, value)
        cls.__dataclass_params__.frozen = frozen  # type: ignore[attr-defined]
        cls.__dataclass_params__.eq = eq  # type: ignore[attr-defined]
        return cls

    return make if cls is None else make(cls)


def _values_of(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of a record's field values, as ``dataclass`` compares and hashes them (a
    tuple even of one field: ``(nan,) == (nan,)`` holds for the same nan, ``nan == nan``
    does not)."""
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda record: (get(record),)
    return operator.attrgetter(*names) if names else lambda record: ()


def _is_record(cls: type) -> bool:
    return vars(cls).get("__init__") is _init
