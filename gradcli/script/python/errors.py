"""Where a script's errors happened, and the two kinds of them.

A Python exception the script raises (torch's ``RuntimeError``, Python's ``NameError``, a
``raise`` of its own) is a real exception object of a whitelisted class; it may be caught by
the script's ``try``. As it leaves a statement it records where (``note``): the line, the
function, and the columns of the expression at fault (Python's carets). One that leaves the
script ends the run with Python's traceback on stderr, exit 1.

What gradcli does not take, and a limit passed, is a ``GradcliError`` (exit 2): never caught
by the script, it names the line and puts a caret under the construct.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...base import engine_errors as engine
from ...base.errors import GradcliError, engine_hint

# The exceptions a script may raise, catch and name (builtins.py gives them their names).
SCRIPT_EXCEPTIONS: tuple[type[BaseException], ...] = (
    ArithmeticError,
    AssertionError,
    AttributeError,
    ImportError,
    Exception,
    IndexError,
    KeyError,
    LookupError,
    NameError,
    NotImplementedError,
    OverflowError,
    RecursionError,
    RuntimeError,
    StopIteration,
    TypeError,
    UnboundLocalError,
    ValueError,
    ZeroDivisionError,
)


class GradcheckError(RuntimeError):
    """torch's ``torch.autograd.gradcheck.GradcheckError`` (a ``RuntimeError``), as a script
    sees a gradient check that failed."""


GradcheckError.__module__ = "torch.autograd.gradcheck"
# torch's own exceptions a script may hold (``type(e)`` gives them, printed by torch's names)
TORCH_EXCEPTIONS: tuple[type[Exception], ...] = (GradcheckError,)

# The exception torch raises for each kind of the engine's refusals, most specific first (a
# shape refused is torch's RuntimeError in its operations, a ValueError in torch.func's)
_TORCH_KINDS: tuple[tuple[type[engine.EngineError], type[Exception] | None], ...] = (
    (engine.GradcheckError, GradcheckError),
    (engine.GradError, RuntimeError),
    (engine.ShapeError, None),
    (engine.IndexDomainError, IndexError),
    (engine.DomainError, ValueError),
    (engine.DtypeError, TypeError),
    (engine.ValueKindError, TypeError),
    (engine.UnsupportedError, NotImplementedError),
)


def as_torch(
    exc: engine.EngineError, shapes: type[Exception] = RuntimeError
) -> BaseException | None:
    """The engine's refusal ``exc`` as the exception torch raises for it (its class named as
    torch's, never gradcli's; ``shapes``: the class of a shape refused), with the places it
    has passed through; None for a refusal that is gradcli's own (what it does not take:
    the caller makes it a ``GradcliError``)."""
    found = next((k for e, k in _TORCH_KINDS if isinstance(exc, e)), Exception)
    kind: type[BaseException] = shapes if found is None else found
    if kind is Exception:
        kind = next((k for k in type(exc).__mro__ if k in SCRIPT_EXCEPTIONS), Exception)
        if kind is Exception:
            return None
    made = kind(*exc.args)
    for carried in ("_gradcli_places", "_gradcli_span"):
        if hasattr(exc, carried):
            setattr(made, carried, getattr(exc, carried))
    return made


# The columns of an expression on its line: (start, end), and the part of it Python's carets
# mark with '^' (the rest with '~'): (left, right)
Span = tuple[int, int, int, int]


@dataclass
class Place:
    """A frame of a traceback: a line of the script, in a function (``<module>`` at top)."""

    depth: int  # the call depth of the frame (0: the module)
    line: int
    function: str
    span: Span | None = None  # the columns on ``line`` Python marks with carets


def places(exc: BaseException) -> list[Place]:
    """The frames ``exc`` has passed through, innermost first."""
    found = getattr(exc, "_gradcli_places", None)
    if found is None:
        found = []
        try:
            exc._gradcli_places = found  # type: ignore[attr-defined]
        except AttributeError:  # an exception without a __dict__: no frames to show
            return []
    return found


def note(exc: BaseException, depth: int, line: int, function: str) -> None:
    """Record that ``exc`` leaves a statement at ``line`` of ``function`` (once per frame)."""
    found = places(exc)
    if found and found[-1].depth == depth:
        return
    pending = getattr(exc, "_gradcli_span", None)
    span = pending if pending is not None and pending[0] == line else None
    found.append(Place(depth, line, function, None if span is None else span[1]))


def engine_refusal(exc: engine.EngineError, place: Place, source: str) -> BaseException:
    """What leaves the statement at ``place`` (``source``: its line) for the engine's refusal
    ``exc``: torch's exception, noted there, or for a bound passed (``SizeError``) and what
    gradcli does not take, a ``GradcliError`` naming the line (exit 2)."""
    made = None if isinstance(exc, engine.SizeError) else as_torch(exc)
    if made is None:
        refused = GradcliError(str(exc), hint=engine_hint(exc))
        return at_line(refused, place.line, source, None)
    note(made, place.depth, place.line, place.function)
    return made


def note_span(exc: BaseException, line: int, span: Span) -> None:
    """Record the columns of the innermost expression ``exc`` came out of."""
    if getattr(exc, "_gradcli_span", None) is None:
        try:
            exc._gradcli_span = (line, span)  # type: ignore[attr-defined]
        except AttributeError:
            pass


def refusal(message: str, line: int, source: str, column: int | None, hint: str | None = None):
    """What gradcli does not take, at ``line`` (``source``: that line), a caret at ``column``."""
    return GradcliError(
        message, where=f"line {line}", source=source.rstrip(), column=column, hint=hint
    )


def at_line(error: GradcliError, line: int, source: str, column: int | None) -> GradcliError:
    """``error`` (a limit passed, a value refused) naming the script's line, when it names
    no place of its own."""
    if error.where is None:
        error.where = f"line {line}"
        if error.source is None:
            error.source = source.rstrip()
            error.column = column
    return error
