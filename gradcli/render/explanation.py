"""``explain`` as tables: the forward pass, the backward pass, the leaf gradients, J^T v."""

from __future__ import annotations

import numpy as np
from rich.table import Table

from ..results import Explanation
from . import Options, format_number, renders, short
from .table import console, print_array, show


def local_text(local, precision: int) -> str:
    """``dout/dz[i] = 1/n = 1/4 = 0.25 for each element``: formula, then value."""
    text = f"{local.derivative} = {local.formula}"
    if local.value is None:
        return text
    array = np.asarray(local.value, dtype=float)
    uniform = array.size > 1 and local.layout in ("element-wise", "per element")
    uniform = uniform and bool(np.all(array == array.flat[0]))
    shown = short(array.flat[0] if uniform else array, precision)
    if local.formula != shown and not local.formula.startswith(f"{shown} ("):
        text += f" = {shown}"
    return text + (" for each element" if uniform else "")


@renders("table", Explanation)
def print_explanation(result: Explanation, file, options: Options) -> None:
    precision = options.precision
    out = console(file)
    out.print("forward pass", style="bold")
    forward = Table()
    for column in ("#", "statement", "operation", "value"):
        forward.add_column(column)
    for i, step in enumerate(result.forward, start=1):
        forward.add_row(str(i), step.statement, step.operation, short(step.value, precision))
    show(out, forward)

    out.print("backward pass (reverse order)", style="bold")
    backward = Table()
    for column in ("node", "local derivative", "incoming gradient", "passes on"):
        backward.add_column(column)
    for row in result.backward:
        local = "\n".join(local_text(d, precision) for d in row.local)
        passes = "\n".join(
            f"{part.to}: {short(part.gradient, precision)}" for part in row.passes_on
        )
        backward.add_row(row.node, local, short(row.incoming, precision), passes)
    show(out, backward)

    out.print("leaf gradients", style="bold")
    for name, value in result.grads.items():
        out.print(f"{name}.grad = None" if value is None else f"{name}.grad")
        print_array(out, name, value, precision)

    if result.symbolic is not None:
        _print_symbolic(out, result.output, result.symbolic, precision)
    for note in result.notes:
        out.print(note)


def _print_symbolic(out, output: str, symbolic, precision: int) -> None:
    """For each input, J^T as formulas with v below it, then J^T v."""
    for target, rows in symbolic.jacobian_t.items():
        out.print(f"J^T for {target} (symbolic) and v", style="bold")
        table = Table()
        table.add_column("")
        for i in range(len(rows[0])):
            table.add_column(f"{output}[{i}]")
        for symbol, row in zip(symbolic.symbols[target], rows):
            table.add_row(symbol, *row)
        v = [format_number(float(x), precision) for x in symbolic.v]
        table.add_row("v", *v, style="bold")
        show(out, table)
        jt_v = symbolic.jt_v.get(target)
        out.print(f"J^T v = {None if jt_v is None else short(jt_v, precision)}")
