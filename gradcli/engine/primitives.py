"""The engine's primitives, each declared as one entry of the op table (``ops/table.py``).

An entry holds the PyTorch name, the numpy forward, the reverse rule (cotangent in, one
cotangent per input out) and the forward rule (input tangents in, output tangent out), and
beside them everything else gradcli needs to know of the operation: its signature and summary,
methods and operator, batch rule, symbolic form, explain rule, non-finite reasons. Both
rules are written with the functions of this module, never raw numpy on differentiable values,
so a derivative can itself be differentiated (``create_graph=True``, Hessians). Raw numpy only
builds masks, which are constant where they are differentiable at all.

Element-wise operations are declared once by their partial derivatives; the factories turn
those into both rules, so the two can never drift apart. Conventions at kinks follow PyTorch
and are written beside each rule.
"""

from __future__ import annotations

import builtins
import dis
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..base.engine_errors import DomainError, DtypeError, IndexDomainError, ShapeError
from ..ops import batching as B
from ..ops import explaining as X
from ..ops import patterns as R
from ..ops import symbolic as S
from ..ops.table import (
    BOOL,
    COMPLEX_RULES,
    DIMS,
    ELEMENTS,
    HOLOMORPHIC,
    INT,
    NUMBER,
    OPS,
    OPT_INT,
    OPT_TENSOR,
    REDUCTION,
    SIZES,
    TENSOR,
    TENSORS,
    Array,
    NumpyResult,
    Op,
    Param,
    public,
    register,
)
from . import sizes
from .tensor import Node, Tensor, TensorLike, _coerce, apply, apply_one, apply_two

Forward = Callable[..., Any]  # numpy in; an array, or a numpy scalar, out
BackwardName = str | Callable[[Any], str]  # PyTorch's grad_fn name, or the node -> the name


def number_operand(node: Node, position: int) -> bool:
    """Whether the operand at ``position`` was a number (``1 - x``; a 0-d constant, as a number
    is here), which picks PyTorch's Scalar overload of an operation and so its node's name."""
    assert node.inputs is not None
    return node.inputs[position].ndim == 0 and not node.needs[position]


class Selected(NamedTuple):
    """A derivative that selects, as torch's rules that mask do (relu, clamp, maximum): the
    cotangent times ``factor`` where ``region`` (a boolean mask) holds, and 0 elsewhere, so
    that an infinite or NaN cotangent outside the region gives 0, not inf * 0. Written with
    ``where``, so that the rule is differentiable again."""

    region: Tensor
    factor: Tensor | float = 1.0


# a derivative as a rule gives it: a tensor, a number (1, -1, 0), or a selection
Factor = Tensor | float | Selected
Dim = int | tuple[int, ...] | None  # a dim as a caller gives it: one, several, or all
Unary = Callable[..., Tensor]  # an operation of one tensor (and its options)
Binary = Callable[[TensorLike, TensorLike], Tensor]
Reduction = Callable[..., Tensor]  # (input, dim=None, keepdim=False)

# Signatures shared by several entries
_X = (Param("input", TENSOR),)
_XY = (Param("input", TENSOR), Param("other", TENSOR))
_REDUCE = (Param("input", TENSOR), Param("dim", DIMS, None), Param("keepdim", BOOL, False))


def _const(array: Array) -> Tensor:
    return Tensor(array)


def _scale(value: Tensor, factor: Factor) -> Tensor:
    """``value * factor`` where a factor of 1, -1 or 0 costs no multiplication; a
    ``Selected`` factor keeps ``value`` (times its factor) in its region, 0 outside."""
    if isinstance(factor, Selected):
        return where(factor.region, _scale(value, factor.factor), 0.0)
    if isinstance(factor, (int, float)):
        if factor == 1:
            return value
        if factor == -1:
            return neg(value)
        if factor == 0:
            return zeros_like(value)
    return mul(value, factor)  # a tensor


def zeros_like(x: Tensor) -> Tensor:
    return _const(np.zeros(x.shape, dtype=x.dtype))


def _mask_forward(
    *arrays: Array, fn: Callable[..., Array], axis: Dim = None, count: int | None = None
) -> Array:
    return fn(*arrays) if axis is None else fn(*arrays, axis=axis)


def _mask_size(
    *arrays: Array, fn: Callable[..., Array], axis: Dim = None, count: int | None = None
) -> int:
    return sizes.broadcast_count(arrays) if count is None else count


_MASK = register(
    Op(
        "mask",
        "a value without a gradient, made by a numpy function (relu's x > 0, ties)",
        forward=_mask_forward,
        size=_mask_size,
        vjp=lambda g, out, *xs, needs, fn, axis=None: (None,) * len(xs),
        jvp=lambda tangents, out, *xs, fn, axis=None: zeros_like(out),
        backward_name="NotDifferentiable",
        differentiable=False,
        batch=B.mask,
        complex=COMPLEX_RULES,
    )
)


def mask(
    fn: Callable[..., Array], *xs: TensorLike, axis: Dim = None, count: int | None = None
) -> Tensor:
    """A value without a gradient (relu's x > 0, the ties of a maximum), ``fn(*arrays)``.

    Rules compute every data-dependent constant this way rather than from ``.data``, so a
    traced program (``compile.py``) recomputes it at each new point. ``fn`` is a numpy
    function; a reduction's ``axis`` is passed as a parameter so that batching can shift it.
    ``count`` is the elements ``fn`` makes where it is not the broadcast of its operands
    (the entry's size rule, see ``sizes``).
    """
    params: dict[str, Any] = {"fn": fn} if axis is None else {"fn": fn, "axis": axis}
    if count is not None:
        params["count"] = count
    return apply(_MASK, *xs, **params)


_DETACH = register(
    Op(
        "detach",
        "the same values, cut from the graph: no gradient flows back through it",
        forward=lambda x: x,
        vjp=lambda g, out, x, needs: (None,),
        jvp=lambda tangents, out, x: zeros_like(out),
        backward_name="NotDifferentiable",
        differentiable=False,
        batch=B.elementwise,
        pattern=R.elementwise,
        params=(Param("input", TENSOR),),
        methods=("detach",),
        symbolic="it stops the gradient, which a formula of its input cannot say",
        explain=X.per_element(lambda slot: "0 (detach cuts the gradient)"),
        kink="the derivative is 0 everywhere (the value is treated as a constant), as torch's",
        extra={"cuts_gradient": True},  # check says why finite differences differ
        complex=COMPLEX_RULES,
    )
)


@public("detach")
def detach(x: TensorLike) -> Tensor:
    """``x``'s values as a tensor that does not require grad (PyTorch's ``x.detach()``)."""
    return apply_one(_DETACH, x)


def _is_zero(x: Array) -> NumpyResult:
    return x == 0


def _is_positive(x: Array) -> NumpyResult:
    return x > 0


def _positive(x: Array) -> Array:
    return (x > 0).astype(x.dtype)


def _sign(x: Array) -> Array:
    return np.sign(x)


def _nonzero(x: Array) -> NumpyResult:
    return x != 0


def _nonzero_count(x: Array) -> NumpyResult:
    return (x != 0).astype(x.dtype)


# -- element-wise operations, declared by their partial derivatives ---------------------------


def _unary(
    name: str,
    backward_name: str,
    forward: Forward,
    derivative: Callable[..., Factor],
    summary: str,
    **fields: Any,
) -> Unary:
    """Register an element-wise op of one tensor; ``derivative(x, out, **params)``.

    By default it is a function and a method of the same name, of one tensor, and batches
    element-wise; ``fields`` set the entry's other fields (see ``ops.table.Op``).
    """

    def vjp(
        g: Tensor, out: Tensor, x: Tensor, needs: tuple[bool, ...], **params: Any
    ) -> tuple[Tensor]:
        # (most have no parameters: then no merge of an empty dict into the call, here and
        # in op)
        factor = derivative(x, out, **params) if params else derivative(x, out)
        # a tensor factor (nearly always) multiplies by mul's entry itself, without _scale's
        # tests and two calls fewer than mul()
        return (apply_two(_MUL, g, factor) if type(factor) is Tensor else _scale(g, factor),)

    def jvp(tangents: Sequence[Tensor], out: Tensor, x: Tensor, **params: Any) -> Tensor:
        return _scale(tangents[0], derivative(x, out, **params))

    def op(x: TensorLike, **params: Any) -> Tensor:
        return apply_one(entry, x, params)

    fields = {
        "params": _X,
        "methods": (name,),
        "pattern": R.elementwise,
        "vjp_reads_out": reads_argument(derivative, "out"),
        **fields,
    }
    entry = register(
        Op(name, summary, forward, vjp, jvp, backward_name, batch=B.elementwise, call=op, **fields)
    )
    op.__name__ = name
    return op


def reads_argument(function: Callable[..., Any], name: str) -> bool:
    """Whether ``function``'s code reads its argument ``name`` (or a function it defines
    does): the factories tell the engine which rules never read ``out``, so that the reverse
    pass makes no tensor of it. A function without code of its own is taken to read it.

    It runs for every element-wise entry as gradcli starts, so it reads the bytecode's
    (operation, argument) pairs itself rather than through ``dis.get_instructions`` (a tenth
    of the time). Any access to the local ``name`` counts, and so does a pair of locals that
    may pack it (Python 3.13's LOAD_FAST_LOAD_FAST): a rule taken to read ``out`` only gets a
    tensor it may not need."""
    code = getattr(function, "__code__", None)
    if code is None or name in code.co_cellvars:
        return True
    if name not in code.co_varnames:
        return False
    index = code.co_varnames.index(name)
    raw = code.co_code
    extended = 0  # the high bits EXTENDED_ARG gives the next operation's argument
    for operation, byte in zip(raw[::2], raw[1::2]):
        if operation == _EXTENDED_ARG:
            extended = (extended | byte) << 8
            continue
        argument, extended = extended | byte, 0
        if operation in _LOCAL_ACCESS and argument == index:
            return True
        if operation in _PACKED_LOCALS and index in (argument >> 4, argument & 15):
            return True
    return False


_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
# the operations on a local variable, by the variable's index; and those on two, packed
_LOCAL_ACCESS = frozenset(dis.haslocal)
_PACKED_LOCALS = frozenset(
    dis.opmap[name]
    for name in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST")
    if name in dis.opmap
)


# partials(a, b, out, needs): (d out/d a, d out/d b), None where needs says it is not wanted
Partials = Callable[[Tensor, Tensor, Tensor, tuple[bool, ...]], tuple[Factor | None, Factor | None]]


_MISSING = "a partial derivative that was needed is missing"


def _needed(partial: Factor | None) -> Factor:
    """A partial derivative that ``needs`` asked for (a rule gives None only where not)."""
    assert partial is not None, _MISSING
    return partial


def _binary(
    name: str,
    backward_name: BackwardName,
    forward: Forward,
    partials: Partials,
    summary: str,
    **fields: Any,
) -> Binary:
    """Register a broadcasting element-wise op of two tensors.

    ``partials(a, b, out, needs)`` returns (d out/d a, d out/d b); an entry may be None where
    ``needs`` says it is not wanted. Cotangents of broadcast operands are summed back to the
    operand's shape by ``sum_to``. By default it is a function and a method of two tensors.
    """

    def vjp(
        g: Tensor, out: Tensor, a: Tensor, b: Tensor, needs: tuple[bool, ...]
    ) -> tuple[Tensor | None, Tensor | None]:
        da, db = partials(a, b, out, needs)
        # written out for the hot path (not _needed, sum_to, nor _scale for a tensor factor or
        # a factor of 1): a tensor factor multiplies, a cotangent times 1 is itself, and a
        # cotangent of the operand's shape is not summed
        ga = gb = None
        if needs[0]:
            assert da is not None, _MISSING
            if type(da) is Tensor:
                ga = apply_two(_MUL, g, da)
            else:
                ga = g if da == 1 else _scale(g, da)
            if ga.data.shape != a.data.shape:
                ga = apply(_SUM_TO, ga, shape=a.data.shape)
        if needs[1]:
            assert db is not None, _MISSING
            if type(db) is Tensor:
                gb = apply_two(_MUL, g, db)
            else:
                gb = g if db == 1 else _scale(g, db)
            if gb.data.shape != b.data.shape:
                gb = apply(_SUM_TO, gb, shape=b.data.shape)
        return ga, gb

    def jvp(tangents: Sequence[Tensor | None], out: Tensor, a: Tensor, b: Tensor) -> Tensor:
        ta, tb = tangents
        da, db = partials(a, b, out, (ta is not None, tb is not None))
        terms = [_scale(t, _needed(d)) for t, d in ((ta, da), (tb, db)) if t is not None]
        return terms[0] if len(terms) == 1 else add(terms[0], terms[1])

    def op(a: TensorLike, b: TensorLike) -> Tensor:
        return apply_two(entry, a, b)

    fields = {
        "params": _XY,
        "methods": (name,),
        "pattern": R.elementwise,
        "vjp_reads_out": reads_argument(partials, "out"),
        **fields,
    }
    entry = register(
        Op(name, summary, forward, vjp, jvp, backward_name, batch=B.elementwise, call=op, **fields)
    )
    op.__name__ = name
    return op


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
    if needs[0]:
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


def _zero_base(a: Array, b: Array) -> NumpyResult:
    return (a == 0) & (b >= 0)


def _bce_logits_forward(z: Array, y: Array) -> NumpyResult:
    # max(z, 0) - z*y + log(1 + exp(-|z|)): never exponentiates a large positive number.
    return np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))


def _bce_forward(p: Array, y: Array) -> NumpyResult:
    # PyTorch clamps each log term at -100 so that p = 0 or 1 gives a finite loss.
    with np.errstate(divide="ignore"):
        log_p = np.maximum(np.log(p), -100.0)
        log_q = np.maximum(np.log1p(-p), -100.0)
    return -(y * log_p + (1 - y) * log_q)


def _bce_partials(
    p: Tensor, y: Tensor, out: Tensor, needs: tuple[bool, ...]
) -> tuple[Tensor | None, Tensor | None]:
    # PyTorch divides by max(p (1 - p), 1e-12) to stay finite at p = 0 and p = 1. The
    # denominator is built with engine ops (not a constant) so that it is differentiated too.
    dp = None
    if needs[0]:
        denom = clamp(mul(p, sub(1.0, p)), min=1e-12)
        dp = div(sub(p, y), denom)
    dy = sub(log1p(neg(p)), log(p)) if needs[1] else None
    return dp, dy


add = _binary(
    "add",
    "AddBackward0",
    np.add,
    lambda a, b, out, needs: (1, 1),
    "a + b",
    operator="+",
    symbolic=lambda a, b: a + b,
    fold=True,
    nonfinite="inf - inf",
    complex=HOLOMORPHIC,
)
sub = _binary(
    "sub",
    # 1 - x is PyTorch's rsub of x and a Scalar
    lambda node: "RsubBackward1" if number_operand(node, 0) else "SubBackward0",
    np.subtract,
    lambda a, b, out, needs: (1, -1),
    "a - b",
    operator="-",
    symbolic=lambda a, b: a - b,
    fold=True,
    nonfinite="inf - inf",
    extra={  # numpy refuses it for two booleans (one boolean and a number it takes as 0 or 1)
        "booleans": "Subtraction, the `-` operator, with two bool tensors is not supported. "
        "Use the `^` or `logical_xor()` operator instead."
    },
    complex=HOLOMORPHIC,
)
mul = _binary(
    "mul",
    "MulBackward0",
    np.multiply,
    lambda a, b, out, needs: (b, a),
    "a * b (element-wise)",
    operator="*",
    symbolic=lambda a, b: a * b,
    fold=True,
    nonfinite="0 * inf",
    nonfinite_backward="0 * inf",
    complex=HOLOMORPHIC,
)
# mul's entry, which the reverse rules apply directly to multiply a cotangent by a factor
_MUL = OPS["mul"]
div: Binary = _binary(  # typed here: its own rule calls it
    "div",
    # 2 / x is PyTorch's reciprocal of x times 2
    lambda node: "MulBackward0" if number_operand(node, 0) else "DivBackward0",
    np.divide,
    lambda a, b, out, needs: (
        reciprocal(b) if needs[0] else None,
        neg(div(out, b)) if needs[1] else None,
    ),
    "a / b",
    operator="/",
    symbolic=lambda a, b: a / b,
    fold=True,
    nonfinite="division by zero",
    nonfinite_backward="division by zero in the derivative",
    complex=HOLOMORPHIC,
)
pow = _binary(  # noqa: A001 - PyTorch's name
    "pow",
    lambda node: (  # the overloads pow(Tensor, Scalar), pow(Tensor, Tensor), pow(Scalar, Tensor)
        "PowBackward0"
        if number_operand(node, 1)
        else "PowBackward2"
        if number_operand(node, 0)
        else "PowBackward1"
    ),
    np.power,
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
_LOSS = (Param("input", TENSOR), Param("target", TENSOR), Param("reduction", REDUCTION, "mean"))
# the losses whose third positional argument is torch's weight (its next ones, size_average and
# reduce, are deprecated and not in gradcli: the rest are named)
WEIGHT_THIRD = {"positional": ("input", "target", "weight")}
# the losses whose third positional argument is torch's deprecated size_average, which reads
# mse_loss(a, b, "sum") as size_average="sum" (the mean): what follows target is named
TWO_POSITIONAL = {"positional": ("input", "target")}
# Element-wise losses; their calls (in composites.py) check the operands and apply the
# reduction.
bce_with_logits_elementwise = _binary(
    "binary_cross_entropy_with_logits",
    "BinaryCrossEntropyWithLogitsBackward0",
    _bce_logits_forward,
    lambda z, y, out, needs: (
        sub(sigmoid(z), y) if needs[0] else None,
        neg(z) if needs[1] else None,
    ),
    "sigmoid + binary cross-entropy, stable (alias bce_with_logits)",
    params=(*_LOSS, Param("weight", OPT_TENSOR, None), Param("pos_weight", OPT_TENSOR, None)),
    methods=(),
    aliases=("bce_with_logits",),
    symbolic=S.bce_with_logits,
    explain=X.loss(X.bce_with_logits),
    kink="weight scales each term, pos_weight the target's (positive) term, as PyTorch's "
    "(1 - y) x + (1 + (pos_weight - 1) y) softplus(-x); neither gets a gradient (PyTorch "
    "refuses to differentiate them)",
    extra=WEIGHT_THIRD,
)
bce_elementwise = _binary(
    "binary_cross_entropy",
    "BinaryCrossEntropyBackward0",
    _bce_forward,
    _bce_partials,
    "binary cross-entropy of probabilities (alias bce)",
    params=(*_LOSS, Param("weight", OPT_TENSOR, None)),
    methods=(),
    aliases=("bce",),
    symbolic="its logarithms are clamped at -100, which sympy does not write",
    explain=X.loss(X.bce),
    kink="each log term is clamped at -100 and the derivative's denominator at 1e-12; weight "
    "scales each term and gets no gradient (PyTorch refuses to differentiate it)",
    extra=WEIGHT_THIRD,
)


def _stable_sigmoid(x: Array) -> Array:
    if x.dtype.kind == "c":  # no overflow to avoid by the sign of a complex number
        return 1 / (1 + np.exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


_vector_erf = np.vectorize(math.erf, otypes=[float])


def _erf(x: Array) -> NumpyResult:
    return _vector_erf(x).astype(x.dtype) if x.size else x.copy()


neg: Unary = _unary(  # typed here, and below, where a rule above calls it
    "neg",
    "NegBackward0",
    np.negative,
    lambda x, out: -1,
    "-x",
    operator="-x",
    symbolic=S.each(lambda sp, v: -v),
    fold=True,
    extra={
        "booleans": "Negation, the `-` operator, on a bool tensor is not supported. If you are "
        "trying to invert a mask, use the `~` or `logical_not()` operator instead."
    },
    complex=HOLOMORPHIC,
)
reciprocal: Unary = _unary(
    "reciprocal",
    "ReciprocalBackward0",
    np.reciprocal,
    lambda x, out: neg(mul(out, out)),
    "1 / x",
    symbolic=S.each(lambda sp, v: 1 / v),
    nonfinite="division by zero",
    nonfinite_backward="division by zero in the derivative",
    complex=HOLOMORPHIC,
)
exp = _unary(
    "exp",
    "ExpBackward0",
    np.exp,
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
    np.log,
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
    np.log1p,
    lambda x, out: reciprocal(add(x, 1.0)),
    "log(1 + x), accurate near 0",
    symbolic=S.each(lambda sp, v: sp.log(1 + v)),
    nonfinite="log1p of a number <= -1",
    nonfinite_backward="the derivative of log1p at -1 is infinite",
)
expm1 = _unary(
    "expm1",
    "Expm1Backward0",
    np.expm1,
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
    methods=("abs", "__abs__"),  # abs(x) on a tensor
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
)
sin = _unary(
    "sin",
    "SinBackward0",
    np.sin,
    lambda x, out: cos(x),
    "sine",
    symbolic=S.each("sin"),
    complex=HOLOMORPHIC,
)
cos: Unary = _unary(
    "cos",
    "CosBackward0",
    np.cos,
    lambda x, out: neg(sin(x)),
    "cosine",
    symbolic=S.each("cos"),
    complex=HOLOMORPHIC,
)
tan = _unary(
    "tan",
    "TanBackward0",
    np.tan,
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
    nonfinite="acos of a number outside [-1, 1]",
    nonfinite_backward="the derivative of acos at +-1 is infinite",
)
atan = _unary(
    "atan",
    "AtanBackward0",
    np.arctan,
    lambda x, out: reciprocal(add(mul(x, x), 1.0)),
    "arctangent",
    symbolic=S.each("atan"),
)
sinh = _unary(
    "sinh",
    "SinhBackward0",
    np.sinh,
    lambda x, out: cosh(x),
    "hyperbolic sine",
    symbolic=S.each("sinh"),
    nonfinite="overflow",
)
cosh: Unary = _unary(
    "cosh",
    "CoshBackward0",
    np.cosh,
    lambda x, out: sinh(x),
    "hyperbolic cosine",
    symbolic=S.each("cosh"),
    nonfinite="overflow",
)
tanh = _unary(
    "tanh",
    "TanhBackward0",
    np.tanh,
    lambda x, out: sub(1.0, mul(out, out)),
    "hyperbolic tangent",
    symbolic=S.each("tanh"),
    complex=HOLOMORPHIC,
)
sigmoid: Unary = _unary(
    "sigmoid",
    "SigmoidBackward0",
    _stable_sigmoid,
    lambda x, out: mul(out, sub(1.0, out)),
    "1 / (1 + exp(-x))",
    symbolic=S.each(lambda sp, v: 1 / (1 + sp.exp(-v))),
    complex=HOLOMORPHIC,
)
relu = _unary(
    "relu",
    "ReluBackward0",
    lambda x: np.maximum(x, 0),
    lambda x, out: Selected(mask(_is_positive, x)),
    "max(x, 0) (derivative 0 at 0)",
    formula=S.relu,
    symbolic=S.PIECEWISE,
    kink="the derivative at 0 is 0",
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


def _where_vjp(
    g: Tensor, out: Tensor, cond: Tensor, a: Tensor, b: Tensor, needs: tuple[bool, ...]
) -> tuple[None, Tensor | None, Tensor | None]:
    zero = zeros_like(g)
    return (
        None,
        sum_to(where(cond, g, zero), a.shape) if needs[1] else None,
        sum_to(where(cond, zero, g), b.shape) if needs[2] else None,
    )


def _where_jvp(
    tangents: Sequence[Tensor | None], out: Tensor, cond: Tensor, a: Tensor, b: Tensor
) -> Tensor:
    _, ta, tb = tangents
    zero = zeros_like(out)
    return where(cond, zero if ta is None else ta, zero if tb is None else tb)


_WHERE = register(
    Op(
        "where",
        "input where condition is non-zero, else other",
        forward=lambda c, a, b: np.where(c, a, b),
        vjp=_where_vjp,
        jvp=_where_jvp,
        backward_name="WhereBackward0",
        batch=B.elementwise,
        pattern=R.elementwise,
        params=(Param("condition", TENSOR), Param("input", TENSOR), Param("other", TENSOR)),
        formula=S.where,
        symbolic=S.PIECEWISE,
        kink="the gradient goes to the branch chosen; the condition has none",
        complex=HOLOMORPHIC,
    )
)


@public("where")
def where(condition: TensorLike, a: TensorLike, b: TensorLike) -> Tensor:
    """Element-wise ``a`` where ``condition`` holds, else ``b`` (broadcasting)."""
    if not isinstance(condition, Tensor):
        condition = Tensor(np.asarray(condition, dtype=bool))
    elif condition.dtype != np.bool_:
        condition = mask(_nonzero, condition)
    return apply(_WHERE, condition, a, b)


# -- broadcasting helpers ---------------------------------------------------------------------


def _sum_to_forward(x: Array, shape: tuple[int, ...]) -> Array:
    extra = x.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and x.shape[extra + i] != 1
    )
    return np.sum(x, axis=axes, keepdims=True).reshape(shape) if axes else x.reshape(shape)


_SUM_TO = register(
    Op(
        "sum_to",
        "sum down to a shape: the reverse of broadcasting",
        forward=_sum_to_forward,
        vjp=lambda g, out, x, needs, shape: (expand(g, x.shape),),
        jvp=lambda tangents, out, x, shape: sum_to(tangents[0], shape),
        backward_name="SumBackward1",
        batch=B.sum_to,
        pattern=R.summed_to,
        complex=HOLOMORPHIC,
    )
)
_EXPAND = register(
    Op(
        "expand",
        "broadcast to a shape (-1 keeps a dimension)",
        forward=lambda x, shape: np.broadcast_to(x, shape),
        size=lambda x, shape: 0,  # a view: what is made of it is charged where it is made
        vjp=lambda g, out, x, needs, shape: (sum_to(g, x.shape),),
        jvp=lambda tangents, out, x, shape: expand(tangents[0], shape),
        backward_name="ExpandBackward0",
        batch=B.expand,
        pattern=R.moved,
        params=(Param("input", TENSOR), Param("sizes", SIZES)),
        methods=("expand",),
        symbolic=lambda x, *sizes: np.broadcast_to(x, expanded_shape(x.shape, sizes)).copy(),
        explain=X.jacobian(lambda slot: f"1 where the element is a copy of that of {slot.wrt}"),
        kink="-1 keeps a size; the gradient sums over the copies (ExpandBackward0)",
        complex=HOLOMORPHIC,
    )
)


def sum_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``x`` down to ``shape``: the reverse of broadcasting ``shape`` up to ``x.shape``."""
    if type(shape) is not tuple:
        shape = tuple(shape)
    return x if x.data.shape == shape else apply(_SUM_TO, x, shape=shape)


@public("expand")
def expand(x: TensorLike, *sizes: Any, shape: Sequence[int] | None = None) -> Tensor:
    """Broadcast ``x`` to ``shape`` (PyTorch's ``expand``; -1 keeps a dimension), given as
    sizes (``x.expand(2, 3)``), one tuple, or ``shape=``."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    if shape is None:
        shape = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    shape = expanded_shape(x.shape, tuple(int(n) for n in shape))
    return x if x.shape == shape else apply(_EXPAND, x, shape=shape)


def expanded_shape(shape: tuple[int, ...], sizes: Sequence[int]) -> tuple[int, ...]:
    """The shape ``x.expand(*sizes)`` makes of a tensor of ``shape``, checked as torch does:
    -1 keeps a size, a size of 1 becomes any size, new dims come first."""
    sizes = tuple(sizes)
    offset = len(sizes) - len(shape)
    if offset < 0:
        raise ShapeError(
            f"expand: the number of sizes ({len(sizes)}) must be at least the number of "
            f"dims of the tensor ({len(shape)}), shape {shape}"
        )
    out = []
    for i, n in enumerate(sizes):
        if i < offset:
            if n < 0:
                raise ShapeError(
                    f"expand: the size {n} is not allowed in a new leading dim ({i}); "
                    f"sizes {list(sizes)}"
                )
            out.append(n)
            continue
        old = shape[i - offset]
        if n == -1 or n == old:
            out.append(old)
        elif old == 1 and n >= 0:
            out.append(n)
        else:
            raise ShapeError(
                f"expand: the size {n} must match the existing size {old} at dim {i} (a "
                f"dim of size 1 may take any size); sizes {list(sizes)}, tensor shape {shape}"
            )
    return tuple(out)


# -- reductions -------------------------------------------------------------------------------


def _axes(dim: Dim, ndim: int) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise ShapeError(
                f"dimension {d} is out of range for a tensor of {ndim} dimension(s) "
                f"(expected a dim in [{-max(ndim, 1)}, {max(ndim, 1) - 1}])"
            )
    if not ndim:
        return ()
    axes = [d % ndim for d in dims]
    for d in set(axes):
        if axes.count(d) > 1:
            raise ShapeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(sorted(axes))


def _kept_shape(shape: tuple[int, ...], dim: Dim) -> tuple[int, ...]:
    axes = _axes(dim, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _unreduce(g: Tensor, shape: tuple[int, ...], dim: Dim, keepdim: bool) -> Tensor:
    """Spread a reduced cotangent back over the reduced dimensions."""
    if not keepdim:
        g = reshape(g, _kept_shape(shape, dim))
    return expand(g, shape)


def _reduction(
    name: str,
    backward_name: BackwardName,
    forward: Forward,
    vjp: Callable[..., Any],
    jvp: Callable[..., Any],
    summary: str,
    **fields: Any,
) -> Reduction:
    """Register a reduction over all dimensions or ``dim`` (an int or a tuple), ``keepdim``
    as in PyTorch; by default a function and a method with the signature of ``sum``."""

    def op(x: TensorLike, dim: Dim = None, keepdim: bool = False) -> Tensor:
        x = x if isinstance(x, Tensor) else Tensor(x)
        axes = _axes(dim, x.ndim)
        return apply(entry, x, dim=axes, keepdim=keepdim)

    fields = {"params": _REDUCE, "methods": (name,), "pattern": R.reduction, **fields}
    entry = register(
        Op(name, summary, forward, vjp, jvp, backward_name, batch=B.reduction, call=op, **fields)
    )
    op.__name__ = name
    return op


# weights(x, out, dim, keepdim): d out / d x, element by element; dim is a tuple of axes
Weights = Callable[[Tensor, Tensor, tuple[int, ...], bool], Tensor]


def _weighted_reduction(
    name: str,
    backward_name: BackwardName,
    forward: Forward,
    weights: Weights,
    summary: str,
    **fields: Any,
) -> Reduction:
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
        summary,
        **fields,
    )


def _reduced_size(x: Array, dim: tuple[int, ...], keepdim: bool) -> int:
    """The elements of a reduction's result (its size rule)."""
    return math.prod(n for i, n in enumerate(x.shape) if i not in dim)


def _count(shape: tuple[int, ...], dim: tuple[int, ...]) -> int:
    return int(np.prod([shape[d] for d in dim])) if dim else 1


sum: Reduction = _reduction(  # noqa: A001 - typed here: its own rule calls it
    "sum",
    lambda node: (
        "SumBackward1" if len(node.params["dim"]) < node.inputs[0].ndim else "SumBackward0"
    ),
    lambda x, dim, keepdim: np.sum(x, axis=dim, keepdims=keepdim),
    lambda g, out, x, needs, dim, keepdim: (_unreduce(g, x.shape, dim, keepdim),),
    lambda tangents, out, x, dim, keepdim: sum(tangents[0], dim, keepdim),
    "sum of all elements, or along dim",
    symbolic=S.reduce(np.sum),
    size=_reduced_size,  # numpy sums a broadcast view without making it
    extra={"glyph": "∑"},
    explain=X.per_element(lambda slot: "1"),
    complex=HOLOMORPHIC,
)


# torch's names of the integer and boolean dtypes, in its messages
_TORCH_DTYPE_NAMES = {
    np.dtype(np.bool_): "Bool",
    np.dtype(np.int64): "Long",
    np.dtype(np.int32): "Int",
    np.dtype(np.int16): "Short",
    np.dtype(np.int8): "Char",
    np.dtype(np.uint8): "Byte",
}


def _mean_forward(x: Array, dim: tuple[int, ...], keepdim: bool) -> NumpyResult:
    if x.dtype in _TORCH_DTYPE_NAMES:
        raise DtypeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_TORCH_DTYPE_NAMES[x.dtype]}"
        )
    # The mean of no elements is nan (0 / 0), as in PyTorch, without numpy's warning.
    with np.errstate(invalid="ignore"):
        return np.sum(x, axis=dim, keepdims=keepdim) / _count(x.shape, dim)


mean: Reduction = _reduction(  # typed here: its own rule calls it
    "mean",
    lambda node: (
        "MeanBackward1" if len(node.params["dim"]) < node.inputs[0].ndim else "MeanBackward0"
    ),
    lambda x, dim, keepdim: _mean_forward(x, dim, keepdim),
    lambda g, out, x, needs, dim, keepdim: (
        div(_unreduce(g, x.shape, dim, keepdim), float(_count(x.shape, dim))),
    ),
    lambda tangents, out, x, dim, keepdim: mean(tangents[0], dim, keepdim),
    "mean of all elements, or along dim",
    symbolic=S.mean,
    size=_reduced_size,
    explain=X.per_element(X.mean),
    complex=HOLOMORPHIC,
)


def _prod_of_others(x: Tensor, out: Tensor, dim: tuple[int, ...], keepdim: bool) -> Tensor:
    """For each element, the product of the other elements of its reduction group.

    Written without dividing by zero: with no zero in a group it is prod / x; with one zero,
    the zero's entry is the product of the rest and the others get 0 (NaN where another
    element is infinite or NaN: torch's products of the elements before and after, one of
    which holds the zero, are then inf * 0); with more, all get 0.
    """
    nonzero = where(mask(_is_zero, x), 1.0, x)
    prod_nonzero = expand(prod(nonzero, dim, keepdim=True), x.shape)
    return where(
        mask(_no_zero_in_group, x, axis=dim),
        div(prod_nonzero, nonzero),
        where(
            mask(_lone_zero, x, axis=dim),
            prod_nonzero,
            where(mask(_zero_times_nonfinite, x, axis=dim), math.nan, 0.0),
        ),
    )


def _zero_times_nonfinite(x: Array, axis: tuple[int, ...]) -> NumpyResult:
    """In a group with one zero, the other elements whose others hold an infinity or NaN."""
    nonfinite = ~np.isfinite(x)
    others = np.sum(nonfinite, axis=axis, keepdims=True) - nonfinite
    return (x != 0) & (np.sum(x == 0, axis=axis, keepdims=True) == 1) & (others > 0)


def _no_zero_in_group(x: Array, axis: tuple[int, ...]) -> Array:
    return np.broadcast_to(np.sum(x == 0, axis=axis, keepdims=True) == 0, x.shape)


def _lone_zero(x: Array, axis: tuple[int, ...]) -> NumpyResult:
    return (x == 0) & (np.sum(x == 0, axis=axis, keepdims=True) == 1)


prod = _weighted_reduction(
    "prod",
    lambda node: (
        "ProdBackward1" if len(node.params["dim"]) < node.inputs[0].ndim else "ProdBackward0"
    ),
    lambda x, dim, keepdim: np.prod(x, axis=dim, keepdims=keepdim),
    _prod_of_others,
    "product of all elements, or along dim",
    symbolic=S.reduce(np.prod),
    extra={"glyph": "∏"},
    params=(Param("input", TENSOR), Param("dim", OPT_INT, None), Param("keepdim", BOOL, False)),
    # torch.prod takes one dim, not a tuple
    explain=X.per_element(
        lambda s: f"{s.node}/{s.wrt}[i] (the product of the other elements{X.along(s)})"
    ),
    kink="the derivative is the product of the others, also where elements are 0",
)


def _extreme_weights(x: Tensor, out: Tensor, dim: tuple[int, ...], keepdim: bool) -> Tensor:
    """amax/amin: ties share the gradient evenly (PyTorch's convention)."""
    kept = out if keepdim else reshape(out, _kept_shape(x.shape, dim))
    return mask(_tie_weights, x, kept, axis=dim)


def _tie_weights(x: Array, kept: Array, axis: tuple[int, ...]) -> NumpyResult:
    hit = x == kept
    return (hit / np.sum(hit, axis=axis, keepdims=True)).astype(x.dtype)


def _extreme(reduce: Callable[..., Any], name: str) -> Forward:
    """np.max or np.min over ``dim``; a zero-size reduced dimension has no extreme (PyTorch
    raises), so it is a ShapeError rather than numpy's ValueError."""

    def forward(x: Array, dim: tuple[int, ...], keepdim: bool) -> Any:  # a numpy scalar for all
        empty = [d for d in dim if x.shape[d] == 0]
        if empty or (x.size == 0 and x.ndim == 0):
            raise ShapeError(
                f"{name}: dimension {empty[0]} of shape {x.shape} has size 0, "
                "and the empty set has no extreme value"
            )
        return reduce(x, axis=dim, keepdims=keepdim)

    return forward


amax = _weighted_reduction(
    "amax",
    "AmaxBackward0",
    _extreme(np.max, "amax"),
    _extreme_weights,
    "largest element (ties share the gradient)",
    symbolic=S.PIECEWISE,
    explain=X.per_element(
        lambda s: f"1/k where {s.wrt}[i] is the largest{X.along(s)} (k of them), else 0"
    ),
    kink="ties share the gradient evenly",
)
amin = _weighted_reduction(
    "amin",
    "AminBackward0",
    _extreme(np.min, "amin"),
    _extreme_weights,
    "smallest element (ties share the gradient)",
    symbolic=S.PIECEWISE,
    explain=X.per_element(
        lambda s: f"1/k where {s.wrt}[i] is the smallest{X.along(s)} (k of them), else 0"
    ),
    kink="ties share the gradient evenly",
)


def _logsumexp_forward(x: Array, dim: tuple[int, ...], keepdim: bool) -> NumpyResult:
    if x.size == 0:  # log(0) = -inf over an empty dimension, as in PyTorch
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(x), axis=dim, keepdims=keepdim))
    m = np.max(x, axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


def _logsumexp_weights(x: Tensor, out: Tensor, dim: tuple[int, ...], keepdim: bool) -> Tensor:
    """softmax of x over ``dim``: the derivative of logsumexp."""
    return exp(sub(x, _unreduce(out, x.shape, dim, keepdim)))


logsumexp = _weighted_reduction(
    "logsumexp",
    "LogsumexpBackward0",
    _logsumexp_forward,
    _logsumexp_weights,
    "log(sum(exp(x))), computed stably",
    symbolic=S.logsumexp,
    explain=X.per_element(
        lambda s: f"exp({s.wrt}[i] - {s.node}) = softmax({s.wrt})[i]{X.along(s)}"
    ),
)


def _norm_direction(x: Tensor, out: Tensor, dim: tuple[int, ...], keepdim: bool) -> Tensor:
    """x / ||x||, and 0 where the norm is 0 (PyTorch's subgradient at the origin)."""
    norm = _unreduce(out, x.shape, dim, keepdim)
    zero = mask(_is_zero, norm)
    return where(zero, 0.0, div(x, where(zero, 1.0, norm)))


_norm2 = _weighted_reduction(
    "norm",
    "LinalgVectorNormBackward0",  # torch.norm is torch.linalg.vector_norm for every p it has
    lambda x, dim, keepdim: np.sqrt(np.sum(x * x, axis=dim, keepdims=keepdim)),
    _norm_direction,
    "p-norm (2 by default)",
    symbolic=S.norm,
    explain=X.per_element(X.norm),
    params=(
        Param("input", TENSOR),
        Param("p", NUMBER, 2),
        Param("dim", DIMS, None),
        Param("keepdim", BOOL, False),
    ),
    kink="the gradient at a zero norm is 0",
)


@public("norm")
def norm(x: TensorLike, p: float = 2, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """The p-norm over all elements or ``dim`` (2 by default; 0, 1, inf and other p too).

    p = 0 counts the non-zero elements, as in PyTorch; its gradient is zero. -inf is the
    smallest magnitude (ties share its gradient, as amin's).
    """
    if p == 0:
        return sum(mask(_nonzero_count, x), dim, keepdim)
    if p == 2:
        return _norm2(x, dim, keepdim)
    if p == 1:
        return sum(abs(x), dim, keepdim)
    if p == math.inf:
        return amax(abs(x), dim, keepdim)
    if p == -math.inf:
        return amin(abs(x), dim, keepdim)
    if p < 0:
        return pow(sum(pow(abs(x), float(p)), dim, keepdim), 1.0 / p)
    return _p_norm(x, float(p), dim, keepdim)


def _p_norm(x: TensorLike, p: float, dim: Dim, keepdim: bool) -> Tensor:
    """(sum |x|^p)^(1/p) for p > 0, with PyTorch's gradient: 0 at a zero element (its
    subgradient) and 0 for a group whose norm is 0, at every order. The masked branches see
    1 in place of 0, so that no derivative of theirs is 0 * inf."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    zero = mask(_is_zero, x)
    powered = where(zero, 0.0, pow(abs(where(zero, 1.0, x)), p))
    total = sum(powered, dim, keepdim)
    empty = mask(_is_zero, total)
    return where(empty, 0.0, pow(where(empty, 1.0, total), 1.0 / p))


# -- softmax ----------------------------------------------------------------------------------


def _softmax_forward(x: Array, dim: int) -> NumpyResult:
    if x.size == 0:  # nothing to normalize: an empty result of the same shape (PyTorch)
        return x.copy()
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax_forward(x: Array, dim: int) -> NumpyResult:
    if x.size == 0:
        return x.copy()
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def _softmax_rule(v: Tensor, out: Tensor, dim: int) -> Tensor:
    # J v = J^T v = out * (v - sum(v * out)): the softmax Jacobian is symmetric.
    return mul(out, sub(v, sum(mul(v, out), dim, keepdim=True)))


def _log_softmax_vjp(g: Tensor, out: Tensor, dim: int) -> Tensor:
    return sub(g, mul(exp(out), sum(g, dim, keepdim=True)))


def _log_softmax_jvp(t: Tensor, out: Tensor, dim: int) -> Tensor:
    return sub(t, sum(mul(exp(out), t), dim, keepdim=True))


_ALONG = (Param("input", TENSOR), Param("dim", OPT_INT, None))
_SOFTMAX = register(
    Op(
        "softmax",
        "softmax along dim (the only dim of a vector by default)",
        forward=_softmax_forward,
        vjp=lambda g, out, x, needs, dim: (_softmax_rule(g, out, dim),),
        jvp=lambda tangents, out, x, dim: _softmax_rule(tangents[0], out, dim),
        backward_name="SoftmaxBackward0",
        batch=B.along_dim,
        pattern=R.along_dim,
        params=_ALONG,
        methods=("softmax",),
        symbolic=S.softmax,
        explain=X.blocks(log=False),
    )
)
_LOG_SOFTMAX = register(
    Op(
        "log_softmax",
        "log softmax along dim (the only dim of a vector by default)",
        forward=_log_softmax_forward,
        vjp=lambda g, out, x, needs, dim: (_log_softmax_vjp(g, out, dim),),
        jvp=lambda tangents, out, x, dim: _log_softmax_jvp(tangents[0], out, dim),
        backward_name="LogSoftmaxBackward0",
        batch=B.along_dim,
        pattern=R.along_dim,
        params=_ALONG,
        methods=("log_softmax",),
        symbolic=S.log_softmax,
        explain=X.blocks(log=True),
    )
)


def _one_dim(x: Tensor, dim: int | None) -> int:
    if dim is None:
        if x.ndim > 1:
            raise ShapeError(f"give dim for a tensor of {x.ndim} dimensions")
        dim = 0
    return _axes(int(dim), x.ndim)[0] if x.ndim else 0


@public("softmax")
def softmax(x: TensorLike, dim: int | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (the only dim of a vector when omitted)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return apply(_SOFTMAX, x, dim=_one_dim(x, dim))


@public("log_softmax")
def log_softmax(x: TensorLike, dim: int | None = None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed stably."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return apply(_LOG_SOFTMAX, x, dim=_one_dim(x, dim))


# -- shapes, indexing, joining ----------------------------------------------------------------

_RESHAPE = register(
    Op(
        "reshape",
        "same elements, new shape (one size may be -1)",
        forward=lambda x, shape: np.reshape(x, shape),
        vjp=lambda g, out, x, needs, shape: (reshape(g, x.shape),),
        jvp=lambda tangents, out, x, shape: reshape(tangents[0], shape),
        backward_name="ViewBackward0",
        batch=B.reshape,
        pattern=R.moved,
        params=(Param("input", TENSOR), Param("shape", SIZES)),
        methods=("reshape", "view"),
        explain=X.MOVED,
        symbolic=lambda x, *shape: x.reshape(shape),
        complex=HOLOMORPHIC,
    )
)


@public("reshape")
def reshape(x: TensorLike, *shape: Any) -> Tensor:
    """The same elements in a new shape (one entry may be -1)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    x = x if isinstance(x, Tensor) else Tensor(x)
    shape = tuple(int(n) for n in shape)
    return x if x.shape == shape else apply(_RESHAPE, x, shape=shape)


_TRANSPOSE = register(
    Op(
        "transpose",
        "matrix transpose, or swap dim0 and dim1",
        forward=lambda x, dim0, dim1: np.swapaxes(x, dim0, dim1),
        vjp=lambda g, out, x, needs, dim0, dim1: (transpose(g, dim0, dim1),),
        jvp=lambda tangents, out, x, dim0, dim1: transpose(tangents[0], dim0, dim1),
        backward_name="TransposeBackward0",
        batch=B.transpose,
        pattern=R.moved,
        params=(Param("input", TENSOR), Param("dim0", OPT_INT, None), Param("dim1", OPT_INT, None)),
        methods=("transpose", "t"),
        explain=X.MOVED,
        extra={"property": "T"},
        symbolic=lambda x, d0=None, d1=None: x.T if d0 is None else np.swapaxes(x, d0, d1),
        complex=HOLOMORPHIC,
    )
)


@public("transpose")
def transpose(x: TensorLike, dim0: int | None = None, dim1: int | None = None) -> Tensor:
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


def _index_name(node: Any) -> str:
    """torch's node for basic indexing is that of the last step it takes, item by item: an
    integer selects, None unsqueezes, a slice slices unless it keeps the whole axis as it is
    (start 0, stop at or past the end, step 1); with no step at all, the result is an alias.
    A slice alone (``x[:]``, not in a tuple, which the index cannot tell apart from ``x[:,]``)
    always slices."""
    index = node.params["index"]
    if any(isinstance(i, np.ndarray) for i in index):
        return "IndexBackward0"
    if len(index) == 1 and isinstance(index[0], slice):
        return "SliceBackward0"
    shape = node.inputs[0].shape
    consumed = len([i for i in index if i is not None and i is not Ellipsis])
    name, axis = "AliasBackward0", 0
    for i in index:
        if i is Ellipsis:
            axis += len(shape) - consumed
        elif i is None:
            name = "UnsqueezeBackward0"
        elif isinstance(i, slice):
            whole = i.start in (None, 0) and i.step in (None, 1)
            if not (whole and (i.stop is None or i.stop >= shape[axis])):
                name = "SliceBackward0"
            axis += 1
        else:
            name, axis = "SelectBackward0", axis + 1
    return name


def _scatter_forward(g: Array, index: tuple[Any, ...], shape: tuple[int, ...]) -> Array:
    out = np.zeros(shape, dtype=g.dtype)
    if any(isinstance(i, np.ndarray) for i in index):
        np.add.at(out, index, g)  # repeated indices must add up
    else:
        out[index] = g
    return out


_GETITEM = register(
    Op(
        "getitem",
        "x[index]: integers, slices, None, Ellipsis, integer or boolean arrays",
        forward=lambda x, index: x[index],
        size=lambda x, index: sizes.indexed_count(x.shape, index),
        vjp=lambda g, out, x, needs, index: (getitem_backward(g, index, x.shape),),
        jvp=lambda tangents, out, x, index: getitem(tangents[0], index),
        backward_name=_index_name,
        batch=B.getitem,
        pattern=R.moved,
        operator="[]",
        explain=X.PICKED,
        complex=HOLOMORPHIC,
    )
)
_GETITEM_BACKWARD = register(
    Op(
        "getitem_backward",
        "the adjoint of getitem: zeros with values added at an index",
        forward=_scatter_forward,
        vjp=lambda g, out, x, needs, index, shape: (getitem(g, index),),
        jvp=lambda tangents, out, x, index, shape: getitem_backward(tangents[0], index, shape),
        backward_name="IndexPutBackward0",
        batch=B.getitem_backward,
        complex=HOLOMORPHIC,
    )
)


def _normalize_index(index: Any) -> tuple[Any, ...]:
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


@public("getitem")
def getitem(x: TensorLike, index: Any) -> Tensor:
    """``x[index]`` with integers, slices, None, Ellipsis, integer or boolean arrays."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return apply(_GETITEM, x, index=_normalize_index(index))


def getitem_backward(g: Tensor, index: tuple[Any, ...], shape: Sequence[int]) -> Tensor:
    """The adjoint of ``getitem``: zeros of ``shape`` with ``g`` added at ``index``."""
    return apply(_GETITEM_BACKWARD, g, index=index, shape=tuple(shape))


def _stack_vjp(
    g: Tensor, out: Tensor, *xs: Tensor, needs: tuple[bool, ...], dim: int
) -> tuple[Tensor | None, ...]:
    lead = (slice(None),) * dim
    return tuple(getitem(g, lead + (i,)) if need else None for i, need in enumerate(needs))


def _joined_tangents(tangents: Sequence[Tensor | None], xs: Sequence[Tensor]) -> list[Tensor]:
    return [zeros_like(x) if t is None else t for t, x in zip(tangents, xs)]


def _joined_size(*xs: Array, dim: int) -> int:
    return builtins.sum(x.size for x in xs)


_JOIN = (Param("tensors", TENSORS), Param("dim", INT, 0))
_STACK = register(
    Op(
        "stack",
        "join along a new dimension: stack([a, b])",
        forward=lambda *xs, dim: np.stack(xs, axis=dim),
        vjp=_stack_vjp,
        jvp=lambda tangents, out, *xs, dim: stack(_joined_tangents(tangents, xs), dim),
        backward_name="StackBackward0",
        batch=B.join(np.stack),
        pattern=R.moved,
        params=_JOIN,
        operator=ELEMENTS,  # the vector y of elements y0, y1, ... is stack([y0, y1, ...])
        symbolic=lambda xs, dim=0: np.stack(xs, axis=dim),
        explain=X.COPIED,
        size=_joined_size,
        complex=HOLOMORPHIC,
    )
)


def _cat_vjp(
    g: Tensor, out: Tensor, *xs: Tensor, needs: tuple[bool, ...], dim: int
) -> tuple[Tensor | None, ...]:
    cotangents: list[Tensor | None] = []
    start = 0
    lead = (slice(None),) * dim
    for x, need in zip(xs, needs):
        stop = start + x.shape[dim]
        cotangents.append(getitem(g, lead + (slice(start, stop),)) if need else None)
        start = stop
    return tuple(cotangents)


_CAT = register(
    Op(
        "cat",
        "join along an existing dimension: cat([a, b])",
        forward=lambda *xs, dim: np.concatenate(xs, axis=dim),
        vjp=_cat_vjp,
        jvp=lambda tangents, out, *xs, dim: cat(_joined_tangents(tangents, xs), dim),
        backward_name="CatBackward0",
        batch=B.join(np.concatenate),
        pattern=R.moved,
        params=_JOIN,
        symbolic=lambda xs, dim=0: np.concatenate(xs, axis=dim),
        explain=X.COPIED,
        size=_joined_size,
        complex=HOLOMORPHIC,
    )
)


def _joinable(tensors: Sequence[TensorLike], what: str) -> list[Tensor]:
    made = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    if not made:
        raise ShapeError(f"{what}: expected a non-empty list of tensors")
    return made


@public("stack")
def stack(tensors: Sequence[TensorLike], dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dimension ``dim``."""
    tensors = _joinable(tensors, "stack")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors must have the same shape, got {sorted(shapes)}")
    dim = _axes(dim, tensors[0].ndim + 1)[0]
    return apply(_STACK, *tensors, dim=dim)


@public("cat")
def cat(tensors: Sequence[TensorLike], dim: int = 0) -> Tensor:
    """Join tensors along the existing dimension ``dim``."""
    tensors = _joinable(tensors, "cat")
    if tensors[0].ndim == 0:
        raise ShapeError("cat: tensors of shape () cannot be concatenated; use stack")
    dim = _axes(dim, tensors[0].ndim)[0]
    return apply(_CAT, *tensors, dim=dim)


# -- matrix product ---------------------------------------------------------------------------


def _matmul_vjp(
    g: Tensor, out: Tensor, a: Tensor, b: Tensor, needs: tuple[bool, ...]
) -> tuple[Tensor | None, Tensor | None]:
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


def _matmul_jvp(tangents: Sequence[Tensor | None], out: Tensor, a: Tensor, b: Tensor) -> Tensor:
    ta, tb = tangents
    terms = []
    if ta is not None:
        terms.append(matmul(ta, b))
    if tb is not None:
        terms.append(matmul(a, tb))
    return terms[0] if len(terms) == 1 else add(terms[0], terms[1])


def _matmul_name(node: Any) -> str:
    a, b = (t.ndim for t in node.inputs)
    return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0"}.get(
        (a, b), "MatmulBackward0"
    )


def _matmul_forward(a: Array, b: Array) -> NumpyResult:
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


def _matmul_size(a: Array, b: Array) -> int:
    if not a.ndim or not b.ndim:  # refused by the forward
        return 0
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return 0
    return (
        math.prod(batch) * (a.shape[-2] if a.ndim > 1 else 1) * (b.shape[-1] if b.ndim > 1 else 1)
    )


_MATMUL = register(
    Op(
        "matmul",
        "a @ b, with PyTorch's rules for vectors",
        forward=_matmul_forward,
        vjp=_matmul_vjp,
        jvp=_matmul_jvp,
        backward_name=_matmul_name,
        batch=B.matmul,
        pattern=R.matmul,
        params=_XY,
        methods=("matmul",),
        operator="@",
        symbolic=S.matmul,
        explain=X.matmul,
        size=_matmul_size,
        complex=HOLOMORPHIC,
    )
)


@public("matmul")
def matmul(a: TensorLike, b: TensorLike) -> Tensor:
    """Matrix product with PyTorch's rules for 1-D operands and broadcast batch dimensions."""
    return apply(_MATMUL, a, b)


def as_tensor_pair(a: TensorLike, b: TensorLike) -> tuple[Tensor, Tensor]:
    """Both operands as tensors, numbers taking the floating dtype of the other."""
    first, second = _coerce((a, b))
    return first, second
