"""Rich tables, one per array, the shape in the title.

Jacobians are laid out as a matrix whose rows and columns are labelled by element
(``y[0]``, ``x[1]``, ``x[0,2]``).
"""

from __future__ import annotations

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
        needed = out.measure(table).maximum
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


def _indices(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    return list(np.ndindex(*shape)) if shape else [()]


def _matrix_table(array: np.ndarray, row_labels, column_labels, precision) -> Table:
    table = Table(show_edge=True, pad_edge=True)
    table.add_column("", style="bold")
    for label in column_labels:
        table.add_column(label, justify="right", overflow="fold")
    for label, row in zip(row_labels, array):
        table.add_row(label, *(cell(v, precision) for v in row))
    return table


def title(label: str, array: np.ndarray | None) -> str:
    return f"{label} = None" if array is None else f"{label}  shape {tuple(np.shape(array))}"


def array_table(name: str, array: np.ndarray | None, precision: int) -> Table | None:
    """One array as a table: a scalar as one cell, a vector as a row, a matrix as a grid."""
    if array is None:
        return None
    array = _cells(array)
    if array.ndim == 0:
        return _matrix_table(array.reshape(1, 1), [name], ["value"], precision)
    if array.ndim == 1:
        columns = [f"[{i}]" for i in range(array.shape[0])]
        return _matrix_table(array.reshape(1, -1), [name], columns, precision)
    lead = _indices(array.shape[:-1])
    rows = [f"[{','.join(str(i) for i in index)}]" for index in lead]
    columns = [f"[{j}]" for j in range(array.shape[-1])]
    return _matrix_table(array.reshape(len(lead), array.shape[-1]), rows, columns, precision)


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
        in_shape = array.shape[: array.ndim - len(out_shape)]
        row_names = [element_label(name, i) for i in _indices(in_shape)]
        column_names = [element_label(result.output, i) for i in _indices(out_shape)]
    else:
        in_shape = array.shape[len(out_shape) :]
        row_names = [element_label(result.output, i) for i in _indices(out_shape)]
        column_names = [element_label(name, i) for i in _indices(in_shape)]
    matrix = _cells(array).reshape(len(row_names), len(column_names))
    if not heatmap or matrix.dtype == object:
        return _matrix_table(matrix, row_names, column_names, precision)
    finite = np.abs(matrix[np.isfinite(matrix)])
    scale = float(finite.max()) if finite.size else 0.0
    table = Table(show_edge=True, pad_edge=True)
    table.add_column("", style="bold")
    for label in column_names:
        table.add_column(label, justify="right", overflow="fold")
    for label, row in zip(row_names, matrix):
        table.add_row(label, *(heatmap_cell(float(v), scale, colour, precision) for v in row))
    return table


def hessian_table(pair: str, array: np.ndarray, precision) -> Table:
    """A Hessian block as a matrix: rows by elements of the first input, columns by the second."""
    first, second = pair.split(",")
    half = array.ndim // 2
    rows = [element_label(first, i) for i in _indices(array.shape[:half])]
    columns = [element_label(second, i) for i in _indices(array.shape[half:])]
    matrix = _cells(array).reshape(len(rows), len(columns))
    return _matrix_table(matrix, rows, columns, precision)


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
