"""A tape as one generated Python function: its steps as straight-line calls, no per-step dispatch.

``generate(tape)`` writes the replay of a ``compile.Tape`` as the source of one function,
``def replay(s0, s1): s2 = f0(s0, s1); del s0; ...; return [s7, s9]``, and executes it once:
a replay then costs the numpy calls and a local variable's load and store each, not the
interpreter's loop over steps (its tuple unpacking, its argument lists, its checks). Every
slot is deleted (``del sN``) right after its last reader (a ``del`` costs less than it saves,
even for a small array, whose memory numpy then hands to the next step), and a step whose
result outweighs what it frees runs just before its first reader (``schedule``), so that the
function holds what the rest of the pass needs, not every intermediate.

Safety: the source consists only of identifiers this module makes (``s`` and ``f`` followed by
a number), Python's keywords and punctuation. Every function, parameter and constant reaches
the function through the globals dict it is executed with (``fN`` a numpy function, with its
parameters bound by ``functools.partial``; ``sN`` a constant array), never formatted into the
source: no text from a user's program (a name, a string, a number) can end up in it, and the
function sees no builtins.

The function is specialised to the dtypes the tape was traced with: a step whose function is
``single_precision.rounded_once``'s wrapper of a ufunc calls the ufunc itself where its
operand was traced in another dtype than float32 (the wrapper does exactly that call then).
``Tape.run`` therefore calls the generated function only with inputs of the traced dtypes,
and replays step by step otherwise.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..ops.numerics.single_precision import rounded_once
from .liveness import last_reads

if TYPE_CHECKING:
    from .compile import Tape

#: Set to "0" to replay every tape step by step (to compare, or to debug a step): read when a
#: tape's program is first built.
ENVIRONMENT = "GRADCLI_GENERATE"

#: The fewest elements (as traced) of a result that ``schedule`` moves towards its reader.
SCHEDULED_ELEMENTS = 4096

_ROUNDED_ONCE = rounded_once(np.negative).__code__  # the code every such wrapper shares
_SINGLE = np.dtype(np.float32)


def enabled() -> bool:
    """Whether tapes replay through generated functions (``GRADCLI_GENERATE`` is not "0")."""
    return os.environ.get(ENVIRONMENT, "1") != "0"


def direct(function: Callable[..., Any], dtypes: tuple[Any, ...]) -> Callable[..., Any]:
    """``function`` itself, or the ufunc a ``rounded_once`` wrapper calls for operands of
    ``dtypes`` (the traced dtypes of its arguments) when none of them is float32."""
    code = getattr(function, "__code__", None)
    if code is not _ROUNDED_ONCE or any(d is None or d == _SINGLE for d in dtypes):
        return function
    cells = dict(zip(code.co_freevars, function.__closure__ or ()))
    ufunc = cells["function"].cell_contents
    return ufunc if isinstance(ufunc, np.ufunc) else function


#: One call of a generated function: (callable, argument slots, result slots); the callable
#: returns its one result, or a sequence of them where there are several.
Call = tuple[Callable[..., Any], tuple[int, ...], tuple[int, ...]]


def calls_of(tape: Tape) -> list[Call]:
    """The tape's steps as calls: each step's function (``direct``), its parameters bound."""
    calls: list[Call] = []
    for _, function, args, params, out in tape.steps:
        call = direct(function, tuple(_dtype(tape, slot) for slot in args))
        calls.append((functools.partial(call, **params) if params else call, args, (out,)))
    return calls


def schedule(tape: Tape, smallest: int) -> list[int]:
    """The order (indices into ``tape.steps``) in which the generated function runs the steps:
    the traced one, except that a step whose result has at least ``smallest`` elements and
    more than the arrays it is the last reader of runs just before its first reader (or at
    the end, for an output). Such a step frees less than it holds, so that running it later
    lowers the peak: in an MLP's backward pass, the hidden layer's gradient is made after the
    second weight's gradient, which frees the hidden activations it reads last, not beside
    them. Steps are pure functions of their operands: any order that computes an operand
    before its reader gives the same numbers."""
    if not tape.shapes:
        return list(range(len(tape.steps)))
    elements = [math.prod(shape) for shape in tape.shapes]
    last: dict[int, int] = {}  # slot -> the index of its last reader, in the traced order
    for index, step in enumerate(tape.steps):
        for slot in step[2]:
            last[slot] = index
    keep = set(tape.outputs) | {slot for slot, _ in tape.constants}
    order: list[int] = []
    held: dict[int, int] = {}  # result slot -> index of a step held back

    def release(slots: tuple[int, ...]) -> None:
        for slot in slots:
            index = held.pop(slot, None)
            if index is not None:
                release(tape.steps[index][2])
                order.append(index)

    for index, (_, _, args, _, out) in enumerate(tape.steps):
        release(args)
        frees = sum(elements[a] for a in set(args) if last[a] == index and a not in keep)
        if elements[out] >= smallest and elements[out] > frees:
            held[out] = index
        else:
            order.append(index)
    release(tuple(sorted(held, key=held.__getitem__)))
    return order


def source_and_globals(tape: Tape, calls: list[Call] | None = None) -> tuple[str, dict[str, Any]]:
    """The source of ``replay`` and the globals it runs with: ``calls`` (by default the tape's
    steps, ``calls_of``) one line each, each slot deleted after its last reader."""
    if calls is None:
        steps = calls_of(tape)
        calls = [steps[index] for index in schedule(tape, SCHEDULED_ELEMENTS)]
    names: dict[str, Any] = {"__builtins__": {}}
    functions: dict[int, str] = {}  # id(function) -> its name
    for slot, value in tape.constants:
        names[f"s{slot}"] = value
    arguments = ", ".join(f"s{slot}" for slot in tape.inputs)
    lines = [f"def replay({arguments}):"]
    keep = set(tape.outputs) | {slot for slot, _ in tape.constants}
    dead_after = last_reads([args for _, args, _ in calls], keep)
    for (call, args, outs), dead in zip(calls, dead_after):
        name = functions.get(id(call), "")
        if not name:
            name = functions[id(call)] = f"f{len(names)}"
            names[name] = call
        operands = ", ".join(f"s{slot}" for slot in args)
        results = ", ".join(f"s{slot}" for slot in outs)
        lines.append(f"    {results} = {name}({operands})")
        if dead:
            lines.append("    del " + ", ".join(f"s{slot}" for slot in dead))
    results = ", ".join(f"s{slot}" for slot in tape.outputs)
    lines.append(f"    return [{results}]")
    return "\n".join(lines) + "\n", names


def generate(tape: Tape, calls: list[Call] | None = None) -> Callable[..., list[Any]]:
    """The tape's replay as one function of its inputs (see the module's docstring)."""
    source, names = source_and_globals(tape, calls)
    exec(compile(source, "<gradcli tape>", "exec"), names)  # noqa: S102 - generated identifiers only
    replay: Callable[..., list[Any]] = names["replay"]
    return replay


def _dtype(tape: Tape, slot: int) -> Any:
    return tape.dtypes[slot] if tape.dtypes else None
