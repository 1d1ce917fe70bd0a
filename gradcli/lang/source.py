"""Where a program's text comes from: the command line's argument, --expr, or --file (a path,
or - for stdin), read no further than ``--max-length`` allows."""

from __future__ import annotations

import sys

from ..base import bounds
from ..base.errors import GradcliError
from .values import existing_file, why_unreadable


def read_source(program: str | None, expr: str | None, file: str | None) -> str:
    """The program's text, given exactly once: as ``program`` (the argument), ``expr`` or
    ``file``."""
    if sum(given is not None for given in (program, expr, file)) != 1:
        raise GradcliError(
            "give the program once: as the argument, with --expr, or with --file",
            hint='e.g. gradcli eval "y = x + 2; out = mean(y)" --x 1,2',
        )
    expr = program if program is not None else expr
    if expr is not None:
        return expr
    # never read more than the limit allows: a stream may be endless, a file huge
    most = bounds.limits().max_length
    if file == "-":
        text = sys.stdin.read(most + 1)
        bounds.check_length(text, "the program on stdin", at_least=True)
        return text
    assert file is not None  # one of the three is given (checked above)
    path = existing_file(file, "--file", "check the path, or give the program with --expr")
    try:
        size = path.stat().st_size
        if size > 4 * most:  # UTF-8 takes at most 4 bytes a character
            bounds.check_length(size // 4, f"the program file {file}", at_least=True)
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GradcliError(f"cannot read the program file {file}: {why_unreadable(exc)}") from None
