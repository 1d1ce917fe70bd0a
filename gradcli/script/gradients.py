"""The autograd calls of a ``gradcli run`` script, with torch's checks and torch's words:
``y.backward(...)``, ``torch.autograd.grad``, torch.autograd.functional's ``jacobian``,
``hessian``, ``vjp``, ``jvp``, and ``torch.func.grad``. Each function takes the
``ScriptRun`` whose tensors it differentiates."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from .. import engine as gc
from ..base import torch_text as torchtext
from . import showing
from .steps import ScriptError, Step

if TYPE_CHECKING:
    from .execute import ScriptRun

# torch 2.13's words for what this module reproduces
SCALAR_OUTPUTS = "grad can be implicitly created only for scalar outputs"
REAL_SCALAR_OUTPUTS = "grad can be implicitly created only for real scalar outputs"
FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"
HESSIAN_SCALAR = (
    "The Tensor returned by the function given to hessian should contain a single element"
)
VJP_WITHOUT_V = (
    "The vector v can only be None if the user-provided function returns a single Tensor "
    "with a single element."
)
JVP_WITHOUT_V = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)
FUNC_GRAD_SCALAR = (
    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
    "{} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
)


def backward(run: ScriptRun, step: Step) -> None:
    call = step.backward
    assert call is not None  # a backward step
    output = run.tensor(step, call.output, "has no attribute 'backward'")
    gradient = None if call.gradient is None else run.lookup(step, call.gradient)
    try:
        output.backward(gradient, retain_graph=call.retain_graph)
    except gc.ComplexOutputError as exc:  # torch's words, with the dtype
        raise ScriptError(step.statement, "RuntimeError", str(exc)) from None
    except gc.ScalarOutputError:
        raise ScriptError(step.statement, "RuntimeError", SCALAR_OUTPUTS) from None
    except gc.ShapeError:
        assert gradient is not None  # only a given gradient can mismatch
        raise ScriptError(
            step.statement,
            "RuntimeError",
            f"Mismatch in shape: grad_output[0] has a shape of "
            f"{torchtext.size_repr(gradient.shape)} and output[0] has a shape of "
            f"{torchtext.size_repr(output.shape)}.",
        ) from None
    except gc.GradError as exc:
        if str(exc).startswith("Trying to backward through the graph a second time"):
            raise ScriptError(step.statement, "RuntimeError", FREED_GRAPH) from None
        if not output.requires_grad:
            raise ScriptError(step.statement, "RuntimeError", NO_GRAD_FN) from None
        raise


def autograd_grad(run: ScriptRun, step: Step) -> None:
    """``torch.autograd.grad``: its checks in torch's order, with torch's words."""
    spec = step.grad
    assert spec is not None  # an autograd step
    values = [showing.raw_value(run, step, shown) for shown in step.shown]
    outputs = _tensors(step, values[: spec.outputs], "outputs of torch.autograd.grad")
    listed = values[spec.outputs : spec.outputs + spec.inputs]
    inputs = _tensors(step, listed, "inputs of torch.autograd.grad")
    given = values[spec.outputs + spec.inputs :]
    gradients = None if spec.grad_outputs is None else given
    fail = _fails(step)
    if gradients is not None and len(gradients) != len(outputs):
        fail(f"got {len(outputs)} tensors and {len(gradients)} gradients")
    for i, output in enumerate(outputs):
        gradient = None if gradients is None else gradients[i]
        if gradient is None:
            if output.requires_grad and output.numel() != 1:
                fail(SCALAR_OUTPUTS)
            if output.requires_grad and output.dtype.kind == "c":
                fail(f"{REAL_SCALAR_OUTPUTS} but got torch.{output.dtype}")
        elif not isinstance(gradient, gc.Tensor):
            raise step.statement.error(
                f"grad_outputs of torch.autograd.grad must be tensors, not "
                f"{type(gradient).__name__}",
                hint="e.g. grad_outputs=torch.ones(3)",
            )
        elif gradient.shape != output.shape:
            fail(
                f"Mismatch in shape: grad_output[{i}] has a shape of "
                f"{torchtext.size_repr(gradient.shape)} and output[{i}] has a shape of "
                f"{torchtext.size_repr(output.shape)}."
            )
    for i, output in enumerate(outputs):
        if not output.requires_grad:
            fail(f"element {i} of tensors does not require grad and does not have a grad_fn")
    if not all(t.requires_grad for t in inputs):
        fail("One of the differentiated Tensors does not require grad")
    try:
        found = gc.grad(
            outputs,
            inputs,
            gradients,
            retain_graph=spec.retain_graph,
            create_graph=spec.create_graph,
            allow_unused=True,
        )
    except gc.GradError as exc:
        if str(exc).startswith("Trying to backward through the graph a second time"):
            fail(FREED_GRAPH)
        raise
    for i, result in enumerate(found):
        if result is None and not spec.allow_unused:
            fail(
                f"The differentiated Tensor at index {i} appears to not have been used in "
                "the graph. Set allow_unused=True if this is the desired behavior."
            )
    bind(run, step, found, spec.unpack)


def functional(run: ScriptRun, step: Step) -> None:
    """torch.autograd.functional's jacobian, hessian, vjp, jvp, or torch.func.grad, of
    the script's function; torch's errors in torch's words."""
    spec, ir = step.functional, step.ir
    assert spec is not None and ir is not None  # a functional step
    values = [showing.raw_value(run, step, shown) for shown in step.shown]
    inputs = _tensors(step, values[: spec.inputs], f"inputs of {spec.name}")
    given = values[spec.inputs :]
    vectors = None if spec.vectors is None else given if spec.many_vectors else given[0]

    def func(*xs: gc.Tensor) -> gc.Tensor:
        value = run.value(step, ir, step.columns, dict(zip(step.parameters, xs)))
        return value if isinstance(value, gc.Tensor) else gc.tensor(value, dtype=gc.float32)

    arguments: Any = tuple(inputs) if spec.many else inputs[0]
    fail = _fails(step)
    result: Any
    try:
        if spec.name == "grad":
            result = func_grad(run, step, func, inputs, spec.argnums)
        elif spec.name == "jacobian":
            result = gc.jacobian(func, arguments)
        elif spec.name == "hessian":
            result = gc.hessian(func, arguments)
        elif spec.name == "vjp":
            result = gc.vjp(func, arguments, vectors)
        else:
            result = gc.jvp(func, arguments, vectors)
    except gc.ScalarOutputError:
        fail(HESSIAN_SCALAR if spec.name == "hessian" else VJP_WITHOUT_V)
    except gc.GradError:
        if spec.name != "jvp" or vectors is not None:
            raise
        fail(JVP_WITHOUT_V)
    bind(run, step, result, spec.unpack)


def func_grad(
    run, step: Step, func: Callable[..., gc.Tensor], inputs: list[gc.Tensor], k: int
) -> gc.Tensor:
    """``torch.func.grad(func, argnums=k)(*inputs)``: differentiable where an input that
    requires grad makes it so, as torch's is."""
    xs = list(inputs)
    if not xs[k].requires_grad:  # differentiated all the same, by a leaf of its own
        xs[k] = gc.Tensor(xs[k].data, requires_grad=True)
    out = func(*xs)
    if out.ndim != 0:
        _fails(step)(FUNC_GRAD_SCALAR.format(out.ndim))
    found = (
        gc.grad(out, [xs[k]], create_graph=True, allow_unused=True)[0]
        if out.requires_grad
        else None
    )
    if found is None:
        return gc.Tensor(np.zeros_like(xs[k].data))
    if xs[k] is not inputs[k] and not _reaches_a_leaf(found, xs[k]):
        return found.detach()
    return found


def bind(run: ScriptRun, step: Step, found: Any, unpack: bool) -> None:
    """What ``torch.autograd.grad`` (or a function of torch.autograd.functional)
    returned, where the statement puts it."""
    if unpack:
        if not isinstance(found, tuple):
            raise step.statement.error(
                "gradcli run unpacks a tuple only (this is a tensor)",
                0,
                "assign it to one name",
            )
        if len(step.targets) != len(found):
            expected = f"expected {len(step.targets)}"
            raise ScriptError(
                step.statement,
                "ValueError",
                f"too many values to unpack ({expected})"
                if len(step.targets) < len(found)
                else f"not enough values to unpack ({expected}, got {len(found)})",
            )
        run.env.update(zip(step.targets, found))
        return
    value: Any = found
    if step.item is not None:
        if not -len(found) <= step.item < len(found):
            raise ScriptError(step.statement, "IndexError", "tuple index out of range")
        value = found[step.item]
    if step.target is not None:
        run.env[step.target] = value
    elif value is not None:
        run.out.write(repr(showing.printable(run, value)) + "\n")


def _tensors(step: Step, values: list[Any], what: str) -> list[gc.Tensor]:
    for value in values:
        if not isinstance(value, gc.Tensor):
            raise step.statement.error(
                f"the {what} must be tensors, not {type(value).__name__}",
                hint="e.g. torch.autograd.grad(outputs=y, inputs=x)",
            )
    return values


def _fails(step: Step) -> Callable[[str], NoReturn]:
    """What raises torch's RuntimeError ``message`` at ``step``."""

    def fail(message: str) -> NoReturn:
        raise ScriptError(step.statement, "RuntimeError", message)

    return fail


def _reaches_a_leaf(tensor: gc.Tensor, besides: gc.Tensor) -> bool:
    """Whether ``tensor``'s graph reaches a leaf that requires grad other than ``besides``."""
    seen: set[int] = set()
    stack = [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for operand in node.inputs or ():
            if operand.grad_fn is None and operand.requires_grad and operand is not besides:
                return True
            stack.append(operand.grad_fn)
    return False
