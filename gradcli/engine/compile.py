"""Compiled passes: a computation traced once into a flat list of numpy calls, then replayed.

Tracing runs the computation on the eager engine while every primitive application (forward
values, masks, and the reverse and forward rules, which are written with primitives too) is
recorded as one step ``(numpy function, argument slots, parameters, result slot)``. Replaying
a ``Tape`` at a new point runs those numpy calls alone: no tensors, no graph nodes, no rule
dispatch. A tape is valid for inputs of the traced shapes and dtypes: the engine's control
flow depends on shapes only (checks of values, such as class indices, are not replayed).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .tensor import Tensor, _Mode


@dataclass(frozen=True)
class Tape:
    """A traced computation: ``run(*arrays)`` gives the outputs at a new point."""

    size: int  # number of slots
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    constants: tuple[tuple[int, np.ndarray], ...]
    steps: tuple[tuple, ...]  # (name, numpy function, argument slots, parameters, result slot)
    ranks: tuple[int, ...]  # the number of dimensions of each slot, as traced
    largest: int  # the most elements of any slot, as traced: a batch of B holds B times this

    def run(self, *arrays: np.ndarray) -> list[np.ndarray]:
        slots: list = [None] * self.size
        for slot, value in self.constants:
            slots[slot] = value
        for slot, value in zip(self.inputs, arrays):
            slots[slot] = value
        for call, args, out in self._program:
            if len(args) == 2:
                slots[out] = call(slots[args[0]], slots[args[1]])
            elif len(args) == 1:
                slots[out] = call(slots[args[0]])
            else:
                slots[out] = call(*[slots[i] for i in args])
        return [slots[i] for i in self.outputs]

    @functools.cached_property
    def _program(self) -> tuple[tuple, ...]:
        """The steps as (callable with its parameters bound, argument slots, result slot)."""
        return tuple(
            (functools.partial(function, **params) if params else function, args, out)
            for _, function, args, params, out in self.steps
        )


class _Tracer:
    """Gives every array a slot: traced results, declared inputs, or captured constants."""

    def __init__(self):
        self.slots: dict[int, int] = {}  # id(array) -> slot
        self.keep: list = []  # arrays kept alive, so that no id is reused while tracing
        self.constants: dict[int, np.ndarray] = {}
        self.steps: list[tuple] = []

    def new_slot(self, array: np.ndarray) -> int:
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

    def record(self, prim, tensors: Sequence[Tensor], params: dict, out: Tensor) -> None:
        args = tuple(self.slot(t) for t in tensors)
        self.steps.append((prim.name, prim.forward, args, params, self.new_slot(out.data)))


def trace(function: Callable[..., Sequence[Tensor]], *examples: np.ndarray) -> Tape:
    """Trace ``function(*tensors) -> tensors`` at the example arrays into a ``Tape``."""
    tracer = _Tracer()
    inputs = [Tensor(np.array(e)) for e in examples]
    input_slots = tuple(tracer.new_slot(t.data) for t in inputs)
    previous = _Mode.tracer
    _Mode.tracer = tracer
    try:
        outputs = function(*inputs)
    finally:
        _Mode.tracer = previous
    output_slots = tuple(tracer.slot(o) for o in outputs)
    return _simplify(tracer, input_slots, output_slots)


def _simplify(tracer: _Tracer, inputs: tuple, outputs: tuple) -> Tape:
    """Fold steps whose arguments are all constants; drop steps no output needs."""
    constants = dict(tracer.constants)
    steps = []
    for step in tracer.steps:
        _, function, args, params, out = step
        if args and all(a in constants for a in args):
            constants[out] = function(*[constants[a] for a in args], **params)
        else:
            steps.append(step)
    needed = set(outputs)
    kept = []
    for step in reversed(steps):
        if step[4] in needed:
            kept.append(step)
            needed.update(step[2])
    kept.reverse()
    used_constants = tuple((s, v) for s, v in constants.items() if s in needed)
    ranks = tuple(np.ndim(a) for a in tracer.keep)
    largest = max((np.size(a) for a in tracer.keep), default=1)
    return Tape(len(tracer.keep), inputs, outputs, used_constants, tuple(kept), ranks, largest)


# -- replaying a tape over a leading batch dimension ---------------------------------------------
#
# Some inputs carry a leading batch dimension; every step whose arguments include a batched
# value is rewritten for it: element-wise steps align ranks so the batch dimension stays first,
# steps with an axis parameter shift it by one, shapes gain the batch size in front. One
# replay then does the work of many points (or, for a Jacobian, of many cotangents).

_ELEMENTWISE = {
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "neg", "reciprocal", "exp", "log", "log1p", "expm1",
    "sqrt", "abs", "sign", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "sigmoid", "relu", "softplus", "erf", "clamp", "where",
}  # fmt: skip
_REDUCTIONS = {"sum", "mean", "prod", "amax", "amin", "logsumexp", "norm"}


class NotBatchable(Exception):
    """A step this replay cannot rewrite for a batch dimension."""


def _aligned(value, batched: bool, rank: int, size: int, target: int):
    """A batched value reshaped to (B, 1, ..., 1, *shape) so it has ``target`` logical dims."""
    if not batched:
        return value
    return value.reshape((size,) + (1,) * (target - rank) + value.shape[1:])


def _with_batch(value, batched: bool, size: int):
    return value if batched else np.broadcast_to(value, (size,) + np.shape(value))


def _batched_step(name, function, params, values, batched, ranks, size):
    """The result of one step when some of its arguments carry the batch dimension."""
    if name in _ELEMENTWISE or (name == "mask" and "axis" not in params):
        target = max(ranks)
        values = [_aligned(v, b, r, size, target) for v, b, r in zip(values, batched, ranks)]
        return function(*values, **params)
    if name == "mask":  # a reduction's mask: every argument batched, the axis shifted
        target = max(ranks)
        values = [
            _with_batch(_aligned(v, b, r, size, target), b, size)
            for v, b, r in zip(values, batched, ranks)
        ]
        axis = params["axis"]
        shifted = tuple(a + 1 for a in axis) if isinstance(axis, tuple) else axis + 1
        return function(*values, fn=params["fn"], axis=shifted)
    (x, *rest) = values
    if name in _REDUCTIONS:
        return function(x, dim=tuple(d + 1 for d in params["dim"]), keepdim=params["keepdim"])
    if name in ("softmax", "log_softmax"):
        if ranks[0] == 0:  # over a 0-d input's only "dim": each point alone, as (B, 1)
            return function(x[:, None], dim=1)[:, 0]
        return function(x, dim=params["dim"] + 1)
    if name == "transpose":
        return np.swapaxes(x, params["dim0"] + 1, params["dim1"] + 1)
    if name == "reshape":
        return np.reshape(x, (size,) + tuple(params["shape"]))
    if name == "expand":
        shape = tuple(params["shape"])
        return np.broadcast_to(_aligned(x, True, ranks[0], size, len(shape)), (size,) + shape)
    if name == "sum_to":
        shape = tuple(params["shape"])
        inner = x.shape[1:]
        extra = len(inner) - len(shape)
        axes = tuple(range(1, extra + 1)) + tuple(
            1 + extra + i for i, n in enumerate(shape) if n == 1 and inner[extra + i] != 1
        )
        summed = np.sum(x, axis=axes, keepdims=True) if axes else x
        return summed.reshape((size,) + shape)
    if name == "getitem":
        index = params["index"]
        return np.moveaxis(x[(slice(None), *index)], _advanced_lead(index), 0)
    if name == "scatter":
        index = params["index"]
        out = np.zeros((size,) + tuple(params["shape"]), dtype=x.dtype)
        np.add.at(out, (slice(None), *index), np.moveaxis(x, 0, _advanced_lead(index)))
        return out
    if name in ("stack", "cat"):
        joined = [_with_batch(v, b, size) for v, b in zip(values, batched)]
        join = np.stack if name == "stack" else np.concatenate
        return join(joined, axis=params["dim"] + 1)
    if name == "matmul":
        return _batched_matmul(values, batched, ranks, size)
    raise NotBatchable(name)


def _advanced_lead(index) -> int:
    """Where the batch dimension lands in ``x[(slice(None), *index)]``: first, unless the
    index's arrays (with its integers, then advanced too) are apart, when numpy puts their
    broadcast dimensions in front of everything, the batch dimension after them."""
    arrays = [i for i, part in enumerate(index) if isinstance(part, np.ndarray)]
    if not arrays:
        return 0
    advanced = [
        i for i, part in enumerate(index) if isinstance(part, (np.ndarray, int, np.integer))
    ]
    if advanced[-1] - advanced[0] + 1 == len(advanced):
        return 0
    parts = [np.asarray(index[i]) for i in advanced]
    shapes = [(np.count_nonzero(p),) if p.dtype == np.bool_ else p.shape for p in parts]
    return len(np.broadcast_shapes(*shapes))


def _batched_matmul(values, batched, ranks, size):
    """PyTorch's matmul rules with a batch dimension in front of either operand."""
    a, b = values
    a_vector, b_vector = ranks[0] == 1, ranks[1] == 1
    # A batch of vectors against a fixed matrix is one matrix product, not a batch of them.
    if b_vector and batched[1] and not batched[0] and ranks[0] == 2:
        return b @ a.T
    if a_vector and batched[0] and not batched[1] and ranks[1] == 2:
        return a @ b
    if ranks == [2, 2] and batched[1] and not batched[0]:  # (m, n) @ (B, n, k)
        size_, n, k = b.shape
        flat = a @ b.transpose(1, 0, 2).reshape(n, size_ * k)
        return flat.reshape(a.shape[0], size_, k).transpose(1, 0, 2)
    if ranks == [2, 2] and batched[0] and not batched[1]:  # (B, m, n) @ (n, k)
        size_, m, n = a.shape
        return (a.reshape(size_ * m, n) @ b).reshape(size_, m, b.shape[1])
    if a_vector:
        a = a[..., None, :]
    if b_vector:
        b = b[..., None]
    if batched[0] and not a_vector and ranks[0] < ranks[1]:
        a = _aligned(a, True, ranks[0], size, ranks[1])
    if batched[1] and not b_vector and ranks[1] < ranks[0]:
        b = _aligned(b, True, ranks[1], size, ranks[0])
    if batched[0] and a_vector and not b_vector and ranks[1] > 2:
        a = _aligned(a, True, 2, size, ranks[1])
    if batched[1] and b_vector and not a_vector and ranks[0] > 2:
        b = _aligned(b, True, 2, size, ranks[0])
    out = np.matmul(a, b)
    if b_vector:
        out = out[..., 0]
    if a_vector:
        out = out[..., 0, :] if not b_vector else out[..., 0]
    return out


def batch_size(tape: Tape, max_elements: int | None) -> int | None:
    """How many points one batched replay of ``tape`` may take, so that no slot holds more
    than ``max_elements`` (None: no limit)."""
    return None if max_elements is None else max(1, max_elements // max(tape.largest, 1))


def run_batched(tape: Tape, arrays: Sequence[np.ndarray], batched: Sequence[bool]) -> list:
    """Replay ``tape`` where the inputs marked ``batched`` carry a leading batch dimension.

    Every output comes back with the batch dimension in front. Raises ``NotBatchable`` for a
    step it cannot rewrite (the caller then replays point by point).
    """
    sizes = {len(a) for a, b in zip(arrays, batched) if b}
    if len(sizes) != 1:
        raise ValueError("batched inputs must share one batch size")
    (size,) = sizes
    slots: list = [None] * tape.size
    is_batched = [False] * tape.size
    for slot, value in tape.constants:
        slots[slot] = value
    for slot, value, b in zip(tape.inputs, arrays, batched):
        slots[slot] = value
        is_batched[slot] = b
    for name, function, args, params, out in tape.steps:
        flags = [is_batched[i] for i in args]
        values = [slots[i] for i in args]
        if any(flags):
            ranks = [tape.ranks[i] for i in args]
            slots[out] = _batched_step(name, function, params, values, flags, ranks, size)
            is_batched[out] = True
        else:
            slots[out] = function(*values, **params)
    return [
        slots[i] if is_batched[i] else np.broadcast_to(slots[i], (size,) + np.shape(slots[i]))
        for i in tape.outputs
    ]
