"""Every command's --help on a terminal of 40 and 80 columns: no word split across lines, no
line broken where the rest of its sentence had room.

The words a help may show are those of the same help on a terminal wide enough to need no
wrapping: a word cut in two (``la`` / ``tex]``) or cut short (``Comma-separa…``) is none of
them. A line of a paragraph or of a table's cell is broken with room when the next line goes
on with the same text, at the same column, and its first word would have fitted at the end
of this one (as a docstring's own line breaks did: ``inputs that require`` / ``grad``).
"""

from __future__ import annotations

import functools

import pytest

from gradcli.cli.app import COMMANDS

from .screen import run_in_terminal

WIDE = 400
BORDERS = str.maketrans(dict.fromkeys("│╭╮╰╯─", " "))


@functools.cache
def shown(command: str | None, columns: int) -> list[str]:
    """The lines of ``gradcli [COMMAND] --help`` on a terminal ``columns`` wide."""
    screen = run_in_terminal([*([command] if command else []), "--help"], columns, rows=400)
    assert screen.status == 0, screen.text
    return screen.lines


def words(lines: list[str]) -> list[str]:
    """The words on the lines, without the comma or colon that may end one (a narrow help
    lists ``-h, --help`` under ``Options:``, a wide one ``--help -h`` in a box)."""
    return [word.rstrip(",:") for word in " ".join(lines).translate(BORDERS).split()]


def broken_with_room(lines: list[str], columns: int) -> list[str]:
    """Each pair of lines where the second goes on with the first one's text although its first
    word would have fitted on the first: ``'first line' / 'second line'``."""
    found = []
    for line, after in zip(lines, lines[1:]):
        text = after.translate(BORDERS)
        if not text.strip():
            continue
        column = len(text) - len(text.lstrip())  # where the next line's text starts
        if after.startswith("│") and column == 2:
            continue  # a new row of a box's table
        before = line.translate(BORDERS)
        if column >= len(before) or before[column] == " ":
            continue  # the line above has no text in that column
        if before[:column].strip() and before[column - 2 : column] != "  ":
            continue  # its text there is inside a cell (a name, a word), not a cell's start
        first = text.split()[0]
        if first.startswith("["):  # Typer's own line of facts: [default: 4], [required]
            continue
        last = len(before.rstrip())
        edge = columns - 2 if line.rstrip().endswith("│") else columns - 1
        if last + 1 + len(first) <= edge:
            found.append(f"{line.strip()!r} / {after.strip()!r}")
    return found


@pytest.mark.parametrize("columns", [40, 80])
@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_breaks_lines_between_words_and_only_where_needed(command, columns):
    lines = shown(command, columns)
    assert max(map(len, lines)) <= columns
    whole = set(words(shown(command, WIDE)))
    cut = [word for word in words(lines) if word not in whole]
    assert not cut, f"words split or cut at {columns} columns: {cut}"
    assert broken_with_room(lines, columns) == []


def test_the_check_finds_a_sentence_broken_with_room():
    """The docstring line breaks that Typer kept (``export --help`` before): caught."""
    lines = [
        " A script computes the output and its Jacobian with respect to the inputs that  ",
        " require                                                                        ",
        " grad (--wrt) at the given point, and prints them as JSON. torch writes the     ",
    ]
    assert broken_with_room(lines, 80) == [
        "'require' / 'grad (--wrt) at the given point, and prints them as JSON. torch writes the'"
    ]
    cell = [
        "│ run          Run a PyTorch script as Python's interactive interpreter would, │",
        "│              printing what torch                                             │",
        "│              prints: print() output, the value of each bare expression,      │",
    ]
    assert len(broken_with_room(cell, 80)) == 1
