"""The primitive table: every differentiable operation, one entry each.

An entry holds the PyTorch name, the numpy forward, the reverse rule (cotangent in, one
cotangent per input out) and the forward rule (input tangents in, output tangent out). Both
rules are written with the functions of this module, never raw numpy on differentiable values,
so a derivative can itself be differentiated (``create_graph=True``, Hessians). Raw numpy only
builds masks, which are constant where they are differentiable at all.

Element-wise operations are declared once by their partial derivatives; the factories turn
those into both rules, so the two can never drift apart. Conventions at kinks follow PyTorch
and are written beside each rule.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import DomainError, IndexDomainError, ShapeError
from .tensor import Tensor, _coerce, apply

Rule = Callable[..., Any]


@dataclass(frozen=True)
class Primitive:
    """One differentiable operation.

    ``vjp(cotangent, out, *inputs, needs, **params)`` returns one cotangent (or None) per
    input; ``needs[i]`` tells whether input ``i`` requires grad, so rules can skip work.
    ``jvp(tangents, out, *inputs, **params)`` returns the output tangent; a missing input
    tangent is None.
    """

    name: str
    forward: Callable[..., np.ndarray]
    vjp: Rule
    jvp: Rule
    backward_name: str | Callable[[Any], str]
    differentiable: bool = True


PRIMITIVES: dict[str, Primitive] = {}


def _register(prim: Primitive) -> Primitive:
    PRIMITIVES[prim.name] = prim
    return prim


def _const(array: np.ndarray) -> Tensor:
    return Tensor(array)


def _scale(value: Tensor, factor) -> Tensor:
    """``value * factor`` where a factor of 1, -1 or 0 costs no multiplication."""
    if isinstance(factor, (int, float)):
        if factor == 1:
            return value
        if factor == -1:
            return neg(value)
        if factor == 0:
            return zeros_like(value)
    return mul(value, factor)


def zeros_like(x: Tensor) -> Tensor:
    return _const(np.zeros(x.shape, dtype=x.dtype))


def _mask_forward(*arrays, fn, axis=None):
    return fn(*arrays) if axis is None else fn(*arrays, axis=axis)


_MASK = _register(
    Primitive(
        "mask",
        _mask_forward,
        lambda g, out, *xs, needs, fn, axis=None: (None,) * len(xs),
        lambda tangents, out, *xs, fn, axis=None: zeros_like(out),
        "NotDifferentiable",
        differentiable=False,
    )
)


def mask(fn, *xs: Tensor, axis=None) -> Tensor:
    """A value without a gradient (relu's x > 0, the ties of a maximum), ``fn(*arrays)``.

    Rules compute every data-dependent constant this way rather than from ``.data``, so a
    traced program (``compile.py``) recomputes it at each new point. ``fn`` is a numpy
    function; a reduction's ``axis`` is passed as a parameter so that batching can shift it.
    """
    params = {"fn": fn} if axis is None else {"fn": fn, "axis": axis}
    return apply(_MASK, *xs, **params)


def _is_zero(x):
    return x == 0


def _positive(x):
    return (x > 0).astype(x.dtype)


def _sign(x):
    return np.sign(x)


def _nonzero(x):
    return x != 0


def _nonzero_count(x):
    return (x != 0).astype(x.dtype)


# -- element-wise operations, declared by their partial derivatives ---------------------------


def _unary(name: str, backward_name: str, forward, derivative) -> Callable[..., Tensor]:
    """Register an element-wise op of one tensor; ``derivative(x, out, **params)``."""

    def vjp(g, out, x, needs, **params):
        return (_scale(g, derivative(x, out, **params)),)

    def jvp(tangents, out, x, **params):
        return _scale(tangents[0], derivative(x, out, **params))

    prim = _register(Primitive(name, forward, vjp, jvp, backward_name))

    def op(x, **params) -> Tensor:
        return apply(prim, x, **params)

    op.__name__ = name
    return op


def _binary(name: str, backward_name, forward, partials) -> Callable[..., Tensor]:
    """Register a broadcasting element-wise op of two tensors.

    ``partials(a, b, out, needs)`` returns (d out/d a, d out/d b); an entry may be None where
    ``needs`` says it is not wanted. Cotangents of broadcast operands are summed back to the
    operand's shape by ``sum_to``.
    """

    def vjp(g, out, a, b, needs):
        da, db = partials(a, b, out, needs)
        return (
            sum_to(_scale(g, da), a.shape) if needs[0] else None,
            sum_to(_scale(g, db), b.shape) if needs[1] else None,
        )

    def jvp(tangents, out, a, b):
        ta, tb = tangents
        da, db = partials(a, b, out, (ta is not None, tb is not None))
        terms = [_scale(t, d) for t, d in ((ta, da), (tb, db)) if t is not None]
        return terms[0] if len(terms) == 1 else add(terms[0], terms[1])

    prim = _register(Primitive(name, forward, vjp, jvp, backward_name))

    def op(a, b) -> Tensor:
        return apply(prim, a, b)

    op.__name__ = name
    return op


def _first_share(a, b):
    """maximum's share of the gradient for a: 1 where a wins, 1/2 on a tie (PyTorch)."""
    return (np.greater(a, b) + 0.5 * (a == b)).astype(np.result_type(a, b))


def _first_share_min(a, b):
    return (np.less(a, b) + 0.5 * (a == b)).astype(np.result_type(a, b))


def _ties_split(a: Tensor, b: Tensor, share_of_first) -> tuple[Tensor, Tensor]:
    """Masks for maximum/minimum: the winner gets 1; on a tie each side gets half (PyTorch)."""
    share = mask(share_of_first, a, b)
    return share, sub(1.0, share)


def _pow_partials(a, b, out, needs):
    da = db = None
    if needs[0]:
        # PyTorch: the base's gradient is 0 where the exponent is 0, even at base 0 (not nan).
        da = where(mask(_is_zero, b), 0.0, mul(b, pow(a, sub(b, 1.0))))
    if needs[1]:
        # PyTorch: the exponent's gradient is 0 where the base is 0 and the exponent >= 0.
        db = where(mask(_zero_base, a, b), 0.0, mul(out, log(a)))
    return da, db


def _zero_base(a, b):
    return (a == 0) & (b >= 0)


def _bce_logits_forward(z, y):
    # max(z, 0) - z*y + log(1 + exp(-|z|)): never exponentiates a large positive number.
    return np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))


def _bce_forward(p, y):
    # PyTorch clamps each log term at -100 so that p = 0 or 1 gives a finite loss.
    with np.errstate(divide="ignore"):
        log_p = np.maximum(np.log(p), -100.0)
        log_q = np.maximum(np.log1p(-p), -100.0)
    return -(y * log_p + (1 - y) * log_q)


def _bce_partials(p, y, out, needs):
    # PyTorch divides by max(p (1 - p), 1e-12) to stay finite at p = 0 and p = 1. The
    # denominator is built with engine ops (not a constant) so that it is differentiated too.
    dp = None
    if needs[0]:
        denom = clamp(mul(p, sub(1.0, p)), min=1e-12)
        dp = div(sub(p, y), denom)
    dy = sub(log1p(neg(p)), log(p)) if needs[1] else None
    return dp, dy


add = _binary("add", "AddBackward0", np.add, lambda a, b, out, needs: (1, 1))
sub = _binary("sub", "SubBackward0", np.subtract, lambda a, b, out, needs: (1, -1))
mul = _binary("mul", "MulBackward0", np.multiply, lambda a, b, out, needs: (b, a))
div = _binary(
    "div",
    "DivBackward0",
    np.divide,
    lambda a, b, out, needs: (
        reciprocal(b) if needs[0] else None,
        neg(div(out, b)) if needs[1] else None,
    ),
)
pow = _binary(  # noqa: A001 - PyTorch's name
    "pow",
    lambda node: "PowBackward1" if node.needs[1] else "PowBackward0",
    np.power,
    _pow_partials,
)
maximum = _binary(
    "maximum",
    "MaximumBackward0",
    np.maximum,
    lambda a, b, out, needs: _ties_split(a, b, _first_share),
)
minimum = _binary(
    "minimum",
    "MinimumBackward0",
    np.minimum,
    lambda a, b, out, needs: _ties_split(a, b, _first_share_min),
)
# Element-wise loss, no reduction; the functions in composites.py apply the reduction.
bce_with_logits_elementwise = _binary(
    "binary_cross_entropy_with_logits",
    "BinaryCrossEntropyWithLogitsBackward0",
    _bce_logits_forward,
    lambda z, y, out, needs: (
        sub(sigmoid(z), y) if needs[0] else None,
        neg(z) if needs[1] else None,
    ),
)
bce_elementwise = _binary(
    "binary_cross_entropy", "BinaryCrossEntropyBackward0", _bce_forward, _bce_partials
)


def _stable_sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


_vector_erf = np.vectorize(math.erf, otypes=[float])


def _erf(x):
    return _vector_erf(x).astype(x.dtype) if x.size else x.copy()


neg = _unary("neg", "NegBackward0", np.negative, lambda x, out: -1)
reciprocal = _unary(
    "reciprocal", "ReciprocalBackward0", np.reciprocal, lambda x, out: neg(mul(out, out))
)
exp = _unary("exp", "ExpBackward0", np.exp, lambda x, out: out)
log = _unary("log", "LogBackward0", np.log, lambda x, out: reciprocal(x))
log1p = _unary("log1p", "Log1PBackward0", np.log1p, lambda x, out: reciprocal(add(x, 1.0)))
expm1 = _unary("expm1", "Expm1Backward0", np.expm1, lambda x, out: add(out, 1.0))
# sqrt'(0) = inf, as in PyTorch.
sqrt = _unary("sqrt", "SqrtBackward0", np.sqrt, lambda x, out: div(0.5, out))
# abs'(0) = 0 (PyTorch uses sign(x)).
abs = _unary("abs", "AbsBackward0", np.abs, lambda x, out: mask(_sign, x))  # noqa: A001
sign = _unary("sign", "SignBackward0", np.sign, lambda x, out: 0)
sin = _unary("sin", "SinBackward0", np.sin, lambda x, out: cos(x))
cos = _unary("cos", "CosBackward0", np.cos, lambda x, out: neg(sin(x)))
tan = _unary("tan", "TanBackward0", np.tan, lambda x, out: add(mul(out, out), 1.0))
asin = _unary(
    "asin", "AsinBackward0", np.arcsin, lambda x, out: reciprocal(sqrt(sub(1.0, mul(x, x))))
)
acos = _unary(
    "acos", "AcosBackward0", np.arccos, lambda x, out: neg(reciprocal(sqrt(sub(1.0, mul(x, x)))))
)
atan = _unary("atan", "AtanBackward0", np.arctan, lambda x, out: reciprocal(add(mul(x, x), 1.0)))
sinh = _unary("sinh", "SinhBackward0", np.sinh, lambda x, out: cosh(x))
cosh = _unary("cosh", "CoshBackward0", np.cosh, lambda x, out: sinh(x))
tanh = _unary("tanh", "TanhBackward0", np.tanh, lambda x, out: sub(1.0, mul(out, out)))
sigmoid = _unary(
    "sigmoid", "SigmoidBackward0", _stable_sigmoid, lambda x, out: mul(out, sub(1.0, out))
)
# relu'(0) = 0, as in PyTorch.
relu = _unary(
    "relu", "ReluBackward0", lambda x: np.maximum(x, 0), lambda x, out: mask(_positive, x)
)
# softplus(x) = log(1 + e^x), computed without overflow; its derivative is sigmoid(x).
softplus = _unary(
    "softplus", "SoftplusBackward0", lambda x: np.logaddexp(0, x), lambda x, out: sigmoid(x)
)
erf = _unary(
    "erf",
    "ErfBackward0",
    _erf,
    lambda x, out: mul(2.0 / math.sqrt(math.pi), exp(neg(mul(x, x)))),
)


def _clamp_forward(x, min=None, max=None):  # noqa: A002 - PyTorch's names
    return np.clip(x, min, max)


def _inside(x, low, high):
    """1 inside [low, high], bounds included, 0 outside: clamp's derivative (PyTorch)."""
    inside = np.ones(x.shape, dtype=bool)
    if low is not None:
        inside &= x >= low
    if high is not None:
        inside &= x <= high
    return inside.astype(x.dtype)


def _clamp_derivative(x, out, min=None, max=None):  # noqa: A002
    return mask(functools.partial(_inside, low=min, high=max), x)


_clamp = _unary("clamp", "ClampBackward1", _clamp_forward, _clamp_derivative)


def clamp(x, min=None, max=None) -> Tensor:  # noqa: A002
    """Limit ``x`` to [min, max]; either bound may be None."""
    if min is None and max is None:
        raise DomainError("clamp: give at least one of min and max")
    return _clamp(x, min=min, max=max)


def _where_vjp(g, out, cond, a, b, needs):
    zero = zeros_like(g)
    return (
        None,
        sum_to(where(cond, g, zero), a.shape) if needs[1] else None,
        sum_to(where(cond, zero, g), b.shape) if needs[2] else None,
    )


def _where_jvp(tangents, out, cond, a, b):
    _, ta, tb = tangents
    zero = zeros_like(out)
    return where(cond, zero if ta is None else ta, zero if tb is None else tb)


_WHERE = _register(
    Primitive("where", lambda c, a, b: np.where(c, a, b), _where_vjp, _where_jvp, "WhereBackward0")
)


def where(condition, a, b) -> Tensor:
    """Element-wise ``a`` where ``condition`` holds, else ``b`` (broadcasting)."""
    if not isinstance(condition, Tensor):
        condition = Tensor(np.asarray(condition, dtype=bool))
    elif condition.dtype != np.bool_:
        condition = mask(_nonzero, condition)
    return apply(_WHERE, condition, a, b)


# -- broadcasting helpers ---------------------------------------------------------------------


def _sum_to_forward(x, shape):
    extra = x.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and x.shape[extra + i] != 1
    )
    return np.sum(x, axis=axes, keepdims=True).reshape(shape) if axes else x.reshape(shape)


_SUM_TO = _register(
    Primitive(
        "sum_to",
        _sum_to_forward,
        lambda g, out, x, needs, shape: (expand(g, x.shape),),
        lambda tangents, out, x, shape: sum_to(tangents[0], shape),
        "SumBackward1",
    )
)
_EXPAND = _register(
    Primitive(
        "expand",
        lambda x, shape: np.broadcast_to(x, shape),
        lambda g, out, x, needs, shape: (sum_to(g, x.shape),),
        lambda tangents, out, x, shape: expand(tangents[0], shape),
        "ExpandBackward0",
    )
)


def sum_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``x`` down to ``shape``: the reverse of broadcasting ``shape`` up to ``x.shape``."""
    return x if x.shape == tuple(shape) else apply(_SUM_TO, x, shape=tuple(shape))


def expand(x, shape) -> Tensor:
    """Broadcast ``x`` to ``shape`` (PyTorch's ``expand``; -1 keeps a dimension)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    shape = tuple(shape)
    if -1 in shape:
        offset = len(shape) - x.ndim
        shape = tuple(x.shape[i - offset] if n == -1 else n for i, n in enumerate(shape))
    return x if x.shape == shape else apply(_EXPAND, x, shape=shape)


# -- reductions -------------------------------------------------------------------------------


def _axes(dim, ndim: int) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise ShapeError(
                f"dimension {d} is out of range for a tensor of {ndim} dimension(s) "
                f"(expected a dim in [{-max(ndim, 1)}, {max(ndim, 1) - 1}])"
            )
    return tuple(sorted({d % ndim for d in dims})) if ndim else ()


def _kept_shape(shape, dim) -> tuple[int, ...]:
    axes = _axes(dim, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _unreduce(g: Tensor, shape, dim, keepdim: bool) -> Tensor:
    """Spread a reduced cotangent back over the reduced dimensions."""
    if not keepdim:
        g = reshape(g, _kept_shape(shape, dim))
    return expand(g, shape)


def _reduction(name, backward_name, forward, vjp, jvp):
    prim = _register(Primitive(name, forward, vjp, jvp, backward_name))

    def op(x, dim=None, keepdim: bool = False) -> Tensor:
        x = x if isinstance(x, Tensor) else Tensor(x)
        axes = _axes(dim, x.ndim)
        return apply(prim, x, dim=axes, keepdim=keepdim)

    op.__name__ = name
    return op


def _weighted_reduction(name, backward_name, forward, weights):
    """A reduction whose derivative with respect to each element is ``weights(x, out, dim,
    keepdim)``: the reverse rule spreads the cotangent times the weights, the forward rule
    reduces the tangent times the weights."""
    return _reduction(
        name,
        backward_name,
        forward,
        lambda g, out, x, needs, dim, keepdim: (
            mul(_unreduce(g, x.shape, dim, keepdim), weights(x, out, dim, keepdim)),
        ),
        lambda tangents, out, x, dim, keepdim: sum(
            mul(tangents[0], weights(x, out, dim, keepdim)), dim, keepdim
        ),
    )


def _count(shape, dim) -> int:
    return int(np.prod([shape[d] for d in dim])) if dim else 1


sum = _reduction(  # noqa: A001
    "sum",
    lambda node: (
        "SumBackward1" if len(node.params["dim"]) < node.inputs[0].ndim else "SumBackward0"
    ),
    lambda x, dim, keepdim: np.sum(x, axis=dim, keepdims=keepdim),
    lambda g, out, x, needs, dim, keepdim: (_unreduce(g, x.shape, dim, keepdim),),
    lambda tangents, out, x, dim, keepdim: sum(tangents[0], dim, keepdim),
)
mean = _reduction(
    "mean",
    lambda node: (
        "MeanBackward1" if len(node.params["dim"]) < node.inputs[0].ndim else "MeanBackward0"
    ),
    lambda x, dim, keepdim: np.mean(x, axis=dim, keepdims=keepdim),
    lambda g, out, x, needs, dim, keepdim: (
        div(_unreduce(g, x.shape, dim, keepdim), float(_count(x.shape, dim))),
    ),
    lambda tangents, out, x, dim, keepdim: mean(tangents[0], dim, keepdim),
)


def _prod_of_others(x: Tensor, out: Tensor, dim, keepdim) -> Tensor:
    """For each element, the product of the other elements of its reduction group.

    Written without dividing by zero: with no zero in a group it is prod / x; with one zero,
    the zero's entry is the product of the rest and the others get 0; with more, all get 0.
    """
    nonzero = where(mask(_is_zero, x), 1.0, x)
    prod_nonzero = expand(prod(nonzero, dim, keepdim=True), x.shape)
    return where(
        mask(_no_zero_in_group, x, axis=dim),
        div(prod_nonzero, nonzero),
        where(mask(_lone_zero, x, axis=dim), prod_nonzero, 0.0),
    )


def _no_zero_in_group(x, axis):
    return np.broadcast_to(np.sum(x == 0, axis=axis, keepdims=True) == 0, x.shape)


def _lone_zero(x, axis):
    return (x == 0) & (np.sum(x == 0, axis=axis, keepdims=True) == 1)


prod = _weighted_reduction(
    "prod",
    lambda node: (
        "ProdBackward1" if len(node.params["dim"]) < node.inputs[0].ndim else "ProdBackward0"
    ),
    lambda x, dim, keepdim: np.prod(x, axis=dim, keepdims=keepdim),
    _prod_of_others,
)


def _extreme_weights(x: Tensor, out: Tensor, dim, keepdim) -> Tensor:
    """amax/amin: ties share the gradient evenly (PyTorch's convention)."""
    kept = out if keepdim else reshape(out, _kept_shape(x.shape, dim))
    return mask(_tie_weights, x, kept, axis=dim)


def _tie_weights(x, kept, axis):
    hit = x == kept
    return (hit / np.sum(hit, axis=axis, keepdims=True)).astype(x.dtype)


amax = _weighted_reduction(
    "amax",
    "AmaxBackward0",
    lambda x, dim, keepdim: np.max(x, axis=dim, keepdims=keepdim),
    _extreme_weights,
)
amin = _weighted_reduction(
    "amin",
    "AminBackward0",
    lambda x, dim, keepdim: np.min(x, axis=dim, keepdims=keepdim),
    _extreme_weights,
)


def _logsumexp_forward(x, dim, keepdim):
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=dim, keepdims=keepdim))
    m = np.max(x, axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


def _logsumexp_weights(x, out, dim, keepdim):
    """softmax of x over ``dim``: the derivative of logsumexp."""
    return exp(sub(x, _unreduce(out, x.shape, dim, keepdim)))


logsumexp = _weighted_reduction(
    "logsumexp",
    "LogsumexpBackward0",
    _logsumexp_forward,
    _logsumexp_weights,
)


def _norm_direction(x: Tensor, out: Tensor, dim, keepdim) -> Tensor:
    """x / ||x||, and 0 where the norm is 0 (PyTorch's subgradient at the origin)."""
    norm = _unreduce(out, x.shape, dim, keepdim)
    zero = mask(_is_zero, norm)
    return where(zero, 0.0, div(x, where(zero, 1.0, norm)))


_norm2 = _weighted_reduction(
    "norm",
    lambda node: (
        "NormBackward1" if len(node.params["dim"]) < node.inputs[0].ndim else "NormBackward0"
    ),
    lambda x, dim, keepdim: np.sqrt(np.sum(x * x, axis=dim, keepdims=keepdim)),
    _norm_direction,
)


def norm(x, p: float = 2, dim=None, keepdim: bool = False) -> Tensor:
    """The p-norm over all elements or ``dim`` (2 by default; 0, 1, inf and other p too).

    p = 0 counts the non-zero elements, as in PyTorch; its gradient is zero.
    """
    if p == 0:
        return sum(mask(_nonzero_count, x), dim, keepdim)
    if p == 2:
        return _norm2(x, dim, keepdim)
    if p == 1:
        return sum(abs(x), dim, keepdim)
    if p == math.inf:
        return amax(abs(x), dim, keepdim)
    return pow(sum(pow(abs(x), float(p)), dim, keepdim), 1.0 / p)


# -- softmax ----------------------------------------------------------------------------------


def _softmax_forward(x, dim):
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax_forward(x, dim):
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def _softmax_rule(v, out, dim):
    # J v = J^T v = out * (v - sum(v * out)): the softmax Jacobian is symmetric.
    return mul(out, sub(v, sum(mul(v, out), dim, keepdim=True)))


def _log_softmax_vjp(g, out, dim):
    return sub(g, mul(exp(out), sum(g, dim, keepdim=True)))


def _log_softmax_jvp(t, out, dim):
    return sub(t, sum(mul(exp(out), t), dim, keepdim=True))


_SOFTMAX = _register(
    Primitive(
        "softmax",
        _softmax_forward,
        lambda g, out, x, needs, dim: (_softmax_rule(g, out, dim),),
        lambda tangents, out, x, dim: _softmax_rule(tangents[0], out, dim),
        "SoftmaxBackward0",
    )
)
_LOG_SOFTMAX = _register(
    Primitive(
        "log_softmax",
        _log_softmax_forward,
        lambda g, out, x, needs, dim: (_log_softmax_vjp(g, out, dim),),
        lambda tangents, out, x, dim: _log_softmax_jvp(tangents[0], out, dim),
        "LogSoftmaxBackward0",
    )
)


def _one_dim(x: Tensor, dim) -> int:
    if dim is None:
        if x.ndim > 1:
            raise ShapeError(f"give dim for a tensor of {x.ndim} dimensions")
        dim = 0
    return _axes(int(dim), x.ndim)[0] if x.ndim else 0


def softmax(x, dim=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (the only dim of a vector when omitted)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return apply(_SOFTMAX, x, dim=_one_dim(x, dim))


def log_softmax(x, dim=None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed stably."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return apply(_LOG_SOFTMAX, x, dim=_one_dim(x, dim))


# -- shapes, indexing, joining ----------------------------------------------------------------

_RESHAPE = _register(
    Primitive(
        "reshape",
        lambda x, shape: np.reshape(x, shape),
        lambda g, out, x, needs, shape: (reshape(g, x.shape),),
        lambda tangents, out, x, shape: reshape(tangents[0], shape),
        "ViewBackward0",
    )
)


def reshape(x, *shape) -> Tensor:
    """The same elements in a new shape (one entry may be -1)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    x = x if isinstance(x, Tensor) else Tensor(x)
    shape = tuple(int(n) for n in shape)
    return x if x.shape == shape else apply(_RESHAPE, x, shape=shape)


_TRANSPOSE = _register(
    Primitive(
        "transpose",
        lambda x, dim0, dim1: np.swapaxes(x, dim0, dim1),
        lambda g, out, x, needs, dim0, dim1: (transpose(g, dim0, dim1),),
        lambda tangents, out, x, dim0, dim1: transpose(tangents[0], dim0, dim1),
        "TransposeBackward0",
    )
)


def transpose(x, dim0: int | None = None, dim1: int | None = None) -> Tensor:
    """Swap two dimensions; with none given, the matrix transpose (a vector is unchanged)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    if dim0 is None and dim1 is None:
        if x.ndim < 2:
            return x
        if x.ndim > 2:
            raise ShapeError(
                f"transpose(x) needs a matrix, got {x.ndim} dimensions: give the two dims to swap"
            )
        dim0, dim1 = 0, 1
    elif dim0 is None or dim1 is None:
        raise DomainError("transpose: give both dims or neither")
    dims = [_axes(int(d), x.ndim) for d in (dim0, dim1)]  # validates the dims
    if x.ndim == 0:  # as in torch, dims 0 and -1 of a 0-d tensor: nothing to swap
        return x
    dim0, dim1 = (d[0] for d in dims)
    return apply(_TRANSPOSE, x, dim0=dim0, dim1=dim1)


def _index_name(node) -> str:
    index = node.params["index"]
    if any(isinstance(i, np.ndarray) for i in index):
        return "IndexBackward0"
    if all(isinstance(i, (int, np.integer)) for i in index) and len(index) == 1:
        return "SelectBackward0"
    return "SliceBackward0"


def _scatter_forward(g, index, shape):
    out = np.zeros(shape, dtype=g.dtype)
    if any(isinstance(i, np.ndarray) for i in index):
        np.add.at(out, index, g)  # repeated indices must add up
    else:
        out[index] = g
    return out


_GETITEM = _register(
    Primitive(
        "getitem",
        lambda x, index: x[index],
        lambda g, out, x, needs, index: (scatter(g, index, x.shape),),
        lambda tangents, out, x, index: getitem(tangents[0], index),
        _index_name,
    )
)
_SCATTER = _register(
    Primitive(
        "scatter",
        _scatter_forward,
        lambda g, out, x, needs, index, shape: (getitem(g, index),),
        lambda tangents, out, x, index, shape: scatter(tangents[0], index, shape),
        "IndexPutBackward0",
    )
)


def _normalize_index(index) -> tuple:
    if not isinstance(index, tuple):
        index = (index,)
    result = []
    for i in index:
        if isinstance(i, Tensor):
            i = i.data
        if isinstance(i, (list, np.ndarray)):
            i = np.asarray(i)
            if i.dtype.kind == "f":
                if not np.all(i == np.round(i)):
                    raise IndexDomainError("tensors used as indices must hold whole numbers")
                i = i.astype(np.int64)
        result.append(i)
    return tuple(result)


def getitem(x, index) -> Tensor:
    """``x[index]`` with integers, slices, None, Ellipsis, integer or boolean arrays."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return apply(_GETITEM, x, index=_normalize_index(index))


def scatter(g, index, shape) -> Tensor:
    """The adjoint of ``getitem``: zeros of ``shape`` with ``g`` added at ``index``."""
    return apply(_SCATTER, g, index=index, shape=tuple(shape))


def _stack_vjp(g, out, *xs, needs, dim):
    lead = (slice(None),) * dim
    return tuple(getitem(g, lead + (i,)) if need else None for i, need in enumerate(needs))


def _joined_tangents(tangents, xs):
    return [zeros_like(x) if t is None else t for t, x in zip(tangents, xs)]


_STACK = _register(
    Primitive(
        "stack",
        lambda *xs, dim: np.stack(xs, axis=dim),
        _stack_vjp,
        lambda tangents, out, *xs, dim: stack(_joined_tangents(tangents, xs), dim),
        "StackBackward0",
    )
)


def _cat_vjp(g, out, *xs, needs, dim):
    cotangents, start = [], 0
    lead = (slice(None),) * dim
    for x, need in zip(xs, needs):
        stop = start + x.shape[dim]
        cotangents.append(getitem(g, lead + (slice(start, stop),)) if need else None)
        start = stop
    return tuple(cotangents)


_CAT = _register(
    Primitive(
        "cat",
        lambda *xs, dim: np.concatenate(xs, axis=dim),
        _cat_vjp,
        lambda tangents, out, *xs, dim: cat(_joined_tangents(tangents, xs), dim),
        "CatBackward0",
    )
)


def _joinable(tensors, what: str) -> list[Tensor]:
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    if not tensors:
        raise ShapeError(f"{what}: expected a non-empty list of tensors")
    return tensors


def stack(tensors, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dimension ``dim``."""
    tensors = _joinable(tensors, "stack")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors must have the same shape, got {sorted(shapes)}")
    dim = _axes(dim, tensors[0].ndim + 1)[0]
    return apply(_STACK, *tensors, dim=dim)


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along the existing dimension ``dim``."""
    tensors = _joinable(tensors, "cat")
    if tensors[0].ndim == 0:
        raise ShapeError("cat: tensors of shape () cannot be concatenated; use stack")
    dim = _axes(dim, tensors[0].ndim)[0]
    return apply(_CAT, *tensors, dim=dim)


# -- matrix product ---------------------------------------------------------------------------


def _matmul_vjp(g, out, a, b, needs):
    # PyTorch's 1-D rules: a vector operand is a matrix with a dimension added, then removed.
    a2 = reshape(a, 1, a.shape[0]) if a.ndim == 1 else a
    b2 = reshape(b, b.shape[0], 1) if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = reshape(g2, g2.shape[:-1] + (1,) + g2.shape[-1:]) if b.ndim > 1 else reshape(g2, 1)
    if b.ndim == 1:
        g2 = reshape(g2, g2.shape + (1,))
    ga = gb = None
    if needs[0]:
        ga = reshape(sum_to(matmul(g2, transpose(b2, -1, -2)), a2.shape), a.shape)
    if needs[1]:
        gb = reshape(sum_to(matmul(transpose(a2, -1, -2), g2), b2.shape), b.shape)
    return ga, gb


def _matmul_jvp(tangents, out, a, b):
    ta, tb = tangents
    terms = []
    if ta is not None:
        terms.append(matmul(ta, b))
    if tb is not None:
        terms.append(matmul(a, tb))
    return terms[0] if len(terms) == 1 else add(terms[0], terms[1])


def _matmul_name(node) -> str:
    a, b = (t.ndim for t in node.inputs)
    return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0"}.get(
        (a, b), "MatmulBackward0"
    )


def _matmul_forward(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(
            f"matmul: both operands need at least one dimension, got shapes {a.shape} and {b.shape}"
        )
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ShapeError(
            f"matmul: shapes {a.shape} and {b.shape} cannot be multiplied ({k_a} != {k_b})"
        )
    return np.matmul(a, b)


_MATMUL = _register(Primitive("matmul", _matmul_forward, _matmul_vjp, _matmul_jvp, _matmul_name))


def matmul(a, b) -> Tensor:
    """Matrix product with PyTorch's rules for 1-D operands and broadcast batch dimensions."""
    return apply(_MATMUL, a, b)


def as_tensor_pair(a, b) -> tuple[Tensor, Tensor]:
    """Both operands as tensors, numbers taking the floating dtype of the other."""
    return _coerce((a, b))
