"""Terminal line charts: a function and its derivative on one grid of characters."""

from __future__ import annotations

import math

import numpy as np

from . import format_number

WIDTH = 64
HEIGHT = 18


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
) -> str:
    """Plot each (name, mark, ys) over ``xs``; later series draw over earlier ones.

    The y axis spans all finite values; the row of y = 0 is drawn when it is in range.
    """
    finite = np.concatenate([ys[np.isfinite(ys)] for _, _, ys in series] or [np.zeros(0)])
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    grid = [[" "] * width for _ in range(height)]
    zero = _row(0.0, low, high, height) if low <= 0 <= high else None
    if zero is not None:
        grid[zero] = ["-"] * width
    columns = np.linspace(0, width - 1, len(xs)).round().astype(int)
    for _, mark, ys in series:
        for column, y in zip(columns, ys):
            row = _row(float(y), low, high, height)
            if row is not None:
                grid[row][column] = mark
    label_width = max(len(format_number(v, 4)) for v in (low, high))
    lines = []
    for i, cells in enumerate(grid):
        label = (
            format_number(high, 4) if i == 0 else format_number(low, 4) if i == height - 1 else ""
        )
        lines.append(f"{label:>{label_width}} |{''.join(cells)}")
    lines.append(" " * label_width + " +" + "-" * width)
    left, right = format_number(float(xs[0]), 4), format_number(float(xs[-1]), 4)
    lines.append(" " * (label_width + 2) + left + right.rjust(width - len(left)))
    lines.append(" " * (label_width + 2) + x_label.center(width).rstrip())
    legend = "   ".join(f"{mark} {name}" for name, mark, _ in series)
    lines.append(" " * (label_width + 2) + legend)
    return "\n".join(lines)
