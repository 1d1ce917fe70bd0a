"""Hooks on the recorded graph, after ``torch.autograd.graph``: functions a backward pass calls
on a node's way, and hooks on the tensors a node saves for its reverse rule.

- A node's pre-hook (``Node.register_prehook``) is called with the gradients of the node's
  outputs, ``(g,)``, before its reverse rule runs; a tuple it returns replaces them. A node's
  hook (``Node.register_hook``) is called with the gradients the rule gave for the node's
  inputs and those of its outputs; a tuple it returns replaces the inputs' gradients. Both
  are checked as torch checks them (the number of values, their types), with torch's words.
  The inputs are the node's operands, a number among them too (``x * 2``: torch's node has
  an edge for the 2, its gradient None), but for ``pow`` of a number, whose node in torch
  has the base alone.
- ``saved_tensors_hooks(pack, unpack)``: inside the block, each node recorded packs the
  tensors its reverse rule reads (``pack(x)``, with graph recording off, as torch's), and the
  reverse rule reads ``unpack(packed)`` in their place; ``disable_saved_tensors_hooks(msg)``
  refuses such a block with ``msg``.

Which tensors a node saves, and in which order, follows torch's nodes for the operations
tutorials hook (``mul``: the other operand for the first's gradient, then the first; ``pow``
of a number: its base; an element-wise function of one tensor: its result where the rule
reads it, as ``exp``'s, else its operand); for the others, the operands the rule is given,
then the result where the rule reads it. A number operand (a 0-d constant) is never saved:
torch's node keeps it as a number.

Writes in place (``bump``, told by the script's in-place operations) are counted as torch's
version counters, and a reverse rule that would read a saved tensor written since is refused
with torch's error (``check_versions``).

The engine's reverse pass (``tensor._run_backward``) calls ``before``, ``after``,
``unpacked`` and ``check_versions`` only while there is something for them (``HOOKED``,
``PACKED``, ``BUMPED`` non-empty), and
``apply`` calls ``pack`` only while a block is open (``SAVED_HOOKS``); this module imports
nothing of the engine at run time, so that the tensor module can import it.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..base.engine_errors import GradError
from ..base.torch_text import scalar_type_name

if TYPE_CHECKING:
    from .tensor import Tensor

Hook = Callable[..., Any]
# the slot of a node's result among what it saves (the others are its operands' positions)
RESULT = -1


class RemovableHandle:
    """What registering a hook returns: ``remove()`` takes the hook away (twice is harmless)."""

    def __init__(self, hooks: list[Hook], hook: Hook):
        self.hooks, self.hook = hooks, hook

    def remove(self) -> None:
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)


class _ByNode(dict):  # type: ignore[type-arg]
    """Values by the tensor a node made, kept on the tensor itself (its ``_attached``), so that
    a value that reaches back to its tensor (a script's hook reaches the script's globals, a
    pack hook may return the tensor) dies with it, as a torch node's hooks die with the node:
    a cycle the collector frees, where a value held here would keep the tensor alive for
    good. This dict only lists the tensors that have one, by ``id`` while each lives (its
    emptiness, which the reverse pass tests at every node, is C's test)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def of(self, output: Tensor) -> Any:
        if id(output) not in self:
            return None
        attached: dict[str, Any] | None = getattr(output, "_attached", None)
        return None if attached is None else attached.get(self.name)

    def put(self, output: Tensor, value: Any) -> None:
        attached: dict[str, Any] | None = getattr(output, "_attached", None)
        if attached is None:
            attached = output._attached = {}
        attached[self.name] = value
        key = id(output)
        self[key] = weakref.ref(output, lambda _: self.pop(key, None))


class _NodeHooks:
    __slots__ = ("prehooks", "hooks")

    def __init__(self) -> None:
        self.prehooks: list[Hook] = []
        self.hooks: list[Hook] = []


# the hooks of each node, by the tensor it made (a node is its output's slots, see tensor.Node)
HOOKED = _ByNode("hooks")


def _hooks_of(output: Tensor) -> _NodeHooks:
    if output._op is None:
        raise GradError("a hook is registered on the node of a tensor an operation made")
    found: _NodeHooks | None = HOOKED.of(output)
    if found is None:
        found = _NodeHooks()
        HOOKED.put(output, found)
    return found


def register_prehook(output: Tensor, hook: Hook) -> RemovableHandle:
    """``output.grad_fn.register_prehook(hook)``: ``hook(grad_outputs)`` before the rule."""
    hooks = _hooks_of(output).prehooks
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def register_hook(output: Tensor, hook: Hook) -> RemovableHandle:
    """``output.grad_fn.register_hook(hook)``: ``hook(grad_inputs, grad_outputs)`` after."""
    hooks = _hooks_of(output).hooks
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def _hook_name(hook: Hook) -> str:
    return getattr(hook, "name", None) or getattr(hook, "__name__", None) or "hook"


def _replaced(hook: Hook, result: Any, expected: int) -> tuple[Any, ...]:
    """A hook's tuple of gradients, checked as torch checks it."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{_type_name(result)}'")
    if len(result) != expected:
        raise GradError(
            f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got "
            f"{len(result)}, but expected {expected})"
        )
    for value in result:
        if value is not None and not hasattr(value, "grad_fn"):
            raise TypeError(f"expected Variable, but hook returned '{_type_name(value)}'")
    return result


def _type_name(value: Any) -> str:
    return getattr(value, "python_name", None) or type(value).__name__


def before(output: Tensor, cotangent: Tensor) -> Tensor:
    """The node's pre-hooks, each given ``(cotangent,)``; what they leave of it."""
    hooks = HOOKED.of(output)
    for hook in list(hooks.prehooks) if hooks is not None else ():
        result = hook((cotangent,))
        if result is not None:
            (cotangent,) = _replaced(hook, result, 1)
    return cotangent


def after(
    output: Tensor, input_cotangents: Sequence[Tensor | None], cotangent: Tensor
) -> Sequence[Tensor | None]:
    """The node's hooks, each given the inputs' gradients and ``(cotangent,)``."""
    hooks = HOOKED.of(output)
    for hook in list(hooks.hooks) if hooks is not None else ():
        result = hook(tuple(input_cotangents), (cotangent,))
        if result is not None:
            input_cotangents = _replaced(hook, result, len(input_cotangents))
    return input_cotangents


def _number(tensor: Tensor, needed: bool) -> bool:
    """Whether an operand was a number (a 0-d constant), which torch's node keeps as one."""
    return tensor.ndim == 0 and not needed


# -- saved tensors -----------------------------------------------------------------------------

# the open saved_tensors_hooks blocks, innermost last: (pack, unpack)
SAVED_HOOKS: list[tuple[Hook, Hook]] = []
# the open disable_saved_tensors_hooks blocks' messages, innermost last
_DISABLED: list[str] = []
# what each node packed, by the tensor it made: the unpack hook and (slot, packed value)s
PACKED = _ByNode("packed")
# set by the tensor module: a context manager that turns graph recording off or on
_recording: Callable[[bool], Any] | None = None
# set by the tensor module: recompute whether apply watches (a tracer, forward mode, packing)
_rewatch: Callable[[], None] | None = None


# set by the tensor module: the next place in the order of the nodes' creation
_next_order: Callable[[], int] | None = None


def connect(
    recording: Callable[[bool], Any], rewatch: Callable[[], None], next_order: Callable[[], int]
) -> None:
    """The tensor module's switches: grad mode, whether ``apply`` calls ``pack``, and its
    count of the nodes' creation (which a write in place takes its place in)."""
    global _recording, _rewatch, _next_order
    _recording, _rewatch, _next_order = recording, rewatch, next_order


@contextmanager
def saved_tensors_hooks(pack_hook: Hook, unpack_hook: Hook) -> Iterator[None]:
    """Inside the block, each node recorded packs what it saves (see the module docstring)."""
    if _DISABLED:
        raise GradError(_DISABLED[-1])
    SAVED_HOOKS.append((pack_hook, unpack_hook))
    _rewatched()
    try:
        yield
    finally:
        SAVED_HOOKS.pop()
        _rewatched()


@contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside the block, opening a ``saved_tensors_hooks`` block raises ``error_message``."""
    _DISABLED.append(error_message)
    try:
        yield
    finally:
        _DISABLED.pop()


def _rewatched() -> None:
    assert _rewatch is not None, "the tensor module connects its switches when imported"
    _rewatch()


def saved_slots(output: Tensor, known_only: bool = False) -> list[int]:
    """Which of the node's operands (positions) and whether its result (``RESULT``) it saves,
    in torch's order (see the module docstring); ``known_only``: none for an operation other
    than those whose node's saved tensors are torch's for certain (mul, div, pow of a number,
    an element-wise function of one tensor)."""
    prim = output._op
    assert prim is not None
    saves = prim.saved
    if saves is False or (saves is not True and not saves(output.grad_fn)):
        return []
    inputs = output._inputs
    assert inputs is not None
    needs = output._needs
    number = [_number(t, need) for t, need in zip(inputs, needs)]
    saved_slots = prim.extra.get("saved_slots")  # the entry's own rule (mul, div, pow)
    if saved_slots is not None and len(inputs) == 2:
        slots = saved_slots(needs, number)
        if slots is not None:
            return [s for s in slots if not number[s]]
    if len(inputs) == 1 and not output._params:  # an element-wise function of one tensor
        return [RESULT] if prim.vjp_reads_out else [0]
    if known_only:
        return []
    slots = [k for k in range(len(inputs)) if not number[k]]
    return [*slots, RESULT] if prim.vjp_reads_out else slots


def pack(output: Tensor) -> None:
    """Pack what the node of ``output`` saves with the innermost block's pack hook, with graph
    recording off (torch's pack hook records nothing)."""
    pack_hook, unpack_hook = SAVED_HOOKS[-1]
    slots = saved_slots(output)
    if not slots:
        return
    inputs = output._inputs
    assert inputs is not None and _recording is not None
    packed = []
    with _recording(False):
        for slot in slots:
            packed.append((slot, pack_hook(output if slot == RESULT else inputs[slot])))
    PACKED.put(output, (unpack_hook, packed))


def _unpack(unpack_hook: Hook, value: Any) -> Any:
    found = unpack_hook(value)
    if not hasattr(found, "grad_fn"):
        raise TypeError(
            "Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
            f"{_type_name(found)}"
        )
    return found


def unpacked(
    output: Tensor, operands: tuple[Tensor, ...], result: Tensor | None
) -> tuple[tuple[Tensor, ...], Tensor | None]:
    """The operands and the result the node's rule reads: what the unpack hook gives for each
    it packed, in the order it packed them, the others as they are."""
    found = PACKED.of(output)
    if found is None:
        return operands, result
    unpack_hook, packed = found
    values = list(operands)
    for slot, value in packed:
        if slot == RESULT:
            result = _unpack(unpack_hook, value) if result is not None else None
        else:
            values[slot] = _unpack(unpack_hook, value)
    return tuple(values), result


def saved_value(output: Tensor, slot: int) -> Any:
    """What the node saved at ``slot`` (an operand's position, or ``RESULT``) as a script reads
    it (``_saved_self``): unpacked where it was packed; None where nothing was packed."""
    found = PACKED.of(output)
    if found is None:
        return None
    unpack_hook, packed = found
    for at, value in packed:
        if at == slot:
            return _unpack(unpack_hook, value)
    return None


# -- versions: tensors written in place ------------------------------------------------------

# Each write in place of a tensor, by the tensor: its number and (the last few) places in the
# order of the nodes' creation, with the node that holds the values written (its name, None
# for a write outside a graph to a tensor of none). A node made before a write of a tensor it
# saved reads values that are no longer there: torch's version counter, which the reverse
# pass checks (``check_versions``) as torch's does when it unpacks a saved tensor, for the
# operations whose saved tensors are known to be torch's (``saved_slots``' known_only): a
# write torch would let pass is never refused.
BUMPED = _ByNode("writes")
_KEPT_WRITES = 64
_KINDS = {"CopySlices": "torch::autograd::CopySlices"}


class _Counter:
    """torch's version counter of a tensor: its writes, through every tensor gradcli made
    for it (see ``bump``'s successor): their number, the last few's places in the order of
    the nodes' creation, and the node that holds the values now."""

    __slots__ = ("count", "orders", "holder")

    def __init__(self) -> None:
        self.count = 0
        self.orders: list[int] = []  # the last _KEPT_WRITES writes' places
        self.holder: str | None = None


class _Writes:
    """The writes of one tensor object (whose values a node may have saved) and its counter."""

    __slots__ = ("orders", "counter")

    def __init__(self, counter: _Counter) -> None:
        self.orders: list[int] = []
        self.counter = counter


def _kept(orders: list[int], at: int) -> list[int]:
    return [*orders[-_KEPT_WRITES + 1 :], at]


def bump(tensor: Tensor, holder: str | None, successor: Tensor | None = None) -> None:
    """``tensor`` was written in place (``x.sin_()``, ``x[0] = 1``, ``x -= 1`` under
    no_grad; ``torch.autograd.graph.increment_version``); ``holder``: the name of the node
    that holds the values now (torch's grad_fn of the tensor after the write), or None.
    ``successor``: the tensor that holds the values written where a write in a graph made a
    new one (gradcli's in-place operation, see script/python/tensors.rebind): it counts on
    with the same counter, as torch's tensor keeps its one version counter."""
    assert _next_order is not None, "the tensor module connects its count when imported"
    writes: _Writes | None = BUMPED.of(tensor)
    if writes is None:
        writes = _Writes(_Counter())
        BUMPED.put(tensor, writes)
    # the write's place: just before the node of the in-place operation itself (which saved
    # the values it was given, as torch's saves the original), else after every node
    at = _next_order() if successor is None or successor._op is None else successor._order
    writes.orders = _kept(writes.orders, at)
    counter = writes.counter
    counter.count += 1
    counter.orders = _kept(counter.orders, at)
    counter.holder = None if holder is None else _kind(holder)
    if successor is not None:
        BUMPED.put(successor, _Writes(counter))


def succeeds(tensor: Tensor, earlier: Tensor) -> bool:
    """Whether ``tensor`` holds the values written in place into ``earlier`` (``bump``'s
    successor: torch's same tensor, one version counter)."""
    mine, theirs = BUMPED.of(tensor), BUMPED.of(earlier)
    return mine is not None and theirs is not None and mine.counter is theirs.counter


def _kind(name: str) -> str:
    """torch's name of a node's kind in its messages: SinBackward0 is "Sin", CopySlices its
    C++ name."""
    return _KINDS.get(name, re.sub(r"Backward\d*$", "", name))


def check_versions(output: Tensor) -> None:
    """Refuse, as torch does, the reverse rule of the node of ``output`` where a tensor it
    saved was written in place after the node was made (a node whose saved tensors were
    packed by saved_tensors_hooks reads what unpack gives, and is not checked)."""
    inputs = output._inputs
    if inputs is None or PACKED.of(output) is not None:
        return
    if BUMPED.of(output) is None and all(BUMPED.of(t) is None for t in inputs):
        return
    for slot in saved_slots(output, known_only=True):  # never refuse what torch would run
        saved = output if slot == RESULT else inputs[slot]
        writes: _Writes | None = BUMPED.of(saved)
        if writes is None or not writes.orders or writes.orders[-1] <= output._order:
            continue
        counter = writes.counter
        later = sum(1 for order in counter.orders if order > output._order)
        # a saved result is its node's output; a saved operand, the output of the node that
        # holds its values now
        holder = _kind(_node_name(output)) if slot == RESULT else counter.holder
        held = "" if holder is None else f", which is output 0 of {holder},"
        raise GradError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{_legacy_type(saved)} {list(saved.shape)}]{held} is at "
            f"version {counter.count}; expected version {counter.count - later} instead. Hint: "
            "enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )


def _node_name(output: Tensor) -> str:
    node = output.grad_fn
    assert node is not None  # the tensor of a node
    return node.name()


def _legacy_type(tensor: Tensor) -> str:
    """torch's legacy name of a tensor's type in its messages: ``torch.FloatTensor``."""
    return f"torch.{scalar_type_name(tensor.dtype)}Tensor"
