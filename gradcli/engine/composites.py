"""Operations built from primitives: the first losses (the others are in losses.py) and small
shape helpers, each an entry of the op
table with a call and no forward.

They need no rules of their own: their derivatives come from the primitives they are made of.
A ``backward_name`` here is the name of the node torch makes for the operation, which
``gradcli run`` prints for the engine's last node of it (``grad_fn=<CopySlices>``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..ops import explaining as X
from ..ops import symbolic as S
from ..ops.table import INT, OPS, OPT_INT, REDUCTIONS, TENSOR, Op, Param, public, register
from . import primitives as P
from .errors import DomainError, IndexDomainError, ShapeError
from .tensor import Tensor, TensorLike

if TYPE_CHECKING:
    from ..local import Slot


def _composite(name: str, summary: str, params: tuple[Param, ...], **fields: Any) -> None:
    """Declare an operation built from others: its call is the function of that name below."""
    register(Op(name, summary, params=params, **fields))


_LOSS = OPS["binary_cross_entropy"].params  # input, target, reduction
_composite(
    "mse_loss",
    "mean squared error",
    _LOSS,
    symbolic=S.mse_loss,
    explain=X.loss(X.mse),
    backward_name="MseLossBackward0",
)
_composite(
    "unsqueeze",
    "insert a dimension of size 1",
    (Param("input", TENSOR), Param("dim", INT)),
    methods=("unsqueeze",),
    symbolic=S.unsqueeze,
    backward_name="UnsqueezeBackward0",
    explain=X.MOVED,
)
_composite(
    "squeeze",
    "remove dimensions of size 1",
    (Param("input", TENSOR), Param("dim", OPT_INT, None)),
    methods=("squeeze",),
    symbolic=S.squeeze,
    explain=X.MOVED,
)
_composite(
    "flatten",
    "all elements as a vector",
    (Param("input", TENSOR),),
    methods=("flatten",),
    explain=X.MOVED,
    symbolic=lambda x: x.reshape(-1),
)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return P.mean(loss)
    if reduction == "sum":
        return P.sum(loss)
    if reduction == "none":
        return loss
    raise DomainError(f"reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")


def _same_shape(name: str, a: Tensor, b: Tensor) -> None:
    if tuple(np.shape(a.data if isinstance(a, Tensor) else a)) != tuple(
        np.shape(b.data if isinstance(b, Tensor) else b)
    ):
        raise ShapeError(
            f"{name}: input and target must have the same shape, got {np.shape(a.data)} "
            f"and {np.shape(b.data if isinstance(b, Tensor) else b)}"
        )


@public("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: TensorLike, target: TensorLike, reduction: str = "mean"
) -> Tensor:
    """Sigmoid then binary cross-entropy in one numerically stable step (mean by default)."""
    input, target = P.as_tensor_pair(input, target)
    _same_shape("binary_cross_entropy_with_logits", input, target)
    return _reduce(P.bce_with_logits_elementwise(input, target), reduction)


@public("binary_cross_entropy")
def binary_cross_entropy(input: TensorLike, target: TensorLike, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of probabilities ``input`` against ``target`` (mean by default)."""
    input, target = P.as_tensor_pair(input, target)
    _same_shape("binary_cross_entropy", input, target)
    if np.any((input.data < 0) | (input.data > 1)):
        raise DomainError("binary_cross_entropy: all elements of input must be between 0 and 1")
    return _reduce(P.bce_elementwise(input, target), reduction)


@public("mse_loss")
def mse_loss(input: TensorLike, target: TensorLike, reduction: str = "mean") -> Tensor:
    """Mean squared error (mean by default)."""
    input, target = P.as_tensor_pair(input, target)
    _same_shape("mse_loss", input, target)
    difference = P.sub(input, target)
    return _reduce(P.mul(difference, difference), reduction)


@public("unsqueeze")
def unsqueeze(x: TensorLike, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    dim = P._axes(dim, x.ndim + 1)[0]
    return P.reshape(x, x.shape[:dim] + (1,) + x.shape[dim:])


@public("squeeze")
def squeeze(x: TensorLike, dim: int | None = None) -> Tensor:
    """Remove dimensions of size 1 (all of them, or only ``dim``)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    if dim is None:
        shape = tuple(n for n in x.shape if n != 1)
    else:
        dim = P._axes(dim, max(x.ndim, 1))[0]
        shape = x.shape if x.ndim == 0 or x.shape[dim] != 1 else x.shape[:dim] + x.shape[dim + 1 :]
    return P.reshape(x, shape)


@public("flatten")
def flatten(x: TensorLike) -> Tensor:
    """All elements as a vector."""
    return P.reshape(x, -1)


_composite(
    "dot",
    "inner product of two vectors",
    OPS["matmul"].params,
    methods=("dot",),
    explain=X.matmul,
    backward_name="DotBackward0",
    symbolic=OPS["matmul"].symbolic,
)


@public("dot")
def dot(a: TensorLike, b: TensorLike) -> Tensor:
    """Inner product of two vectors."""
    a, b = P.as_tensor_pair(a, b)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"dot: expected two vectors, got shapes {a.shape} and {b.shape}")
    return P.matmul(a, b)


def _setitem_text(slot: Slot) -> str:
    if slot.position == 0:
        return f"1 where {slot.node} keeps {slot.wrt}[i], 0 where it was overwritten"
    return f"1 ({slot.wrt} is copied into {slot.node} at the index, once for each time)"


_composite(
    "setitem",
    "x[index] = value: x with value written at index (PyTorch's CopySlices)",
    (),  # a statement writes it (y[0] = ...), not a call
    operator="[]=",
    symbolic=S.setitem,
    backward_name="CopySlices",  # the name of torch's node, which the engine's where is
    explain=X.per_element(_setitem_text),
)


@public("setitem")
def setitem(x: TensorLike, value: TensorLike, *index: object) -> Tensor:
    """A copy of ``x`` with ``value`` (broadcast to ``x[index]``) at ``index``: integers,
    slices, None and Ellipsis. The gradient of ``x`` is zero where it was overwritten."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=x.dtype))
    where = P._normalize_index(tuple(index))
    covered = np.zeros(x.shape, dtype=bool)
    try:
        covered[where] = True
    except IndexError as exc:
        raise IndexDomainError(f"the index does not fit the shape {x.shape}: {exc}") from None
    shape = x.data[where].shape
    try:
        fits = np.broadcast_shapes(value.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(
            f"cannot write a value of shape {value.shape} into a part of shape {shape}"
        )
    placed = P.getitem_backward(P.expand(value, shape), where, x.shape)
    return P.where(covered, placed, x)
