"""The reductions (sum, mean, prod, amax, amin, logsumexp, norm) and softmax, log_softmax:
each one entry of the op table (``ops/table.py``), its rules written with the engine's
functions as ``primitives.py``'s, so that they can be differentiated again.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...base.engine_errors import DtypeError, ShapeError
from ...engine.tensor import Tensor, TensorLike, apply, is_grad_enabled
from .. import batching as B
from .. import explaining as X
from .. import patterns as R
from .. import symbolic as S
from ..arrays.rearranging import reshape, unsqueezed
from ..elementwise.dtypes import cast
from ..elementwise.elementary import abs, exp, pow
from ..numerics import vector_math
from ..numerics.summation import in_force, sum_like_torch
from ..primitives import (
    _REDUCE,
    BackwardName,
    Forward,
    Reduction,
    Selected,
    _is_zero,
    _nonzero_count,
    _scale,
    div,
    expand,
    mask,
    mul,
    sub,
    where,
    zeros_like,
)
from ..rules.dims import Dim, _axes, _kept_shape
from ..table import (
    BOOL,
    DIMS,
    HOLOMORPHIC,
    NUMBER,
    OPS,
    OPT_DTYPE,
    OPT_INT,
    TENSOR,
    Array,
    NumpyResult,
    Op,
    Param,
    public,
    register,
)

# the dtype a reduction or a softmax computes in, torch's keyword: its input is cast to it first
# (softmin's too)
DTYPE = Param("dtype", OPT_DTYPE, None)

# -- reductions -------------------------------------------------------------------------------


def _unreduce(g: Tensor, shape: tuple[int, ...], dim: Dim, keepdim: bool) -> Tensor:
    """Spread a reduced cotangent back over the reduced dimensions."""
    if not keepdim:
        g = unsqueezed(g, _kept_shape(shape, dim))
    return expand(g, shape)


def _reduction(
    name: str,
    backward_name: BackwardName,
    forward: Forward,
    vjp: Callable[..., Any],
    jvp: Callable[..., Any],
    summary: str,
    typed: bool = False,
    **fields: Any,
) -> Reduction:
    """Register a reduction over all dimensions or ``dim`` (an int or a tuple), ``keepdim``
    as in PyTorch; by default a function and a method with the signature of ``sum``, and,
    ``typed``, torch's ``dtype`` after them (what the engine's own rules call is the function
    returned, without it)."""

    def op(x: TensorLike, dim: Dim = None, keepdim: bool = False) -> Tensor:
        x = x if isinstance(x, Tensor) else Tensor(x)
        axes = _axes(dim, x.ndim)
        return apply(entry, x, dim=axes, keepdim=keepdim)

    def typed_op(
        x: TensorLike, dim: Dim = None, keepdim: bool = False, dtype: Any = None
    ) -> Tensor:
        return op(cast(x, dtype), dim, keepdim)

    call = typed_op if typed else op
    params = (*_REDUCE, DTYPE) if typed else _REDUCE
    fields = {"params": params, "methods": (name,), "pattern": R.reduction, **fields}
    entry = register(
        Op(name, summary, forward, vjp, jvp, backward_name, batch=B.reduction, call=call, **fields)
    )
    op.__name__ = typed_op.__name__ = name
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
    sum_like_torch,  # torch's order of adding floats: its last bits
    lambda g, out, x, needs, dim, keepdim: (_unreduce(g, x.shape, dim, keepdim),),
    lambda tangents, out, x, dim, keepdim: sum(tangents[0], dim, keepdim),
    "sum of all elements, or along dim",
    typed=True,
    symbolic=S.reduce(np.sum),
    size=_reduced_size,  # numpy sums a broadcast view without making it
    extra={"glyph": "∑"},
    explain=X.per_element(lambda slot: "1"),
    complex=HOLOMORPHIC,
    saved=False,
)


def _sum_on_arrays(
    g: Array, out: Array, x: Array, needs: tuple[bool, ...], dim: tuple[int, ...], keepdim: bool
) -> tuple[Array]:
    """sum's rule (``_unreduce``) on float64 arrays, for the reverse pass that builds no graph
    (``Op.vjp_arrays``): g spread over the summed dims, by the reshape and the read-only
    broadcast its unsqueeze and expand make."""
    if not keepdim:
        g = np.reshape(g, _kept_shape(x.shape, dim))
    return (np.broadcast_to(g, x.shape),)


OPS["sum"].vjp_arrays = _sum_on_arrays

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
        return sum_like_torch(x, dim, keepdim) / _count(x.shape, dim)  # torch's: sum, then /


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
    typed=True,
    symbolic=S.mean,
    size=_reduced_size,
    explain=X.per_element(X.mean),
    complex=HOLOMORPHIC,
    saved=False,
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
            where(mask(_zero_times_nonfinite, x, axis=dim), math.nan, zeros_like(x)),
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
    typed=True,
    symbolic=S.reduce(np.prod),
    extra={"glyph": "∏"},
    params=(
        Param("input", TENSOR),
        Param("dim", OPT_INT, None),
        Param("keepdim", BOOL, False),
        DTYPE,
    ),
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
    return _shares(x == kept, axis, x.dtype)


def _shares(hit: Array, axis: tuple[int, ...], dtype: np.dtype) -> NumpyResult:
    """1 / (the count of ``hit`` along ``axis``) where ``hit`` holds, else 0."""
    return (hit / np.sum(hit, axis=axis, keepdims=True)).astype(dtype)


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


def _extremes(x: Array, kept: Array) -> NumpyResult:
    """Where ``x`` is its extreme ``kept`` (a NaN extreme: where ``x`` is NaN)."""
    return (x == kept) | (np.isnan(x) & np.isnan(kept))


def _even_shares(x: Array, kept: Array, axis: tuple[int, ...]) -> NumpyResult:
    """1 / (the count of extremes along ``axis``) where ``x`` is one, else 0."""
    return _shares(_extremes(x, kept), axis, x.dtype)


def _spread_evenly(
    g: Tensor, out: Tensor, x: Tensor, needs: tuple[bool, ...], dim: tuple[int, ...], keepdim: bool
) -> tuple[Tensor]:
    """The reverse rule of max(x) and min(x) of all elements, torch's
    evenly_distribute_backward: the cotangent over the count of extremes where ``x`` is one,
    0 elsewhere, selected rather than multiplied, so an infinite or NaN cotangent stays in the
    extremes' places (amax's own rule multiplies, as torch's amax does)."""
    kept = out if keepdim else reshape(out, _kept_shape(x.shape, dim))
    share = Selected(mask(_extremes, x, kept), mask(_even_shares, x, kept, axis=dim))
    return (_scale(_unreduce(g, x.shape, dim, keepdim), share),)


def _read_evenly(
    tangents: list[Tensor], out: Tensor, x: Tensor, dim: tuple[int, ...], keepdim: bool
) -> Tensor:
    """The forward rule beside ``_spread_evenly``: the mean of the tangent over the extremes."""
    kept = out if keepdim else reshape(out, _kept_shape(x.shape, dim))
    return sum(mul(tangents[0], mask(_even_shares, x, kept, axis=dim)), dim, keepdim)


def _of_all_elements(name: str) -> Callable[[TensorLike], Tensor]:
    """max(x) or min(x) of all elements: the entry ``name`` (amax, amin) over every
    dimension, with torch's rule for a whole tensor's extreme (``_spread_evenly``)."""
    whole = dataclasses.replace(OPS[name], vjp=_spread_evenly, jvp=_read_evenly)

    def call(x: TensorLike) -> Tensor:
        x = x if isinstance(x, Tensor) else Tensor(x)
        return apply(whole, x, dim=tuple(range(x.ndim)), keepdim=False)

    return call


largest_of_all = _of_all_elements("amax")
smallest_of_all = _of_all_elements("amin")


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
    if _torch_kernel(x):
        if dim % x.ndim == x.ndim - 1:
            return vector_math.softmax_last(x)
        return vector_math.softmax_inner(x, dim % x.ndim)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax_forward(x: Array, dim: int) -> NumpyResult:
    if x.size == 0:
        return x.copy()
    if _torch_last_dim(x, dim):
        return vector_math.log_softmax_last(x)
    # np.max's and np.sum's reductions without their Python wrappers: the same bits
    shifted = x - np.maximum.reduce(x, axis=dim, keepdims=True)
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis=dim, keepdims=True))


def _torch_kernel(x: Array) -> bool:
    """Whether torch's float32 softmax kernels are followed to their bits (``vector_math``,
    several times numpy's cost: only where sums follow torch's order)."""
    return x.dtype == np.float32 and x.ndim > 0 and in_force()


def _torch_last_dim(x: Array, dim: int) -> bool:
    """Whether torch's kernel over the last dimension is followed (``_torch_kernel``)."""
    return _torch_kernel(x) and dim % x.ndim == x.ndim - 1


def _softmax_rule(v: Tensor, out: Tensor, dim: int) -> Tensor:
    # J v = J^T v = out * (v - sum(v * out)): the softmax Jacobian is symmetric.
    return mul(out, sub(v, sum(mul(v, out), dim, keepdim=True)))


def _log_softmax_vjp(g: Tensor, out: Tensor, dim: int) -> Tensor:
    if _kernel_gradient(g, out, dim):
        return Tensor(vector_math.log_softmax_backward_last(g.data, out.data))
    return sub(g, mul(exp(out), sum(g, dim, keepdim=True)))


def _softmax_vjp(g: Tensor, out: Tensor, dim: int) -> Tensor:
    if _kernel_gradient(g, out, dim):
        return Tensor(vector_math.softmax_backward_last(g.data, out.data))
    return _softmax_rule(g, out, dim)


def _kernel_gradient(g: Tensor, out: Tensor, dim: int) -> bool:
    """Whether a gradient is torch's backward kernel's, bits and all (``vector_math``): over
    the last dimension of float32, in torch's order, no graph of the gradient recorded."""
    recorded = is_grad_enabled() and (g.requires_grad or out.requires_grad)
    return not recorded and g.dtype == np.float32 and _torch_last_dim(out.data, dim)


def _log_softmax_jvp(t: Tensor, out: Tensor, dim: int) -> Tensor:
    return sub(t, sum(mul(exp(out), t), dim, keepdim=True))


_ALONG = (Param("input", TENSOR), Param("dim", OPT_INT, None), DTYPE)
_SOFTMAX = register(
    Op(
        "softmax",
        "softmax along dim (the only dim of a vector by default)",
        forward=_softmax_forward,
        vjp=lambda g, out, x, needs, dim: (_softmax_vjp(g, out, dim),),
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


def _log_softmax_on_arrays(
    g: Array, out: Array, x: Array, needs: tuple[bool, ...], dim: int
) -> tuple[Array]:
    """``_log_softmax_vjp`` on float64 arrays (``Op.vjp_arrays``): g - exp(out) * sum(g, dim,
    keepdim=True), the very numpy calls its sub, mul, exp and sum make (torch's kernel is
    float32's alone)."""
    total = sum_like_torch(g, _axes(dim, np.ndim(g)), True)  # (sum's dims: none of a number)
    return (np.subtract(g, np.multiply(np.exp(out), total)),)


_LOG_SOFTMAX.vjp_arrays = _log_softmax_on_arrays


def _one_dim(x: Tensor, dim: int | None) -> int:
    if dim is None:
        if x.ndim > 1:
            raise ShapeError(f"give dim for a tensor of {x.ndim} dimensions")
        dim = 0
    return _axes(int(dim), x.ndim)[0] if x.ndim else 0


@public("softmax")
def softmax(x: TensorLike, dim: int | None = None, dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (the only dim of a vector when omitted), in
    ``dtype`` where given."""
    x = cast(x, dtype)
    return apply(_SOFTMAX, x, dim=_one_dim(x, dim))


@public("log_softmax")
def log_softmax(x: TensorLike, dim: int | None = None, dtype: Any = None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed stably, in ``dtype`` where given."""
    x = cast(x, dtype)
    return apply(_LOG_SOFTMAX, x, dim=_one_dim(x, dim))
