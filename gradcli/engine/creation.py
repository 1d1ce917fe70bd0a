"""Creating tensors: ``tensor``, ``ones``, ``randn`` and friends; ``rand`` and ``randn`` draw
torch's numbers for their dtype from torch's generator (``torch_random``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.engine_errors import DomainError, DtypeError
from ..ops.numerics.single_precision import fused_multiply_add
from ..ops.table import DTYPE_NAMES, Array
from .tensor import DEFAULT_DTYPE, Tensor

if TYPE_CHECKING:
    from .torch_random import Generator

# torch_random (the generator and its samplers) is imported where a number is drawn: a
# command's run draws none unless its program does

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)
int64 = long = np.dtype(np.int64)
int32 = np.dtype(np.int32)

_DTYPES = [np.dtype(name) for name in dict.fromkeys(DTYPE_NAMES.values())]


def manual_seed(seed: int) -> Generator:
    """``torch.manual_seed``: seed the default generator behind ``rand`` and ``randn`` (until
    then it is seeded from the operating system's randomness, as torch's is)."""
    from . import torch_random

    return torch_random.manual_seed(seed)


def resolve_dtype(dtype: Any) -> np.dtype[Any] | None:
    """``float32``, ``"float64"``, ``"torch.long"``, a numpy dtype or None (meaning the
    default) to a dtype: one of torch's that gradcli has (floating, int64, int32, bool,
    complex)."""
    if dtype is None:
        return None
    if isinstance(dtype, str):
        dtype = DTYPE_NAMES.get(dtype.removeprefix("torch."), dtype)
    resolved: np.dtype[Any] = np.dtype(dtype)
    if resolved not in _DTYPES:
        raise DtypeError(
            f"unsupported dtype {resolved}: the dtypes are {', '.join(map(str, _DTYPES))}"
        )
    return resolved


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """A new leaf tensor holding a copy of ``data``; numbers become float64 unless told."""
    if isinstance(data, Tensor):
        data = data.data
    array = np.array(data, dtype=resolve_dtype(dtype))
    if dtype is None and array.dtype.kind in "iuf":
        array = array.astype(DEFAULT_DTYPE)
    return Tensor(array, requires_grad=requires_grad)


def _shape(size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if int(n) != n or n < 0:
            raise DomainError(f"sizes must be non-negative whole numbers, got {size}")
    return tuple(int(n) for n in size)


def _made(array: Array, requires_grad: bool, dtype: Any) -> Tensor:
    return Tensor(array.astype(resolve_dtype(dtype) or DEFAULT_DTYPE), requires_grad=requires_grad)


def ones(*size: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """A tensor of ones, e.g. ``ones(2, 2)``."""
    return _made(np.ones(_shape(size)), requires_grad, dtype)


def zeros(*size: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """A tensor of zeros."""
    return _made(np.zeros(_shape(size)), requires_grad, dtype)


def full(*args: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """``full(2, 3, 0.5)`` or ``full((2, 3), 0.5)``: a tensor of one value."""
    if len(args) < 2:
        raise DomainError("full needs a size and a fill value, e.g. full(2, 3, 0.5)")
    *size, value = args
    return _made(np.full(_shape(tuple(size)), float(value)), requires_grad, dtype)


def eye(n: int, m: int | None = None, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """The identity matrix n x n (or n x m)."""
    n, m = _shape((n, n if m is None else m))
    return _made(np.eye(n, m), requires_grad, dtype)


def arange(
    start: float,
    end: float | None = None,
    step: float = 1,
    requires_grad: bool = False,
    dtype: Any = None,
) -> Tensor:
    """``arange(6)`` = 0..5, ``arange(1, 2, 0.25)``; float64 like every gradcli tensor."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise DomainError("arange: step must not be zero")
    return _made(np.arange(start, end, step, dtype=float), requires_grad, dtype)


def linspace(
    start: float, end: float, steps: int, requires_grad: bool = False, dtype: Any = None
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included."""
    (steps,) = _shape((steps,))
    return _made(np.linspace(start, end, steps), requires_grad, dtype)


def linspace_like_torch(start: float, end: float, steps: int, dtype: Any) -> Array:
    """torch's float ``linspace`` to the last bit: in the dtype, ``step = (end - start) /
    (steps - 1)``, the first half ``start + step * i`` and the second ``end - step * (steps -
    1 - i)``, each a fused multiply-add (torch's CPU kernel, compiled with contraction)."""
    kind = np.dtype(dtype)
    first, last = kind.type(start), kind.type(end)
    step = (last - first) / kind.type(steps - 1) if steps > 1 else kind.type(0)
    i = np.arange(steps, dtype=np.float64)
    low = fused_multiply_add(step, i, first, kind)
    high = fused_multiply_add(-step, steps - 1 - i, last, kind)
    spaced: Array = np.where(i < steps // 2, low, high).astype(kind)
    return spaced


def _drawn(
    sampler: Any, size: tuple[Any, ...], requires_grad: bool, dtype: Any, generator: Any
) -> Tensor:
    kind = resolve_dtype(dtype) or DEFAULT_DTYPE
    if kind.kind != "f":
        raise DtypeError(f"random numbers are floating point: give float32 or float64, not {kind}")
    from .torch_random import in_force

    drawn = sampler(generator or in_force(), _shape(size), kind)
    return Tensor(drawn, requires_grad=requires_grad)


def rand(
    *size: Any,
    requires_grad: bool = False,
    dtype: Any = None,
    generator: Generator | None = None,
) -> Tensor:
    """Uniform samples on [0, 1): torch's numbers for the dtype (float64 unless told), from
    ``generator`` or the generator in force."""
    from .torch_random import samplers

    return _drawn(samplers.uniform, size, requires_grad, dtype, generator)


def randn(
    *size: Any,
    requires_grad: bool = False,
    dtype: Any = None,
    generator: Generator | None = None,
) -> Tensor:
    """Standard normal samples: torch's numbers for the dtype (float64 unless told), from
    ``generator`` or the generator in force."""
    from .torch_random import samplers

    return _drawn(samplers.normal, size, requires_grad, dtype, generator)


def write(tensor: Tensor, values: Any) -> None:
    """Overwrite ``tensor``'s values in place (torch's ``copy_`` under ``no_grad``): every
    tensor sharing its array (a ``detach()``, a state dict's entry) sees the new values."""
    array = tensor.data
    if not array.flags.writeable:
        array = tensor.data = np.array(array)
    np.copyto(array, np.asarray(values), casting="unsafe")
