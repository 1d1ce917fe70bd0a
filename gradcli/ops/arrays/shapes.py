"""Shape operations, each an entry of the op table: triangles and diagonals (``triu``,
``tril``, ``diagonal``, ``diag_embed``, ``diag``), moving and flipping (``movedim``, ``flip``,
``fliplr``, ``flipud``, ``roll``, ``adjoint`` and ``x.mT``), slicing (``narrow``), joining
(``hstack``, ``vstack``, ``column_stack``), ``atleast_1d/2d/3d`` and ``meshgrid``.

The primitives (triangles, diagonals, ``movedim``) have a numpy forward and rules written in
engine operations; the others are composites of primitives (indexing, ``cat``, ``reshape``,
``transpose``) and need no rules of their own. The batch and symbolic rules of the primitives
are beside them, at the end of each section.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError, DtypeError, ShapeError
from ...engine.tensor import Tensor, apply
from .. import batching as B
from .. import explaining as X
from .. import patterns as R
from .. import primitives as P
from ..nn.composites import _composite
from ..reductions.selection import _PICK, Output, _which
from ..rules.dims import _axes
from ..table import (
    INDEXING,
    INDEXINGS,
    INT,
    OPT_INT,
    SIZES,
    TENSOR,
    TENSORS,
    Array,
    NumpyResult,
    Objects,
    Op,
    Param,
    public,
    register,
)
from . import rearranging as RA
from .repeating import COPIES

_X = (Param("input", TENSOR),)


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _dim(dim: int, ndim: int) -> int:
    """One dim of an ndim-tensor, made non-negative (a ShapeError when out of range); 0 of a
    0-d tensor, which takes 0 and -1 as torch's does."""
    axes = _axes(int(dim), ndim)
    return axes[0] if axes else 0


def _at_least(x: Tensor, ndim: int, name: str) -> None:
    if x.ndim < ndim:
        raise ShapeError(f"{name}: input must have at least {ndim} dimensions, got shape {x.shape}")


def _zero() -> Any:
    import sympy

    return sympy.Integer(0)


# -- triangles --------------------------------------------------------------------------------


Options = Callable[[dict[str, Any], int], dict[str, Any]]


def _one_operand(options: Options) -> Callable[..., Array]:
    """The batch rule of a step on one operand: the operand gets its leading batch dim, and
    ``options(params, size)`` are the step's options for the batched operand."""

    def rule(
        forward: Callable[..., Array],
        params: dict[str, Any],
        values: list[Array],
        batched: list[bool],
        ranks: list[int],
        size: int,
    ) -> Array:
        return forward(B.with_batch(values[0], batched[0], size), **options(params, size))

    return rule


# A step that acts on the last dimensions of its one operand: the batch dim rides along.
_trailing = _one_operand(lambda params, size: params)


def _triangle_symbolic(upper: bool) -> Callable[[Objects, int], Objects]:
    def rule(x: Objects, diagonal: int = 0) -> Objects:
        keep = (np.triu if upper else np.tril)(np.ones(x.shape[-2:], dtype=bool), diagonal)
        return np.asarray(np.where(keep, x, _zero()), dtype=object)

    return rule


def _triangle(name: str, numpy_triangle: Callable[..., Array], upper: bool) -> Op:
    side = "upper" if upper else "lower"
    below = "below" if upper else "above"

    def vjp(
        g: Tensor, out: Tensor, x: Tensor, needs: Sequence[bool], diagonal: int
    ) -> tuple[Tensor]:
        return (apply(entry, g, diagonal=diagonal),)

    def jvp(tangents: Sequence[Tensor], out: Tensor, x: Tensor, diagonal: int) -> Tensor:
        return apply(entry, tangents[0], diagonal=diagonal)

    entry = register(
        Op(
            name,
            f"the {side} triangle of the last two dims, zeros {below} diagonal (0: the main one)",
            forward=lambda x, diagonal: numpy_triangle(x, diagonal),
            vjp=vjp,
            jvp=jvp,
            backward_name=f"{name.capitalize()}Backward0",
            batch=_trailing,
            pattern=R.elementwise,  # an element, or a zero
            params=(Param("input", TENSOR), Param("diagonal", INT, 0)),
            methods=(name,),
            symbolic=_triangle_symbolic(upper),
            explain=X.PICKED,
            saved=False,
        )
    )
    return entry


_TRIU = _triangle("triu", np.triu, upper=True)
_TRIL = _triangle("tril", np.tril, upper=False)


def _triangle_call(entry: Op) -> Callable[..., Tensor]:
    def call(x: Any, diagonal: int = 0) -> Tensor:
        x = _tensor(x)
        _at_least(x, 2, entry.name)
        return apply(entry, x, diagonal=int(diagonal))

    call.__name__ = entry.name
    call.__doc__ = f"{entry.summary[0].upper()}{entry.summary[1:]}."
    return call


triu = public("triu")(_triangle_call(_TRIU))
tril = public("tril")(_triangle_call(_TRIL))


# -- diagonals --------------------------------------------------------------------------------


def _embed(g: Array, shape: tuple[int, ...], offset: int, dim1: int, dim2: int) -> Array:
    """Zeros of ``shape`` with the last dim of ``g`` written on the diagonal ``offset`` of the
    dims (dim1, dim2): the adjoint of np.diagonal."""
    out = np.zeros(shape, dtype=g.dtype)
    moved = np.moveaxis(out, (dim1, dim2), (-2, -1))  # a view: writing it writes out
    i = np.arange(g.shape[-1])
    moved[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return out


def _embedded_shape(shape: tuple[int, ...], offset: int, dim1: int, dim2: int) -> tuple[int, ...]:
    """diag_embed's result shape: the last dim of ``shape`` becomes two dims at dim1, dim2."""
    n = shape[-1] + abs(offset)
    out = list(shape[:-1])
    for d in sorted((dim1, dim2)):
        out.insert(d, n)
    return tuple(out)


def _diag_embed_forward(x: Array, offset: int, dim1: int, dim2: int) -> Array:
    return _embed(x, _embedded_shape(x.shape, offset, dim1, dim2), offset, dim1, dim2)


def _shift_dims(params: dict[str, Any]) -> dict[str, Any]:
    return {**params, "dim1": params["dim1"] + 1, "dim2": params["dim2"] + 1}


# diagonal and diag_embed: their (non-negative) dims move one right of the batch dim
_diagonal_batch = _one_operand(lambda params, size: _shift_dims(params))
_diagonal_backward_batch = _one_operand(
    lambda params, size: {**_shift_dims(params), "shape": (size, *params["shape"])}
)


def _diagonal_symbolic(x: Objects, offset: int = 0, dim1: int = 0, dim2: int = 1) -> NumpyResult:
    return np.asarray(np.diagonal(x, offset, dim1, dim2), dtype=object).copy()


def _diag_embed_symbolic(x: Objects, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Objects:
    rank = x.ndim + 1
    d1, d2 = dim1 % rank, dim2 % rank
    out = np.full(_embedded_shape(x.shape, offset, d1, d2), _zero(), dtype=object)
    moved = np.moveaxis(out, (d1, d2), (-2, -1))
    i = np.arange(x.shape[-1])
    moved[..., i + max(-offset, 0), i + max(offset, 0)] = x
    return out


# The entries whose rules apply them (declared here, registered below)
_DIAGONAL: Op
_DIAG_EMBED: Op
_MOVEDIM: Op
_PERMUTE: Op
_DIAGONAL = register(
    Op(
        "diagonal",
        "the diagonal offset of the dims (dim1, dim2), as the last dim",
        forward=lambda x, offset, dim1, dim2: np.diagonal(x, offset, dim1, dim2).copy(),
        vjp=lambda g, out, x, needs, offset, dim1, dim2: (
            diagonal_backward(g, x.shape, offset, dim1, dim2),
        ),
        jvp=lambda tangents, out, x, offset, dim1, dim2: apply(
            _DIAGONAL, tangents[0], offset=offset, dim1=dim1, dim2=dim2
        ),
        backward_name="DiagonalBackward0",
        batch=_diagonal_batch,
        pattern=R.moved,
        params=(
            Param("input", TENSOR),
            Param("offset", INT, 0),
            Param("dim1", INT, 0),
            Param("dim2", INT, 1),
        ),
        methods=("diagonal",),
        symbolic=_diagonal_symbolic,
        explain=X.PICKED,
        saved=False,
    )
)


_DIAGONAL_BACKWARD = register(
    Op(
        "diagonal_backward",
        "the adjoint of diagonal: zeros of a shape with the values on a diagonal",
        forward=lambda g, shape, offset, dim1, dim2: _embed(g, shape, offset, dim1, dim2),
        vjp=lambda g, out, x, needs, shape, offset, dim1, dim2: (
            apply(_DIAGONAL, g, offset=offset, dim1=dim1, dim2=dim2),
        ),
        jvp=lambda tangents, out, x, shape, offset, dim1, dim2: diagonal_backward(
            tangents[0], shape, offset, dim1, dim2
        ),
        backward_name="DiagonalBackwardBackward0",
        batch=_diagonal_backward_batch,
        saved=False,
    )
)


def diagonal_backward(
    g: Tensor, shape: tuple[int, ...], offset: int, dim1: int, dim2: int
) -> Tensor:
    """Zeros of ``shape`` with ``g``'s last dim on the diagonal ``offset`` of (dim1, dim2)."""
    return apply(_DIAGONAL_BACKWARD, g, shape=tuple(shape), offset=offset, dim1=dim1, dim2=dim2)


_DIAG_EMBED = register(
    Op(
        "diag_embed",
        "a tensor whose (dim1, dim2) diagonals (offset) are the last dim of input",
        forward=_diag_embed_forward,
        size=lambda x, offset, dim1, dim2: math.prod(_embedded_shape(x.shape, offset, dim1, dim2)),
        vjp=lambda g, out, x, needs, offset, dim1, dim2: (
            apply(_DIAGONAL, g, offset=offset, dim1=dim1, dim2=dim2),
        ),
        jvp=lambda tangents, out, x, offset, dim1, dim2: apply(
            _DIAG_EMBED, tangents[0], offset=offset, dim1=dim1, dim2=dim2
        ),
        backward_name="DiagEmbedBackward0",
        batch=_diagonal_batch,
        params=(
            Param("input", TENSOR),
            Param("offset", INT, 0),
            Param("dim1", INT, -2),
            Param("dim2", INT, -1),
        ),
        methods=("diag_embed",),
        symbolic=_diag_embed_symbolic,
        explain=X.PICKED,
        saved=False,
    )
)


def _two_dims(name: str, dim1: int, dim2: int, ndim: int) -> tuple[int, int]:
    d1, d2 = _dim(dim1, ndim), _dim(dim2, ndim)
    if d1 == d2:
        raise ShapeError(f"{name}: dim1 and dim2 cannot be the same dimension, got {dim1}, {dim2}")
    return d1, d2


@public("diagonal")
def diagonal(x: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal ``offset`` (0: the main one, > 0 above it) of the dims (dim1, dim2), as the
    last dimension of the result."""
    x = _tensor(x)
    _at_least(x, 2, "diagonal")
    d1, d2 = _two_dims("diagonal", dim1, dim2, x.ndim)
    return apply(_DIAGONAL, x, offset=int(offset), dim1=d1, dim2=d2)


@public("diag_embed")
def diag_embed(x: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor with the last dim of ``x`` on the diagonal ``offset`` of the new dims (dim1,
    dim2), zeros elsewhere."""
    x = _tensor(x)
    _at_least(x, 1, "diag_embed")
    d1, d2 = _two_dims("diag_embed", dim1, dim2, x.ndim + 1)
    return apply(_DIAG_EMBED, x, offset=int(offset), dim1=d1, dim2=d2)


_composite(
    "diag",
    "a vector's diagonal matrix, or a matrix's diagonal (diagonal: which one, 0 the main)",
    (Param("input", TENSOR), Param("diagonal", INT, 0)),
    methods=("diag",),
    backward_name=lambda args: (
        "DiagonalBackward0_copy" if args[0].ndim == 2 else "DiagEmbedBackward0"
    ),
    symbolic=lambda x, diagonal=0: (
        np.asarray(np.diag(x, diagonal), dtype=object).copy()
        if x.ndim == 2
        else _diag_embed_symbolic(x, diagonal, 0, 1)
    ),
    explain=X.PICKED,
)


@public("diag")
def diag(x: Any, diagonal: int = 0) -> Tensor:
    """For a vector, the square matrix with it on the diagonal ``diagonal``; for a matrix,
    that diagonal as a vector."""
    x = _tensor(x)
    if x.ndim == 1:
        return apply(_DIAG_EMBED, x, offset=int(diagonal), dim1=0, dim2=1)
    if x.ndim == 2:
        return apply(_DIAGONAL, x, offset=int(diagonal), dim1=0, dim2=1)
    raise ShapeError(f"diag: expected a vector or a matrix, got shape {x.shape}")


# -- moving and flipping ----------------------------------------------------------------------


_movedim_batch = _one_operand(
    lambda params, size: {"source": params["source"] + 1, "destination": params["destination"] + 1}
)


_MOVEDIM = register(
    Op(
        "movedim",
        "move dim source to position destination, the others keeping their order",
        forward=lambda x, source, destination: np.moveaxis(x, source, destination),
        vjp=lambda g, out, x, needs, source, destination: (
            apply(_MOVEDIM, g, source=destination, destination=source),
        ),
        jvp=lambda tangents, out, x, source, destination: apply(
            _MOVEDIM, tangents[0], source=source, destination=destination
        ),
        backward_name="PermuteBackward0",
        batch=_movedim_batch,
        pattern=R.moved,
        params=(Param("input", TENSOR), Param("source", INT), Param("destination", INT)),
        aliases=("moveaxis",),
        methods=("movedim", "moveaxis"),
        symbolic=lambda x, source, destination: np.moveaxis(x, source, destination),
        explain=X.MOVED,
        saved=False,
    )
)


_permute_batch = _one_operand(lambda params, size: {"dims": (0, *(d + 1 for d in params["dims"]))})


def _inverse(dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(dims))


_PERMUTE = register(
    Op(
        "permute",
        "the dims in a new order: permute(x, (2, 0, 1)), x.permute(2, 0, 1)",
        forward=lambda x, dims: np.transpose(x, dims),
        vjp=lambda g, out, x, needs, dims: (apply(_PERMUTE, g, dims=_inverse(dims)),),
        jvp=lambda tangents, out, x, dims: apply(_PERMUTE, tangents[0], dims=dims),
        backward_name="PermuteBackward0",
        batch=_permute_batch,
        pattern=R.moved,
        params=(Param("input", TENSOR), Param("dims", SIZES)),
        methods=("permute",),
        symbolic=lambda x, *dims: np.transpose(x, dims),
        explain=X.MOVED,
        saved=False,
    )
)


@public("permute")
def permute(x: Any, *dims: int) -> Tensor:
    """``x`` with its dims in the order ``dims`` (each once; negative dims count from the
    end), as ``torch.permute``."""
    t = _tensor(x)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    order = tuple(_dim(d, t.ndim) for d in dims) if t.ndim else tuple(dims)
    if sorted(order) != list(range(t.ndim)):
        raise ShapeError(
            f"permute: dims {tuple(dims)} must name each of the {t.ndim} dims of a tensor of "
            f"shape {t.shape} once"
        )
    return apply(_PERMUTE, t, dims=order) if t.ndim else t


@public("movedim")
def movedim(x: Any, source: int, destination: int) -> Tensor:
    """Move dim ``source`` to ``destination``; the other dims keep their order."""
    t = _tensor(x)
    s, d = _dim(source, t.ndim), _dim(destination, t.ndim)
    if t.ndim == 0:
        return t
    return apply(_MOVEDIM, t, source=s, destination=d)


_composite(
    "adjoint",
    "the transpose of the last two dims (x.mT; the conjugate is the same for real tensors)",
    _X,
    methods=("adjoint",),
    extra={"property": "mT"},
    symbolic=lambda x: np.swapaxes(x, -1, -2),
    explain=X.MOVED,
)


@public("adjoint")
def adjoint(x: Any) -> Tensor:
    """The last two dims swapped (``x.mT``, ``x.adjoint()``): a batch of matrices transposed."""
    x = _tensor(x)
    if x.ndim < 2:
        raise ShapeError(
            f"x.mT and adjoint need a matrix or a batch of matrices, got shape {x.shape}"
        )
    return RA.transpose(x, -2, -1)


def _reversed(x: Tensor, dims: Sequence[int]) -> Tensor:
    index = [slice(None)] * x.ndim
    for d in dims if x.ndim else ():  # a 0-d tensor has one element, in its one order
        index[d] = slice(None, None, -1)
    return RA.getitem(x, tuple(index))


_composite(
    "flip",
    "reverse the order of the elements along dims",
    (Param("input", TENSOR), Param("dims", INT)),
    methods=("flip",),
    symbolic=lambda x, dims: np.flip(x, dims) if x.ndim else x,
    explain=X.MOVED,
    backward_name="FlipBackward0",
)


@public("flip")
def flip(x: Any, dims: int | Sequence[int]) -> Tensor:
    """Reverse the order of the elements along ``dims`` (an int or a sequence of them)."""
    x = _tensor(x)
    listed = [dims] if isinstance(dims, int) else list(dims)
    axes = [_dim(d, x.ndim) for d in listed]
    if len(set(axes)) != len(axes):
        raise ShapeError(f"flip: dims has a dim more than once: {listed}")
    return _reversed(x, axes)


_composite(
    "fliplr",
    "reverse the order of the columns (dim 1)",
    _X,
    methods=("fliplr",),
    symbolic=lambda x: np.fliplr(x),
    explain=X.MOVED,
    backward_name="FlipBackward0",
)
_composite(
    "flipud",
    "reverse the order of the rows (dim 0)",
    _X,
    methods=("flipud",),
    symbolic=lambda x: np.flipud(x),
    explain=X.MOVED,
    backward_name="FlipBackward0",
)


@public("fliplr")
def fliplr(x: Any) -> Tensor:
    """Columns in reverse order: flip along dim 1 (input of 2 or more dims)."""
    x = _tensor(x)
    _at_least(x, 2, "fliplr")
    return _reversed(x, [1])


@public("flipud")
def flipud(x: Any) -> Tensor:
    """Rows in reverse order: flip along dim 0 (input of 1 or more dims)."""
    x = _tensor(x)
    _at_least(x, 1, "flipud")
    return _reversed(x, [0])


def _roll_symbolic(x: Objects, shifts: int, dims: int | None = None) -> Objects:
    return np.asarray(np.roll(x, shifts, dims), dtype=object)


_composite(
    "roll",
    "shift the elements along dims by shifts, wrapping around (dims None: the flattened tensor)",
    (Param("input", TENSOR), Param("shifts", INT), Param("dims", OPT_INT, None)),
    methods=("roll",),
    symbolic=_roll_symbolic,
    explain=X.MOVED,
    backward_name="RollBackward0",
)


@public("roll")
def roll(x: Any, shifts: int, dims: int | None = None) -> Tensor:
    """Shift the elements by ``shifts`` along ``dims``, the last ones wrapping round to the
    front; with ``dims`` None, of the flattened tensor, its shape kept."""
    x = _tensor(x)
    if dims is None:
        flat = RA.reshape(x, -1)
        return RA.reshape(_rolled(flat, int(shifts), 0), x.shape)
    if x.ndim == 0:
        raise ShapeError("roll: a tensor of shape () has no dims to roll along: give dims=None")
    return _rolled(x, int(shifts), _dim(dims, x.ndim))


def _rolled(x: Tensor, shifts: int, dim: int) -> Tensor:
    n = x.shape[dim]
    lead = (slice(None),) * dim
    if n == 0 or shifts % n == 0:
        return RA.getitem(x, lead + (slice(None),))
    cut = n - shifts % n
    return RA.cat(
        [RA.getitem(x, lead + (slice(cut, None),)), RA.getitem(x, lead + (slice(cut),))], dim
    )


_composite(
    "narrow",
    "length elements of dim from start (a negative start counts from the end)",
    (Param("input", TENSOR), Param("dim", INT), Param("start", INT), Param("length", INT)),
    methods=("narrow",),
    symbolic=lambda x, dim, start, length: _narrowed_symbolic(x, dim, start, length),
    explain=X.PICKED,
)


def _narrow_slice(shape: tuple[int, ...], dim: int, start: int, length: int) -> tuple[slice, ...]:
    n = shape[dim]
    if not -n <= start <= n:
        raise ShapeError(f"narrow: start {start} is out of range for dim {dim} of size {n}")
    start = start % n if start < 0 else start
    if length < 0 or start + length > n:
        raise ShapeError(
            f"narrow: start ({start}) + length ({length}) exceeds dim {dim} of size {n}"
        )
    return (slice(None),) * dim + (slice(start, start + length),)


def _narrowed_symbolic(x: Objects, dim: int, start: int, length: int) -> Objects:
    return x[_narrow_slice(x.shape, dim % x.ndim, start, length)]


@public("narrow")
def narrow(x: Any, dim: int, start: int, length: int) -> Tensor:
    """``length`` elements of ``dim`` from ``start`` (torch.narrow; a view there)."""
    x = _tensor(x)
    if x.ndim == 0:
        raise ShapeError("narrow: cannot narrow a tensor of shape ()")
    d = _dim(dim, x.ndim)
    return RA.getitem(x, _narrow_slice(x.shape, d, int(start), int(length)))


# -- at least n dims, joining -----------------------------------------------------------------

_AT_LEAST: dict[int, dict[int, Callable[[tuple[int, ...]], tuple[int, ...]]]] = {
    1: {0: lambda s: (1,)},
    2: {0: lambda s: (1, 1), 1: lambda s: (1, *s)},
    3: {0: lambda s: (1, 1, 1), 1: lambda s: (1, *s, 1), 2: lambda s: (*s, 1)},
}


def _at_least_shape(shape: tuple[int, ...], n: int) -> tuple[int, ...]:
    grow = _AT_LEAST[n].get(len(shape))
    return shape if grow is None else tuple(grow(shape))


def _at_least_op(n: int) -> Callable[[Any], Tensor]:
    name = f"atleast_{n}d"
    numpy_fn = getattr(np, name)
    _composite(
        name,
        f"the input with leading or trailing dims of size 1 added, to at least {n} dims",
        _X,
        symbolic=lambda x: np.asarray(numpy_fn(x), dtype=object),
        explain=X.MOVED,
        # torch views a 0-d input and unsqueezes one of more dims
        backward_name=lambda args: "ViewBackward0" if args[0].ndim == 0 else "UnsqueezeBackward0",
    )

    def call(x: Any) -> Tensor:
        x = _tensor(x)
        return RA.reshape(x, _at_least_shape(x.shape, n))

    call.__name__ = name
    call.__doc__ = f"``x`` with dims of size 1 added so that it has at least {n}."
    return public(name)(call)


atleast_1d = _at_least_op(1)
atleast_2d = _at_least_op(2)
atleast_3d = _at_least_op(3)


def _stacked(
    name: str, summary: str, numpy_fn: Callable[..., Array], aliases: tuple[str, ...] = ()
) -> Callable[[Callable[[list[Tensor]], Tensor]], Callable[[Sequence[Any]], Tensor]]:
    _composite(
        name,
        summary,
        (Param("tensors", TENSORS),),
        symbolic=lambda xs: np.asarray(numpy_fn(list(xs)), dtype=object),
        explain=X.COPIED,
        aliases=aliases,
    )

    def declare(join: Callable[[list[Tensor]], Tensor]) -> Callable[[Sequence[Any]], Tensor]:
        def call(tensors: Sequence[Any]) -> Tensor:
            listed = [_tensor(t) for t in tensors]
            if not listed:
                raise ShapeError(f"{name}: expected a non-empty list of tensors")
            return join(listed)

        call.__name__ = name
        call.__doc__ = join.__doc__
        return public(name)(call)

    return declare


@_stacked("hstack", "join horizontally: cat along dim 1 (dim 0 for vectors)", np.hstack)
def hstack(tensors: list[Tensor]) -> Tensor:
    """Join along dim 1, or dim 0 when the tensors are vectors (after atleast_1d)."""
    tensors = [atleast_1d(t) for t in tensors]
    return RA.cat(tensors, 0 if tensors[0].ndim == 1 else 1)


@_stacked("vstack", "join vertically: cat along dim 0 after atleast_2d", np.vstack, ("row_stack",))
def vstack(tensors: list[Tensor]) -> Tensor:
    """Join along dim 0, vectors made rows first (atleast_2d)."""
    return RA.cat([atleast_2d(t) for t in tensors], 0)


@_stacked(
    "column_stack", "join as columns: vectors become columns, then cat along dim 1", np.column_stack
)
def column_stack(tensors: list[Tensor]) -> Tensor:
    """Vectors and scalars as columns, then join along dim 1."""
    columns = [RA.reshape(t, t.numel(), 1) if t.ndim <= 1 else t for t in tensors]
    return RA.cat(columns, 1)


# -- meshgrid: one result per operand ----------------------------------------------------------

# torch 2.13's words when indexing is not given (once in a process: TORCH_WARN_ONCE)
MESHGRID_WARNING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)"
)


def _grid(
    shapes: Sequence[tuple[int, ...]], indexing: str | None
) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """The shape of meshgrid's results, and the shape each operand is viewed as before it is
    broadcast to it: operand i along dim i ('xy': the first two operands' dims swapped), a
    0-d operand as one of size 1."""
    if not shapes:
        raise ShapeError("meshgrid expects a non-empty TensorList")
    if indexing is not None and indexing not in INDEXINGS:
        raise DomainError(
            'torch.meshgrid: indexing must be one of "xy" or "ij", but received: ' + str(indexing)
        )
    for k, shape in enumerate(shapes):
        if len(shape) > 1:
            raise ShapeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got one of "
                f"shape {shape} (tensors[{k}])"
            )
    sizes = [shape[0] if shape else 1 for shape in shapes]
    dims = list(range(len(sizes)))
    if indexing == "xy" and len(dims) > 1:
        dims[0], dims[1] = 1, 0
    grid = [0] * len(sizes)
    for size, dim in zip(sizes, dims):
        grid[dim] = size
    views = [
        tuple(size if i == dim else 1 for i in range(len(sizes))) for size, dim in zip(sizes, dims)
    ]
    return tuple(grid), views


def _meshgrid_count(tensors: Sequence[Any], indexing: str | None = None) -> int:
    return len(tensors)


def _meshgrid_symbolic(
    xs: Sequence[Objects], indexing: str | None = None, output: Output = (0, 0)
) -> Objects:
    grid, views = _grid([x.shape for x in xs], indexing)
    k = _which(output, len(xs), "meshgrid")
    return np.asarray(np.broadcast_to(xs[k].reshape(views[k]), grid), dtype=object)


_composite(
    "meshgrid",
    "coordinate grids: result i is tensors[i] (1-d or 0-d) along dim i, broadcast over the "
    "sizes of all ('xy': the first two dims swapped)",
    (Param("tensors", TENSORS), Param("indexing", INDEXING, None), _PICK),
    backward_name="ExpandBackward0",
    symbolic=_meshgrid_symbolic,
    explain=COPIES,
    kink="as many results as tensors, each an ordinary tensor whose gradient sums back to its "
    "own operand; indexing=None is 'ij' with torch's warning that it will be required",
    extra={
        "plain": True,
        "count": _meshgrid_count,
        "varargs": True,
        "warning": lambda args: MESHGRID_WARNING if args[1] is None else None,
        "warn_once": True,
    },
)


@public("meshgrid")
def meshgrid(
    tensors: Sequence[Any], indexing: str | None = None, output: Output = (0, 0)
) -> Tensor:
    """Result k of torch.meshgrid(*tensors, indexing=...): ``tensors[k]`` viewed along its own
    dim and broadcast to the grid of all their sizes (output (k, ...))."""
    xs = [_tensor(t) for t in tensors]
    grid, views = _grid([x.shape for x in xs], indexing)
    dtypes = sorted({str(x.dtype) for x in xs})
    if len(dtypes) > 1:
        raise DtypeError(
            f"meshgrid expects all tensors to have the same dtype, got {' and '.join(dtypes)}"
        )
    k = _which(output, len(xs), "meshgrid")
    # always a node of its own, as torch's (a 1-d tensor alone is expanded to itself)
    return apply(P._EXPAND, RA.reshape(xs[k], views[k]), shape=grid)
