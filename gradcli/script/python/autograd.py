"""``backward``, ``torch.autograd.grad``, ``torch.autograd.backward`` and
torch.autograd.functional as a script calls them: torch's checks, in torch's order and words,
around the engine's passes (``gradcli.engine``).

The functions a script hands on (``jacobian(f, x)``) are the script's own ``Function``
objects, which the engine calls as it calls any Python function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...base import torch_text as torchtext
from ...engine import autograd_functional
from ...ops import library as gc
from .vmap_slices import slices_to_come

if TYPE_CHECKING:
    from .runtime import Run

# torch 2.13's words
SCALAR_OUTPUTS = "grad can be implicitly created only for scalar outputs"
REAL_SCALAR_OUTPUTS = "grad can be implicitly created only for real scalar outputs"
FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
MULTI_HOOK_LEAF = (
    "A leaf node was passed to _will_engine_execute_node but we are currently running "
    "autograd.grad(). This is currently not supported."
)


def _no_grad_fn(i: int) -> str:
    return f"element {i} of tensors does not require grad and does not have a grad_fn"


def _shape_mismatch(i: int, gradient: gc.Tensor, output: gc.Tensor) -> str:
    return (
        f"Mismatch in shape: grad_output[{i}] has a shape of "
        f"{torchtext.size_repr(gradient.shape)} and output[{i}] has a shape of "
        f"{torchtext.size_repr(output.shape)}."
    )


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _check_outputs(outputs: list[gc.Tensor], gradients: list[Any] | None) -> None:
    """torch's checks of outputs and their gradients, in its order."""
    if gradients is not None and len(gradients) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(gradients)} gradients")
    for i, output in enumerate(outputs):
        if not isinstance(output, gc.Tensor):
            raise TypeError(f"outputs must be Tensors, not {type(output).__name__}")
        gradient = None if gradients is None else gradients[i]
        if gradient is None:
            if output.requires_grad and output.numel() != 1:
                raise RuntimeError(SCALAR_OUTPUTS)
            if output.requires_grad and output.dtype.kind == "c":
                raise RuntimeError(f"{REAL_SCALAR_OUTPUTS} but got torch.{output.dtype}")
        elif not isinstance(gradient, gc.Tensor):
            raise TypeError(f"grad_outputs must be Tensors or None, not {type(gradient).__name__}")
        elif gradient.shape != output.shape:
            raise RuntimeError(_shape_mismatch(i, gradient, output))
    for i, output in enumerate(outputs):
        if not output.requires_grad:
            raise RuntimeError(_no_grad_fn(i))


def _engine(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except gc.ComplexOutputError as exc:
        raise RuntimeError(str(exc)) from None
    except gc.ScalarOutputError:
        raise RuntimeError(SCALAR_OUTPUTS) from None
    except gc.GradError as exc:
        if str(exc).startswith("Trying to backward through the graph a second time"):
            raise RuntimeError(FREED_GRAPH) from None
        raise RuntimeError(str(exc)) from None


def backward(
    run: Run,
    tensor: gc.Tensor,
    gradient: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """``tensor.backward(...)``."""
    backward_of(
        run, [tensor], None if gradient is None else [gradient], retain_graph, create_graph, inputs
    )


def backward_of(
    run: Run,
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """``torch.autograd.backward(tensors, grad_tensors, ...)``."""
    outputs = _listed(tensors)
    gradients = None if grad_tensors is None else _listed(grad_tensors)
    _check_outputs(outputs, gradients)
    if run.record is not None:
        run.record(outputs, gradients, inputs)
    watchers = _started(run)  # register_multi_grad_hook's
    # torch: retain_graph defaults to create_graph
    retain_graph = (
        bool(create_graph) if retain_graph is None else retain_graph
    ) or slices_to_come()
    if inputs is not None:
        leaves = _listed(inputs)
        found = _engine(
            lambda: gc.grad(outputs, leaves, gradients, retain_graph, create_graph, True)
        )
        for leaf, value in zip(leaves, found):
            if value is not None:
                leaf.grad = value if leaf.grad is None else leaf.grad + value
        _finish_pass(watchers, zip(leaves, found))
        return
    hooked = [(leaf, hooks) for leaf, hooks in run.hooks.items() if hooks]
    seen = {id(leaf) for leaf, _ in hooked}
    hooked += [(t, []) for w in watchers for t in w.leaves() if id(t) not in seen]
    passed: list[tuple[gc.Tensor, Any]] = []
    earlier = [(leaf, leaf.grad) for leaf, _ in hooked]
    for leaf, _ in hooked:  # this pass's gradient alone, for the hooks to see
        leaf.grad = None
    try:
        _engine(lambda: gc.backward(outputs, gradients, retain_graph, create_graph))
    finally:
        for (leaf, hooks), (_, before) in zip(hooked, earlier):
            found = leaf.grad
            for hook in hooks if found is not None else ():
                replaced = hook(found)
                found = found if replaced is None else replaced
            passed.append((leaf, found))
            leaf.grad = before if found is None else found if before is None else before + found
    _finish_pass(watchers, passed)
    with gc.no_grad():  # torch runs them in the backward pass, recording nothing
        for leaf, hooks in list(run.post_hooks.items()):
            if leaf.grad is not None:
                for hook in list(hooks):
                    hook(leaf)


def _started(run: Run) -> list[Any]:
    """The run's multi-grad hooks, each told that a pass starts (what it saw before, in
    passes of the engine's own, forgotten)."""
    watchers = list(getattr(run, "multi_grad_hooks", ()))
    for watcher in watchers:
        watcher.grads = {}
    return watchers


def _finish_pass(watchers: list[Any], leaves: Any) -> None:
    """Tell the multi-grad hooks of the leaves' gradients of the pass, and end it."""
    leaves = list(leaves)
    for watcher in watchers:
        for leaf, value in leaves:
            watcher.leaf(leaf, value)
        watcher.finish()


def grad(
    run: Run,
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[gc.Tensor | None, ...]:
    """``torch.autograd.grad``: its checks in torch's order, with torch's words."""
    outs = _listed(outputs)
    ins = _listed(inputs)
    gradients = None if grad_outputs is None else _listed(grad_outputs)
    _check_outputs(outs, gradients)
    for value in ins:
        if not isinstance(value, gc.Tensor):
            raise TypeError(f"inputs must be Tensors, not {type(value).__name__}")
    if not all(t.requires_grad for t in ins):
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    if run.record is not None:
        run.record(outs, gradients, ins)
    watchers = _started(run)
    # torch: retain_graph defaults to create_graph
    retain_graph = (
        bool(create_graph) if retain_graph is None else retain_graph
    ) or slices_to_come()
    found = _engine(lambda: gc.grad(outs, ins, gradients, retain_graph, bool(create_graph), True))
    for watcher in watchers:
        if watcher.grads and watcher.leaves():
            raise RuntimeError(MULTI_HOOK_LEAF)
    _finish_pass(watchers, zip(ins, found))
    results = []
    for i, value in enumerate(found):
        if value is None and materialize_grads:
            value = gc.Tensor(np.zeros_like(ins[i].data))
        elif value is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been used in "
                "the graph. Set allow_unused=True if this is the desired behavior."
            )
        results.append(value)
    return tuple(results)


def functional(name: str) -> Callable[..., Any]:
    """torch.autograd.functional's ``name`` (jacobian, hessian, vjp, jvp, hvp, vhp): the
    engine's (``engine.autograd_functional``), with every option torch's takes
    (``create_graph``, ``strict``, ``vectorize``, the strategies) and torch's errors as the
    script's RuntimeErrors."""
    found = getattr(autograd_functional, name)

    def run_it(*args: Any, **kwargs: Any) -> Any:
        return _engine(lambda: found(*args, **kwargs))

    return run_it
