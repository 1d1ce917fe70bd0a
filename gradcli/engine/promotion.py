"""The dtype torch gives an operation's result where numpy's differs (operands of several
dtypes, booleans alone, integers with floats): ``torch_dtype`` corrects a forward and its
result, and the corrected forward is the one a traced program replays."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..ops.table import Array


def _complex_of(floating: np.dtype[Any]) -> np.dtype[Any]:
    """torch's complex dtype of a floating dtype: complex64 of float32, complex128 of float64."""
    return np.dtype(np.complex64) if floating.itemsize <= 4 else np.dtype(np.complex128)


def in_dtype_of(dtype: np.dtype[Any], cotangent: Any) -> Any:
    """A cotangent sent to a tensor of ``dtype``, in that dtype, as torch's engine casts a
    gradient to its input's (``validate_outputs``): a real tensor's is the real part of a
    complex one (torch: a function of reals), a float32 operand of a float64 result gets a
    float32 one (``x32 * x64``). The cast is an operation, recorded where the pass makes a
    graph (``create_graph``: torch's ``ToCopyBackward0``)."""
    if cotangent.dtype.kind == "c" and dtype.kind != "c":
        cotangent = cotangent.real
    return cotangent if cotangent.dtype == dtype else cotangent.to(dtype)


def number_array(value: complex, dtype: np.dtype[Any]) -> Array:
    """A number's 0-d array of ``dtype``; a whole number past an integer dtype's range wraps
    into it, as torch's cast of a number beside a tensor (uint8 + 300 is uint8 + 44)."""
    try:
        return np.asarray(value, dtype=dtype)
    except OverflowError:
        return np.asarray(int(value.real) % 2**64, dtype=np.uint64).astype(dtype)


def truth_dtype(tensors: Sequence[Any]) -> np.dtype[Any]:
    """The dtype of True or False beside tensors of no floating dtype: the integers' (torch's
    ``m * True`` of an int64 m is int64), beside booleans alone a boolean."""
    ints = [t.dtype for t in tensors if t.dtype.kind in "iu"]
    dtype: np.dtype[Any] = functools.reduce(np.promote_types, ints, np.dtype(np.bool_))
    return dtype


def torch_dtype(
    forward: Callable[..., Any],
    arrays: tuple[Array, ...],
    params: dict[str, Any],
    tensors: Sequence[Any],
    out_data: Array,
    default_float: np.dtype[Any],
) -> tuple[Callable[..., Any], Array]:
    """The forward and its result in the dtype torch gives where numpy's differs (operands of
    several dtypes): the forward is the one a traced program replays."""
    dtype = out_data.dtype
    wanted = _zero_dim_rule(tensors)
    if wanted is not None and wanted != dtype and dtype == _promoted(tensors):
        # a 0-d operand does not widen a tensor of its category (int32 + torch.tensor(3) is
        # int32, uint8 + 300 is uint8, float32 + a float64 0-d float32): torch casts the
        # operands to the result's dtype first (a number past its range wraps)
        forward = _operands_in(forward, wanted)
        return forward, np.asarray(forward(*arrays, **params))
    if dtype.itemsize < 4 and dtype.kind in "fiu" and all(t.dtype.kind == "b" for t in tensors):
        # numpy's float16 (or int8) of booleans alone, as in sin(x > 0): torch computes in its
        # default floating dtype
        forward = _on_floats(forward, default_float)
        out_data = np.asarray(forward(*arrays, **params))
        dtype = out_data.dtype
    elif dtype.kind == "f" and dtype.itemsize < 4:
        # numpy's float16 of int8, uint8 or int16 (sin of a uint8 tensor): torch's default
        # floating dtype, as of any integers
        forward = _in_dtype(_on_floats(forward, default_float, "iub"), default_float)
        out_data = np.asarray(forward(*arrays, **params))
        dtype = out_data.dtype
    elif dtype == np.uint64 and not any(t.dtype == np.uint64 for t in tensors):
        # numpy's uint64 of a sum of uint8s: torch's int64, as of any integers
        forward = _in_dtype(forward, np.dtype(np.int64))
        out_data = out_data.astype(np.int64)
        return forward, out_data
    if dtype.kind == "c" and any(t.dtype.kind in "iub" for t in tensors):
        # numpy's complex128 of int64 and complex64: torch keeps the complex operand's dtype
        widest = functools.reduce(
            np.promote_types, [t.dtype for t in tensors if t.dtype.kind in "fc"]
        )
        wanted = widest if widest.kind == "c" else _complex_of(widest)
        if dtype != wanted:
            forward = _in_dtype(forward, wanted)
            out_data = out_data.astype(wanted)
    if dtype.kind == "f":
        floating = _widest_float(tensors, default_float)
        if floating is not None and dtype != floating:
            # numpy's float64 of int64 and float32 (torch keeps the floating operand's dtype),
            # of integers alone (i / 2: torch's default floating dtype)
            forward = _in_dtype(forward, floating)
            out_data = out_data.astype(floating)
    return forward, out_data


def _promoted(tensors: Sequence[Any]) -> np.dtype[Any]:
    promoted: np.dtype[Any] = functools.reduce(np.promote_types, [t.dtype for t in tensors])
    return promoted


def _zero_dim_rule(tensors: Sequence[Any]) -> np.dtype[Any] | None:
    """torch's result dtype of dimensioned tensors and 0-d ones (a number is one here): the
    0-d ones count only where their category (bool, integer, floating, complex) is higher
    (torch's ``combine_categories``); None where the operands are not of both kinds."""
    dims = [t.dtype for t in tensors if t.ndim]
    zeros = [t.dtype for t in tensors if not t.ndim]
    if not dims or not zeros:
        return None
    higher: np.dtype[Any] = functools.reduce(np.promote_types, dims)
    lower: np.dtype[Any] = functools.reduce(np.promote_types, zeros)
    if higher.kind == "c":
        return higher
    if lower.kind == "c":
        return _complex_of(higher) if higher.kind == "f" else lower
    if higher.kind == "f":
        return higher
    return lower if higher.kind == "b" or lower.kind == "f" else higher


@functools.cache
def _operands_in(forward: Callable[..., Any], dtype: np.dtype[Any]) -> Callable[..., Any]:
    """``forward`` of its operands cast to ``dtype`` (integers wrap, as torch's casts)."""

    def run(*arrays: Any, **params: Any) -> Any:
        with np.errstate(over="ignore", invalid="ignore"):
            return forward(*(np.asarray(a).astype(dtype) for a in arrays), **params)

    return run


@functools.cache
def _on_floats(
    forward: Callable[..., Any], dtype: np.dtype[Any], kinds: str = "b"
) -> Callable[..., Any]:
    """``forward`` with its boolean arguments (of ``kinds``) in the default floating dtype."""

    def run(*arrays: Any, **params: Any) -> Any:
        floating = [
            np.asarray(a, dtype=dtype) if np.asarray(a).dtype.kind in kinds else a for a in arrays
        ]
        return forward(*floating, **params)

    return run


def _widest_float(tensors: Sequence[Any], default_float: np.dtype[Any]) -> np.dtype[Any] | None:
    """The dtype torch gives a floating result of integer tensors: the widest floating
    operand's, or with none, the default floating dtype (None: no integer operand)."""
    if not any(t.dtype.kind in "iu" for t in tensors):
        return None
    floating = [t.dtype for t in tensors if t.dtype.kind == "f"]
    return functools.reduce(np.promote_types, floating) if floating else default_float


@functools.cache
def _in_dtype(forward: Callable[..., Any], dtype: np.dtype[Any]) -> Callable[..., Any]:
    """``forward`` with its result cast to ``dtype``."""

    def run(*arrays: Any, **params: Any) -> Any:
        return np.asarray(forward(*arrays, **params)).astype(dtype)

    return run
