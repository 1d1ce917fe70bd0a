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
