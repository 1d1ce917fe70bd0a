"""A traced pass specialised, once, to the rows ``--batch`` replays it at.

``compile.run_batched`` decides at every step of every replay which of its arguments carry
the batch dimension and goes through the operation's batch rule. Which values carry it follows
from which inputs do, so it is decided here once, for every chunk: a step whose batched
arguments need no alignment calls its numpy function directly, and the rule is bound to its
parameters otherwise. Three levels of rows: 0, a value the same at every point; 1, one row a
point; 2, one row a point and seed vector (a Jacobian's cotangents, a Hessian's basis vectors).
The program's own values are computed once a point, and repeated to the seeds' rows only
where a step combines them with a seed (``np.repeat``, as ``Pass.replay`` repeats the inputs).

Steps that repeat an earlier one (the same function, arguments and parameters) are computed
once, and steps whose result is one of their arguments exactly (``detach``, a power of 1, a
product with ones, a selection by a constant condition) are left out: the result is the same
array, bit for bit. Everything else is computed as ``run_batched`` computes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import compress
from itertools import count as numbered
from typing import Any

import numpy as np

from ..engine.compile import FREED_ELEMENTS, NotBatchable, Tape
from ..engine.liveness import needed_last
from ..ops import batching as B
from ..ops.numerics.single_precision import power
from ..ops.table import OPS

# an entry: (call, argument slots, result slot, level, direct): a direct call takes the argument
# values themselves (a step's numpy function, where nothing else is bound: no frame of a lambda
# between), any other the list of them and the rows of its level
Entry = tuple[Callable[..., Any], tuple[int, ...], int, int, bool]

#: The numpy functions of the selections ``where(condition, input, other)``: by their
#: parameters' names, which say what they do.
_SELECTIONS = {
    op.forward
    for op in OPS.values()
    if [p.name for p in op.params] == ["condition", "input", "other"]
}


def slot_dtypes(tape: Tape, examples: Sequence[Any]) -> tuple[np.dtype | None, ...]:
    """The dtype of every slot of ``tape`` at the traced point (``examples``: its inputs)."""
    slots: list[Any] = [None] * tape.size
    for slot, value in tape.constants:
        slots[slot] = value
    for slot, value in zip(tape.inputs, examples):
        slots[slot] = np.asarray(value)
    with np.errstate(all="ignore"):
        for _, function, args, params, out in tape.steps:
            slots[out] = function(*[slots[i] for i in args], **params)
    return tuple(getattr(value, "dtype", None) for value in slots)


def _all_equal(value: Any, number: float) -> bool:
    array = np.asarray(value)
    if array.dtype.kind not in "fiu" or not array.size:
        return False
    return array.item() == number if array.ndim == 0 else bool((array == number).all())


@dataclass
class Specialised:
    """``tape`` replayed with its inputs at the given levels (see the module's docstring)."""

    size: int  # the tape's slots, and the repeated values'
    constants: tuple[tuple[int, Any], ...]
    inputs: tuple[int, ...]
    program: list[Entry]
    outputs: tuple[int, ...]
    levels: list[int]
    shapes: list[tuple[int, ...]]  # of each slot, as traced (() for every slot: not known)
    rows: int  # the seed vectors a point takes
    seeded: bool  # the outputs have a row a point and seed vector
    # the slots each entry is the last to read (``engine.liveness.last_reads``)
    last: list[tuple[int, ...]]
    freed: dict[int, list[tuple[int, ...]]] = field(default_factory=dict, repr=False)
    elements: list[int] = field(default_factory=list, repr=False)  # of each slot, as traced

    def run(self, arrays: Sequence[Any], size: int, grouped: bool = False) -> list[Any]:
        """The outputs at ``size`` points (``arrays``: the inputs at their levels), with
        ``size`` rows in front, or ``size * rows`` when seeded (a point's seeds together), as
        ``run_batched`` gives them; ``grouped`` (seeded): (size, rows, ...) each, an output
        the same for a point's seeds (or every point) a read-only view, not repeated."""
        slots: list[Any] = [None] * self.size
        for slot, value in self.constants:
            slots[slot] = value
        for slot, value in zip(self.inputs, arrays):
            slots[slot] = value
        counts = (1, size, size * self.rows)
        frees = self._frees(max(1, FREED_ELEMENTS // max(size, 1)))
        read = slots.__getitem__  # an entry's values by map, not a comprehension's frame
        if frees:
            for (call, args, out, level, direct), gone in zip(self.program, frees):
                if direct:
                    slots[out] = call(*map(read, args))
                else:
                    slots[out] = call(list(map(read, args)), counts[level])
                for i in gone:
                    slots[i] = None
        else:
            for call, args, out, level, direct in self.program:
                if direct:
                    slots[out] = call(*map(read, args))
                else:
                    slots[out] = call(list(map(read, args)), counts[level])
        total = counts[2] if self.seeded else size
        results = []
        if grouped:
            for slot in self.outputs:
                value, level = slots[slot], self.levels[slot]
                tail = np.shape(value)[1 if level else 0 :]
                if level == 2:
                    value = value.reshape((size, self.rows) + tail)
                else:
                    value = value[:, None] if level else value
                    value = np.broadcast_to(value, (size, self.rows) + tail)
                results.append(value)
            return results
        for slot in self.outputs:
            value, level = slots[slot], self.levels[slot]
            if level == 1 and total != size:
                value = repeated(value, self.rows)
            elif level == 0:
                value = np.broadcast_to(value, (total,) + np.shape(value))
            results.append(value)
        return results

    def _frees(self, smallest: int) -> list[tuple[int, ...]]:
        """For each entry, the slots of at least ``smallest`` elements (as traced) that no
        later entry reads, outputs and constants aside; [] when there is none at all."""
        if smallest not in self.freed:
            elements = self.elements
            if not elements:  # worked out at the first chunk (a plan replays its chunks' sizes)
                elements = self.elements = list(map(math.prod, self.shapes))
            if smallest <= min(elements, default=0):  # every slot: the last reads themselves
                frees = self.last
            else:  # the slots of at least ``smallest`` elements, found by map and filter
                large = set(compress(numbered(), map(smallest.__le__, elements))).__contains__
                frees = [tuple(filter(large, last)) for last in self.last]
            self.freed[smallest] = frees if any(frees) else []
        return self.freed[smallest]


def specialise(
    tape: Tape, levels: Sequence[int], dtypes: Sequence[np.dtype | None], rows: int = 1
) -> Specialised:
    """``tape`` specialised to its inputs' ``levels`` (``dtypes``: of each slot as traced, from
    ``slot_dtypes``; ``rows``: the seed vectors a point takes, the inputs of level 2). Raises
    ``NotBatchable`` where ``run_batched`` would."""
    if tape.dynamic:
        raise NotBatchable("the shape of a step follows the values of the point")
    level = [0] * tape.size
    for slot, at in zip(tape.inputs, levels):
        level[slot] = at
    ranks = list(tape.ranks)
    # no shapes: every slot counts as empty, so that none is freed
    shapes: list[tuple[int, ...]] = list(tape.shapes) if tape.shapes else [(0,)] * tape.size
    constants = dict(tape.constants)
    folds = _Folds.of(tape, dtypes, constants)
    same: dict[int, int] = {}  # a slot -> the earlier slot it equals
    repeated: dict[int, int] = {}  # a slot of level 1 -> its slot repeated to level 2
    known: dict[Any, int] = {}
    program: list[Entry] = []

    def repeat(slot: int) -> int:
        if slot not in repeated:
            repeated[slot] = len(level)
            level.append(2)
            ranks.append(ranks[slot])
            shapes.append(shapes[slot])
            program.append((_repeater(rows), (slot,), repeated[slot], 2, False))
        return repeated[slot]

    # a step's slots read by map, not by comprehensions (a frame each in this Python)
    level_of, rank_of = level.__getitem__, ranks.__getitem__
    for name, function, args, params, out in tape.steps:
        if same:
            args = tuple(map(same.get, args, args))
        key = (function, args) if not params else _key(function, args, params)
        if key is not None and key in known:
            same[out] = known[key]
            continue
        source = None
        if not params and folds is not None and function in _FOLDED:
            source = _identity_of(function, args, out, folds)
        if source is not None:
            same[out] = source
            continue
        at = max(map(level_of, args), default=0)
        if at == 2:
            args = tuple(repeat(a) if level[a] == 1 else a for a in args)
        level[out] = at
        if at and not params:  # a step's call, by its operation and its arguments' levels
            found = (name, function, tuple(map(level_of, args)), tuple(map(rank_of, args)))
            call = _CALLS.get(found)
            if call is None:
                call = _batched(name, function, params, list(map(bool, found[2])), [*found[3]])
                if len(_CALLS) >= _MOST_CALLS:
                    _CALLS.clear()
                _CALLS[found] = call
            program.append((call, args, out, at, call is function))
        elif at:
            flags = list(map(bool, map(level_of, args)))  # a level above 0: batched
            call = _batched(name, function, params, flags, list(map(rank_of, args)))
            program.append((call, args, out, at, call is function))
        else:
            program.append((_plain(function, params), args, out, 0, not params))
        if key is not None:
            known[key] = out
    outputs = tuple(same.get(o, o) for o in tape.outputs)
    program, last = needed_last(program, outputs, set(outputs) | set(constants), 1, 2)
    return Specialised(
        len(level), tape.constants, tape.inputs, program, outputs, level, shapes, rows,
        2 in levels, last,
    )  # fmt: skip


def _key(function: Any, args: tuple[int, ...], params: dict[str, Any]) -> Any:
    """What identifies a step's result (None: not compared): its function, arguments and
    parameters, where the parameters are plain numbers, strings and tuples of them."""
    try:
        if len(params) == 1:  # (getitem's index, stack's dim: without sorted's generator)
            ((name, value),) = params.items()
            return (function, args, ((name, _frozen(value)),))
        frozen = tuple(sorted((k, _frozen(v)) for k, v in params.items()))
        return (function, args, frozen)
    except TypeError:
        return None


def _frozen(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value), value)
    if isinstance(value, tuple):
        return tuple(map(_frozen, value))
    if isinstance(value, slice):
        return ("slice", _frozen(value.start), _frozen(value.stop), _frozen(value.step))
    if value is Ellipsis:
        return ("...",)
    raise TypeError(type(value))


def _identity_of(function, args, out, folds: _Folds) -> int | None:
    """The argument a step's result equals bit for bit (its dtype and shape too), or None.
    (A constant is asked about only where the step reads one: most read none.)"""
    constants = folds.constants
    if function is np.multiply:
        if len(args) != 2:
            return None
        a, b = args
        if b in constants and folds.one(b) and folds.alike(a, out):
            return a
        if a in constants and folds.one(a) and folds.alike(b, out):
            return b
        return None
    if function in _POWERS:
        if len(args) == 2 and args[1] in constants and folds.one(args[1]):
            return args[0] if folds.alike(args[0], out) else None
        return None
    if function in _SELECTIONS:
        chosen = folds.choice(args[0]) if args[0] in constants else 0
        if chosen:
            return args[chosen] if folds.alike(args[chosen], out) else None
        return None
    if len(args) == 1 and function in _PASS_THROUGH:
        return args[0] if folds.alike(args[0], out) else None
    return None


class _Folds:
    """What ``_identity_of`` reads: which constants are ones, which constant conditions choose
    one side (the argument's place), and each slot's dtype and shape as traced. A constant
    is read when a step asks about it, once."""

    def __init__(
        self,
        constants: dict[int, Any],
        dtypes: Sequence[np.dtype | None],
        shapes: Sequence[tuple[int, ...]],
    ) -> None:
        self.constants = constants
        self.dtypes = dtypes
        self.shapes = shapes
        self._ones: dict[int, bool] = {}
        self._choices: dict[int, int] = {}

    @staticmethod
    def of(tape: Tape, dtypes: Sequence[np.dtype | None], constants: dict) -> _Folds | None:
        if not dtypes or not tape.shapes:
            return None
        return _Folds(constants, dtypes, tape.shapes)

    def alike(self, slot: int, out: int) -> bool:
        """Whether ``slot`` has ``out``'s dtype (an array's) and shape, as traced."""
        dtypes, shapes = self.dtypes, self.shapes
        return (
            dtypes[slot] is not None and dtypes[slot] == dtypes[out] and shapes[slot] == shapes[out]
        )

    def one(self, slot: int) -> bool:
        """Whether ``slot`` is a constant of ones (not a condition: see ``choice``)."""
        found = self._ones.get(slot)
        if found is None:
            found = False
            if slot in self.constants:
                array = np.asarray(self.constants[slot])
                found = not (array.dtype.kind == "b" and array.size) and _all_equal(array, 1)
            self._ones[slot] = found
        return found

    def choice(self, slot: int) -> int:
        """The argument a constant condition in ``slot`` chooses: 1 (all true), 2 (all
        false), or 0 (not a constant condition that chooses one side)."""
        found = self._choices.get(slot)
        if found is None:
            found = 0
            if slot in self.constants:
                array = np.asarray(self.constants[slot])
                if array.dtype.kind == "b" and array.ndim == 0:  # one value, read as it is
                    found = 1 if array.item() else 2
                elif array.dtype.kind == "b" and array.size:
                    found = 1 if array.all() else 2 if not array.any() else 0
            self._choices[slot] = found
        return found


_POWERS = (power, np.power)


def _gives_back(function: Any) -> bool:
    """Whether ``function`` gives back the very array it is given (``detach``'s)."""
    probe = np.zeros(1)
    try:
        return function(probe) is probe
    except Exception:  # a function of one argument that refuses a small float array
        return False


#: The numpy functions that give back the very array they are given: those of the entries
#: that cut the gradient and change nothing else (``detach``).
_PASS_THROUGH = {
    op.forward for op in OPS.values() if op.extra.get("cuts_gradient") and _gives_back(op.forward)
}

#: The functions of the steps ``_identity_of`` looks at (any other's result is a new value)
_FOLDED = {np.multiply, *_POWERS, *_SELECTIONS, *_PASS_THROUGH}


def repeated(value: Any, rows: int) -> Any:
    """``np.repeat(value, rows, axis=0)``: each point's row ``rows`` times, written as
    ``rows`` strided copies of the whole array where a point has one element (np.repeat
    copies element by element, a ``memcpy`` call each: 2 to 3 times the CPU time at a few seed
    vectors a point)."""
    if value.ndim != 1 or rows > _STRIDED_COPIES:  # a copy's inner loop would be short
        return np.repeat(value, rows, axis=0)
    out = np.empty((len(value), rows), value.dtype)
    for row in range(rows):
        out[:, row] = value
    return out.reshape(-1)


#: The most seed vectors a point that ``repeated`` copies one by one (beyond, np.repeat).
_STRIDED_COPIES = 64


def _repeater(rows: int) -> Callable[[list, int], Any]:
    return lambda values, count: repeated(values[0], rows)


def _plain(function: Any, params: dict[str, Any]) -> Callable[..., Any]:
    """The step's call: its function itself where it takes no parameters (a direct entry),
    else a call of the argument values and rows with the parameters bound."""
    if params:
        return lambda values, count: function(*values, **params)
    return function


#: The calls ``_batched`` gave the steps without parameters, by (the operation's name, its
#: function, the levels and ranks of its arguments): what it gives them is the same at every
#: run, and a batch of points specialises a new tape at each (some 60 bytecodes a step less).
#: Cleared when it holds ``_MOST_CALLS``, as a function may be made for one tape alone.
_CALLS: dict[tuple[Any, ...], Callable[..., Any]] = {}
_MOST_CALLS = 4096


def _batched(name, function, params, flags: list[bool], ranks: list[int]) -> Callable:
    """A step with batched arguments: its numpy function itself where the batch rule would
    only call it, else the rule with everything but the rows bound."""
    op = OPS.get(name)
    rule = None if op is None else op.batch
    if rule is None:
        raise NotBatchable(name)
    if rule is B.elementwise:
        top = max(ranks)
        if all(map(top.__eq__, compress(ranks, flags))):  # the batched values' ranks
            return _plain(function, params)
    if rule is B.getitem and not any(isinstance(p, np.ndarray) for p in params["index"]):
        index = (slice(None), *params["index"])
        # a contiguous copy of a strided selection (x[:, 0] of points (N, 2)): the element-wise
        # steps that read it run numpy's vector loops, not its strided one (the same numbers)
        return lambda values, count: np.ascontiguousarray(values[0][index])
    if rule is B.stack:
        return _stacker(params["dim"], flags.index(True))
    return lambda values, count: rule(function, params, values, flags, ranks, count)


def _stacker(dim: int, batched: int) -> Callable[[list, int], Any]:
    """stack's batch rule (``np.stack`` of every value, those of one point broadcast to the
    rows first) as one array of the values' dtype filled value by value: the same copies,
    without np.stack's Python or a broadcast view of each value that has no rows.
    ``batched``: the place of a value that has its rows."""
    lead: tuple[slice, ...] = (slice(None),) * (dim + 1)

    def stacked(values: list, count: int) -> Any:
        tail = values[batched].shape[1:]
        shape = (count, *tail[:dim], len(values), *tail[dim:])
        out = np.empty(shape, np.result_type(*values))
        for k, value in enumerate(values):
            out[lead + (k,)] = value
        return out

    return stacked
