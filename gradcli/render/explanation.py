"""``explain`` as tables: the forward pass, the backward pass, the leaf gradients, J^T v."""

from __future__ import annotations

from rich.table import Table

from ..compute import Result
from .table import console, print_array, show


def print_explanation(result: Result, precision: int, file=None) -> None:
    details = result.explain
    out = console(file)
    out.print("forward pass", style="bold")
    forward = Table()
    for column in ("#", "statement", "operation", "value"):
        forward.add_column(column)
    for i, row in enumerate(details["forward"], start=1):
        forward.add_row(str(i), row["statement"], row["operation"], row["value"])
    show(out, forward)

    out.print("backward pass (reverse order)", style="bold")
    backward = Table()
    for column in ("node", "local derivative", "incoming gradient", "passes on"):
        backward.add_column(column)
    for row in details["backward"]:
        local = "\n".join(f"d{row['node']}/d{d['wrt']} = {d['derivative']}" for d in row["local"])
        passes = "\n".join(f"{p['to']}: {p['gradient']}" for p in row["passes_on"])
        backward.add_row(row["node"], local, row["incoming"], passes)
    show(out, backward)

    out.print("leaf gradients", style="bold")
    for name, value in result.grads.items():
        out.print(f"{name}.grad = None" if value is None else f"{name}.grad")
        print_array(out, name, value, precision)

    for target, rows in details.get("jacobian_t", {}).items():
        out.print(f"J^T for {target} (symbolic) and v", style="bold")
        symbolic = Table()
        symbolic.add_column("")
        for i in range(len(rows[0])):
            symbolic.add_column(f"{result.output}[{i}]")
        for symbol, row in zip(details["symbols"][target], rows):
            symbolic.add_row(symbol, *row)
        symbolic.add_row("v", *details["v"], style="bold")
        show(out, symbolic)
        out.print(f"J^T v = {details['jt_v'].get(target)}")
    for note in details["notes"]:
        out.print(note)
