"""The elementary functions, each an entry of the op table declared by its derivatives
with the factories of ``primitives.py``: ``pow``, ``maximum`` and ``minimum``, ``exp`` and the
logarithms, ``sqrt``, ``abs``, ``sign``, the trigonometric and hyperbolic functions,
``sigmoid``, ``erf`` and ``clamp``. PyTorch's convention at each kink is written beside its
rule.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError
from ...engine.modes import traced_constant
from ...engine.tensor import Tensor, TensorLike
from .. import symbolic as S
from ..numerics import vector_math
from ..numerics.single_precision import power, rounded_once
from ..primitives import (
    Selected,
    Unary,
    _binary,
    _is_zero,
    _sign,
    _unary,
    add,
    div,
    mask,
    mul,
    neg,
    number_operand,
    reciprocal,
    sub,
    where,
)
from ..table import (
    HOLOMORPHIC,
    OPS,
    OPT_TENSOR,
    TENSOR,
    Array,
    NumpyResult,
    Param,
    public,
)


def _first_share(a: Array, b: Array) -> NumpyResult:
    """maximum's share of the gradient for a: 1 where a wins, 1/2 on a tie (PyTorch)."""
    return (np.greater(a, b) + 0.5 * (a == b)).astype(np.result_type(a, b))


def _first_share_min(a: Array, b: Array) -> NumpyResult:
    return (np.less(a, b) + 0.5 * (a == b)).astype(np.result_type(a, b))


def _ties_split(
    a: Tensor, b: Tensor, share_of_first: Callable[[Array, Array], Array]
) -> tuple[Selected, Selected]:
    """Selections for maximum/minimum: the winner gets the gradient, each side half of it on
    a tie, the loser none (PyTorch's masked_fill: not inf * 0)."""
    share = mask(share_of_first, a, b)
    return (
        Selected(mask(_has_share, share), share),
        Selected(mask(_has_share_of_rest, share), sub(1.0, share)),
    )


def _has_share(share: Array) -> NumpyResult:
    return share > 0


def _has_share_of_rest(share: Array) -> NumpyResult:
    return share < 1


def _pow_partials(
    a: Tensor, b: Tensor, out: Tensor, needs: tuple[bool, ...]
) -> tuple[Tensor | None, Tensor | None]:
    da: Tensor | None = None
    db: Tensor | None = None
    if needs[0] and _nonzero_constant(b):  # no zero exponent to mask: the same numbers
        da = mul(b, _power_less_one(a, b))
    elif needs[0]:
        # PyTorch: the base's gradient is 0 where the exponent is 0, even at base 0 (not nan).
        # The masked branch uses exponent 1 there, so that pow(a, b - 1) is a**0 = 1 and its
        # own derivatives stay finite at base 0 (else 0 * inf = nan at the next order).
        zero_exponent = mask(_is_zero, b)
        safe_b = where(zero_exponent, 1.0, b)
        da = where(zero_exponent, 0.0, mul(b, pow(a, sub(safe_b, 1.0))))
    if needs[1]:
        # PyTorch: the exponent's gradient is 0 where the base is 0 and the exponent >= 0.
        db = where(mask(_zero_base, a, b), 0.0, mul(out, log(a)))
    return da, db


def _nonzero_constant(b: Tensor) -> bool:
    """Whether the exponent ``b`` is one floating number, not zero, that a tape being traced
    holds as a constant (``x ** 2``): the masks of a zero exponent then select nothing, and
    the rule leaves them out of the tape (three operations fewer a power). Outside a
    trace the rule keeps them: the graph of a second derivative is as it was."""
    data = b.data
    return (
        data.ndim == 0
        and b.dtype.kind == "f"
        and not b.requires_grad
        and b.tangent is None
        and traced_constant(b)
        and data.item() != 0
    )


def _power_less_one(a: Tensor, b: Tensor) -> Tensor:
    """``pow(a, sub(b, 1.0))`` for an exponent ``b`` that a tape being traced holds as a
    constant (``_nonzero_constant``): ``b - 1`` is made as the constant the tape folds it to
    (numpy's subtraction in b's dtype, as the engine's), and for ``b - 1 == 1`` the power is
    ``a`` itself where a has b's dtype (``a ** 1`` is ``a`` bit for bit, which is why
    ``batch.batched.specialise`` leaves such a step out): one or two operations fewer for
    the tracer to record (``x ** 2``: ``2 * x``)."""
    less = np.subtract(b.data, b.data.dtype.type(1))
    if less == 1 and a.dtype == b.dtype:
        return a
    return pow(a, Tensor(less))


def _zero_base(a: Array, b: Array) -> NumpyResult:
    return (a == 0) & (b >= 0)


pow = _binary(  # noqa: A001 - PyTorch's name
    "pow",
    lambda node: (  # the overloads pow(Tensor, Scalar), pow(Tensor, Tensor), pow(Scalar, Tensor)
        "PowBackward0"
        if number_operand(node, 1)
        else "PowBackward2"
        if number_operand(node, 0)
        else "PowBackward1"
    ),
    power,  # torch's special cases of a number's power (single_precision)
    _pow_partials,
    "a ** b",
    operator="**",
    extra={"base_e": "exp"},  # e ** x is parsed as exp(x)
    symbolic=S.power,
    fold=True,
    nonfinite="overflow, or a power of zero or of a negative number",
    nonfinite_backward="overflow, or the derivative of a power at a zero base",
    kink="d/da a**b is 0 where b == 0, even at a == 0; d/db is 0 where a == 0 and b >= 0",
    complex=HOLOMORPHIC,
)
OPS["pow"].extra["saved_slots"] = lambda needs, number: [0] if number[1] else None


maximum = _binary(
    "maximum",
    "MaximumBackward0",
    np.maximum,
    lambda a, b, out, needs: _ties_split(a, b, _first_share),
    "element-wise maximum (ties share the gradient)",
    formula=S.maximum,
    symbolic=S.PIECEWISE,
    kink="on a tie each operand gets half the gradient",
)


minimum = _binary(
    "minimum",
    "MinimumBackward0",
    np.minimum,
    lambda a, b, out, needs: _ties_split(a, b, _first_share_min),
    "element-wise minimum (ties share the gradient)",
    formula=S.minimum,
    symbolic=S.PIECEWISE,
    kink="on a tie each operand gets half the gradient",
)


_vector_erf = np.vectorize(math.erf, otypes=[float])


def _erf(x: Array) -> NumpyResult:
    return _vector_erf(x).astype(x.dtype) if x.size else x.copy()


exp = _unary(
    "exp",
    "ExpBackward0",
    rounded_once(np.exp),
    lambda x, out: out,
    "e to the x",
    symbolic=S.each("exp"),
    fold=True,
    nonfinite="overflow",
    complex=HOLOMORPHIC,
)


log = _unary(
    "log",
    "LogBackward0",
    rounded_once(np.log),
    lambda x, out: reciprocal(x),
    "natural logarithm",
    symbolic=S.each("log"),
    nonfinite="log of a non-positive number",
    nonfinite_backward="the derivative of log at 0 is infinite",
    complex=HOLOMORPHIC,
)


log2 = _unary(
    "log2",
    "Log2Backward0",
    np.log2,
    lambda x, out: reciprocal(mul(x, math.log(2.0))),
    "base-2 logarithm",
    symbolic=S.each(lambda sp, v: sp.log(v, 2)),
    nonfinite="log2 of a non-positive number",
    nonfinite_backward="the derivative of log2 at 0 is infinite",
)


log1p = _unary(
    "log1p",
    "Log1PBackward0",
    vector_math.in_torch_order(vector_math.sleef_log1p, rounded_once(np.log1p)),
    lambda x, out: reciprocal(add(x, 1.0)),
    "log(1 + x), accurate near 0",
    symbolic=S.each(lambda sp, v: sp.log(1 + v)),
    nonfinite="log1p of a number <= -1",
    nonfinite_backward="the derivative of log1p at -1 is infinite",
)


expm1 = _unary(
    "expm1",
    "Expm1Backward0",
    vector_math.in_torch_order(vector_math.sleef_expm1, rounded_once(np.expm1)),
    lambda x, out: add(out, 1.0),
    "exp(x) - 1, accurate near 0",
    symbolic=S.each(lambda sp, v: sp.exp(v) - 1),
    nonfinite="overflow",
)


# sqrt'(0) = inf, as in PyTorch.
sqrt = _unary(
    "sqrt",
    "SqrtBackward0",
    np.sqrt,
    lambda x, out: div(0.5, out),
    "square root",
    symbolic=S.each("sqrt"),
    extra={"glyph": "√"},
    nonfinite="sqrt of a negative number",
    nonfinite_backward="the derivative of sqrt at 0 is infinite",
    kink="the derivative at 0 is inf",
    complex=HOLOMORPHIC,
)


# abs'(0) = 0 (PyTorch uses sign(x)).
abs = _unary(  # noqa: A001 - PyTorch's name
    "abs",
    "AbsBackward0",
    np.abs,
    lambda x, out: mask(_sign, x),
    "absolute value (derivative 0 at 0)",
    aliases=("absolute",),  # torch's other name
    methods=("abs", "absolute", "__abs__"),  # abs(x) on a tensor
    symbolic=S.each("Abs"),
    kink="the derivative at 0 is 0 (sign(x))",
)


def _sign_forward(x: Array) -> NumpyResult:
    """-1, 0 or 1, and 0 for NaN (torch's sign; numpy's is NaN)."""
    return np.nan_to_num(np.sign(x), nan=0.0)


sign = _unary(
    "sign",
    "SignBackward0",
    _sign_forward,
    lambda x, out: 0,
    "-1, 0 or 1",
    formula=S.sign,
    symbolic=S.PIECEWISE,
    kink="derivative 0",
    saved=False,
)


sin = _unary(
    "sin",
    "SinBackward0",
    rounded_once(np.sin),
    lambda x, out: cos(x),
    "sine",
    symbolic=S.each("sin"),
    complex=HOLOMORPHIC,
)


cos: Unary = _unary(
    "cos",
    "CosBackward0",
    rounded_once(np.cos),
    lambda x, out: neg(sin(x)),
    "cosine",
    symbolic=S.each("cos"),
    complex=HOLOMORPHIC,
)


tan = _unary(
    "tan",
    "TanBackward0",
    rounded_once(np.tan),
    lambda x, out: add(mul(out, out), 1.0),
    "tangent",
    symbolic=S.each("tan"),
)


asin = _unary(
    "asin",
    "AsinBackward0",
    np.arcsin,
    lambda x, out: reciprocal(sqrt(sub(1.0, mul(x, x)))),
    "arcsine",
    symbolic=S.each("asin"),
    aliases=("arcsin",),
    methods=("asin", "arcsin"),
    nonfinite="asin of a number outside [-1, 1]",
    nonfinite_backward="the derivative of asin at +-1 is infinite",
)


acos = _unary(
    "acos",
    "AcosBackward0",
    np.arccos,
    lambda x, out: neg(reciprocal(sqrt(sub(1.0, mul(x, x))))),
    "arccosine",
    symbolic=S.each("acos"),
    aliases=("arccos",),
    methods=("acos", "arccos"),
    nonfinite="acos of a number outside [-1, 1]",
    nonfinite_backward="the derivative of acos at +-1 is infinite",
)


atan = _unary(
    "atan",
    "AtanBackward0",
    rounded_once(np.arctan),
    lambda x, out: reciprocal(add(mul(x, x), 1.0)),
    "arctangent",
    symbolic=S.each("atan"),
    aliases=("arctan",),
    methods=("atan", "arctan"),
)


sinh = _unary(
    "sinh",
    "SinhBackward0",
    rounded_once(np.sinh),
    lambda x, out: cosh(x),
    "hyperbolic sine",
    symbolic=S.each("sinh"),
    nonfinite="overflow",
)


cosh: Unary = _unary(
    "cosh",
    "CoshBackward0",
    rounded_once(np.cosh),
    lambda x, out: sinh(x),
    "hyperbolic cosine",
    symbolic=S.each("cosh"),
    nonfinite="overflow",
)


tanh = _unary(
    "tanh",
    "TanhBackward0",
    rounded_once(np.tanh),
    lambda x, out: sub(1.0, mul(out, out)),
    "hyperbolic tangent",
    symbolic=S.each("tanh"),
    complex=HOLOMORPHIC,
)


sigmoid: Unary = _unary(
    "sigmoid",
    "SigmoidBackward0",
    vector_math.logistic,
    lambda x, out: mul(out, sub(1.0, out)),
    "1 / (1 + exp(-x))",
    symbolic=S.each(lambda sp, v: 1 / (1 + sp.exp(-v))),
    complex=HOLOMORPHIC,
    extra={"by_place": True},  # vector_math.sigmoid
    aliases=("expit",),  # torch.special.expit
)


erf = _unary(
    "erf",
    "ErfBackward0",
    _erf,
    lambda x, out: mul(2.0 / math.sqrt(math.pi), exp(neg(mul(x, x)))),
    "error function",
    symbolic=S.each("erf"),
)


def _clamp_forward(
    x: Array,
    min: float | None = None,  # noqa: A002 - PyTorch's names
    max: float | None = None,  # noqa: A002
) -> Array:
    return np.clip(x, min, max)


def _inside(x: Array, low: float | None, high: float | None) -> Array:
    """Inside [low, high], bounds included: where clamp's derivative is 1 (PyTorch)."""
    inside = np.ones(x.shape, dtype=bool)
    if low is not None:
        inside &= x >= low
    if high is not None:
        inside &= x <= high
    return inside


def _clamp_derivative(
    x: Tensor,
    out: Tensor,
    min: float | None = None,  # noqa: A002
    max: float | None = None,  # noqa: A002
) -> Selected:
    return Selected(mask(functools.partial(_inside, low=min, high=max), x))


_clamp = _unary(
    "clamp",
    "ClampBackward1",
    _clamp_forward,
    _clamp_derivative,
    "limit to [min, max], numbers or tensors (gradient 1 inside, bounds included)",
    formula=S.clamp,
    symbolic=S.PIECEWISE,
    params=(
        Param("input", TENSOR),
        Param("min", OPT_TENSOR, None),
        Param("max", OPT_TENSOR, None),
    ),
    aliases=("clip",),
    methods=("clamp", "clip"),
    extra={"built_name": "ClampBackward0"},  # tensor bounds: torch's clamp(Tensor, Tensor)
    kink=(
        "the gradient is 1 inside [min, max], bounds included, and 0 outside; a tensor bound "
        "gets the gradient where input is strictly beyond it, min only where min < max and "
        "max also where max < min (the result is max there), so where input < min == max "
        "no one gets it, as PyTorch"
    ),
)


def _inside_both(x: Array, low: Array, high: Array) -> NumpyResult:
    return (x >= low) & (x <= high)


def _below_min(x: Array, low: Array, high: Array) -> NumpyResult:
    return (x < low) & (low < high)


def _above_max(x: Array, low: Array, high: Array) -> NumpyResult:
    return (x > high) | (high < low)


def _clamped(x: Array, low: Array, high: Array) -> NumpyResult:
    return np.minimum(np.maximum(x, low), high)


def _at_least(x: Array, low: Array) -> NumpyResult:
    return x >= low


def _at_most(x: Array, high: Array) -> NumpyResult:
    return x <= high


def _clamp_tensors(x: Tensor, low: Tensor | None, high: Tensor | None) -> Tensor:
    """clamp with a tensor bound, broadcasting the three: each element is input, min or max,
    and the gradient goes to the one chosen by PyTorch's masks (clamp_backward_min_max)."""
    if high is None:
        assert low is not None
        return where(mask(_at_least, x, low), x, low)
    if low is None:
        return where(mask(_at_most, x, high), x, high)
    # input < min == max: the value is max, but PyTorch's masks give no one the gradient
    neither = mask(_clamped, x, low, high)
    rest = where(mask(_above_max, x, low, high), high, neither)
    rest = where(mask(_below_min, x, low, high), low, rest)
    return where(mask(_inside_both, x, low, high), x, rest)


def _bound(value: Any, x: Tensor) -> Tensor | None:
    if value is None or isinstance(value, Tensor):
        return value
    return Tensor(np.asarray(value, dtype=x.dtype))


@public("clamp")
def clamp(
    x: TensorLike,
    min: TensorLike | None = None,  # noqa: A002
    max: TensorLike | None = None,  # noqa: A002
) -> Tensor:
    """Limit ``x`` to [min, max]; either bound may be None, a number or a tensor (which
    broadcasts with ``x``, as torch.clamp's Tensor overload)."""
    if min is None and max is None:
        raise DomainError("clamp: give at least one of min and max")
    if any(isinstance(b, Tensor) or (b is not None and np.ndim(b)) for b in (min, max)):
        x = x if isinstance(x, Tensor) else Tensor(x)
        return _clamp_tensors(x, _bound(min, x), _bound(max, x))
    return _clamp(x, min=min, max=max)
