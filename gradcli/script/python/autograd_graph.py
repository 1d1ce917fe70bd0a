"""``torch.autograd.graph`` as a script uses it: the ``Node`` class (what ``grad_fn`` is, for
``isinstance``), the saved-tensor hooks' blocks (``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks``, ``allow_mutation_on_saved_tensors``), and the hooks of a
node (``grad_fn.register_hook``, ``register_prehook``), all the engine's
(``engine.graph_hooks``), with torch's errors as the script's exceptions.

A block is an object with ``enter`` and ``exit`` (what a script's ``with`` calls), printed as
torch prints it; the hooks are the script's own functions, which the engine calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from ... import engine as gc
from ...base.engine_errors import GradError
from ...engine import graph_hooks
from .runtime import Builtin, Module
from .tensors import Handle

if TYPE_CHECKING:
    from .tensors import GradFn


class Block:
    """A ``with`` block of torch.autograd.graph: the engine's context manager, entered by the
    script's ``with`` (a block may be entered again once it has ended)."""

    def __init__(self, kind: str, manager: Callable[[], AbstractContextManager[None]]):
        self.kind, self.manager = kind, manager
        self.open: list[AbstractContextManager[None]] = []

    def enter(self) -> None:
        manager = self.manager()
        with _as_runtime_error():
            manager.__enter__()
        self.open.append(manager)

    def exit(self) -> None:
        self.open.pop().__exit__(None, None, None)

    def __repr__(self) -> str:
        return f"<torch.autograd.graph.{self.kind} object at 0x{id(self):x}>"


@contextmanager
def _as_runtime_error() -> Iterator[None]:
    """The engine's refusal as torch's RuntimeError, its words unchanged."""
    try:
        yield
    except GradError as exc:
        raise RuntimeError(str(exc)) from None


def _saved_tensors_hooks(pack_hook: Any, unpack_hook: Any) -> Block:
    return Block(
        "saved_tensors_hooks", lambda: graph_hooks.saved_tensors_hooks(pack_hook, unpack_hook)
    )


def _save_on_cpu(pin_memory: bool = False, device_type: str = "cuda") -> Block:
    """torch's save_on_cpu: each saved tensor packed as a copy of its values on the CPU (the
    one device gradcli has), unpacked as that copy."""

    def pack(tensor: gc.Tensor) -> tuple[str, gc.Tensor]:
        return ("cpu", gc.Tensor(tensor.data.copy()))

    def unpack(packed: tuple[str, gc.Tensor]) -> gc.Tensor:
        return packed[1]

    return Block("save_on_cpu", lambda: graph_hooks.saved_tensors_hooks(pack, unpack))


def _disable_saved_tensors_hooks(error_message: str) -> Block:
    return Block(
        "disable_saved_tensors_hooks",
        lambda: graph_hooks.disable_saved_tensors_hooks(error_message),
    )


def _allow_mutation_on_saved_tensors() -> Block:
    """torch's allow_mutation_on_saved_tensors: inside the block, a tensor saved for a reverse
    rule may be written in place afterwards, and the rule reads the values it had when it was
    saved. Each saved tensor is packed as a copy of its values (torch copies it at the first
    write; the gradients are the same)."""

    def pack(tensor: gc.Tensor) -> gc.Tensor:
        return gc.Tensor(tensor.data.copy())

    return Block(
        "allow_mutation_on_saved_tensors",
        lambda: graph_hooks.saved_tensors_hooks(pack, lambda kept: kept),
    )


def module(missing: Callable[[str], Any], node_class: Any) -> Module:
    """The ``torch.autograd.graph`` module (``node_class``: its ``Node``, for isinstance)."""
    return Module(
        "torch.autograd.graph",
        {
            "Node": node_class,
            "saved_tensors_hooks": Builtin("saved_tensors_hooks", _saved_tensors_hooks),
            "save_on_cpu": Builtin("save_on_cpu", _save_on_cpu),
            "disable_saved_tensors_hooks": Builtin(
                "disable_saved_tensors_hooks", _disable_saved_tensors_hooks
            ),
            "allow_mutation_on_saved_tensors": Builtin(
                "allow_mutation_on_saved_tensors", _allow_mutation_on_saved_tensors
            ),
            "__missing__": missing,
        },
    )


def node_attribute(node: GradFn, name: str) -> Any:
    """``grad_fn.register_hook`` and ``grad_fn.register_prehook`` (None: not one of them)."""
    if name == "register_hook":
        register = graph_hooks.register_hook
    elif name == "register_prehook":
        register = graph_hooks.register_prehook
    else:
        return None

    def registered(hook: Any) -> Handle:
        made = register(node.node.output, hook)
        return Handle(made.hooks, made.hook)

    return Builtin(name, registered)
