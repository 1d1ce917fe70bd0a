"""The language's function reference, made from the op table: ``gradcli functions`` prints it
as text, Markdown (the reference of docs/language.md is this, verbatim) or JSON."""

from __future__ import annotations

import json
import textwrap
from dataclasses import asdict, dataclass

from .functions import ALIASES, FUNCTIONS, Op
from .values import CONSTRUCTORS

FORMATS = ("text", "markdown", "json")
CONSTANTS = ("e", "pi")


def _spellings(op: Op) -> list[str]:
    """How else a program or PyTorch code writes it: operator, methods, property, aliases."""
    found = []
    if op.operator in ("+", "-", "*", "/", "**", "@"):
        found.append(f"a {op.operator} b")
    elif op.operator == "-x":
        found.append("-x")
    elif op.operator is not None:
        found.append(op.operator)
    more = "..." if len(op.params) > 1 else ""  # a method takes the rest of the arguments
    found += [f"x.{m}({more})" for m in op.methods if not m.startswith("__")]
    if "property" in op.extra:
        found.append(f"x.{op.extra['property']}")
    found += list(op.aliases)
    return found


@dataclass(frozen=True)
class Entry:
    """One function as the reference lists it."""

    name: str
    signature: str
    summary: str
    also: tuple[str, ...]  # other spellings: operator, methods, property, aliases
    kink: str  # PyTorch's convention at kinks and ties ("" where there is none)
    differentiable: bool


def entries() -> list[Entry]:
    """One entry per function, by name."""
    return [
        Entry(name, op.signature(), op.summary, tuple(_spellings(op)), op.kink, op.differentiable)
        for name, op in sorted(FUNCTIONS.items())
    ]


def text(width: int | None = None) -> str:
    """Signatures in a column beside their summaries; on a terminal of ``width`` columns too
    narrow for that, each signature above its summary, every line wrapped between words."""
    columns = []
    for entry in entries():
        columns.append(f"{entry.signature:<60} {entry.summary}")
        if entry.kink:
            columns.append(f"{'':<60}   at kinks: {entry.kink}")
    tail = [
        "aliases: " + ", ".join(f"{a} = {n}" for a, n in ALIASES.items()),
        f"constants: {', '.join(CONSTANTS)}",
        f"inputs with defaults: {', '.join(CONSTRUCTORS)}",
    ]
    if width is None or max(map(len, columns)) <= width:
        return "\n".join([*columns, *tail]) + "\n"
    stacked = []
    for entry in entries():
        stacked.append(_indented(entry.signature, width, "", "    "))
        stacked.append(_indented(entry.summary, width, "    ", "      "))
        if entry.kink:
            stacked.append(_indented(f"at kinks: {entry.kink}", width, "    ", "      "))
    stacked += [_indented(line, width, "", "  ") for line in tail]
    return "\n".join(stacked) + "\n"


def _indented(line: str, width: int, first: str, rest: str) -> str:
    """``line`` wrapped to ``width`` between words (a hyphenated word stays whole)."""
    return textwrap.fill(
        line,
        width,
        initial_indent=first,
        subsequent_indent=rest,
        break_on_hyphens=False,
        break_long_words=False,
    )


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def markdown() -> str:
    rows = [
        "| function | also written | what it does | PyTorch's convention at kinks |",
        "|---|---|---|---|",
    ]
    for entry in entries():
        also = ", ".join(f"`{s}`" for s in entry.also)
        cells = (f"`{entry.signature}`", also, entry.summary, entry.kink)
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    rows.append("")
    rows.append(
        f"{len(FUNCTIONS)} functions. Constants: {', '.join(f'`{c}`' for c in CONSTANTS)}. "
        f"Inputs with defaults: {', '.join(f'`{c}`' for c in CONSTRUCTORS)}."
    )
    return "\n".join(rows) + "\n"


def as_json() -> str:
    document = {
        "functions": [asdict(entry) for entry in entries()],
        "constants": list(CONSTANTS),
        "constructors": list(CONSTRUCTORS),
    }
    return json.dumps(document, indent=2) + "\n"


def render(format: str, width: int | None = None) -> str:
    """The reference in ``format``; text fits a terminal of ``width`` columns (None: off a
    terminal, one line an entry)."""
    if format == "text":
        return text(width)
    return {"markdown": markdown, "json": as_json}[format]()
