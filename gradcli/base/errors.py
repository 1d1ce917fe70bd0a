"""The error a user sees: what was wrong, where, and what would be right."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from . import engine_errors as engine


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
            source, column = _window(self.source, self.column)
            lines.append(f"  {source}")
            if column is not None:
                lines.append("  " + " " * column + "^")
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def document(self) -> dict[str, str | int | None]:
        """The error as JSON fields, for ``--format json``: what, where, and what is right."""
        return {
            "error": self.message,
            "where": self.where,
            "source": self.source,
            "column": self.column,
            "hint": self.hint,
        }


def optional_module(name: str, missing: str, extra: str) -> Any:
    """The optional package ``name`` (``"pyarrow.parquet"``), else the user's error: the
    ``missing`` message and the pip command of the gradcli ``extra`` that installs it. A folder
    of that name in the working directory (first on the path under ``python -m``) imports as a
    namespace package, without ``__file__``: taken for absent too, not left to fail later as an
    internal error."""
    try:
        module = importlib.import_module(name)
    except ImportError:
        module = None
    if getattr(module, "__file__", None) is None:
        raise GradcliError(missing, hint=f"pip install 'gradcli[{extra}]'")
    return module


# What would be right, for each kind of engine error that reaches the user; a kind not named
# here takes the hint of the nearest kind it is a subclass of.
ENGINE_HINTS: dict[type[engine.EngineError], str] = {
    engine.ShapeError: "the shapes of the operands must fit the operation (see the message)",
    engine.IndexDomainError: "indices count from 0, below the length of their axis (for "
    "cross_entropy: below the number of classes)",
    engine.DomainError: "the operation does not take these values: see what it takes with "
    "`gradcli functions`",
    engine.ScalarOutputError: "the output is not a scalar: give the vector v with --v",
    engine.ComplexOutputError: "the output is complex: give v (complex, as --v 1+0j) for its "
    "vector-Jacobian product, or differentiate a real function of it (abs(y)**2, y.real)",
    engine.SeedShapeError: "give a gradient (v) of the output's shape",
    engine.AssertedError: "the argument is one torch refuses too (see the message)",
    engine.GradError: "gradcli follows PyTorch's autograd rules here (see the message)",
    engine.DtypeError: "gradcli computes in float64 (the default) or float32 (--dtype float32)",
    engine.ValueKindError: "give a tensor, or a tuple of tensors, where the function takes one",
    engine.UnsupportedError: "torch does not take these options together either (see the message)",
    engine.GradcheckError: "the gradients differ from finite differences: the message shows "
    "both Jacobians",
}


def engine_hint(error: engine.EngineError) -> str | None:
    """The hint for ``error``: its own (a ``SizeError``'s names the limit), else its kind's
    (see ``ENGINE_HINTS``)."""
    if isinstance(error, engine.SizeError):
        return error.hint
    for kind in type(error).__mro__:
        if kind in ENGINE_HINTS:
            return ENGINE_HINTS[kind]
    return None


def from_engine(error: engine.EngineError) -> GradcliError:
    """An engine error as the user sees it: its message (PyTorch's) and the hint of its kind."""
    return GradcliError(str(error), hint=engine_hint(error))


WIDTH = 100  # of the source shown under an error; a longer one is cut around the caret


class ArgumentError(GradcliError, TypeError):
    """A keyword argument of a library method (``gradcli.program(...).vjp(vv=...)``) that is
    neither one of the method's parameters nor an input of the program. A ``TypeError``, as
    Python's own unexpected keyword argument is, and a ``GradcliError`` like any bad input."""


def _window(source: str, column: int | None) -> tuple[str, int | None]:
    """``source`` cut to about ``WIDTH`` characters around ``column``, with … where cut."""
    if len(source) <= WIDTH:
        return source, column
    centre = column or 0
    start = max(0, min(centre - WIDTH // 2, len(source) - WIDTH))
    end = start + WIDTH
    shown = ("…" if start else "") + source[start:end] + ("…" if end < len(source) else "")
    return shown, None if column is None else column - start + (1 if start else 0)


LISTED = 10  # names an error lists before "... and N more"
NAME_WIDTH = 60  # characters of one listed name before it is cut with …


def listing(items: Iterable[object], most: int = LISTED, empty: str = "") -> str:
    """``a, b, c``: the first ``most`` items (each cut to ``NAME_WIDTH`` characters), then
    ``... and 19,990 more``, so that an error about a huge list stays a few lines long."""
    items = list(items)
    shown = [shorten(str(item)) for item in items[:most]]
    rest = len(items) - len(shown)
    if rest > 0:
        shown.append(f"... and {rest:,} more")
    return ", ".join(shown) or empty


def shorten(text: str, width: int = NAME_WIDTH) -> str:
    """``text``, cut to ``width`` characters with … when longer."""
    return text if len(text) <= width else text[: width - 1] + "…"
