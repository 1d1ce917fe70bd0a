"""Terminal line charts: a function and its derivative on one grid of characters.

On a terminal the chart fills its width and a share of its height (``--width`` and
``--height`` set them), and each series has its colour unless NO_COLOR is set; off a
terminal it has a fixed size and no colour, so its text can be compared from run to run.
"""

from __future__ import annotations

import math

import numpy as np
from rich.console import Console
from rich.text import Text

from ..results import Plot
from . import Options, format_number, renders

WIDTH = 72  # the whole chart, labels included, off a terminal
HEIGHT = 22
SMALLEST = (24, 8)
STYLES = {"*": "bold cyan", "o": "bold magenta", "-": "dim"}
_FOOTER = 4  # lines under the plotting area: the axis, its two ends, its name, the legend


def size(out: Console, width: int | None, height: int | None) -> tuple[int, int]:
    """The chart's width and height in characters: as asked, else the terminal's (the height
    at most a third of the width, as a square on screen), else the fixed size."""
    if out.is_terminal:
        columns, rows = out.size
        fit = (columns, max(SMALLEST[1], min(rows - 2, columns // 3)))
    else:
        fit = (WIDTH, HEIGHT)
    return max(width or fit[0], SMALLEST[0]), max(height or fit[1], SMALLEST[1])


def _row(value: float, low: float, high: float, height: int) -> int | None:
    if not math.isfinite(value):
        return None
    if high == low:
        return height // 2
    return int(round((high - value) / (high - low) * (height - 1)))


def line_chart(
    xs: np.ndarray,
    series: list[tuple[str, str, np.ndarray]],
    x_label: str,
    width: int = WIDTH,
    height: int = HEIGHT,
    precision: int = 4,
) -> list[Text]:
    """Plot each (name, mark, ys) over ``xs`` in a chart ``width`` x ``height`` characters,
    labels included (their numbers in ``precision`` significant digits); later series draw
    over earlier ones.

    The y axis spans all finite values; the row of y = 0 is drawn when it is in range.
    """
    finite = np.concatenate([ys[np.isfinite(ys)] for _, _, ys in series] or [np.zeros(0)])
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    top, bottom = format_number(high, precision), format_number(low, precision)
    label_width = max(len(top), len(bottom))
    columns = max(width - label_width - 2, 2)
    rows = max(height - _FOOTER, 2)
    grid = [[" "] * columns for _ in range(rows)]
    zero = _row(0.0, low, high, rows) if low <= 0 <= high else None
    if zero is not None:
        grid[zero] = ["-"] * columns
    positions = np.linspace(0, columns - 1, len(xs)).round().astype(int)
    for _, mark, ys in series:
        for column, y in zip(positions, ys):
            row = _row(float(y), low, high, rows)
            if row is not None:
                grid[row][column] = mark
    lines = []
    for i, cells in enumerate(grid):
        label = top if i == 0 else bottom if i == rows - 1 else ""
        line = Text(f"{label:>{label_width}} |")
        for mark in cells:
            line.append(mark, style=STYLES.get(mark))
        lines.append(line)
    margin = " " * (label_width + 2)
    left, right = (format_number(float(x), precision) for x in (xs[0], xs[-1]))
    lines.append(Text(" " * label_width + " +" + "-" * columns))
    lines.append(Text(margin + left + right.rjust(columns - len(left))))
    lines.append(Text(margin + x_label.center(columns).rstrip()))
    legend = Text(margin)
    for k, (name, mark, _) in enumerate(series):
        legend.append("   " if k else "")
        legend.append(mark, style=STYLES.get(mark))
        legend.append(f" {name}")
    lines.append(legend)
    return lines


@renders("table", Plot)
def print_chart(result: Plot, file, options: Options) -> None:
    """The output (``*``) and its derivative (``o``) along the axis."""
    from .table import console

    out = console(file)
    series = [(result.output, "*", result.values), (result.derivative, "o", result.slopes)]
    width, height = size(out, options.width, options.height)
    for line in line_chart(result.positions, series, result.axis, width, height, options.precision):
        out.print(line)


def default_points(fmt: str | None, width: int | None, height: int | None) -> int:
    """How many points a plot has unless told: one a column of the chart when it is drawn on
    a terminal (``fmt`` "table"), else 101 (another format, or None: an image)."""
    from .table import console

    out = console()
    return size(out, width, height)[0] if fmt == "table" and out.is_terminal else 101
