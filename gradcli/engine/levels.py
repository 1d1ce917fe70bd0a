"""What the function transforms (``func.py``, ``autograd_functional.py``) share: the reverse
pass they all take (``autograd_grad``), and the *level* of one application of a transform.

A level differentiates with respect to tensors of its own: an alias (``x[...]``) of an input
that requires grad, so that an enclosing transform or the caller can still differentiate
through it, else a fresh leaf. Gradients are taken with respect to those tensors alone
(never an enclosing level's, which is what keeps ``grad(lambda x: grad(lambda y: x * y)(x))``
at 1), always building their graph; a result leaves the level cut from its graph unless that
graph reaches a tensor that requires grad outside the level, as torch's results are.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..base.engine_errors import DomainError
from .meter import zeros
from .node import inputs_of
from .pytree import tree_map
from .tensor import Tensor, grad, is_grad_enabled, set_grad_enabled


def autograd_grad(
    outputs: Sequence[Tensor | None],
    inputs: Sequence[Tensor],
    cotangents: Sequence[Tensor | None] | None = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> tuple[Tensor | None, ...]:
    """``torch.autograd.grad`` of the outputs that require grad (the others, and None, are
    left out with their cotangents), None for an input they do not reach; all None when no
    output requires grad. The transforms' shared reverse pass, as torch's ``_autograd_grad``."""
    if cotangents is None:
        cotangents = [None] * len(outputs)
    chosen = [(o, c) for o, c in zip(outputs, cotangents) if o is not None and o.requires_grad]
    if not chosen:
        return (None,) * len(inputs)
    return grad(
        [o for o, _ in chosen],
        list(inputs),
        [c for _, c in chosen],
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )


def zeros_like(x: Tensor) -> Tensor:
    """A constant tensor of zeros of ``x``'s shape and dtype (checked and metered)."""
    return zeros(x.shape, x.dtype, "a zero gradient")


def dummies(like: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """Zeros that require grad: the cotangents ``u`` of the double-backward trick."""
    return tuple(zeros(x.shape, x.dtype, "the cotangents", requires_grad=True) for x in like)


class Level:
    """One application of a transform: the tensors it differentiates with respect to."""

    def __init__(self) -> None:
        # the fresh leaves made here, kept alive so that their ids stay theirs
        self.fresh: list[Tensor] = []
        self.private: set[int] = set()
        # whether results may stay connected to the caller's graph (not under no_grad)
        self.connected = is_grad_enabled()

    def input(self, x: Any) -> Tensor:
        """The level's own tensor for the input ``x``."""
        if not isinstance(x, Tensor):
            raise DomainError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if self.connected and x.requires_grad:
            with set_grad_enabled(True):
                return x[...]
        return self.leaf(Tensor(x.data, requires_grad=True))

    def leaf(self, fresh: Tensor) -> Tensor:
        """``fresh`` (a new leaf that requires grad), known to the level as its own."""
        self.fresh.append(fresh)
        self.private.add(id(fresh))
        return fresh

    def lower(self, tree: Any) -> Any:
        """``tree`` with each tensor cut from its graph unless the graph reaches a tensor that
        requires grad outside this level."""
        return tree_map(self._lowered, tree)

    def _lowered(self, value: Any) -> Any:
        if not isinstance(value, Tensor) or not value.requires_grad:
            return value
        if self.connected and self._reaches_outside(value):
            return value
        return value.detach()

    def reaches_outside(self, values: Sequence[Tensor]) -> bool:
        """Whether what is computed from ``values`` may leave the level with its graph (see
        ``lower``): only then need it be built."""
        return self.connected and any(v.requires_grad and self._reaches_outside(v) for v in values)

    def _reaches_outside(self, tensor: Tensor) -> bool:
        for t in reachable([tensor]):
            if t._op is None:
                if t.requires_grad and id(t) not in self.private:
                    return True
            elif t._inputs is None:  # released by a backward pass: what it reached is unknown
                return True
        return False


def reachable(tensors: Sequence[Tensor | None]) -> Iterator[Tensor]:
    """Each tensor of the graphs of ``tensors`` once (the tensors, the inputs of their nodes,
    theirs, and so on; a released node's inputs are unknown, so not reached through it)."""
    seen: set[int] = set()
    stack = [t for t in tensors if t is not None]
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen:
            continue
        seen.add(id(tensor))
        yield tensor
        if tensor._op is not None:
            inputs = inputs_of(tensor)  # (made from the node's slots: read once)
            if inputs is not None:
                stack.extend(inputs)
