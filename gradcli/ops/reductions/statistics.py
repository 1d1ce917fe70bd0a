"""Statistics and scans: var (a primitive), std (sqrt of var, with PyTorch's gradient at 0),
cumsum, cumprod and logcumsumexp (primitives with their own rules), each an entry of the op
table.

The scans' rules are written with engine operations, so that they can be differentiated
again. cumprod's reverse and forward rules stay finite where the input has zeros, as
PyTorch's do, and are its derivatives at every order up to ``_ZERO_DEPTH`` (see
``_cumprod_vjp``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError
from ...engine.tensor import Tensor, apply
from .. import batching as B
from .. import explaining as X
from .. import patterns as R
from .. import primitives as P
from .. import symbolic as S
from ..arrays import rearranging as RA
from ..elementwise import elementary as EL
from ..elementwise.dtypes import cast
from ..numerics import moments
from ..rules.dims import _axes
from ..table import BOOL, DIMS, INT, OPT_DTYPE, OPT_NUMBER, TENSOR, Op, Param, public, register
from . import reductions as RD

Operand = Tensor | float | np.ndarray
Dim = int | tuple[int, ...] | None


def _tensor(x: Operand) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(np.asarray(x, dtype=np.float64))


# -- var and std -------------------------------------------------------------------------------


def _correction(unbiased: bool | None, correction: float | None, name: str) -> float:
    if unbiased is not None and correction is not None:
        raise DomainError(f"{name}: give unbiased or correction, not both")
    if correction is not None:
        return float(correction)
    return 0.0 if unbiased is False else 1.0


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return math.prod(shape[d] for d in axes)


def _freedom(shape: tuple[int, ...], dim: tuple[int, ...], correction: float) -> float:
    """N - correction, at least 0 (PyTorch's divisor)."""
    return max(0.0, _count(shape, dim) - correction)


def _var_forward(
    x: np.ndarray, dim: tuple[int, ...], keepdim: bool, correction: float
) -> np.ndarray:
    like_torch = moments.spread_like_torch(x, dim, keepdim, correction, False, False)
    if like_torch is not None:  # torch's order (gradcli run): its value to the last bit
        return like_torch[0]
    freedom = _freedom(x.shape, dim, correction)
    with np.errstate(divide="ignore", invalid="ignore"):  # no freedom: inf or nan, as PyTorch
        deviation = x - np.mean(x, axis=dim, keepdims=True) if x.size else x
        total = np.sum(deviation * deviation, axis=dim, keepdims=keepdim)
        return np.asarray(total / np.asarray(freedom, dtype=x.dtype))


def _var_weights(x: Tensor, dim: tuple[int, ...], correction: float) -> Tensor:
    """d var / d x[i] = 2 (x[i] - mean) / (N - correction): PyTorch's formula, which at no
    freedom is inf times the deviation (not differentiated through the mean, which would be
    inf - inf)."""
    freedom = _freedom(x.shape, dim, correction)
    with np.errstate(divide="ignore"):
        scale = np.divide(2.0, freedom) if freedom else math.inf
    return P.mul(P.sub(x, RD.mean(x, dim, keepdim=True)), scale)


def _var_vjp(
    g: Tensor,
    out: Tensor,
    x: Tensor,
    needs: tuple[bool, ...],
    dim: tuple[int, ...],
    keepdim: bool,
    correction: float,
) -> tuple[Tensor]:
    return (P.mul(RD._unreduce(g, x.shape, dim, keepdim), _var_weights(x, dim, correction)),)


def _var_jvp(
    tangents: list[Tensor | None],
    out: Tensor,
    x: Tensor,
    dim: tuple[int, ...],
    keepdim: bool,
    correction: float,
) -> Tensor:
    t = tangents[0]
    assert t is not None
    return RD.sum(P.mul(t, _var_weights(x, dim, correction)), dim, keepdim)


def _var_batch(
    forward: Callable[..., np.ndarray],
    params: dict[str, Any],
    values: list[np.ndarray],
    batched: list[bool],
    ranks: list[int],
    size: int,
) -> np.ndarray:
    """The reduction's rule (``dim`` shifted past the batch dimension), correction kept."""
    dim = tuple(d + 1 for d in params["dim"])
    return forward(values[0], dim=dim, keepdim=params["keepdim"], correction=params["correction"])


def _variance(
    x: Operand, dim: Dim, unbiased: bool | None, keepdim: bool, correction: float | None, name: str
) -> Tensor:
    x = _tensor(x)
    if isinstance(dim, bool):  # var(x, True): torch's (input, unbiased) form
        dim, unbiased = None, dim
    c = _correction(unbiased, correction, name)
    return apply(_VAR, x, dim=_axes(dim, x.ndim), keepdim=keepdim, correction=c)


_STAT = (
    Param("input", TENSOR),
    Param("dim", DIMS, None),
    Param("unbiased", BOOL, None),
    Param("keepdim", BOOL, False),
    Param("correction", OPT_NUMBER, None),
)


def _var_symbolic(
    x: np.ndarray,
    dim: int | None = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    correction: float | None = None,
) -> np.ndarray:
    import sympy

    from ..symbolic import number

    c = _correction(unbiased, correction, "var")
    count = x.size if dim is None else x.shape[dim]
    deviation = x - S.mean(x, dim, True)
    total = np.asarray(np.sum(deviation * deviation, axis=dim, keepdims=keepdim), dtype=object)
    freedom = max(0.0, count - c)
    scale = 1 / (sympy.Integer(int(freedom)) if float(freedom).is_integer() else number(freedom))
    return np.asarray(total * scale, dtype=object)


def _std_symbolic(
    x: np.ndarray,
    dim: int | None = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    correction: float | None = None,
) -> np.ndarray:
    return S.each("sqrt")(_var_symbolic(x, dim, unbiased, keepdim, correction))


def _freedom_text(slot: Any) -> str:
    p = slot.params
    c = _correction(p.get("unbiased"), p.get("correction"), "var")
    x, dim = slot.arrays[0], p.get("dim")
    count = x.size if dim is None else x.shape[dim]
    return f"{X.number_text(count)} - {X.number_text(c)}"


def _mean_text(slot: Any) -> str:
    return f"mean({slot.wrt}{X.along(slot)})"


_FREEDOM = "fewer elements than correction + 1 (no degrees of freedom: 0/0 or x/0)"
_VAR = register(
    Op(
        "var",
        "variance (correction=1: the unbiased estimate), of all elements or along dim",
        forward=_var_forward,
        vjp=_var_vjp,
        jvp=_var_jvp,
        backward_name="VarBackward0",
        batch=_var_batch,
        params=_STAT,
        methods=("var",),
        symbolic=_var_symbolic,
        explain=X.per_element(lambda s: f"2*({s.wrt}[i] - {_mean_text(s)})/({_freedom_text(s)})"),
        nonfinite=_FREEDOM,
        nonfinite_backward=_FREEDOM,
        kink="one value with correction 1 gives nan (0/0), its gradient too, as PyTorch",
    )
)
register(
    Op(
        "std",
        "standard deviation (correction=1), of all elements or along dim",
        params=_STAT,
        methods=("std",),
        symbolic=_std_symbolic,
        explain=X.per_element(
            lambda s: (
                f"({s.wrt}[i] - {_mean_text(s)})/(({_freedom_text(s)})*{s.node}) (0 where it is 0)"
            )
        ),
        nonfinite=_FREEDOM,
        nonfinite_backward=_FREEDOM,
        kink="the gradient where the std is 0 (all values equal) is 0; one value with "
        "correction 1 gives nan, its gradient too, as PyTorch",
        backward_name="StdBackward0",
    )
)


@public("var")
def var(
    input: Operand,
    dim: Dim = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    correction: float | None = None,
) -> Tensor:
    """sum((x - mean)**2) / max(0, N - correction) over all elements or ``dim``; correction
    1 by default, 0 with unbiased=False."""
    return _variance(input, dim, unbiased, keepdim, correction, "var")


@public("std")
def std(
    input: Operand,
    dim: Dim = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    correction: float | None = None,
) -> Tensor:
    """sqrt(var), with PyTorch's gradient 0 where it is 0."""
    v = _variance(input, dim, unbiased, keepdim, correction, "std")
    zero = P.mask(_is_zero, v)
    out = P.where(zero, 0.0, EL.sqrt(P.where(zero, 1.0, v)))
    # torch takes the square root in double: its float32 std is not sqrt of the rounded var
    torch_value = spread_like_torch(input, dim, unbiased, keepdim, correction, "std", False)
    if torch_value is not None and torch_value[0].shape == out.data.shape:
        out.data[...] = torch_value[0]
    return out


def spread_like_torch(
    input: Operand,
    dim: Dim,
    unbiased: bool | None,
    keepdim: bool,
    correction: float | None,
    name: str,
    paired: bool,
) -> tuple[np.ndarray, np.ndarray] | None:
    """torch's values of var or std (``name``) of ``input`` and the mean beside them, as
    ``var``/``std`` (``paired`` False) or ``var_mean``/``std_mean`` compute them, where
    ``moments.spread_like_torch`` knows them (gradcli run's torch order), else None."""
    x = _tensor(input)
    if isinstance(dim, bool):  # var(x, True): torch's (input, unbiased) form
        dim, unbiased = None, dim
    c = _correction(unbiased, correction, name)
    if x.data.shape != x.shape:
        return None
    axes = _axes(dim, x.ndim)
    return moments.spread_like_torch(x.data, axes, keepdim, c, name == "std", paired)


def _is_zero(x: np.ndarray) -> np.ndarray:
    return np.asarray(x == 0)


# -- scans -------------------------------------------------------------------------------------


def _scan(numpy_scan: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    def forward(x: np.ndarray, dim: int) -> np.ndarray:
        return x.copy() if x.ndim == 0 else numpy_scan(x, axis=dim)

    return forward


def _logcumsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    return np.logaddexp.accumulate(x, axis=axis) if x.size else x.copy()


def _flip(x: Tensor, dim: int) -> Tensor:
    """x reversed along ``dim`` (a slice with step -1)."""
    if x.ndim == 0:
        return x
    return RA.getitem(x, (slice(None),) * dim + (slice(None, None, -1),))


def _reverse_cumsum(x: Tensor, dim: int) -> Tensor:
    """sum over j >= i along dim, for each i."""
    return _flip(cumsum(_flip(x, dim), dim), dim)


def _reverse_logcumsumexp(x: Tensor, dim: int) -> Tensor:
    return _flip(logcumsumexp(_flip(x, dim), dim), dim)


def _log_parts(v: Tensor) -> tuple[Tensor, Tensor]:
    """log(v) where v > 0 and log(-v) where v < 0, each a very negative number elsewhere (so
    that exp gives 0 and no derivative meets log(0))."""
    floor = float(np.finfo(v.dtype).min) / 4
    magnitude = EL.abs(v)
    logs = EL.log(P.where(P.mask(_is_zero, v), 1.0, magnitude))
    return (
        P.where(P.mask(_positive, v), logs, floor),
        P.where(P.mask(_negative, v), logs, floor),
    )


def _positive(x: np.ndarray) -> np.ndarray:
    return np.asarray(x > 0)


def _negative(x: np.ndarray) -> np.ndarray:
    return np.asarray(x < 0)


def _logcumsumexp_vjp(g: Tensor, out: Tensor, x: Tensor, dim: int) -> Tensor:
    """grad[i] = sum over j >= i of g[j] exp(x[i] - out[j]), in log space by the signs of g
    (PyTorch's formula), so that no exp overflows."""
    if x.ndim == 0:
        return g
    positive, negative = (
        EL.exp(P.add(_reverse_logcumsumexp(P.sub(part, out), dim), x)) for part in _log_parts(g)
    )
    return P.sub(positive, negative)


def _logcumsumexp_jvp(t: Tensor, out: Tensor, x: Tensor, dim: int) -> Tensor:
    """tangent[j] = sum over i <= j of t[i] exp(x[i] - out[j]), in log space as the vjp."""
    if x.ndim == 0:
        return t
    positive, negative = (
        EL.exp(P.sub(logcumsumexp(P.add(part, x), dim), out)) for part in _log_parts(t)
    )
    return P.sub(positive, negative)


# cumprod where the input has zeros. z is the first zero along dim. Before z, the division
# formula holds (x[i] != 0 there): grad[i] = sum_{j >= i} g[j] out[j] / x[i]. From z on, the
# derivatives are those of cumprod at y, x with its first zero replaced by 1: at z itself
# grad[z] = d/dy[z], and after z every product holds x[z], so grad[i] = x[z] * d/dy[i]. Each
# branch equals the true derivative as a function near the point (not just its value), so
# its own derivatives are cumprod's too; the recursion on y (one zero fewer) goes
# _ZERO_DEPTH deep, which makes every derivative up to that order exact, with any number of
# zeros. The depth depends on no value, so a traced program replays at any point.
_ZERO_DEPTH = 3


def _before_first_zero(x: np.ndarray, axis: int) -> np.ndarray:
    return np.asarray(np.cumsum(x == 0, axis=axis) == 0)


def _first_zero(x: np.ndarray, axis: int) -> np.ndarray:
    return np.asarray((x == 0) & (np.cumsum(x == 0, axis=axis) == 1))


def _zero_split(x: Tensor, dim: int) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Masks before and at the first zero, x with zeros replaced by 1, y (x with its first
    zero replaced by 1) and x[z] (spread along dim; 0 where there is no zero)."""
    before = P.mask(_before_first_zero, x, axis=dim)
    first = P.mask(_first_zero, x, axis=dim)
    safe = P.where(P.mask(_is_zero, x), 1.0, x)
    y = P.where(first, 1.0, x)
    at_zero = P.expand(RD.sum(P.where(first, x, 0.0), (dim,), keepdim=True), x.shape)
    return before, first, safe, y, at_zero


def _cumprod_vjp(g: Tensor, out: Tensor, x: Tensor, dim: int, depth: int = _ZERO_DEPTH) -> Tensor:
    if x.ndim == 0:
        return g
    before, first, safe, y, at_zero = _zero_split(x, dim)
    divided = P.div(_reverse_cumsum(P.mul(g, out), dim), safe)
    if depth == 0:
        return P.where(before, divided, 0.0)
    inner = _cumprod_vjp(g, cumprod(y, dim), y, dim, depth - 1)
    return P.where(before, divided, P.where(first, inner, P.mul(at_zero, inner)))


def _cumprod_jvp(t: Tensor, out: Tensor, x: Tensor, dim: int, depth: int = _ZERO_DEPTH) -> Tensor:
    """tangent[j] = sum over i <= j of t[i] prod_{k <= j, k != i} x[k]: before the first zero
    out[j] * sum_{i <= j} t[i] / x[i]; from it on, t[z] cumprod(y)[j] plus x[z] times the
    tangent at y of t without its element z (as the vjp)."""
    if x.ndim == 0:
        return t
    before, first, safe, y, at_zero = _zero_split(x, dim)
    divided = P.mul(out, cumsum(P.div(t, safe), dim))
    if depth == 0:
        return P.where(before, divided, 0.0)
    y_out = cumprod(y, dim)
    t_at_zero = P.expand(RD.sum(P.where(first, t, 0.0), (dim,), keepdim=True), x.shape)
    inner = _cumprod_jvp(P.where(first, 0.0, t), y_out, y, dim, depth - 1)
    return P.where(before, divided, P.add(P.mul(t_at_zero, y_out), P.mul(at_zero, inner)))


def _scan_blocks(jacobian: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Any:
    """explain's rule of a scan: d out[..., i] / d x[..., j] along dim, one n x n block per
    slice, ``jacobian(x, out)`` with dim last."""

    def rule(slot: Any, vary: Callable[[np.ndarray], np.ndarray]) -> tuple[str, str, str, Any]:
        from ...base import bounds

        dim = slot.params["dim"]
        x, out = (
            np.moveaxis(a, dim, -1) if a.ndim else a.reshape(1) for a in (slot.arrays[0], slot.out)
        )
        left = f"{X.d(slot.node)}[i]/{X.d(slot.wrt)}[j]"
        formula = (
            _SCAN_FORMULAS[slot.op].format(x=slot.wrt, out=slot.node)
            + f" ({X.along(slot).strip()})"
        )
        entries = x.size * x.shape[-1]
        if entries > min(X.BLOCK_ENTRIES, bounds.limits().max_elements):
            shape = (*x.shape, x.shape[-1])
            return (
                left,
                f"{formula}; its blocks, shape {shape}, are too large to show",
                "jacobian blocks",
                None,
            )
        lower = np.tril(np.ones((x.shape[-1],) * 2, dtype=bool))
        return left, formula, "jacobian blocks", np.where(lower, jacobian(x, out), 0.0)

    return rule


def _cumprod_blocks(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    others = np.repeat(x[..., None, :], n, axis=-2)  # row j: x with x[j] replaced by 1
    others[..., np.arange(n), np.arange(n)] = 1.0
    return np.swapaxes(np.cumprod(others, axis=-1), -1, -2)


_SCAN_FORMULAS = {
    "cumsum": "1 where j <= i, else 0",
    "cumprod": "the product of {x}[k] for k <= i, k != j, where j <= i, else 0",
    "logcumsumexp": "exp({x}[j] - {out}[i]) where j <= i, else 0",
}


def _cumsum_symbolic(x: np.ndarray, dim: int, dtype: Any = None) -> np.ndarray:
    return x.copy() if x.ndim == 0 else np.asarray(np.cumsum(x, axis=dim), dtype=object)


def _cumprod_symbolic(x: np.ndarray, dim: int, dtype: Any = None) -> np.ndarray:
    return x.copy() if x.ndim == 0 else np.asarray(np.cumprod(x, axis=dim), dtype=object)


def _logcumsumexp_symbolic(x: np.ndarray, dim: int) -> np.ndarray:
    return S.each("log")(_cumsum_symbolic(S.each("exp")(x), dim))


_ALONG = (Param("input", TENSOR), Param("dim", INT))
_TYPED = (*_ALONG, Param("dtype", OPT_DTYPE, None))  # torch's cumsum and cumprod take a dtype


def _register_scan(
    name: str,
    backward_name: str,
    forward: Callable[..., np.ndarray],
    vjp: Callable[[Tensor, Tensor, Tensor, int], Tensor],
    jvp: Callable[[Tensor, Tensor, Tensor, int], Tensor],
    summary: str,
    symbolic: Callable[[np.ndarray, int], np.ndarray],
    jacobian: Callable[[np.ndarray, np.ndarray], np.ndarray],
    **fields: Any,
) -> Op:
    def reverse(
        g: Tensor, out: Tensor, x: Tensor, needs: tuple[bool, ...], dim: int
    ) -> tuple[Tensor]:
        return (vjp(g, out, x, dim),)

    def tangent(tangents: list[Tensor | None], out: Tensor, x: Tensor, dim: int) -> Tensor:
        t = tangents[0]
        assert t is not None
        return jvp(t, out, x, dim)

    return register(
        Op(
            name,
            summary,
            forward=forward,
            vjp=reverse,
            jvp=tangent,
            backward_name=backward_name,
            batch=B.along_dim,
            pattern=R.along_dim,
            methods=(name,),
            symbolic=symbolic,
            explain=_scan_blocks(jacobian),
            **{"params": _ALONG, **fields},
        )
    )


_CUMSUM = _register_scan(
    "cumsum",
    "CumsumBackward0",
    _scan(np.cumsum),
    lambda g, out, x, dim: _reverse_cumsum(g, dim),
    lambda t, out, x, dim: cumsum(t, dim),
    "cumulative sum along dim",
    _cumsum_symbolic,
    lambda x, out: np.ones(x.shape + x.shape[-1:]),
    nonfinite="inf - inf",
    saved=False,
    params=_TYPED,
)
_CUMPROD = _register_scan(
    "cumprod",
    "CumprodBackward0",
    _scan(np.cumprod),
    _cumprod_vjp,
    _cumprod_jvp,
    "cumulative product along dim",
    _cumprod_symbolic,
    _cumprod_blocks,
    params=_TYPED,
    nonfinite="overflow, or 0 * inf",
    kink="finite where the input has zeros: d out[j]/d x[i] is the product of the other "
    "elements up to j, as PyTorch's (exact to the third derivative)",
)
_LOGCUMSUMEXP = _register_scan(
    "logcumsumexp",
    "LogcumsumexpBackward0",
    _scan(_logcumsumexp),
    _logcumsumexp_vjp,
    _logcumsumexp_jvp,
    "log of the cumulative sum of exp along dim, computed stably",
    _logcumsumexp_symbolic,
    lambda x, out: np.exp(x[..., None, :] - out[..., :, None]),
)


def _scan_dim(x: Tensor, dim: int) -> int:
    """``dim`` checked and made non-negative; 0 for a 0-d tensor (which takes 0 and -1)."""
    axes = _axes(int(dim), x.ndim)
    return axes[0] if axes else 0


@public("cumsum")
def cumsum(input: Operand, dim: int, dtype: Any = None) -> Tensor:
    """Running sums along ``dim``: out[i] = sum of x[j] for j <= i (in ``dtype`` where
    given, the input cast to it first)."""
    x = cast(input, dtype)
    return apply(_CUMSUM, x, dim=_scan_dim(x, dim))


@public("cumprod")
def cumprod(input: Operand, dim: int, dtype: Any = None) -> Tensor:
    """Running products along ``dim``: out[i] = product of x[j] for j <= i (in ``dtype``
    where given, the input cast to it first)."""
    x = cast(input, dtype)
    return apply(_CUMPROD, x, dim=_scan_dim(x, dim))


@public("logcumsumexp")
def logcumsumexp(input: Operand, dim: int) -> Tensor:
    """log(cumsum(exp(x))) along ``dim``, without overflow."""
    x = _tensor(input)
    return apply(_LOGCUMSUMEXP, x, dim=_scan_dim(x, dim))
