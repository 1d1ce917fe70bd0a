"""``explain`` of a program known by its autograd graph alone (a PyTorch script, traced:
``script.traced``), which has no statements to split: its backward pass node by node.

The forward pass lists the graph's nodes in the order the script made them, each as
``name = GradFnBackward0(operands)`` with its value (a node the script holds by a name is
shown by it, another as ``#k``); the backward pass walks them newest first, as torch's engine
does: the gradient that reaches each node, and what its own reverse rule passes on to each
operand that requires grad (the node applied again to its operands, alone, and differentiated
at the incoming gradient); then the leaves' gradients.
"""

from __future__ import annotations

import numpy as np

from ...base import bounds
from ...engine.released import keeping
from ...engine.tensor import apply
from ...lang import ir
from ...ops import library as gc
from ...results import Backward, Explanation, Forward, Passed
from ..compute import Bound, _cotangent, no_gradient, output_of


def explain_graph(bound: Bound, of: str | None = None, v: np.ndarray | None = None) -> Explanation:
    """The forward and backward passes of ``out.backward(v)``, node by node."""
    leaves = bound.leaves()
    with keeping():  # the walk shows every node's value, named or not
        env = bound.run(leaves)
    name, out = output_of(bound, env, of)
    if not out.requires_grad:
        raise no_gradient(name, out)
    if of is None and v is None and bound.program.passes:  # the script's y.backward(v)
        given = bound.program.passes[-1].gradient
        v = None if given is None else env[given].data
    gradient = _cotangent(v, out, name, bound.dtype)
    nodes = _nodes(out)
    labels = {id(t): n for n, t in env.items() if not ir.unseen(n)}
    for k, tensor in enumerate(nodes, start=1):
        labels.setdefault(id(tensor), f"#{k}")
        tensor.retain_grad()
    bound.engine(lambda: out.backward(gradient, retain_graph=True))

    def label(tensor: gc.Tensor) -> str:
        return labels.get(id(tensor), "constant")

    forward = []
    for tensor in nodes:
        fn = tensor.grad_fn
        assert fn is not None and fn.inputs is not None  # a node, its graph kept
        operands = ", ".join(label(t) for t in fn.inputs)
        forward.append(
            Forward(f"{label(tensor)} = {fn.name()}({operands})", fn.prim.name, tensor.data)
        )
    backward = []
    for done, tensor in enumerate(reversed(nodes)):
        bounds.tick(f"the backward pass, {done} of {len(nodes)} nodes explained")
        incoming = tensor._grad
        if incoming is None:
            continue
        passes = tuple(
            Passed(label(operand), part.data)
            for operand, part in bound.engine(lambda t=tensor, g=incoming: _passed(t, g))
        )
        fn = tensor.grad_fn
        assert fn is not None
        backward.append(Backward(f"{label(tensor)} ({fn.name()})", (), incoming.data, passes))
    return Explanation(
        output=name,
        value=out.data,
        grads={n: (None if t._grad is None else t._grad.data) for n, t in leaves.items()},
        forward=tuple(forward),
        backward=tuple(backward),
        notes=(
            "the program is a traced PyTorch script: its backward pass is shown node by node, "
            "without formulas",
        ),
        warnings=bound.messages(),
    )


def _nodes(out: gc.Tensor) -> list[gc.Tensor]:
    """The tensors of ``out``'s graph that a node made, in the order they were made."""
    found: dict[int, gc.Tensor] = {}
    pending = [out]
    while pending:
        tensor = pending.pop()
        fn = tensor.grad_fn
        if fn is None or id(tensor) in found:
            continue
        found[id(tensor)] = tensor
        pending.extend(fn.inputs or ())
    return sorted(found.values(), key=lambda t: t._order)


def _passed(tensor: gc.Tensor, incoming: gc.Tensor) -> list[tuple[gc.Tensor, gc.Tensor]]:
    """What ``tensor``'s node passes on to each operand that requires grad: the node alone,
    applied again to its operands' values, differentiated at ``incoming``."""
    fn = tensor.grad_fn
    assert fn is not None and fn.inputs is not None
    operands = [t.detach().requires_grad_(t.requires_grad) for t in fn.inputs]
    with gc.set_grad_enabled(True):
        again = apply(fn.prim, *operands, **fn.params)
    wanted = [k for k, t in enumerate(operands) if t.requires_grad]
    parts = gc.grad(again, [operands[k] for k in wanted], incoming.detach(), allow_unused=True)
    return [(fn.inputs[k], part) for k, part in zip(wanted, parts) if part is not None]
