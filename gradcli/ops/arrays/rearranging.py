"""The primitives that rearrange elements without arithmetic: reshape, transpose, getitem
(and its backward, the scatter of a cotangent), stack and cat, each one entry of the op
table (``ops/table.py``), its rules written with the engine's functions as ``primitives.py``'s.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError, IndexDomainError, ShapeError
from ...engine import sizes
from ...engine.tensor import Tensor, TensorLike, apply
from .. import batching as B
from .. import explaining as X
from .. import patterns as R
from ..primitives import zeros_like
from ..rules.dims import _axes
from ..table import (
    ELEMENTS,
    HOLOMORPHIC,
    INT,
    OPT_INT,
    SIZES,
    TENSOR,
    TENSORS,
    Array,
    Op,
    Param,
    public,
    register,
)

# -- shapes, indexing, joining ----------------------------------------------------------------

_RESHAPE = register(
    Op(
        "reshape",
        "same elements, new shape (one size may be -1)",
        forward=lambda x, shape: np.reshape(x, shape),
        vjp=lambda g, out, x, needs, shape: (_reshape_back(g, out, x.shape),),
        jvp=lambda tangents, out, x, shape: reshape(tangents[0], shape),
        backward_name="ViewBackward0",
        batch=B.reshape,
        pattern=R.moved,
        params=(Param("input", TENSOR), Param("shape", SIZES)),
        methods=("reshape", "view"),
        explain=X.MOVED,
        extra={"view": True},  # x.reshape(x.shape) is a node of its own (see naming)
        symbolic=lambda x, *shape: x.reshape(shape),
        complex=HOLOMORPHIC,
        saved=False,
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


def unsqueezed(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``x`` reshaped to ``shape``, which only inserts dimensions of size 1: a rule's
    ``unsqueeze``, its node named as torch's (``UnsqueezeBackward0``)."""
    return _named(reshape(x, shape), "UnsqueezeBackward0")


def _reshape_back(g: Tensor, out: Tensor | None, shape: tuple[int, ...]) -> Tensor:
    """Reshape's reverse rule: the cotangent in the input's shape; where the node was an
    unsqueeze, torch's reverse is ``squeeze(dim)`` (its node ``SqueezeBackward1``)."""
    back = reshape(g, shape)
    named = None if out is None or out._op is None else getattr(out, "_name", None)
    if named == "UnsqueezeBackward0":
        return _named(back, "SqueezeBackward1")
    return back


def _named(x: Tensor, name: str) -> Tensor:
    if x._op is not None:
        x._name = name
    return x


def view(x: Tensor) -> Tensor:
    """A view of ``x`` as it is, a node of its own: torch's result of a call that leaves its
    input unchanged (``x.reshape(x.shape)``, see ``naming``)."""
    return apply(_RESHAPE, x, shape=x.shape)


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
        aliases=("swapaxes", "swapdims"),
        methods=("transpose", "t", "swapaxes", "swapdims"),
        explain=X.MOVED,
        # torch's node of a spelling: x.t() is t's, x.T a permute's (x.transpose(0, 1) and
        # x.mT transpose's)
        extra={
            "property": "T",
            "spellings": {"t": "TBackward0", "T": "PermuteBackward0"},
            "view": True,  # v.t() of a vector is a node of its own (see naming)
        },
        symbolic=lambda x, d0=None, d1=None: x.T if d0 is None else np.swapaxes(x, d0, d1),
        complex=HOLOMORPHIC,
        saved=False,
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


def _by_arrays(index: tuple[Any, ...]) -> bool:
    """Whether ``index`` is torch's advanced indexing: it holds an array or a bool (``x[True]``
    adds a dim by a mask); a 0-d integer array (``x[torch.tensor(1)]``) is an int to torch."""
    return any(
        isinstance(i, (bool, np.bool_))
        or (isinstance(i, np.ndarray) and (i.ndim or i.dtype.kind not in "iu"))
        for i in index
    )


def _index_name(node: Any) -> str:
    """torch's node for basic indexing is that of the last step it takes, item by item: an
    integer selects, None unsqueezes, a slice slices unless it keeps the whole axis as it is
    (start 0, stop at or past the end, step 1); with no step at all, the result is an alias.
    A slice alone (``x[:]``, not in a tuple, which the index cannot tell apart from ``x[:,]``)
    always slices."""
    index = node.params["index"]
    if _by_arrays(index):
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
        saved=lambda node: _by_arrays(node.params["index"]),  # torch's index saves its indices
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
        # zeros of the shape given: the inline check of apply_one reads no ``shape`` param
        size=lambda g, index, shape: math.prod(shape),
        vjp=lambda g, out, x, needs, index, shape: (getitem(g, index),),
        jvp=lambda tangents, out, x, index, shape: getitem_backward(tangents[0], index, shape),
        backward_name="IndexPutBackward0",
        saved=lambda node: _by_arrays(node.params["index"]),
        batch=B.getitem_backward,
        complex=HOLOMORPHIC,
    )
)


def _getitem_on_arrays(
    g: Array, out: Array, x: Array, needs: tuple[bool, ...], index: tuple[Any, ...]
) -> tuple[Array] | None:
    """getitem's rule on float64 arrays (``Op.vjp_arrays``): getitem_backward's scatter, the
    very forward its ``vjp`` applies (so its bits), without the tensors and the engine's call
    between (a class-index loss picks by an index every step). The scatter allocates x's
    shape, not g's, which the pass checked: past the room, ``vjp`` runs and refuses it."""
    if x.size > sizes.ROOM[0]:
        return None
    return (_scatter_forward(g, index, x.shape),)


_GETITEM.vjp_arrays = _getitem_on_arrays


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
        batch=B.stack,
        pattern=R.moved,
        params=_JOIN,
        operator=ELEMENTS,  # the vector y of elements y0, y1, ... is stack([y0, y1, ...])
        symbolic=lambda xs, dim=0: np.stack(xs, axis=dim),
        explain=X.COPIED,
        size=_joined_size,
        complex=HOLOMORPHIC,
        saved=False,
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
        aliases=("concat", "concatenate"),
        size=_joined_size,
        complex=HOLOMORPHIC,
        saved=False,
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
    first = tensors[0].shape
    for t in tensors:  # (a loop: no set comprehension's frame where the shapes agree)
        if t.shape != first:
            shapes = {t.shape for t in tensors}
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
