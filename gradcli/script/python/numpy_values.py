"""numpy as PyTorch scripts use it beside torch: arrays made from lists or filled, handed to
torch (``torch.from_numpy``, ``torch.tensor(a)``) and back (``x.numpy()``), printed.

Why so little: the scripts of the corpus import numpy to make their data as arrays and to
show a tensor's values as an array; gradcli is a calculator of torch's gradients, not a
second numpy. The script's ``numpy`` module has what they use and its obvious neighbours:
``array`` / ``asarray``, ``zeros``, ``ones``, ``arange``, ``linspace``, the dtypes
(``np.float32`` ...), ``pi`` and ``e``. An array is numpy's own ``ndarray``, printed by numpy
(``print(a)``: ``[[1. 2.] ...]``); a script reads the attributes listed here (``shape``,
``dtype``, ``T``, ``astype``, ``reshape``, ``sum`` ...) and nothing else of it, and Python's
operators on arrays are numpy's (``a += 1`` in place, in memory ``x.numpy()`` shares with
the tensor ``x``). Every array made is bounded as a tensor is (``--max-elements``,
the memory), its size checked before numpy makes it; only numbers are taken (booleans,
integers, floats, complex numbers: no strings, no objects).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...base import bounds
from ...base import torch_text as torchtext
from ...base.errors import GradcliError
from ...engine.tensor import is_grad_enabled
from ...ops import library as gc
from .runtime import Builtin, Module

if TYPE_CHECKING:
    from .runtime import Run

NUMBER_KINDS = "biufc"
TYPES = {
    name: getattr(np, name)
    for name in (
        "float16 float32 float64 int8 int16 int32 int64 uint8 bool_ complex64 complex128"
    ).split()
}


class NumpyType(Builtin):
    """``np.float32`` and the others: a dtype to give, and a callable making a scalar."""

    __slots__ = ("kind",)

    def __init__(self, kind: type):
        super().__init__(
            kind.__name__, lambda value=0: kind(_number(value)), f"<class 'numpy.{kind.__name__}'>"
        )
        self.kind = kind


def _dtype(dtype: Any) -> np.dtype[Any] | None:
    """A dtype a script gives (``np.float32``, ``'float32'``, ``float``, an array's
    ``dtype``) as numpy's, refused where it is not one of numbers."""
    if dtype is None:
        return None
    named = getattr(dtype, "kind", None)
    if isinstance(named, type):  # np.float32, or Python's float as a script names it
        dtype = named
    if not isinstance(dtype, (str, type, np.dtype)):
        raise TypeError(f"Cannot interpret '{dtype!r}' as a data type")
    found = np.dtype(dtype)
    _check_kind(found)
    return found


def _check_kind(dtype: np.dtype[Any]) -> None:
    if dtype.kind not in NUMBER_KINDS:
        raise GradcliError(
            f"gradcli run's numpy takes arrays of numbers only, not of dtype {dtype}",
            hint="make the array of booleans, integers, floats or complex numbers",
        )


def _number(value: Any) -> Any:
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return value
    raise TypeError(f"a number was expected, not {type(value).__name__}")


def _checked(run: Run, count: int, what: str) -> None:
    """Refuse, before numpy makes it, an array of more elements than the run allows."""
    with bounds.charging(run.tally):
        bounds.check_elements(count, what)


def _nested(value: Any, run: Run) -> Any:
    """An array's data as nested lists of numbers (a tensor as its values), a step each."""
    if isinstance(value, gc.Tensor):
        return value.data
    if isinstance(value, np.ndarray):
        _check_kind(value.dtype)
        return value
    if isinstance(value, (list, tuple)):
        run.steps.step()
        return [_nested(v, run) for v in value]
    if not isinstance(value, (bool, int, float, complex, np.generic)):
        raise GradcliError(
            f"gradcli run's numpy takes arrays of numbers only, not of {type(value).__name__}",
            hint="make the array of booleans, integers, floats or complex numbers",
        )
    return value


def module(run: Run) -> Module:
    """The script's ``numpy`` module for one run."""

    def array(obj: Any, dtype: Any = None, copy: bool = True) -> np.ndarray:
        return array_of(run, obj, dtype, copy)

    def asarray(obj: Any, dtype: Any = None) -> np.ndarray:
        return obj if isinstance(obj, np.ndarray) and dtype is None else array(obj, dtype)

    def filled(name: str) -> Callable[..., np.ndarray]:
        def make(shape: Any, dtype: Any = float) -> np.ndarray:
            sizes = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
            if not all(isinstance(n, int) and not isinstance(n, bool) for n in sizes):
                raise TypeError(f"'{type(shape).__name__}' object cannot be interpreted as a shape")
            _checked(run, math.prod(max(n, 0) for n in sizes), f"np.{name}{sizes}")
            made: np.ndarray = getattr(np, name)(sizes, dtype=_dtype(dtype))
            return made

        return make

    def arange(*args: Any, dtype: Any = None) -> np.ndarray:
        numbers = [_number(a) for a in args]
        start, stop, step = (0, numbers[0], 1) if len(numbers) == 1 else (*numbers, 1)[:3]
        if step == 0:
            raise ZeroDivisionError("division by zero")
        _checked(run, max(math.ceil((stop - start) / step), 0), "np.arange")
        return np.arange(*numbers, dtype=_dtype(dtype))

    def linspace(start: Any, stop: Any, num: int = 50, dtype: Any = None) -> np.ndarray:
        _checked(run, int(num), f"np.linspace(num={num})")
        return np.linspace(_number(start), _number(stop), int(num), dtype=_dtype(dtype))

    names: dict[str, Any] = {name: NumpyType(kind) for name, kind in TYPES.items()}
    names.update(
        array=Builtin("array", array),
        asarray=Builtin("asarray", asarray),
        zeros=Builtin("zeros", filled("zeros")),
        ones=Builtin("ones", filled("ones")),
        arange=Builtin("arange", arange),
        linspace=Builtin("linspace", linspace),
        pi=math.pi,
        e=math.e,
        __missing__=_missing,
    )
    return Module("numpy", names)


def _missing(name: str) -> Any:
    raise GradcliError(
        f"gradcli run's numpy has no np.{name}",
        hint="make the values with torch, or with np.array, np.zeros, np.ones, np.arange",
    )


def _shape_of(value: Any) -> tuple[int, ...]:
    return value.shape if isinstance(value, (np.ndarray, gc.Tensor)) else np.shape(value)


def binary(run: Run, symbol: str, left: Any, right: Any, python: Callable[[Any, Any], Any]) -> Any:
    """``left symbol right`` where one is an array: numpy's, its size checked first (a
    broadcast can be far larger than its operands); a tensor beside an array is refused."""
    if isinstance(left, gc.Tensor) or isinstance(right, gc.Tensor):
        raise GradcliError(
            "gradcli run does not mix a numpy array and a tensor in one operation",
            hint="make the array a tensor first: torch.from_numpy(a)",
        )
    for value in (left, right):
        if not isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)):
            raise TypeError(
                f"unsupported operand type(s) for {symbol}: '{type(left).__name__}' and "
                f"'{type(right).__name__}'"
            )
    shapes = (_shape_of(left), _shape_of(right))
    rows = columns = 1
    if symbol == "@":  # the batch dims broadcast; a (n, k) by a (k, m) matrix is (n, m)
        rows = shapes[0][-2] if len(shapes[0]) > 1 else 1
        columns = shapes[1][-1] if len(shapes[1]) > 1 else 1
        shapes = (shapes[0][:-2], shapes[1][:-2])
    try:
        count = math.prod(np.broadcast_shapes(*shapes)) * rows * columns
    except ValueError:  # numpy's own error, raised before it allocates anything
        return python(left, right)
    _checked(run, count, f"the array of {symbol}")
    return python(left, right)


# Python's augmented assignments, which numpy does in the array's own memory
_IN_PLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.iadd,
    "-": operator.isub,
    "*": operator.imul,
    "/": operator.itruediv,
    "//": operator.ifloordiv,
    "%": operator.imod,
    "**": operator.ipow,
    "@": operator.imatmul,
    "&": operator.iand,
    "|": operator.ior,
    "^": operator.ixor,
    "<<": operator.ilshift,
    ">>": operator.irshift,
}


def in_place(run: Run, array: np.ndarray, symbol: str, operand: Any) -> Any:
    """``a symbol= operand`` (``a += 1``): numpy's in-place operation, written into the
    array's memory, which a tensor may share (``x.numpy()``), as in Python."""
    if isinstance(operand, (list, tuple)):
        operand = array_of(run, operand)
    return binary(run, symbol, array, operand, _IN_PLACE[symbol])


def write(run: Run, array: np.ndarray, index: Any, value: Any) -> None:
    """``a[index] = value``: numpy's, a value of numbers (or an array) that numpy broadcasts
    into what the index selects."""
    if isinstance(value, gc.Tensor):
        value = value.data
    elif isinstance(value, (list, tuple)):
        value = array_of(run, value)
    elif isinstance(value, np.ndarray):
        _check_kind(value.dtype)
    else:
        _number(value)
    array[index] = value


def array_of(run: Run, obj: Any, dtype: Any = None, copy: bool = True) -> np.ndarray:
    """``np.array(obj, dtype)``: of numbers only."""
    made = np.array(_nested(obj, run), dtype=_dtype(dtype), copy=copy)
    _check_kind(made.dtype)
    return made


def _method(run: Run, value: np.ndarray, name: str) -> Callable[..., Any]:
    bound = getattr(value, name)

    def checked(*args: Any, **kwargs: Any) -> Any:
        if name in ("astype", "reshape"):
            if name == "astype":
                args = (_dtype(args[0]), *args[1:]) if args else args
            _checked(run, value.size, f"ndarray.{name}")
        return bound(*args, **kwargs)

    return checked


_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "T", "itemsize", "nbytes"})
_METHODS = frozenset(
    "astype reshape copy tolist item sum mean max min argmax argmin std var prod".split()
)


def attribute(run: Run, value: Any, name: str) -> Any:
    """``a.name`` of an array (or a numpy scalar): see the module docstring."""
    if name in _ATTRIBUTES:
        return getattr(value, name)
    if name in _METHODS:
        return Builtin(name, _method(run, value, name))
    if hasattr(value, name):  # numpy's, which gradcli's arrays do not take
        raise GradcliError(
            f"gradcli run's numpy arrays do not take .{name}",
            hint="make the array a tensor (torch.from_numpy(a)) and use torch's methods",
        )
    raise AttributeError(f"'{type(value).__name__}' object has no attribute '{name}'")


def from_numpy(array: Any) -> gc.Tensor:
    """``torch.from_numpy(a)``: a tensor over the array's memory, of its dtype."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _check_kind(array.dtype)
    try:
        torchtext.dtype_repr(array.dtype)
    except TypeError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{array.dtype}. The only supported types "
            "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
            "uint64, uint32, uint16, uint8, and bool."
        ) from None
    return gc.Tensor(array)


def to_numpy(tensor: gc.Tensor, force: bool = False) -> np.ndarray:
    """``x.numpy()``: the tensor's values as an array over the same memory (torch's); refused
    for a tensor that requires grad while grad mode is on, as torch refuses it."""
    if tensor.requires_grad and not force and is_grad_enabled():
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    return tensor.data
