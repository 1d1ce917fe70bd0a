"""Rich tables, one per array, the shape in the title.

Jacobians are laid out as a matrix whose rows and columns are labelled by element
(``y[0]``, ``x[1]``, ``x[0,2]``).
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..compute import Result
from . import blocks, cell, element_label, format_number

SNAPSHOT_WIDTH = 100


def console(file=None) -> Console:
    """A console: colour on a terminal (unless NO_COLOR), plain fixed-width text otherwise."""
    file = file or sys.stdout
    terminal = file.isatty()
    return Console(
        file=file,
        width=None if terminal else SNAPSHOT_WIDTH,
        force_terminal=terminal,
        no_color=not terminal or "NO_COLOR" in os.environ,
        highlight=False,
        markup=False,
        soft_wrap=False,
    )


def show(out: Console, table: Table) -> None:
    """Print a table whole: off a terminal, the width grows to fit it rather than cut digits."""
    if not out.is_terminal:
        needed = out.measure(table, options=out.options.update(width=1_000_000)).maximum
        if needed > out.width:
            out.width = needed
            out.print(table)
            out.width = SNAPSHOT_WIDTH
            return
    out.print(table)


def _cells(array) -> np.ndarray:
    """Numbers as floats; formulas (an object array of text) as they are."""
    array = np.asarray(array)
    return array if array.dtype == object else array.astype(float)


SUMMARY_CELLS = 1000  # a larger table shows its edges only, as numpy prints large arrays
EDGE = 5  # rows and columns kept at each edge of a summarised table


def _kept(n: int, summarise: bool) -> list[int | None]:
    """The indices a table shows: all, or the edges with None where the rest is left out."""
    if not summarise or n <= 2 * EDGE:
        return list(range(n))
    return [*range(EDGE), None, *range(n - EDGE, n)]


def _label(name: str, shape: tuple[int, ...]):
    """The element label of flat index i of an array of ``shape``: ``x[0,2]``."""
    return lambda i: element_label(name, tuple(int(k) for k in np.unravel_index(i, shape)))


def _matrix_table(matrix: np.ndarray, row_label, column_label, format_cell) -> Table:
    """A grid of ``format_cell(value)``; rows and columns named by ``row_label(i)`` and
    ``column_label(j)``. Beyond ``SUMMARY_CELLS`` cells only the edges are shown."""
    summarise = matrix.size > SUMMARY_CELLS
    rows, columns = _kept(matrix.shape[0], summarise), _kept(matrix.shape[1], summarise)
    table = Table(show_edge=True, pad_edge=True)
    table.add_column("", style="bold")
    for j in columns:
        table.add_column("…" if j is None else column_label(j), justify="right", overflow="fold")
    for i in rows:
        if i is None:
            table.add_row("…", *("…" for _ in columns))
            continue
        cells = ("…" if j is None else format_cell(matrix[i, j]) for j in columns)
        table.add_row(row_label(i), *cells)
    if summarise:
        table.caption = f"{matrix.size:,} values, edges shown: --format json or csv gives all"
    return table


def title(label: str, array: np.ndarray | None) -> str:
    return f"{label} = None" if array is None else f"{label}  shape {tuple(np.shape(array))}"


def array_table(name: str, array: np.ndarray | None, precision: int) -> Table | None:
    """One array as a table: a scalar as one cell, a vector as a row, a matrix as a grid."""
    if array is None:
        return None
    array = _cells(array)
    number = lambda v: cell(v, precision)  # noqa: E731
    if array.ndim == 0:
        return _matrix_table(array.reshape(1, 1), lambda i: name, lambda j: "value", number)
    if array.ndim == 1:
        return _matrix_table(array.reshape(1, -1), lambda i: name, _label("", array.shape), number)
    lead = array.shape[:-1]
    matrix = array.reshape(math.prod(lead), array.shape[-1])
    return _matrix_table(matrix, _label("", lead), _label("", array.shape[-1:]), number)


def heatmap_cell(value: float, scale: float, colour: bool, precision: int) -> Text:
    """A Jacobian cell for the heatmap: blank when zero, else shaded by sign and magnitude.

    In colour the number sits on a red (positive) or blue (negative) background whose
    strength follows |value| / scale; in plain text a sign and a bar of up to 8 steps stand
    in for the colour: one to four blocks.
    """
    if value == 0:
        return Text("")
    if not np.isfinite(value):
        return Text(format_number(value, precision))
    level = min(abs(value) / scale, 1.0) if scale > 0 else 1.0
    if colour:
        strength = int(round(80 + 175 * level))
        fade = 255 - strength + 80
        background = f"rgb(255,{fade},{fade})" if value > 0 else f"rgb({fade},{fade},255)"
        return Text(format_number(value, precision), style=f"black on {background}")
    return Text(("+" if value > 0 else "-") + "█" * max(1, int(round(level * 4))))


def jacobian_table(
    result: Result, name: str, array: np.ndarray, precision, heatmap: bool = False, colour=False
) -> Table:
    """A Jacobian as a matrix with element labels: rows of the output, columns of the input."""
    out_shape = result.values[result.output].shape
    if result.transposed:
        row_shape = array.shape[: array.ndim - len(out_shape)]
        rows, columns = _label(name, row_shape), _label(result.output, out_shape)
        column_shape = out_shape
    else:
        row_shape, column_shape = out_shape, array.shape[len(out_shape) :]
        rows, columns = _label(result.output, out_shape), _label(name, column_shape)
    matrix = _cells(array).reshape(math.prod(row_shape), math.prod(column_shape))
    if not heatmap or matrix.dtype == object:
        return _matrix_table(matrix, rows, columns, lambda v: cell(v, precision))
    finite = np.abs(matrix[np.isfinite(matrix)])
    scale = float(finite.max()) if finite.size else 0.0
    return _matrix_table(
        matrix, rows, columns, lambda v: heatmap_cell(float(v), scale, colour, precision)
    )


def hessian_table(pair: str, array: np.ndarray, precision) -> Table:
    """A Hessian block as a matrix: rows by elements of the first input, columns by the second."""
    first, second = pair.split(",")
    half = array.ndim // 2
    rows, columns = array.shape[:half], array.shape[half:]
    matrix = _cells(array).reshape(math.prod(rows), math.prod(columns))
    return _matrix_table(
        matrix, _label(first, rows), _label(second, columns), lambda v: cell(v, precision)
    )


def print_tables(result: Result, precision: int, file=None, heatmap: bool = False) -> None:
    """Print every array of ``result`` as a table to ``file`` (stdout by default).

    With ``heatmap``, Jacobians are shaded by sign and magnitude instead of printed plainly.
    """
    out = console(file)
    colour = out.color_system is not None and not out.no_color
    for kind, name, label, array in blocks(result):
        out.print(title(label, array), style="bold")
        if kind == "jacobian":
            table = jacobian_table(result, name, array, precision, heatmap, colour)
        elif kind == "hessian":
            table = hessian_table(name, array, precision)
        else:
            table = array_table(name, array, precision)
        if table is not None:
            show(out, table)
    if result.mode:
        out.print(f"mode: {result.mode}")
    if result.agree is not None:
        verdict = "all methods agree" if result.agree else "the methods DISAGREE"
        out.print(verdict, style="bold green" if result.agree else "bold red")
        for line in result.worst:
            out.print(f"  {line}")
