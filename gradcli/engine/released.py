"""A graph an earlier backward released: torch's error for a pass that reaches it, and the
check of the parts of a graph that the pass sends no cotangent to; and the values under a
graph that no rule reads, released as the graph is built (``let_go``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from ..base.engine_errors import FREED_GRAPH_ERROR, GradError
from .graph_hooks import HOOKED, PACKED, SAVED_HOOKS
from .modes import _Mode

if TYPE_CHECKING:
    from .tensor import Tensor


def refuse_released(root: Tensor) -> None:
    """Raise torch's error if the node of ``root`` (a tensor an operation made) or a node it
    reaches was released by an earlier backward. The pass checks each node that receives a
    cotangent; this covers a part of the graph that receives none (a rule gave None for an
    input that requires grad)."""
    seen: set[Tensor] = set()  # tensors hash by identity
    stack = [root]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        inputs = node._inputs
        if inputs is None:
            raise GradError(FREED_GRAPH_ERROR)
        for tensor in inputs:
            if tensor._op is not None and tensor not in seen:
                stack.append(tensor)


# -- values no rule reads ---------------------------------------------------------------------

#: Elements below which a tensor's values are not looked at for release (the check costs more
#: than small arrays are worth, and an eager chain of small steps pays it at every step)
LARGE = 1 << 15


#: Elements from which the reverse pass writes a rule's cotangent into the memory of an output
#: it alone holds (``Op.vjp_arrays_into``): below, a new array costs less than writing in place
REUSED = 1 << 18


def _holders(tensors: tuple[Tensor, ...]) -> list[int]:
    return [sys.getrefcount(t) for t in tensors]


class _Slot:
    """A probe: an object in a slot, as a node of one input or two holds each (``inputs_of``)."""

    __slots__ = ("held",)
    held: object


def _held_in_slot() -> int:
    slot = _Slot()
    slot.held = object()
    return _holders((slot.held,))[0]  # type: ignore[arg-type]  # (an object for a tensor)


# the count of a tensor held by a node's input alone, read through the tuple made of the
# node's slots (of one input or two), or of the node's own tuple (of other counts); measured on
# a probe, not assumed: the counts depend on the interpreter
_ALONE = _held_in_slot()
_ALONE_IN_TUPLE = _holders((object(),))[0]  # type: ignore[arg-type]


#: Non-empty while every value is kept (``keeping``)
KEEPING: list[bool] = []


@contextmanager
def keeping() -> Iterator[None]:
    """Inside the block ``let_go`` releases nothing: for who reads the values of a graph's
    tensors afterwards, through its nodes (``explain`` walks a traced script's graph)."""
    KEEPING.append(True)
    try:
        yield
    finally:
        KEEPING.pop()


def let_go(operand: Tensor) -> None:
    """Release the values of the tensors under ``operand``'s node that nothing will read: as
    torch frees an intermediate its graph does not save. A tensor ``operand``'s node has as an
    input goes where the node's rule reads no operand's values (``Op.vjp_reads_inputs``: add,
    relu), its own rule does not read its output (``Op.vjp_reads_out``: a matrix product),
    and the node's inputs alone hold it (no name, view or other node: the reference count),
    with no hook, tracer, forward mode or meter about, nor a ``keeping`` block. Its values
    become zeros broadcast to its shape and dtype (which the rules, names and checks still
    read); nothing can read them since (but a walk of the graph's nodes: ``keeping``).
    ``apply`` calls it for the operands of an operation on large arrays, before its value is
    allocated, so that the forward pass, too, holds only what the backward reads."""
    op = operand._op
    if op is None or op.vjp_reads_inputs:  # (before the inputs: a matrix product's reads them)
        return
    inputs = operand._inputs
    if inputs is None or HOOKED or PACKED or SAVED_HOOKS or _Mode.watching or KEEPING:
        return
    alone = _ALONE_IN_TUPLE if type(operand._first) is tuple else _ALONE
    for tensor, count in zip(inputs, _holders(inputs)):
        under = tensor._op
        data = tensor.data
        if (
            count <= alone
            and under is not None
            and not under.vjp_reads_out
            and type(data) is np.ndarray
            and data.size >= LARGE
            and data.flags.owndata
            and data.dtype.kind in "fc"
        ):
            # zeros broadcast to its shape (as np.broadcast_to makes them, in a tenth the time)
            zero = np.zeros(1, data.dtype)
            placeholder = np.ndarray(data.shape, data.dtype, zero, 0, (0,) * data.ndim)
            placeholder.flags.writeable = False
            tensor.data = placeholder


def let_go_two(a: Tensor, b: Tensor) -> None:
    """``let_go`` for the operands of an operation on large arrays that an operation made."""
    if a._op is not None:
        let_go(a)
    if b._op is not None:
        let_go(b)


# -- arrays the reverse pass alone holds ------------------------------------------------------


def _references(array: np.ndarray) -> int:
    return sys.getrefcount(array)


def _probe_references() -> int:
    array = np.zeros(1)
    return _references(array)


_SOLE_REFERENCES = _probe_references()  # an array held by one name alone (measured)


def sole(array: np.ndarray) -> bool:
    """Whether the caller's name alone holds ``array`` (an array of its own, writeable): the
    reverse pass holds the output of a node whose tensor is gone."""
    return (
        _references(array) <= _SOLE_REFERENCES + 1  # (+1: this call's own argument)
        and type(array) is np.ndarray
        and array.flags.owndata
        and array.flags.writeable
    )
