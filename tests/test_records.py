"""``records.record`` behaves as ``@dataclass(frozen=True, kw_only=True, eq=False)``, which it
stands for (it only costs less to define): the same fields, construction, errors, repr,
immutability, ``dataclasses`` functions, and classes deriving from it either way."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pytest

from gradcli.base.records import record


def _family(decorate):
    """The same two classes, a base and a derived one, made by ``decorate``."""

    @decorate
    class Base:
        kind: ClassVar[str] = "base"
        output: str
        warnings: tuple[str, ...] = ()

    @decorate
    class Derived(Base):
        value: np.ndarray
        grads: dict = field(default_factory=dict)
        hidden: int = field(default=0, repr=False)

    return Base, Derived


RECORD = _family(record)
DATACLASS = _family(dataclass(frozen=True, kw_only=True, eq=False))


def _made(family, **values):
    return family[1](output="y", value=np.arange(2.0), **values)


def test_the_same_fields_and_defaults():
    for a, b in zip(RECORD, DATACLASS):
        described = [(f.name, f.type, f.default, f.kw_only, f.repr) for f in dataclasses.fields(a)]
        assert described == [
            (f.name, f.type, f.default, f.kw_only, f.repr) for f in dataclasses.fields(b)
        ]
        assert a.__match_args__ == b.__match_args__ == ()
    made = _made(RECORD)
    assert made.warnings == () and made.grads == {} and made.hidden == 0
    assert made.grads is not _made(RECORD).grads  # a new dict each time
    assert dataclasses.is_dataclass(made) and RECORD[1].kind == "base"


def test_the_same_repr():
    assert repr(_made(RECORD, grads={"x": 1})) == repr(_made(DATACLASS, grads={"x": 1}))


@pytest.mark.parametrize(
    "values",
    [{}, {"output": "y"}, {"output": "y", "value": 1, "bogus": 2}],
    ids=["nothing", "a field missing", "an unknown field"],
)
def test_the_same_construction_errors(values):
    messages = []
    for family in (RECORD, DATACLASS):
        with pytest.raises(TypeError) as error:
            family[1](**values)
        messages.append(str(error.value).split("__init__() ")[1])
    assert messages[0] == messages[1]
    with pytest.raises(TypeError):
        RECORD[1]("y", np.arange(2.0))  # keyword-only, as the dataclass


def test_frozen_and_compared_by_identity():
    made = _made(RECORD)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.output = "z"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del made.output  # type: ignore[misc]
    assert made == made and made != _made(RECORD)


def test_replace_and_asdict():
    made = _made(RECORD, grads={"x": 1})
    changed = dataclasses.replace(made, warnings=("w",))
    assert type(changed) is type(made) and changed.warnings == ("w",)
    assert changed.output == "y" and changed.grads == {"x": 1}
    assert dataclasses.asdict(changed)["warnings"] == ("w",)


def test_a_frozen_dataclass_or_a_record_may_derive_from_a_record():
    @dataclass(frozen=True, kw_only=True, eq=False)
    class ByDataclass(RECORD[1]):  # type: ignore[misc,valid-type]
        extra: int = 1

    @record
    class ByRecord(RECORD[1]):  # type: ignore[misc,valid-type]
        extra: int = 2

    for kind, extra in ((ByDataclass, 1), (ByRecord, 2)):
        made = kind(output="y", value=1.0)
        assert (made.output, made.extra) == ("y", extra)
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.extra = 3
    with pytest.raises(TypeError, match="non-frozen"):

        @dataclass(kw_only=True)
        class Thawed(RECORD[1]):  # type: ignore[misc,valid-type]
            pass


# -- record(kw_only=False, eq=True) and record(frozen=False): dataclass's positional, value
# and mutable classes (the IR's nodes, a program's statements, a command's options)


def _values(decorate):
    """The same positional class compared by value, with a __post_init__, made by ``decorate``."""

    @decorate
    class Point:
        x: float
        y: float = 0.0
        tags: tuple = field(default_factory=tuple)
        note: str = field(default="", compare=False)  # neither compared nor hashed

        def __post_init__(self):
            if self.x < 0:
                raise ValueError(f"x must not be negative, got {self.x}")

    return Point


FROZEN = (_values(record(kw_only=False, eq=True)), _values(dataclass(frozen=True)))
MUTABLE = (_values(record(kw_only=False, frozen=False, eq=True)), _values(dataclass))


@pytest.mark.parametrize("pair", [FROZEN, MUTABLE], ids=["frozen", "mutable"])
def test_positional_records_are_built_as_the_dataclass(pair):
    mine, theirs = pair
    for args, kwargs in [((1.0,), {}), ((1.0, 2.0), {}), ((), {"x": 1.0, "y": 2.0})]:
        assert repr(mine(*args, **kwargs)) == repr(theirs(*args, **kwargs))
    assert mine.__match_args__ == theirs.__match_args__ == ("x", "y", "tags", "note")
    for args, kwargs in [
        ((), {}),
        ((1.0, 2.0, (), "", 4), {}),
        ((1.0,), {"x": 2.0}),
        ((), {"z": 1}),
    ]:
        messages = []
        for kind in pair:
            with pytest.raises(TypeError) as error:
                kind(*args, **kwargs)
            messages.append(str(error.value).split("__init__() ")[1])
        assert messages[0] == messages[1]
    for kind in pair:  # __post_init__ runs
        with pytest.raises(ValueError, match="negative"):
            kind(-1.0)


@pytest.mark.parametrize("pair", [FROZEN, MUTABLE], ids=["frozen", "mutable"])
def test_records_compared_by_value_as_the_dataclass(pair):
    nan = float("nan")
    for kind in pair:
        assert kind(1.0, 2.0) == kind(1.0, 2.0) and kind(1.0) != kind(2.0)
        assert kind(nan) == kind(nan)  # the same nan, compared as dataclass does: in a tuple
        assert kind(1.0).__eq__(1.0) is NotImplemented
        assert kind(1.0, tags=(1,)) != kind(1.0)
        assert kind(1.0, note="a") == kind(1.0, note="b")
    mine, theirs = pair
    if pair is FROZEN:
        assert hash(mine(1.0, 2.0)) == hash(theirs(1.0, 2.0)) == hash((1.0, 2.0, ()))
        assert hash(mine(1.0, note="a")) == hash(mine(1.0, note="b"))
        assert len({mine(1, 2), mine(1.0, 2.0)}) == 1
        with pytest.raises(dataclasses.FrozenInstanceError):
            mine(1.0).x = 2.0
    else:
        assert mine.__hash__ is None and theirs.__hash__ is None  # mutable: unhashable
        made = mine(1.0)
        made.x = 3.0
        assert made == mine(3.0)
