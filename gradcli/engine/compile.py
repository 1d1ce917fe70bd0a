"""Compiled passes: a computation traced once into a flat list of numpy calls, then replayed.

Tracing runs the computation on the eager engine while every primitive application (forward
values, masks, and the reverse and forward rules, which are written with primitives too) is
recorded as one step ``(numpy function, argument slots, parameters, result slot)``. Replaying
a ``Tape`` at a new point runs those numpy calls alone: no tensors, no graph nodes, no rule
dispatch. A tape is valid for inputs of the traced shapes and dtypes: the engine's control
flow depends on shapes only (checks of values, such as class indices, are not replayed).
A step whose result's shape follows the values of an argument (``x[mask]``, ``nonzero``: the
op table's ``extra["shape_from"]``) makes the tape ``dynamic`` when that argument is computed
from the inputs: such a tape is valid at its own point only, and is never replayed elsewhere.
"""

from __future__ import annotations

import bisect
import functools
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ops.table import OPS, PER_POINT, Array, Op
from . import generated
from .liveness import last_reads, needed
from .tensor import Tensor, _Mode

# (name, numpy function, argument slots, parameters, result slot)
Step = tuple[str, Callable[..., Any], tuple[int, ...], dict[str, Any], int]


@dataclass(frozen=True)
class Tape:
    """A traced computation: ``run(*arrays)`` gives the outputs at a new point."""

    size: int  # number of slots
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    constants: tuple[tuple[int, Array], ...]
    steps: tuple[Step, ...]
    ranks: tuple[int, ...]  # the number of dimensions of each slot, as traced
    largest: int  # the most elements of any slot, as traced: a batch of B holds B times this
    elements: int = 0  # the elements of all slots, as traced: a replay holds them all at once
    dynamic: bool = False  # the shape of a step follows values computed from the inputs
    shapes: tuple[tuple[int, ...], ...] = ()  # the shape of each slot, as traced
    dtypes: tuple[Any, ...] = ()  # the dtype of each slot, as traced (None: not an array)

    def run(self, *arrays: Array) -> list[Array]:
        """The outputs at the inputs ``arrays``: after ``GENERATE_AFTER`` replays, through the
        tape's generated function (``function``) where the inputs have the traced dtypes;
        step by step (``replay``) before and otherwise. Both give the same numbers."""
        state = self.__dict__
        function = state.get("_function")
        if function is None:
            runs = state["_runs"] = state.get("_runs", 0) + 1
            if runs <= GENERATE_AFTER:
                return self.replay(*arrays)
            function = self.function()
        if function and self._as_traced(arrays):
            return function(*arrays)
        return self.replay(*arrays)

    def function(self) -> Callable[..., list[Array]] | None:
        """The tape's replay as one generated function of its inputs (``engine.generated``),
        built at the first call; None where generation is off (``GRADCLI_GENERATE=0``). Call
        it with inputs of the traced dtypes only (``run`` checks them)."""
        state = self.__dict__
        if "_function" not in state:  # False: generation is off
            on = generated.enabled() and bool(self.dtypes)
            state["_function"] = generated.generate(self) if on else False
        function: Callable[..., list[Array]] | None = state["_function"] or None
        return function

    def fused(self) -> Callable[..., list[Array]] | None:
        """``function`` with each run of element-wise steps fused into one numba kernel
        (``engine.fused``, the optional extra ``fast``), built at the first call; None without
        numba or where generation is off. Its transcendental functions are the C library's,
        which may round differently from numpy's in the last place: ``run`` never uses it. Call it
        with inputs of the traced dtypes, as ``function``."""
        state = self.__dict__
        if "_fused" not in state:
            from . import fused

            on = generated.enabled() and bool(self.dtypes)
            state["_fused"] = (fused.fused_function(self) if on else None) or False
        function: Callable[..., list[Array]] | None = state["_fused"] or None
        return function

    def __getstate__(self) -> dict[str, Any]:
        """The tape as pickle sends it (to a Dask worker): without its generated functions,
        which the receiving process generates anew."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_function", "_fused")}

    def replay(self, *arrays: Array) -> list[Array]:
        """The outputs at the inputs ``arrays``, step by step (the interpreter)."""
        slots: list[Any] = [None] * self.size  # arrays, or numpy scalars a step made
        for slot, value in self.constants:
            slots[slot] = value
        for slot, value in zip(self.inputs, arrays):
            slots[slot] = value
        program, frees = self._program, self._frees
        if not frees:  # every slot is small: nothing worth freeing, the plain loop
            for call, args, out in program:
                if len(args) == 2:
                    slots[out] = call(slots[args[0]], slots[args[1]])
                elif len(args) == 1:
                    slots[out] = call(slots[args[0]])
                else:
                    slots[out] = call(*[slots[i] for i in args])
            return [slots[i] for i in self.outputs]
        for (call, args, out), dead in zip(program, frees):
            slots[out] = call(*[slots[i] for i in args])
            for i in dead:  # this step was their last reader: their memory goes now
                slots[i] = None
        return [slots[i] for i in self.outputs]

    def _as_traced(self, arrays: Sequence[Array]) -> bool:
        """Whether ``arrays`` are as many as the inputs, each of its input's traced dtype."""
        if len(arrays) != len(self.inputs):
            return False
        dtypes = self.dtypes
        for slot, array in zip(self.inputs, arrays):
            dtype = getattr(array, "dtype", None)
            if dtype is None or (dtype is not dtypes[slot] and dtype != dtypes[slot]):
                return False
        return True

    @functools.cached_property
    def _program(self) -> tuple[tuple[Callable[..., Any], tuple[int, ...], int], ...]:
        """The steps as (callable with its parameters bound, argument slots, result slot)."""
        return tuple(
            (functools.partial(function, **params) if params else function, args, out)
            for _, function, args, params, out in self.steps
        )

    @functools.cached_property
    def _frees(self) -> tuple[tuple[int, ...], ...]:
        """For each step, the slots of large arrays (as traced) that no later step reads and
        that are not outputs: a replay lets them go once the step ran, so that it holds what
        the rest of the pass needs, not every intermediate. Empty where no slot is large (a
        chain of small steps then runs the plain loop)."""
        return last_readers(self, FREED_ELEMENTS)


#: numpy's refusals of a step replayed on other values than the traced ones, or by a batch
#: rule: whoever replays then computes on the engine instead
UNREPLAYABLE = (ValueError, TypeError, IndexError)

#: How many times ``Tape.run`` replays a tape step by step before it generates the tape's
#: function: generating costs about 13 µs a step, some 25 step-by-step replays, and saves
#: about a third of each replay (the 1,000-step chain: 80 ms, then 1.9 ms a replay instead
#: of 3.0 ms), so that a tape replayed a few times (a command's) never pays for it.
GENERATE_AFTER = 32

#: The fewest elements (as traced) of a slot that a replay frees after its last reader:
#: smaller ones cost more to free, step by step, than they hold.
FREED_ELEMENTS = 4096


def last_readers(tape: Tape, smallest: int) -> tuple[tuple[int, ...], ...]:
    """For each step of ``tape``, the slots of at least ``smallest`` elements (as traced)
    whose last reader it is, outputs and constants aside; () when there is none at all.
    Kept on the tape, by ``smallest``: a tape replayed over chunk after chunk asks each time."""
    known: dict[int, tuple[tuple[int, ...], ...]] = tape.__dict__.setdefault("_last_readers", {})
    found = known.get(smallest)
    if found is None:
        keep = set(tape.outputs) | {slot for slot, _ in tape.constants}
        frees = tuple(
            tuple(slot for slot in last if _elements(tape, slot) >= smallest)
            for last in last_reads([step[2] for step in tape.steps], keep)
        )
        found = known[smallest] = frees if any(frees) else ()
    return found


def peak_elements(tape: Tape, size: int) -> int:
    """The most elements a replay of ``tape`` over ``size`` points (``run_batched``; 1:
    ``Tape.run``) holds at once, counting every slot as batched: its inputs and constants,
    then each step's result until the step after its last reader frees it."""
    smallest = max(1, FREED_ELEMENTS // max(size, 1))
    frees = last_readers(tape, smallest) or ((),) * len(tape.steps)
    held = size * sum(_elements(tape, slot) for slot in tape.inputs)
    held += sum(int(np.size(value)) for _, value in tape.constants)
    peak = held
    for (_, _, _, _, out), dead in zip(tape.steps, frees):
        held += size * _elements(tape, out)
        peak = max(peak, held)
        held -= size * sum(_elements(tape, slot) for slot in dead)
    return peak


def _elements(tape: Tape, slot: int) -> int:
    return math.prod(tape.shapes[slot]) if tape.shapes else 0


def _result_slot(step: Step) -> int:
    return step[4]


class Tracer:
    """Gives every array a slot: traced results, declared inputs, or captured constants.
    After a trace (``traced``): every step as recorded (none folded or dropped), the value
    of every slot (``keep``), the slots of the inputs and outputs, and ``tape()``."""

    def __init__(self) -> None:
        self.slots: dict[int, int] = {}  # id(array) -> slot
        self.keep: list[Array] = []  # arrays kept alive, so that no id is reused while tracing
        self.constants: dict[int, Array] = {}
        self.steps: list[Step] = []
        self.deciding: list[int] = []  # the slots whose values decide the shape of a step
        self.inputs: tuple[int, ...] = ()
        self.outputs: tuple[int, ...] = ()

    def tape(self) -> Tape:
        """The traced steps as a ``Tape``: steps on constants alone folded, steps no output
        needs dropped."""
        return _simplify(self, self.inputs, self.outputs)

    def new_slot(self, array: Array) -> int:
        slot = len(self.keep)
        self.keep.append(array)
        self.slots[id(array)] = slot
        return slot

    def slot(self, tensor: Tensor) -> int:
        slot = self.slots.get(id(tensor.data))
        if slot is None:
            slot = self.new_slot(tensor.data)
            self.constants[slot] = tensor.data
        return slot

    def is_constant(self, tensor: Tensor) -> bool:
        """Whether ``tensor``'s value is a constant of the tape: one it has captured or not
        met yet, or one its steps make from constants alone (which ``_simplify`` folds)."""
        slot = self.slots.get(id(tensor.data))
        if slot is None:
            return True
        constants, steps, seen = self.constants, self.steps, set()
        pending = [slot]
        while pending:
            slot = pending.pop()
            if slot in constants or slot in seen:
                continue
            seen.add(slot)
            i = bisect.bisect_left(steps, slot, key=_result_slot)
            if i == len(steps) or steps[i][4] != slot or not steps[i][2]:
                return False  # an input, or a step of no arguments (not folded)
            pending.extend(steps[i][2])
        return True

    def record(
        self,
        prim: Op,
        tensors: Sequence[Tensor],
        params: dict[str, Any],
        out: Tensor,
        forward: Callable[..., Any] | None = None,
    ) -> None:
        """One step; ``forward`` is the numpy function that made ``out`` (the primitive's,
        unless the engine adapted it to its operands' dtypes)."""
        slots, keep = self.slots, self.keep
        # each operand's slot by map (a comprehension is a frame of its own in this Python);
        # an array met for the first time is a constant, given its slot by ``slot``
        found = tuple(map(slots.get, map(id, map(_data, tensors))))
        args: tuple[int, ...] = found  # type: ignore[assignment] # (typing.cast: a call a step)
        if None in found:
            args = tuple([s if s is not None else self.slot(t) for s, t in zip(found, tensors)])
        shape_from = prim.extra.get("shape_from")
        if shape_from is not None:
            self.deciding.extend(args[i] for i in shape_from([t.data for t in tensors], params))
        forward = forward or prim.forward
        assert forward is not None, f"{prim.name} is not a primitive"
        slot = len(keep)  # new_slot(out.data), inline: a call less a step
        data = out.data
        keep.append(data)
        slots[id(data)] = slot
        self.steps.append((prim.name, forward, args, params, slot))


def trace(function: Callable[..., Sequence[Tensor]], *examples: Array) -> Tape:
    """Trace ``function(*tensors) -> tensors`` at the example arrays into a ``Tape``."""
    return traced(function, *examples).tape()


def traced(function: Callable[..., Sequence[Tensor]], *examples: Array) -> Tracer:
    """``trace``'s tracer, before its ``Tape`` is made (``Tracer.tape``)."""
    inputs = [Tensor(np.array(e)) for e in examples]
    return traced_on(inputs, lambda: function(*inputs))


def trace_on(inputs: Sequence[Tensor], function: Callable[[], Sequence[Tensor]]) -> Tape:
    """Trace ``function() -> tensors``, which reads the tensors ``inputs`` (the tape's
    inputs, in order), into a ``Tape``."""
    return traced_on(inputs, function).tape()


def traced_on(inputs: Sequence[Tensor], function: Callable[[], Sequence[Tensor]]) -> Tracer:
    """``trace_on``'s tracer, before its ``Tape`` is made (``Tracer.tape``)."""
    tracer = Tracer()
    tracer.inputs = tuple(tracer.new_slot(t.data) for t in inputs)
    previous = _Mode.tracer
    _Mode.tracer = tracer
    try:
        outputs = function()
    finally:
        _Mode.tracer = previous
    tracer.outputs = tuple(tracer.slot(o) for o in outputs)
    return tracer


def _simplify(tracer: Tracer, inputs: tuple[int, ...], outputs: tuple[int, ...]) -> Tape:
    """Fold steps whose arguments are all constants; drop steps no output needs."""
    constants = dict(tracer.constants)
    constant = constants.__contains__  # (read by all and map: no loop of bytecodes a step)
    steps = []
    for step in tracer.steps:
        args = step[2]
        if args and all(map(constant, args)):
            _, function, _, params, out = step
            constants[out] = function(*[constants[a] for a in args], **params)
        else:
            steps.append(step)
    kept, read = needed(steps, outputs)
    used_constants = tuple([(s, v) for s, v in constants.items() if s in read])
    keep = tracer.keep
    try:  # the engine's values are arrays: their attributes, read without numpy's functions
        shapes = tuple(map(_shape, keep))
        dtypes = tuple(map(_dtype, keep))
    except AttributeError:
        shapes = tuple([np.shape(a) for a in keep])
        dtypes = tuple([getattr(a, "dtype", None) for a in keep])
    sizes = list(map(math.prod, shapes))
    return _made(
        size=len(keep),
        inputs=inputs,
        outputs=outputs,
        constants=used_constants,
        steps=tuple(kept),
        ranks=tuple(map(len, shapes)),
        largest=max(sizes, default=1),
        elements=sum(sizes),
        dynamic=not all(map(constants.__contains__, tracer.deciding)),
        shapes=shapes,
        dtypes=dtypes,
    )


_shape = operator.attrgetter("shape")
_data = operator.attrgetter("data")
_dtype = operator.attrgetter("dtype")


def _made(**fields: Any) -> Tape:
    """The ``Tape`` of ``fields``, every one of them given: its dict filled at once, without
    the frozen dataclass's ``__init__``, which sets each field by ``object.__setattr__``
    (about 16K instructions a tape: every trace makes one)."""
    tape: Tape = object.__new__(Tape)
    tape.__dict__.update(fields)
    return tape


# -- replaying a tape over a leading batch dimension ---------------------------------------------
#
# Some inputs carry a leading batch dimension; every step whose arguments include a batched
# value is computed by its operation's batch rule (the op table's ``batch``, see
# ops/batching.py). One replay then does the work of many points (or, for a Jacobian, of many
# cotangents).


class NotBatchable(Exception):
    """A step whose operation has no batch rule (the caller then replays point by point)."""


def batch_size(tape: Tape, max_elements: int | None) -> int | None:
    """How many points one batched replay of ``tape`` may take, so that no slot holds more
    than ``max_elements`` (None: no limit)."""
    return None if max_elements is None else max(1, max_elements // max(tape.largest, 1))


def run_batched(
    tape: Tape, arrays: Sequence[Array], batched: Sequence[bool], each_alone: bool = False
) -> list[Array]:
    """Replay ``tape`` where the inputs marked ``batched`` carry a leading batch dimension.

    Every output comes back with the batch dimension in front. Raises ``NotBatchable`` for a
    step it cannot rewrite (the caller then replays point by point). ``each_alone``: each
    point's outputs are the bits of the tape replayed at that point alone, every step taken by
    a rule of ``PER_POINT`` (``NotBatchable`` for a step that has none).
    """
    if tape.dynamic:
        raise NotBatchable("the shape of a step follows the values of the point")
    sizes = {len(a) for a, b in zip(arrays, batched) if b}
    if len(sizes) != 1:
        raise ValueError("batched inputs must share one batch size")
    (size,) = sizes
    slots: list[Any] = [None] * tape.size  # arrays, or numpy scalars a step made
    is_batched = [False] * tape.size
    for slot, value in tape.constants:
        slots[slot] = value
    for slot, value, b in zip(tape.inputs, arrays, batched):
        slots[slot] = value
        is_batched[slot] = b
    # every slot holds ``size`` points' values: the large ones go after their last reader
    per_point = FREED_ELEMENTS // max(size, 1)  # a batch of no points frees as one of one
    frees = last_readers(tape, max(1, per_point)) or ((),) * len(tape.steps)
    for (name, function, args, params, out), dead in zip(tape.steps, frees):
        flags = [is_batched[i] for i in args]
        values = [slots[i] for i in args]
        if any(flags):
            op = OPS.get(name)
            rule = None if op is None else op.batch
            if each_alone and op is not None and rule is not None:
                rule = None if "by_place" in op.extra else PER_POINT.get(rule)
            if rule is None:
                raise NotBatchable(name)
            ranks = [tape.ranks[i] for i in args]
            slots[out] = rule(function, params, values, flags, ranks, size)
            is_batched[out] = True
        else:
            slots[out] = function(*values, **params)
        for i in dead:
            slots[i] = None
    return [
        slots[i] if is_batched[i] else np.broadcast_to(slots[i], (size,) + np.shape(slots[i]))
        for i in tape.outputs
    ]
