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

This module holds the element-wise primitives, their factories (``_unary``, ``_binary``), the
broadcasting helpers (``sum_to``, ``expand``) and the dims' checks; the other primitives are
built on them: ``rearranging.py`` (reshape, transpose, getitem, stack, cat), ``reductions.py``
(sum, mean, prod, amax, amin, logsumexp, norm, softmax), ``matrix_product.py`` (matmul).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..base.engine_errors import DomainError, ShapeError
from ..engine import sizes
from ..engine.bytecode import reads_argument
from ..engine.tensor import Node, Tensor, TensorLike, _coerce, apply, apply_one, apply_two
from . import batching as B
from . import explaining as X
from . import patterns as R
from . import symbolic as S
from .numerics import vector_math
from .numerics.single_precision import power, rounded_once
from .numerics.summation import sum_like_torch
from .table import (
    BOOL,
    COMPLEX_RULES,
    DIMS,
    HOLOMORPHIC,
    NUMBER,
    OPS,
    OPT_TENSOR,
    REDUCTION,
    ROUNDING_MODE,
    ROUNDING_MODES,
    SIZES,
    TENSOR,
    Array,
    NumpyResult,
    Op,
    Param,
    public,
    register,
)

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

    def plain(x: TensorLike) -> Tensor:  # an entry of one tensor and no options (sin)
        return apply_one(entry, x)

    fields = {
        "params": _X,
        "methods": (name,),
        "pattern": R.elementwise,
        "vjp_reads_out": reads_argument(derivative, "out"),
        **fields,
    }
    # without options, a call makes no dict of them (**params) for apply_one and the node
    call = plain if fields["params"] is _X else op
    batch = B.elementwise
    entry = register(
        Op(name, summary, forward, vjp, jvp, backward_name, batch=batch, call=call, **fields)
    )
    call.__name__ = name
    return call


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
    "a + alpha * b",
    operator="+",
    params=(*_XY, Param("alpha", NUMBER, 1)),
    symbolic=lambda a, b, alpha=1: a + alpha * b,
    fold=True,
    nonfinite="overflow, or inf - inf",
    complex=HOLOMORPHIC,
    saved=False,
)
sub = _binary(
    "sub",
    # 1 - x is PyTorch's rsub of x and a Scalar
    lambda node: "RsubBackward1" if number_operand(node, 0) else "SubBackward0",
    np.subtract,
    lambda a, b, out, needs: (1, -1),
    "a - alpha * b",
    operator="-",
    params=(*_XY, Param("alpha", NUMBER, 1)),
    symbolic=lambda a, b, alpha=1: a - alpha * b,
    fold=True,
    nonfinite="overflow, or inf - inf",
    extra={  # numpy refuses it for two booleans (one boolean and a number it takes as 0 or 1)
        "booleans": "Subtraction, the `-` operator, with two bool tensors is not supported. "
        "Use the `^` or `logical_xor()` operator instead."
    },
    complex=HOLOMORPHIC,
    saved=False,
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
    nonfinite="overflow, or 0 * inf",
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
    "a / b; rounding_mode 'trunc' rounds the quotient toward zero, 'floor' down (derivative 0)",
    operator="/",
    params=(*_XY, Param("rounding_mode", ROUNDING_MODE, None)),
    symbolic=lambda a, b, rounding_mode=None: _rounded(a / b, rounding_mode),
    fold=True,
    nonfinite="division by zero",
    nonfinite_backward="division by zero in the derivative",
    complex=HOLOMORPHIC,
)


def _rounded(quotients: Any, rounding_mode: str | None) -> Any:
    """The formulas of div's quotients; a rounded quotient has none (as floor has none)."""
    if rounding_mode is not None:
        raise S.NotSymbolic(
            "div with a rounding_mode has no symbolic form here: it rounds, and sympy does "
            "not differentiate rounding"
        )
    return quotients


def _rounded_quotient(a: Array, b: Array, rounding_mode: str) -> NumpyResult:
    """torch's div with a rounding mode: 'floor' as Python's // (numpy's floor_divide, which
    corrects a quotient rounded up to a whole number), 'trunc' the quotient toward zero, of
    integers exactly."""
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    if np.result_type(a, b).kind in "iub":
        down = np.floor_divide(a, b)
        return down + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
    return np.trunc(np.divide(a, b))


def _zero_partials(operands: Sequence[Tensor], needs: Sequence[bool]) -> tuple[Tensor | None, ...]:
    return tuple(zeros_like(t) if need else None for t, need in zip(operands, needs))


_DIV_ROUNDED = register(
    Op(
        "div_rounded",
        "a / b rounded toward zero ('trunc') or down ('floor'): div with a rounding_mode",
        forward=_rounded_quotient,
        vjp=lambda g, out, a, b, needs, rounding_mode: _zero_partials((a, b), needs),
        jvp=lambda tangents, out, a, b, rounding_mode: zeros_like(out),
        backward_name="DivBackward2",
        batch=B.elementwise,
        pattern=R.elementwise,
        kink="the quotient jumps where it is whole; torch's derivative is 0 everywhere",
    )
)


@public("add")
def add_scaled(a: TensorLike, b: TensorLike, alpha: float = 1) -> Tensor:
    """``a + alpha * b`` (torch.add; ``a + b`` where alpha is 1)."""
    return add(a, b) if alpha == 1 else add(a, mul(b, alpha))


@public("sub")
def sub_scaled(a: TensorLike, b: TensorLike, alpha: float = 1) -> Tensor:
    """``a - alpha * b`` (torch.sub; ``a - b`` where alpha is 1)."""
    return sub(a, b) if alpha == 1 else sub(a, mul(b, alpha))


# ``a + b``, ``a - b``, ``a / b``: the entries' own calls, without the public calls' alpha and
# rounding_mode (one call fewer for each operator)
for _entry, _plain in ((OPS["add"], add), (OPS["sub"], sub), (OPS["div"], div)):
    _entry.extra["operator_call"] = _plain

# What torch's node saves for its reverse rule, as slots of the operands, given which need a
# gradient and which are numbers (read by torch.autograd.graph's saved-tensor hooks and the
# version checks, engine/graph_hooks.py); None: the general rule
OPS["mul"].extra["saved_slots"] = lambda needs, number: [
    *([1] if needs[0] else []),
    *([0] if needs[1] else []),
]
OPS["div"].extra["saved_slots"] = lambda needs, number: [
    *([1] if needs[0] or needs[1] else []),
    *([0] if needs[1] else []),
]


@public("div")
def divide(a: TensorLike, b: TensorLike, rounding_mode: str | None = None) -> Tensor:
    """``a / b`` (torch.div); ``rounding_mode`` 'trunc' rounds the quotient toward zero,
    'floor' down, as torch's, whose derivative is then 0."""
    if rounding_mode is None:
        return div(a, b)
    if rounding_mode not in ROUNDING_MODES:
        raise DomainError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
    return apply_two(_DIV_ROUNDED, a, b, {"rounding_mode": rounding_mode})


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
OPS["pow"].extra["saved_slots"] = lambda needs, number: [0] if number[1] else None
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
    saved=False,
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
    rounded_once(np.arctan),
    lambda x, out: reciprocal(add(mul(x, x), 1.0)),
    "arctangent",
    symbolic=S.each("atan"),
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
    if not axes:
        return x.reshape(shape)
    return sum_like_torch(x, axes, True).reshape(shape)  # torch's order of adding


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
        saved=False,
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
        extra={"view": True},  # x.expand(x.shape) is a node of its own (see naming)
        saved=False,
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


# -- dims and operands ------------------------------------------------------------------------


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


def as_tensor_pair(a: TensorLike, b: TensorLike) -> tuple[Tensor, Tensor]:
    """Both operands as tensors, numbers taking the floating dtype of the other."""
    first, second = _coerce((a, b))
    return first, second
