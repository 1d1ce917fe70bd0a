"""Special functions on numpy arrays, for the forwards of erfinv, lgamma, digamma and
polygamma (numpy has none of them, and gradcli depends on numpy alone).

Each computes in float64 and returns the input's dtype. The conventions at poles are
PyTorch's: lgamma is +inf at 0 and the negative integers, digamma is -inf at +0 (+inf at -0)
and nan at the negative integers, polygamma(n >= 2) is -inf or +inf there by its sign.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..table import NumpyResult

# B_2k / (2k) for k = 1..7: the asymptotic series of digamma, psi(x) ~ log x - 1/(2x) - sum
# of these over x^2k
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
# B_2k / (2k)! for k = 1..8: the Euler-Maclaurin tail of the Hurwitz zeta function
_BERNOULLI_OVER_FACTORIAL = (
    1 / 12,
    -1 / 720,
    1 / 30240,
    -1 / 1209600,
    1 / 47900160,
    -691 / 1307674368000,
    1 / 74724249600,
    -3617 / 10670622842880000,
)
_ZETA_SHIFT = 20.0  # the Hurwitz zeta sum is taken term by term up to here


def _elementwise(function: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    vector = np.frompyfunc(function, 1, 1)

    def apply(x: np.ndarray) -> NumpyResult:
        if x.size == 0:
            return np.asarray(x, dtype=np.float64).copy()
        return np.asarray(vector(np.asarray(x, dtype=np.float64)), dtype=np.float64)

    return apply


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0 or a negative integer; log|Gamma| is +inf there
        return math.inf


_erf = _elementwise(math.erf)
_erfc = _elementwise(math.erfc)
_lgamma = _elementwise(_lgamma_scalar)


def erf(x: np.ndarray) -> np.ndarray:
    return _erf(x).astype(x.dtype)


def erfc(x: np.ndarray) -> np.ndarray:
    return _erfc(x).astype(x.dtype)


def lgamma(x: np.ndarray) -> np.ndarray:
    """log |Gamma(x)|."""
    return _lgamma(x).astype(x.dtype)


def erfinv(x: np.ndarray) -> np.ndarray:
    """The inverse of erf on [-1, 1] (+-inf at +-1, nan outside).

    A rough start (Winitzki's closed form, good to about 2e-3), then three Halley steps on
    erf(y) = x, written on erfc(|y|) = 1 - |x| so that no digit is lost near +-1.
    """
    v = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        a = np.abs(v)
        w = np.log((1.0 - a) * (1.0 + a))
        c = 2.0 / (math.pi * 0.147) + 0.5 * w
        y = np.sqrt(np.sqrt(c * c - w / 0.147) - c)
        inside = a < 1.0
        y = np.where(inside, y, 0.0)
        for _ in range(3):
            f = np.where(a <= 0.5, _erf(y) - a, (1.0 - a) - _erfc(y))  # erf(y) - a both ways
            slope = (2.0 / math.sqrt(math.pi)) * np.exp(-y * y)
            y = y - f / (slope + y * f)
        y = np.where(inside, y, np.where(a == 1.0, np.inf, np.nan))
        return (np.sign(v) * y).astype(x.dtype)


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx log Gamma(x): shifted up to x >= 10 by psi(x) = psi(x + 1) - 1/x, then
    its asymptotic series; below 0, the reflection psi(x) = psi(1 - x) - pi / tan(pi x)."""
    v = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        reflect = v < 0
        y = np.where(reflect, 1.0 - v, v)
        result = np.zeros_like(y)
        small = y < 10.0
        while small.any():
            result = np.where(small, result - 1.0 / y, result)
            y = np.where(small, y + 1.0, y)
            small = y < 10.0
        t = 1.0 / (y * y)
        series = np.zeros_like(y)
        for c in reversed(_DIGAMMA_SERIES):
            series = t * (c + series)
        result = result + np.log(y) - 0.5 / y - series
        whole = v == np.trunc(v)
        fraction = v - np.trunc(v)
        result = np.where(reflect, result - math.pi / np.tan(math.pi * fraction), result)
        result = np.where(reflect & whole, np.nan, result)
        result = np.where(v == 0, np.copysign(np.inf, -v), result)
        return result.astype(x.dtype)


def trigamma(x: np.ndarray) -> np.ndarray:
    """psi'(x), as PyTorch computes it (so that both agree to the last digits): below 1/2 the
    reflection psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x); six steps of
    psi'(x) = psi'(x + 1) + 1/x^2; then the asymptotic series to x^-7."""
    v = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        reflect = v < 0.5
        sine = np.sin(math.pi * v)
        result = np.where(reflect, -(math.pi * math.pi) / (sine * sine), 0.0)
        y = np.where(reflect, 1.0 - v, v)
        for _ in range(6):
            result = result + 1.0 / (y * y)
            y = y + 1.0
        t = 1.0 / (y * y)
        result = result + (1.0 + 1.0 / (2.0 * y) + t * (1 / 6 - t * (1 / 30 - t / 42))) / y
        return np.where(reflect, -result, result).astype(x.dtype)


def _hurwitz_zeta(s: int, q: np.ndarray) -> np.ndarray:
    """zeta(s, q) = sum over k >= 0 of (q + k)^-s, for a whole s >= 2: the terms one by one
    up to q + k >= 20, then the Euler-Maclaurin tail. +inf at q = 0, -1, -2, ..."""
    with np.errstate(all="ignore"):
        y = q.reshape(-1).copy()
        total = np.zeros_like(y)
        small = np.flatnonzero(np.isfinite(y) & (y < _ZETA_SHIFT))  # the elements still short
        while small.size:
            total[small] += np.power(y[small], -float(s))
            y[small] += 1.0
            small = small[y[small] < _ZETA_SHIFT]
        tail = np.power(y, 1.0 - s) / (s - 1) + 0.5 * np.power(y, -float(s))
        rising = float(s)  # s (s + 1) ... (s + 2k - 2)
        power = np.power(y, -float(s) - 1.0)
        for k, coefficient in enumerate(_BERNOULLI_OVER_FACTORIAL, start=1):
            tail = tail + coefficient * rising * power
            rising *= (s + 2 * k - 1) * (s + 2 * k)
            power = power / (y * y)
        total = (total + tail).reshape(q.shape)
        total = np.where(q == np.inf, np.nan, total)  # as PyTorch's zeta, not the limit 0
        return np.where((q <= 0) & (q == np.trunc(q)), np.inf, total)


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma: digamma itself for n = 0, trigamma for n = 1, and
    (-1)^(n+1) n! zeta(n + 1, x) above."""
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    v = np.asarray(x, dtype=np.float64)
    sign = 1.0 if n % 2 else -1.0
    with np.errstate(all="ignore"):
        return (sign * math.factorial(n) * _hurwitz_zeta(n + 1, v)).astype(x.dtype)
