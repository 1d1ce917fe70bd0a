"""What gradcli says on stderr: warnings, errors and notes, wrapped to the terminal.

On a terminal a long sentence breaks between words, never inside a word or a number; lines
that show source text (indented, as under an error's caret) are kept as they are. Off a
terminal every line is written as it is, for scripts and logs.
"""

from __future__ import annotations

import os
import sys
import textwrap


def terminal_width(stream) -> int | None:
    """The width of the terminal ``stream`` writes to, or None off a terminal."""
    try:
        if not stream.isatty():
            return None
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return None


def wrap(text: str, width: int | None) -> str:
    """``text`` with every prose line broken between words to ``width`` columns.

    A continuation is indented under the text that follows the line's ``label:``.
    """
    if width is None or width < 20:
        return text
    lines = []
    for line in text.split("\n"):
        if line.startswith(" ") or len(line) <= width:
            lines.append(line)
            continue
        label, sep, _ = line.partition(": ")
        indent = " " * (len(label) + 2) if sep and len(label) < 12 and " " not in label else ""
        lines.extend(
            textwrap.wrap(
                line,
                width,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return "\n".join(lines)


def say(text: str, stream=None) -> None:
    """Write ``text`` and a newline to stderr (or ``stream``), wrapped on a terminal."""
    stream = stream or sys.stderr
    stream.write(wrap(text, terminal_width(stream)) + "\n")
    stream.flush()


class Progress:
    """A progress bar on stderr, drawn only when stderr is a terminal and the work is long.

    It never touches stdout (rich's redirection of stdout and stderr is off), so results
    written there while it runs reach their file or pipe untouched; it disappears when done.
    """

    def __init__(self, total: int, label: str, shown: bool):
        self._bar = None
        if shown and terminal_width(sys.stderr) is not None:
            from rich.console import Console
            from rich.progress import Progress as Bar

            self._bar = Bar(
                transient=True,
                console=Console(file=sys.stderr),
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._task = self._bar.add_task(label, total=total)

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def update(self, done: int) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=done)

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
