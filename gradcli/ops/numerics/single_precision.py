"""float32 transcendental functions as torch computes them: to within an ulp.

torch's float32 ``exp``, ``sin``, ``tanh``, ... (its vectorised kernels) are accurate to about
one unit in the last place, nearly always the correctly rounded value; numpy's float32 loops
(SIMD) are not (``exp(12.)`` is 162754.78125 where torch gives 162754.796875), so that a
script printing ``torch.exp(x)`` showed other digits than torch. Computed in float64 and
rounded once to float32, the value is correctly rounded but for rare double roundings, and
agrees with torch's for about 99% of arguments where numpy's float32 agrees for about 60%.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_SINGLE = np.dtype(np.float32)
_DOUBLE = np.dtype(np.float64)


def rounded_once(function: np.ufunc) -> Callable[..., Any]:
    """``function`` (a numpy ufunc of one array), a float32 array's value computed in float64
    and rounded once to float32; every other dtype's as numpy computes it."""

    def forward(x: Any) -> Any:
        dtype = getattr(x, "dtype", None)
        # by identity first: a comparison of dtypes costs more than a small array's call
        if dtype is _SINGLE or (dtype is not _DOUBLE and dtype == _SINGLE):
            return function(x.astype(_DOUBLE)).astype(_SINGLE)
        return function(x)

    forward.__name__ = function.__name__
    # what it calls for float64 operands: the engine calls it directly (Op.forward_float64)
    forward.float64 = function  # type: ignore[attr-defined]
    return forward


def power(a: Any, b: Any) -> Any:
    """``a ** b`` as torch's pow computes a floating tensor to a number's power: its special
    cases (``x * x`` for 2, ``x * x * x`` for 3, ``sqrt`` for 0.5, ``1 / sqrt`` for -0.5,
    ``1 / x`` for -1, ``1 / (x * x)`` for -2), each rounded as torch's is, and any other power
    of a float32 tensor rounded once from float64; everything else as numpy computes it."""
    base = np.asarray(a)
    exponent = np.asarray(b)
    if exponent.ndim or base.dtype not in (_SINGLE, _DOUBLE) or exponent.dtype.kind not in "fiu":
        return np.power(a, b)
    e = float(exponent)
    special = _SPECIAL_POWERS.get(e)
    if special is not None:
        return special(base)
    if base.dtype == _SINGLE:
        return np.power(base.astype(_DOUBLE), e).astype(_SINGLE)
    return np.power(a, b)


_SPECIAL_POWERS: dict[float, Callable[[Any], Any]] = {
    2.0: lambda x: x * x,
    3.0: lambda x: x * x * x,
    0.5: np.sqrt,
    -0.5: lambda x: 1 / np.sqrt(x),
    -1.0: lambda x: 1 / x,
    -2.0: lambda x: 1 / (x * x),
}


MANTISSA_TAIL = np.int64((1 << 29) - 1)  # the float64 bits a float32 rounds away
MIDPOINT = np.int64(1 << 28)
_SPLITTER = 134217729.0  # 2**27 + 1: Dekker's split of a float64 into two halves


def fused_multiply_add(a: Any, b: Any, c: Any, dtype: Any) -> Any:
    """``a * b + c`` rounded once to ``dtype`` (float32 or float64), as a CPU's fused
    multiply-add computes it (torch's kernels are compiled with contraction on).

    float32: ``a * b`` of two float32s is exact in float64, so the float64 sum rounded to
    float32 is the fused value, except where the float64 sum itself landed on a float32
    midpoint: there the sum's rounding error decides the side. float64: Dekker's exact
    product and Knuth's two-sum give ``a * b + c`` as a sum of three doubles, added so that
    the result is the correctly rounded value but for ties below the last bit (vanishingly
    rare)."""
    kind = np.dtype(dtype)
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    if kind == _SINGLE:
        return float32_sum(a * b, c)
    product = a * b
    error = _product_error(a, b, product)
    total, low = _two_sum(product, c)
    return total + (low + error)


def float32_sum(x: Any, y: Any) -> Any:
    """``x + y`` (float64s whose exact sum matters) rounded once to float32."""
    wide = np.asarray(x + y)
    tie = (wide.view(np.int64) & MANTISSA_TAIL) == MIDPOINT
    if tie.any():
        s, xs, ys = (
            wide[tie],
            np.broadcast_to(x, wide.shape)[tie],
            np.broadcast_to(y, wide.shape)[tie],
        )
        _, error = _two_sum(xs, ys)
        wide = wide.copy()
        wide[tie] = np.where(error == 0, s, np.nextafter(s, s + error))
    return wide.astype(_SINGLE)


def _two_sum(x: Any, y: Any) -> tuple[Any, Any]:
    """``x + y`` rounded, and its rounding error, exactly (Knuth)."""
    total = x + y
    y_part = total - x
    return total, (x - (total - y_part)) + (y - y_part)


def _product_error(a: Any, b: Any, product: Any) -> Any:
    """``a * b - product`` exactly, ``product`` being ``a * b`` rounded (Dekker)."""
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    return ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low


def _split(x: Any) -> tuple[Any, Any]:
    scaled = _SPLITTER * x
    high = scaled - (scaled - x)
    return high, x - high
