"""Symbolic rules: the operations on numpy object arrays of sympy formulas.

A rule takes the call's arguments as a program gives them (arrays, then dims and flags) and
returns an array of formulas. sympy is imported only when a rule runs: it is slow to import,
and most commands never need it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import EllipsisType
from typing import Any

import numpy as np

from .table import Array

# sympy has no type information: its module and its formulas are Any.
Formula = Any
ArrayRule = Callable[..., Array]


class NotSymbolic(Exception):
    """The program uses something sympy is not given a rule for here, or it took too long."""


def number(value: complex) -> Formula:
    """A number as sympy writes it: a whole number exactly, else a float (NotSymbolic for a
    complex number: the formulas here are of real symbols)."""
    import sympy

    if isinstance(value, complex):
        raise NotSymbolic("a complex number: gradcli's formulas are of real numbers")
    return sympy.Integer(int(value)) if float(value).is_integer() else sympy.Float(value)


def constant_array(array: Array) -> Array:
    """Numbers as an object array of sympy numbers (whole numbers exact)."""
    return np.vectorize(number, otypes=[object])(array) if array.size else array.astype(object)


def each(function: str | Callable[[Any, Formula], Formula]) -> Callable[[Array], Array]:
    """An element-wise rule: ``function`` names a sympy function (``"exp"``) or is
    ``function(sympy, element)``."""

    def rule(x: Array) -> Array:
        import sympy

        scalar = (
            getattr(sympy, function)
            if isinstance(function, str)
            else (lambda v: function(sympy, v))
        )
        return np.asarray(np.frompyfunc(scalar, 1, 1)(x), dtype=object)

    return rule


def reduce(numpy_function: Callable[..., Any]) -> ArrayRule:
    """A reduction of formulas by ``numpy_function`` (np.sum, np.prod) over dim."""

    def rule(x: Array, dim: int | None = None, keepdim: bool = False, dtype: Any = None) -> Array:
        return np.asarray(numpy_function(x, axis=dim, keepdims=keepdim), dtype=object)

    return rule


def mean(x: Array, dim: int | None = None, keepdim: bool = False, dtype: Any = None) -> Array:
    """The sum over dim, divided exactly; as torch, the mean of nothing is nan (``dtype``,
    what the engine computes in, has no bearing on a formula)."""
    import sympy

    count = x.size if dim is None else x.shape[dim]
    scale = sympy.Rational(1, count) if count else sympy.nan
    return np.asarray(reduce(np.sum)(x, dim, keepdim) * scale, dtype=object)


def power(a: Array, b: Array) -> Array:
    """a**b; a power of numbers is computed in floating point, as the run does, so that an
    exact 2**2**30 is never built (a number beyond float range is not symbolic)."""
    import sympy

    numbers = [*np.ravel(a), *np.ravel(b)]
    if all(isinstance(e, sympy.Number) for e in numbers):
        with np.errstate(all="ignore"):
            value = np.power(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        if not np.all(np.isfinite(value)):
            raise NotSymbolic("a power of numbers beyond float range")
        return constant_array(value)
    return a**b


def matmul(a: Array, b: Array) -> Array:
    """Matrix and vector products of formulas (not batched ones)."""

    if a.ndim > 2 or b.ndim > 2:
        raise NotSymbolic("batched matrix products")
    return np.asarray(np.dot(a, b), dtype=object)


# One element's formula, for the piecewise functions sympy is not asked to differentiate as
# arrays (they give explain its formulas, and stay out of check and --symbolic).


def relu(sp: Any, v: Formula) -> Formula:
    return sp.Piecewise((v, v > 0), (0, True))  # relu'(0) = 0, as in PyTorch


def sign(sp: Any, v: Formula) -> Formula:
    return sp.Piecewise((1, v > 0), (-1, v < 0), (0, True))  # its derivative is 0 everywhere


def maximum(sp: Any, a: Formula, b: Formula) -> Formula:
    return sp.Piecewise((a, a > b), (b, a < b), ((a + b) / 2, True))  # ties share, as PyTorch


def minimum(sp: Any, a: Formula, b: Formula) -> Formula:
    return sp.Piecewise((a, a < b), (b, a > b), ((a + b) / 2, True))


def where(sp: Any, condition: Formula, a: Formula, b: Formula) -> Formula:
    return sp.Piecewise((a, sp.Ne(condition, 0)), (b, True))


def clamp(sp: Any, v: Formula, low: float | None, high: float | None) -> Formula:

    def bound(value: Any) -> Formula:  # a number, or a tensor bound's own formula
        return number(value) if isinstance(value, (int, float)) else value

    pieces = [(bound(low), v < low)] if low is not None else []
    if high is not None:
        pieces.append((bound(high), v > high))
    return sp.Piecewise(*pieces, (v, True))  # slope 1 inside, bounds included (PyTorch)


def _axis(x: Array, dim: int | None) -> int:
    """The one dim of softmax-like operations: the only one of a vector when omitted."""
    return 0 if dim is None else dim % max(x.ndim, 1)


def softmax(x: Array, dim: int | None = None, dtype: Any = None) -> Array:
    if x.ndim == 0:
        return each(lambda sp, v: sp.Integer(1))(x)
    e = each("exp")(x)
    total: Array = np.sum(e, axis=_axis(x, dim), keepdims=True)
    return e / total


def log_softmax(x: Array, dim: int | None = None, dtype: Any = None) -> Array:
    if x.ndim == 0:
        return each(lambda sp, v: sp.Integer(0))(x)
    return x - each("log")(np.sum(each("exp")(x), axis=_axis(x, dim), keepdims=True))


def logsumexp(x: Array, dim: int | None = None, keepdim: bool = False) -> Array:
    return each("log")(np.asarray(np.sum(each("exp")(x), axis=dim, keepdims=keepdim), dtype=object))


def norm(
    x: Array, p: float = 2, dim: int | tuple[int, ...] | None = None, keepdim: bool = False
) -> Array:
    """The 2-norm (others have kinks that sympy's Abs does not differentiate as torch does)."""

    if p != 2:
        raise NotSymbolic(f"the {p}-norm has no symbolic form here (only the 2-norm)")
    return each("sqrt")(np.asarray(np.sum(x * x, axis=dim, keepdims=keepdim), dtype=object))


def _reduced(loss: Array, reduction: str) -> Array:
    if reduction == "none":
        return loss
    total = np.asarray(np.sum(loss), dtype=object)
    return total if reduction == "sum" else mean(loss)


def mse_loss(x: Array, target: Array, reduction: str = "mean") -> Array:
    return _reduced((x - target) * (x - target), reduction)


def bce_with_logits(
    z: Array, target: Array, reduction: str = "mean", weight: Any = None, pos_weight: Any = None
) -> Array:
    """log(1 + e^z) - z y, the smooth form of the stable formula the engine computes."""
    if weight is not None or pos_weight is not None:
        raise NotSymbolic("its weights get no gradient (as in PyTorch), which sympy does not write")
    return _reduced(each(lambda sp, v: sp.log(1 + sp.exp(v)))(z) - z * target, reduction)


def unsqueeze(x: Array, dim: int) -> Array:
    return np.expand_dims(x, dim % (x.ndim + 1))


def squeeze(x: Array, dim: int | None = None) -> Array:
    if dim is None:
        return x.reshape(tuple(n for n in x.shape if n != 1))
    if x.ndim == 0 or x.shape[dim] != 1:
        return x
    return np.squeeze(x, axis=dim)


PIECEWISE = (
    "it is piecewise, and sympy's derivative at a kink is not PyTorch's convention (explain "
    "shows its formula)"
)


def setitem(x: Array, value: Array, *index: int | slice | EllipsisType | None) -> Array:
    """A copy of the formulas of x with those of value written at index."""
    out = np.array(x, dtype=object, copy=True)
    value = np.asarray(value, dtype=object)
    # one formula is an element, not a 0-d array stored as the element of an object array
    out[index] = value.item() if value.ndim == 0 else value
    return out
