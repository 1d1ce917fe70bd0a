"""The error a user sees: what was wrong, where, and what would be right."""

from __future__ import annotations


class GradcliError(Exception):
    """Bad usage or bad input; the command line prints it without a traceback and exits 2.

    ``source`` and ``column`` put a caret under the offending column of a statement or value;
    ``hint`` says what would be right.
    """

    def __init__(
        self,
        message: str,
        *,
        where: str | None = None,
        source: str | None = None,
        column: int | None = None,
        hint: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.where = where
        self.source = source
        self.column = column
        self.hint = hint

    def render(self) -> str:
        """The full text for stderr: the message, the source with a caret, the hint."""
        head = (
            f"error: {self.message}"
            if self.where is None
            else f"error: {self.where}: {self.message}"
        )
        lines = [head]
        if self.source is not None:
            lines.append(f"  {self.source}")
            if self.column is not None:
                lines.append("  " + " " * self.column + "^")
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)
