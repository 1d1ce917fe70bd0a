"""--help on a narrow terminal: a list (names, then the text indented under them) in place of
Typer's rich table, whose help column there is a word or two wide and cuts longer words with
an ellipsis. From ``NARROW`` columns up, Typer's own help is shown."""

from __future__ import annotations

import shutil
import textwrap

#: The fewest columns at which Typer's table of options reads without cutting words.
NARROW = 64


def narrow() -> bool:
    """Whether the terminal (or $COLUMNS) is too narrow for Typer's table of options."""
    return shutil.get_terminal_size().columns < NARROW


def _wrapped(text: str, width: int, indent: int, first: int | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` columns (a word longer than a line is kept
    whole), indented by ``indent`` (the first line by ``first``)."""
    start = " " * (indent if first is None else first)
    return textwrap.wrap(
        " ".join(text.split()),
        width=width,
        initial_indent=start,
        subsequent_indent=" " * indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [start.rstrip()]


def listed(command, ctx) -> str:
    """The help of ``command`` (a click command or group) as a list for a narrow terminal:
    the usage, its text (each paragraph wrapped), then each panel of options, as Typer groups
    them, and a group's commands."""
    width = shutil.get_terminal_size().columns - 1
    usage = f"Usage: {ctx.command_path} {' '.join(command.collect_usage_pieces(ctx))}"
    lines = ["", *_wrapped(usage, width, 3, 1), ""]
    for paragraph in (command.help or "").split("\n\n"):
        lines += [*_wrapped(paragraph, width, 1), ""]
    panels: dict[str, list[tuple[str, str]]] = {"Arguments": [], "Options": []}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        if param.param_type_name == "argument":
            panel = "Arguments"
        else:
            panel = getattr(param, "rich_help_panel", None) or "Options"
        names, text = record
        text, _, facts = text.partition("  [")  # click's "[default: 4; 1<=x<=17]"
        text += "".join(f" [{fact}]" for fact in facts.rstrip("]").split("; ") if fact)
        panels.setdefault(panel, []).append((names, text))
    if hasattr(command, "list_commands"):
        panels["Commands"] = []
        for name in command.list_commands(ctx):
            text = (command.get_command(ctx, name).help or "").split("\n\n")[0]
            panels["Commands"].append((name, text))
    for panel, records in panels.items():
        if not records:
            continue
        lines.append(f" {panel}:")
        for names, text in records:
            lines += _wrapped(names, width, 5, 2) + _wrapped(text, width, 6)
        lines.append("")
    return "\n".join(lines)
