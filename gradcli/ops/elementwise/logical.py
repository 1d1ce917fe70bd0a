"""Comparisons, logical operations and masks: the operations whose results are booleans.

``x > 0``, ``logical_and(a, b)``, ``a & b``, ``isnan(x)``, ``isclose(a, b)``, ``any(m)``
make tensors of dtype bool that carry no gradient, as in PyTorch: a comparison records no
node (``requires_grad`` is False, ``grad_fn`` None) whatever its operands require. They are
primitives that are not differentiable, so a traced program replays them at each new point,
as it does the masks of the rules. ``masked_fill`` sends the gradient to the branch chosen;
``heaviside`` has no derivative in PyTorch, and differentiating through it is an error.

As sympy formulas, a boolean is its indicator: ``Piecewise((1, x > 0), (0, True))``, so
``x * (x > 0)`` differentiates to the indicator itself, 0 everywhere it multiplies nothing,
which is PyTorch's derivative of a comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DtypeError, ShapeError
from ...engine.tensor import Tensor, TensorLike, apply
from .. import batching as B
from .. import explaining as X
from .. import patterns as R
from .. import primitives as P
from ..rules.dims import Dim, _axes
from ..symbolic import Formula
from ..table import (
    BOOL,
    NUMBER,
    OPT_INT,
    TENSOR,
    Array,
    NumpyResult,
    Op,
    Param,
    made_public,
    public,
    register,
)
from .pointwise import _no_derivative

_X = (Param("input", TENSOR),)
_XY = (Param("input", TENSOR), Param("other", TENSOR))
_REDUCE = (Param("input", TENSOR), Param("dim", OPT_INT, None), Param("keepdim", BOOL, False))
_NO_GRADIENT = "the result is a boolean, which carries no gradient (as in PyTorch)"


def _none(g: Tensor, out: Tensor, *xs: Tensor, needs: tuple[bool, ...], **params: Any) -> Any:
    return (None,) * len(xs)


def _zero(tangents: Sequence[Tensor | None], out: Tensor, *xs: Tensor, **params: Any) -> Tensor:
    return P.zeros_like(out)


# -- the symbolic rules: a boolean is its indicator, 1 where the condition holds, else 0 ------

Condition = Callable[..., Formula]  # (sympy, *elements, *options) -> a sympy condition


def _indicator(condition: Condition) -> Callable[..., Array]:
    """An element-wise rule of formulas: ``Piecewise((1, condition), (0, True))``."""

    def rule(*args: Any) -> Array:
        import sympy

        arrays = [a for a in args if isinstance(a, np.ndarray)]
        options = args[len(arrays) :]

        def element(*values: Formula) -> Formula:
            return sympy.Piecewise((1, condition(sympy, *values, *options)), (0, True))

        return np.asarray(np.frompyfunc(element, len(arrays), 1)(*arrays), dtype=object)

    return rule


def _true(sp: Any, v: Formula) -> Formula:
    """A value as a condition: non-zero (an indicator is 1 or 0, a number any value)."""
    return sp.Ne(v, 0)


def _formula(condition: Condition) -> Callable[..., Formula]:
    """One element's formula (for explain), the same indicator."""
    return lambda sp, *values: sp.Piecewise((1, condition(sp, *values)), (0, True))


# -- comparisons ------------------------------------------------------------------------------


def _boolean(
    name: str,
    forward: Callable[..., NumpyResult],
    summary: str,
    condition: Condition | None,
    **fields: Any,
) -> Op:
    """Register a primitive whose result is boolean: no gradient, replayed element-wise."""
    if condition is not None:
        fields = {"symbolic": _indicator(condition), "formula": _formula(condition), **fields}
    fields = {"params": _XY, "methods": (name,), "batch": B.elementwise, **fields}
    return register(
        Op(
            name,
            summary,
            forward=forward,
            vjp=_none,
            jvp=_zero,
            backward_name="NotDifferentiable",
            differentiable=False,
            kink=_NO_GRADIENT,
            **fields,
        )
    )


def _comparison(
    name: str,
    forward: Callable[..., NumpyResult],
    symbol: str,
    condition: Condition,
    alias: str | None = None,
) -> Callable[[TensorLike, TensorLike], Tensor]:
    """A comparison's entry; ``alias`` is torch's other name of it (``greater`` for gt)."""
    summary = f"input {symbol} other, element-wise (a boolean)"
    names = () if alias is None else (alias,)
    entry = _boolean(name, forward, summary, condition, aliases=names, methods=(name, *names))

    def op(a: TensorLike, b: TensorLike) -> Tensor:
        return apply(entry, a, b)

    op.__name__ = name
    entry.operator = symbol
    entry.call = op
    return op


eq = _comparison("eq", np.equal, "==", lambda sp, a, b: sp.Eq(a, b))
ne = _comparison("ne", np.not_equal, "!=", lambda sp, a, b: sp.Ne(a, b), "not_equal")
lt = _comparison("lt", np.less, "<", lambda sp, a, b: sp.Lt(a, b), "less")
le = _comparison("le", np.less_equal, "<=", lambda sp, a, b: sp.Le(a, b), "less_equal")
gt = _comparison("gt", np.greater, ">", lambda sp, a, b: sp.Gt(a, b), "greater")
ge = _comparison("ge", np.greater_equal, ">=", lambda sp, a, b: sp.Ge(a, b), "greater_equal")


# -- logical operations: any dtype, non-zero is true ------------------------------------------


def _and(sp: Any, a: Formula, b: Formula) -> Formula:
    return sp.And(_true(sp, a), _true(sp, b))


def _or(sp: Any, a: Formula, b: Formula) -> Formula:
    return sp.Or(_true(sp, a), _true(sp, b))


def _xor(sp: Any, a: Formula, b: Formula) -> Formula:
    return sp.Xor(_true(sp, a), _true(sp, b))


def _not(sp: Any, a: Formula) -> Formula:
    return sp.Eq(a, 0)


_LOGICAL_AND = _boolean(
    "logical_and", np.logical_and, "a and b, element-wise: non-zero is true", _and
)
_LOGICAL_OR = _boolean("logical_or", np.logical_or, "a or b, element-wise: non-zero is true", _or)
_LOGICAL_XOR = _boolean(
    "logical_xor", np.logical_xor, "a or b but not both, element-wise: non-zero is true", _xor
)
_LOGICAL_NOT = _boolean(
    "logical_not", np.logical_not, "not a, element-wise: zero is true", _not, params=_X
)


@public("logical_and")
def logical_and(a: TensorLike, b: TensorLike) -> Tensor:
    """True where both are non-zero (torch.logical_and)."""
    return apply(_LOGICAL_AND, a, b)


@public("logical_or")
def logical_or(a: TensorLike, b: TensorLike) -> Tensor:
    """True where either is non-zero (torch.logical_or)."""
    return apply(_LOGICAL_OR, a, b)


@public("logical_xor")
def logical_xor(a: TensorLike, b: TensorLike) -> Tensor:
    """True where exactly one is non-zero (torch.logical_xor)."""
    return apply(_LOGICAL_XOR, a, b)


@public("logical_not")
def logical_not(a: TensorLike) -> Tensor:
    """True where ``a`` is zero (torch.logical_not)."""
    return apply(_LOGICAL_NOT, a)


# -- & | ^ ~: PyTorch's bitwise operations, of booleans and integers -------------------------
# (on floating tensors PyTorch refuses them too)


def _bitwise_check(name: str, symbol: str, *xs: TensorLike) -> None:
    for x in xs:
        dtype = x.dtype if isinstance(x, Tensor) else np.asarray(x).dtype
        if dtype.kind not in "biu":
            power = " (a power is written a ** b)" if symbol == "^" else ""
            raise DtypeError(
                f"'{symbol}' ({name}) takes boolean tensors, such as comparisons make, or "
                f"integer ones, not {dtype}{power}"
            )


def _bitwise(
    name: str, forward: Callable[..., NumpyResult], logical: Op, symbol: str, summary: str
) -> Callable[..., Tensor]:
    """The entry ``name`` (numpy's ``forward``, of booleans the logical operation's, whose
    formulas it takes) and its call, which refuses floating operands as torch does."""
    fields = {"params": logical.params, "symbolic": logical.symbolic, "formula": logical.formula}
    entry = _boolean(name, forward, summary, None, **fields)
    entry.operator = symbol

    def call(*operands: TensorLike) -> Tensor:
        _bitwise_check(name, symbol, *operands)
        return apply(entry, *operands)

    return made_public(name, call, name, f"``{summary}``, of boolean or integer tensors.")


bitwise_and = _bitwise("bitwise_and", np.bitwise_and, _LOGICAL_AND, "&", "a & b: and")
bitwise_or = _bitwise("bitwise_or", np.bitwise_or, _LOGICAL_OR, "|", "a | b: or")
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor, _LOGICAL_XOR, "^", "a ^ b: exclusive or")
bitwise_not = _bitwise("bitwise_not", np.invert, _LOGICAL_NOT, "~", "~a: not")


# -- tests of values --------------------------------------------------------------------------

_FLOAT_TEST = "NaN and infinity are values of floats, not of sympy's real formulas"
_ZERO = X.per_element(lambda slot: f"0 ({slot.node} is a boolean)")


def _value_test(name: str, forward: Callable[..., NumpyResult], summary: str) -> None:
    entry = _boolean(name, forward, summary, None, params=_X, symbolic=_FLOAT_TEST, explain=_ZERO)

    def op(x: TensorLike) -> Tensor:
        return apply(entry, x)

    op.__name__ = name
    entry.call = op


_value_test("isnan", np.isnan, "True where x is NaN")
_value_test("isinf", np.isinf, "True where x is +inf or -inf")
_value_test("isfinite", np.isfinite, "True where x is neither NaN nor infinite")


def _isclose_forward(a: Array, b: Array, rtol: float, atol: float, equal_nan: bool) -> Array:
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _close(sp: Any, a: Formula, b: Formula, rtol: float, atol: float, equal_nan: bool) -> Formula:
    return sp.Abs(a - b) <= atol + rtol * sp.Abs(b)


_ISCLOSE = _boolean(
    "isclose",
    _isclose_forward,
    "|input - other| <= atol + rtol |other|, element-wise (a boolean)",
    None,
    params=(
        *_XY,
        Param("rtol", NUMBER, 1e-05),
        Param("atol", NUMBER, 1e-08),
        Param("equal_nan", BOOL, False),
    ),
    symbolic=_indicator(_close),
    formula=lambda sp, a, b, rtol, atol, equal_nan: sp.Piecewise(
        (1, _close(sp, a, b, rtol, atol, equal_nan)), (0, True)
    ),
)


@public("isclose")
def isclose(
    a: TensorLike, b: TensorLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Where ``a`` is within ``atol + rtol * |b|`` of ``b`` (torch.isclose); infinities of the
    same sign are close, NaN is close to NaN only with ``equal_nan``."""
    return apply(_ISCLOSE, a, b, rtol=float(rtol), atol=float(atol), equal_nan=bool(equal_nan))


# -- any, all ---------------------------------------------------------------------------------


def _reduced(sp_join: str) -> Callable[..., Array]:
    """The symbolic rule of any/all: the indicator of the join (Or, And) of the elements."""

    def rule(x: Array, dim: int | None = None, keepdim: bool = False) -> Array:
        import sympy

        join = getattr(sympy, sp_join)
        truth = np.frompyfunc(lambda v: _true(sympy, v), 1, 1)(x)
        joined = np.frompyfunc(lambda a, b: join(a, b), 2, 1).reduce(
            truth.reshape(-1) if dim is None else truth,
            axis=0 if dim is None else dim,
            initial=sympy.true if sp_join == "And" else sympy.false,
            keepdims=keepdim and dim is not None,
        )
        out = np.frompyfunc(lambda c: sympy.Piecewise((1, c), (0, True)), 1, 1)(joined)
        if keepdim and dim is None:
            out = np.reshape(out, (1,) * x.ndim)
        return np.asarray(out, dtype=object)

    return rule


def _reduction(name: str, reduce: Callable[..., NumpyResult], join: str, summary: str) -> None:
    def forward(x: Array, dim: tuple[int, ...], keepdim: bool) -> NumpyResult:
        return reduce(x, axis=dim, keepdims=keepdim)

    entry = _boolean(
        name,
        forward,
        summary,
        None,
        params=_REDUCE,
        batch=B.reduction,
        pattern=R.reduction,
        symbolic=_reduced(join),
        explain=_ZERO,
    )

    def op(x: TensorLike, dim: Dim = None, keepdim: bool = False) -> Tensor:
        x = x if isinstance(x, Tensor) else Tensor(x)
        return apply(entry, x, dim=_axes(dim, x.ndim), keepdim=bool(keepdim))

    op.__name__ = name
    entry.call = op


_reduction("any", np.any, "Or", "True where any element (along dim) is non-zero")
_reduction("all", np.all, "And", "True where every element (along dim) is non-zero")


# -- masked_fill ------------------------------------------------------------------------------


def _masked_fill_vjp(
    g: Tensor, out: Tensor, x: Tensor, m: Tensor, value: Tensor, needs: tuple[bool, ...]
) -> tuple[Tensor | None, None, Tensor | None]:
    zero = P.zeros_like(g)
    return (
        P.sum_to(P.where(m, zero, g), x.shape) if needs[0] else None,
        None,
        P.sum_to(P.where(m, g, zero), value.shape) if needs[2] else None,
    )


def _masked_fill_jvp(
    tangents: Sequence[Tensor | None], out: Tensor, x: Tensor, m: Tensor, value: Tensor
) -> Tensor:
    tx, _, tv = tangents
    zero = P.zeros_like(out)
    return P.where(m, zero if tv is None else tv, zero if tx is None else tx)


def _masked_fill_formula(sp: Any, x: Formula, m: Formula, value: Formula) -> Formula:
    return sp.Piecewise((value, _true(sp, m)), (x, True))


_MASKED_FILL = register(
    Op(
        "masked_fill",
        "input with value written where mask is True",
        forward=lambda x, m, value: np.where(m, value, x),
        vjp=_masked_fill_vjp,
        jvp=_masked_fill_jvp,
        backward_name=lambda node: (
            "MaskedFillBackward1" if node.needs[2] else "MaskedFillBackward0"
        ),
        batch=B.elementwise,
        pattern=R.elementwise,
        params=(Param("input", TENSOR), Param("mask", TENSOR), Param("value", TENSOR)),
        methods=("masked_fill",),
        formula=_masked_fill_formula,
        symbolic=lambda x, m, value: np.asarray(
            np.frompyfunc(lambda *v: _masked_fill_formula(_sympy(), *v), 3, 1)(x, m, value),
            dtype=object,
        ),
        kink="the gradient goes to value where mask is True and to input elsewhere; the mask "
        "has none",
    )
)


def _sympy() -> Any:
    import sympy

    return sympy


@public("masked_fill")
def masked_fill(x: TensorLike, mask: TensorLike, value: TensorLike) -> Tensor:
    """``x`` with ``value`` (a number or a 0-d tensor) where ``mask`` (boolean) is True."""
    m = mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask))
    if m.dtype != np.bool_:
        raise DtypeError(
            f"masked_fill only supports boolean masks, but got mask with dtype {m.dtype} "
            "(a comparison such as x > 0 makes one)"
        )
    if isinstance(value, Tensor) and value.ndim != 0:
        raise ShapeError(
            "masked_fill only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s)"
        )
    return apply(_MASKED_FILL, x, m, value)


# -- heaviside: no derivative, as in PyTorch --------------------------------------------------


def _heaviside_vjp(g: Tensor, out: Tensor, x: Tensor, values: Tensor, needs: Any) -> Any:
    raise _no_derivative("heaviside", "the step is constant on each side of 0")


def _heaviside_jvp(tangents: Any, out: Tensor, x: Tensor, values: Tensor) -> Tensor:
    raise _no_derivative("heaviside", "the step is constant on each side of 0")


def _heaviside_forward(x: Array, values: Array) -> NumpyResult:
    # torch's: values where x == 0, else x > 0 (so 0 at NaN, where numpy's heaviside is NaN)
    return np.where(x == 0, values, x > 0).astype(np.result_type(x, values))


_HEAVISIDE = register(
    Op(
        "heaviside",
        "0 where input < 0, 1 where input > 0, values where input == 0 (no derivative, as torch)",
        forward=_heaviside_forward,
        vjp=_heaviside_vjp,
        jvp=_heaviside_jvp,
        backward_name="NotImplemented",
        batch=B.elementwise,
        pattern=R.elementwise,
        params=(Param("input", TENSOR), Param("values", TENSOR)),
        methods=("heaviside",),
        symbolic="PyTorch does not differentiate it",
        explain=X.per_element(lambda slot: "0 (heaviside has no derivative in PyTorch)"),
        kink="PyTorch does not implement its derivative: differentiating through it is an error",
    )
)


@public("heaviside")
def heaviside(x: TensorLike, values: TensorLike) -> Tensor:
    """The step function of ``x``, ``values`` at 0 (torch.heaviside)."""
    return apply(_HEAVISIDE, x, values)
