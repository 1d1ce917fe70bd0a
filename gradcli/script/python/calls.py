"""A call of an operation of the op table, as a torch script writes it: its arguments bound by
the entry's signature (``torch.sum(x, dim=0)``, ``x.sum(0)``, ``x.reshape(2, 3)``,
``torch.max(x, 1)``), then the engine's call, with the run's bookkeeping around it.

``bind`` puts the arguments in the signature's order as the engine's call takes them (the
rest of a ``*sizes`` parameter, a list of tensors, a dtype by its name), with torch's
TypeError for arguments the signature has no place for. ``apply`` runs the call: the run's
memory tally engaged, the engine's refusals turned into torch's errors (a ``RuntimeError``
the script sees) or gradcli's (exit 2), torch's warnings for these arguments, and torch's
name for the node of an operation the engine builds from others.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...base import bounds
from ...base.errors import GradcliError, engine_hint
from ...engine.sizes import stored
from ...lang import functions as F
from ...ops import library as gc
from ...ops import naming
from ...ops import several as _several
from ...ops.primitives import name_given
from ...ops.reductions.selection import UnpackError
from .printing import ReturnTypes, Size

if TYPE_CHECKING:
    from .runtime import Run

_REST = (F.SIZES, F.VAR_TENSORS)


class DType:
    """A torch dtype (``torch.float32``): its numpy dtype, printed as torch prints it."""

    python_name = "torch.dtype"

    def __init__(self, name: str, numpy: str):
        self.name, self.numpy = name, numpy

    @property
    def is_floating_point(self) -> bool:
        return self.numpy.startswith("float")

    @property
    def is_complex(self) -> bool:
        return self.numpy.startswith("complex")

    @property
    def itemsize(self) -> int:
        import numpy as np

        return np.dtype(self.numpy).itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DType) and other.numpy == self.numpy

    def __hash__(self) -> int:
        return hash(self.numpy)


# torch's dtypes by their first name (torch.float is torch.float32: printed as torch.float32)
_CANONICAL = {"float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"}
_CANONICAL |= {"complex64", "complex128"}
DTYPES: dict[str, DType] = {}
for _name, _numpy in F.DTYPE_NAMES.items():
    _first = next(n for n, v in F.DTYPE_NAMES.items() if v == _numpy and n in _CANONICAL)
    DTYPES[_name] = DTYPES.get(_first) or DType(_first, _numpy)


def dtype_of(numpy_dtype: Any) -> DType:
    """The torch dtype of a numpy dtype."""
    return DTYPES[str(numpy_dtype)]


def numpy_name(value: Any, where: str) -> str:
    """The numpy name of a dtype a script gives (``torch.float64``, or a name)."""
    if isinstance(value, DType):
        return value.numpy
    if isinstance(value, str) and value.removeprefix("torch.") in F.DTYPE_NAMES:
        return F.DTYPE_NAMES[value.removeprefix("torch.")]
    raise TypeError(f"{where}: dtype must be a torch dtype (torch.float32, ...), not {value!r}")


# the numpy names torch takes for its parameters (x.sum(axis=1, keepdims=True))
_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}


def _option(value: Any, kind: str) -> Any:
    """An option's value as the engine takes it: a tuple for dims and sizes, a dtype by its
    name, a Python number for a 0-d tensor."""
    if kind == F.DTYPE:
        return numpy_name(value, "dtype")
    if kind in (F.DIMS, F.INTS, F.SECTIONS) and isinstance(value, (list, tuple)):
        return tuple(_whole(v) for v in value)
    if isinstance(value, gc.Tensor) and kind not in F.OPERAND_KINDS and value.ndim == 0:
        return value.data.item()
    return value


def _whole(value: Any) -> Any:
    if isinstance(value, gc.Tensor) and value.ndim == 0:
        return value.data.item()
    return value


def bind(op: F.Op, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The arguments of a call of ``op`` (written ``name``) in its signature's order."""
    params = tuple(p for p in op.params if p.kind != F.OUTPUT)
    varargs = op.extra.get("varargs")
    if varargs and args and not isinstance(args[0], (list, tuple)):
        args = (list(args),)  # meshgrid(a, b) is meshgrid([a, b])
    bound: dict[str, Any] = {}
    rest: list[Any] = []
    positional = op.extra.get("positional")
    for i, value in enumerate(args):
        if positional is not None:
            if i >= len(positional):
                raise TypeError(
                    f"{name}() takes {len(positional)} positional arguments but {len(args)} "
                    "were given"
                )
            bound[positional[i]] = value
        elif i < len(params) and params[i].kind not in _REST:
            bound[params[i].name] = value
        elif params and params[-1].kind in _REST:
            rest.append(value)
        else:
            raise TypeError(
                f"{name}() takes {len(params)} positional arguments but {len(args)} were given"
            )
    for key, value in kwargs.items():
        known = [p.name for p in params if p.kind not in _REST]
        key = _NUMPY_NAMES.get(key, key) if _NUMPY_NAMES.get(key) in known else key
        if key not in known:
            if key in ("device", "out", "layout", "pin_memory", "memory_format") and value in (
                None,
                "cpu",
            ):
                continue  # the only device gradcli has
            raise GradcliError(
                f"gradcli's {name} takes no argument {key!r} yet (it is {op.signature()})",
                hint="leave it out, or see `gradcli functions`",
            )
        if key in bound:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        bound[key] = value
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):  # reshape(x, (2, 3))
        rest = list(rest[0])
    ordered: list[Any] = []
    for param in params:
        if param.kind == F.SIZES:
            ordered.extend(_whole(v) for v in rest)
        elif param.kind == F.VAR_TENSORS:
            ordered.extend(rest)
        elif param.name in bound:
            value = bound[param.name]
            if param.kind == F.TENSORS and isinstance(value, tuple):
                value = list(value)
            ordered.append(_option(value, param.kind))
        elif param.default is F.REQUIRED:
            raise TypeError(f"{name}() missing required argument '{param.name}'")
        else:
            ordered.append(param.default)
    return ordered


def overload(op: F.Op, args: tuple[Any, ...], kwargs: dict[str, Any]) -> F.Op:
    """torch's ``max(x, other)`` is ``maximum(x, other)``: the entry's ``binary`` form where
    the second argument is a tensor."""
    binary = op.extra.get("binary")
    if binary is None:
        return op
    second = args[1] if len(args) > 1 else kwargs.get("other")
    if isinstance(second, gc.Tensor) or "other" in kwargs:
        pairwise = F.lookup(binary)
        assert pairwise is not None  # the table names an entry it has
        return pairwise
    return op


def call_op(run: Run, op: F.Op, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``torch.name(*args, **kwargs)`` (or the method ``name`` with its tensor first). An
    operation with several results gives them all (a tuple, or torch's named tuple), each
    computed as the entry's call of that result, so that its node has torch's name."""
    op = overload(op, args, kwargs)
    ordered = bind(op, name, args, kwargs)
    if not any(isinstance(a, (gc.Tensor, list, tuple)) for a in ordered):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(args[0]).__name__ if args else 'nothing'}"
        )
    assert op.call is not None  # an entry of the language has a call
    if not _several.several(op) or _one_result(op, ordered):
        result = apply(run, op, naming.spelled(op, name), ordered)
        spelled = op.extra.get("node_of_call")  # div(x, y, rounding_mode=None): DivBackward2
        if spelled is not None and isinstance(result, gc.Tensor) and result.grad_fn is not None:
            named = spelled(args, kwargs)
            if named:
                run.node_names[result.grad_fn] = named
        return result
    count = op.extra["count"](*ordered) if "count" in op.extra else len(op.outputs)
    found = tuple(
        apply(run, op, functools.partial(op.call, output=(k, 0)), ordered) for k in range(count)
    )
    if op.extra.get("plain") or not op.outputs:
        return found
    return ReturnTypes(op.extra.get("return_type", op.name), op.outputs, found)


def _one_result(op: F.Op, ordered: list[Any]) -> bool:
    """Whether this call of an operation that may give several gives one (``max(x)``)."""
    unless = op.extra.get("several_unless_none")
    if unless is None:
        return False
    names = [p.name for p in op.params if p.kind != F.OUTPUT]
    given = ordered[names.index(unless)]
    return given is None or isinstance(given, bool) or not isinstance(given, int)


def apply(run: Run, op: F.Op, call: Callable[..., Any], args: list[Any]) -> Any:
    """The engine's ``call(*args)`` for the entry ``op``: see the module docstring."""
    engaged = bounds.engage(run.tally)
    try:
        result = call(*args)
    except UnpackError as exc:
        raise ValueError(exc.python) from None
    except gc.SizeError as exc:
        raise GradcliError(str(exc), hint=exc.hint) from None
    except (gc.ShapeError, gc.GradError, gc.IndexDomainError) as exc:
        raise RuntimeError(str(exc)) from None
    except gc.EngineError as exc:
        raise GradcliError(f"{op.name}: {exc}", hint=engine_hint(exc)) from None
    finally:
        bounds.engage(engaged)
    for value in result if isinstance(result, (tuple, list)) else (result,):
        if isinstance(value, gc.Tensor) and not run.tally.keep(value):  # metered, or now
            run.tally.charge(stored(value.data) * value.data.itemsize, f"the result of {op.name}")
    updates = op.extra.get("updates")  # torch's in-place side effect (batch_norm's statistics)
    if updates is not None:
        updates(args)
    warning = op.extra.get("warning")
    message = warning(args) if warning else None
    if message:
        run.warn("UserWarning", message, op.name if op.extra.get("warn_once") else None)
    if isinstance(result, gc.Tensor):
        node = result.grad_fn
        made_here = all(getattr(a, "grad_fn", None) is not node for a in args)
        if node is not None and made_here:
            _name_given(run, node, args)
        if node is not None and made_here and node.prim is not op:  # built from others
            named = op.extra.get("built_name", op.backward_name)
            if callable(named):
                named = named(args) if op.forward is None else None
            if named:
                run.node_names[node] = named
    return result


def _name_given(run: Run, node: Any, args: list[Any]) -> None:
    """torch's name of a node made of a 0-d tensor the script gave, which torch's Tensor
    overload takes where a number is its Scalar overload's (``x ** torch.tensor(2.)`` is
    PowBackward1, ``x ** 2`` PowBackward0): the engine, whose numbers are 0-d constants, is
    told which of the node's operands were the script's tensors."""
    given = [a for a in args if isinstance(a, gc.Tensor) and a.ndim == 0 and not a.requires_grad]
    inputs = node.inputs if given else None
    if inputs and any(a is t for a in given for t in inputs):
        run.node_names[node] = name_given(node, given)


def size_of(shape: tuple[int, ...]) -> Size:
    return Size(shape)
