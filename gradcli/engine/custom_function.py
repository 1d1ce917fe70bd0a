"""Custom autograd functions (``torch.autograd.Function``): a class with
``@staticmethod forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``; ``F.apply(*args)``
runs forward without recording and records one node whose reverse rule is the class's
``backward``.

The node is the engine's own (an ``Op`` made once per class, named as torch names it,
``FBackward``), so the reverse pass runs it in order with the others; with
``create_graph=True`` the backward runs with recording on, so a backward written in
differentiable operations can be differentiated again. A forward with several outputs
records one node for all of them (the *bundle*: their values flattened into one tensor) and
a small node per output that sends its cotangent into the bundle's, so that ``backward``
is called once with every output's cotangent, as torch calls it (zeros for an output that
got none, or None after ``ctx.set_materialize_grads(False)``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base.engine_errors import EngineError, GradError, ShapeError
from ..ops.table import Op
from . import graph_hooks
from .borrowed import cat, sum_to
from .tensor import (
    _ORDER,
    Node,
    Tensor,
    _forward_mode,
    _Mode,
    as_tensor,
    set_grad_enabled,
)

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class FunctionCtx:
    """What ``forward`` and ``backward`` share (torch's ``ctx``): the tensors saved for
    backward, which inputs need a gradient, and any attribute the function sets."""

    def __init__(self) -> None:
        self._saved: tuple[Tensor | None, ...] = ()
        self._saved_for_forward: tuple[Tensor | None, ...] = ()
        self.in_jvp = False  # while ``jvp`` runs, ``saved_tensors`` are those for forward
        self.needs_input_grad: tuple[bool, ...] = ()
        self.non_differentiable: list[Tensor] = []
        self.dirty: list[Tensor] = []
        self.materialize_grads = True
        self.received: set[int] = set()  # the outputs whose cotangent reached the bundle
        self.node: Tensor | None = None  # the tensor that holds the node (its bundle)
        self.node_name = "BackwardCFunction"  # torch's class of the ctx: the node's name

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (inputs, outputs or others) for ``backward``'s ``saved_tensors``."""
        for i, tensor in enumerate(tensors):
            if tensor is not None and not isinstance(tensor, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(tensor).__name__}"
                )
        self._saved = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for ``jvp``'s ``saved_tensors`` (forward mode AD)."""
        if not all(t is None or isinstance(t, Tensor) for t in tensors):
            raise AssertionError(
                "save_for_forward expects all arguments to be tensors; you should save "
                "non-tensors as attributes on ctx."
            )
        self._saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to ``save_for_backward``, or in ``jvp`` to ``save_for_forward``
        (refused, as torch refuses them, once a backward without ``retain_graph`` has freed
        the node)."""
        if self.in_jvp:
            return self._saved_for_forward
        if self.node is not None and self.node._inputs is None:
            raise GradError(_FREED)
        return self._saved

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs that get no gradient (indices, masks): they do not require grad."""
        self.non_differentiable.extend(tensors)

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Inputs the forward changed in place, each returned as an output: their version
        counts a write (see ``_bump_dirty``)."""
        self.dirty.extend(tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """Whether an output that got no cotangent is handed to backward as zeros (True,
        the default) or as None."""
        self.materialize_grads = bool(value)


class Function:
    """The base of a custom autograd function: subclass it, write ``forward`` and
    ``backward`` as static methods, and call ``F.apply(...)``."""

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """The function's value, computed without recording a graph."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """(torch's other style) fill ``ctx`` from a ``forward`` that takes no ctx."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """The gradients of the inputs, one per argument of ``forward`` (None for those that
        need none), from the gradients of the outputs."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """The tangents of the outputs from those of the inputs (forward mode AD)."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the function on ``args``, recording its node where an input requires grad."""
        return _apply(cls, args, kwargs)


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """torch's decorator of a backward that is not itself differentiable: it runs without
    recording."""

    @functools.wraps(backward)
    def run(ctx: Any, *grad_outputs: Any) -> Any:
        with set_grad_enabled(False):
            return backward(ctx, *grad_outputs)

    return run


def node_name(cls: type) -> str:
    """The name of a custom function's node: the class's name and ``Backward``."""
    return f"{cls.__name__}Backward"


def node_text(node: Node) -> str:
    """What Python prints for a ``grad_fn``: ``<MulBackward0 object at 0x…>``, and for a
    custom function's node ``<torch.autograd.function.FBackward object at 0x…>``."""
    custom = node.prim.extra.get("custom_function") is not None
    prefix = "torch.autograd.function." if custom else ""
    return f"<{prefix}{node.name()} object at {hex(id(node))}>"


def _uses_setup_context(cls: type) -> bool:
    """Whether the class has torch's other style: ``forward`` without ctx, then
    ``setup_context(ctx, inputs, output)``."""
    return getattr(cls, "setup_context", None) is not Function.setup_context


def _apply(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if _Mode.tracer is not None:
        raise EngineError(
            f"{cls.__name__}: a custom autograd.Function cannot be compiled; run it eagerly"
        )
    ctx = FunctionCtx()
    ctx.node_name = node_name(cls)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    inputs = tuple(args[i] for i in positions)
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    tangents = _Mode.forward_active and any(t.tangent is not None for t in inputs)
    with set_grad_enabled(False), _forward_mode(False):
        if _uses_setup_context(cls):
            output = cls.forward(*args, **kwargs)  # type: ignore[attr-defined]
            cls.setup_context(ctx, args, output)  # type: ignore[attr-defined]
        else:
            output = cls.forward(ctx, *args, **kwargs)  # type: ignore[attr-defined]
    _check_dirty(ctx, output)
    if tangents:
        output = _with_tangents(cls, ctx, args, output)
    if not (_Mode.grad_enabled and any(t.requires_grad for t in inputs)):
        for tensor in ctx.dirty:
            graph_hooks.bump(tensor, None)
        return _unrecorded(ctx, inputs, output)
    several = isinstance(output, tuple)
    outputs = list(output) if several else [output]
    for i, value in enumerate(outputs):
        if isinstance(value, Tensor) and (
            value.requires_grad or any(value is t for t in inputs)
        ):  # an input handed back, or a tensor of another graph: a new tensor of its values
            fresh = Tensor(value.data)
            if any(value is t for t in ctx.non_differentiable):
                ctx.non_differentiable.append(fresh)
            outputs[i] = fresh
    differentiable = [
        i
        for i, value in enumerate(outputs)
        if isinstance(value, Tensor)
        and value.dtype.kind in "fc"
        and not any(value is t for t in ctx.non_differentiable)
    ]
    needs = tuple(t.requires_grad for t in inputs)
    params: dict[str, Any] = {"ctx": ctx, "cls": cls, "positions": tuple(positions)}
    if not several:
        if differentiable:
            _record(outputs[0], _function_op(cls), inputs, needs, params | {"layout": None})
            ctx.node = outputs[0]
        _bump_dirty(cls, ctx, [output], outputs)
        return outputs[0]
    layout = [(i, outputs[i].shape, outputs[i].dtype) for i in differentiable]
    if layout:
        dtype = np.result_type(*(dtype for _, _, dtype in layout))
        flat = [np.asarray(outputs[i].data, dtype=dtype).reshape(-1) for i in differentiable]
        bundle = Tensor(np.concatenate(flat) if flat else np.zeros(0, dtype=dtype))
        params["layout"] = (tuple(layout), len(outputs))
        _record(bundle, _function_op(cls), inputs, needs, params)
        ctx.node = bundle
        start = 0
        for i in differentiable:
            stop = start + outputs[i].data.size
            piece = {"ctx": ctx, "k": i, "start": start, "stop": stop}
            _record(outputs[i], _piece_op(cls), (bundle,), (True,), piece)
            start = stop
    _bump_dirty(cls, ctx, list(output), outputs)
    return tuple(outputs)


def _unrecorded(ctx: FunctionCtx, inputs: tuple[Tensor, ...], output: Any) -> Any:
    """The outputs of a call that records no node, as torch gives them: an input handed back
    is a new tensor over its values (not requiring grad), but for one written in place
    (``mark_dirty``) while grad mode is on, which is the input itself."""
    several = isinstance(output, tuple)
    outputs = list(output) if several else [output]
    for i, value in enumerate(outputs):
        dirty = _Mode.grad_enabled and any(value is t for t in ctx.dirty)
        if isinstance(value, Tensor) and not dirty and any(value is t for t in inputs):
            outputs[i] = Tensor(value.data)
    return tuple(outputs) if several else outputs[0]


def _check_dirty(ctx: FunctionCtx, output: Any) -> None:
    """torch's refusals of ``mark_dirty``: a leaf that requires grad written in place while
    grad mode is on, a tensor marked dirty that the forward does not return."""
    returned = output if isinstance(output, tuple) else (output,)
    for tensor in ctx.dirty:
        if _Mode.grad_enabled and tensor.is_leaf and tensor.requires_grad:
            raise GradError(
                "a leaf Variable that requires grad has been used in an in-place operation."
            )
        if not any(tensor is value for value in returned):
            raise GradError(
                "Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the "
                "Function."
            )


def _bump_dirty(cls: type, ctx: FunctionCtx, returned: list[Any], outputs: list[Any]) -> None:
    """Each input the forward wrote in place (``ctx.mark_dirty``) counts a write, as torch's
    version counter does: the tensor that now holds its values (the output the forward
    returned it as) is the function's node's output, so that a node that saved the input
    before refuses to run backward, naming this function."""
    for tensor in ctx.dirty:
        k = next(k for k, value in enumerate(returned) if value is tensor)
        successor = outputs[k] if outputs[k] is not tensor else None
        graph_hooks.bump(tensor, node_name(cls), successor)


def _with_tangents(cls: type, ctx: FunctionCtx, args: tuple[Any, ...], output: Any) -> Any:
    """Forward mode: the outputs with the tangents the class's ``jvp(ctx, *tangents)``
    gives (torch's forward-mode rule of a custom Function; zeros for an input without one)."""
    given = [
        (a.tangent if a.tangent is not None else Tensor(np.zeros_like(a.data)))
        if isinstance(a, Tensor)
        else None
        for a in args
    ]
    ctx.in_jvp = True
    try:
        with _forward_mode(False):
            found = cls.jvp(ctx, *given)  # type: ignore[attr-defined]
    finally:
        ctx.in_jvp = False
    several = isinstance(output, tuple)
    outputs = list(output) if several else [output]
    found = list(found) if isinstance(found, tuple) else [found]
    for i, (value, tangent) in enumerate(zip(outputs, found)):
        if isinstance(value, Tensor) and tangent is not None:
            if any(value is a for a in args):
                value = outputs[i] = Tensor(value.data)
            value.tangent = as_tensor(tangent, value.dtype)
    return tuple(outputs) if several else outputs[0]


def _record(
    out: Tensor, op: Op, inputs: tuple[Tensor, ...], needs: tuple[bool, ...], params: Any
) -> None:
    """Make ``out`` the output of a node of ``op`` (what ``tensor.apply`` records)."""
    out.requires_grad = True
    out._op = op
    out._inputs = inputs
    out._params = params
    out._needs = needs
    out._order = next(_ORDER)  # (_name and _node unset, as apply leaves them)


def _function_op(cls: type) -> Op:
    """The node of a call of ``cls`` (of its bundle, with several outputs)."""
    return _node_op(cls, "")


def _piece_op(cls: type) -> Op:
    """The node of one output of a call of ``cls`` with several."""
    return _node_op(cls, "one output of ")


@functools.cache
def _node_op(cls: type, what: str) -> Op:
    return Op(
        node_name(cls),
        f"{what}the custom autograd.Function {cls.__name__}",
        vjp=_piece_vjp if what else _function_vjp,
        backward_name=node_name(cls),
        vjp_reads_out=False,
        complex="its own rules",
        extra={"custom_function": cls},
    )


def _piece_vjp(
    cotangent: Tensor,
    out: Any,
    bundle: Tensor,
    needs: Sequence[bool],
    ctx: FunctionCtx,
    k: int,
    start: int,
    stop: int,
) -> tuple[Tensor]:
    """Send one output's cotangent into its place of the bundle's (zeros elsewhere)."""
    ctx.received.add(k)
    flat = cotangent.reshape(-1)
    if flat.dtype != bundle.dtype:
        flat = flat.to(bundle.dtype)  # type: ignore[attr-defined]
    total = bundle.data.size
    parts = [flat]
    if start:
        parts.insert(0, Tensor(np.zeros(start, dtype=bundle.dtype)))
    if stop < total:
        parts.append(Tensor(np.zeros(total - stop, dtype=bundle.dtype)))
    return (cat(parts, 0) if len(parts) > 1 else flat,)


def _grad_outputs(cotangent: Tensor, ctx: FunctionCtx, layout: Any) -> list[Any]:
    """The cotangent of each output, as torch hands them to backward."""
    if layout is None:
        return [cotangent]
    entries, count = layout
    grads: list[Any] = [None] * count
    start = 0
    for k, shape, dtype in entries:
        size = int(np.prod(shape, dtype=np.int64))
        if k in ctx.received:
            piece = cotangent[start : start + size].reshape(shape)
            grads[k] = piece if piece.dtype == dtype else piece.to(dtype)  # type: ignore[attr-defined]
        elif ctx.materialize_grads:
            grads[k] = Tensor(np.zeros(shape, dtype=dtype))
        start += size
    ctx.received.clear()
    return grads


def _function_vjp(
    cotangent: Tensor,
    out: Any,
    *inputs: Tensor,
    needs: Sequence[bool],
    ctx: FunctionCtx,
    cls: type,
    positions: tuple[int, ...],
    layout: Any,
) -> tuple[Tensor | None, ...]:
    """Call the class's backward and take each tensor input's gradient from its result."""
    name = node_name(cls)
    result = cls.backward(ctx, *_grad_outputs(cotangent, ctx, layout))  # type: ignore[attr-defined]
    if not isinstance(result, tuple):
        result = (result,)
    expected = len(ctx.needs_input_grad)
    if len(result) != expected and not (
        len(result) > expected and all(g is None for g in result[expected:])
    ):
        raise GradError(
            f"function {name} returned an incorrect number of gradients (expected "
            f"{expected}, got {len(result)})"
        )
    tensor_positions = set(positions)
    for i, gradient in enumerate(result[:expected]):
        if gradient is not None and i not in tensor_positions:
            raise GradError(
                f"function {name} returned a gradient different than None at position "
                f"{i + 1}, but the corresponding forward input was not a Variable"
            )
    return tuple(
        _checked(name, i, result[i], tensor) if need else None
        for i, tensor, need in zip(positions, inputs, needs)
    )


def _checked(name: str, index: int, given: Any, tensor: Tensor) -> Tensor | None:
    """A gradient of the input's shape and dtype: summed down where it was broadcast,
    refused where it cannot be."""
    if given is None:
        return None
    gradient = as_tensor(given, tensor.dtype)
    if gradient.shape != tensor.shape:
        try:
            np.broadcast_shapes(gradient.shape, tensor.shape)
            fits = np.broadcast_shapes(gradient.shape, tensor.shape) == gradient.shape
        except ValueError:
            fits = False
        if not fits:
            raise ShapeError(
                f"Function {name} returned an invalid gradient at index {index} - got "
                f"{list(gradient.shape)} but expected shape compatible with {list(tensor.shape)}"
            )
        gradient = sum_to(gradient, tensor.shape)
    if gradient.dtype != tensor.dtype and tensor.dtype.kind in "fc":
        converted: Tensor = gradient.to(tensor.dtype)  # type: ignore[attr-defined]
        return converted
    return gradient
