"""Rich tables, one per array, the shape in the title; every number whole.

A vector is one row, a matrix a grid, and a tensor of three or more dimensions one grid per
slice over its leading dimensions (titled ``[0, :, :]``). Jacobians and Hessians are grids
whose rows and columns are labelled by element (``y[0]``, ``x[1]``, ``x[0,2]``).

Cells are never narrower than their text: on a terminal, a grid wider than the screen is
folded into blocks of whole columns (``columns [0] to [4] of 10``), as torch and numpy fold
wide tensors; off a terminal, the output widens to fit instead, so that scripts and snapshots
see one grid. Large arrays (over 1000 elements) show their edges only, as torch prints them: a
vector its first and last three numbers around ``...`` on a line or two, a matrix its three
edge rows and columns around ``…``.

Each array's numbers share one format (``render.number_format``), chosen from the numbers
shown: ``0.4203  0.4200  1.5000``, never each cell's own trailing zeros dropped.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..engine.sizes import compact
from ..results import (
    HVP,
    JVP,
    VJP,
    Check,
    Derivatives,
    Grads,
    Hessian,
    Jacobian,
    Several,
    Values,
)
from . import (
    Options,
    difference_text,
    distinct,
    element_label,
    number_format,
    renders,
)
from .blocks import Block, blocks

SNAPSHOT_WIDTH = 100
SUMMARY_CELLS = 1000  # a larger array shows its edges only, as torch prints large tensors
EDGE = 3  # rows, columns and slices kept at each edge of a summarised array (torch's edgeitems)


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
    """Print a table whole: off a terminal, the width grows to fit it rather than cut digits;
    on a terminal too narrow for its longest words, each row is printed as lines of
    ``column: text`` instead, so that no word or number is cut."""
    unbounded = out.measure(table, options=out.options.update(width=1_000_000))
    if out.is_terminal and unbounded.minimum + _unbroken(table) > out.width:
        _print_records(out, table)
        return
    if not out.is_terminal:
        needed = unbounded.maximum
        if needed > out.width:
            out.width = needed
            out.print(table)
            out.width = SNAPSHOT_WIDTH
            return
    out.print(table)


def _unbroken(table: Table) -> int:
    """What rich's minimum width leaves out: it measures a column by its longest word, but
    a no_wrap column's texts (a header "coefficient f^(k)/k!") are cut, not broken."""
    extra = 0
    for column in table.columns:
        if column.no_wrap:
            texts = [str(column.header), *(str(cell) for cell in column.cells)]
            widest = max(cell_len(line) for text in texts for line in text.split("\n"))
            word = max(cell_len(w) for text in texts for w in text.split() or [""])
            extra += max(0, widest - max(word, column.min_width or 0))
    return extra


def _print_records(out: Console, table: Table) -> None:
    """A table as records: the first column's text, then ``header: text`` for the others."""
    columns = [(str(column.header), list(column.cells)) for column in table.columns]
    for row in range(table.row_count):
        first_header, first_cells = columns[0]
        out.print(Text(f"{first_header}: " if first_header else "") + Text(str(first_cells[row])))
        for header, cells in columns[1:]:
            text = str(cells[row])
            for k, line in enumerate(text.split("\n")):
                out.print(Text(f"  {header}: " if k == 0 and header else "    ") + Text(line))


def _kept(n: int, summarise: bool) -> list[int | None]:
    """The indices shown: all, or the edges with None where the rest is left out."""
    if not summarise or n <= 2 * EDGE:
        return list(range(n))
    return [*range(EDGE), None, *range(n - EDGE, n)]


def _shown(array: np.ndarray, summarise: bool) -> np.ndarray:
    """The elements a table shows of ``array`` (its edges along every axis when
    ``summarise``): what its number format is chosen from, as torch measures a tensor."""
    if not summarise or array.ndim == 0:
        return array
    kept = [[i for i in _kept(n, True) if i is not None] for n in array.shape]
    return array[np.ix_(*kept)]


def _label(name: str, shape: tuple[int, ...]) -> Callable[[int], str]:
    """The element label of flat index i of an array of ``shape``: ``x[0,2]``."""
    return lambda i: element_label(name, tuple(int(k) for k in np.unravel_index(i, shape)))


@dataclass
class Grid:
    """A matrix of cell texts with row and column labels: what one table shows."""

    row_labels: list[str]
    column_labels: list[str]
    rows: list[list[Text]]
    caption: str = ""
    column_count: int | None = None  # of the matrix, when only its edges are shown


def grid(
    matrix: np.ndarray,
    row_label: Callable[[int], str],
    column_label: Callable[[int], str],
    format_cell: Callable[[object], Text | str],
    summarise: bool,
) -> Grid:
    """The cells of ``matrix`` (only its edges when ``summarise``), each made by ``format_cell``."""
    rows, columns = _kept(matrix.shape[0], summarise), _kept(matrix.shape[1], summarise)
    labels = ["…" if j is None else column_label(j) for j in columns]
    body, names = [], []
    for i in rows:
        names.append("…" if i is None else row_label(i))
        body.append(
            [
                Text("…") if i is None or j is None else _as_text(format_cell(matrix[i, j]))
                for j in columns
            ]
        )
    return Grid(names, labels, body, column_count=matrix.shape[1])


def _as_text(cell: Text | str) -> Text:
    return cell if isinstance(cell, Text) else Text(cell)


# A table draws each column as its text plus one space of padding on either side and one rule.
_COLUMN_FRAME = 3


def _widths(g: Grid) -> tuple[int, list[int]]:
    """The width of the label column and of the data columns: one width for all of them, the
    widest text, so that folded blocks line up."""
    label = max([0, *(cell_len(name) for name in g.row_labels)])
    widest = max(
        [0, *map(cell_len, g.column_labels), *(text.cell_len for row in g.rows for text in row)]
    )
    return label, [widest] * len(g.column_labels)


def _blocks(widths: list[int], room: int) -> list[range]:
    """Runs of whole columns, each as wide as fits in ``room`` (at least one column a run)."""
    runs, start, used = [], 0, 0
    for j, width in enumerate(widths):
        if j > start and used + width + _COLUMN_FRAME > room:
            runs.append(range(start, j))
            start, used = j, 0
        used += width + _COLUMN_FRAME
    runs.append(range(start, len(widths)))
    return runs


def _table(g: Grid, columns: range, label_width: int, widths: list[int]) -> Table:
    table = Table(show_edge=True, pad_edge=True, collapse_padding=False)
    table.add_column("", style="bold", no_wrap=True, min_width=label_width)
    for j in columns:
        table.add_column(g.column_labels[j], justify="right", no_wrap=True, min_width=widths[j])
    for name, row in zip(g.row_labels, g.rows):
        table.add_row(name, *(row[j] for j in columns))
    return table


def print_grid(out: Console, g: Grid) -> None:
    """Print a grid whole: in blocks of columns that fit the terminal, else one element a line.

    Off a terminal the grid is one table, and the output widens to fit it.
    """
    label_width, widths = _widths(g)
    if not out.is_terminal or not widths:
        show(out, _table(g, range(len(widths)), label_width, widths))
    else:
        room = out.width - 1 - (label_width + _COLUMN_FRAME)
        if max(widths) + _COLUMN_FRAME > room:
            _print_elements(out, g)
        else:
            runs = _blocks(widths, room)
            for run in runs:
                if len(runs) > 1:
                    first, last = g.column_labels[run[0]], g.column_labels[run[-1]]
                    span = first if len(run) == 1 else f"{first} to {last}"
                    count = len(widths) if g.column_count is None else g.column_count
                    out.print(f"columns {span} of {count}")
                out.print(_table(g, run, label_width, widths))
    if g.caption:
        out.print(g.caption)


def _print_elements(out: Console, g: Grid) -> None:
    """The last resort of a very narrow terminal: ``row column = value``, one a line."""
    for name, row in zip(g.row_labels, g.rows):
        for header, value in zip(g.column_labels, row):
            line = Text(f"{name} {header} = ".lstrip())
            line.append_text(value)
            out.print(line)


def _summary(size: int) -> str:
    return f"{size:,} values, edges shown: --format json or csv gives all"


def array_grids(name: str, array: np.ndarray, precision: int) -> list[tuple[str, Grid]]:
    """One array as grids: a scalar as one cell, a vector as a row, a matrix as a grid, and a
    tensor of three or more dimensions as one grid per slice, titled ``[0, :, :]``."""
    array = np.asarray(array)
    summarise = array.size > SUMMARY_CELLS
    stack = array.reshape(-1, *array.shape[-2:]) if array.ndim > 2 else array
    number = number_format(_shown(stack, summarise), precision)
    if array.ndim == 0:
        return [("", grid(array.reshape(1, 1), lambda i: name, lambda j: "value", number, False))]
    if array.ndim == 1:
        row = array.reshape(1, -1)
        return [("", grid(row, lambda i: name, _label("", array.shape), number, summarise))]
    lead, matrix_shape = array.shape[:-2], array.shape[-2:]
    rows, columns = _label("", matrix_shape[:1]), _label("", matrix_shape[1:])
    if not lead:
        return [("", grid(array, rows, columns, number, summarise))]
    slices = array.reshape(-1, *matrix_shape)
    grids = []
    for k in _kept(len(slices), summarise):
        if k is None:
            grids.append(("…", Grid([], [], [])))
            continue
        index = ", ".join(str(int(i)) for i in np.unravel_index(k, lead))
        grids.append((f"[{index}, :, :]", grid(slices[k], rows, columns, number, summarise)))
    return grids


def print_array(out: Console, name: str, array: np.ndarray | None, precision: int) -> None:
    """Print one array (see ``array_grids``); nothing for None."""
    if array is None:
        return
    array = _cells(array)
    if array.ndim == 1 and array.size > SUMMARY_CELLS:
        print_edges(out, array, precision)
    else:
        for heading, g in array_grids(name, array, precision):
            if heading:
                out.print(heading)
            if g.column_labels:
                print_grid(out, g)
    if array.size > SUMMARY_CELLS:
        out.print(_summary(array.size))


def print_edges(out: Console, vector: np.ndarray, precision: int) -> None:
    """A long vector as torch prints one: its first and last ``EDGE`` numbers around
    ``...``, in brackets, in one format and one width, broken between numbers to the width."""
    kept = _kept(len(vector), True)
    number = number_format(_shown(vector, True), precision)
    texts = ["..." if i is None else number(vector[i]) for i in kept]
    width = max(cell_len(text) for text in texts)
    cells = [text if text == "..." else text.rjust(width) for text in texts]
    for line in wrapped_row(cells, out.width):
        out.print(Text(line), soft_wrap=True)


def wrapped_row(cells: list[str], width: int) -> list[str]:
    """``[a, b, c]`` in lines no wider than ``width`` (unless a cell is), broken after a
    comma, each continuation indented by one column, as torch breaks a long row."""
    lines, line = [], "["
    for k, cell in enumerate(cells):
        piece = cell + ("]" if k == len(cells) - 1 else ",")
        if line == "[":
            line += piece
        elif cell_len(line) + 1 + cell_len(piece) > width:
            lines.append(line)
            line = " " + piece
        else:
            line += " " + piece
    return [*lines, line]


def _cells(array) -> np.ndarray:
    """Numbers as floats; booleans as True and False; integers, complex numbers and formulas
    (an object array of text) as they are."""
    array = np.asarray(array)
    held = compact(array)
    if held is not array:  # a broadcast view: its elements, converted once, broadcast back
        return np.broadcast_to(_cells(held), array.shape)
    if array.dtype == np.bool_:
        return np.where(array, "True", "False").astype(object)
    if array.dtype.kind in "iu":  # an integer tensor's elements, whole: 2, not 2.0
        return array.astype(str).astype(object)
    if array.dtype == object or array.dtype.kind == "c":  # complex numbers whole: 1+2j
        return array
    return array.astype(float)


def title(label: str, array: np.ndarray | None) -> str:
    return f"{label} = None" if array is None else f"{label}  shape {tuple(np.shape(array))}"


def heatmap_cell(value: float, scale: float, colour: bool, number) -> Text:
    """A Jacobian cell for the heatmap: blank when zero, else shaded by sign and magnitude.

    In colour the number sits on a red (positive) or blue (negative) background whose
    strength follows |value| / scale; in plain text a sign and a bar of up to 8 steps stand
    in for the colour: one to four blocks.
    """
    if value == 0:
        return Text("")
    if not np.isfinite(value):
        return Text(number(value))
    level = min(abs(value) / scale, 1.0) if scale > 0 else 1.0
    if colour:
        strength = int(round(80 + 175 * level))
        fade = 255 - strength + 80
        background = f"rgb(255,{fade},{fade})" if value > 0 else f"rgb({fade},{fade},255)"
        return Text(number(value), style=f"black on {background}")
    return Text(("+" if value > 0 else "-") + "█" * max(1, int(round(level * 4))))


def jacobian_grid(
    result: Derivatives, block: Block, precision, heatmap: bool = False, colour=False
) -> Grid:
    """A Jacobian as a matrix with element labels: rows of the output, columns of the input
    (the other way round when the block is transposed)."""
    name, array, out_shape = block.name, block.array, np.shape(result.value)
    assert array is not None  # only a gradient can be None, and it is no Jacobian
    if block.transposed:
        row_shape = array.shape[: array.ndim - len(out_shape)]
        rows, columns = _label(name, row_shape), _label(result.output, out_shape)
        column_shape = out_shape
    else:
        row_shape, column_shape = out_shape, array.shape[len(out_shape) :]
        rows, columns = _label(result.output, out_shape), _label(name, column_shape)
    matrix = _cells(array).reshape(math.prod(row_shape), math.prod(column_shape))
    summarise = matrix.size > SUMMARY_CELLS
    number = number_format(_shown(matrix, summarise), precision)
    if heatmap and matrix.dtype != object:
        finite = np.abs(matrix[np.isfinite(matrix)])
        scale = float(finite.max()) if finite.size else 0.0
        shade = lambda v: heatmap_cell(float(v), scale, colour, number)  # noqa: E731
        return grid(matrix, rows, columns, shade, summarise)
    return grid(matrix, rows, columns, number, summarise)


def hessian_ranks(blocks: list[tuple[str, np.ndarray | None]]) -> dict[str, int]:
    """Each input's number of dims, from the Hessian's blocks ``(name "a,b", array)``: half
    the dims of its own block "a,a" (a mixed block's split depends on both inputs')."""
    ranks = {}
    for pair, array in blocks:
        first, second = pair.split(",")
        if first == second and array is not None:
            ranks[first] = np.ndim(array) // 2
    return ranks


def hessian_grid(
    pair: str, array: np.ndarray, precision, ranks: dict[str, int] | None = None
) -> Grid:
    """A Hessian block as a matrix: rows by elements of the first input, columns by the second
    (``ranks``: the inputs' numbers of dims, see ``hessian_ranks``)."""
    first, second = pair.split(",")
    half = (ranks or {}).get(first, array.ndim // 2)
    rows, columns = array.shape[:half], array.shape[half:]
    matrix = _cells(array).reshape(math.prod(rows), math.prod(columns))
    summarise = matrix.size > SUMMARY_CELLS
    number = number_format(_shown(matrix, summarise), precision)
    return grid(matrix, _label(first, rows), _label(second, columns), number, summarise)


@renders("table", Values, Grads, VJP, JVP, Hessian, HVP)
def print_tables(result, file, options: Options) -> Console:
    """Print every array of ``result`` as a table to ``file``; returns
    the console, for what a kind of result adds below its tables.

    With ``options.heatmap``, Jacobians are shaded by sign and magnitude instead of printed
    plainly.
    """
    out = console(file)
    colour = out.color_system is not None and not out.no_color
    shown = list(blocks(result))
    ranks = hessian_ranks([(b.name, b.array) for b in shown if b.kind == "hessian"])
    for block in shown:
        out.print(title(block.label, block.array), style="bold")
        if block.kind == "array":
            print_array(out, block.name, block.array, options.precision)
            continue
        if block.kind == "jacobian":
            g = jacobian_grid(result, block, options.precision, options.heatmap, colour)
        else:
            assert block.array is not None  # only a gradient can be None
            g = hessian_grid(block.name, block.array, options.precision, ranks)
        print_grid(out, g)
        if block.array is not None and np.size(block.array) > SUMMARY_CELLS:
            out.print(_summary(np.size(block.array)))
    return out


@renders("table", Jacobian)
def _jacobian(result: Jacobian, file, options: Options) -> None:
    out = print_tables(result, file, options)
    for name, coo in result.sparse.items():
        print_nonzeros(out, result, name, coo, options.precision)
    out.print(f"mode: {result.mode}")


# a sparse Jacobian with more non-zeros shows its first and last ones only
SHOWN_NONZEROS = 20


def print_nonzeros(out: Console, result: Jacobian, name: str, coo, precision: int) -> None:
    """A sparse Jacobian block as a table of its non-zeros: output element, input element,
    value (input first for J^T)."""
    label = f"d{result.output}/d{name}" + ("^T" if result.transposed else "")
    shape = "x".join(str(n) for n in coo.shape)
    out.print(f"{label}  {shape}, {len(coo.values):,} non-zeros", style="bold")
    labels = [_label(result.output, np.shape(result.value)), _label(name, coo.input_shape)]
    row_label, column_label = labels[::-1] if result.transposed else labels
    count = len(coo.values)
    every = count <= 2 * SHOWN_NONZEROS
    kept = (
        range(count)
        if every
        else [*range(SHOWN_NONZEROS), None, *range(count - SHOWN_NONZEROS, count)]
    )
    number = number_format(np.asarray(coo.values), precision)
    table = Table(show_edge=True, pad_edge=True, collapse_padding=False)
    for heading in ("row", "column", "value"):
        table.add_column(heading, justify="right" if heading == "value" else "left", no_wrap=True)
    for k in kept:
        if k is None:
            table.add_row("…", "…", "…")
        else:
            cells = (row_label(coo.rows[k]), column_label(coo.cols[k]))
            table.add_row(*cells, _as_text(number(coo.values[k])))
    out.print(table)
    if not every:
        out.print(
            f"{count:,} non-zeros, first and last shown: --format json or --out J.npz gives all"
        )


@renders("table", Several)
def _several(result: Several, file, options: Options) -> None:
    """A section per output: a heading naming it, then the tables of its answer."""
    from . import renderer

    for part in result.parts:
        console(file).print(f"── {part.output} ──", style="bold")
        renderer(type(part), "table")(part, file, options)


@renders("table", Check)
def _check(result: Check, file, options: Options) -> None:
    """The Jacobians, the verdict, and where they differ (in as many digits as it takes)."""
    out = print_tables(result, file, options)
    verdict = "all methods agree" if result.agree else "the methods DISAGREE"
    out.print(verdict, style="bold green" if result.agree else "bold red")
    for difference in result.worst:
        numbers = distinct(difference.value, difference.reference, options.precision)
        out.print(f"  {difference_text(result.output, difference, numbers)}")
