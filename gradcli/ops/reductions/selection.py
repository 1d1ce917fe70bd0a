"""Selections and operations with several results: max/min in their three torch forms,
argmax/argmin, sort/argsort, topk, kthvalue, median, mode, cummax/cummin, var_mean/std_mean,
split/chunk/unbind, each an entry of the op table.

An operation with several results (``values, indices = max(x, 1)``) is one entry whose
``extra["outputs"]`` names them; its last parameter (kind ``OUTPUT``, never written in a
program) says which one a call gives, so each result is an ordinary tensor with its own
derivative, and a program that unpacks them is one call per name (the validator lowers
``a, b = f(x)`` so). Indices are int64 tensors without a gradient, computed by the engine's
``mask`` (so that compiled replay recomputes them at each point); values are the input taken
at them (``take_along``, whose reverse rule ``put_along`` adds the cotangent back at the same
indices), so the gradient goes to the index returned, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError, ShapeError
from ...engine.tensor import Tensor, apply
from .. import batching as B
from .. import explaining as X
from .. import primitives as P
from .. import symbolic as S
from ..arrays import rearranging as RA
from ..elementwise import elementary as EL
from ..numerics import ties
from ..rules.dims import _axes
from ..table import (
    BOOL,
    INT,
    OPS,
    OPT_INT,
    OUTPUT,
    SECTIONS,
    TENSOR,
    Array,
    Op,
    Param,
    made_public,
    public,
    register,
)
from . import reductions as RD
from . import statistics as _statistics  # noqa: F401 - var and std, which var_mean reads

Operand = Tensor | float | np.ndarray
Output = tuple[int, ...]
_FIRST: Output = (0, 0)
_PICK = Param("output", OUTPUT, _FIRST)


def _tensor(x: Operand) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(np.asarray(x, dtype=np.float64))


class UnpackError(DomainError):
    """A statement unpacks the results of split, chunk, unbind or meshgrid into as many names
    as they are not: ``python`` is Python's message for it (a ValueError)."""

    def __init__(self, python: str, name: str, count: int):
        super().__init__(f"{python}: {name} gives {_tensors(count)} here")
        self.python = python


def _tensors(count: int) -> str:
    return f"{count} tensor" + ("" if count == 1 else "s")


def _which(output: Sequence[int], count: int, name: str) -> int:
    """The result ``output`` asks for of ``count`` results, checked against the number of
    names that take them (Python's errors for an unpacking that does not fit)."""
    k, names = (tuple(output) + (0,))[:2]
    if names and names != count:
        few = names > count
        python = f"{'not enough' if few else 'too many'} values to unpack (expected {names}" + (
            f", got {count})" if few else ")"
        )
        raise UnpackError(python, name, count)
    if not 0 <= k < count:
        raise ShapeError(f"{name} gives {_tensors(count)}: there is no [{k}]")
    return k


# -- take_along and put_along: the values at indices along a dim, and their adjoint ------------


def _take_forward(x: Array, index: Array, dim: int) -> Array:
    return np.take_along_axis(x, index, axis=dim)


def _put_forward(g: Array, index: Array, dim: int, shape: tuple[int, ...]) -> Array:
    out = np.zeros(shape, dtype=g.dtype)
    grids = list(np.ix_(*(np.arange(n) for n in index.shape)))
    grids[dim] = index
    np.add.at(out, tuple(grids), g)
    return out


def _batched_pair(values: Sequence[Array], batched: Sequence[bool], size: int) -> list[Array]:
    return [B.with_batch(v, b, size) for v, b in zip(values, batched)]


def _take_batch(
    forward: Callable[..., Array],
    params: dict[str, Any],
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    x, index = _batched_pair(values, batched, size)
    return forward(x, index, dim=params["dim"] + 1)


def _put_batch(
    forward: Callable[..., Array],
    params: dict[str, Any],
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    g, index = _batched_pair(values, batched, size)
    return forward(g, index, dim=params["dim"] + 1, shape=(size, *params["shape"]))


_TAKE = register(
    Op(
        "take_along",
        "the elements of input at index along dim (index shaped like input but along dim)",
        forward=_take_forward,
        vjp=lambda g, out, x, index, needs, dim: (put_along(g, index, dim, x.shape), None),
        jvp=lambda tangents, out, x, index, dim: take_along(tangents[0], index, dim),
        backward_name="GatherBackward0",
        batch=_take_batch,
    )
)
_PUT = register(
    Op(
        "put_along",
        "zeros of shape with input added at index along dim: take_along's adjoint",
        forward=_put_forward,
        vjp=lambda g, out, x, index, needs, dim, shape: (take_along(g, index, dim), None),
        jvp=lambda tangents, out, x, index, dim, shape: put_along(tangents[0], index, dim, shape),
        backward_name="ScatterAddBackward0",
        batch=_put_batch,
    )
)


def take_along(x: Tensor, index: Tensor, dim: int) -> Tensor:
    """``x`` at ``index`` (int64, of x's rank) along ``dim`` (non-negative)."""
    return apply(_TAKE, x, index, dim=dim)


def put_along(g: Tensor, index: Tensor, dim: int, shape: tuple[int, ...]) -> Tensor:
    """Zeros of ``shape`` with ``g`` added at ``index`` along ``dim``."""
    return apply(_PUT, g, index, dim=dim, shape=tuple(shape))


# -- indices along a dim (numpy, the dim kept) --------------------------------------------------


def _int64(x: Array) -> Array:
    return np.asarray(x, dtype=np.int64)


def _arg_largest(x: Array, axis: int) -> Array:
    return _int64(np.argmax(x, axis=axis, keepdims=True))  # the first of ties; nan is largest


def _arg_smallest(x: Array, axis: int) -> Array:
    return _int64(np.argmin(x, axis=axis, keepdims=True))  # the first of ties, or of nans


def _order(x: Array, axis: int, descending: bool = False) -> Array:
    """A stable sort's indices, nan largest (first when descending), as torch."""
    if not descending:
        return _int64(np.argsort(x, axis=axis, kind="stable"))
    return _int64(np.lexsort((-x, ~np.isnan(x)), axis=axis))


def _sort_order(x: Array, axis: int, descending: bool, stable: bool) -> Array:
    """sort's indices: stable, or (stable=False) among ties the order of torch's CPU sort, the
    standard library's introsort, which keeps the order of ties only in rows of up to 16."""
    fast = _order(x, axis, descending)
    if stable:
        return fast
    less = ties.greater_or_nan if descending else ties.less_or_number
    return ties.along(x, axis, fast, partial(ties.sorted_row, less=less))


def _first_k(x: Array, axis: int, k: int, largest: bool, ordered: bool = True) -> Array:
    """topk's indices: among ties, those torch's CPU kernel gives (``ties``)."""
    fast = np.take(_order(x, axis, largest), np.arange(k), axis=axis)
    row = partial(ties.topk_row, k=k, largest=largest, ordered=ordered)
    return ties.along(x, axis, fast, row, every=not ordered)


def _kth(x: Array, axis: int, k: int) -> Array:
    """kthvalue's index: among ties, the one torch's quickselect leaves at k (``ties``)."""
    fast = np.take(_order(x, axis), [k - 1], axis=axis)
    return ties.along(x, axis, fast, lambda row: [ties.kthvalue_row(row, k)])


def _mode_index(x: Array, axis: int) -> Array:
    """mode's index: of the smallest of the most frequent values, as torch's kernel picks it
    (``ties``); a row of distinct numbers has its smallest as mode."""
    fast = _arg_smallest(x, axis)
    return ties.along(x, axis, fast, lambda row: [ties.mode_row(row)[1]], nan=True)


def _lower_median(x: Array, axis: int) -> Array:
    """The index of the lower median along ``axis``; of the first nan where there is one
    (torch's median propagates nan)."""
    middle = np.take(_order(x, axis), [(x.shape[axis] - 1) // 2], axis=axis)
    nan = np.isnan(x)
    first_nan = _int64(np.argmax(nan, axis=axis, keepdims=True))
    return np.where(np.any(nan, axis=axis, keepdims=True), first_nan, middle)


def _running(x: Array, axis: int, largest: bool) -> Array:
    """cummax/cummin's indices: where the running extreme was last reached (a tie moves it on,
    as torch's kernel does); from the first nan on, the latest nan."""
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros(moved.shape, dtype=np.int64)
    if moved.shape[-1] == 0:
        return np.moveaxis(out, -1, axis)
    best, at = moved[..., 0], np.zeros(moved.shape[:-1], dtype=np.int64)
    for j in range(moved.shape[-1]):
        value = moved[..., j]
        with np.errstate(invalid="ignore"):
            reached = value >= best if largest else value <= best
        take = np.isnan(value) | (~np.isnan(best) & reached)
        best, at = np.where(take, value, best), np.where(take, j, at)
        out[..., j] = at
    return np.moveaxis(out, -1, axis)


def _indices(fn: Callable[..., Array], x: Tensor, axis: int) -> Tensor:
    """Indices computed from ``x`` along ``axis`` (a mask: recomputed at each point)."""
    return P.mask(fn, x, axis=axis)


# -- helpers ------------------------------------------------------------------------------------


def _vector(x: Tensor, dim: int | None, name: str) -> tuple[Tensor, int, tuple[int, ...]]:
    """``x`` with at least one dim, the dim (non-negative) and ``x``'s own shape: a 0-d tensor
    is one element along its dim 0 or -1, as in torch."""
    shape = x.shape
    if dim is None:
        return RA.reshape(x, -1), 0, shape
    axis = _axes(int(dim), x.ndim)
    if x.ndim == 0:
        return RA.reshape(x, 1), 0, shape
    return x, axis[0], shape


def _nonempty(x: Tensor, axis: int, name: str) -> None:
    if x.shape[axis] == 0:
        raise ShapeError(
            f"{name}(): expected reduction dim {axis} to have non-zero size (shape {x.shape})"
        )


def _shaped(t: Tensor, shape: tuple[int, ...], axis: int, keepdim: bool, full: bool) -> Tensor:
    """A result taken along ``axis`` of the (at least 1-d) input, in torch's shape: 0-d for a
    0-d input, the dim removed unless ``keepdim``; for a reduction of all elements (``full``)
    every dim kept as 1 or none."""
    if full:
        return RA.reshape(t, (1,) * len(shape) if keepdim else ())
    if not shape:
        return RA.reshape(t, ())
    return t if keepdim else RA.reshape(t, t.shape[:axis] + t.shape[axis + 1 :])


def _along(
    x: Operand, dim: int | None, keepdim: bool, fn: Callable[..., Array], name: str, output: Output
) -> Tensor:
    """(values, indices) of a reduction that selects one element along ``dim``: ``fn`` gives
    its index (the dim kept)."""
    x = _tensor(x)
    flat, axis, shape = _vector(x, dim, name)
    _nonempty(flat, axis, name)
    index = _indices(fn, flat, axis)
    picked = index if _which(output, 2, name) else take_along(flat, index, axis)
    return _shaped(picked, shape, axis, keepdim, dim is None)


def _no_formula(what: str) -> str:
    return f"{what} depends on the order of the values, which has no formula"


_INDICES_KINK = "an index carries no gradient (int64)"


def _index_explain(slot: Any) -> str:
    if slot.params.get("output", _FIRST)[0]:
        return "0 (an index: no gradient)"
    return f"1 where {slot.node} takes {slot.wrt}[i] (the index returned), else 0"


_SELECTED = X.per_element(_index_explain)


# -- max and min --------------------------------------------------------------------------------

_EXTREME = (
    Param("input", TENSOR),
    Param("dim", OPT_INT, None),
    Param("keepdim", BOOL, False),
    _PICK,
)


def _by_dim(name: str, whole: int = 1, along: int = 0) -> Callable[[list[Any]], str]:
    """torch's node for max/min/median: of all elements (dim None) or along a dim."""
    return lambda args: f"{name}Backward{whole if args[1] is None else along}"


def _extreme_entry(name: str, pairwise: str, extreme: str, index: str) -> None:
    register(
        Op(
            name,
            f"the {extreme} element; along dim, (values, indices); of two tensors, {pairwise}",
            params=_EXTREME,
            methods=(name,),
            backward_name=_by_dim(name.capitalize()),
            symbolic=S.PIECEWISE,
            explain=_SELECTED,
            kink=f"{name}(x): ties share the gradient evenly; along dim: the index is the first "
            f"{extreme} (nan counts as {extreme}), and the gradient goes to it; "
            f"{name}(x, other) is {pairwise}",
            extra={
                "outputs": ("values", "indices"),
                "several_unless_none": "dim",
                "binary": pairwise,
                "index": index,
            },
        )
    )


_extreme_entry("max", "maximum", "largest", "argmax")
_extreme_entry("min", "minimum", "smallest", "argmin")


def _extreme_call(
    name: str,
    pairwise: Callable[[Operand, Operand], Tensor],
    whole: Callable[[Operand], Tensor],
    index: Callable[[Array, int], Array],
    function: str,
    doc: str,
) -> Callable[..., Tensor]:
    """The call of max or min (named ``function``): of two tensors ``pairwise`` (maximum),
    of all elements ``whole`` (amax), along ``dim`` the values or the indices by ``index``."""

    def call(
        input: Operand,
        dim: int | Operand | None = None,
        keepdim: bool = False,
        output: Output = _FIRST,
    ) -> Tensor:
        if isinstance(dim, (Tensor, np.ndarray, float)) and not isinstance(dim, bool):
            return pairwise(input, dim)
        if dim is None and not _which(output, 1, name):
            return whole(input)
        return _along(input, dim, keepdim, index, name, output)

    return made_public(name, call, function, doc)


largest = _extreme_call(
    "max",
    EL.maximum,
    RD.largest_of_all,
    _arg_largest,
    "largest",
    """The largest element (ties share the gradient); along ``dim`` the values or (output
    (1, ...)) the indices; of two tensors, ``maximum``.""",
)
smallest = _extreme_call(
    "min",
    EL.minimum,
    RD.smallest_of_all,
    _arg_smallest,
    "smallest",
    """The smallest element (ties share the gradient); along ``dim`` the values or (output
    (1, ...)) the indices; of two tensors, ``minimum``.""",
)


# -- argmax and argmin ----------------------------------------------------------------------------


def _arg_entry(name: str, extreme: str) -> None:
    register(
        Op(
            name,
            f"the index of the {extreme} element (of the flattened input), or along dim",
            params=(
                Param("input", TENSOR),
                Param("dim", OPT_INT, None),
                Param("keepdim", BOOL, False),
            ),
            methods=(name,),
            differentiable=False,
            symbolic="an index is an integer, with no derivative",
            explain=X.per_element(lambda slot: "0 (an index: no gradient)"),
            kink=f"the first {extreme} of ties (nan counts as {extreme}); {_INDICES_KINK}",
        )
    )


_arg_entry("argmax", "largest")
_arg_entry("argmin", "smallest")


@public("argmax")
def argmax(input: Operand, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the largest element (the first of ties), int64."""
    return _along(input, dim, keepdim, _arg_largest, "argmax", (1, 0))


@public("argmin")
def argmin(input: Operand, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the smallest element (the first of ties), int64."""
    return _along(input, dim, keepdim, _arg_smallest, "argmin", (1, 0))


# -- sort, argsort, topk, kthvalue, median --------------------------------------------------------

_SORT = (
    Param("input", TENSOR),
    Param("dim", INT, -1),
    Param("descending", BOOL, False),
    Param("stable", BOOL, False),
)
_STABLE = (
    "ties keep their order with stable=True, and in a row of up to 16 elements; in a longer row "
    "with stable=False, equal values come in the order torch's CPU sort (the C++ library's "
    "introsort, replayed step by step) leaves them; nan is largest"
)
register(
    Op(
        "sort",
        "(values, indices): the elements along dim in order",
        params=(*_SORT, _PICK),
        methods=("sort",),
        backward_name="SortBackward0",
        symbolic=_no_formula("the order"),
        explain=_SELECTED,
        kink=f"{_STABLE}; the gradient goes to the index each value came from",
        extra={"outputs": ("values", "indices")},
    )
)
register(
    Op(
        "argsort",
        "the indices that sort the elements along dim",
        params=_SORT,
        methods=("argsort",),
        differentiable=False,
        symbolic="an index is an integer, with no derivative",
        explain=X.per_element(lambda slot: "0 (an index: no gradient)"),
        kink=f"{_STABLE}; {_INDICES_KINK}",
    )
)


def _sorted_along(
    x: Operand, dim: int, fn: Callable[..., Array], name: str, output: Output, count: int = 2
) -> Tensor:
    """(values, indices) along ``dim`` in the order ``fn`` gives (its indices, dim kept)."""
    x = _tensor(x)
    flat, axis, shape = _vector(x, dim, name)
    index = _indices(fn, flat, axis)
    picked = index if _which(output, count, name) else take_along(flat, index, axis)
    return RA.reshape(picked, ()) if not shape else picked


@public("sort")
def sort(
    input: Operand,
    dim: int = -1,
    descending: bool = False,
    stable: bool = False,
    output: Output = _FIRST,
) -> Tensor:
    """The values (output (0, ...)) or indices (output (1, ...)) of a sort along dim (stable,
    or among ties torch's CPU order)."""
    order = partial(_sort_order, descending=descending, stable=stable)
    return _sorted_along(input, dim, order, "sort", output)


@public("argsort")
def argsort(
    input: Operand, dim: int = -1, descending: bool = False, stable: bool = False
) -> Tensor:
    """The indices of a sort along dim (stable, or among ties torch's CPU order), int64."""
    order = partial(_sort_order, descending=descending, stable=stable)
    return _sorted_along(input, dim, order, "argsort", (1, 0))


_SELECTION_KINK = (
    "with ties, the index is the one torch's CPU kernel gives (its selection algorithm replayed "
    "step by step, not always the first of the equal elements), and the gradient goes to it"
)
# torch's median kernel breaks ties by index: its element is the one at that rank in a stable sort
_MEDIAN_KINK = (
    "with ties, the index is that of the element at the median's rank in a stable sort (as "
    "torch's CPU kernel, which orders equal values by index), and the gradient goes to it"
)
register(
    Op(
        "topk",
        "(values, indices): the k largest (or smallest) elements along dim, in order",
        params=(
            Param("input", TENSOR),
            Param("k", INT),
            Param("dim", INT, -1),
            Param("largest", BOOL, True),
            Param("sorted", BOOL, True),
            _PICK,
        ),
        methods=("topk",),
        backward_name="TopkBackward0",
        symbolic=_no_formula("which elements are largest"),
        explain=_SELECTED,
        kink=f"{_SELECTION_KINK}; with sorted=False the order torch's kernel leaves; nan is "
        "largest",
        extra={"outputs": ("values", "indices")},
    )
)


@public("topk")
def topk(
    input: Operand,
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,
    output: Output = _FIRST,
) -> Tensor:
    """The k largest (smallest: largest=False) values along dim, or their indices."""
    x = _tensor(input)
    n = x.shape[_axes(int(dim), x.ndim)[0]] if x.ndim else 1
    if not 0 <= k <= n:
        raise ShapeError(f"topk: selected index k ({k}) out of range for dim {dim} of size {n}")
    order = partial(_first_k, k=k, largest=largest, ordered=sorted)
    return _sorted_along(x, dim, order, "topk", output)


_KTH = (
    Param("input", TENSOR),
    Param("k", INT),
    Param("dim", INT, -1),
    Param("keepdim", BOOL, False),
)
register(
    Op(
        "kthvalue",
        "(values, indices): the k-th smallest element along dim",
        params=(*_KTH, _PICK),
        methods=("kthvalue",),
        backward_name="KthvalueBackward0",
        symbolic=_no_formula("which element is the k-th"),
        explain=_SELECTED,
        kink=f"{_SELECTION_KINK}; nan is largest",
        extra={"outputs": ("values", "indices")},
    )
)


@public("kthvalue")
def kthvalue(
    input: Operand, k: int, dim: int = -1, keepdim: bool = False, output: Output = _FIRST
) -> Tensor:
    """The k-th smallest value along dim (k from 1), or its index."""
    x = _tensor(input)
    n = x.shape[_axes(int(dim), x.ndim)[0]] if x.ndim else 1
    if not 1 <= k <= n:
        raise ShapeError(
            f"kthvalue: selected number k ({k}) out of range for dim {dim} of size {n}"
        )
    return _along(x, dim, keepdim, partial(_kth, k=k), "kthvalue", output)


register(
    Op(
        "mode",
        "(values, indices): the most frequent value along dim (the smallest of those as "
        "frequent), and an index of it",
        params=(
            Param("input", TENSOR),
            Param("dim", INT, -1),
            Param("keepdim", BOOL, False),
            _PICK,
        ),
        methods=("mode",),
        backward_name="ModeBackward0",
        symbolic=_no_formula("which value is most frequent"),
        explain=_SELECTED,
        kink="the index is the one torch's CPU kernel gives: the last of the value's run in its "
        "sort (the C++ library's introsort, replayed step by step), which in a row of up to 16 "
        "elements is the value's last index; the gradient goes to it; a nan equals nothing (a "
        "run of its own), placed in the sort where torch's comparisons place it",
        extra={"outputs": ("values", "indices")},
    )
)


@public("mode")
def mode(input: Operand, dim: int = -1, keepdim: bool = False, output: Output = _FIRST) -> Tensor:
    """The most frequent value along dim (the smallest of the most frequent), or its index."""
    return _along(input, dim, keepdim, _mode_index, "mode", output)


def _same(x: Array, value: Array) -> Array:
    return np.asarray((x == value) | (np.isnan(x) & np.isnan(value)))


def _hit_count(x: Array, value: Array, axis: int) -> Array:
    return np.asarray(np.sum(_same(x, value), axis=axis, keepdims=True), dtype=x.dtype)


def _evenly(x: Tensor, value: Tensor) -> Tensor:
    """``value`` (a 1-element selection of the vector ``x``, without a gradient), with the
    gradient shared evenly among the elements equal to it (torch's rule for max(), median()):
    value + sum((x - value) where equal) / count, whose added term is exactly 0."""
    hits = P.mask(_same, x, value)
    count = P.mask(_hit_count, x, value, axis=0)
    spread = RD.sum(P.where(hits, P.sub(x, value), 0.0), 0, keepdim=True)
    return P.add(value, P.div(spread, count))


def _median_family(
    name: str, summary: str, kink: str, lower: Callable[[Array, int], Array], doc: str
) -> Callable[..., Tensor]:
    """Declare ``name`` (median, nanmedian), whose ``lower(x, axis)`` is the index of the
    median along ``axis``: of all elements, the value with ties sharing the gradient evenly;
    along dim, its values or (output (1, ...)) indices."""
    register(
        Op(
            name,
            summary,
            params=(
                Param("input", TENSOR),
                Param("dim", OPT_INT, None),
                Param("keepdim", BOOL, False),
                _PICK,
            ),
            methods=(name,),
            backward_name=_by_dim(name.capitalize(), 0, 1),
            symbolic=_no_formula("the median"),
            explain=_SELECTED,
            kink=kink,
            extra={"outputs": ("values", "indices"), "several_unless_none": "dim"},
        )
    )

    def value(x: Array, axis: int) -> Array:
        return np.take_along_axis(x, lower(x, axis), axis=axis)

    def call(
        input: Operand, dim: int | None = None, keepdim: bool = False, output: Output = _FIRST
    ) -> Tensor:
        x = _tensor(input)
        if dim is None and not _which(output, 1, name):
            flat = RA.reshape(x, -1)
            _nonempty(flat, 0, name)
            return RA.reshape(_evenly(flat, P.mask(value, flat, axis=0)), ())
        return _along(x, dim, keepdim, lower, name, output)

    return made_public(name, call, name, doc)


median = _median_family(
    "median",
    "the lower median of all elements; along dim, (values, indices)",
    "of an even count the lower of the two middle values; nan if there is a nan (its index the "
    "first nan's); median(x): ties share the gradient evenly; along dim: " + _MEDIAN_KINK,
    _lower_median,
    """The lower median of all elements (ties share the gradient), or along dim its values
    or (output (1, ...)) indices.""",
)


def _lower_nanmedian(x: Array, axis: int) -> Array:
    """The index of the lower median of the values that are not nan along ``axis`` (of the
    first nan where all are nan)."""
    order = _order(x, axis)  # nan last
    valid = np.sum(~np.isnan(x), axis=axis, keepdims=True)
    return np.take_along_axis(order, np.maximum(valid - 1, 0) // 2, axis=axis)


nanmedian = _median_family(
    "nanmedian",
    "median ignoring nan: of all elements; along dim, (values, indices)",
    "the lower median of the values that are not nan (nan where all are: its index the first "
    "nan's, torch's is not specified); nanmedian(x): ties share the gradient evenly; along "
    "dim: " + _MEDIAN_KINK,
    _lower_nanmedian,
    "median, ignoring nan.",
)


# -- cummax, cummin -----------------------------------------------------------------------------


def _running_explain(extreme: str, largest: bool) -> Callable[[Any, Any], Any]:
    """explain's rule of cummax/cummin: d out[..., i] / d x[..., j] along dim, 1 where j is
    the index of the running extreme at i; one n x n block per slice."""

    def rule(slot: Any, vary: Any) -> tuple[str, str, str, Any]:
        from ...base import bounds

        dim = slot.params["dim"]
        x = (
            np.moveaxis(slot.arrays[0], dim, -1)
            if slot.arrays[0].ndim
            else slot.arrays[0].reshape(1)
        )
        left = f"{X.d(slot.node)}[i]/{X.d(slot.wrt)}[j]"
        formula = (
            f"1 where j is where the running {extreme} at i was reached{X.along(slot)}, else 0"
        )
        n = x.shape[-1]
        if x.size * n > min(X.BLOCK_ENTRIES, bounds.limits().max_elements):
            shape = (*x.shape, n)
            return (
                left,
                f"{formula}; its blocks, shape {shape}, are too large to show",
                "jacobian blocks",
                None,
            )
        index = _running(x, -1, largest)
        return left, formula, "jacobian blocks", (index[..., :, None] == np.arange(n)).astype(float)

    return rule


def _running_entry(name: str, extreme: str, largest: bool) -> None:
    register(
        Op(
            name,
            f"(values, indices): the running {extreme} element along dim",
            params=(Param("input", TENSOR), Param("dim", INT), _PICK),
            methods=(name,),
            backward_name=f"{name.capitalize()}Backward0",
            symbolic=_no_formula(f"the running {extreme}"),
            explain=_running_explain(extreme, largest),
            kink="a tie moves the index on to the latest equal element (torch's); from a nan on, "
            "the values are nan and the index the latest nan's; the gradient goes to the index",
            extra={"outputs": ("values", "indices")},
        )
    )

    @public(name)
    def running(input: Operand, dim: int, output: Output = _FIRST) -> Tensor:
        fn = partial(_running, largest=largest)
        return _sorted_along(input, dim, fn, name, output)

    running.__name__ = running.__qualname__ = name
    running.__doc__ = f"The running {extreme} along dim, or where it was reached (int64)."


_running_entry("cummax", "largest", True)
_running_entry("cummin", "smallest", False)


# -- var_mean, std_mean ---------------------------------------------------------------------------


def _moments_entry(name: str, spread: str) -> None:
    spread_op, mean_op = OPS[spread], OPS["mean"]

    def symbolic(x: Array, dim: Any = None, unbiased: Any = None, keepdim: bool = False,
                 correction: Any = None, output: Output = _FIRST) -> Array:  # fmt: skip
        if output[0]:
            return S.mean(x, dim, keepdim)
        assert callable(spread_op.symbolic)
        return np.asarray(spread_op.symbolic(x, dim, unbiased, keepdim, correction), dtype=object)

    def explain(slot: Any, vary: Any) -> Any:
        rule = (mean_op if slot.params.get("output", _FIRST)[0] else spread_op).explain
        assert rule is not None
        return rule(slot, vary)

    register(
        Op(
            name,
            f"({spread}, mean) of all elements or along dim",
            params=(*spread_op.params, _PICK),
            backward_name=f"{spread.capitalize()}MeanBackward0",
            symbolic=symbolic,
            explain=explain,
            nonfinite=spread_op.nonfinite,
            nonfinite_backward=spread_op.nonfinite_backward,
            kink=f"as {spread} and mean",
            extra={"outputs": (spread, "mean"), "plain": True},
        )
    )

    @public(name)
    def moments(
        input: Operand,
        dim: Any = None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        correction: float | None = None,
        output: Output = _FIRST,
    ) -> Tensor:
        picked = int(_which(output, 2, name))
        if picked:
            x = _tensor(input)
            result = RD.mean(x, None if isinstance(dim, bool) else dim, keepdim)
        else:
            assert spread_op.call is not None
            result = spread_op.call(input, dim, unbiased, keepdim, correction)
        # torch's var_mean is Welford's update in double: both values rounded from it
        torch_values = _statistics.spread_like_torch(
            input, dim, unbiased, keepdim, correction, spread, True
        )
        if torch_values is not None and torch_values[picked].shape == result.data.shape:
            result.data[...] = torch_values[picked]
        return result

    moments.__name__ = moments.__qualname__ = name
    moments.__doc__ = f"({spread}, mean): the {spread} (output (0, ...)) or the mean (1, ...)."


_moments_entry("var_mean", "var")
_moments_entry("std_mean", "std")


# -- split, chunk, unbind -------------------------------------------------------------------------


def _pieces(size: int, sections: int | Sequence[int], name: str) -> list[tuple[int, int]]:
    """(start, length) of each piece of a dim of ``size``: pieces of ``sections`` elements
    (the last smaller), or of the given lengths."""
    if isinstance(sections, int):
        if sections <= 0 and not (sections == 0 and size == 0):
            raise DomainError(f"{name} expects split_size be non-negative, but got {sections}")
        step = sections or 1
        count = max(1, -(-size // step))
        return [(i * step, min(step, size - i * step)) for i in range(count)]
    lengths = [int(n) for n in sections]
    if any(n < 0 for n in lengths) or sum(lengths) != size:
        raise ShapeError(
            f"{name} expects split_sizes to sum exactly to {size} (the dim's size), "
            f"but got split_sizes={lengths}"
        )
    starts = np.cumsum([0, *lengths[:-1]]).tolist()
    return list(zip(starts, lengths))


def _piece(x: Tensor, axis: int, start: int, length: int) -> Tensor:
    return RA.getitem(x, (slice(None),) * axis + (slice(start, start + length),))


def _split_symbolic(x: Array, sections: Any, dim: int = 0, output: Output = _FIRST) -> Array:
    axis = dim % x.ndim
    pieces = _pieces(x.shape[axis], sections, "split")
    start, length = pieces[_which(output, len(pieces), "split")]
    return x[(slice(None),) * axis + (slice(start, start + length),)]


def _chunk_sections(size: int, chunks: int) -> int:
    if chunks <= 0:
        raise DomainError(f"chunk expects chunks to be greater than 0, got: {chunks}")
    return -(-size // chunks) if size else 0


def _chunk_symbolic(x: Array, chunks: int, dim: int = 0, output: Output = _FIRST) -> Array:
    axis = dim % x.ndim
    return _split_symbolic(x, _chunk_sections(x.shape[axis], chunks), axis, output)


def _unbind_symbolic(x: Array, dim: int = 0, output: Output = _FIRST) -> Array:
    axis = dim % x.ndim
    k = _which(output, x.shape[axis], "unbind")
    return np.asarray(x[(slice(None),) * axis + (k,)], dtype=object)


def _split_count(tensor: Operand, sections: Any, dim: int = 0) -> int:
    x = _tensor(tensor)
    axis = _along_dim(x, dim, "split")
    return len(
        _pieces(x.shape[axis], sections if isinstance(sections, int) else list(sections), "split")
    )


def _chunk_count(input: Operand, chunks: int, dim: int = 0) -> int:
    x = _tensor(input)
    size = x.shape[_along_dim(x, dim, "chunk")]
    return len(_pieces(size, _chunk_sections(size, chunks), "chunk"))


def _unbind_count(input: Operand, dim: int = 0) -> int:
    x = _tensor(input)
    return x.shape[_along_dim(x, dim, "unbind")]


def _along_dim(x: Tensor, dim: int, name: str) -> int:
    if x.ndim == 0:
        raise ShapeError(f"{name}: a 0-d tensor has no dim to take pieces along")
    return _axes(int(dim), x.ndim)[0]


register(
    Op(
        "split",
        "the pieces of input along dim: of split_size elements each (the last smaller), or of "
        "the sizes listed",
        params=(
            Param("tensor", TENSOR),
            Param("split_size_or_sections", SECTIONS),
            Param("dim", INT, 0),
            _PICK,
        ),
        methods=("split",),
        backward_name=lambda args: (
            "SplitWithSizesBackward0" if isinstance(args[1], (list, tuple)) else "SplitBackward0"
        ),
        symbolic=_split_symbolic,
        explain=X.PICKED,
        kink="each piece is an ordinary tensor; the gradient of the input is the sum of theirs",
        extra={"plain": True, "count": _split_count},
    )
)
register(
    Op(
        "chunk",
        "the input in chunks pieces along dim (as split with ceil(size / chunks) elements)",
        params=(Param("input", TENSOR), Param("chunks", INT), Param("dim", INT, 0), _PICK),
        methods=("chunk",),
        backward_name="SplitBackward0",
        symbolic=_chunk_symbolic,
        explain=X.PICKED,
        kink="fewer than chunks pieces where the size does not divide, as torch",
        extra={"plain": True, "count": _chunk_count},
    )
)
register(
    Op(
        "unbind",
        "the slices of input along dim, that dim removed",
        params=(Param("input", TENSOR), Param("dim", INT, 0), _PICK),
        methods=("unbind",),
        backward_name="UnbindBackward0",
        symbolic=_unbind_symbolic,
        explain=X.PICKED,
        kink="each slice is an ordinary tensor; the gradient of the input is the sum of theirs",
        extra={"plain": True, "count": _unbind_count},
    )
)


@public("split")
def split(
    tensor: Operand, split_size_or_sections: Any, dim: int = 0, output: Output = _FIRST
) -> Tensor:
    """One piece of ``tensor`` along ``dim`` (output (k, ...): the k-th)."""
    x = _tensor(tensor)
    axis = _along_dim(x, dim, "split")
    sections = split_size_or_sections
    pieces = _pieces(
        x.shape[axis], sections if isinstance(sections, int) else list(sections), "split"
    )
    start, length = pieces[_which(output, len(pieces), "split")]
    return _piece(x, axis, start, length)


@public("chunk")
def chunk(input: Operand, chunks: int, dim: int = 0, output: Output = _FIRST) -> Tensor:
    """One of the chunks of ``input`` along ``dim``."""
    x = _tensor(input)
    axis = _along_dim(x, dim, "chunk")
    pieces = _pieces(x.shape[axis], _chunk_sections(x.shape[axis], chunks), "chunk")
    start, length = pieces[_which(output, len(pieces), "chunk")]
    return _piece(x, axis, start, length)


@public("unbind")
def unbind(input: Operand, dim: int = 0, output: Output = _FIRST) -> Tensor:
    """The k-th slice of ``input`` along ``dim`` (that dim removed)."""
    x = _tensor(input)
    axis = _along_dim(x, dim, "unbind")
    k = _which(output, x.shape[axis], "unbind")
    return RA.getitem(x, (slice(None),) * axis + (k,))


def results(op: Op, args: Sequence[Any]) -> list[Tensor]:
    """Every result of a call of ``op`` (an operation with several) on ``args`` (in signature
    order, without the output), as torch's call returns them."""
    assert op.call is not None
    count = op.extra["count"](*args) if "count" in op.extra else len(op.outputs)
    return [op.call(*args, output=(k, 0)) for k in range(count)]
