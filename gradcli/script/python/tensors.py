"""Tensors as torch scripts use them: their attributes, their methods, writing into them.

A script's tensor is the engine's ``Tensor`` itself. What a script may read of it is listed
here (``attribute``): torch's attributes (``grad``, ``grad_fn``, ``requires_grad``,
``is_leaf``, ``data``, ``shape``, ``dtype``, ``device``, ``ndim``, ``T``, ``mT``, ...) and its
methods, those of the op table bound through the entry's signature (``calls.py``) and the
others torch has (``size()``, ``item()``, ``backward(...)``, ``register_hook(fn)``, ...).
Nothing else of the Python object is reachable.

``grad_fn`` is a ``GradFn``, the same object for the same node, printed as torch prints it
(``<MulBackward0 object at 0x...>``), with ``name()``, ``next_functions`` and the saved
tensors. Writing into a tensor (``x += 1``, ``x.add_(1)``, ``x[0] = 2``, ``x.zero_()``) follows
torch: under ``no_grad`` the values change in place; otherwise the tensor object takes the
new value and its node, so that every name of it sees the change.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...base import torch_text as torchtext
from ...engine import graph_hooks
from ...engine.tensor import _Mode
from ...engine.torch_random import samplers
from ...lang import functions as F
from ...lang.pytorch import torch_in_place
from ...ops import library as gc
from ...ops import naming
from ...ops.arrays.rearranging import view
from . import autograd, numpy_values
from .calls import DTYPES, apply, call_op, dtype_of, numpy_name
from .printing import Size
from .runtime import Builtin, call, type_name

if TYPE_CHECKING:
    from .runtime import Run

# torch 2.13's words
NONLEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
    "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)
# torch 2.13's TORCH_WARN_ONCE of float(t) and complex(t) (also what math.exp(t) calls) where
# t requires grad and grad mode is on; int(t), bool(t) and t.item() do not warn
SCALAR_OF_GRAPH = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)"
)
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
LEAF_WRITE = f"a view of {LEAF_INPLACE}"
NO_RETAIN = "can't retain_grad on Tensor that has requires_grad=False"
INTEGER_GRAD = "only Tensors of floating point and complex dtype can require gradients"
NONLEAF_REQUIRES = (
    "you can only change requires_grad flags of leaf variables. If you want to use a "
    "computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach()."
)
ZERO_NODE = "ZeroBackward0"
_IN_PLACE = {"add_": "+", "sub_": "-", "mul_": "*", "div_": "/", "pow_": "**"}


class Device:
    """``torch.device('cpu')``: the one device gradcli has."""

    python_name = "torch.device"
    type = "cpu"

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) or other == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")


CPU = Device()


# the class of every node (GradFn and AccumulateGrad name it among their bases)
NODE = "torch.autograd.graph.Node"


# the nodes of torch's Scalar overloads, which have no edge for their number
_SCALAR_OVERLOADS = frozenset(
    ("RsubBackward1", "PowBackward0", "PowBackward2", "MaskedFillBackward0", "LerpBackward0")
)
# the nodes whose integer and boolean operands (indices, masks, class targets) have no edge
_INDEXED = frozenset(
    (
        "GatherBackward0",
        "IndexSelectBackward0",
        "IndexBackward0",
        "MaskedFillBackward0",
        "MaskedSelectBackward0",
        "NllLossBackward0",
        "ScatterBackward0",
        "ScatterAddBackward0",
        "IndexAddBackward0",
        "TakeAlongDimBackward0",
        "EmbeddingBackward0",
    )
)


class GradFn:
    """A node of the graph as torch shows it (``y.grad_fn``)."""

    python_name = "GradFn"
    bases = (NODE,)  # isinstance(y.grad_fn, torch.autograd.graph.Node)

    def __init__(self, run: Run, node: Any):
        self.run, self.node = run, node
        self.metadata: dict[Any, Any] = {}  # torch's node.metadata: the script's own dict

    def name(self) -> str:
        return self.run.node_names.get(self.node) or self.node.name()

    def __repr__(self) -> str:
        custom = self.node.prim.extra.get("custom_function") is not None
        prefix = "torch.autograd.function." if custom else ""  # a script's autograd.Function
        return f"<{prefix}{self.name()} object at 0x{id(self):x}>"

    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """torch's edges of the node: one for each input torch's derivative formula takes
        (``_not_differentiated`` leaves out the others), in the order of its operands."""
        inputs = self.node.inputs or ()
        found: list[tuple[Any, int]] = []
        for position, tensor in enumerate(inputs):
            if not isinstance(tensor, gc.Tensor) or self._not_differentiated(position, tensor):
                continue
            found.append((node_of(self.run, tensor), 0))
        return tuple(found)

    def _not_differentiated(self, position: int, tensor: gc.Tensor) -> bool:
        """An operand torch's node has no edge for: the number of a Scalar overload
        (``1 - x``, ``x ** 2``, ``2 ** x``, ``masked_fill(m, 0.)``), an index, a mask or a
        class target (``gather``, ``masked_fill``, ``nll_loss``), ``where``'s condition."""
        name = self.name()
        if name == "WhereBackward0":
            return position == 0
        if name in _SCALAR_OVERLOADS and tensor.ndim == 0 and not self.node.needs[position]:
            return True
        return name in _INDEXED and tensor.dtype.kind in "biu"

    def saved(self, k: int) -> Any:
        """The tensor the node saved at operand ``k`` (``graph_hooks.RESULT``: its result),
        unpacked by the saved-tensor hooks where it was packed (``_saved_self``)."""
        inputs = self.node.inputs
        if inputs is None:
            raise RuntimeError(autograd.FREED_GRAPH)
        if k >= len(inputs):
            raise AttributeError(f"'{self.name()}' object has no attribute '_saved_other'")
        with gc.set_grad_enabled(True):  # torch unpacks outside backward with grad mode on
            unpacked = graph_hooks.saved_value(self.node.output, k)
        if unpacked is not None:
            original = self.node.output if k == graph_hooks.RESULT else inputs[k]
            if original.is_leaf and original.requires_grad and not unpacked.requires_grad:
                # torch gives the unpacked values the saved leaf's place in the graph
                return gc.Tensor(unpacked.data, requires_grad=True)
            return unpacked
        # the result, a tensor of its own holding the output's values
        return gc.Tensor(self.node.output.data) if k == graph_hooks.RESULT else inputs[k]


class AccumulateGrad:
    """The node that accumulates a leaf's gradient (``next_functions`` reaches it)."""

    python_name = "AccumulateGrad"
    bases = (NODE,)

    def __init__(self, variable: gc.Tensor):
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at 0x{id(self):x}>"


def node_of(run: Run, tensor: gc.Tensor) -> Any:
    """What ``next_functions`` shows for an input: its node, a leaf's AccumulateGrad, or
    None for a tensor that does not require grad."""
    if tensor.grad_fn is not None:
        return grad_fn(run, tensor)
    if tensor.requires_grad:
        return _accumulators(run).setdefault(tensor, AccumulateGrad(tensor))
    return None


def _accumulators(run: Run) -> weakref.WeakKeyDictionary[gc.Tensor, AccumulateGrad]:
    found = getattr(run, "accumulators", None)
    if found is None:
        found = run.accumulators = weakref.WeakKeyDictionary()  # type: ignore[attr-defined]
    return found


def grad_fn(run: Run, tensor: gc.Tensor) -> GradFn | None:
    node = tensor.grad_fn
    if node is None:
        return None
    kept = run.grad_fns.get(node)
    if kept is None:
        kept = run.grad_fns[node] = GradFn(run, node)
    return kept


def read_grad(run: Run, tensor: gc.Tensor) -> gc.Tensor | None:
    """``tensor.grad``, with torch's warning for a non-leaf."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = tensor.grad
    if caught:
        run.warn("UserWarning", NONLEAF_GRAD)
    return found


def scalar_of(run: Run, tensor: gc.Tensor, kind: type) -> Any:
    """``float(tensor)`` (``kind`` float, int or complex) of a one-element tensor, with torch's
    warning, once a run, where a float or complex is taken of a tensor that requires grad."""
    if tensor.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    if kind is not int and tensor.requires_grad and _Mode.grad_enabled:
        run.warn("UserWarning", SCALAR_OF_GRAPH, once="scalar of a tensor that requires grad")
    return kind(tensor.data.reshape(-1)[0].item())


def index_of(tensor: gc.Tensor) -> int:
    """``operator.index(tensor)``, as torch's ``__index__`` takes it (what ``math.gcd(t, 4)``
    or ``math.factorial(t)`` call): a one-element tensor of integers or booleans."""
    if tensor.numel() != 1 or tensor.data.dtype.kind not in "biu":
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(tensor.data.reshape(-1)[0])


_PROPERTIES: dict[str, Callable[[Run, gc.Tensor], Any]] = {
    "grad": read_grad,
    "grad_fn": grad_fn,
    "requires_grad": lambda run, t: t.requires_grad,
    "is_leaf": lambda run, t: t.is_leaf,
    "data": lambda run, t: gc.Tensor(t.data),
    "shape": lambda run, t: Size(t.shape),
    "dtype": lambda run, t: dtype_of(t.dtype),
    "device": lambda run, t: CPU,
    "ndim": lambda run, t: t.ndim,
    "is_cuda": lambda run, t: False,
    "layout": lambda run, t: "torch.strided",
}


def attribute(run: Run, tensor: gc.Tensor, name: str) -> Any:
    """``tensor.name`` as a script reads it: see the module docstring."""
    reader = _PROPERTIES.get(name)
    if reader is not None:
        return reader(run, tensor)
    prop = F.PROPERTIES.get(name)
    if prop is not None:
        assert prop.call is not None  # a property of the table has a call
        return apply(run, prop, naming.spelled(prop, name), [tensor])
    method = _METHODS.get(name)
    if method is not None:
        return Builtin(name, lambda *a, **k: method(run, tensor, *a, **k), _method_text(name))
    if name in _IN_PLACE:
        symbol = _IN_PLACE[name]

        def update(other: Any, alpha: Any = None) -> gc.Tensor:
            if alpha is not None:  # x.add_(y, alpha=a) adds a * y
                other = other * alpha
            return in_place(run, tensor, symbol, other)

        return Builtin(name, update, _method_text(name))
    if name.endswith("_") and name[:-1] in IN_PLACE:  # x.sin_(), x.clamp_(min=0)
        return Builtin(
            name,
            lambda *a, **k: _in_place_method(run, tensor, name[:-1], a, k),
            _method_text(name),
        )
    op = F.METHODS.get(name)
    if op is not None:
        dtype = op.extra.get("dtype_methods", {}).get(name)
        if dtype is not None:
            return Builtin(name, lambda: call_op(run, op, "to", (tensor, dtype), {}))
        return Builtin(
            name, lambda *a, **k: call_op(run, op, name, (tensor, *a), k), _method_text(name)
        )
    raise AttributeError(f"'Tensor' object has no attribute '{name}'")


def _method_text(name: str) -> str:
    return f"<built-in method {name} of Tensor object>"


def set_attribute(run: Run, tensor: gc.Tensor, name: str, value: Any) -> None:
    """``tensor.name = value``: ``grad``, ``requires_grad`` and ``data``."""
    if name == "grad":
        if value is not None and not isinstance(value, gc.Tensor):
            raise TypeError(
                "assigned grad expected to be a Tensor or None but got grad of type "
                f"{type_name(value)}"
            )
        tensor.grad = value
    elif name == "requires_grad":
        requires_grad_(run, tensor, bool(value))
    elif name == "data":
        if not isinstance(value, gc.Tensor):
            raise TypeError("data must be a Tensor")
        tensor.data, tensor.dtype = value.data, value.data.dtype
    else:
        raise AttributeError(f"'Tensor' object attribute '{name}' cannot be set by gradcli run")


def requires_grad_(run: Run, tensor: gc.Tensor, requires_grad: bool = True) -> gc.Tensor:
    if not tensor.is_leaf:
        if requires_grad:
            return tensor
        raise RuntimeError(NONLEAF_REQUIRES)
    if requires_grad and tensor.dtype.kind not in "fc":
        raise RuntimeError(INTEGER_GRAD)
    tensor.requires_grad = bool(requires_grad)
    return tensor


def _retain_grad(run: Run, tensor: gc.Tensor) -> None:
    if not tensor.requires_grad:
        raise RuntimeError(NO_RETAIN)
    tensor.retain_grad()


def _item(run: Run, tensor: gc.Tensor) -> Any:
    try:
        return torchtext.item(tensor.data)
    except ValueError as exc:
        raise RuntimeError(str(exc)) from None


def _tolist(run: Run, tensor: gc.Tensor) -> Any:
    run.text.listed((run.statement(), None), tensor.numel(), tensor.dtype.kind == "c")
    return torchtext.tolist(tensor.data)


def _size(run: Run, tensor: gc.Tensor, dim: int | None = None) -> Any:
    if dim is None:
        return Size(tensor.shape)
    if not -max(tensor.ndim, 1) <= dim < max(tensor.ndim, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(tensor.ndim, 1)}, "
            f"{max(tensor.ndim, 1) - 1}], but got {dim})"
        )
    return tensor.shape[dim]


def _clone(run: Run, tensor: gc.Tensor) -> gc.Tensor:
    if not tensor.requires_grad or not _Mode.grad_enabled:
        return gc.Tensor(tensor.data.copy())
    made = view(tensor)  # a node of one input, as torch's; the values copied
    made.data = made.data.copy()
    if made.grad_fn is not None:
        run.node_names[made.grad_fn] = "CloneBackward0"
    return made


def _detach_(run: Run, tensor: gc.Tensor) -> gc.Tensor:
    _become(tensor, gc.Tensor(tensor.data))
    return tensor


def _register_hook(run: Run, tensor: gc.Tensor, hook: Any) -> Any:
    """A hook on a leaf's gradient: called with each backward pass's gradient before it is
    accumulated into ``.grad``, which its result (unless None) replaces."""
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not tensor.is_leaf:
        from ...base.errors import GradcliError

        raise GradcliError(
            "gradcli run takes register_hook on leaf tensors only yet",
            hint="register the hook on a leaf (a tensor made with requires_grad=True)",
        )
    hooks = run.hooks.setdefault(tensor, [])
    hooks.append(hook)
    return Handle(hooks, hook)


class Handle:
    """What ``register_hook`` returns: ``remove()`` takes the hook away."""

    python_name = "torch.utils.hooks.RemovableHandle"

    def __init__(self, hooks: list[Any], hook: Any):
        self.hooks, self.hook = hooks, hook

    def remove(self) -> None:
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)

    def __repr__(self) -> str:
        return f"<torch.utils.hooks.RemovableHandle object at 0x{id(self):x}>"


def _register_post_hook(run: Run, tensor: gc.Tensor, hook: Any) -> Handle:
    """A hook called with a leaf once a backward pass has accumulated its ``.grad``."""
    if not tensor.is_leaf:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = run.post_hooks.setdefault(tensor, [])
    hooks.append(hook)
    return Handle(hooks, hook)


def _zero_(run: Run, tensor: gc.Tensor) -> gc.Tensor:
    return write(run, tensor, (Ellipsis,), 0, ZERO_NODE)


def _fill_(run: Run, tensor: gc.Tensor, value: Any) -> gc.Tensor:
    return write(run, tensor, (Ellipsis,), value, "FillBackward0")


def _copy_(run: Run, tensor: gc.Tensor, source: Any) -> gc.Tensor:
    return write(run, tensor, (Ellipsis,), source, "CopyBackwards")


def _type_as(run: Run, tensor: gc.Tensor, other: gc.Tensor) -> gc.Tensor:
    to = F.lookup("to")
    assert to is not None
    return call_op(run, to, "to", (tensor, other.dtype.name), {})


def _to(run: Run, tensor: gc.Tensor, *args: Any, **kwargs: Any) -> gc.Tensor:
    dtype = kwargs.pop("dtype", None)
    for given in args:
        if isinstance(given, Device) or given == "cpu":
            continue
        dtype = given
    kwargs.pop("device", None)
    if kwargs or dtype is None:
        return tensor
    to = F.lookup("to")
    assert to is not None
    return call_op(run, to, "to", (tensor, numpy_name(dtype, "to")), {})


# torch's legacy type names (``x.type()``), by the numpy name of the dtype
_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


def _type(run: Run, tensor: gc.Tensor, dtype: Any = None, **kwargs: Any) -> Any:
    """``x.type()``: torch's type name (``'torch.FloatTensor'``); ``x.type(torch.float64)``
    or ``x.type('torch.DoubleTensor')``: ``x.to`` that dtype (``x`` itself where it has it)."""
    dtype = kwargs.pop("dtype", dtype)
    if dtype is None:
        return "torch." + _TYPE_NAMES[tensor.dtype.name]
    if isinstance(dtype, str):
        names = {f"torch.{v}": k for k, v in _TYPE_NAMES.items()}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = names[dtype]
    return _to(run, tensor, dtype)


def _sampler(name: str, draw: Callable[..., Any]) -> Callable[..., gc.Tensor]:
    """The in-place sampler ``name`` (``uniform_``, ``normal_``, ``random_``, ...): the
    tensor filled with torch's numbers drawn by ``draw(generator, shape, dtype, *args)`` from
    the run's generator, as a write into it (a leaf that requires grad refuses it)."""

    def fill(run: Run, tensor: gc.Tensor, *args: Any, **kwargs: Any) -> gc.Tensor:
        try:
            values = draw(run.generator, tensor.shape, tensor.dtype, *args, **kwargs)
        except gc.DomainError as exc:
            raise RuntimeError(str(exc)) from None
        node = name.rstrip("_").capitalize() + "Backward0"
        return write(run, tensor, (Ellipsis,), values.astype(tensor.dtype), node)

    return fill


def _random(generator: Any, shape: Any, dtype: Any, low: int, high: int | None = None) -> Any:
    """``random_(to)`` or ``random_(from, to)``: whole numbers in [from, to)."""
    low, high = (0, low) if high is None else (low, high)
    return samplers.randint(generator, low, high, shape, dtype)


_SAMPLERS: dict[str, Callable[..., Any]] = {
    "uniform_": lambda g, shape, dtype, a=0.0, b=1.0, **k: samplers.uniform(
        g, shape, dtype, k.get("from", a), k.get("to", b)
    ),
    "normal_": lambda g, shape, dtype, mean=0.0, std=1.0: samplers.normal(
        g, shape, dtype, mean, std
    ),
    "random_": _random,
    "bernoulli_": lambda g, shape, dtype, p=0.5: samplers.bernoulli(g, shape, p, dtype),
    "exponential_": lambda g, shape, dtype, lambd=1.0: samplers.exponential(g, shape, dtype, lambd),
}

_METHODS: dict[str, Callable[..., Any]] = {
    **{name: _sampler(name, draw) for name, draw in _SAMPLERS.items()},
    "size": _size,
    "dim": lambda run, t: t.ndim,
    "ndimension": lambda run, t: t.ndim,
    "numel": lambda run, t: t.numel(),
    "nelement": lambda run, t: t.numel(),
    "item": _item,
    "tolist": _tolist,
    "requires_grad_": requires_grad_,
    "retain_grad": _retain_grad,
    "register_hook": _register_hook,
    "register_post_accumulate_grad_hook": _register_post_hook,
    "detach_": _detach_,
    "clone": _clone,
    "contiguous": lambda run, t: t,
    "cpu": lambda run, t: t,
    "zero_": _zero_,
    "fill_": _fill_,
    "copy_": _copy_,
    "backward": lambda run, t, *a, **k: autograd.backward(run, t, *a, **k),
    "is_floating_point": lambda run, t: t.dtype.kind == "f",
    "equal": lambda run, t, other: t.shape == other.shape and bool((t.data == other.data).all()),
    "allclose": lambda run, t, other, rtol=1e-5, atol=1e-8, equal_nan=False: bool(
        np.allclose(t.data, other.data, rtol=rtol, atol=atol, equal_nan=equal_nan)
    ),
    "is_complex": lambda run, t: t.dtype.kind == "c",
    "type_as": _type_as,
    "type": _type,
    "to": _to,
    "numpy": lambda run, t, force=False: numpy_values.to_numpy(t, force),
    "view_as": lambda run, t, other: t.reshape(*other.shape),
    "reshape_as": lambda run, t, other: t.reshape(*other.shape),
    "element_size": lambda run, t: t.dtype.itemsize,
    "get_device": lambda run, t: -1,
}


def _become(tensor: gc.Tensor, new: gc.Tensor) -> None:
    """Make the leaf ``tensor`` hold ``new``'s value (``detach_``)."""
    tensor.data, tensor.dtype, tensor.requires_grad = new.data, new.dtype, new.requires_grad
    tensor._op = None


def rebind(run: Run, old: gc.Tensor, new: gc.Tensor) -> gc.Tensor:
    """Every name of ``old`` (the globals, the frames of the calls under way, and the items
    of the lists and dicts they hold) names ``new`` now: torch's tensor written in place
    (``y[0] = v``, ``y += 1`` while a graph is recorded) is the same object with a new node;
    gradcli's graph keeps ``old`` as the node's input, and the script's names follow."""
    graph_hooks.bump(old, _holder(run, new), new)  # the values old held are gone, as in torch
    return rename(run, old, new)


def rename(run: Run, old: gc.Tensor, new: gc.Tensor) -> gc.Tensor:
    """Every name of ``old`` names ``new`` now (see ``rebind``)."""
    spaces = [run.globals, *(frame.names for frame in run.frames)]
    for names in spaces:
        for key, value in names.items():
            if value is old:
                names[key] = new
            elif type(value) is list:
                for k, item in enumerate(value):
                    if item is old:
                        value[k] = new
            elif type(value) is dict:
                for k, item in value.items():
                    if item is old:
                        value[k] = new
    return new


def in_place(run: Run, tensor: gc.Tensor, symbol: str, other: Any) -> gc.Tensor:
    """``tensor += other`` (and ``-=``, ``*=``, ``/=``, ``**=``; ``add_`` ...): torch's
    in-place operation; the tensor that holds the result (see ``rebind``)."""
    if tensor.is_leaf and tensor.requires_grad and _Mode.grad_enabled:
        raise RuntimeError(LEAF_INPLACE)
    op = F.OPERATORS[symbol]
    assert op.call is not None  # an operator has a call
    if not _Mode.grad_enabled or not (
        tensor.requires_grad or (isinstance(other, gc.Tensor) and other.requires_grad)
    ):
        result = apply(run, op, op.call, [gc.Tensor(tensor.data), other])
        _write_values(tensor, result.data)
        graph_hooks.bump(tensor, _holder(run, tensor))
        return tensor
    return rebind(run, tensor, apply(run, op, op.call, [tensor, other]))


# the methods whose in-place form torch has (x.sin_()); of them, those that change the shape
IN_PLACE = torch_in_place()
_RESHAPING = frozenset({"squeeze", "unsqueeze", "t", "transpose"})


def _in_place_method(
    run: Run, tensor: gc.Tensor, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> gc.Tensor:
    """``tensor.name_(...)``: the method ``name``'s result written into ``tensor`` as torch's
    in-place method (its node, ``SinBackward0``, where a graph is recorded: see ``rebind``)."""
    if tensor.is_leaf and tensor.requires_grad and _Mode.grad_enabled:
        raise RuntimeError(LEAF_INPLACE)
    op = F.METHODS[name]
    tracked = _Mode.grad_enabled and (
        tensor.requires_grad or any(isinstance(a, gc.Tensor) and a.requires_grad for a in args)
    )
    result = call_op(run, op, name, (tensor if tracked else gc.Tensor(tensor.data), *args), kwargs)
    reshaped = name in _RESHAPING
    if not isinstance(result, gc.Tensor) or (result.shape != tensor.shape and not reshaped):
        shape = list(getattr(result, "shape", ()))
        raise RuntimeError(
            f"output with shape {list(tensor.shape)} doesn't match the broadcast shape {shape}"
        )
    if tracked:
        return rebind(run, tensor, result)
    if reshaped:  # the same values, the tensor's shape changed in place (a view of them)
        tensor.data = result.data
    else:
        _write_values(tensor, result.data)
        graph_hooks.bump(tensor, _holder(run, tensor))
    return tensor


def _holder(run: Run, tensor: gc.Tensor) -> str | None:
    """The name of the node that holds a tensor's values (None for a leaf)."""
    node = grad_fn(run, tensor)
    return None if node is None else node.name()


def _write_values(tensor: gc.Tensor, data: np.ndarray) -> None:
    if data.dtype != tensor.dtype and not np.can_cast(data.dtype, tensor.dtype, "same_kind"):
        raise RuntimeError(
            f"result type {torchtext.scalar_type_name(data.dtype)} can't be cast to the "
            f"desired output type {torchtext.scalar_type_name(tensor.dtype)}"
        )
    tensor.data[...] = data


def write(run: Run, tensor: gc.Tensor, index: Any, value: Any, node_name: str | None = None):
    """``tensor[index] = value`` (``node_name``: torch's node where it is not CopySlices)."""
    index = index if isinstance(index, tuple) else (index,)
    if tensor.is_leaf and tensor.requires_grad and _Mode.grad_enabled:
        raise RuntimeError(LEAF_WRITE if node_name is None else LEAF_INPLACE)
    if isinstance(value, gc.Tensor) and value.dtype != tensor.dtype:
        to = F.lookup("to")
        assert to is not None
        value = call_op(run, to, "to", (value, str(tensor.dtype)), {})
    setitem = F.OPERATORS["[]="]
    assert setitem.call is not None
    tracked = _Mode.grad_enabled and (
        tensor.requires_grad or (isinstance(value, gc.Tensor) and value.requires_grad)
    )
    if not tracked:
        plain = value.data if isinstance(value, gc.Tensor) else value
        # a tensor in the index (a mask, indices) as its array; the index compared by
        # identity, not by ==, which a tensor in it would answer element by element
        where = tuple(i.data if isinstance(i, gc.Tensor) else i for i in index)
        try:
            tensor.data[... if len(where) == 1 and where[0] is Ellipsis else where] = plain
        except (IndexError, ValueError) as exc:
            raise IndexError(str(exc)) from None
        graph_hooks.bump(tensor, _holder(run, tensor))
        return tensor
    result = apply(run, setitem, setitem.call, [tensor, value, *_layout(index)])
    if node_name is not None and result.grad_fn is not None:
        run.node_names[result.grad_fn] = node_name
    return rebind(run, tensor, result)


def _layout(index: tuple[Any, ...]) -> list[Any]:
    """An index as setitem takes it: plain items as they are; with tensors (or lists) in it,
    the tensors first, then the index with each of them a slot (``indexing.SLOT``)."""
    from ...ops.arrays.indexing import SLOT

    items = [gc.tensor(i) if isinstance(i, list) else i for i in index]
    if not any(isinstance(i, gc.Tensor) for i in items):
        return items
    tensors = [i for i in items if isinstance(i, gc.Tensor)]
    return [*tensors, *(SLOT if isinstance(i, gc.Tensor) else i for i in items)]


__all__ = ["DTYPES", "attribute", "call", "set_attribute", "write", "in_place"]
