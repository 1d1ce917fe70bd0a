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
    if dtype.itemsize < 4 and dtype.kind in "fiu":
        # numpy's float16 (or int8) of booleans alone, as in sin(x > 0): torch computes in its
        # default floating dtype
        forward = _on_floats(forward, default_float)
        out_data = np.asarray(forward(*arrays, **params))
        dtype = out_data.dtype
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


@functools.cache
def _on_floats(forward: Callable[..., Any], dtype: np.dtype[Any]) -> Callable[..., Any]:
    """``forward`` with its boolean arguments in the default floating dtype."""

    def run(*arrays: Any, **params: Any) -> Any:
        floating = [
            np.asarray(a, dtype=dtype) if np.asarray(a).dtype == np.bool_ else a for a in arrays
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
