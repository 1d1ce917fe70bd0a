"""Indexing by tensors: ``x[idx]``, ``x[mask]``, ``x[:, [0, 2]]``, and torch's gathering and
scattering operations (``gather``, ``scatter``, ``scatter_add``, ``index_select``,
``index_add``, ``take_along_dim``, ``masked_select``), with ``one_hot``, ``nonzero`` and
``argwhere``, which make integer tensors and carry no gradient.

Two primitives do the work. ``index`` is ``x[items]`` where some items are tensor operands
(integer indices or boolean masks): as operands, a traced program replays them at each point
(a mask computed from the inputs is computed again there). Its adjoint is ``index_put``:
zeros with values added at the index (repeated indices add up), or written (``accumulate``
False: scatter's overwrite, the last write kept, as torch's kernel does on the CPU). The other
operations are composites of those two with fixed integer grids for the dims they do not
index, so their gradients come for free: a gather's cotangent is scattered back, adding where
an index repeats; index arguments get no gradient.

A layout is the index as a tuple: integers, slices, None, Ellipsis, fixed integer arrays or
tuples of integers (a list written in the program, ``x[:, [0, 2]]``), and ``SLOT`` for each
tensor operand in turn. Indices must hold whole numbers (gradcli's inputs are floating, so a
floating tensor of whole numbers is taken as int64) and lie within their dimension; a boolean
mask must have the shape of the dims it covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import IndexDomainError, ShapeError
from ...engine import sizes
from ...engine.tensor import Tensor, TensorLike, apply
from .. import batching as B
from .. import explaining as X
from .. import primitives as P
from ..nn.composites import _composite
from ..table import BOOL, INT, NUMBER, OPT_INT, TENSOR, Array, Op, Param, public, register
from . import rearranging as RA

SLOT = "_tensor"  # a layout item standing for the next tensor operand
Layout = tuple[Any, ...]
_NO_SYMBOLIC = "no symbolic form: the indices are values of the run, not formulas"
_INTEGER = "the result holds integers, which carry no gradient (as in PyTorch)"


# -- layouts ------------------------------------------------------------------------------------


def _index_array(array: Any) -> Array:
    """An index operand as numpy indexes with: a boolean mask, or int64 indices."""
    values = np.asarray(array)
    if values.dtype == np.bool_:
        return values
    if values.dtype.kind in "iu":
        return values.astype(np.int64, copy=False)
    if values.dtype.kind == "f" and np.all(values == np.round(values)):
        return values.astype(np.int64)
    raise IndexDomainError(
        "tensors used as indices must be long, int or bool tensors (or hold whole numbers), "
        f"got {values.dtype} values that are not whole numbers"
    )


def _items(layout: Layout, arrays: Sequence[Any]) -> list[Any]:
    operands = iter(arrays)
    items: list[Any] = []
    for item in layout:
        if isinstance(item, str) and item == SLOT:
            items.append(_index_array(next(operands)))
        elif isinstance(item, tuple):  # a list of the program: x[:, [0, 2]]
            written = np.asarray(item)
            items.append(written if written.dtype == np.bool_ else written.astype(np.int64))
        else:
            items.append(item)
    return items


def _assemble(layout: Layout, arrays: Sequence[Any], shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The numpy index of ``layout`` with its tensor operands, checked against ``shape``."""
    items = _items(layout, arrays)
    consumed = sum(
        (i.ndim if i.dtype == np.bool_ else 1)
        if isinstance(i, np.ndarray)
        else (0 if i is None or i is Ellipsis else 1)
        for i in items
    )
    if consumed > len(shape):
        raise IndexDomainError(
            f"too many indices for a tensor of dimension {len(shape)} ({consumed} given)"
        )
    axis = 0
    for item in items:
        if item is None:
            continue
        if item is Ellipsis:
            axis += len(shape) - consumed
            continue
        if isinstance(item, np.ndarray) and item.dtype == np.bool_:
            covered = shape[axis : axis + item.ndim]
            if item.shape != covered:
                raise IndexDomainError(
                    f"the shape of the mask {list(item.shape)} at index {axis} does not match "
                    f"the shape of the indexed tensor {list(covered)}"
                )
            axis += item.ndim
            continue
        size = shape[axis]
        values = np.asarray(item)
        if values.dtype.kind in "iu" and values.size:
            outside = (values < -size) | (values >= size)
            if np.any(outside):
                raise IndexDomainError(
                    f"index {int(values[outside].flat[0])} is out of bounds for dimension "
                    f"{axis} with size {size}"
                )
        axis += 1
    return tuple(items)


def _point_by_point(
    forward: B.Forward,
    params: B.Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    size: int,
) -> Array:
    """A step whose indices vary with the point: computed at each point, then stacked (when
    the points' results differ in shape, the caller replays each point alone)."""
    from ...engine.compile import NotBatchable

    rows = [
        forward(*[v[i] if b else v for v, b in zip(values, batched)], **params) for i in range(size)
    ]
    if len({np.shape(r) for r in rows}) > 1:
        raise NotBatchable("the shape of the result differs from one point to the next")
    return np.stack(rows)


# -- index and index_put: the primitives ------------------------------------------------------


def _index_forward(x: Array, *arrays: Array, layout: Layout) -> Array:
    picked: Array = x[_assemble(layout, arrays, x.shape)]
    return picked


def _index_put_forward(
    g: Array, *arrays: Array, layout: Layout, shape: tuple[int, ...], accumulate: bool
) -> Array:
    out = np.zeros(shape, dtype=g.dtype)
    where = _assemble(layout, arrays, shape)
    if accumulate:
        np.add.at(out, where, g)  # repeated indices add up
    else:
        out[where] = g  # repeated indices: the last write stays
    return out


def _index_batch(
    forward: B.Forward,
    params: B.Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    if any(batched[1:]):
        return _point_by_point(forward, params, values, batched, size)
    where = _assemble(params["layout"], values[1:], values[0].shape[1:])
    return B.getitem(forward, {"index": where}, values[:1], batched[:1], ranks[:1], size)


def _index_put_batch(
    forward: B.Forward,
    params: B.Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    if any(batched[1:]):
        return _point_by_point(forward, params, values, batched, size)
    shape = tuple(params["shape"])
    where = _assemble(params["layout"], values[1:], shape)
    picked = np.zeros(shape, dtype=bool)[where].shape  # the value broadcast to it
    g = values[0] if batched[0] else values[0][None]
    per_point = g.shape[1:]
    g = g.reshape(g.shape[0], *(1,) * (len(picked) - len(per_point)), *per_point)
    g = np.broadcast_to(g, (size, *picked))
    out = np.zeros((size, *shape), dtype=g.dtype)
    target = (slice(None), *where)
    moved = np.moveaxis(g, 0, B._advanced_lead(where))
    if params["accumulate"]:
        np.add.at(out, target, moved)
    else:
        out[target] = moved
    return out


def _data_shape(arrays: Sequence[Array], params: dict[str, Any]) -> list[int]:
    """The operands whose values decide the shape of the result: the masks."""
    return [i for i, a in enumerate(arrays) if i and np.asarray(a).dtype == np.bool_]


def _index_vjp(
    g: Tensor, out: Tensor, x: Tensor, *arrays: Tensor, needs: tuple[bool, ...], layout: Layout
) -> tuple[Tensor | None, ...]:
    added = put(g, arrays, layout, x.shape, True) if needs[0] else None
    return (added, *[None] * len(arrays))


def _index_jvp(
    tangents: Sequence[Tensor | None], out: Tensor, x: Tensor, *arrays: Tensor, layout: Layout
) -> Tensor:
    tangent = tangents[0]
    return P.zeros_like(out) if tangent is None else indexed(tangent, arrays, layout)


def _index_put_vjp(
    g: Tensor,
    out: Tensor,
    value: Tensor,
    *arrays: Tensor,
    needs: tuple[bool, ...],
    layout: Layout,
    shape: tuple[int, ...],
    accumulate: bool,
) -> tuple[Tensor | None, ...]:
    # written (not added), each value written gets the cotangent where it went, as torch's
    # scatter gives every src element gather(grad) even where an index repeats; a value
    # broadcast to the index (y[mask] = 0) gets the sum
    if not needs[0]:
        return (None, *[None] * len(arrays))
    picked = indexed(g, arrays, layout)
    back = picked if picked.shape == value.shape else P.sum_to(picked, value.shape)
    return (back, *[None] * len(arrays))


def _index_put_jvp(
    tangents: Sequence[Tensor | None],
    out: Tensor,
    value: Tensor,
    *arrays: Tensor,
    layout: Layout,
    shape: tuple[int, ...],
    accumulate: bool,
) -> Tensor:
    tangent = tangents[0]
    if tangent is None:
        return P.zeros_like(out)
    return put(tangent, arrays, layout, shape, accumulate)


_INDEX = register(
    Op(
        "index_tensor",
        "x[index] with tensors in the index: integer indices, boolean masks",
        forward=_index_forward,
        size=lambda x, *arrays, layout: sizes.indexed_count(
            x.shape, _assemble(layout, arrays, x.shape)
        ),
        vjp=_index_vjp,
        jvp=_index_jvp,
        backward_name="IndexBackward0",
        batch=_index_batch,
        operator="[tensor]",
        symbolic=_NO_SYMBOLIC,
        explain=X.PICKED,
        kink="the indices get no gradient; an element picked more than once gets the sum",
        extra={"shape_from": _data_shape, "slot": SLOT},
    )
)
_INDEX_PUT = register(
    Op(
        "index_put",
        "zeros with values added (or written) at an index of tensors: index's adjoint",
        forward=_index_put_forward,
        vjp=_index_put_vjp,
        jvp=_index_put_jvp,
        backward_name="IndexPutBackward0",
        batch=_index_put_batch,
    )
)


def _layout_operands(rest: Sequence[Any]) -> tuple[list[Tensor], Layout]:
    """``index_tensor(x, *rest)``'s tensor operands and layout, as the language passes them: the
    operands first, then the layout's items."""
    count = sum(1 for r in rest if isinstance(r, Tensor))
    tensors = [r for r in rest[:count]]
    return tensors, tuple(rest[count:])


@public("index_tensor")
def index_call(x: TensorLike, *rest: Any) -> Tensor:
    """``x[items]`` as a program writes it: ``x[idx]``, ``x[x > 0]``, ``x[:, [0, 2]]``."""
    tensors, layout = _layout_operands(rest)
    return indexed(x, tensors, layout)


def indexed(x: TensorLike, arrays: Sequence[TensorLike], layout: Layout) -> Tensor:
    """``x[layout]``, each ``SLOT`` of ``layout`` taking the next of ``arrays``."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    operands = [a if isinstance(a, Tensor) else Tensor(np.asarray(a)) for a in arrays]
    if sum(1 for i in layout if isinstance(i, str) and i == SLOT) != len(operands):
        raise ShapeError("index: the layout and the index tensors do not match")
    return apply(_INDEX, x, *operands, layout=tuple(layout))


def put(
    value: TensorLike,
    arrays: Sequence[TensorLike],
    layout: Layout,
    shape: Sequence[int],
    accumulate: bool,
) -> Tensor:
    """Zeros of ``shape`` with ``value`` added (``accumulate``) or written at the index."""
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
    operands = [a if isinstance(a, Tensor) else Tensor(np.asarray(a)) for a in arrays]
    return apply(
        _INDEX_PUT,
        value,
        *operands,
        layout=tuple(layout),
        shape=tuple(shape),
        accumulate=accumulate,
    )


def check_written(value: tuple[int, ...], part: tuple[int, ...]) -> None:
    """Refuse writing a value of shape ``value`` into ``part`` (torch's message)."""
    try:
        fits = np.broadcast_shapes(value, part) == part
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(
            f"shape mismatch: value tensor of shape {list(value)} cannot be broadcast to "
            f"indexing result of shape {list(part)}"
        )


@public("setitem")
def setitem(x: TensorLike, value: TensorLike, *index: object) -> Tensor:
    """A copy of ``x`` with ``value`` (broadcast to ``x[index]``) at ``index``: integers,
    slices, None, Ellipsis, lists, or tensors (then the index's tensors come first, then its
    layout, as index_tensor's). The gradient of ``x`` is zero where it was overwritten."""
    if any(isinstance(item, Tensor) for item in index):
        return put_into(x, value, index)
    x = x if isinstance(x, Tensor) else Tensor(x)
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=x.dtype))
    where = RA._normalize_index(tuple(index))
    covered = np.zeros(x.shape, dtype=bool)
    try:
        covered[where] = True
    except IndexError as exc:
        raise IndexDomainError(f"the index does not fit the shape {x.shape}: {exc}") from None
    shape = x.data[where].shape
    check_written(value.shape, shape)
    placed = RA.getitem_backward(P.expand(value, shape), where, x.shape)
    return P.where(covered, placed, x)


def put_into(x: TensorLike, value: TensorLike, rest: Sequence[Any]) -> Tensor:
    """``x[index] = value`` with tensors in the index (torch's ``index_put_``, accumulate
    False): ``rest`` is the index's tensors, then its layout. Where an index repeats, the last
    write stays; every value still gets the gradient of its place, as torch's does."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=x.dtype))
    tensors, layout = _layout_operands(rest)
    operands = [t if isinstance(t, Tensor) else Tensor(np.asarray(t)) for t in tensors]
    where = _assemble(layout, [t.data for t in operands], x.shape)
    check_written(value.shape, np.zeros(x.shape, dtype=bool)[where].shape)
    placed = put(value, operands, layout, x.shape, False)
    covered = put(Tensor(np.ones((), dtype=bool)), operands, layout, x.shape, False)
    return P.where(covered, placed, x)


# -- helpers of the composites ------------------------------------------------------------------


def _tensor(value: TensorLike) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=np.float64))


def _indices(name: str, value: TensorLike) -> Tensor:
    """An index argument: a tensor of whole numbers (int64, or floating ones)."""
    found = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
    if found.dtype == np.bool_ or found.dtype.kind not in "iuf":
        raise IndexDomainError(f"{name}(): expected an int64 tensor for index, got {found.dtype}")
    _index_array(found.data)  # whole numbers
    return found


def _dim(name: str, dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise ShapeError(
            f"{name}(): dimension {dim} is out of range for a tensor of {ndim} dimension(s) "
            f"(expected a dim in [{-n}, {n - 1}])"
        )
    return dim % n


def _grid(dim: int, shape: tuple[int, ...]) -> Layout:
    """The layout that picks ``index[i, j, ...]`` along ``dim`` and ``i, j, ...`` elsewhere
    (gather's and scatter's): fixed integer grids of ``shape`` for every other dim."""
    ndim = len(shape)
    grids: list[Any] = []
    for d in range(ndim):
        if d == dim:
            grids.append(SLOT)
        else:
            sizes = [1] * ndim
            sizes[d] = shape[d]
            grids.append(np.arange(shape[d]).reshape(sizes))
    return tuple(grids)


def _along(dim: int) -> Layout:
    """The layout that indexes one dim with a vector: index_select's, index_add's."""
    return (*(slice(None),) * dim, SLOT)


def _same_rank(name: str, x: Tensor, index: Tensor, what: str = "self") -> None:
    if x.ndim != index.ndim:
        raise ShapeError(
            f"{name}(): index tensor must have the same number of dimensions as {what} tensor "
            f"(index has shape {index.shape}, {what} {x.shape})"
        )


def _fits(name: str, index: Tensor, x: Tensor, dim: int | None, what: str = "self") -> None:
    for d, (i, n) in enumerate(zip(index.shape, x.shape)):
        if d != dim and i > n:
            apart = "" if dim is None else f" apart from dimension {dim}"
            raise ShapeError(
                f"{name}(): size does not match at dimension {d}: expected index {index.shape} "
                f"to be no larger than {what} {x.shape}{apart}"
            )


def _scalar_safe(x: Tensor) -> Tensor:
    """A 0-d tensor as a vector of one element (torch treats it as one along dim 0)."""
    return RA.reshape(x, 1) if x.ndim == 0 else x


# -- gather, take_along_dim, index_select ------------------------------------------------------

_composite(
    "gather",
    "values of input along dim at index: out[i][j] = input[index[i][j]][j] (dim 0)",
    (
        Param("input", TENSOR),
        Param("dim", INT),
        Param("index", TENSOR),
        Param("sparse_grad", BOOL, False),
    ),
    methods=("gather",),
    symbolic=_NO_SYMBOLIC,
    explain=X.PICKED,
    backward_name="GatherBackward0",
    kink="index gets no gradient; an element gathered more than once gets the sum",
)


@public("gather")
def gather(input: TensorLike, dim: int, index: TensorLike, sparse_grad: bool = False) -> Tensor:
    """torch.gather: ``out[i][j][k] = input[i][index[i][j][k]][k]`` for dim 1."""
    x, idx = _tensor(input), _indices("gather", index)
    d = _dim("gather", dim, x.ndim)
    _same_rank("gather", x, idx)
    if x.ndim == 0:
        return RA.reshape(gather(RA.reshape(x, 1), 0, RA.reshape(idx, 1)), ())
    _fits("gather", idx, x, d)
    return indexed(x, [idx], _grid(d, idx.shape))


_composite(
    "take_along_dim",
    "input at indices along dim, broadcast (dim None: of the flattened input)",
    (Param("input", TENSOR), Param("indices", TENSOR), Param("dim", OPT_INT, None)),
    methods=("take_along_dim",),
    symbolic=_NO_SYMBOLIC,
    explain=X.PICKED,
    backward_name="GatherBackward0",
    kink="indices get no gradient; an element taken more than once gets the sum",
)


@public("take_along_dim")
def take_along_dim(input: TensorLike, indices: TensorLike, dim: int | None = None) -> Tensor:
    """torch.take_along_dim: gather along ``dim`` after broadcasting the other dims."""
    x, idx = _tensor(input), _indices("take_along_dim", indices)
    if dim is None:
        return gather(RA.reshape(x, -1), 0, RA.reshape(idx, -1))
    d = _dim("take_along_dim", dim, x.ndim)
    _same_rank("take_along_dim", x, idx, "input")
    if x.ndim == 0:
        return gather(x, 0, idx)
    try:
        common = list(
            np.broadcast_shapes(
                tuple(1 if i == d else n for i, n in enumerate(x.shape)),
                tuple(1 if i == d else n for i, n in enumerate(idx.shape)),
            )
        )
    except ValueError:
        raise ShapeError(
            f"take_along_dim(): input {x.shape} and indices {idx.shape} do not broadcast "
            f"apart from dimension {d}"
        ) from None
    x_shape, i_shape = list(common), list(common)
    x_shape[d], i_shape[d] = x.shape[d], idx.shape[d]
    if tuple(x_shape) != x.shape:
        x = P.expand(x, shape=tuple(x_shape))
    if tuple(i_shape) != idx.shape:
        idx = P.expand(idx, shape=tuple(i_shape))
    return gather(x, d, idx)


_composite(
    "index_select",
    "the entries of input at the positions of a vector index along dim",
    (Param("input", TENSOR), Param("dim", INT), Param("index", TENSOR)),
    methods=("index_select",),
    symbolic=_NO_SYMBOLIC,
    explain=X.PICKED,
    backward_name="IndexSelectBackward0",
    kink="index gets no gradient; an entry selected more than once gets the sum",
)


def _vector(name: str, index: Tensor) -> Tensor:
    if index.ndim > 1:
        raise ShapeError(f"{name}(): index is supposed to be a vector, got shape {index.shape}")
    return _scalar_safe(index)


@public("index_select")
def index_select(input: TensorLike, dim: int, index: TensorLike) -> Tensor:
    """torch.index_select: ``input`` at the positions ``index`` (a vector) along ``dim``."""
    x, idx = _tensor(input), _vector("index_select", _indices("index_select", index))
    d = _dim("index_select", dim, x.ndim)
    if x.ndim == 0:
        return RA.reshape(indexed(RA.reshape(x, 1), [idx], _along(0)), ())
    return indexed(x, [idx], _along(d))


# -- scatter, scatter_add, index_add ----------------------------------------------------------


def _scatter_operands(
    name: str, input: TensorLike, dim: int, index: TensorLike, src: TensorLike
) -> tuple[Tensor, int, Tensor, Tensor]:
    """Checked operands of scatter and scatter_add; ``src`` cut to the shape of index (a
    number ``src`` is scatter's value, spread over it)."""
    x, idx = _tensor(input), _indices(name, index)
    d = _dim(name, dim, x.ndim)
    _same_rank(name, x, idx)
    if isinstance(src, Tensor):
        _same_rank(name, src, idx, "src")
        _fits(name, idx, src, None, "src")
        cut = RA.getitem(src, tuple(slice(0, n) for n in idx.shape))
    else:
        cut = P.expand(Tensor(np.asarray(src, dtype=x.dtype)), shape=idx.shape)
    _fits(name, idx, x, d)
    return x, d, idx, cut


def _scattered(x: Tensor, d: int, idx: Tensor, cut: Tensor, accumulate: bool) -> Tensor:
    if x.ndim == 0:
        shape: tuple[int, ...] = (1,)
        flat = put(RA.reshape(cut, 1), [RA.reshape(idx, 1)], _grid(0, (1,)), shape, accumulate)
        return RA.reshape(flat, ())
    return put(cut, [idx], _grid(d, idx.shape), x.shape, accumulate)


_SCATTER = (
    Param("input", TENSOR),
    Param("dim", INT),
    Param("index", TENSOR),
    Param("src", TENSOR),
)
_composite(
    "scatter",
    "input with src written along dim at index: out[index[i][j]][j] = src[i][j] (dim 0)",
    _SCATTER,
    methods=("scatter",),
    symbolic=_NO_SYMBOLIC,
    explain=X.per_element(
        lambda slot: (
            "0 where overwritten, else 1" if slot.position == 0 else "1 at the position written"
        )
    ),
    backward_name="ScatterBackward0",
    kink=(
        "input gets 0 where src overwrote it; each src element gets the gradient at the "
        "position it was written to, even where an index repeats (torch's gather of the "
        "gradient); with repeated indices the last write stays, as torch's CPU kernel; "
        "index gets no gradient"
    ),
)


@public("scatter")
def scatter(input: TensorLike, dim: int, index: TensorLike, src: TensorLike) -> Tensor:
    """torch.scatter: ``input`` with ``src`` (or a number) written at ``index`` along ``dim``."""
    x, d, idx, cut = _scatter_operands("scatter", input, dim, index, src)
    ones = P.expand(Tensor(np.ones((), dtype=bool)), shape=idx.shape)
    covered = _scattered(Tensor(np.zeros(x.shape, dtype=bool)), d, idx, ones, False)
    return P.where(covered, _scattered(x, d, idx, cut, False), x)


_composite(
    "scatter_add",
    "input with src added along dim at index: out[index[i][j]][j] += src[i][j] (dim 0)",
    _SCATTER,
    methods=("scatter_add",),
    symbolic=_NO_SYMBOLIC,
    explain=X.per_element(lambda slot: "1" if slot.position == 0 else "1 at the position added to"),
    backward_name="ScatterAddBackward0",
    kink="linear: repeated indices add up; index gets no gradient",
)


@public("scatter_add")
def scatter_add(input: TensorLike, dim: int, index: TensorLike, src: TensorLike) -> Tensor:
    """torch.scatter_add: ``input`` with ``src`` added at ``index`` along ``dim``."""
    x, d, idx, cut = _scatter_operands("scatter_add", input, dim, index, src)
    return P.add(x, _scattered(x, d, idx, cut, True))


_composite(
    "index_add",
    "input with alpha * source added at the positions of a vector index along dim",
    (
        Param("input", TENSOR),
        Param("dim", INT),
        Param("index", TENSOR),
        Param("source", TENSOR),
        Param("alpha", NUMBER, 1),
    ),
    methods=("index_add",),
    symbolic=_NO_SYMBOLIC,
    explain=X.per_element(
        lambda slot: "1" if slot.position == 0 else "alpha at the positions added to"
    ),
    backward_name="IndexAddBackward0",
    kink="linear: repeated indices add up; index gets no gradient",
)


@public("index_add")
def index_add(
    input: TensorLike, dim: int, index: TensorLike, source: TensorLike, alpha: float = 1
) -> Tensor:
    """torch.index_add: ``input`` with ``alpha * source`` added at ``index`` along ``dim``."""
    x, idx = _tensor(input), _vector("index_add", _indices("index_add", index))
    s = _tensor(source)
    d = _dim("index_add", dim, x.ndim)
    wide, ws = _scalar_safe(x), _scalar_safe(s)
    expected = tuple(len(idx) if i == d else n for i, n in enumerate(wide.shape))
    if ws.shape != expected:
        raise ShapeError(
            f"index_add(): source must have shape {expected} (input {x.shape} with dim {d} "
            f"of the index's length {len(idx)}), got {s.shape}"
        )
    added = put(ws, [idx], _along(d), wide.shape, True)
    if alpha != 1:
        added = P.mul(added, alpha)
    return P.add(x, RA.reshape(added, x.shape) if x.ndim == 0 else added)


# -- masked_select ------------------------------------------------------------------------------

_composite(
    "masked_select",
    "the elements of input where mask is True, as a vector (broadcast together)",
    (Param("input", TENSOR), Param("mask", TENSOR)),
    methods=("masked_select",),
    symbolic=_NO_SYMBOLIC,
    explain=X.PICKED,
    backward_name="MaskedSelectBackward0",
    kink="mask gets no gradient; the elements not selected get 0",
)


@public("masked_select")
def masked_select(input: TensorLike, mask: TensorLike) -> Tensor:
    """torch.masked_select: a 1-D tensor of the elements of ``input`` where ``mask`` holds."""
    x = _tensor(input)
    m = mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask))
    if m.dtype != np.bool_:
        raise IndexDomainError(f"masked_select: expected a boolean mask, got {m.dtype}")
    try:
        shape = np.broadcast_shapes(x.shape, m.shape)
    except ValueError:
        raise ShapeError(
            f"masked_select: the shapes of input {x.shape} and mask {m.shape} do not broadcast"
        ) from None
    if x.shape != shape:
        x = P.expand(x, shape=shape)
    if m.shape != shape:
        m = P.expand(m, shape=shape)
    if not shape:  # numpy indexes a 0-d array with a 0-d mask, torch gives a vector
        x, m = RA.reshape(x, 1), RA.reshape(m, 1)
    return indexed(x, [m], (SLOT,))


# -- one_hot, nonzero, argwhere: integer results ---------------------------------------------


def _none(g: Tensor, out: Tensor, *xs: Tensor, needs: tuple[bool, ...], **params: Any) -> Any:
    return (None,) * len(xs)


def _zero(tangents: Sequence[Tensor | None], out: Tensor, *xs: Tensor, **params: Any) -> Tensor:
    return P.zeros_like(out)


def _one_hot_forward(x: Array, num_classes: int) -> Array:
    classes = _index_array(x)
    if classes.dtype == np.bool_:
        raise IndexDomainError("one_hot is only applicable to index tensors (int64), got bool")
    if classes.size and classes.min() < 0:
        raise IndexDomainError("one_hot: class values must be non-negative")
    if num_classes == -1:
        if not classes.size:
            raise IndexDomainError("one_hot: cannot infer the number of classes of an empty tensor")
        num_classes = int(classes.max()) + 1
    elif classes.size and classes.max() >= num_classes:
        raise IndexDomainError(
            f"one_hot: class values must be smaller than num_classes ({num_classes}), "
            f"got {int(classes.max())}"
        )
    hot: Array = (classes[..., None] == np.arange(num_classes)).astype(np.int64)
    return hot


def _one_hot_size(classes: Array, num_classes: int) -> int:
    """The elements of the result: one row of num_classes per class index (-1: the largest
    index + 1)."""
    if num_classes == -1:
        num_classes = int(classes.max()) + 1 if classes.size else 0
    return int(classes.size) * max(num_classes, 0)


def _one_hot_batch(
    forward: B.Forward,
    params: B.Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    if params["num_classes"] == -1:  # each point's largest class decides
        return _point_by_point(forward, params, values, batched, size)
    return forward(values[0], **params)


_ONE_HOT = register(
    Op(
        "one_hot",
        "int64 one-hot vectors of class indices (num_classes -1: the largest class + 1)",
        forward=_one_hot_forward,
        size=_one_hot_size,
        vjp=_none,
        jvp=_zero,
        backward_name="NotDifferentiable",
        differentiable=False,
        batch=_one_hot_batch,
        params=(Param("input", TENSOR), Param("num_classes", INT, -1)),
        symbolic=_NO_SYMBOLIC,
        explain=X.per_element(lambda slot: "0 (" + _INTEGER + ")"),
        kink=_INTEGER,
        extra={"shape_from": lambda arrays, params: [0] if params["num_classes"] == -1 else []},
    )
)


@public("one_hot")
def one_hot(input: TensorLike, num_classes: int = -1) -> Tensor:
    """torch.nn.functional.one_hot: int64, one more dim of size num_classes."""
    return apply(_ONE_HOT, _indices("one_hot", input), num_classes=int(num_classes))


def _nonzero_batch(
    forward: B.Forward,
    params: B.Params,
    values: Sequence[Array],
    batched: Sequence[bool],
    ranks: Sequence[int],
    size: int,
) -> Array:
    return _point_by_point(forward, params, values, batched, size)


_NONZERO = register(
    Op(
        "nonzero",
        "the indices of the non-zero elements, one row each (int64, (n, ndim))",
        forward=lambda x: np.argwhere(x).astype(np.int64),
        vjp=_none,
        jvp=_zero,
        backward_name="NotDifferentiable",
        differentiable=False,
        batch=_nonzero_batch,
        params=(Param("input", TENSOR),),
        methods=("nonzero",),
        symbolic=_NO_SYMBOLIC,
        explain=X.per_element(lambda slot: "0 (" + _INTEGER + ")"),
        kink=_INTEGER,
        extra={"shape_from": lambda arrays, params: [0]},
    )
)


@public("nonzero")
def nonzero(input: TensorLike) -> Tensor:
    """torch.nonzero: the int64 indices of the non-zero elements, shape (n, ndim)."""
    return apply(_NONZERO, _tensor(input) if not isinstance(input, Tensor) else input)


_composite(
    "argwhere",
    "the indices of the non-zero elements, one row each (int64, (n, ndim)): nonzero",
    (Param("input", TENSOR),),
    methods=("argwhere",),
    symbolic=_NO_SYMBOLIC,
    explain=X.per_element(lambda slot: "0 (" + _INTEGER + ")"),
    kink=_INTEGER,
)


@public("argwhere")
def argwhere(input: TensorLike) -> Tensor:
    """torch.argwhere: the same as nonzero."""
    return nonzero(input)
