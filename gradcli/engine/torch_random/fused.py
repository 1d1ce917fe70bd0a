"""Fused multiply-add (``a * b + c`` rounded once), exactly, for float32 and float64 arrays.

torch's CPU kernels are compiled with contraction on, so where its C++ source writes
``x * (to - from) + from`` the machine computes one fused multiply-add, whose result can
differ in the last bit from a multiply and then an add. numpy has no fused multiply-add;
these functions compute its correctly rounded result from error-free transformations.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

_SPLITTER = 134217729.0  # 2**27 + 1: Veltkamp's split of a double into two 26-bit halves
_FLOAT_TAIL = np.uint64((1 << 29) - 1)  # the bits of a double below a float's last bit
_FLOAT_HALF = np.uint64(1 << 28)  # those bits at a float's half unit


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a + b rounded, and its rounding error exactly (Knuth)."""
    total = a + b
    virtual = total - a
    return total, (a - (total - virtual)) + (b - virtual)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scaled = _SPLITTER * a
    high = scaled - (scaled - a)
    return high, a - high


def fma32(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> np.ndarray:
    """float32 ``a * b + c`` with one rounding.

    The product of two floats is exact in a double; the sum with c is rounded once to a
    double and then to a float, which is the fused result unless the double lands exactly
    half-way between two floats with a rounding error that should have tipped it.
    """
    product = np.asarray(a, np.float32).astype(np.float64) * np.asarray(b, np.float32)
    addend = np.asarray(c, np.float32).astype(np.float64)
    total = product + addend
    halfway = (total.view(np.uint64) & _FLOAT_TAIL) == _FLOAT_HALF
    if halfway.any():  # rare: only there can the double's rounding have mattered
        product, addend = (np.broadcast_to(v, total.shape)[halfway] for v in (product, addend))
        total = total.copy()
        error = _two_sum(product, addend)[1]
        nudged = np.nextafter(total[halfway], np.where(error > 0, np.inf, -np.inf))
        total[halfway] = np.where(error != 0, nudged, total[halfway])
    return total.astype(np.float32)


def fma64(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> np.ndarray:
    """float64 ``a * b + c`` with one rounding.

    ``a * b`` is split exactly into a rounded product and its error (Dekker), the sum with c
    likewise (Knuth); the three parts are added so that only the last addition rounds, and
    a tie of that addition is settled by the sign of what is left.
    """
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        product = a * b
        a_high, a_low = _split(a)
        b_high, b_low = _split(b)
        product_error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + (
            a_low * b_low
        )
        total, sum_error = _two_sum(product, c)
        rest, rest_error = _two_sum(sum_error, product_error)
        rounded, last_error = _two_sum(total, rest)
        toward = np.nextafter(rounded, np.where(last_error > 0, np.inf, -np.inf))
        tie = (last_error != 0) & ((toward - rounded) == 2 * last_error)
        away = tie & (rest_error != 0) & (np.sign(rest_error) == np.sign(last_error))
        fused = np.where(away, toward, rounded)
    # where the parts are not finite (an infinite or NaN operand), the plain result is fused's
    return np.where(np.isfinite(fused), fused, a * b + c)
