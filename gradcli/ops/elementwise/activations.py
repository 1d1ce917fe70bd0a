"""The activations (relu and its kin, gelu, elu, selu, hardtanh, softplus, ...), each declared
as one entry of the op table by its partial derivatives, as ``pointwise.py``'s element-wise
functions are; PyTorch's convention at each kink is written in the entry's ``kink`` field.

softmin and glu are composites: their derivatives come from the operations they are made of.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError, ShapeError
from ...engine.tensor import Tensor
from .. import explaining as X
from .. import primitives as P
from .. import symbolic as S
from ..arrays import rearranging as RA
from ..numerics import special, vector_math
from ..numerics.summation import in_force
from ..primitives import Selected, _is_positive, _unary, add, mask, mul, neg, reciprocal, sub, where
from ..reductions import reductions as RD
from ..rules.dims import _axes
from ..table import (
    APPROXIMATE,
    INT,
    NUMBER,
    OPT_INT,
    TENSOR,
    Array,
    NumpyResult,
    Op,
    Param,
    public,
    register,
)
from . import elementary as EL
from .elementary import exp, sigmoid, tanh
from .pointwise import _tensor

# -- activations ------------------------------------------------------------------------------

relu = _unary(
    "relu",
    "ReluBackward0",
    lambda x: np.maximum(x, 0),
    # out > 0 where x > 0 (and NaN where x is): the rule reads the output, as torch's node
    # saves its result, so that the input's values can go (vjp_reads_inputs)
    lambda x, out: Selected(mask(_is_positive, out)),
    "max(x, 0) (derivative 0 at 0)",
    formula=S.relu,
    symbolic=S.PIECEWISE,
    kink="the derivative at 0 is 0",
)

_ROOT_HALF = math.sqrt(0.5)
_INV_ROOT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715
_APPROXIMATIONS = ("none", "tanh")


def _gelu_forward(x: Array, approximate: str) -> NumpyResult:
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(_GELU_K * (x + _GELU_C * x * x * x)))
    return 0.5 * x * (1.0 + special.erf(x * _ROOT_HALF))


def _gelu_derivative(x: Tensor, out: Tensor, approximate: str) -> Tensor:
    if approximate == "tanh":
        inner = mul(add(x, mul(mul(x, mul(x, x)), _GELU_C)), _GELU_K)
        t = tanh(inner)
        slope = mul(add(mul(mul(x, x), 3.0 * _GELU_C), 1.0), _GELU_K)
        return add(mul(add(t, 1.0), 0.5), mul(mul(mul(x, 0.5), sub(1.0, mul(t, t))), slope))
    cdf = mul(add(EL.erf(mul(x, _ROOT_HALF)), 1.0), 0.5)
    pdf = mul(exp(mul(mul(x, x), -0.5)), _INV_ROOT_2PI)
    return add(cdf, mul(x, pdf))


def _gelu_symbolic(x: Array, approximate: str = "none") -> Array:
    if approximate == "tanh":
        return S.each(
            lambda sp, v: v / 2 * (1 + sp.tanh(sp.sqrt(2 / sp.pi) * (v + _GELU_C * v**3)))
        )(x)
    return S.each(lambda sp, v: v / 2 * (1 + sp.erf(v / sp.sqrt(2))))(x)


_gelu = _unary(
    "gelu",
    "GeluBackward0",
    _gelu_forward,
    _gelu_derivative,
    "x * Phi(x), Phi the normal CDF ('tanh': its tanh approximation)",
    params=(Param("input", TENSOR), Param("approximate", APPROXIMATE, "none")),
    methods=(),
    symbolic=_gelu_symbolic,
)


@public("gelu")
def gelu(x: Any, approximate: str = "none") -> Tensor:
    """x * Phi(x), or with ``approximate='tanh'`` its tanh approximation."""
    if approximate not in _APPROXIMATIONS:
        raise DomainError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _gelu(x, approximate=approximate)


def _silu_forward(x: Any) -> Any:
    if x.dtype == np.float32 and in_force():  # torch's bits (vector_math), at a cost
        return vector_math.silu(x)
    return x * vector_math.logistic(x)


silu = _unary(
    "silu",
    "SiluBackward0",
    _silu_forward,
    lambda x, out: _silu_derivative(x),
    "x * sigmoid(x) (swish)",
    methods=(),
    symbolic=S.each(lambda sp, v: v / (1 + sp.exp(-v))),
    extra={"by_place": True},  # vector_math.silu
)


def _silu_derivative(x: Tensor) -> Tensor:
    s = sigmoid(x)
    return mul(s, add(mul(x, sub(1.0, s)), 1.0))


def _negative(x: Array) -> Array:
    return x < 0


def _positive(x: Array) -> Array:
    return x > 0


def _elu_forward(x: Array, alpha: float, scale: float, input_scale: float) -> Array:
    return scale * np.where(x > 0, x, alpha * np.expm1(x * input_scale))


def _elu_derivative(
    x: Tensor, out: Tensor, alpha: float, scale: float, input_scale: float
) -> Tensor:
    # PyTorch: the negative side's slope at 0 (alpha * scale * input_scale), and a second
    # derivative of 0 there: the exponent sees x only where x < 0, a constant 0 at 0.
    held = where(mask(_negative, x), x, 0.0)
    negative_side = mul(exp(mul(held, input_scale)), alpha * scale * input_scale)
    return where(mask(_positive, x), scale, negative_side)


def _elu_family(
    name: str,
    backward_name: str,
    summary: str,
    params: tuple[Param, ...],
    formula: Callable[..., Any],
    kink: str,
) -> Callable[..., Tensor]:
    """elu, celu and selu: scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1)), as
    PyTorch computes all three; ``params`` is the signature a program calls."""
    return _unary(
        name,
        backward_name,
        _elu_forward,
        _elu_derivative,
        summary,
        params=params,
        methods=(),
        formula=formula,
        symbolic=S.PIECEWISE,
        kink=kink,
    )


def _exp_side(sp: Any, v: Any, alpha: Any, input_scale: Any) -> Any:
    return sp.Piecewise((v, v > 0), (alpha * (sp.exp(v * input_scale) - 1), True))


_SELU_ALPHA = 1.6732632423543772848170429916717  # PyTorch's constants
_SELU_SCALE = 1.0507009873554804934193349852946
_ALPHA = (Param("input", TENSOR), Param("alpha", NUMBER, 1.0))
_SLOPE_AT_0 = "(the negative side's), and the second derivative at 0 is 0"

_elu = _elu_family(
    "elu",
    "EluBackward0",
    "x for x > 0, else alpha * (exp(x) - 1)",
    _ALPHA,
    lambda sp, v, alpha: _exp_side(sp, v, alpha, 1),
    f"the derivative at 0 is alpha {_SLOPE_AT_0}",
)
_celu = _elu_family(
    "celu",
    "CeluBackward0",
    "x for x > 0, else alpha * (exp(x / alpha) - 1)",
    _ALPHA,
    lambda sp, v, alpha: _exp_side(sp, v, alpha, 1 / sp.sympify(alpha)),
    f"the derivative at 0 is 1 {_SLOPE_AT_0}",
)
_selu = _elu_family(
    "selu",
    "EluBackward0",
    "scale * elu(x, alpha), with PyTorch's fixed alpha and scale",
    (Param("input", TENSOR),),
    lambda sp, v: _SELU_SCALE * _exp_side(sp, v, _SELU_ALPHA, 1),
    f"the derivative at 0 is scale * alpha {_SLOPE_AT_0}",
)


@public("elu")
def elu(x: Any, alpha: float = 1.0) -> Tensor:
    """x for x > 0, else alpha * (exp(x) - 1)."""
    return _elu(x, alpha=float(alpha), scale=1.0, input_scale=1.0)


@public("celu")
def celu(x: Any, alpha: float = 1.0) -> Tensor:
    """x for x > 0, else alpha * (exp(x / alpha) - 1); alpha may not be 0."""
    if alpha == 0:
        raise DomainError("celu: alpha may not be 0 (it divides x)")
    return _celu(x, alpha=float(alpha), scale=1.0, input_scale=1.0 / alpha)


@public("selu")
def selu(x: Any) -> Tensor:
    """scale * elu(x, alpha) with alpha = 1.6733 and scale = 1.0507 (PyTorch's)."""
    return _selu(x, alpha=_SELU_ALPHA, scale=_SELU_SCALE, input_scale=1.0)


def _leaky_slope(x: Array, negative_slope: float) -> Array:
    return np.where(x > 0, 1.0, negative_slope).astype(x.dtype)


_leaky_relu = _unary(
    "leaky_relu",
    "LeakyReluBackward0",
    lambda x, negative_slope: np.where(x > 0, x, x * negative_slope),
    lambda x, out, negative_slope: mask(
        functools.partial(_leaky_slope, negative_slope=negative_slope), x
    ),
    "x for x > 0, else negative_slope * x",
    params=(Param("input", TENSOR), Param("negative_slope", NUMBER, 0.01)),
    methods=(),
    formula=lambda sp, v, slope: sp.Piecewise((v, v > 0), (slope * v, True)),
    symbolic=S.PIECEWISE,
    kink="the derivative at 0 is negative_slope (the negative side's)",
)


@public("leaky_relu")
def leaky_relu(x: Any, negative_slope: float = 0.01) -> Tensor:
    """x for x > 0, else negative_slope * x."""
    return _leaky_relu(x, negative_slope=float(negative_slope))


def _strictly_inside(x: Array, low: float, high: float) -> Array:
    return (x > low) & (x < high)


def _hardtanh_derivative(x: Tensor, out: Tensor, min_val: float, max_val: float) -> P.Selected:
    return P.Selected(mask(functools.partial(_strictly_inside, low=min_val, high=max_val), x))


def _hardtanh_formula(sp: Any, v: Any, low: Any, high: Any) -> Any:
    return sp.Piecewise((low, v <= low), (high, v >= high), (v, True))


_BOUNDS_KINK = "the derivative is 0 at the bounds (1 only strictly inside), as PyTorch's"
_hardtanh = _unary(
    "hardtanh",
    "HardtanhBackward0",
    lambda x, min_val, max_val: np.clip(x, min_val, max_val),
    _hardtanh_derivative,
    "x limited to [min_val, max_val] (derivative 0 at the bounds)",
    params=(
        Param("input", TENSOR),
        Param("min_val", NUMBER, -1.0),
        Param("max_val", NUMBER, 1.0),
    ),
    methods=(),
    formula=_hardtanh_formula,
    symbolic=S.PIECEWISE,
    kink=_BOUNDS_KINK,
)


@public("hardtanh")
def hardtanh(x: Any, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``x`` limited to [min_val, max_val]."""
    if max_val < min_val:
        raise DomainError(
            f"hardtanh: max_val ({max_val:g}) must not be below min_val ({min_val:g})"
        )
    return _hardtanh(x, min_val=float(min_val), max_val=float(max_val))


_relu6 = _unary(
    "relu6",
    "HardtanhBackward0",  # torch's relu6 is hardtanh(x, 0, 6)
    lambda x, min_val, max_val: np.clip(x, min_val, max_val),
    _hardtanh_derivative,
    "min(max(x, 0), 6) (derivative 0 at 0 and 6)",
    params=(Param("input", TENSOR),),
    methods=(),
    formula=lambda sp, v: _hardtanh_formula(sp, v, 0, 6),
    symbolic=S.PIECEWISE,
    kink=_BOUNDS_KINK,
)


@public("relu6")
def relu6(x: Any) -> Tensor:
    """min(max(x, 0), 6)."""
    return _relu6(x, min_val=0.0, max_val=6.0)


def _hardsigmoid_middle(x: Array) -> Array:
    return (x > -3) & (x < 3)


hardsigmoid = _unary(
    "hardsigmoid",
    "HardsigmoidBackward0",
    lambda x: np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    lambda x, out: P.Selected(mask(_hardsigmoid_middle, x), 1.0 / 6.0),
    "x / 6 + 1/2 limited to [0, 1]",
    methods=(),
    formula=lambda sp, v: sp.Piecewise(
        (0, v <= -3), (1, v >= 3), (v / 6 + sp.Rational(1, 2), True)
    ),
    symbolic=S.PIECEWISE,
    kink="the derivative is 1/6 strictly inside (-3, 3) and 0 at +-3; PyTorch's 1/6 is "
    "rounded to float32 (0.16666667, 3e-8 away), and it has no second derivative (here 0)",
)


def _hardswish_middle(x: Array) -> Array:
    return ((x > -3) & (x < 3)).astype(x.dtype)


def _hardswish_upper(x: Array) -> Array:
    return (x >= 3).astype(x.dtype)


def _above_lower(x: Array) -> Array:
    return x > -3


def _hardswish_derivative(x: Tensor, out: Tensor) -> P.Selected:
    middle = mul(mask(_hardswish_middle, x), add(mul(x, 1.0 / 3.0), 0.5))
    return P.Selected(mask(_above_lower, x), add(middle, mask(_hardswish_upper, x)))


hardswish = _unary(
    "hardswish",
    "HardswishBackward0",
    lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
    _hardswish_derivative,
    "x * relu6(x + 3) / 6",
    methods=(),
    formula=lambda sp, v: sp.Piecewise((0, v <= -3), (v, v >= 3), (v * (v + 3) / 6, True)),
    symbolic=S.PIECEWISE,
    kink="the derivative is 0 at -3 and 1 at 3 (x / 3 + 1/2 strictly between)",
)


def _softplus_forward(x: Array) -> NumpyResult:
    return np.logaddexp(0, x)


def _mish_derivative(x: Tensor, out: Tensor) -> Tensor:
    t = tanh(_softplus(x, beta=1.0, threshold=math.inf))
    return add(t, mul(mul(x, sigmoid(x)), sub(1.0, mul(t, t))))


mish = _unary(
    "mish",
    "MishBackward0",
    lambda x: x * np.tanh(_softplus_forward(x)),
    _mish_derivative,
    "x * tanh(softplus(x))",
    methods=(),
    symbolic=S.each(lambda sp, v: v * sp.tanh(sp.log(1 + sp.exp(v)))),
)
softsign = _unary(
    "softsign",
    "DivBackward0",  # torch's softsign is x / (|x| + 1)
    lambda x: x / (1.0 + np.abs(x)),
    lambda x, out: reciprocal(_squared(add(EL.abs(x), 1.0))),
    "x / (1 + |x|)",
    methods=(),
    symbolic=S.each(lambda sp, v: v / (1 + sp.Abs(v))),
    kink="the derivative at 0 is 1, the second derivative at 0 is 0 (|x|'s derivative 0)",
)


def _squared(x: Tensor) -> Tensor:
    return mul(x, x)


logsigmoid = _unary(
    "logsigmoid",
    "LogSigmoidBackward0",
    lambda x: -np.logaddexp(0, -x),
    lambda x, out: sigmoid(neg(x)),
    "log(sigmoid(x)), computed stably",
    methods=(),
    symbolic=S.each(lambda sp, v: -sp.log(1 + sp.exp(-v))),
)


def _softplus_forward_beta(x: Array, beta: float, threshold: float) -> Array:
    scaled = x * beta
    with np.errstate(over="ignore"):
        return np.where(scaled > threshold, x, np.logaddexp(0, scaled) / beta).astype(x.dtype)


def _above(x: Array, beta: float, threshold: float) -> Array:
    return x * beta > threshold


def _below(x: Array, beta: float, threshold: float) -> Array:
    return x * beta < threshold


def _softplus_derivative(x: Tensor, out: Tensor, beta: float, threshold: float) -> Tensor:
    # PyTorch: slope 1 where beta x > threshold (the linear branch); sigmoid(beta x) elsewhere,
    # whose own derivative is 0 where beta x == threshold too (its double backward masks
    # beta x < threshold): there the sigmoid sees x as a constant.
    below = functools.partial(_below, beta=beta, threshold=threshold)
    above = functools.partial(_above, beta=beta, threshold=threshold)
    held = where(mask(below, x), x, mask(np.positive, x))
    return where(mask(above, x), 1.0, sigmoid(mul(held, beta)))


def _softplus_symbolic(x: Array, beta: float = 1.0, threshold: float = 20.0) -> Array:
    # The smooth form: beyond the threshold PyTorch's linear branch differs from it by less
    # than exp(-threshold) / beta.
    return S.each(lambda sp, v: sp.log(1 + sp.exp(beta * v)) / beta)(x)


_softplus = _unary(
    "softplus",
    "SoftplusBackward0",
    _softplus_forward_beta,
    _softplus_derivative,
    "log(1 + exp(beta x)) / beta, and x where beta x > threshold",
    params=(
        Param("input", TENSOR),
        Param("beta", NUMBER, 1.0),
        Param("threshold", NUMBER, 20.0),
    ),
    methods=(),
    symbolic=_softplus_symbolic,
    kink="x itself (slope 1) where beta x > threshold; the second derivative is 0 where "
    "beta x >= threshold",
)


@public("softplus")
def softplus(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (PyTorch's)."""
    if beta == 0:
        raise DomainError("softplus: beta may not be 0 (it divides the result)")
    return _softplus(x, beta=float(beta), threshold=float(threshold))


# -- composites: softmin and glu --------------------------------------------------------------


def _softmin_explain(slot: Any, vary: Any) -> Any:
    left, formula, layout, value = X.blocks(log=False)(slot, vary)
    formula = "-" + formula.replace("diag(s) - s s^T", "(diag(s) - s s^T)")
    return left, formula, layout, None if value is None else -value


register(
    Op(
        "softmin",
        "softmax(-x) along dim (the only dim of a vector by default)",
        params=(Param("input", TENSOR), Param("dim", OPT_INT, None), RD.DTYPE),
        symbolic=lambda x, dim=None, dtype=None: S.softmax(-x, dim),
        explain=_softmin_explain,
    )
)


@public("softmin")
def softmin(x: Any, dim: int | None = None, dtype: Any = None) -> Tensor:
    """softmax(-x) along ``dim`` (in ``dtype`` where given, the input cast to it first)."""
    return RD.softmax(neg(_tensor(x)), dim, dtype)


def _halves(x: Tensor, dim: int) -> tuple[Tensor, Tensor, int]:
    if x.ndim == 0:
        raise ShapeError("glu: the input needs at least one dimension (a 0-d tensor has none)")
    axis = _axes(dim, x.ndim)[0]
    size = x.shape[axis]
    if size % 2:
        raise ShapeError(f"glu: halving dimension must be even, but dimension {dim} is size {size}")
    lead = (slice(None),) * axis
    first = RA.getitem(x, (*lead, slice(0, size // 2)))
    second = RA.getitem(x, (*lead, slice(size // 2, size)))
    return first, second, axis


def _glu_symbolic(x: Array, dim: int = -1) -> Array:
    first, second = np.split(x, 2, axis=dim % max(x.ndim, 1))
    return first * S.each(lambda sp, v: 1 / (1 + sp.exp(-v)))(second)


def _glu_explain(slot: Any) -> str:
    w, dim = slot.wrt, slot.params.get("dim", -1)
    return (
        f"sigmoid(b[i]) for the first half a of {w} along dim {dim}, "
        "a[i]*sigmoid(b[i])*(1 - sigmoid(b[i])) for the second half b"
    )


register(
    Op(
        "glu",
        "a * sigmoid(b), a and b the two halves of input along dim",
        params=(Param("input", TENSOR), Param("dim", INT, -1)),
        symbolic=_glu_symbolic,
        explain=X.per_element(_glu_explain),
        backward_name="GluBackward0",
    )
)


@public("glu")
def glu(x: Any, dim: int = -1) -> Tensor:
    """The gated linear unit: a * sigmoid(b), a and b the halves of ``x`` along ``dim``."""
    first, second, _ = _halves(_tensor(x), dim)
    return mul(first, sigmoid(second))
