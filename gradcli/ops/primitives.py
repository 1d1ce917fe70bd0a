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

This module holds the factories (``_unary``, ``_binary``) and the primitives every rule is
written with: the arithmetic (add, sub, mul, div, neg, reciprocal), ``where``, ``mask``,
``detach`` and the broadcasting helpers (``sum_to``, ``expand``). The factories' rules apply
them, so they live together. The other primitives are built on them: the elementary functions
(``elementwise/elementary.py``: pow, exp, log, sqrt, the trigonometric functions, clamp, ...),
``arrays/rearranging.py`` (reshape, transpose, getitem, stack, cat), ``reductions/reductions.py``
(sum, mean, prod, amax, amin, logsumexp, norm, softmax), ``linalg/matrix_product.py`` (matmul);
the dims' checks are in ``rules/dims.py``.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..base.engine_errors import DomainError, ShapeError
from ..engine import sizes
from ..engine.bytecode import reads_argument
from ..engine.tensor import Node, Tensor, TensorLike, apply, apply_one, apply_two
from . import batching as B
from . import explaining as X
from . import patterns as R
from . import symbolic as S
from .numerics.summation import sum_like_torch
from .rules.dims import Dim
from .table import (
    BOOL,
    COMPLEX_RULES,
    DIMS,
    HOLOMORPHIC,
    NUMBER,
    OPS,
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
    """Whether the operand at ``position`` was a number (``x ** 2``; a 0-d constant, as a
    number is here), which picks PyTorch's Scalar overload of an operation and so its node's
    name; a 0-d tensor the caller gave (``x ** torch.tensor(2.)``, torch's Tensor overload) is
    one only where the caller did not say so (``name_given``)."""
    assert node.inputs is not None
    operand = node.inputs[position]
    if operand.ndim != 0 or node.needs[position]:
        return False
    return not any(operand is t for t in _GIVEN)


# the 0-d tensors a caller gave as tensors, while ``name_given`` names a node made of them
_GIVEN: list[Tensor] = []


def name_given(node: Node, given: Sequence[Tensor]) -> str:
    """``node``'s name as torch gives it where the 0-d tensors ``given`` were tensors in the
    call that made it, not numbers (``two ** x``: torch's pow(Tensor, Tensor), PowBackward1):
    what a script's call knows and the node, whose numbers are 0-d constants, does not."""
    _GIVEN[:] = given
    try:
        return node.name()
    finally:
        _GIVEN.clear()


class Selected(NamedTuple):
    """A derivative that selects, as torch's rules that mask do (relu, clamp, maximum): the
    cotangent times ``factor`` where ``region`` (a boolean mask) holds, and 0 elsewhere, so
    that an infinite or NaN cotangent outside the region gives 0, not inf * 0. Written with
    ``where``, so that the rule is differentiable again."""

    region: Tensor
    factor: Tensor | float = 1.0


# a derivative as a rule gives it: a tensor, a number (1, -1, 0), or a selection
Factor = Tensor | float | Selected
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
    if type(factor) is Tensor:  # the usual factor, multiplied without mul's call
        return apply_two(value, factor, _MUL)
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


def _reads_operands(rule: Callable[..., Any], count: int) -> bool:
    """Whether a derivative rule reads (the values of) one of its first ``count`` arguments,
    the operands, whatever their names; a rule without code of its own is taken to."""
    code = getattr(rule, "__code__", None)
    if code is None or code.co_argcount < count:
        return True
    return any(reads_argument(rule, name) for name in code.co_varnames[:count])


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
        return (apply_two(g, factor, _MUL) if type(factor) is Tensor else _scale(g, factor),)

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
        "vjp_reads_inputs": _reads_operands(derivative, 1),
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
                ga = apply_two(g, da, _MUL)
            else:
                ga = g if da == 1 else _scale(g, da)
            if ga.data.shape != a.data.shape:
                ga = apply(_SUM_TO, ga, shape=a.data.shape)
        if needs[1]:
            assert db is not None, _MISSING
            if type(db) is Tensor:
                gb = apply_two(g, db, _MUL)
            else:
                gb = g if db == 1 else _scale(g, db)
            if gb.data.shape != b.data.shape:
                gb = apply(_SUM_TO, gb, shape=b.data.shape)
        return ga, gb

    def jvp(tangents: Sequence[Tensor | None], out: Tensor, a: Tensor, b: Tensor) -> Tensor:
        ta, tb = tangents
        da, db = partials(a, b, out, (ta is not None, tb is not None))
        # each term written out, a's first (not a comprehension's frame: forward mode's hot
        # path), a tensor factor multiplied without _scale's call (as _scale multiplies it)
        if ta is not None and tb is not None:
            return add(_scale(ta, _needed(da)), _scale(tb, _needed(db)))
        if ta is not None:
            assert da is not None, _MISSING
            return apply_two(ta, da, _MUL) if type(da) is Tensor else _scale(ta, da)
        assert tb is not None, "forward mode asks for the tangent of a value with one"
        assert db is not None, _MISSING
        return apply_two(tb, db, _MUL) if type(db) is Tensor else _scale(tb, db)

    def op(a: TensorLike, b: TensorLike) -> Tensor:
        return apply_two(a, b, entry)

    fields = {
        "params": _XY,
        "methods": (name,),
        "pattern": R.elementwise,
        "vjp_reads_out": reads_argument(partials, "out"),
        "vjp_reads_inputs": _reads_operands(partials, 2),
        **fields,
    }
    entry = register(
        Op(name, summary, forward, vjp, jvp, backward_name, batch=B.elementwise, call=op, **fields)
    )
    op.__name__ = name
    entry.extra["direct"] = (op, _direct(entry))
    return op


def _direct(entry: Op) -> Callable[[Any, Any], Tensor]:
    """``apply_two(a, b, entry)`` as a function of the operands alone: ``apply_two`` itself (its
    code and globals) with ``entry`` the default of its ``prim``. The special method of an
    operator (``a * b``: ``methods.attach``) where the entry's plain call would be, without
    that call's frame between the operator and ``apply_two``."""
    code, defaults = apply_two.__code__, apply_two.__defaults__ or ()
    direct = types.FunctionType(code, apply_two.__globals__, entry.name, (entry, *defaults))
    direct.__qualname__ = f"Tensor.{entry.name}"
    return direct


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
    # torch.sub(2, x) and two - x too (torch wraps the number as a tensor); 2 - x is rsub's
    # node, which the operator's reflection names (rsub_scaled)
    "SubBackward0",
    np.subtract,
    lambda a, b, out, needs: (1, -1),
    "a - alpha * b",
    operator="-",
    params=(*_XY, Param("alpha", NUMBER, 1)),
    symbolic=lambda a, b, alpha=1: a - alpha * b,
    aliases=("subtract",),
    methods=("sub", "subtract"),
    fold=True,
    nonfinite="overflow, or inf - inf",
    extra={  # numpy refuses it for two booleans (one boolean and a number it takes as 0 or 1)
        "booleans": "Subtraction, the `-` operator, with two bool tensors is not supported. "
        "Use the `^` or `logical_xor()` operator instead."
    },
    complex=HOLOMORPHIC,
    saved=False,
)
rsub = _binary(
    "rsub",
    # torch.rsub(x, y), rsub(x, two); a number's, rsub(x, 2) and 2 - x, is RsubBackward1,
    # named by its call (rsub_scaled): torch's Scalar overload
    "RsubBackward0",
    lambda a, b: np.subtract(b, a),
    lambda a, b, out, needs: (-1, 1),
    "other - alpha * input: sub with its operands swapped (2 - x is rsub(x, 2))",
    params=(*_XY, Param("alpha", NUMBER, 1)),
    symbolic=lambda a, b, alpha=1: b - alpha * a,
    methods=(),
    fold=True,
    nonfinite="overflow, or inf - inf",
    extra={
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
    aliases=("multiply",),
    methods=("mul", "multiply"),
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
    # torch.div(2, x) and two / x too; 2 / x is torch's reciprocal of x times 2, which the
    # operator's reflection computes (reflected_div)
    "DivBackward0",
    np.divide,
    lambda a, b, out, needs: (
        reciprocal(b) if needs[0] else None,
        neg(div(out, b)) if needs[1] else None,
    ),
    "a / b; rounding_mode 'trunc' rounds the quotient toward zero, 'floor' down (derivative 0)",
    operator="/",
    params=(*_XY, Param("rounding_mode", ROUNDING_MODE, None)),
    symbolic=lambda a, b, rounding_mode=None: _rounded(a / b, rounding_mode),
    aliases=("divide", "true_divide"),
    methods=("div", "divide", "true_divide"),
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


@public("rsub")
def rsub_scaled(a: TensorLike, b: TensorLike, alpha: float = 1) -> Tensor:
    """``b - alpha * a`` (torch.rsub; ``2 - x`` is ``rsub(x, 2)``). A number ``b`` is torch's
    Scalar overload, whose node is RsubBackward1 (a 0-d tensor's is RsubBackward0)."""
    out = rsub(a, b) if alpha == 1 else rsub(mul(a, alpha), b)
    if not isinstance(b, Tensor) and out._op is OPS["rsub"] and out.requires_grad:
        out._name = "RsubBackward1"
    return out


def reflected_sub(x: Tensor, number: Any) -> Tensor:
    """``number - x`` (``Tensor.__rsub__``): torch's ``rsub(x, number)``."""
    return rsub_scaled(x, number)


def reflected_div(x: Tensor, number: Any) -> Tensor:
    """``number / x`` (``Tensor.__rtruediv__``): torch's ``x.reciprocal() * number``, its
    two nodes and its bits; of a whole-number or boolean tensor, the quotient."""
    if isinstance(number, Tensor) or x.dtype.kind not in "fc":
        return div(number, x)
    return mul(reciprocal(x), number)


# ``a + b``, ``a - b``, ``a / b``: the entries' own calls, without the public calls' alpha and
# rounding_mode (one call fewer for each operator)
for _entry, _plain in ((OPS["add"], add), (OPS["sub"], sub), (OPS["div"], div)):
    _entry.extra["operator_call"] = _plain
# ``2 - x``, ``2 / x``: torch's reflected methods (rsub; reciprocal and mul)
OPS["sub"].extra["reflected_call"] = reflected_sub
OPS["div"].extra["reflected_call"] = reflected_div
# torch.div(x, y, rounding_mode=None) is div's mode overload, DivBackward2, as a rounding
# mode's: the node of a call that names the option (a script's call reads it)
OPS["div"].extra["node_of_call"] = lambda args, kwargs: (
    "DivBackward2" if len(args) > 2 or "rounding_mode" in kwargs else None
)

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
    return apply_two(a, b, _DIV_ROUNDED, {"rounding_mode": rounding_mode})


neg: Unary = _unary(  # typed here, and below, where a rule above calls it
    "neg",
    "NegBackward0",
    np.negative,
    lambda x, out: -1,
    "-x",
    operator="-x",
    symbolic=S.each(lambda sp, v: -v),
    aliases=("negative",),
    methods=("neg", "negative"),
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
    if len(axes) == extra:  # only the leading dims (a bias's): the sum has the shape itself,
        return sum_like_torch(x, axes)  # an array of its own, which a leaf's .grad can take
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
