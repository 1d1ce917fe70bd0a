"""Exact answers and formulas (``results.Exact``), and derivatives of any order
(``results.HigherDerivatives``), as tables, JSON and CSV.

A table shows each exact number with its float beside it (``sqrt(2)/2 ≈ 0.7071``) unless
the two read the same; formulas are shown as they are. JSON holds the texts under the
command's usual keys (``values``, ``grads``, ``jacobian``, ``hessian``), the floats under
``numbers`` with the same keys; CSV has a column of each.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..results import Exact, ExactBlock, HigherDerivatives
from . import Options, element_label, format_number, renders

_KEYS = {"array": "grads", "jacobian": "jacobian", "hessian": "hessian"}


def _key(result: Exact, block: ExactBlock) -> str:
    """The JSON section of a block: the command's usual key."""
    if result.command == "eval" or (block.kind == "array" and block.name == result.output):
        return "values"
    return _KEYS[block.kind]


def _beside(text: str, number: float, precision: int) -> str:
    """``sqrt(2)/2 ≈ 0.7071``; the text alone when the float reads the same or is not finite."""
    shown = format_number(number, precision)
    return text if shown == text or not math.isfinite(number) else f"{text} ≈ {shown}"


def _cell_texts(block: ExactBlock, precision: int) -> np.ndarray:
    if block.numbers is None:
        return block.texts
    cells = np.empty(block.texts.shape, dtype=object)
    for index in np.ndindex(*block.texts.shape):
        cells[index] = _beside(block.texts[index], float(block.numbers[index]), precision)
    return cells


def _labels(name: str, shape: tuple[int, ...]):
    return lambda i: element_label(name, tuple(int(k) for k in np.unravel_index(i, shape)))


@renders("table", Exact)
def print_exact(result: Exact, file, options: Options) -> None:
    from .table import console, grid, hessian_grid, hessian_ranks, print_array, print_grid

    out = console(file)
    hessians = [b for b in result.blocks if b.kind == "hessian"]
    ranks = hessian_ranks([(b.name, _cell_texts(b, options.precision)) for b in hessians])
    for block in result.blocks:
        cells = _cell_texts(block, options.precision)
        shape = tuple(np.shape(cells))
        what = "formulas" if not result.point else "exact" if block.exact else "with floats"
        out.print(f"{block.label} ({what})  shape {shape}", style="bold")
        if block.kind == "array":
            print_array(out, block.name, cells, options.precision)
        elif block.kind == "hessian":
            print_grid(out, hessian_grid(block.name, cells, options.precision, ranks))
        else:
            rows_shape, columns_shape = result.shape, shape[len(result.shape) :]
            matrix = cells.reshape(math.prod(rows_shape), math.prod(columns_shape))
            g = grid(
                matrix,
                _labels(result.output, rows_shape),
                _labels(block.name, columns_shape),
                str,
                False,
            )
            print_grid(out, g)


@renders("json", Exact)
def _(result: Exact, file, options: Options) -> None:
    from .json_format import _write, plain

    sections: dict[str, Any] = {}
    numbers: dict[str, dict[str, Any]] = {}
    for block in result.blocks:
        key = _key(result, block)
        sections.setdefault(key, {})[block.name] = block.texts.tolist()
        if block.numbers is not None:
            numbers.setdefault(key, {})[block.name] = plain(block.numbers)
    if result.point:
        sections["numbers"] = numbers
        sections["exact"] = all(b.exact for b in result.blocks)
    _write(file, result, **sections)


@renders("csv", Exact)
def _(result: Exact, file, options: Options) -> None:
    from .csv_format import _write, full_precision

    rank = max((b.texts.ndim for b in result.blocks), default=0)
    header = ["tensor", *(f"i{k}" for k in range(rank)), "exact" if result.point else "formula"]
    rows = [header + (["value"] if result.point else [])]
    for block in result.blocks:
        for index in np.ndindex(*block.texts.shape):
            row = [block.label, *index, *[""] * (rank - len(index)), block.texts[index]]
            if block.numbers is not None:
                row.append(full_precision(block.numbers[index]))
            rows.append(row)
    _write(file, rows)


def _rows(result: HigherDerivatives) -> tuple[list[str], list[list]]:
    """The header and rows of a derivative table: one row per order (from 0 with --taylor)."""
    if result.taylor is None:
        rows = [[k + 1, result.label(k), d] for k, d in enumerate(result.derivatives)]
        return ["order", "derivative", "value"], rows
    series = [float(np.asarray(result.value).reshape(())), *result.derivatives]
    labels = [result.output, *(result.label(k) for k in range(len(result.derivatives)))]
    rows = [[k, labels[k], series[k], c] for k, c in enumerate(result.taylor)]
    return ["k", "derivative", "value", "coefficient f^(k)/k!"], rows


@renders("table", HigherDerivatives)
def print_derivatives(result: HigherDerivatives, file, options: Options) -> None:
    from rich.table import Table

    from .table import console, print_array, show, title

    out = console(file)
    out.print(title(result.output, result.value), style="bold")
    print_array(out, result.output, result.value, options.precision)
    header, rows = _rows(result)
    at = ", ".join(dict.fromkeys(result.wrt))
    what = "Taylor coefficients" if result.taylor is not None else "derivatives"
    out.print(f"{what} of {result.output} by {at}", style="bold")
    table = Table(show_edge=True)
    for k, name in enumerate(header):
        table.add_column(name, justify="left" if k == 1 else "right", no_wrap=True)
    for row in rows:
        table.add_row(
            *(v if isinstance(v, str) else format_number(float(v), options.precision) for v in row)
        )
    show(out, table)


@renders("json", HigherDerivatives)
def _(result: HigherDerivatives, file, options: Options) -> None:
    from .json_format import _value, _write, plain

    header, rows = _rows(result)
    derivatives = [
        {"order": k + 1, "wrt": list(result.wrt[: k + 1]), "name": result.label(k), "value": v}
        for k, v in enumerate(plain(result.derivatives))
    ]
    sections: dict[str, Any] = {"values": _value(result), "derivatives": derivatives}
    if result.taylor is not None:
        sections["taylor"] = plain(result.taylor)
    _write(file, result, **sections)


@renders("csv", HigherDerivatives)
def _(result: HigherDerivatives, file, options: Options) -> None:
    from .csv_format import _write, full_precision

    header, rows = _rows(result)
    _write(
        file,
        [
            header,
            *([v if isinstance(v, (str, int)) else full_precision(v) for v in row] for row in rows),
        ],
    )
