"""Shape operations that copy or regroup elements, each an entry of the op table: ``flatten``
over a range of dims and ``unflatten``, ``expand_as``, ``repeat``, ``tile``,
``repeat_interleave`` and ``pad`` (torch.nn.functional.pad: constant, reflect, replicate,
circular).

All are composites of the engine's primitives (``reshape``, ``expand``, indexing, ``cat``), so
their derivatives (sums over the copies, zero for padding) come from those; each has a
symbolic rule on object arrays, written with numpy's own functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base.engine_errors import DomainError, ShapeError
from ...engine import sizes
from ...engine.tensor import Tensor
from .. import explaining as X
from .. import primitives as P
from ..nn.composites import _composite
from ..rules.dims import _axes
from ..table import (
    INT,
    INTS,
    OPT_INT,
    OPT_NUMBER,
    PAD_MODE,
    PAD_MODES,
    SIZES,
    TENSOR,
    Objects,
    Param,
    public,
)
from . import rearranging as RA

# The local derivative of an operation that copies elements, some more than once
COPIES = X.jacobian(lambda slot: f"1 where the element is a copy of that of {slot.wrt}, else 0")


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _ints(sizes: Any) -> tuple[int, ...]:
    """Sizes given as ints, or as one tuple of them: x.repeat(2, 1), x.repeat((2, 1))."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return tuple(int(n) for n in sizes)


def _one(value: int | Sequence[int]) -> tuple[int, ...]:
    return (int(value),) if isinstance(value, (int, np.integer)) else tuple(int(n) for n in value)


# -- flatten and unflatten --------------------------------------------------------------------


def unflattened_shape(shape: tuple[int, ...], dim: int, sizes: Sequence[int]) -> tuple[int, ...]:
    """The shape ``unflatten(x, dim, sizes)`` makes: dim split into ``sizes`` (one may be -1)."""
    if not shape:
        raise ShapeError("unflatten: a tensor of shape () has no dim to unflatten")
    d = _axes(dim, len(shape))[0]
    sizes = tuple(sizes)
    if not sizes:
        raise ShapeError("unflatten: sizes must be non-empty")
    known = math.prod(n for n in sizes if n != -1)
    if sizes.count(-1) > 1 or any(n < -1 for n in sizes):
        raise ShapeError(f"unflatten: sizes {list(sizes)} may hold one -1 and no other negative")
    if -1 in sizes:
        if known == 0 or shape[d] % known:
            raise ShapeError(
                f"unflatten: sizes {list(sizes)} do not divide dim {dim} of size {shape[d]}"
            )
        sizes = tuple(shape[d] // known if n == -1 else n for n in sizes)
    elif known != shape[d]:
        raise ShapeError(
            f"unflatten: sizes {list(sizes)} multiply to {known}, not to the size {shape[d]} "
            f"of dim {dim}"
        )
    return shape[:d] + sizes + shape[d + 1 :]


_composite(
    "unflatten",
    "split dim into the dims sizes (one may be -1): the reverse of flatten",
    (Param("input", TENSOR), Param("dim", INT), Param("sizes", INTS)),
    methods=("unflatten",),
    backward_name="ViewBackward0",
    symbolic=lambda x, dim, sizes: x.reshape(unflattened_shape(x.shape, dim, _one(sizes))),
    explain=X.MOVED,
    extra={"view": True},  # x.unflatten(0, (3,)) is a node of its own (see naming)
)


@public("unflatten")
def unflatten(x: Any, dim: int, sizes: int | Sequence[int]) -> Tensor:
    """Split ``dim`` into the dims ``sizes`` (torch.unflatten; one size may be -1)."""
    x = _tensor(x)
    return RA.reshape(x, unflattened_shape(x.shape, dim, _one(sizes)))


# -- expand_as, repeat, tile, repeat_interleave -----------------------------------------------


_composite(
    "expand_as",
    "input broadcast to the shape of other (other gives only its shape)",
    (Param("input", TENSOR), Param("other", TENSOR)),
    methods=("expand_as",),
    backward_name="ExpandBackward0",
    symbolic=lambda x, other: np.broadcast_to(x, other.shape).copy(),
    explain=COPIES,
    kink="other gets no gradient (only its shape is read)",
)


@public("expand_as")
def expand_as(x: Any, other: Any) -> Tensor:
    """``x`` broadcast to ``other.shape`` (x.expand_as(other))."""
    return P.expand(_tensor(x), shape=_tensor(other).shape)


def _repeat_check(shape: tuple[int, ...], repeats: tuple[int, ...], name: str) -> None:
    if len(repeats) < len(shape):
        raise ShapeError(
            f"{name}: the number of repeats ({len(repeats)}) must be at least the number of "
            f"dims of the tensor ({len(shape)}), shape {shape}"
        )
    if any(n < 0 for n in repeats):
        raise ShapeError(f"{name}: repeats must be non-negative, got {list(repeats)}")


def _repeated(x: Tensor, repeats: tuple[int, ...]) -> Tensor:
    """Whole copies of ``x`` side by side, ``repeats[i]`` along dim i (as many repeats as
    dims, or more: the new ones lead): ``x.repeat(*repeats)``."""
    shape = (1,) * (len(repeats) - x.ndim) + x.shape
    spread = tuple(n for s in shape for n in (1, s))  # a dim of copies before each dim
    copies = tuple(n for r, s in zip(repeats, shape) for n in (r, s))
    out = P.expand(RA.reshape(x, spread), shape=copies)
    return RA.reshape(out, tuple(r * s for r, s in zip(repeats, shape)))


_composite(
    "repeat",
    "whole copies of input side by side, sizes[i] along dim i: x.repeat(2, 1)",
    (Param("input", TENSOR), Param("sizes", SIZES)),
    methods=("repeat",),
    backward_name="RepeatBackward0",
    symbolic=lambda x, *sizes: np.tile(x, sizes),
    explain=COPIES,
)


@public("repeat")
def repeat(x: Any, *sizes: Any) -> Tensor:
    """Whole copies of ``x``, ``sizes[i]`` of them along dim i (Tensor.repeat; at least as
    many sizes as dims, the extra ones leading)."""
    x, repeats = _tensor(x), _ints(sizes)
    _repeat_check(x.shape, repeats, "repeat")
    return _repeated(x, repeats)


_composite(
    "tile",
    "whole copies of input side by side, dims[i] along dim i (too few dims: 1s lead)",
    (Param("input", TENSOR), Param("dims", INTS)),
    methods=("tile",),
    backward_name="RepeatBackward0",
    symbolic=lambda x, dims: np.tile(x, _one(dims)),
    explain=COPIES,
)


@public("tile")
def tile(x: Any, dims: int | Sequence[int]) -> Tensor:
    """torch.tile: ``x.repeat(*dims)`` with 1s put in front of ``dims`` when it names fewer
    dims than ``x`` has."""
    x, repeats = _tensor(x), _one(dims)
    repeats = (1,) * (x.ndim - len(repeats)) + repeats
    _repeat_check(x.shape, repeats, "tile")
    return _repeated(x, repeats)


def _counts(repeats: Any, size: int, dim: int | None) -> np.ndarray:
    """The repeat of each of ``size`` elements, from a whole number or a tensor of them (one,
    or one per element), with torch's errors."""
    counts = np.asarray(repeats.data if isinstance(repeats, Tensor) else repeats)
    if isinstance(repeats, Tensor) and counts.dtype.kind not in "iu":
        raise DomainError(
            f"repeat_interleave: repeats must be a tensor of whole numbers (int64), got "
            f"{counts.dtype}; write tensor([1, 2]), or .long()"
        )
    if counts.dtype.kind == "f" and not np.all(counts == np.round(counts)):
        raise DomainError(f"repeat_interleave: repeats must be whole numbers, got {repeats}")
    if counts.ndim > 1:
        raise ShapeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
    if counts.ndim == 1 and counts.size not in (1, size):
        along = "input" if dim is None else "input along dim"
        raise ShapeError(
            f"repeat_interleave: repeats must have the same size as {along}, but got "
            f"repeats.size(0) = {counts.size} and input.size({0 if dim is None else dim}) = "
            f"{size}"
        )
    if np.any(counts < 0):
        raise ShapeError("repeat_interleave: repeats can not be negative")
    return np.broadcast_to(counts.astype(np.int64), (size,))


def _interleave_symbolic(
    x: Objects, repeats: Any, dim: int | None = None, output_size: int | None = None
) -> Objects:
    size = x.size if dim is None else x.shape[dim]
    counts = _counts(np.asarray(repeats).astype(float), size, dim)
    return np.asarray(np.repeat(x, counts, axis=dim), dtype=object)


_composite(
    "repeat_interleave",
    "each element repeats times in a row along dim (dim None: of the flattened input); "
    "repeats a whole number or a tensor of them, one per element",
    (
        Param("input", TENSOR),
        Param("repeats", TENSOR),
        Param("dim", OPT_INT, None),
        Param("output_size", OPT_INT, None),
    ),
    methods=("repeat_interleave",),
    symbolic=_interleave_symbolic,
    explain=COPIES,
    # torch's node: an index_select for a tensor of repeats, a view of copies for a number
    backward_name=lambda args: (
        "IndexSelectBackward0" if isinstance(args[1], Tensor) else "ViewBackward0"
    ),
    kink="repeats gets no gradient (whole numbers); each copy sends its gradient back to "
    "its element, which gets the sum (0 for an element repeated 0 times)",
)


def _index_of_copies(repeats: np.ndarray, size: int) -> np.ndarray:
    return np.repeat(np.arange(size), _counts(repeats, size, None))


@public("repeat_interleave")
def repeat_interleave(
    x: Any, repeats: Any, dim: int | None = None, output_size: int | None = None
) -> Tensor:
    """Each element ``repeats`` times in a row along ``dim`` (None: of the flattened tensor),
    torch.repeat_interleave: ``repeats`` a whole number, or a tensor of whole numbers (one
    for all, or one per element; the positions are a mask, recomputed at each point of a
    compiled replay). ``output_size``, when given, must be the length of the result."""
    x = _tensor(x)
    if dim is None:
        x, d = RA.reshape(x, -1), 0
    elif x.ndim == 0:  # as torch, which refuses a dim here
        raise ShapeError("repeat_interleave: a tensor of shape () takes dim=None only")
    else:
        d = _axes(dim, x.ndim)[0]
    shape = x.shape
    if not isinstance(repeats, (Tensor, np.ndarray)):  # a number: copies side by side
        (count,) = _counts(repeats, 1, dim)
        if output_size is not None and output_size != shape[d] * count:
            raise ShapeError(
                f"repeat_interleave: Invalid output_size, expected {shape[d] * count} but got "
                f"{output_size}"
            )
        spread = RA.reshape(x, shape[: d + 1] + (1,) + shape[d + 1 :])
        copies = P.expand(spread, shape=shape[: d + 1] + (int(count),) + shape[d + 1 :])
        return RA.reshape(copies, shape[:d] + (shape[d] * int(count),) + shape[d + 1 :])
    counts = _tensor(repeats)
    length = int(_counts(counts, shape[d], dim).sum())
    if output_size is not None and output_size != length:
        raise ShapeError("repeat_interleave: allocated size does not match required size")
    from .indexing import index_select  # indexing is built on these shape operations

    size = shape[d]
    index = P.mask(lambda r: _index_of_copies(r, size), counts, count=length)
    return index_select(x, d, index)


# -- pad --------------------------------------------------------------------------------------


Plan = list[tuple[int, int, int]]


def _pad_plan(shape: tuple[int, ...], pad: tuple[int, ...], mode: str) -> Plan:
    """(dim, before, after) for each dim ``pad`` pads (its pairs name the last dim first),
    checked as torch checks them."""
    if mode not in PAD_MODES:
        raise DomainError(f"pad: mode must be one of {', '.join(PAD_MODES)}, got {mode!r}")
    if len(pad) % 2:
        raise ShapeError(f"pad: the padding must have an even number of sizes, got {list(pad)}")
    k = len(pad) // 2
    if k > len(shape):
        raise ShapeError(
            f"pad: {len(pad)} padding sizes pad {k} dims, but the input has shape {shape}"
        )
    if mode != "constant":
        if not 1 <= k <= 3 or len(shape) not in (k + 1, k + 2):
            raise ShapeError(
                f"pad: mode {mode!r} pads the last 1, 2 or 3 dims of an input with 1 or 2 "
                f"dims more (2 sizes: 2-d or 3-d input, 4: 3-d or 4-d, 6: 4-d or 5-d), got "
                f"{len(pad)} sizes for shape {shape}"
            )
    plan = []
    for i in range(k):
        dim, before, after = len(shape) - 1 - i, pad[2 * i], pad[2 * i + 1]
        n = shape[dim]
        if mode != "constant" and (before < 0 or after < 0):
            raise ShapeError(f"pad: mode {mode!r} takes no negative padding, got {list(pad)}")
        if mode == "reflect" and max(before, after) >= n:
            raise ShapeError(
                f"pad: reflect padding ({before}, {after}) must be less than the size {n} of "
                f"dim {dim}"
            )
        if mode == "circular" and max(before, after) > n:
            raise ShapeError(
                f"pad: circular padding ({before}, {after}) must be at most the size {n} of "
                f"dim {dim}"
            )
        if mode == "replicate" and n == 0 and (before or after):
            raise ShapeError(f"pad: replicate padding of dim {dim} needs a non-empty dim")
        if n + min(before, 0) + min(after, 0) < 0:
            raise ShapeError(
                f"pad: the negative padding ({before}, {after}) removes more than the size {n} "
                f"of dim {dim}"
            )
        plan.append((dim, before, after))
    return plan


def _take(x: Tensor, dim: int, part: slice) -> Tensor:
    return RA.getitem(x, (slice(None),) * dim + (part,))


def _padding_pieces(
    x: Tensor, dim: int, before: int, after: int, mode: str, value: float
) -> list[Tensor]:
    """The pieces that ``x`` (cropped by negative padding first) is joined with along dim."""
    n = x.shape[dim]
    if mode == "constant":

        def filled(size: int) -> Tensor:
            shape = x.shape[:dim] + (size,) + x.shape[dim + 1 :]
            return Tensor(sizes.full(shape, value, x.dtype, "pad"))

        return [filled(before), x, filled(after)]
    if mode == "reflect":
        stop = n - 2 - after
        return [
            _take(x, dim, slice(before, 0, -1)),
            x,
            _take(x, dim, slice(n - 2, stop if stop >= 0 else None, -1)),
        ]
    if mode == "replicate":
        edge = x.shape[:dim] + (before,) + x.shape[dim + 1 :]
        end = x.shape[:dim] + (after,) + x.shape[dim + 1 :]
        return [
            P.expand(_take(x, dim, slice(0, 1)), shape=edge),
            x,
            P.expand(_take(x, dim, slice(n - 1, n)), shape=end),
        ]
    return [_take(x, dim, slice(n - before, n)), x, _take(x, dim, slice(0, after))]


def _crop(shape: tuple[int, ...], dim: int, before: int, after: int) -> tuple[slice, ...]:
    """The index that removes what negative padding removes."""
    return (slice(None),) * dim + (slice(-min(before, 0), shape[dim] + min(after, 0)),)


def _cropped(x: Objects, dim: int, before: int, after: int) -> Objects:
    return x[_crop(x.shape, dim, before, after)]


def _cropped_tensor(x: Tensor, dim: int, before: int, after: int) -> Tensor:
    return RA.getitem(x, _crop(x.shape, dim, before, after))


_NUMPY_MODES: dict[str, Any] = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_symbolic(
    x: Objects, pad: int | Sequence[int], mode: str = "constant", value: float | None = None
) -> Objects:
    out = x
    for dim, before, after in _pad_plan(x.shape, _one(pad), mode):
        out = _cropped(out, dim, before, after)
        widths = [(0, 0)] * out.ndim
        widths[dim] = (max(before, 0), max(after, 0))
        if mode == "constant":
            import sympy

            fill = sympy.Float(0 if value is None else value)
            out = np.pad(out, widths, mode="constant", constant_values=fill)
        else:
            out = np.pad(out, widths, mode=_NUMPY_MODES[mode])
    return np.asarray(out, dtype=object)


_composite(
    "pad",
    "pad the last dims by pad = (before, after, ...) of the last dim first (F.pad)",
    (
        Param("input", TENSOR),
        Param("pad", INTS),
        Param("mode", PAD_MODE, "constant"),
        Param("value", OPT_NUMBER, None),
    ),
    symbolic=_pad_symbolic,
    explain=COPIES,
    kink=(
        "constant padding (value, 0 by default) gets no gradient and negative padding crops; "
        "reflect, replicate and circular send the gradient of each copy to the element copied"
    ),
)


@public("pad")
def pad(
    x: Any, pad: int | Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    """torch.nn.functional.pad: ``pad`` holds (before, after) pairs, the last dim's first;
    mode 'constant' (``value``, 0 by default; negative sizes crop), 'reflect' (the edge not
    repeated), 'replicate' (the edge repeated) or 'circular' (wrapping around)."""
    x = _tensor(x)
    if value is not None and mode != "constant":
        raise DomainError(f"pad: value is only for mode 'constant', not {mode!r}")
    out: Tensor = x
    for dim, before, after in _pad_plan(x.shape, _one(pad), mode):
        out = _cropped_tensor(out, dim, before, after)
        pieces = _padding_pieces(
            out, dim, max(before, 0), max(after, 0), mode, 0.0 if value is None else value
        )
        out = RA.cat([p for p in pieces if p is out or p.shape[dim]], dim)
    return out
