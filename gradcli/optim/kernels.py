"""torch's CPU kernels of the in-place updates optimizers make, on numpy arrays, rounded
as torch rounds them, so that an optimizer's step gives torch's numbers bit for bit.

torch's CPU kernels are compiled with contraction on (and run on vectors with fused
multiply-add instructions), so ``add(a, b, alpha)``, ``addcmul`` and ``lerp`` round once
where their C++ reads as a multiply and an add; ``addcdiv``'s division keeps it two
roundings. A Python number beside a tensor is first rounded to the tensor's dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.torch_random.fused import fma32, fma64

Array = np.ndarray


def _fma(a: Array, b: Any, c: Array) -> Array:
    """``a * b + c`` rounded once, in the dtype of ``c``."""
    if c.dtype == np.float32:
        return fma32(a, b, c)
    if c.dtype == np.float64:
        return fma64(a, b, c)
    return np.asarray(a * b + c).astype(c.dtype)


def scalar(value: float, like: Array) -> Any:
    """A Python number as torch hands it to a kernel on ``like``: in ``like``'s dtype."""
    return like.dtype.type(value)


def add(a: Array, b: Array, alpha: float = 1.0) -> Array:
    """``a.add(b, alpha=alpha)``: ``a + alpha * b``, one rounding."""
    if alpha == 1:
        return np.asarray(a + b)
    return _fma(b, scalar(alpha, a), a)


def mul(a: Array, value: float) -> Array:
    """``a.mul(value)``."""
    return np.asarray(a * scalar(value, a))


def add_scalar(a: Array, value: float) -> Array:
    """``a.add(value)``."""
    return np.asarray(a + scalar(value, a))


def div_scalar(a: Array, value: float) -> Array:
    """``a / value``."""
    return np.asarray(a / scalar(value, a))


def addcmul(a: Array, t1: Array, t2: Array, value: float = 1.0) -> Array:
    """``a.addcmul(t1, t2, value=value)``: ``a + value * t1 * t2``, the last two steps
    fused."""
    return _fma(scalar(value, a) * t1, t2, a)


def addcdiv(a: Array, t1: Array, t2: Array, value: float = 1.0) -> Array:
    """``a.addcdiv(t1, t2, value=value)``: ``a + value * t1 / t2``."""
    return np.asarray(a + (scalar(value, a) * t1) / t2)


def lerp(start: Array, end: Array, weight: float) -> Array:
    """``start.lerp(end, weight)``: torch's two formulas, each one fused multiply-add."""
    w = scalar(weight, start)
    if abs(weight) < 0.5:
        return _fma(w, end - start, start)
    return _fma(w - start.dtype.type(1), end - start, end)


def sqrt(a: Array) -> Array:
    """``a.sqrt()``, correctly rounded. (torch's CPU kernel is MKL's vectorized square
    root, which is not: about one float32 element in five is 1 ulp from this.)"""
    return np.asarray(np.sqrt(a))
