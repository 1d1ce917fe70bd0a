"""A recorded operation as ``Tensor.grad_fn`` gives it (``Node``): a view of the node slots of
the tensor the operation made, where ``tensor.apply`` records them; and how those slots hold
the operation's inputs (``inputs_of``). This module needs no tensor at run time, so that the
tensor module can import it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from ..ops.table import Op
    from .tensor import Tensor


class Node:
    """One recorded operation, what ``Tensor.grad_fn`` gives: a view of the node slots of the
    tensor it made (``output``), where ``apply`` records them.

    ``inputs`` are the input tensors (saved for the reverse rule); ``needs`` says which of them
    require grad. After a backward pass without ``retain_graph`` the saved values of a node
    whose entry saves any (``Op.saved``) are released (``inputs`` is None), and a second pass
    that reaches it raises torch's error; a node that saved nothing (``x + 2``) runs again, as
    in PyTorch.

    A tensor makes its node once, when ``grad_fn`` is first read, and keeps it: ``y.grad_fn is
    y.grad_fn``, as in torch, and a node kept keeps its graph alive. The engine never reads
    it (naming a node through a Node it does not keep): no cycle of the two outlives the pass.
    """

    __slots__ = ("output", "__weakref__")

    def __init__(self, output: Tensor) -> None:
        self.output = output

    @property
    def prim(self) -> Op:
        op = self.output._op
        assert op is not None
        return op

    @property
    def inputs(self) -> tuple[Tensor, ...] | None:  # None once released
        return inputs_of(self.output)

    @property
    def params(self) -> dict[str, Any]:
        return self.output._params

    @property
    def needs(self) -> tuple[bool, ...]:
        return self.output._needs

    def name(self) -> str:
        """The backward function's name as PyTorch prints it, e.g. ``MulBackward0``."""
        fixed: str | None = getattr(self.output, "_name", None)
        if fixed is not None:  # the spelling of its call named it, or it was released
            return fixed
        namer = self.prim.backward_name
        return namer if isinstance(namer, str) else namer(self)

    @property
    def released(self) -> bool:
        return self.inputs is None

    def __repr__(self) -> str:
        return f"<{self.name()}>"


#: The second input slot of a node of other than one or two inputs (whose first holds their
#: tuple): the inputs of one or two are held in two slots, not a tuple an operation, so that
#: a graph is one object the collector tracks an operation, not two
SEVERAL: Any = object()


def inputs_of(node: Tensor) -> tuple[Tensor, ...] | None:
    """The input tensors of ``node`` (a tensor an operation made), None once released."""
    first = node._first
    if first is None:
        return None
    second = node._second
    if second is None:
        return (first,)
    if second is SEVERAL:
        return cast("tuple[Tensor, ...]", first)
    return (first, second)
