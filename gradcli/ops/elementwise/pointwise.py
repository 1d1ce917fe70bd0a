"""Element-wise functions, each declared as one entry of the op table.

As in ``primitives.py``, each element-wise operation is declared by its partial derivatives
(the factories ``_unary`` and ``_binary`` turn them into the reverse and the forward rule),
written in engine operations so that derivatives can be differentiated again. Constants that
depend on the data (which side of a kink an element is on) are masks, which carry no
gradient. PyTorch's convention at each kink is written in the entry's ``kink`` field; where
PyTorch's own derivative has a quirk (a second derivative that is 0 at a kink, a gradient it
does not implement), the rule follows it and says so.

The activations are declared in ``activations.py``, on the same factories.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...base.engine_errors import GradError
from ...engine.tensor import Node, Tensor, apply
from .. import batching as B
from .. import explaining as X
from .. import patterns as R
from .. import primitives as P
from .. import symbolic as S
from ..numerics import special
from ..primitives import (
    _binary,
    _unary,
    add,
    div,
    mask,
    mul,
    neg,
    reciprocal,
    sub,
    sum_to,
    where,
    zeros_like,
)
from ..table import INT, NUMBER, OPT_NUMBER, TENSOR, Array, NumpyResult, Op, Param, public, register
from . import elementary as EL
from .elementary import cos, exp, sigmoid, sin, sqrt


def _each2(function: Callable[[Any, Any, Any], Any]) -> Callable[[Array, Array], Array]:
    """A symbolic rule of two broadcasting operands: ``function(sympy, a, b)`` per element."""

    def rule(a: Array, b: Array) -> Array:
        import sympy

        pair = np.frompyfunc(lambda u, v: function(sympy, u, v), 2, 1)
        return np.asarray(pair(a, b), dtype=object)

    return rule


def _overload(name: str, tensor: int, number: int, position: int = 1) -> Callable[[Node], str]:
    """PyTorch's grad_fn name of an operation with a Tensor and a Scalar overload: the Scalar
    one where the operand at ``position`` is a number (a 0-d constant, as a number is here)."""

    def namer(node: Node) -> str:
        return f"{name}Backward{number if P.number_operand(node, position) else tensor}"

    return namer


def _zero_explain(reason: str) -> Callable[..., Any]:
    return X.per_element(lambda slot: f"0 ({reason})")


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


# -- logarithms, powers, roots ---------------------------------------------------------------

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

log10 = _unary(
    "log10",
    "Log10Backward0",
    np.log10,
    lambda x, out: reciprocal(mul(x, _LN10)),
    "base-10 logarithm",
    symbolic=S.each(lambda sp, v: sp.log(v, 10)),
    nonfinite="log10 of a non-positive number",
    nonfinite_backward="the derivative of log10 at 0 is infinite",
)
exp2 = _unary(
    "exp2",
    "Exp2Backward0",
    np.exp2,
    lambda x, out: mul(out, _LN2),
    "2 to the x",
    symbolic=S.each(lambda sp, v: 2**v),
    nonfinite="overflow",
)
square = _unary(
    "square",
    "PowBackward0",  # torch.square is x ** 2
    np.square,
    lambda x, out: mul(x, 2.0),
    "x ** 2",
    symbolic=S.each(lambda sp, v: v**2),
    nonfinite="overflow",
)
rsqrt = _unary(
    "rsqrt",
    "RsqrtBackward0",
    lambda x: 1.0 / np.sqrt(x),
    lambda x, out: mul(mul(out, mul(out, out)), -0.5),
    "1 / sqrt(x)",
    symbolic=S.each(lambda sp, v: 1 / sp.sqrt(v)),
    nonfinite="rsqrt of 0 or of a negative number",
    nonfinite_backward="the derivative of rsqrt at 0 is infinite",
    kink="the value at 0 is inf and the derivative -inf",
)
cbrt = _unary(
    "cbrt",
    "CbrtBackward0",  # gradcli's own name: PyTorch 2.13 has no cbrt
    np.cbrt,
    lambda x, out: reciprocal(mul(mul(out, out), 3.0)),
    "the real cube root, negative for a negative x (numpy's cbrt; PyTorch 2.13 has none, and "
    "its x ** (1 / 3) is nan there)",
    methods=(),  # nor a Tensor method
    # by sign, so that no formula takes a power of a negative number (numpy's nan)
    symbolic=S.each(
        lambda sp, v: sp.Piecewise(
            (-((-v) ** sp.Rational(1, 3)), v < 0), (v ** sp.Rational(1, 3), True)
        )
    ),
    nonfinite_backward="the derivative of cbrt at 0 is infinite",
    kink="at 0 the value is 0 and the derivative inf (1 / (3 cbrt(x) ** 2))",
)
atan2 = _binary(
    "atan2",
    "Atan2Backward0",
    np.arctan2,
    lambda a, b, out, needs: _atan2_partials(a, b),
    "the angle of the point (other, input): atan(input / other) in the right quadrant",
    aliases=("arctan2",),
    methods=("atan2", "arctan2"),
    symbolic=_each2(lambda sp, a, b: sp.atan2(a, b)),
    nonfinite_backward="the second derivative of atan2 at (0, 0) is 0 / 0",
    kink="at (0, 0) the value is 0 (or +-pi by the signs of zero), both derivatives are 0 and "
    "the second derivatives nan, as PyTorch's",
)


def _origin(a: Array, b: Array) -> NumpyResult:
    return (a == 0) & (b == 0)


def _atan2_partials(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    # PyTorch: both derivatives are 0 at the origin (its second derivatives there are nan,
    # and so are these: the masked branch is 1 / 0)
    scale = where(mask(_origin, a, b), 0.0, reciprocal(add(mul(a, a), mul(b, b))))
    return mul(b, scale), neg(mul(a, scale))


hypot = _binary(
    "hypot",
    "HypotBackward0",
    np.hypot,
    lambda a, b, out, needs: (div(a, out), div(b, out)),
    "sqrt(input ** 2 + other ** 2), without overflow",
    symbolic=_each2(lambda sp, a, b: sp.sqrt(a**2 + b**2)),
    nonfinite_backward="the derivative of hypot at (0, 0) is 0 / 0",
    kink="at (0, 0) both derivatives are nan (0 / 0), as in PyTorch",
)

# -- rounding ---------------------------------------------------------------------------------

_ROUNDING = "it rounds, and sympy does not differentiate rounding"
_STEPS = "piecewise constant, PyTorch's derivative is 0 everywhere, integers included"

floor = _unary(
    "floor",
    "FloorBackward0",
    np.floor,
    lambda x, out: 0,
    "the largest whole number <= x (derivative 0)",
    symbolic=_ROUNDING,
    explain=_zero_explain("floor is constant between whole numbers"),
    kink=f"{_STEPS}",
    saved=False,
)
ceil = _unary(
    "ceil",
    "CeilBackward0",
    np.ceil,
    lambda x, out: 0,
    "the smallest whole number >= x (derivative 0)",
    symbolic=_ROUNDING,
    explain=_zero_explain("ceil is constant between whole numbers"),
    kink=f"{_STEPS}",
    saved=False,
)
trunc = _unary(
    "trunc",
    "TruncBackward0",
    np.trunc,
    lambda x, out: 0,
    "x rounded towards 0 (derivative 0)",
    symbolic=_ROUNDING,
    explain=_zero_explain("trunc is constant between whole numbers"),
    aliases=("fix",),
    methods=("trunc", "fix"),
    kink=f"{_STEPS}",
    saved=False,
)


def _round_name(node: Node) -> str:
    return "RoundBackward1" if node.params["decimals"] else "RoundBackward0"


_ROUND = register(
    Op(
        "round",
        "to the nearest whole number (or decimals), halves to even (derivative 0)",
        forward=lambda x, decimals: np.round(x, decimals),
        vjp=lambda g, out, x, needs, decimals: (zeros_like(x),),
        jvp=lambda tangents, out, x, decimals: zeros_like(out),
        backward_name=_round_name,
        batch=B.elementwise,
        pattern=R.elementwise,
        params=(Param("input", TENSOR), Param("decimals", INT, 0)),
        methods=("round",),
        symbolic=_ROUNDING,
        explain=_zero_explain("round is constant between its steps"),
        kink=f"{_STEPS}; halves round to even",
        saved=False,
    )
)


@public("round")
def round(x: Any, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    """``x`` rounded to ``decimals`` decimal places (halves to even), as torch.round."""
    return apply(_ROUND, x, decimals=int(decimals))


frac = _unary(
    "frac",
    "FracBackward0",
    lambda x: x - np.trunc(x),
    lambda x, out: 1,
    "x - trunc(x): the fractional part, with the sign of x",
    symbolic=_ROUNDING,
    explain=X.per_element(lambda slot: "1 (between whole numbers)"),
    kink="the derivative is 1 everywhere, whole numbers included",
    saved=False,
)


def _floor_quotient(a: Array, b: Array) -> NumpyResult:
    return np.floor_divide(a, b)


def _trunc_quotient(a: Array, b: Array) -> NumpyResult:
    return np.trunc(a / b)


def _remainder_explain(slot: Any) -> str:
    if slot.position == 0:
        return "1"
    a, b = slot.names
    return f"-floor({a}/{b}) (elementwise)"


def _fmod_explain(slot: Any) -> str:
    if slot.position == 0:
        return "1"
    a, b = slot.names
    return f"-trunc({a}/{b}) (elementwise)"


def _remainder_partials(a: Tensor, b: Tensor, out: Tensor, needs: Any) -> tuple[Any, Any]:
    if needs[1] and a.ndim == 0 and not needs[0] and a.grad_fn is None:
        # torch.remainder(number, tensor) (the Scalar-Tensor overload) has no derivative
        raise _no_derivative(
            "remainder of a number by a tensor", "a - b * floor(a / b) has a derivative"
        )
    return 1, neg(mask(_floor_quotient, a, b)) if needs[1] else None


remainder = _binary(
    "remainder",
    _overload("Remainder", tensor=1, number=0),
    np.remainder,
    _remainder_partials,
    "input % other: the remainder with the sign of other, as Python's %",
    operator="%",
    methods=("remainder",),
    fold=True,
    symbolic=_ROUNDING,
    explain=X.per_element(_remainder_explain),
    nonfinite="a remainder by 0",
    saved=lambda node: node.needs[1],  # input's gradient needs no value: torch saves none
    kink="d/d input is 1 and d/d other is -floor(input / other), also where the remainder jumps; "
    "a number's remainder by a tensor (2 % x) has no derivative, as in PyTorch (a 0-d constant "
    "counts as a number)",
)
fmod = _binary(
    "fmod",
    _overload("Fmod", tensor=1, number=0),
    np.fmod,
    lambda a, b, out, needs: (1, neg(mask(_trunc_quotient, a, b)) if needs[1] else None),
    "the remainder with the sign of input, as C's fmod",
    symbolic=_ROUNDING,
    explain=X.per_element(_fmod_explain),
    nonfinite="a remainder by 0",
    saved=lambda node: node.needs[1],  # input's gradient needs no value: torch saves none
    kink="d/d input is 1 and d/d other is -trunc(input / other), also where the remainder jumps",
)


def _no_derivative(name: str, instead: str = "floor(a / b) has derivative 0") -> GradError:
    return GradError(
        f"the derivative for {name} is not implemented (as in PyTorch), so nothing computed "
        f"from it can be differentiated; {instead}"
    )


def _floor_divide_vjp(g: Tensor, out: Tensor, a: Tensor, b: Tensor, needs: Any) -> Any:
    raise _no_derivative("floor_divide")


def _floor_divide_jvp(tangents: Any, out: Tensor, a: Tensor, b: Tensor) -> Tensor:
    raise _no_derivative("floor_divide")


_FLOOR_DIVIDE = register(
    Op(
        "floor_divide",
        "input // other: the quotient rounded down, as Python's // (no derivative, as torch)",
        forward=np.floor_divide,
        vjp=_floor_divide_vjp,
        jvp=_floor_divide_jvp,
        backward_name="NotImplemented",
        batch=B.elementwise,
        pattern=R.elementwise,
        params=(Param("input", TENSOR), Param("other", TENSOR)),
        operator="//",
        methods=("floor_divide",),
        fold=True,
        symbolic=_ROUNDING,
        explain=_zero_explain("floor_divide has no derivative in PyTorch"),
        nonfinite="a division by 0",
        kink="PyTorch does not implement its derivative: differentiating through it is an "
        "error (floor(a / b) has derivative 0)",
    )
)


@public("floor_divide")
def floor_divide(a: Any, b: Any) -> Tensor:
    """``a // b``: the quotient rounded towards -inf (torch.floor_divide)."""
    return apply(_FLOOR_DIVIDE, a, b)


# -- error and gamma functions ----------------------------------------------------------------

_TWO_OVER_ROOT_PI = 2.0 / math.sqrt(math.pi)
_HALF_ROOT_PI = math.sqrt(math.pi) / 2.0

erfc = _unary(
    "erfc",
    "ErfcBackward0",
    special.erfc,
    lambda x, out: mul(exp(neg(mul(x, x))), -_TWO_OVER_ROOT_PI),
    "1 - erf(x), accurate where erf is near 1",
    symbolic=S.each("erfc"),
)
erfinv = _unary(
    "erfinv",
    "ErfinvBackward0",
    special.erfinv,
    lambda x, out: mul(exp(mul(out, out)), _HALF_ROOT_PI),
    "the inverse of erf, on [-1, 1]",
    symbolic=S.each("erfinv"),
    nonfinite="erfinv of a number outside (-1, 1)",
    nonfinite_backward="the derivative of erfinv at +-1 is infinite",
)


def _polygamma_forward(x: Array, n: int) -> Array:
    return special.polygamma(n, x)


_POLYGAMMA = register(
    Op(
        "polygamma",
        "the n-th derivative of digamma (the derivatives of lgamma and digamma)",
        forward=_polygamma_forward,
        vjp=lambda g, out, x, needs, n: (mul(g, polygamma(x, n + 1)),),
        jvp=lambda tangents, out, x, n: mul(tangents[0], polygamma(x, n + 1)),
        backward_name="PolygammaBackward0",
        batch=B.elementwise,
        pattern=R.elementwise,
        nonfinite="a pole of polygamma (0 or a negative whole number)",
    )
)


def polygamma(x: Tensor, n: int) -> Tensor:
    """The n-th derivative of digamma at ``x`` (n >= 1; the engine's own use)."""
    return apply(_POLYGAMMA, x, n=n)


digamma = _unary(
    "digamma",
    "DigammaBackward0",
    special.digamma,
    lambda x, out: polygamma(x, 1),
    "the derivative of lgamma, psi(x)",
    symbolic=S.each("digamma"),
    aliases=("psi",),  # torch.special.psi
    nonfinite="digamma at a pole (0 or a negative whole number)",
    nonfinite_backward="the derivative of digamma at a pole",
    kink="-inf at 0 (+inf at -0), nan at the negative whole numbers, as PyTorch",
)
lgamma = _unary(
    "lgamma",
    "LgammaBackward0",
    special.lgamma,
    lambda x, out: digamma(x),
    "log |Gamma(x)|",
    symbolic=S.each("loggamma"),
    aliases=("gammaln",),  # torch.special.gammaln
    nonfinite="lgamma at a pole (0 or a negative whole number) is inf",
    nonfinite_backward="the derivative of lgamma at a pole",
    kink="inf at 0 and the negative whole numbers; its derivative digamma is -inf at 0 and "
    "nan at the negative whole numbers",
)


def _outside(x: Array, low: float, high: float) -> Array:
    return (x < low) | (x > high)


def _logit_forward(x: Array, eps: float | None) -> Array:
    z = x if eps is None else np.clip(x, eps, 1.0 - eps)
    return np.log(z / (1.0 - z))


def _logit_derivative(x: Tensor, out: Tensor, eps: float | None) -> Tensor | P.Selected:
    """1 / (x (1 - x)); outside [0, 1] NaN, and with eps, 0 outside [eps, 1 - eps], where
    torch's rule selects (an infinite cotangent gives 0 there, not inf * 0)."""
    low = 0.0 if eps is None else eps
    outside = mask(functools.partial(_outside, low=low, high=1.0 - low), x)
    if eps is None:
        return where(outside, math.nan, reciprocal(mul(x, sub(1.0, x))))
    inside = mask(functools.partial(_inside, low=low, high=1.0 - low), x)
    return P.Selected(inside, reciprocal(mul(x, sub(1.0, x))))


def _inside(x: Array, low: float, high: float) -> Array:
    return (x >= low) & (x <= high)


def _logit_symbolic(x: Array, eps: float | None = None) -> Array:
    from ..symbolic import NotSymbolic

    if eps is not None:
        raise NotSymbolic("logit with eps clamps its input, which sympy does not write")
    return S.each(lambda sp, v: sp.log(v / (1 - v)))(x)


_logit = _unary(
    "logit",
    "LogitBackward0",
    _logit_forward,
    _logit_derivative,
    "log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given",
    params=(Param("input", TENSOR), Param("eps", OPT_NUMBER, None)),
    symbolic=_logit_symbolic,
    nonfinite="logit of a number outside (0, 1)",
    nonfinite_backward="the derivative of logit at 0 or 1 is infinite",
    kink="without eps the derivative is nan outside [0, 1]; with eps it is 0 outside "
    "[eps, 1 - eps] and 1 / (p (1 - p)) at the bounds",
)


@public("logit")
def logit(x: Any, eps: float | None = None) -> Tensor:
    """log(x / (1 - x)), ``x`` first clamped to [eps, 1 - eps] when ``eps`` is given."""
    return _logit(x, eps=None if eps is None else float(eps))


def _xlogy_forward(a: Array, b: Array) -> Array:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((a == 0) & ~np.isnan(b), 0.0, a * np.log(b)).astype(np.result_type(a, b))


def _zero_at_nonpositive(a: Array, b: Array) -> NumpyResult:
    return (a == 0) & (b <= 0)


def _xlogy_partials(a: Tensor, b: Tensor, out: Tensor, needs: Any) -> tuple[Any, Any]:
    # PyTorch: d/da is log(b), but 0 where a is 0 and b <= 0; d/db is a / b.
    da = where(mask(_zero_at_nonpositive, a, b), 0.0, EL.log(b)) if needs[0] else None
    db = div(a, b) if needs[1] else None
    return da, db


def _xlogy_name(node: Node) -> str:
    assert node.inputs is not None
    scalars = [t.ndim == 0 and not need for t, need in zip(node.inputs, node.needs)]
    return "XlogyBackward2" if scalars[1] else "XlogyBackward1" if scalars[0] else "XlogyBackward0"


xlogy = _binary(
    "xlogy",
    _xlogy_name,
    _xlogy_forward,
    _xlogy_partials,
    "input * log(other), and 0 where input is 0 (unless other is nan)",
    symbolic=_each2(lambda sp, a, b: a * sp.log(b)),
    nonfinite="a log of a non-positive number",
    kink="0 where input is 0 (even where other is 0); d/d input is log(other), but 0 where "
    "input is 0 and other <= 0",
)

# -- trigonometric and hyperbolic -------------------------------------------------------------


def _sinc_derivative(x: Tensor, out: Tensor) -> Tensor:
    # PyTorch's formula, (pi x cos(pi x) - sin(pi x)) / (pi x^2), with 0 at x = 0; its
    # second derivative at 0 is nan (0 * inf), as PyTorch's.
    px = mul(x, math.pi)
    slope = div(sub(mul(px, cos(px)), sin(px)), mul(px, x))
    return where(mask(P._is_zero, x), 0.0, slope)


sinc = _unary(
    "sinc",
    "SincBackward0",
    np.sinc,
    _sinc_derivative,
    "sin(pi x) / (pi x), and 1 at 0",
    symbolic=S.each(lambda sp, v: sp.sinc(sp.pi * v)),
    nonfinite_backward="the second derivative of sinc at 0 (PyTorch's is nan there)",
    kink="1 at 0 with derivative 0; the second derivative at 0 is nan, as PyTorch's",
)
deg2rad = _unary(
    "deg2rad",
    "Deg2RadBackward0",
    np.deg2rad,
    lambda x, out: math.pi / 180.0,
    "degrees to radians",
    symbolic=S.each(lambda sp, v: v * sp.pi / 180),
    saved=False,
)
rad2deg = _unary(
    "rad2deg",
    "Rad2DegBackward0",
    np.rad2deg,
    lambda x, out: 180.0 / math.pi,
    "radians to degrees",
    symbolic=S.each(lambda sp, v: v * 180 / sp.pi),
    saved=False,
)
asinh = _unary(
    "asinh",
    "AsinhBackward0",
    np.arcsinh,
    lambda x, out: reciprocal(sqrt(add(mul(x, x), 1.0))),
    "inverse hyperbolic sine",
    symbolic=S.each("asinh"),
    aliases=("arcsinh",),
    methods=("asinh", "arcsinh"),
)
acosh = _unary(
    "acosh",
    "AcoshBackward0",
    np.arccosh,
    lambda x, out: reciprocal(sqrt(sub(mul(x, x), 1.0))),
    "inverse hyperbolic cosine, for x >= 1",
    symbolic=S.each("acosh"),
    aliases=("arccosh",),
    methods=("acosh", "arccosh"),
    nonfinite="acosh of a number below 1",
    nonfinite_backward="the derivative of acosh at 1 is infinite",
)
atanh = _unary(
    "atanh",
    "AtanhBackward0",
    np.arctanh,
    lambda x, out: reciprocal(sub(1.0, mul(x, x))),
    "inverse hyperbolic tangent, on (-1, 1)",
    symbolic=S.each("atanh"),
    aliases=("arctanh",),
    methods=("atanh", "arctanh"),
    nonfinite="atanh of a number outside (-1, 1)",
    nonfinite_backward="the derivative of atanh at +-1 is infinite",
)

# -- two operands -----------------------------------------------------------------------------

logaddexp = _binary(
    "logaddexp",
    "LogaddexpBackward0",
    np.logaddexp,
    lambda a, b, out, needs: (
        sigmoid(sub(a, b)) if needs[0] else None,
        sigmoid(sub(b, a)) if needs[1] else None,
    ),
    "log(exp(input) + exp(other)), computed stably",
    symbolic=_each2(lambda sp, a, b: sp.log(sp.exp(a) + sp.exp(b))),
)
logaddexp2 = _binary(
    "logaddexp2",
    "Logaddexp2Backward0",
    np.logaddexp2,
    lambda a, b, out, needs: (
        sigmoid(mul(sub(a, b), _LN2)) if needs[0] else None,
        sigmoid(mul(sub(b, a), _LN2)) if needs[1] else None,
    ),
    "log2(2 ** input + 2 ** other), computed stably",
    symbolic=_each2(lambda sp, a, b: sp.log(2**a + 2**b, 2)),
)


def _copysign_ratio(a: Array, b: Array) -> Array:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(a == 0, 0.0, np.copysign(a, b) / a).astype(np.result_type(a, b))


copysign = _binary(
    "copysign",
    _overload("Copysign", tensor=0, number=1),
    np.copysign,
    lambda a, b, out, needs: (mask(_copysign_ratio, a, b), 0),
    "the magnitude of input with the sign of other (-0.0 counts as negative)",
    symbolic="the sign of -0.0 has no formula in sympy",
    explain=X.per_element(
        lambda slot: (
            f"+-1: sign({slot.names[0]})*sign({slot.names[1]}), and 0 where {slot.names[0]} is 0"
            if slot.position == 0
            else "0 (only the sign is taken)"
        )
    ),
    kink="d/d input is 0 where input is 0 (PyTorch's second derivative there is nan; here 0); "
    "other gets no gradient",
)


def _lerp_forward(a: Array, b: Array, w: Array) -> NumpyResult:
    # PyTorch's two-sided formula: exact at both ends (weight 0 gives input, 1 gives end)
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _lerp_vjp(g: Tensor, out: Tensor, a: Tensor, b: Tensor, w: Tensor, needs: Any) -> Any:
    return (
        sum_to(mul(g, sub(1.0, w)), a.shape) if needs[0] else None,
        sum_to(mul(g, w), b.shape) if needs[1] else None,
        sum_to(mul(g, sub(b, a)), w.shape) if needs[2] else None,
    )


def _lerp_jvp(tangents: Any, out: Tensor, a: Tensor, b: Tensor, w: Tensor) -> Tensor:
    ta, tb, tw = tangents
    terms = []
    if ta is not None:
        terms.append(mul(ta, sub(1.0, w)))
    if tb is not None:
        terms.append(mul(tb, w))
    if tw is not None:
        terms.append(mul(tw, sub(b, a)))
    total = terms[0]
    for term in terms[1:]:
        total = add(total, term)
    return total


_LERP = register(
    Op(
        "lerp",
        "input + weight * (end - input): linear interpolation (broadcasting)",
        forward=_lerp_forward,
        vjp=_lerp_vjp,
        jvp=_lerp_jvp,
        backward_name=_overload("Lerp", tensor=1, number=0, position=2),
        # a number weight is all the gradients of input and end need: torch saves no tensor
        saved=lambda node: not P.number_operand(node, 2),
        batch=B.elementwise,
        pattern=R.elementwise,
        params=(Param("input", TENSOR), Param("end", TENSOR), Param("weight", TENSOR)),
        methods=("lerp",),
        symbolic=lambda a, b, w: a + w * (b - a),
    )
)


@public("lerp")
def lerp(a: Any, b: Any, weight: Any) -> Tensor:
    """``a + weight * (b - a)``, element-wise with broadcasting."""
    return apply(_LERP, a, b, weight)


def _finite(x: Array) -> NumpyResult:
    return np.isfinite(x).astype(x.dtype)


def _nan_to_num_symbolic(
    x: Array, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Array:
    return x  # a formula is finite: it is itself


_nan_to_num = _unary(
    "nan_to_num",
    "NanToNumBackward0",
    lambda x, nan, posinf, neginf: np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf),
    lambda x, out, nan, posinf, neginf: mask(_finite, x),
    "nan, inf and -inf replaced by numbers (0 and the largest finite ones by default)",
    params=(
        Param("input", TENSOR),
        Param("nan", NUMBER, 0.0),
        Param("posinf", OPT_NUMBER, None),
        Param("neginf", OPT_NUMBER, None),
    ),
    symbolic=_nan_to_num_symbolic,
    kink="the derivative is 1 at finite elements and 0 at those replaced",
)


@public("nan_to_num")
def nan_to_num(
    x: Any, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    """``x`` with nan, inf and -inf replaced (by 0 and the dtype's largest finite numbers)."""
    return _nan_to_num(x, nan=float(nan), posinf=posinf, neginf=neginf)
