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

from ...base.engine_errors import GradError
from ...base.errors import GradcliError
from ...engine import graph_hooks
from ...ops import library as gc
from .runtime import Builtin, Module
from .tensors import Handle, grad_fn

if TYPE_CHECKING:
    from .runtime import Run
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


class MultiGradHook:
    """``register_multi_grad_hook(tensors, fn)``: ``fn(grads)`` once a backward pass has
    computed the gradients of the tensors it reaches, each None that it did not reach (or,
    with ``inputs=``, did not compute); a pass that reaches none of them calls nothing. The
    gradient of a tensor an operation made is its node's, seen by a pre-hook; a leaf's, the
    pass's own (``autograd.py`` tells each hook of them, ``leaf``, and ends the pass,
    ``finish``)."""

    def __init__(self, tensors: list[gc.Tensor], fn: Any):
        self.tensors, self.fn = tensors, fn
        self.grads: dict[int, Any] = {}
        self.handles = [
            graph_hooks.register_prehook(t, self._seen(k))
            for k, t in enumerate(tensors)
            if not t.is_leaf
        ]

    def _seen(self, k: int) -> Callable[[tuple[gc.Tensor]], None]:
        def seen(grads: tuple[gc.Tensor]) -> None:
            self.grads[k] = grads[0]

        return seen

    def leaves(self) -> list[gc.Tensor]:
        return [t for t in self.tensors if t.is_leaf]

    def leaf(self, tensor: gc.Tensor, grad: gc.Tensor | None) -> None:
        for k, t in enumerate(self.tensors):
            if t is tensor and grad is not None:
                self.grads[k] = grad

    def finish(self) -> None:
        grads, self.grads = self.grads, {}
        if grads:
            self.fn([grads.get(k) for k in range(len(self.tensors))])


class MultiHandle:
    """What ``register_multi_grad_hook`` returns: ``remove()`` takes the hook away."""

    def __init__(self, run: Run, hook: MultiGradHook):
        self.run, self.hook = run, hook

    def remove(self) -> None:
        for handle in self.hook.handles:
            handle.remove()
        if self.hook in multi_grad_hooks(self.run):
            multi_grad_hooks(self.run).remove(self.hook)

    def __repr__(self) -> str:
        return f"<torch.autograd.graph._MultiHandle object at 0x{id(self):x}>"


def multi_grad_hooks(run: Run) -> list[MultiGradHook]:
    """The run's multi-grad hooks, which its backward passes tell of their gradients."""
    found: list[MultiGradHook] | None = getattr(run, "multi_grad_hooks", None)
    if found is None:
        found = run.multi_grad_hooks = []  # type: ignore[attr-defined]
    return found


def _register_multi_grad_hook(run: Run) -> Callable[..., MultiHandle]:
    def register(tensors: Any, fn: Any, *, mode: str = "all") -> MultiHandle:
        if mode not in ("all", "any"):
            raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
        if mode == "any":
            raise GradcliError(
                "gradcli run takes register_multi_grad_hook's mode='all' only yet",
                hint="leave mode out: fn is called once with every tensor's gradient",
            )
        listed = list(tensors)
        for t in listed:
            if not isinstance(t, gc.Tensor):
                raise TypeError(f"expected a tuple of Tensors, got {type(t).__name__}")
        hook = MultiGradHook(listed, fn)
        multi_grad_hooks(run).append(hook)
        return MultiHandle(run, hook)

    return register


def _increment_version(run: Run) -> Callable[[Any], None]:
    def increment_version(tensor: Any) -> None:
        """torch's: a tensor (or each of several) counted as written in place."""
        for t in [tensor] if isinstance(tensor, gc.Tensor) else list(tensor):
            if not isinstance(t, gc.Tensor):
                raise TypeError(f"increment_version expects Tensors, not {type(t).__name__}")
            node = grad_fn(run, t)
            graph_hooks.bump(t, None if node is None else node.name())

    return increment_version


def module(run: Run, missing: Callable[[str], Any], node_class: Any) -> Module:
    """The ``torch.autograd.graph`` module (``node_class``: its ``Node``, for isinstance)."""
    return Module(
        "torch.autograd.graph",
        {
            "Node": node_class,
            "increment_version": Builtin("increment_version", _increment_version(run)),
            "register_multi_grad_hook": Builtin(
                "register_multi_grad_hook", _register_multi_grad_hook(run)
            ),
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
