"""Turning a result (``results``) into text: a rich table (people), JSON (scripts), CSV
(spreadsheets), or Graphviz dot (a graph).

Renderers never compute. Each is registered (``renders``) for the kinds of result and the
format it writes, and ``render`` finds it by the result's type; the modules that hold a
format's renderers are imported only when that format is written. ``blocks.py`` lists a
result's arrays in the order tables show them.
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..base import collector, interrupts
from ..base.errors import GradcliError
from ..base.records import record
from ..results import Difference, Result

# the modules whose renderers write each format
_MODULES = {
    "table": ("table", "chart", "explanation", "graph", "exact"),
    "json": ("json_format", "exact"),
    "csv": ("csv_format", "exact"),
    "dot": ("graph",),
}


@record(kw_only=False, eq=True)
class Options:
    """How a table looks: significant digits, --heatmap (Jacobians), and a chart's width and
    height in characters (None: fit the terminal). JSON and CSV ignore them; dot writes its
    constants in ``precision`` digits."""

    precision: int = 4
    heatmap: bool = False
    width: int | None = None
    height: int | None = None


Renderer = Callable[[Result, object, Options], None]  # (result, file, options)
_RENDERERS: dict[tuple[type, str], Renderer] = {}


def renders(fmt: str, *kinds: type[Result]):
    """Register the decorated function as the renderer of ``kinds`` of result in ``fmt``."""

    def register(function: Renderer) -> Renderer:
        for kind in kinds:
            _RENDERERS[kind, fmt] = function
        return function

    return register


def renderer(kind: type[Result], fmt: str) -> Renderer:
    """The function that writes ``kind`` of result in ``fmt``; a ``GradcliError`` when the
    kind is not written in that format."""
    if fmt not in kind.formats:
        name = getattr(kind, "command", kind.__name__)
        raise GradcliError(
            f"the result of {name} cannot be written as {fmt!r}",
            hint=f"use one of {', '.join(kind.formats)}",
        )
    _load(fmt)
    if (kind, fmt) not in _RENDERERS:  # a bug: the kind lists a format nothing writes
        raise LookupError(f"no {fmt} renderer is registered for {kind.__name__}")
    return _RENDERERS[kind, fmt]


def render(result: Result, fmt: str, options: Options | None = None, file=None) -> None:
    """Write ``result`` to ``file`` (stdout by default) in ``fmt``."""
    renderer(type(result), fmt)(result, file or sys.stdout, options or Options())


def warn(result: Result) -> None:
    """The result's warnings, on stderr."""
    from ..base.notice import say

    for message in result.warnings:
        say(f"warning: {message}")


def emit(result: Result, fmt: str, options: Options | None = None) -> None:
    """A command's answer: its warnings on stderr, then the result on stdout, written whole
    even if Ctrl-C is pressed meanwhile (``base/interrupts.py``)."""
    with interrupts.held():
        warn(result)
        render(result, fmt, options)
        sys.stdout.flush()  # (inside: a buffered answer is out before a press takes effect)


def registered() -> set[tuple[type[Result], str]]:
    """Every (kind of result, format) that has a renderer."""
    _load(*_MODULES)
    return set(_RENDERERS)


def _load(*formats: str) -> None:
    """Import the modules that hold the renderers of ``formats`` (they register them); rich,
    which tables import, with the collector paused (``base/collector.py``)."""
    with collector.paused_for("rich"):
        for fmt in formats:
            for module in _MODULES.get(fmt, ()):
                importlib.import_module(f"{__name__}.{module}")


def format_number(value: float, precision: int) -> str:
    """``precision`` significant digits; integers without a point; nan, inf, -inf spelled out."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    return f"{value:.{precision}g}"


def complex_text(value: complex, precision: int) -> str:
    """A complex number whole, as Python writes one: ``1+2j``, ``0.5-1j``, ``nan+nanj``."""
    real = format_number(value.real, precision)
    imag = format_number(abs(value.imag), precision)
    sign = "-" if value.imag < 0 or math.copysign(1, value.imag) < 0 else "+"
    return f"{real}{sign}{imag}j"


def short(array, precision: int = 4, limit: int = 8) -> str:
    """A compact text of an array: all elements when few, else its shape and range (of a
    boolean array: how many are True)."""
    array = np.asarray(array)
    if array.dtype == np.bool_:
        if array.size <= limit:
            text = np.array2string(array, separator=", ", formatter={"bool": str})
            return text.replace("\n", "")
        return f"shape {array.shape}, {int(array.sum())} True"
    if array.dtype.kind in "iu":  # integers whole
        if array.size <= limit:
            return np.array2string(array, separator=", ").replace("\n", "")
        return f"shape {array.shape}, from {array.min()} to {array.max()}"
    if array.dtype.kind == "c":  # complex numbers whole, never their real parts alone
        if array.size <= limit:
            body = np.array2string(
                array,
                separator=", ",
                formatter={"complex_kind": lambda v: complex_text(complex(v), precision)},
            )
            return body.replace("\n", "")
        largest = format_number(float(np.abs(array).max()), precision)
        return f"shape {array.shape}, complex, |z| up to {largest}"
    array = np.asarray(array, dtype=float)
    if array.size <= limit:
        body = np.array2string(
            array,
            separator=", ",
            formatter={"float_kind": lambda v: format_number(float(v), precision)},
        )
        return body.replace("\n", "")
    low, high = (format_number(float(f(array)), precision) for f in (np.min, np.max))
    return f"shape {array.shape}, from {low} to {high}"


def element_label(name: str, index: tuple[int, ...]) -> str:
    """``y[0]``, ``x[0,2]``, or ``y`` for a scalar."""
    return f"{name}[{','.join(str(i) for i in index)}]" if index else name


def difference_text(output: str, difference: Difference, numbers: tuple[str, str]) -> str:
    """``finite differences differs from reverse mode at dy/dx[0,0]: 1.5 vs 0``, with the
    method's number and reverse mode's written as ``numbers``."""
    where = f"[{','.join(map(str, difference.index))}]" if difference.index else ""
    return (
        f"{difference.method} differs from reverse mode at d{output}/d{difference.wrt}{where}: "
        f"{numbers[0]} vs {numbers[1]}"
    )


def distinct(a: float, b: float, precision: int) -> tuple[str, str]:
    """Two numbers that differ, each in ``precision`` significant digits, or in as many more
    as it takes for their texts to differ too (at most 17, which tells any two floats apart)."""
    digits = precision
    while format_number(a, digits) == format_number(b, digits) and digits < 17 and a != b:
        digits += 1
    return format_number(a, digits), format_number(b, digits)


def _exponent_needed(value: float, precision: int) -> bool:
    """Whether ``precision`` significant digits of ``value`` take an exponent (as %g decides)."""
    return "e" in f"{value:.{precision}g}"


def _decimals(value: float, precision: int) -> int:
    """The decimals of ``value`` in ``precision`` significant digits, trailing zeros dropped."""
    text = f"{value:.{precision}g}"
    return len(text) - text.index(".") - 1 if "." in text else 0


def number_format(array: np.ndarray, precision: int) -> Callable[[Any], str]:
    """How a table shows each element of ``array``: one format for the whole array, as torch
    prints a tensor, chosen from its finite nonzero values (pass only the part a table shows).

    - Whole numbers alone: as integers (``3``, ``-12``).
    - Otherwise fixed, every element with the decimals the most precise one needs in
      ``precision`` significant digits: ``0.4203``, ``0.4200``, ``1.5000``, ``0.0000`` in one
      array (trailing zeros are never dropped from one cell and kept in the next).
    - Scientific (``precision`` significant digits, ``1.500e+01``) for the whole array when a
      number needs an exponent (1e-9 beside 3e7), or, for numbers that are not whole, when the
      largest is over 1000 times the smallest (torch's rule: fixed decimals would give the
      large ones digits they do not have).

    nan, inf and -inf are spelled out in every format.
    """
    values = np.asarray(array)
    if values.dtype == object:
        return lambda v: v if isinstance(v, str) else format_number(float(v), precision)
    if values.dtype.kind == "c":
        return lambda v: complex_text(complex(v), precision)
    shown = np.unique(np.abs(values[np.isfinite(values) & (values != 0)]).astype(float))
    if shown.size == 0:
        return lambda v: format_number(float(v), precision)
    whole = bool(np.all(shown == np.round(shown)))
    smallest, largest = float(shown[0]), float(shown[-1])
    if _exponent_needed(smallest, precision) or _exponent_needed(largest, precision):
        spec = f".{precision - 1}e"
    elif not whole and largest > 1000 * smallest:
        spec = f".{precision - 1}e"
    else:
        spec = f".{max(_decimals(float(v), precision) for v in shown)}f"

    def formatted(v: Any) -> str:
        number = float(v)
        return format(number, spec) if math.isfinite(number) else format_number(number, precision)

    return formatted
