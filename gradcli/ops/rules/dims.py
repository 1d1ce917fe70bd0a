"""Dims and operands as callers give them: a dim (one, several or all) checked and made
non-negative, the shape a reduction keeps, and two operands as tensors.
"""

from __future__ import annotations

from ...base.engine_errors import ShapeError
from ...engine.tensor import Tensor, TensorLike, _coerce

Dim = int | tuple[int, ...] | None  # a dim as a caller gives it: one, several, or all


def _axes(dim: Dim, ndim: int) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(ndim))
    if type(dim) is int and 0 <= dim < ndim:  # one dim, in range (stack's, a reduction's)
        return (dim,)
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
    if type(a) is Tensor and type(b) is Tensor:  # (what _coerce's loops come to, for less)
        return a, b
    first, second = _coerce((a, b))
    return first, second
