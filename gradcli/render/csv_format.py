"""CSV: tidy, one row per element, ``tensor,i0,i1,...,value``; numbers at full precision.

``tensor`` names each array by its place in the JSON of the same result, its keys joined by
dots: ``values.y``, ``grads.x``, ``jacobian.x``, ``hessian.x,x``, ``check.forward.x``, and
with several outputs ``jacobian.y.x`` (the JSON's ``"jacobian": {"y": {"x": ...}}``).

There are as many index columns as the highest rank among the result's arrays; an array of
lower rank leaves the rest blank, a scalar all of them. A Jacobian's index is the output's
followed by the input's (the input's first when transposed), a Hessian block's the first
input's followed by the second's. A gradient that is None is one row with a blank value.
Numbers are written as Python's ``repr``, which reads back to the same float; NaN and the
infinities as ``nan``, ``inf``, ``-inf``; ``--symbolic`` formulas as text. ``plot`` is one
column per series instead.
"""

from __future__ import annotations

import csv
import io
from functools import singledispatch

import numpy as np

from ..results import (
    HVP,
    JVP,
    VJP,
    Check,
    Explanation,
    Grads,
    Hessian,
    Jacobian,
    Plot,
    Several,
    Values,
)
from . import Options, renders


def full_precision(value) -> str:
    """A number as the shortest text that reads back to the same float; a boolean as true or
    false; an integer whole; a complex number as Python writes it, (1+2j); a formula as it
    is."""
    if isinstance(value, (complex, np.complexfloating)):
        return repr(complex(value))
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):  # an integer tensor's element
        return str(int(value))
    return value if isinstance(value, str) else repr(float(value))


def _write(file, rows) -> None:
    """The rows as CSV, ending in one newline."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    file.write(buffer.getvalue().rstrip("\n") + "\n")


Keyed = list[tuple[str, object]]  # (the JSON's keys joined by dots, the array)


def _section(section: str, arrays: dict) -> Keyed:
    return [(f"{section}.{name}", array) for name, array in arrays.items()]


@singledispatch
def keyed(result) -> Keyed:
    """Every array of ``result`` under its JSON keys, in the JSON's order."""
    raise TypeError(f"{type(result).__name__} has no CSV form")


@keyed.register
def _(result: Values) -> Keyed:
    return _section("values", result.values)


@keyed.register(Grads)
@keyed.register(VJP)
def _(result: Grads | VJP) -> Keyed:
    grads = {**result.grads, **getattr(result, "shown", {})}
    return (
        _section("values", result.output_values)
        + _section("grads", grads)
        + _section("symbolic", result.formulas)
    )


@keyed.register
def _(result: Explanation) -> Keyed:
    return _section("values", result.output_values) + _section("grads", result.grads)


@keyed.register
def _(result: Jacobian) -> Keyed:
    return (
        _section("values", result.output_values)
        + _section("jacobian", result.jacobians)
        + _section("symbolic", result.formulas)
    )


@keyed.register
def _(result: JVP) -> Keyed:
    values = _section("values", result.output_values)
    return values + _section("jvp", {result.output: result.tangent})


@keyed.register
def _(result: Hessian) -> Keyed:
    blocks = {f"{a},{b}": value for (a, b), value in result.blocks.items()}
    return _section("values", result.output_values) + _section("hessian", blocks)


@keyed.register
def _(result: HVP) -> Keyed:
    return _section("values", result.output_values) + _section("hvp", result.products)


@keyed.register
def _(result: Check) -> Keyed:
    methods = [_section(f"check.{m}", jacobians) for m, jacobians in result.jacobians.items()]
    return _section("values", result.output_values) + [item for m in methods for item in m]


@keyed.register
def _(result: Several) -> Keyed:
    """Each output's arrays, section by section as in the JSON: ``values`` and ``jvp`` keyed
    by the output already, every other section with the output's name after its own."""
    sections: dict[str, Keyed] = {}
    for part in result.parts:
        for key, array in keyed(part):
            section, _, rest = key.partition(".")
            inner = rest if section in ("values", "jvp") else f"{part.output}.{rest}"
            sections.setdefault(section, []).append((f"{section}.{inner}", array))
    return [item for items in sections.values() for item in items]


@renders("csv", Values, Grads, VJP, Jacobian, JVP, Hessian, HVP, Check, Explanation, Several)
def tidy(result, file, options: Options) -> None:
    """One row per element of every array of ``result``."""
    arrays = [(key, None if a is None else np.asarray(a)) for key, a in keyed(result)]
    rank = max((a.ndim for _, a in arrays if a is not None), default=0)
    rows = [["tensor", *(f"i{k}" for k in range(rank)), "value"]]
    for label, array in arrays:
        if array is None:
            rows.append([label, *[""] * rank, ""])
            continue
        for index in np.ndindex(array.shape):
            blank = [""] * (rank - len(index))
            rows.append([label, *index, *blank, full_precision(array[index])])
    _write(file, rows)


@renders("csv", Plot)
def columns(result: Plot, file, options: Options) -> None:
    """One table: a column per series, a row per position."""
    series = result.series
    rows = [list(series)]
    rows += [[full_precision(v) for v in row] for row in zip(*series.values())]
    _write(file, rows)
