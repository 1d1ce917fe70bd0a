"""Turning a ``Result`` into text: a rich table (people), JSON (scripts) or CSV (spreadsheets).

Renderers never compute. ``blocks`` lists a result's arrays in one order shared by all three.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..compute import Result

FORMATS = ("table", "json", "csv")
GRAPH_FORMATS = ("table", "dot", "json")


def format_number(value: float, precision: int) -> str:
    """``precision`` significant digits; integers without a point; nan, inf, -inf spelled out."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    return f"{value:.{precision}g}"


def short(array, precision: int = 4, limit: int = 8) -> str:
    """A compact text of an array: all elements when few, else its shape and range."""
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


def _grad_label(result: Result, name: str) -> str:
    return f"{name}.grad" if result.command in ("grad", "explain") else f"J^T v for {name}"


def blocks(result: Result) -> list[tuple[str, str, str, np.ndarray | None]]:
    """(kind, name, label, array) for every array of the result, in display order."""
    items: list[tuple[str, str, str, np.ndarray | None]] = []
    for name, value in result.values.items():
        items.append(("value", name, name, value))
    for name, grad in result.grads.items():
        items.append(("grad", name, _grad_label(result, name), grad))
    for name, value in result.jvp.items():
        items.append(("value", name, f"J t for {name}", value))
    for (a, b), value in result.hessian.items():
        items.append(("hessian", f"{a},{b}", f"d2{result.output}/d{a}d{b}", value))
    for name, value in result.hvp.items():
        items.append(("value", name, f"H v for {name}", value))
    for method, jacobians in result.check.items():
        for name, value in jacobians.items():
            items.append(("jacobian", name, f"d{result.output}/d{name} by {method}", value))
    for name, value in result.jacobian.items():
        label = f"d{result.output}/d{name}"
        items.append(("jacobian", name, label + ("^T" if result.transposed else ""), value))
    for name, value in result.formulas.items():
        if result.jacobian:
            label = f"d{result.output}/d{name}" + ("^T" if result.transposed else "")
            items.append(("jacobian", name, f"{label} (symbolic)", value))
        else:
            items.append(("value", name, f"{_grad_label(result, name)} (symbolic)", value))
    return items


def cell(value, precision: int) -> str:
    """A number in ``precision`` significant digits; a formula as it is."""
    return value if isinstance(value, str) else format_number(float(value), precision)


def _exponent_needed(value: float, precision: int) -> bool:
    """Whether ``precision`` significant digits of ``value`` take an exponent (as %g decides)."""
    return "e" in f"{value:.{precision}g}"


def number_format(array: np.ndarray, precision: int):
    """How a table shows each element of ``array``: ``precision`` significant digits, in
    scientific notation for the whole array when any of its numbers needs an exponent (1e-9
    beside 3e7, as torch does), so that one array never mixes the two notations."""
    values = np.asarray(array)
    if values.dtype == object:
        return lambda v: v if isinstance(v, str) else format_number(float(v), precision)
    finite = np.abs(values[np.isfinite(values) & (values != 0)]).astype(float)
    if finite.size == 0 or not any(
        _exponent_needed(float(v), precision) for v in (finite.min(), finite.max())
    ):
        return lambda v: format_number(float(v), precision)

    def scientific(v) -> str:
        v = float(v)
        if v == 0 or not math.isfinite(v):
            return format_number(v, precision)
        return f"{v:.{precision - 1}e}"

    return scientific


def render(
    result: Result,
    fmt: str,
    precision: int = 4,
    file=None,
    heatmap: bool = False,
    chart: tuple[int | None, int | None] = (None, None),
) -> None:
    """Write ``result`` to ``file`` (stdout by default) as a table, JSON or CSV.

    ``precision`` (significant digits) is for tables; JSON and CSV hold every digit.
    ``chart`` is a plot's width and height in characters (None: fit the terminal).
    """
    file = file or sys.stdout
    if fmt == "table" and result.plot:
        from .chart import line_chart, size
        from .table import console

        out = console(file)
        axis, output, slope = list(result.plot)
        series = [(output, "*", result.plot[output]), (slope, "o", result.plot[slope])]
        for line in line_chart(result.plot[axis], series, axis, *size(out, *chart)):
            out.print(line)
        return
    if fmt == "table" and result.explain:
        from .explanation import print_explanation

        print_explanation(result, precision, file)
        return
    if fmt == "table":
        from .table import print_tables

        print_tables(result, precision, file, heatmap)
        return
    if fmt == "json":
        from .json_format import to_json

        text = to_json(result)
    else:
        from .csv_format import to_csv

        text = to_csv(result)
    file.write(text + "\n")
