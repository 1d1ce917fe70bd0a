"""Runs of element-wise steps fused into one numba kernel: the optional extra ``fast``.

``Tape.fused()`` is the tape's generated function (``engine.generated``) in which each run of
element-wise float64 steps (``FUSABLE``'s ufuncs, operands of one shape or 0-d) becomes one
call: a kernel, compiled once per process by numba, that runs the run's steps as a list of
codes over a small file of registers, one row of the run's shape each, every step a loop over
the elements. The run's values never become numpy arrays and no numpy call is made between
two of its steps; a register is reused once the value it held was read for the last time, so
that a run of thousands of steps holds a few rows. Steps that do not depend on a run (a sum of
its last value, say) are moved after it, so that a forward and a backward chain make one run.

Numbers: additions, subtractions, products, quotients and negations are IEEE operations, the
same in the kernel as in numpy (numba contracts no ``a * b + c`` into one rounding without
``fastmath``); ``sin``, ``cos``, ``exp``, ``log``, ``tanh`` and the others are the C library's,
which may differ from numpy's own loops in the last place. The fused function is therefore
never what ``Tape.run`` uses (a command prints torch's digits): it is a separate entry for a
caller that accepts that rounding. Without numba it is None.

Safety as in ``engine.generated``: the kernel's source is fixed (below), the generated
function's is made of generated identifiers, and a run's codes are integers in arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.compiled import Compiled
from . import generated

if TYPE_CHECKING:
    from .compile import Tape

#: The element-wise ufuncs a kernel computes, by their code in ``_kernel``.
FUSABLE: dict[Any, int] = {
    f: code
    for code, f in enumerate(
        [np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.sin, np.cos]
        + [np.exp, np.log, np.tanh, np.sqrt, np.log1p, np.expm1, np.tan]
    )
}

#: The fewest steps worth one kernel call (its arguments' checks cost several numpy calls).
SHORTEST_RUN = 4

_DOUBLE = np.dtype(np.float64)


def _kernel(codes, first, second, result, registers):  # type: ignore[no-untyped-def]
    """Every code's operation on whole register rows: ``registers[result[i]]`` from
    ``registers[first[i]]`` (and ``registers[second[i]]`` where it takes two)."""
    n = registers.shape[1]
    for i in range(codes.shape[0]):
        op = codes[i]
        x = registers[first[i]]
        y = registers[second[i]]
        z = registers[result[i]]
        for j in range(n):
            if op == 0:
                z[j] = x[j] + y[j]
            elif op == 1:
                z[j] = x[j] - y[j]
            elif op == 2:
                z[j] = x[j] * y[j]
            elif op == 3:
                z[j] = x[j] / y[j]
            elif op == 4:
                z[j] = -x[j]
            elif op == 5:
                z[j] = math.sin(x[j])
            elif op == 6:
                z[j] = math.cos(x[j])
            elif op == 7:
                z[j] = math.exp(x[j])
            elif op == 8:
                z[j] = math.log(x[j]) if x[j] > 0 else (-math.inf if x[j] == 0 else math.nan)
            elif op == 9:
                z[j] = math.tanh(x[j])
            elif op == 10:
                z[j] = math.sqrt(x[j]) if x[j] >= 0 else math.nan
            elif op == 11:
                z[j] = math.log1p(x[j]) if x[j] > -1 else (-math.inf if x[j] == -1 else math.nan)
            elif op == 12:
                z[j] = math.expm1(x[j])
            else:
                z[j] = math.tan(x[j])


#: ``kernel()``: ``_kernel`` compiled by numba (once per process; numba caches it on disk), or
#: None where numba is not installed.
kernel = Compiled(_kernel, cache=True, nogil=True)


class Run:
    """One fused run: called with its inputs' values, it returns its outputs' values."""

    def __init__(
        self,
        steps: Sequence[tuple[int, tuple[int, ...], int]],
        shape: tuple[int, ...],
        outputs: Sequence[int],
        compiled: Callable[..., None],
    ) -> None:
        self.shape = shape
        self.kernel = compiled
        made = {out for _, _, out in steps}
        self.inputs: tuple[int, ...] = tuple(
            dict.fromkeys(a for _, args, _ in steps for a in args if a not in made)
        )
        self.outputs = tuple(outputs)
        last = {a: i for i, (_, args, _) in enumerate(steps) for a in args}
        register: dict[int, int] = {}
        free: list[int] = []
        count = 0

        def take() -> int:
            nonlocal count
            if free:
                return free.pop()
            count += 1
            return count - 1

        for slot in self.inputs:
            register[slot] = take()
        codes, first, second, result = [], [], [], []
        kept = set(self.outputs)
        for i, (code, args, out) in enumerate(steps):
            codes.append(code)
            first.append(register[args[0]])
            second.append(register[args[-1]])
            for a in dict.fromkeys(args):
                if last[a] == i and a not in kept:
                    free.append(register[a])
            register[out] = take()
            result.append(register[out])
        self.program = [np.array(v, dtype=np.int64) for v in (codes, first, second, result)]
        self.entry = [register[s] for s in self.inputs]
        self.exit = [register[s] for s in self.outputs]
        self.registers = count

    def __call__(self, *values: Any) -> Any:
        """The run's kept values (rows of one new register file): the one array, or a list."""
        registers = np.empty((self.registers, math.prod(self.shape)))
        for row, value in zip(self.entry, values):
            registers[row] = np.reshape(value, -1)
        self.kernel(*self.program, registers)
        results = [registers[row].reshape(self.shape) for row in self.exit]
        return results[0] if len(results) == 1 else results


def fusable(tape: Tape, step: tuple[Any, ...]) -> tuple[int, tuple[int, ...]] | None:
    """The kernel's code of a step and the shape of its run, or None if it cannot be fused."""
    _, function, args, params, out = step
    dtypes = tape.dtypes
    if params or not tape.shapes or any(dtypes[a] != _DOUBLE for a in (*args, out)):
        return None
    code = FUSABLE.get(generated.direct(function, tuple(dtypes[a] for a in args)))
    shape = tape.shapes[out]
    if code is None or not shape or any(tape.shapes[a] not in (shape, ()) for a in args):
        return None
    return code, shape


def calls(tape: Tape, compiled: Callable[..., None]) -> list[generated.Call]:
    """The tape's calls with its runs of element-wise steps fused (see the module's docstring).

    Steps in order: a fusable one joins the open run (of its shape) unless it reads a step
    held back; a step that reads the run (or one held back) is held back until the run ends;
    any other step is placed at once, before the run, since it reads nothing of the run."""
    readers: dict[int, set[int]] = {}  # slot -> the steps (by index) that read it
    for index, step in enumerate(tape.steps):
        for a in step[2]:
            readers.setdefault(a, set()).add(index)
    placed: list[generated.Call] = []
    run: list[tuple[int, tuple[int, ...], int]] = []
    run_steps: list[int] = []
    held: list[generated.Call] = []
    run_made: set[int] = set()
    held_made: set[int] = set()
    shape: tuple[int, ...] = ()

    def close() -> None:
        if len(run) >= SHORTEST_RUN:
            inside = set(run_steps)
            kept = [
                out for _, _, out in run if out in tape.outputs or readers.get(out, set()) - inside
            ]
            fused = Run(run, shape, kept, compiled)
            placed.append((fused, fused.inputs, fused.outputs))
        else:
            placed.extend(plain[i] for i in run_steps)
        placed.extend(held)
        for collection in (run, run_steps, held, run_made, held_made):
            collection.clear()

    plain = generated.calls_of(tape)
    for index, step in enumerate(tape.steps):
        args, out = step[2], step[4]
        code_shape = fusable(tape, step)
        if code_shape is not None:
            if any(a in held_made for a in args) or (run and code_shape[1] != shape):
                close()
            shape = code_shape[1]
            run.append((code_shape[0], args, out))
            run_steps.append(index)
            run_made.add(out)
        elif any(a in run_made or a in held_made for a in args):
            held.append(plain[index])
            held_made.add(out)
        else:
            placed.append(plain[index])
    close()
    return placed


def fused_function(tape: Tape) -> Callable[..., list[Any]] | None:
    """The tape's generated function with its element-wise runs fused, or None without numba."""
    compiled = kernel()
    if compiled is None or not tape.dtypes:
        return None
    return generated.generate(tape, calls(tape, compiled))
