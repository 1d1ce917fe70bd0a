"""Where a NaN or an infinity first appeared, and why, in words for the user.

A value is reported when it holds a kind of non-finite number (nan, inf, -inf) that none of
the operands of its operation held: the place it first appeared, not everywhere it spread.
The reasons are the op table's (``nonfinite``, ``nonfinite_backward``).
"""

from __future__ import annotations

import functools
import io
import tokenize

import numpy as np

from ..engine.modes import all_finite
from ..engine.sizes import compact
from ..ops import library as gc
from ..ops.table import OPS


def kinds(array: np.ndarray) -> set[str]:
    """Which of nan, inf, -inf an array holds (read once each: a broadcast view is not
    made whole to be scanned)."""
    array = compact(array)
    if all_finite(array):
        return set()
    if array.dtype.kind == "c":  # a complex number's parts, each as a real number
        return kinds(array.real) | kinds(array.imag)
    found = set()
    if np.any(np.isnan(array)):
        found.add("nan")
    if np.any(np.isposinf(array)):
        found.add("inf")
    if np.any(np.isneginf(array)):
        found.add("-inf")
    return found


def _operands(args) -> list[np.ndarray]:
    arrays = []
    for arg in args:
        if isinstance(arg, gc.Tensor):
            arrays.append(arg.data)
        elif isinstance(arg, list):
            arrays.extend(a.data for a in arg if isinstance(a, gc.Tensor))
        elif isinstance(arg, (float, complex)):
            arrays.append(np.asarray(arg))
    return arrays


def new_kinds(result, args) -> set[str]:
    """The non-finite kinds in ``result`` that no operand had."""
    if not isinstance(result, gc.Tensor):
        return set()
    produced = kinds(result.data)
    if not produced:
        return set()
    for operand in _operands(args):
        produced -= kinds(operand)
    return produced


def _beyond_float(token: str) -> bool:
    """Whether the number written as ``token`` (a Python number literal) is beyond float64's
    range, so that reading it gives an infinity."""
    text = token.replace("_", "").rstrip("jJ")
    try:
        if any(c in text for c in ".eE") and not text.lower().startswith("0x"):
            return bool(np.isinf(float(text)))
        float(int(text, 0))
    except OverflowError:
        return True
    except ValueError:  # more digits than Python reads (the validator refuses those first)
        return True
    return False


@functools.lru_cache(maxsize=1024)
def overflowing(text: str) -> tuple[str, ...]:
    """The numbers written in ``text`` that are beyond float64's range (``1e400``), in order,
    each once (remembered by text: a statement run again, at each point of a batch, is not
    read again)."""
    if not _may_overflow(text):  # tokenize's first use compiles its patterns: some ms
        return ()
    found: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            number = token.string
            if token.type == tokenize.NUMBER and _beyond_float(number):
                found.append(number if len(number) <= 24 else f"a number of {len(number)} digits")
    except (tokenize.TokenError, SyntaxError):
        pass  # the statement's text was read by the parser already: this does not happen
    return tuple(dict.fromkeys(found))


def _may_overflow(text: str) -> bool:
    """Whether ``text`` may write a number beyond float64's range: one with an exponent (an
    ``e`` after a digit or a point), or one too long to be below 1.8e308 without one (309
    decimal digits, 257 hexadecimal: a text that short has none)."""
    if len(text) > 256:
        return True
    lowered = text.lower()
    at = lowered.find("e", 1)
    while at != -1:
        if lowered[at - 1] in _DIGITS_OR_POINT:
            return True
        at = lowered.find("e", at + 1)
    return False


_DIGITS_OR_POINT = frozenset("0123456789._")


def overflow_message(statement) -> str | None:
    """The warning for numbers written in ``statement`` that are read as infinities (where
    they first appear: the statement that writes them), or None when it writes none."""
    written = overflowing(statement.text)
    if not written:
        return None
    them = f"{written[0]} is" if len(written) == 1 else f"{', '.join(written)} are"
    largest = float(np.finfo(np.float64).max)
    return (
        f"{statement.where} `{statement.text}`: {them} beyond float64's range "
        f"(±{largest:.4g}): read as inf"
    )


def note_overflow(statement, log) -> None:
    """Add ``statement``'s ``overflow_message`` to the run's warnings, once."""
    message = overflow_message(statement)
    if message is not None and message not in log.nonfinite:
        log.nonfinite.append(message)


# An entry's reason of the form "overflow, or 0 * inf": an infinity came from the first, a NaN
# from the second; the warning gives the one that fits what was found.
_OVERFLOW = "overflow, or "


def forward_message(statement, function: str, found: set[str]) -> str:
    reason = OPS[function].nonfinite
    if reason is not None and reason.startswith(_OVERFLOW):
        reason = reason[len(_OVERFLOW) :] if found == {"nan"} else reason
        reason = "overflow" if "nan" not in found else reason
    what = ", ".join(sorted(found))
    return f"{statement.where} `{statement.text}`: {function} gave {what} ({reason})"


def backward_message(node, origins: dict) -> str:
    """A non-finite gradient that first appeared in ``node``'s reverse rule."""
    statement = origins.get(id(node))
    place = f"{statement.where} `{statement.text}`: " if statement is not None else ""
    reason = node.prim.nonfinite_backward
    return (
        f"{place}the backward pass of {node.prim.name} ({node.name()}) gave a non-finite "
        f"gradient ({reason})"
    )


def tangent_message(found) -> str:
    """A non-finite tangent that first appeared in a forward rule (a ``NonfiniteTangent``)."""
    statement = found.origin
    place = f"{statement.where} `{statement.text}`: " if statement is not None else ""
    name, reason = found.prim.name, found.prim.nonfinite_backward
    return f"{place}the forward-mode derivative of {name} gave a non-finite tangent ({reason})"


def tag_tangents(watch: list | None, start: int, statement) -> None:
    """Name ``statement`` as the origin of the non-finite tangents found since ``start``."""
    for found in [] if watch is None else watch[start:]:
        if isinstance(found, gc.NonfiniteTangent) and found.origin is None:
            found.origin = statement


def tag_origins(tensor, statement, origins: dict) -> None:
    """Record ``statement`` as the origin of every graph node new in ``tensor``'s graph."""
    stack = [tensor.grad_fn] if tensor.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if id(node) in origins or node.inputs is None:
            continue
        origins[id(node)] = statement
        stack.extend(t.grad_fn for t in node.inputs if t.grad_fn is not None)
