"""A graph an earlier backward released: torch's error for a pass that reaches it, and the
check of the parts of a graph that the pass sends no cotangent to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.engine_errors import FREED_GRAPH_ERROR, GradError

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
